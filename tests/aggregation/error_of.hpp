#pragma once
// The message of the convoy::error a call throws, for the transport tests' misuse checks.
#include <convoy/base/error.hpp>
#include <string>

namespace convoy_test {

// What `f` throws as convoy::error, or "(no convoy::error)" if it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "(no convoy::error)";
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace convoy_test
