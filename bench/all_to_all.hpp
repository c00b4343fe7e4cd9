#pragma once
/// @file
/// all-to-all: every rank streams items of item_bytes bytes to uniformly random ranks
/// (the experiment of Maley & DeVinney 2019, sec. 5: injection bandwidth per node).
///
/// Item: fill_words of a random key, checked on arrival. Verification is exact per
/// (source, destination) pair: item count and the sum of keys (MPI_Alltoall).
#include "harness.hpp"

namespace convoy::bench {

class all_to_all_kernel {
 public:
  static constexpr const char* name = "all-to-all";
  static constexpr int n_channels = 1;
  static constexpr const char* help = "all-to-all: every rank streams items to random ranks";

  all_to_all_kernel(const job& j, const options& opt, std::size_t item_bytes)
      : j_(j),
        opt_(opt),
        item_bytes_(item_bytes),
        words_(item_bytes / 8),
        got_(2 * static_cast<std::size_t>(j.n_ranks)) {
    if (item_bytes < 8) throw std::runtime_error("all-to-all items are at least 8 bytes");
  }

  void prepare() {
    std::fill(got_.begin(), got_.end(), 0);
    bad_ = 0;
    ++cycle_;
  }

  template <class C>
  void run(C** ch) {
    C& c = *ch[0];
    const std::uint64_t n = opt_.items;
    const std::uint64_t seed = opt_.seed + cycle_;
    alignas(64) std::byte item[65536 + 64];
    std::uint64_t i = 0;
    c.begin(item_bytes_);
    while (c.advance(i == n)) {
      for (; i < n; ++i) {
        const std::uint64_t x = draw(seed, j_.rank, i);
        const int dest = static_cast<int>(
            below(static_cast<std::uint32_t>(x >> 32), static_cast<std::uint64_t>(j_.n_ranks)));
        fill_words(item, x, words_);
        if (!c.push(item, dest)) break;
      }
      int from;
      while (const std::byte* p = c.pull(from)) {
        std::uint64_t k;
        std::memcpy(&k, p, 8);
        if (words_ > 1 && !check_words(p, k, words_)) [[unlikely]]
          ++bad_;
        if (from < 0 || from >= j_.n_ranks) [[unlikely]] {
          ++bad_;
          continue;
        }
        got_[2 * static_cast<std::size_t>(from)] += 1;
        got_[2 * static_cast<std::size_t>(from) + 1] += k;
      }
    }
    c.reset();
  }

  bool verify() {
    const auto p = static_cast<std::size_t>(j_.n_ranks);
    std::vector<std::uint64_t> sent(2 * p, 0), want(2 * p, 0);
    const std::uint64_t seed = opt_.seed + cycle_;
    offrank_ = 0;
    for (std::uint64_t i = 0; i < opt_.items; ++i) {
      const std::uint64_t x = draw(seed, j_.rank, i);
      const auto dest = below(static_cast<std::uint32_t>(x >> 32), p);
      sent[2 * dest] += 1;
      sent[2 * dest + 1] += x;
      if (static_cast<int>(dest) != j_.rank) ++offrank_;
    }
    MPI_Alltoall(sent.data(), 2, MPI_UINT64_T, want.data(), 2, MPI_UINT64_T, j_.comm);
    return bad_ == 0 && want == got_;
  }

  [[nodiscard]] std::uint64_t items() const { return opt_.items; }
  [[nodiscard]] std::uint64_t offrank_payload_bytes() const { return offrank_ * item_bytes_; }

 private:
  const job& j_;
  const options& opt_;
  std::size_t item_bytes_, words_;
  std::vector<std::uint64_t> got_;
  std::uint64_t bad_ = 0, cycle_ = 0, offrank_ = 0;
};

}  // namespace convoy::bench
