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
template <class C, class R, class... A>
struct fn_traits<R (C::*)(A...) const noexcept> : fn_traits<R (C::*)(A...) const> {};
template <class C, class R, class... A>
struct fn_traits<R (C::*)(A...) noexcept> : fn_traits<R (C::*)(A...) const> {};
template <class R, class... A>
struct fn_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<std::decay_t<A>...>;
};
template <class R, class... A>
struct fn_traits<R (*)(A...) noexcept> : fn_traits<R (*)(A...)> {};

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

/// What call_run needs besides the function: the two conveyors and the phase's records.
struct serve_context {
  termination::engine* requests = nullptr;
  termination::engine* replies = nullptr;
  std::size_t id_bytes = 0;
  std::size_t reply_bytes = 0;        ///< [u32 token][result, max over handlers]
  std::byte* reply_record = nullptr;  ///< reply_bytes: the reply that found its path full
  std::uint64_t handled = 0;          ///< requests handled, counted before each runs
  std::uint64_t replies_pushed = 0;
  bool reply_failed = false;  ///< a negative code from call_run came from the reply push
};

/// call_run's results besides a negative engine code.
inline constexpr int k_run_drained = 0;  ///< nothing more to pull
inline constexpr int k_run_other = 1;    ///< `v` holds a request of another kind, not handled
inline constexpr int k_run_held = 2;     ///< the reply to `v` found its path full: it is in
                                         ///< reply_record, for v.from

/// A defined remote function, type-erased: invoke_here runs a call to this rank at once;
/// post_run applies a run of posts to this function in one loop compiled with it (the
/// function inlined, no call per post), as a hand-written pull loop does:
/// post_run(fn, requests, v, id_bytes, id, handled): `v` holds a pulled post request
/// [u32 token][id: id_bytes][arguments] of this function; applies it and every request
/// pulled after it while that is a post of this function too. Returns 0 (nothing more to
/// pull), 1 (`v` holds the first other request, not handled) or the pull's error code. It
/// counts a post (`handled`) before it runs, so a post that throws is consumed, and the
/// caller goes on after it.
struct handler_entry {
  std::size_t args_bytes = 0, result_bytes = 0;
  /// Runs a call at once in its caller's task: writes result_bytes bytes to `result`;
  /// `open` (the runtime's inline paths) is false while the function runs, so that it
  /// cannot call or post.
  void (*invoke_here)(void* fn, const std::byte* args, std::byte* result, bool& open) = nullptr;
  int (*post_run)(void* fn, termination::engine& requests, termination::item_view& v,
                  std::size_t id_bytes, std::uint32_t id, std::uint64_t& handled) = nullptr;
  /// As post_run for calls: `v` holds a pulled call request of this function; answers it
  /// and every request pulled after it while that is a call of this function too, each
  /// reply one inline push. Returns k_run_* or a negative engine code. If the function
  /// throws, `v` is the request it threw on (counted, not answered) and the exception
  /// propagates.
  int (*call_run)(void* fn, serve_context& ctx, termination::item_view& v,
                  std::uint32_t id) = nullptr;
  std::shared_ptr<void> fn;
  std::uint64_t signature = 0;  ///< sizes of arguments and result, for the cross-rank check
};

std::uint64_t mix_signature(std::uint64_t h, std::uint64_t v) noexcept;

inline constexpr std::uint32_t k_post = 0xFFFFFFFFu;  ///< request token: no reply
inline constexpr std::uint32_t k_error_bit = 0x80000000u;
inline constexpr std::size_t k_token_bytes = 4;
inline constexpr std::uint32_t k_no_slot = 0xFFFFFFFFu;

/// The handler id of the request record at `rec` ([u32 token][id: id_bytes]...).
inline std::uint32_t id_of(const std::byte* rec, std::size_t id_bytes) noexcept {
  if (id_bytes == 0) return 0;
  if (id_bytes == 1) return static_cast<std::uint32_t>(rec[k_token_bytes]);
  std::uint16_t id16;
  std::memcpy(&id16, rec + k_token_bytes, 2);
  return id16;
}

/// True if the request record at `rec` is a call (not a post) of `id`.
inline bool is_call_of(const std::byte* rec, std::size_t id_bytes, std::uint32_t id) noexcept {
  std::uint32_t token;
  std::memcpy(&token, rec, k_token_bytes);
  return token != k_post && id_of(rec, id_bytes) == id;
}

/// True if the request record at `rec` ([u32 token][id: id_bytes]...) is a post of `id`.
inline bool is_post_of(const std::byte* rec, std::size_t id_bytes, std::uint32_t id) noexcept {
  std::uint32_t token;
  std::memcpy(&token, rec, k_token_bytes);
  return token == k_post && id_of(rec, id_bytes) == id;
}

/// A call about to wait for its reply, as its awaiter suspends: the task to resume, where
/// the result goes, and the flag the awaiter reads for a call whose function threw.
struct call_state {
  std::coroutine_handle<> waiting;
  std::byte* result = nullptr;
  std::uint32_t result_bytes = 0;
  bool* failed = nullptr;
};

/// A request token is the index of a reply slot: the reply finds its call without a
/// lookup. Free slots form a list through `next_free`. A slot holds what the reply needs,
/// so that taking a reply reads no line of the waiting task's frame, which is cold by
/// then: the runtime writes the result, prefetches the frame and resumes the task a few
/// replies later (runtime::impl::collect).
struct reply_slot {
  bool* failed = nullptr;
  void* frame = nullptr;  ///< the waiting task (coroutine handle address)
  std::byte* result = nullptr;
  std::uint32_t result_bytes = 0;
  std::uint32_t next_free = k_no_slot;

  void hold(const call_state& c) noexcept {
    failed = c.failed;
    frame = c.waiting.address();
    result = c.result;
    result_bytes = c.result_bytes;
  }
};

}  // namespace convoy::async::detail
