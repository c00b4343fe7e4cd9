#pragma once
/// @file
/// Argument checks of the non-hot route_plan methods (router/README.md ROUTE-12).
#include <convoy/base/error.hpp>
#include <string>

namespace convoy::router::detail {

/// Throws convoy::error("route_plan::<what>: <name> <value> is outside 0..<count-1>").
inline void check_index(int value, int count, const char* what, const char* name) {
  if (value < 0 || value >= count)
    throw error(std::string("route_plan::") + what + ": " + name + " " + std::to_string(value) +
                " is outside 0.." + std::to_string(count - 1));
}

}  // namespace convoy::router::detail
