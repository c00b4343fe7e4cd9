#pragma once
// The oracle's pieces (tools/sim/README.md, SIM-1 and SIM-8), kept apart from the engines
// they check: per-rank tallies of what was sent and what was pulled, the FIFO check per
// pair, and an item's payload bytes as a function of its word.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim_run.hpp"

namespace convoy::sim {

// Per rank: how many items (or replies) and the sum of their fingerprints (SIM-1, SIM-8).
struct tally {
  std::vector<std::uint64_t> n, sum;
  explicit tally(int p) : n(static_cast<std::size_t>(p)), sum(static_cast<std::size_t>(p)) {}
  void add(int at, std::uint64_t f) {
    ++n[static_cast<std::size_t>(at)];
    sum[static_cast<std::size_t>(at)] += f;
  }
};

// FIFO per pair: a source numbers its items in push order, so per (source, destination)
// they must arrive in increasing order (TERM-2). Its size grows with the pairs that
// communicate, so large runs leave it off.
class order_check {
 public:
  order_check(bool on, int p, const char* what)
      : on_(on), what_(what), last_(on ? static_cast<std::size_t>(p) : 0) {}
  void operator()(int src, int dst, std::uint64_t seq) {
    if (!on_) return;
    auto [it, fresh] = last_[static_cast<std::size_t>(dst)].try_emplace(src, seq);
    if (!fresh && it->second >= seq)
      throw run_failure(std::string("FIFO per pair violated (SIM-1): at rank ") +
                        std::to_string(dst) + " " + what_ + " #" + std::to_string(seq) +
                        " from rank " + std::to_string(src) + " arrived after #" +
                        std::to_string(it->second));
    it->second = seq;
  }

 private:
  bool on_;
  const char* what_;
  std::vector<std::unordered_map<int, std::uint64_t>> last_;
};

inline constexpr int seq_bits = 43;  // an item's word: source << 43 | sequence number

// Payload bytes after the 8-byte word are a function of the word (the item's id), so that a
// pulled item's every byte is checked without storing what was sent (SIM-1).
inline std::byte payload_byte(std::uint64_t word, std::size_t i) noexcept {
  std::uint64_t x = word + 0x9e3779b97f4a7c15ULL * (i / 8 + 1);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::byte>((x ^ (x >> 31)) >> (8 * (i % 8)));
}
inline void fill_payload(std::vector<std::byte>& item, std::uint64_t word) noexcept {
  std::memcpy(item.data(), &word, sizeof word);
  for (std::size_t i = sizeof word; i < item.size(); ++i) item[i] = payload_byte(word, i);
}
inline bool payload_ok(const std::byte* data, std::size_t bytes, std::uint64_t word) noexcept {
  for (std::size_t i = sizeof word; i < bytes; ++i)
    if (data[i] != payload_byte(word, i)) return false;
  return true;
}

}  // namespace convoy::sim
