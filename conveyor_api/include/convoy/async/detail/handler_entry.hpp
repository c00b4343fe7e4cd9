#pragma once
/// @file
/// Internals of convoy::async::runtime::define: a remote function's type-erased entry
/// (detail::handler_entry, remote_fn.hpp), whose thunks are compiled with the function,
/// so that the function is inlined into them: one indirect call per call request, and one
/// per run of posts to the same function (post_run) rather than one per post.
#include <convoy/async/detail/remote_fn.hpp>
#include <convoy/termination/engine.hpp>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace convoy::async::detail {

template <class R>
inline constexpr std::size_t result_size = sizeof(R);
template <>
inline constexpr std::size_t result_size<void> = 0;

/// Closes the runtime's inline paths (`open`, runtime::hot_path) for its lifetime, while a
/// remote function runs, on its owner's serve loop or at once in a caller's task; reopens
/// them on every exit, an exception included.
class inline_paths_closed {
 public:
  explicit inline_paths_closed(bool& open) noexcept : open_(open) { open_ = false; }
  ~inline_paths_closed() { open_ = true; }
  inline_paths_closed(const inline_paths_closed&) = delete;
  inline_paths_closed& operator=(const inline_paths_closed&) = delete;

 private:
  bool& open_;
};

/// Runs F(A...) -> R on the caller's rank, from packed arguments to the result's bytes: the
/// entry's invoke_here, and inline in the task for a handle that knows F (defined_fn). As
/// on its owner's serve loop, the function may not call or post: the inline paths are
/// closed while it runs (`open`, restored if it throws), so those reach the slow paths'
/// check.
template <class F, class R, class... A>
struct local_call {
  using fn_type = F;
  static void run(F& f, const std::byte* in, std::byte* out, bool& open) {
    const inline_paths_closed closed(open);
    auto args = unpack<std::tuple<A...>>(in, std::index_sequence_for<A...>{});
    if constexpr (std::is_void_v<R>) {
      std::apply(f, args);
    } else {
      R r = std::apply(f, args);
      std::memcpy(out, &r, sizeof(R));
    }
  }
};

// What a handler entry runs for one remote function: posts and calls of it served in a run,
// as long as the next request is for it too (runtime.cpp, serve).
template <class F, class R, class... A>
struct handler_runs {
  static int post_run(void* fn, termination::engine& q, termination::item_view& out,
                      std::size_t id_bytes, std::uint32_t id, std::uint64_t& handled) {
    F& user_fn = *static_cast<F*>(fn);
    // The view and the count are locals (registers), written back on the way out: a store
    // through a reference in the loop would be reloaded after every update the function
    // makes, since the compiler cannot tell that they do not alias.
    struct count_back {
      std::uint64_t& total;
      std::uint64_t n = 0;
      ~count_back() { total += n; }
    } done{handled};
    termination::item_view v = out;
    const std::size_t at = k_token_bytes + id_bytes;
    for (;;) {
      ++done.n;  // before it runs: a post that throws is consumed
      std::apply(user_fn, unpack<std::tuple<A...>>(v.data + at, std::index_sequence_for<A...>{}));
      const int rc = q.pull(v);
      if (rc <= 0) return rc;
      if (!is_post_of(v.data, id_bytes, id)) {
        out = v;
        return 1;
      }
    }
  }

  static int call_run(void* fn, serve_context& ctx, termination::item_view& out, std::uint32_t id) {
    F& user_fn = *static_cast<F*>(fn);
    termination::item_view v = out;  // a local, as in post_run
    const std::size_t at = k_token_bytes + ctx.id_bytes;
    constexpr std::size_t rb = k_token_bytes + result_size<R>;
    const bool exact = ctx.reply_bytes == rb;  // else padded to the phase's reply size
    ctx.reply_failed = false;
    try {
      for (;;) {
        ++ctx.handled;
        alignas(8) std::byte rec[rb];
        std::memcpy(rec, v.data, k_token_bytes);
        auto args = unpack<std::tuple<A...>>(v.data + at, std::index_sequence_for<A...>{});
        if constexpr (std::is_void_v<R>) {
          std::apply(user_fn, args);
        } else {
          const R r = std::apply(user_fn, args);
          std::memcpy(rec + k_token_bytes, &r, sizeof(R));
        }
        int rc;
        if (exact) [[likely]] {
          rc = ctx.replies->template push<rb>(rec, v.from);
          if (rc == 0) std::memcpy(ctx.reply_record, rec, rb);
        } else {
          std::memcpy(ctx.reply_record, rec, rb);
          rc = ctx.replies->push(ctx.reply_record, v.from);
        }
        ++ctx.replies_pushed;
        if (rc <= 0) [[unlikely]] {
          out = v;
          ctx.reply_failed = rc < 0;
          return rc < 0 ? rc : k_run_held;
        }
        rc = ctx.requests->pull(v);
        if (rc <= 0) return rc;
        if (!is_call_of(v.data, ctx.id_bytes, id)) {
          out = v;
          return k_run_other;
        }
      }
    } catch (...) {
      out = v;
      throw;
    }
  }
};

template <class F, class R, class... A>
handler_entry make_handler_entry(F f) {
  handler_entry e;
  e.args_bytes = packed_bytes<A...>;
  if constexpr (!std::is_void_v<R>) e.result_bytes = sizeof(R);
  e.fn = std::make_shared<F>(std::move(f));
  e.post_run = &handler_runs<F, R, A...>::post_run;
  e.call_run = &handler_runs<F, R, A...>::call_run;
  e.invoke_here = [](void* fn, const std::byte* in, std::byte* out, bool& open) {
    local_call<F, R, A...>::run(*static_cast<F*>(fn), in, out, open);
  };
  std::uint64_t sig = mix_signature(0, e.result_bytes + 1);
  ((sig = mix_signature(sig, sizeof(A))), ...);
  e.signature = mix_signature(sig, sizeof...(A));
  return e;
}

}  // namespace convoy::async::detail
