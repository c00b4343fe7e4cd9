#pragma once
/// @file
/// Internals of convoy::async::runtime (runtime.hpp): how a remote function is described
/// to every rank, how its arguments travel, and where a waiting call's reply goes.
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace convoy::termination {
class engine;
struct item_view;
}  // namespace convoy::termination

namespace convoy::async::detail {

template <class F>
struct fn_traits : fn_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct fn_traits<R (C::*)(A...) const> {
  using result = R;
  using args = std::tuple<std::decay_t<A>...>;
};
template <class C, class R, class... A>
struct fn_traits<R (C::*)(A...)> : fn_traits<R (C::*)(A...) const> {};
template <class R, class... A>
struct fn_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<std::decay_t<A>...>;
};

template <class... A>
inline constexpr std::size_t packed_bytes = (std::size_t{0} + ... + sizeof(A));

template <class... A>
void pack(std::byte* out, const A&... a) noexcept {
  std::size_t off = 0;
  ((std::memcpy(out + off, &a, sizeof(A)), off += sizeof(A)), ...);
}

template <class Tuple, std::size_t... I>
Tuple unpack(const std::byte* in, std::index_sequence<I...>) noexcept {
  Tuple t;
  std::size_t off = 0;
  ((std::memcpy(&std::get<I>(t), in + off, sizeof(std::tuple_element_t<I, Tuple>)),
    off += sizeof(std::tuple_element_t<I, Tuple>)),
   ...);
  return t;
}

/// A defined remote function, type-erased: invoke(fn, args, result) writes result_bytes
/// bytes to `result`. post_run applies a run of posts to this function in one loop
/// compiled with it (the function inlined, no call per post), as a hand-written pull loop
/// does: post_run(fn, requests, v, id_bytes, id, handled): `v` holds a pulled post request
/// [u32 token][id: id_bytes][arguments] of this function; applies it and every request
/// pulled after it while that is a post of this function too. Returns 0 (nothing more to
/// pull), 1 (`v` holds the first other request, not handled) or the pull's error code. It
/// counts a post (`handled`) before it runs, so a post that throws is consumed, and the
/// caller goes on after it.
struct handler_entry {
  std::size_t args_bytes = 0, result_bytes = 0;
  void (*invoke)(void* fn, const std::byte* args, std::byte* result) = nullptr;
  int (*post_run)(void* fn, termination::engine& requests, termination::item_view& v,
                  std::size_t id_bytes, std::uint32_t id, std::uint64_t& handled) = nullptr;
  std::shared_ptr<void> fn;
  std::uint64_t signature = 0;  ///< sizes of arguments and result, for the cross-rank check
};

std::uint64_t mix_signature(std::uint64_t h, std::uint64_t v) noexcept;

inline constexpr std::uint32_t k_post = 0xFFFFFFFFu;  ///< request token: no reply
inline constexpr std::uint32_t k_error_bit = 0x80000000u;
inline constexpr std::size_t k_token_bytes = 4;
inline constexpr std::uint32_t k_no_slot = 0xFFFFFFFFu;

/// True if the request record at `rec` ([u32 token][id: id_bytes]...) is a post of `id`.
inline bool is_post_of(const std::byte* rec, std::size_t id_bytes, std::uint32_t id) noexcept {
  std::uint32_t token;
  std::memcpy(&token, rec, k_token_bytes);
  if (token != k_post) return false;
  if (id_bytes == 0) return true;
  if (id_bytes == 1) return static_cast<std::uint32_t>(rec[k_token_bytes]) == id;
  std::uint16_t id16;
  std::memcpy(&id16, rec + k_token_bytes, 2);
  return id16 == id;
}

/// A call waiting for its reply: lives in the waiting task's frame (its awaiter).
struct call_state {
  std::coroutine_handle<> waiting;
  std::byte* result = nullptr;
  std::uint32_t result_bytes = 0;
  bool failed = false;
};

/// A request token is the index of a reply slot: the reply finds its call without a
/// lookup. Free slots form a list through `next_free`.
struct reply_slot {
  call_state* call = nullptr;
  std::uint32_t next_free = k_no_slot;
};

}  // namespace convoy::async::detail
