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
/// bytes to `result`; post(fn, args) drops the result.
struct handler_entry {
  std::size_t args_bytes = 0, result_bytes = 0;
  void (*invoke)(void* fn, const std::byte* args, std::byte* result) = nullptr;
  void (*post)(void* fn, const std::byte* args) = nullptr;
  std::shared_ptr<void> fn;
  std::uint64_t signature = 0;  ///< sizes of arguments and result, for the cross-rank check
};

std::uint64_t mix_signature(std::uint64_t h, std::uint64_t v) noexcept;

inline constexpr std::uint32_t k_post = 0xFFFFFFFFu;  ///< request token: no reply
inline constexpr std::uint32_t k_error_bit = 0x80000000u;
inline constexpr std::size_t k_token_bytes = 4;
inline constexpr std::uint32_t k_no_slot = 0xFFFFFFFFu;

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
