#pragma once
/// @file
/// Lists in the order the tools first meet their entries (libraries, configurations,
/// kernels, kinds of the JSON rows); shared by convoy-plot and convoy-compare.
#include <algorithm>
#include <vector>

namespace convoy::tools {

/// Appends `x` to `v` unless `v` holds it already.
template <class T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

}  // namespace convoy::tools
