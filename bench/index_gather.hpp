#pragma once
/// @file
/// index-gather: every rank reads random entries of a table spread over the ranks
/// (Maley & DeVinney 2019, sec. 2, Figure 1 bottom) with two channels, queries and replies, in the
/// loop of Maley & DeVinney 2019, Figure 4 (a reply that does not fit is unpulled and retried).
///
/// Query: {u32 slot, u32 local index} (8 bytes, as bale's benchmark). Reply: {u32 slot,
/// value} with an item_bytes-byte value, so the "item size" is the size of the gathered
/// values. Items per rank counts queries (one round trip each). Verification is exact:
/// every reply's value is recomputed from its slot, and the slots' hash-sum must match.
#include "harness.hpp"

namespace convoy::bench {

class index_gather_kernel {
 public:
  static constexpr const char* name = "index-gather";
  static constexpr int n_channels = 2;
  static constexpr bool written_as_tasks = true;  ///< has a run(coro_channel**)
  static constexpr const char* help =
      "index-gather: random reads of a distributed table (queries and replies)";

  /// The table of values each rank holds (harness.hpp checks it fits in memory).
  [[nodiscard]] static std::uint64_t table_bytes(const options& opt,
                                                 std::size_t item_bytes) noexcept {
    return opt.table * item_bytes;
  }

  index_gather_kernel(const job& j, const options& opt, std::size_t item_bytes)
      : j_(j),
        opt_(opt),
        value_bytes_(item_bytes),
        words_(item_bytes / 8),
        table_(opt.table * item_bytes) {
    if (item_bytes < 8) throw std::runtime_error("index-gather values are at least 8 bytes");
    for (std::uint64_t l = 0; l < opt.table; ++l)
      fill_words(table_.data() + l * value_bytes_, key(j.rank, l), words_);
  }

  static std::uint64_t key(int rank, std::uint64_t local) {
    return mix64((static_cast<std::uint64_t>(rank) << 32) | local);
  }

  void prepare() {
    bad_ = replies_ = slot_sum_ = 0;
    ++cycle_;
  }

  template <class C>
  void run(C** ch) {
    C& req = *ch[0];
    C& rep = *ch[1];
    const std::uint64_t n = opt_.items;
    const std::uint64_t seed = opt_.seed + cycle_;
    const std::size_t vb = value_bytes_;
    const std::size_t reply_bytes = 4 + vb;
    alignas(64) std::byte reply[65536 + 64];
    std::uint64_t i = 0;
    req.begin(8);
    rep.begin(reply_bytes);
    for (;;) {
      const bool more = req.advance(i == n);
      const bool rep_more = rep.advance(!more);
      if (!more && !rep_more) break;
      for (; i < n; ++i) {
        const std::uint64_t x = draw(seed, j_.rank, i);
        const int dest = static_cast<int>(
            below(static_cast<std::uint32_t>(x >> 32), static_cast<std::uint64_t>(j_.n_ranks)));
        const std::uint32_t q[2] = {static_cast<std::uint32_t>(i),
                                    below(static_cast<std::uint32_t>(x), opt_.table)};
        if (!req.push(q, dest)) break;
      }
      int from;
      while (const std::byte* p = req.pull(from)) {
        std::uint32_t q[2];
        std::memcpy(q, p, 8);
        if (q[1] >= opt_.table) [[unlikely]] {
          ++bad_;
          q[1] = 0;
        }
        std::memcpy(reply, &q[0], 4);
        std::memcpy(reply + 4, table_.data() + q[1] * vb, vb);
        if (!rep.push(reply, from)) {
          req.unpull();
          break;
        }
      }
      while (const std::byte* p = rep.pull(from)) {
        std::uint32_t slot;
        std::memcpy(&slot, p, 4);
        const std::uint64_t x = draw(seed, j_.rank, slot);
        const int dest = static_cast<int>(
            below(static_cast<std::uint32_t>(x >> 32), static_cast<std::uint64_t>(j_.n_ranks)));
        const std::uint64_t local = below(static_cast<std::uint32_t>(x), opt_.table);
        if (dest != from || !check_words(p + 4, key(dest, local), words_)) [[unlikely]]
          ++bad_;
        ++replies_;
        slot_sum_ += mix64(slot);
      }
    }
    rep.reset();
    req.reset();
  }

#if CONVOY_BENCH_HAVE_ENGINE
  /// The same kernel as coroutine code: each query a sequential
  /// `value = co_await rt.call(owner, read, local)`; the runtime coalesces them. Kind `coro`
  /// is Fischler & Uchima's threads (sec. 4: a fixed set of threads, each running the task routine
  /// for one site after another): T tasks, task k taking queries k, k + T, ...; kind
  /// `coro-each` is one task per query, at most T in flight (T: the runtime's max_tasks).
  void run(coro_channel** ch) {
    async::runtime& rt = ch[0]->rt();
    if (!defined_) {
      read_ = rt.define(table_read{this});
      defined_ = true;
    }
    const std::uint64_t seed = opt_.seed + cycle_, n = opt_.items;
    if (ch[0]->each()) {
      rt.run_each(n, [&](std::size_t i) -> async::task<> {
        const query q = query_of(seed, i);
        take_reply(i, q, co_await rt.call(q.dest, read_, q.local));
      });
      return;
    }
    const std::size_t threads = ch[0]->threads();
    rt.run_each(threads, [&](std::size_t k) -> async::task<> {
      for (std::uint64_t i = k; i < n; i += threads) {
        const query q = query_of(seed, i);
        take_reply(i, q, co_await rt.call(q.dest, read_, q.local));
      }
    });
  }

  /// The remote function of the coroutine kinds: value `local` of this rank's table. A
  /// named type, so that the kernel can keep the handle define() returns, with which a
  /// call to this rank runs it inline (a lambda's handle could only be kept type-erased).
  struct table_read {
    index_gather_kernel* k;
    std::uint64_t operator()(std::uint32_t local) const noexcept {
      if (local >= k->opt_.table) [[unlikely]] {
        ++k->bad_;
        local = 0;
      }
      std::uint64_t v;
      std::memcpy(&v, k->table_.data() + std::size_t{local} * 8, 8);
      return v;
    }
  };

  /// Query i of this rank: its owner and the index there.
  struct query {
    int dest;
    std::uint32_t local;
  };
  [[nodiscard]] query query_of(std::uint64_t seed, std::uint64_t i) const noexcept {
    const std::uint64_t x = draw(seed, j_.rank, i);
    return {static_cast<int>(
                below(static_cast<std::uint32_t>(x >> 32), static_cast<std::uint64_t>(j_.n_ranks))),
            below(static_cast<std::uint32_t>(x), opt_.table)};
  }
  /// Checks the value of query i against the owner's table and counts it.
  void take_reply(std::uint64_t i, const query& q, std::uint64_t v) noexcept {
    if (!check_words(&v, key(q.dest, q.local), 1)) [[unlikely]]
      ++bad_;
    ++replies_;
    slot_sum_ += mix64(i);
  }
#endif

  bool verify() {
    std::uint64_t want = 0;
    const std::uint64_t seed = opt_.seed + cycle_;
    offrank_ = 0;
    for (std::uint64_t i = 0; i < opt_.items; ++i) {
      want += mix64(i);
      const std::uint64_t x = draw(seed, j_.rank, i);
      if (static_cast<int>(below(static_cast<std::uint32_t>(x >> 32),
                                 static_cast<std::uint64_t>(j_.n_ranks))) != j_.rank)
        ++offrank_;
    }
    return bad_ == 0 && replies_ == opt_.items && slot_sum_ == want;
  }

  [[nodiscard]] std::uint64_t items() const { return opt_.items; }
  /// Off-rank queries travel out (8 bytes) and their replies back (4 + value bytes).
  [[nodiscard]] std::uint64_t offrank_payload_bytes() const {
    return offrank_ * (8 + 4 + value_bytes_);
  }

 private:
  const job& j_;
  const options& opt_;
  std::size_t value_bytes_, words_;
  std::vector<std::byte> table_;
  std::uint64_t bad_ = 0, replies_ = 0, slot_sum_ = 0, cycle_ = 0, offrank_ = 0;
#if CONVOY_BENCH_HAVE_ENGINE
  bool defined_ = false;
  async::defined_fn<table_read, std::uint64_t, std::uint32_t> read_;
#endif
};

}  // namespace convoy::bench
