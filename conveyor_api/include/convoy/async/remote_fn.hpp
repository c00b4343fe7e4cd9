#pragma once
/// @file
/// Handles of remote functions (runtime::define returns them; runtime::call and post take
/// them) and the error a call rethrows when its handler threw on its rank (runtime.hpp).
#include <convoy/base/error.hpp>
#include <cstdint>

namespace convoy::async {

class runtime;

/// A remote call whose handler threw; the message names the rank and the handler.
class remote_error : public convoy::error {
 public:
  using convoy::error::error;
};

namespace detail {
/// Throws the remote_error of a call whose handler threw (kept out of the inline path).
[[noreturn]] void throw_remote_error(std::uint32_t id, int rank);
/// The identifiers a call or post carries for a remote_fn that was never defined (a
/// default-constructed one) or that another runtime defined: beyond every defined one, so
/// that they fail the inline paths' range check and reach the slow paths, which name them.
inline constexpr std::uint32_t k_undefined_fn = ~0u, k_foreign_fn = ~0u - 1;
}  // namespace detail

/// Handle of a remote function defined on every rank: R fn(A...). Valid with the runtime
/// that defined it; calling or posting it on another (or a default-constructed handle)
/// throws convoy::error.
template <class R, class... A>
class remote_fn {
 public:
  remote_fn() = default;
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }

 private:
  friend class runtime;
  template <class, class, class...>
  friend class defined_fn;
  remote_fn(std::uint32_t id, const runtime* owner) : id_(id), owner_(owner) {}
  std::uint32_t id_ = ~0u;
  const runtime* owner_ = nullptr;
};

/// What runtime::define returns: a remote_fn<R, A...> that also knows the function's type
/// F, so that a call to this rank runs the function inline in the task, with no indirect
/// call through its entry (index-gather's `coro` about 2 % faster, conveyor_api/README.md).
/// It converts to remote_fn<R, A...> where F cannot be named (a class member holding a
/// lambda's handle); calls through that handle are the same, a local one through the entry.
template <class F, class R, class... A>
class defined_fn : public remote_fn<R, A...> {
 public:
  defined_fn() = default;

 private:
  friend class runtime;
  defined_fn(std::uint32_t id, const runtime* owner) : remote_fn<R, A...>(id, owner) {}
};

}  // namespace convoy::async
