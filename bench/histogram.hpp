#pragma once
/// @file
/// histogram: every rank sends random updates (Maley & DeVinney 2019, sec. 2, Figure 1 top) to a
/// table spread over the ranks; the owner adds 1 to the addressed entry.
///
/// Item: word 0 is the entry's local index on its owner; the following words (item sizes
/// above 8) are fill_words of it, checked on arrival. Verification is exact: for every
/// (source, destination) pair the count of updates and the sum of a hash of their indices
/// must match what the owner's table gained (compared with MPI_Alltoall).
///
/// --skew S > 0 draws the keys from Zipf(S) over the whole table (table x ranks entries,
/// bench/zipf.hpp), hot keys spread over the owners; the draws are made in prepare()
/// (untimed) and read by the cycle and the verification. Kind combine pushes 16-byte items
/// (the local index, then the value 1) through an engine that merges equal keys on the way;
/// the owner adds the value, so the same verification holds.
#include <optional>

#include "harness.hpp"
#include "zipf.hpp"

namespace convoy::bench {

class histogram_kernel {
 public:
  static constexpr const char* name = "histogram";
  static constexpr int n_channels = 1;
  static constexpr bool written_as_tasks = true;  ///< has a run(coro_channel**)
  static constexpr bool combines = true;          ///< runs kind combine (harness.hpp)
  static constexpr const char* help =
      "histogram: random 8-byte (or larger) updates to a distributed table";

  /// The table of counts each rank holds (harness.hpp checks it fits in memory).
  [[nodiscard]] static std::uint64_t table_bytes(const options& opt, std::size_t) noexcept {
    return opt.table * sizeof(std::uint64_t);
  }

  histogram_kernel(const job& j, const options& opt, std::size_t item_bytes)
      : j_(j), opt_(opt), item_bytes_(item_bytes), words_(item_bytes / 8), counts_(opt.table) {
    if (item_bytes < 8) throw std::runtime_error("histogram items are at least 8 bytes");
    if (opt.skew > 0) {
      const std::uint64_t n = opt.table * static_cast<std::uint64_t>(j.n_ranks);
      zipf_.emplace(n, opt.skew);
      spread_.emplace(n);
    }
  }

  /// Update i of `rank` (of `ranks`): its owner and the index there. One draw decides both
  /// for the loop, the tasks and the verification.
  struct update {
    int dest;
    std::uint32_t local;
  };
  [[nodiscard]] static constexpr update update_of(std::uint64_t seed, int rank, int ranks,
                                                  std::uint64_t table, std::uint64_t i) noexcept {
    const std::uint64_t x = draw(seed, rank, i);
    return {static_cast<int>(
                below(static_cast<std::uint32_t>(x >> 32), static_cast<std::uint64_t>(ranks))),
            below(static_cast<std::uint32_t>(x), table)};
  }

  void prepare() {
    std::fill(counts_.begin(), counts_.end(), 0);
    bad_ = 0;
    ++cycle_;
    if (zipf_) draw_skewed();
  }

  /// Update i of this rank in this cycle.
  [[nodiscard]] update update_at(std::uint64_t i) const noexcept {
    if (zipf_) return skewed_[i];
    return update_of(opt_.seed + cycle_, j_.rank, j_.n_ranks, opt_.table, i);
  }

  template <class C>
  void run(C** ch) {
    C& c = *ch[0];
    bool combining = false;
    if constexpr (requires { c.combining(); }) combining = c.combining();
    if (combining)
      run_loop<true>(c);
    else
      run_loop<false>(c);
  }

#if CONVOY_BENCH_HAVE_ENGINE
  /// The same kernel as coroutine code: `rt.post(owner, add, local)` per update; the owner's
  /// remote function applies it (Fischler & Uchima 1993, sec. 4.7, coalesced remote writes). Kind
  /// `coro`: one task per rank posts every update (a posting task never waits, so one thread is
  /// Fischler & Uchima's whole set); kind `coro-each`: one task per update, each posting it.
  void run(coro_channel** ch) {
    async::runtime& rt = ch[0]->rt();
    if (!defined_) {
      add_ = rt.define([this](std::uint32_t local) {
        if (local < opt_.table) [[likely]]
          ++counts_[local];
        else
          ++bad_;
      });
      defined_ = true;
    }
    if (ch[0]->each()) {
      rt.run_each(opt_.items, [&](std::size_t i) -> async::task<> {
        const update u = update_at(i);
        rt.post(u.dest, add_, u.local);
        co_return;
      });
      return;
    }
    rt.run([&]() -> async::task<> {
      const std::uint64_t n = opt_.items;
      for (std::uint64_t i = 0; i < n; ++i) {
        const update u = update_at(i);
        rt.post(u.dest, add_, u.local);
      }
      co_return;
    });
  }
#endif

  bool verify() {
    const auto p = static_cast<std::size_t>(j_.n_ranks);
    // What this rank sent to each destination: count and hash-sum of indices.
    std::vector<std::uint64_t> sent(2 * p, 0), got(2 * p, 0);
    offrank_ = 0;
    for (std::uint64_t i = 0; i < opt_.items; ++i) {
      const update u = update_at(i);
      const auto dest = static_cast<std::size_t>(u.dest);
      sent[2 * dest] += 1;
      sent[2 * dest + 1] += mix64(u.local);
      if (u.dest != j_.rank) ++offrank_;
    }
    MPI_Alltoall(sent.data(), 2, MPI_UINT64_T, got.data(), 2, MPI_UINT64_T, j_.comm);
    std::uint64_t want_count = 0, want_sum = 0, have_count = 0, have_sum = 0;
    for (std::size_t s = 0; s < p; ++s) {
      want_count += got[2 * s];
      want_sum += got[2 * s + 1];
    }
    for (std::uint64_t k = 0; k < opt_.table; ++k) {
      have_count += counts_[k];
      have_sum += counts_[k] * mix64(k);
    }
    return bad_ == 0 && want_count == have_count && want_sum == have_sum;
  }

  [[nodiscard]] std::uint64_t items() const { return opt_.items; }
  [[nodiscard]] std::uint64_t offrank_payload_bytes() const { return offrank_ * item_bytes_; }

 private:
  // One cycle: push every update, add what arrives. Combining: the item is the local index
  // and a value (1 as pushed, a sum when merged on the way), which the owner adds.
  template <bool Combining, class C>
  void run_loop(C& c) {
    const std::uint64_t n = opt_.items;
    const std::size_t words = words_;
    std::uint64_t* counts = counts_.data();
    alignas(64) std::byte item[65536 + 64];
    std::uint64_t i = 0;
    c.begin(item_bytes_);
    while (c.advance(i == n)) {
      for (; i < n; ++i) {
        const update u = update_at(i);
        const std::uint64_t local = u.local;
        if constexpr (Combining) {
          const std::uint64_t one = 1;
          std::memcpy(item, &local, 8);
          std::memcpy(item + 8, &one, 8);
        } else if (words == 1) {
          std::memcpy(item, &local, 8);
        } else {
          fill_words(item, local, words);
        }
        if (!c.push(item, u.dest)) break;
      }
      int from;
      while (const std::byte* p = c.pull(from)) {
        std::uint64_t local, value = 1;
        std::memcpy(&local, p, 8);
        if constexpr (Combining) {
          std::memcpy(&value, p + 8, 8);
        } else if (words > 1 && !check_words(p, local, words)) [[unlikely]] {
          ++bad_;
        }
        if (local < opt_.table) [[likely]]
          counts[local] += value;
        else
          ++bad_;
      }
    }
    c.reset();
  }

  // This cycle's updates under --skew: key rank k from Zipf, spread to a global key g, owner
  // g / table. Uniform j of draw i is a counter-based function of (seed, rank, i, j).
  void draw_skewed() {
    const std::uint64_t seed = opt_.seed + cycle_;
    skewed_.resize(opt_.items);
    for (std::uint64_t i = 0; i < opt_.items; ++i) {
      const std::uint64_t base = draw(seed, j_.rank, i);
      std::uint64_t next = 0;
      const std::uint64_t k = (*zipf_)([&] {
        return static_cast<double>(mix64(base + (next++) * word_step) >> 11) * 0x1.0p-53;
      });
      const std::uint64_t g = (*spread_)(k);
      skewed_[i] = {static_cast<int>(g / opt_.table), static_cast<std::uint32_t>(g % opt_.table)};
    }
  }

  const job& j_;
  const options& opt_;
  std::size_t item_bytes_, words_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t bad_ = 0, cycle_ = 0, offrank_ = 0;
  std::optional<zipf_sampler> zipf_;
  std::optional<key_spread> spread_;
  std::vector<update> skewed_;  ///< this cycle's updates under --skew
#if CONVOY_BENCH_HAVE_ENGINE
  bool defined_ = false;
  async::remote_fn<void, std::uint32_t> add_;
#endif
};

}  // namespace convoy::bench
