#pragma once
/// @file
/// permute: a distributed array of items_per_rank elements per rank is moved to a random
/// permutation of its global positions (bale's permute/randperm pattern). Element g goes
/// to position pi(g) = (a g + b) mod M, M = ranks x items_per_rank, gcd(a, M) = 1.
///
/// Item: {target slot, value} (u32 + u32 for 8-byte items, u64 + u64 + fill above).
/// Verification is exact: every slot is written once, with the value of pi^-1(slot).
#include <numeric>

#include "harness.hpp"

namespace convoy::bench {

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

class permute_kernel {
 public:
  static constexpr const char* name = "permute";
  static constexpr int n_channels = 1;
  static constexpr const char* help = "permute: random permutation of a distributed array";

  permute_kernel(const job& j, const options& opt, std::size_t item_bytes)
      : j_(j),
        opt_(opt),
        item_bytes_(item_bytes),
        words_(item_bytes / 8),
        m_(static_cast<std::uint64_t>(j.n_ranks) * opt.items),
        out_(opt.items),
        filled_(opt.items) {
    if (item_bytes != 8 && item_bytes < 16)
      throw std::runtime_error("permute items are 8 bytes or at least 16 bytes");
  }

  void prepare() {
    ++cycle_;
    const std::uint64_t s = opt_.seed + cycle_;
    a_ = m_ > 1 ? (mix64(s) % m_) | 1 : 0;
    while (m_ > 1 && std::gcd(a_, m_) != 1) a_ = (a_ + 2) % m_;
    b_ = m_ > 1 ? mix64(s + 12345) % m_ : 0;
    std::fill(filled_.begin(), filled_.end(), 0);
    bad_ = 0;
  }

  [[nodiscard]] std::uint64_t target(std::uint64_t g) const {
    if (m_ < (1ULL << 32)) return (a_ * g + b_) % m_;
    return static_cast<std::uint64_t>((static_cast<u128>(a_) * g + b_) % m_);
  }
  [[nodiscard]] std::uint64_t value(std::uint64_t g) const {
    return mix64(g ^ (opt_.seed + cycle_));
  }

  template <class C>
  void run(C** ch) {
    C& c = *ch[0];
    const std::uint64_t n = opt_.items;
    const std::uint64_t base = static_cast<std::uint64_t>(j_.rank) * n;
    alignas(64) std::byte item[65536 + 64];
    std::uint64_t i = 0;
    c.begin(item_bytes_);
    while (c.advance(i == n)) {
      for (; i < n; ++i) {
        const std::uint64_t g = base + i;
        const std::uint64_t t = target(g);
        const int dest = static_cast<int>(t / n);
        const std::uint64_t slot = t - static_cast<std::uint64_t>(dest) * n;
        const std::uint64_t v = value(g);
        if (item_bytes_ == 8) {
          const std::uint32_t w[2] = {static_cast<std::uint32_t>(slot),
                                      static_cast<std::uint32_t>(v)};
          std::memcpy(item, w, 8);
        } else {
          std::memcpy(item, &slot, 8);
          fill_words(item + 8, v, words_ - 1);
        }
        if (!c.push(item, dest)) break;
      }
      int from;
      while (const std::byte* p = c.pull(from)) {
        std::uint64_t slot, v;
        if (item_bytes_ == 8) {
          std::uint32_t w[2];
          std::memcpy(w, p, 8);
          slot = w[0];
          v = w[1];
        } else {
          std::memcpy(&slot, p, 8);
          std::memcpy(&v, p + 8, 8);
          if (!check_words(p + 8, v, words_ - 1)) [[unlikely]]
            ++bad_;
        }
        if (slot >= n || filled_[slot]) [[unlikely]] {
          ++bad_;
          continue;
        }
        filled_[slot] = 1;
        out_[slot] = v;
      }
    }
    c.reset();
  }

  bool verify() {
    // pi^-1(t) = a^-1 (t - b) mod M.
    const std::uint64_t inv = inverse(a_, m_);
    const std::uint64_t n = opt_.items;
    const std::uint64_t base = static_cast<std::uint64_t>(j_.rank) * n;
    offrank_ = 0;
    for (std::uint64_t s = 0; s < n; ++s) {
      const std::uint64_t t = base + s;
      const std::uint64_t g =
          m_ > 1 ? static_cast<std::uint64_t>(static_cast<u128>(inv) * ((t + m_ - b_) % m_) % m_)
                 : 0;
      std::uint64_t want = value(g);
      if (item_bytes_ == 8) want = static_cast<std::uint32_t>(want);
      if (!filled_[s] || out_[s] != want) ++bad_;
      const std::uint64_t tt = target(base + s);
      if (tt / n != static_cast<std::uint64_t>(j_.rank)) ++offrank_;
    }
    return bad_ == 0;
  }

  [[nodiscard]] std::uint64_t items() const { return opt_.items; }
  [[nodiscard]] std::uint64_t offrank_payload_bytes() const { return offrank_ * item_bytes_; }

 private:
  static std::uint64_t inverse(std::uint64_t a, std::uint64_t m) {
    if (m <= 1) return 0;
    i128 t = 0, nt = 1, r = m, nr = a;
    while (nr != 0) {
      const i128 q = r / nr;
      const i128 tt = t - q * nt;
      t = nt;
      nt = tt;
      const i128 rr = r - q * nr;
      r = nr;
      nr = rr;
    }
    if (t < 0) t += m;
    return static_cast<std::uint64_t>(t);
  }

  const job& j_;
  const options& opt_;
  std::size_t item_bytes_, words_;
  std::uint64_t m_;
  std::vector<std::uint64_t> out_;
  std::vector<std::uint8_t> filled_;
  std::uint64_t a_ = 1, b_ = 0, bad_ = 0, cycle_ = 0, offrank_ = 0;
};

}  // namespace convoy::bench
