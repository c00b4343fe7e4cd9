#pragma once
// Combining engines under the simulation's random schedules (termination/README.md
// TERM-20..24): keyed items with skewed keys, and a checker that adds up what every owner
// pulls per key and compares it with the sum of every value pushed for that key — the
// sequential oracle. It has contract_checker's interface (sim_harness.hpp), so that
// basic_cycle_driver runs it with its TERM-4 check after every advance.
#include <algorithm>
#include <cmath>
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim_harness.hpp"

namespace convoy_test {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 32;
  return x;
}

// Where an item keeps its key (1..8 bytes hold the key number; more bytes: the rest are
// derived from it) and its value (4 or 8 bytes, summed modulo 2^(8 x value_bytes)). The
// other bytes are a function of the key, so that a fold can only leave them as they were.
struct kv_layout {
  std::uint32_t item_bytes = 16;
  std::uint32_t key_offset = 0;
  std::uint32_t key_bytes = 8;
  std::uint32_t value_offset = 8;
  std::uint32_t value_bytes = 8;
};

inline convoy::aggregation::combine_spec spec_of(const kv_layout& l) {
  return {l.key_offset, l.key_bytes, l.value_offset, l.value_bytes,
          l.value_bytes == 4 ? convoy::aggregation::combine_add<std::uint32_t>
                             : convoy::aggregation::combine_add<std::uint64_t>};
}

// The owner of key k among p ranks: hashed, so that hot keys spread over the owners.
inline int owner_of(std::uint64_t key, int p) {
  return static_cast<int>(mix64(key ^ 0x5eed) % static_cast<std::uint64_t>(p));
}

// Key ranks 0..n-1 drawn with P(k) proportional to 1/(k+1)^s (s = 0: uniform).
class zipf_keys {
 public:
  zipf_keys(std::uint64_t n, double s) : cdf_(n) {
    double sum = 0;
    for (std::uint64_t k = 0; k < n; ++k) cdf_[k] = sum += 1.0 / std::pow(double(k + 1), s);
    for (double& c : cdf_) c /= sum;
  }
  std::uint64_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return std::min<std::uint64_t>(static_cast<std::uint64_t>(it - cdf_.begin()), cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

// Per rank the keys it pushes, and the workload (their owners) the driver walks.
struct keyed_workload {
  workload dests;
  std::vector<std::vector<std::uint64_t>> keys;
};

inline keyed_workload make_keyed(int p, int per_rank, const zipf_keys& z, std::mt19937_64& rng) {
  keyed_workload w;
  w.dests.resize(static_cast<std::size_t>(p));
  w.keys.resize(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < per_rank; ++i) {
      const std::uint64_t k = z(rng);
      w.keys[static_cast<std::size_t>(r)].push_back(k);
      w.dests[static_cast<std::size_t>(r)].push_back(owner_of(k, p));
    }
  return w;
}

class combine_checker {
 public:
  combine_checker(kv_layout lay, const keyed_workload& w, int p)
      : lay_(lay),
        keys_(&w.keys),
        p_(p),
        item_(lay.item_bytes),
        cursor_(static_cast<std::size_t>(p), 0),
        mask_(lay.value_bytes >= 8 ? ~std::uint64_t{0}
                                   : (std::uint64_t{1} << (8 * lay.value_bytes)) - 1) {}

  // The next item of `src` (its next key, a value of its own).
  const std::byte* next(int src, int /*dst*/) {
    const std::size_t i = cursor_[static_cast<std::size_t>(src)];
    const std::uint64_t key = (*keys_)[static_cast<std::size_t>(src)][i];
    for (std::uint32_t b = 0; b < lay_.item_bytes; ++b) item_[b] = byte_of(key, b);
    std::memcpy(item_.data() + lay_.key_offset, &key, std::min<std::uint32_t>(lay_.key_bytes, 8));
    value_ = 1 + mix64(static_cast<std::uint64_t>(src) << 32 | i) % 1000;
    std::memcpy(item_.data() + lay_.value_offset, &value_, lay_.value_bytes);
    key_ = key;
    return item_.data();
  }
  void pushed(int src, int dst) {
    if (dst != owner_of(key_, p_)) bad_ = "the workload pushed a key to another owner";
    auto& w = want_[key_];
    w = (w + value_) & mask_;
    ++cursor_[static_cast<std::size_t>(src)];
    ++n_pushed_;
  }
  // Empty if `v`, pulled at `me`, is a record of a key `me` owns with its other bytes
  // intact; its value is added to the key's total.
  std::string check(int me, const convoy::termination::item_view& v) {
    if (v.bytes != lay_.item_bytes) return "item of " + std::to_string(v.bytes) + " bytes";
    std::uint64_t key = 0, value = 0;
    std::memcpy(&key, v.data + lay_.key_offset, std::min<std::uint32_t>(lay_.key_bytes, 8));
    std::memcpy(&value, v.data + lay_.value_offset, lay_.value_bytes);
    if (owner_of(key, p_) != me)
      return "key " + std::to_string(key) + " pulled at " + std::to_string(me);
    for (std::uint32_t b = 0; b < lay_.item_bytes; ++b) {
      const bool is_value = b >= lay_.value_offset && b < lay_.value_offset + lay_.value_bytes;
      const bool is_low_key =
          b >= lay_.key_offset && b < lay_.key_offset + std::min<std::uint32_t>(lay_.key_bytes, 8);
      if (!is_value && !is_low_key && v.data[b] != byte_of(key, b))
        return "byte " + std::to_string(b) + " of a record of key " + std::to_string(key);
    }
    auto& g = got_[key];
    g = (g + value) & mask_;
    ++n_pulled_;
    return {};
  }
  [[nodiscard]] std::uint64_t n_pushed() const { return n_pushed_; }
  [[nodiscard]] std::uint64_t n_pulled() const { return n_pulled_; }  // records
  // Empty if every key's pulled total equals the sum of its pushed values.
  [[nodiscard]] std::string missing() const {
    if (!bad_.empty()) return bad_;
    for (const auto& [k, w] : want_) {
      const auto it = got_.find(k);
      const std::uint64_t g = it == got_.end() ? 0 : it->second;
      if (g != w)
        return "key " + std::to_string(k) + ": owner has " + std::to_string(g) + ", pushed " +
               std::to_string(w);
    }
    for (const auto& [k, g] : got_)
      if (want_.find(k) == want_.end()) return "key " + std::to_string(k) + " never pushed";
    return {};
  }

 private:
  // Item byte b of every record of `key` outside its value (and its first 8 key bytes).
  static std::byte byte_of(std::uint64_t key, std::uint32_t b) {
    return static_cast<std::byte>(mix64(key * 131 + b) & 0xff);
  }
  kv_layout lay_;
  const std::vector<std::vector<std::uint64_t>>* keys_;
  int p_;
  std::vector<std::byte> item_;
  std::vector<std::size_t> cursor_;
  std::uint64_t mask_;
  std::uint64_t key_ = 0, value_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> want_, got_;
  std::uint64_t n_pushed_ = 0, n_pulled_ = 0;
  std::string bad_;
};

struct combine_totals {
  std::uint64_t pushes = 0, pulls = 0, combined = 0, stops = 0;
};

// Lifetime counters over every rank of `sim`.
inline combine_totals totals(simulation& sim) {
  combine_totals t;
  for (int r = 0; r < sim.n_ranks(); ++r) {
    const convoy::termination::engine_stats s = sim.at(r).stats(true);
    t.pushes += s.pushes;
    t.pulls += s.pulls - s.unpulls;  // a pull put back is pulled again
    t.combined += s.combined;
    t.stops += s.combine_stops;
  }
  return t;
}

inline convoy::termination::engine_options combining(const kv_layout& lay,
                                                     convoy::termination::engine_options o) {
  o.combine = spec_of(lay);
  return o;
}

// One cycle of `w` on `sim` with `lay`'s items: the owners' totals, termination, and
// pushes - folds = pulls over the cycle. Returns the failure, empty if none.
inline std::string run_keyed(simulation& sim, const keyed_workload& w, const kv_layout& lay,
                             cycle_options o = {}) {
  const combine_totals before = totals(sim);
  const auto res = basic_cycle_driver<combine_checker>(sim, w.dests, lay.item_bytes, o,
                                                       combine_checker(lay, w, sim.n_ranks()))
                       .run();
  if (!res.failure.empty()) return res.failure;
  if (!res.completed) return "did not terminate in " + std::to_string(res.rounds) + " rounds";
  if (res.pushed != n_items(w.dests)) return "pushed " + std::to_string(res.pushed);
  const combine_totals after = totals(sim);
  const std::uint64_t pushes = after.pushes - before.pushes, pulls = after.pulls - before.pulls,
                      folds = after.combined - before.combined;
  if (pushes != res.pushed || pulls != res.pulled || pushes - folds != pulls)
    return "pushes " + std::to_string(pushes) + " - folds " + std::to_string(folds) + " != pulls " +
           std::to_string(pulls);
  return {};
}

}  // namespace convoy_test
