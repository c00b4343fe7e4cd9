/// @file
/// Micro-benchmark of the engine's hot path: push + pull per item over the in-process
/// simulated transport (termination/simulation.hpp), every rank in one process, so the
/// cost measured is the engine's (aggregation, routing, termination), not MPI's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <convoy/aggregation/combine_cache.hpp>
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/simulation.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "zipf.hpp"

namespace {

using namespace convoy;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 0: tensor order 1 over 2 ranks (the np=2 target run); 1: mesh 4x4; 2: tensor 3 over 64;
// 3: mesh 4x4x4 (three forwarding stages over 64 ranks).
std::shared_ptr<const router::route_plan> make(int which) {
  if (which == 0) return router::make_tensor_plan(1, 2, 2);
  if (which == 1) {
    const std::vector<int> shape{4, 4};
    return router::make_mesh_plan(topology::mesh::cartesian(shape));
  }
  if (which == 3) {
    const std::vector<int> shape{4, 4, 4};
    return router::make_mesh_plan(topology::mesh::cartesian(shape));
  }
  return router::make_tensor_plan(3, 64, 4);
}

/// One begin..reset cycle of `per_rank` items (range(1) bytes) pushed by every rank to
/// random ranks; items/s counts pushes (each also pulled once).
void BM_push_pull(benchmark::State& state) {
  const auto plan = make(static_cast<int>(state.range(0)));
  const auto item_bytes = static_cast<std::size_t>(state.range(1));
  const std::uint64_t per_rank = 20000;
  termination::engine_options o;
  termination::simulation sim(plan, o, 1);
  const int p = sim.n_ranks();
  std::vector<std::byte> item(item_bytes, std::byte{1});
  std::int64_t items = 0;
  std::uint64_t salt = 0;
  for (auto _ : state) {
    std::vector<std::uint64_t> pushed(static_cast<std::size_t>(p), 0);
    std::vector<bool> finished(static_cast<std::size_t>(p), false);
    for (int r = 0; r < p; ++r)
      if (sim.at(r).begin(item_bytes) <= 0) throw std::runtime_error("begin failed");
    int live = p;
    std::uint64_t sum = 0;
    for (std::uint64_t round = 0; live > 0; ++round) {
      if (round > 100'000'000) throw std::runtime_error("engine did not terminate");
      for (int r = 0; r < p; ++r) {
        if (finished[static_cast<std::size_t>(r)]) continue;
        auto& e = sim.at(r);
        auto& n = pushed[static_cast<std::size_t>(r)];
        for (; n < per_rank; ++n) {
          const auto dest =
              static_cast<int>(((mix(salt + n * 64 + static_cast<std::uint64_t>(r)) >> 32) *
                                static_cast<std::uint64_t>(p)) >>
                               32);
          if (e.push(item.data(), dest) <= 0) break;
        }
        const int rc = e.advance(n == per_rank);
        termination::item_view v;
        while (e.pull(v) > 0) sum += static_cast<std::uint64_t>(v.from);
        if (rc == termination::done) {
          finished[static_cast<std::size_t>(r)] = true;
          --live;
        }
      }
      sim.network().deliver_all();
    }
    for (int r = 0; r < p; ++r) (void)sim.at(r).reset();
    benchmark::DoNotOptimize(sum);
    items += static_cast<std::int64_t>(per_rank) * p;
    salt += 0x10000000ULL;
  }
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(item_bytes));
  static const char* labels[] = {"tensor1 P=2", "mesh 4x4", "tensor3 P=64", "mesh 4x4x4"};
  state.SetLabel(labels[state.range(0)]);
}
BENCHMARK(BM_push_pull)
    ->ArgsProduct({{0, 1, 2, 3}, {8, 16, 32, 128}})
    ->Unit(benchmark::kMillisecond);

/// Combining (termination/README.md, TERM-20..24): one cycle of `per_rank` 16-byte updates
/// {key, 1} per rank to the keys' owners on plan range(0). range(1): 0 = a plain engine,
/// 1 = combining with keys that never repeat (the gate turns it off), 2 = combining over
/// 1 024 keys per owner (most updates fold), 3 and 4 = combining over keys of a Zipf law of
/// exponent 1.0 and 1.5 over 10^6 keys per owner, 5 and 6 = the same keys on a plain
/// engine; range(2) updates per rank (a longer cycle shows the gate past its first
/// samples). items/s counts pushes; `records_per_item` is what the owners pulled per push.
void BM_push_combine(benchmark::State& state) {
  const auto plan = make(static_cast<int>(state.range(0)));
  const int mode = static_cast<int>(state.range(1));
  const auto per_rank = static_cast<std::uint64_t>(state.range(2));
  termination::engine_options o;
  if (mode >= 1 && mode <= 4) o.combine = convoy::aggregation::combine_sum<std::uint64_t>(0, 8, 8);
  termination::simulation sim(plan, o, 1);
  const int p = sim.n_ranks();
  // Keys of a Zipf law over 10^6 keys per rank, the hot ones spread over the owners, drawn
  // once (not timed).
  const bool zipf = mode >= 3;
  std::vector<std::uint64_t> drawn;
  if (zipf) {
    const std::uint64_t n = 1000000 * static_cast<std::uint64_t>(p);
    const bench::zipf_sampler z(n, mode == 3 || mode == 5 ? 1.0 : 1.5);
    const bench::key_spread spread(n);
    std::uint64_t u = 0;
    const auto uniform = [&] { return static_cast<double>(mix(u++) >> 11) * 0x1.0p-53; };
    drawn.resize(per_rank * static_cast<std::uint64_t>(p));
    for (std::uint64_t& k : drawn) k = spread(z(uniform));
  }
  std::int64_t items = 0, records = 0;
  std::uint64_t salt = 0;
  for (auto _ : state) {
    std::vector<std::uint64_t> pushed(static_cast<std::size_t>(p), 0);
    std::vector<bool> finished(static_cast<std::size_t>(p), false);
    for (int r = 0; r < p; ++r)
      if (sim.at(r).begin(16) <= 0) throw std::runtime_error("begin failed");
    int live = p;
    std::uint64_t sum = 0;
    for (std::uint64_t round = 0; live > 0; ++round) {
      if (round > 100'000'000) throw std::runtime_error("engine did not terminate");
      for (int r = 0; r < p; ++r) {
        if (finished[static_cast<std::size_t>(r)]) continue;
        auto& e = sim.at(r);
        auto& n = pushed[static_cast<std::size_t>(r)];
        for (; n < per_rank; ++n) {
          const std::uint64_t x = mix(salt + n * 64 + static_cast<std::uint64_t>(r));
          std::uint64_t key = x;
          if (mode == 2) key = x % (1024 * static_cast<std::uint64_t>(p));
          if (zipf) key = drawn[static_cast<std::size_t>(r) * per_rank + n];
          const std::uint64_t update[2] = {key, 1};
          const auto dest = static_cast<int>(mix(update[0]) % static_cast<std::uint64_t>(p));
          if (e.push(update, dest) <= 0) break;
        }
        const int rc = e.advance(n == per_rank);
        termination::item_view v;
        while (e.pull(v) > 0) {
          std::uint64_t count = 0;
          std::memcpy(&count, v.data + 8, 8);
          sum += count;
          ++records;
        }
        if (rc == termination::done) {
          finished[static_cast<std::size_t>(r)] = true;
          --live;
        }
      }
      sim.network().deliver_all();
    }
    for (int r = 0; r < p; ++r) (void)sim.at(r).reset();
    if (sum != per_rank * static_cast<std::uint64_t>(p))
      throw std::runtime_error("combining lost or doubled an update");
    items += static_cast<std::int64_t>(per_rank) * p;
    salt += 0x10000000ULL;
  }
  state.SetItemsProcessed(items);
  state.counters["records_per_item"] =
      static_cast<double>(records) / static_cast<double>(std::max<std::int64_t>(items, 1));
  static const char* labels[] = {"plain",
                                 "combine, unique keys",
                                 "combine, 1024 keys per owner",
                                 "combine, Zipf 1.0 over 1e6 keys per owner",
                                 "combine, Zipf 1.5 over 1e6 keys per owner",
                                 "plain, Zipf 1.0 over 1e6 keys per owner",
                                 "plain, Zipf 1.5 over 1e6 keys per owner"};
  state.SetLabel(labels[mode]);
}
BENCHMARK(BM_push_combine)
    ->ArgsProduct({{1, 3}, {0, 1, 2}, {20000}})
    ->ArgsProduct({{1}, {0, 1, 2, 3, 4, 5, 6}, {200000}})
    ->Unit(benchmark::kMillisecond);

/// The fold pass alone (aggregation/README.md AGG-154): a 16 KiB combining lane of records
/// {1-byte tag, 8-byte key, 8-byte value 1}, 4 tags, keys of a Zipf law of exponent
/// range(0) / 10 over 10^6 keys (0: uniform), filled and then folded as a lane at fill; one
/// pass over a full buffer per iteration, the buffer refilled untimed (manual time).
/// range(1) > 0: the pass goes through a hold-back cache of that many entries (AGG-157),
/// kept warm across the iterations (never drained), by the lane's picked pass (range(2)
/// 0) or the one for any layout (1). `ns_per_record`: the pass's time per record it
/// examined.
void BM_fold_pass(benchmark::State& state) {
  namespace agg = convoy::aggregation;
  const double skew = static_cast<double>(state.range(0)) / 10;
  constexpr std::size_t capacity = 16384, record = 17, keys = 1000000;
  constexpr std::size_t per_buffer = (capacity - agg::header_bytes) / record;
  constexpr std::size_t buffers = 64;
  std::vector<std::byte> drawn(buffers * per_buffer * record);
  {
    const bench::zipf_sampler z(keys, skew > 0 ? skew : 1.0);
    const bench::key_spread spread(keys);
    std::uint64_t u = 0;
    const auto uniform = [&] { return static_cast<double>(mix(u++) >> 11) * 0x1.0p-53; };
    for (std::size_t i = 0; i < buffers * per_buffer; ++i) {
      const std::uint64_t key = skew > 0 ? spread(z(uniform)) : mix(u++) % keys;
      const std::uint64_t one = 1;
      std::byte* const r = drawn.data() + i * record;
      r[0] = static_cast<std::byte>(mix(key) & 3);
      std::memcpy(r + 1, &key, 8);
      std::memcpy(r + 9, &one, 8);
    }
  }
  agg::combine_gate_policy always;
  always.min_hit_per_1024 = 0;  // every buffer combines: this measures the pass
  const agg::combine_spec spec = agg::combine_sum<std::uint64_t>(0, 8, 8);
  agg::combining_lane comb(per_buffer, 4096, always);
  const agg::fold_pass_fn pass = agg::pick_fold_pass(16, spec, 1);
  const auto entries = static_cast<std::size_t>(state.range(1));
  agg::combine_cache cache(entries, 16, 1, spec);
  const agg::cache_pass_fn cached =
      state.range(2) == 0 ? agg::pick_cache_pass(16, spec) : &agg::fold_through_cache;
  std::vector<std::byte> victim(16);
  std::vector<std::byte> buf(capacity + 8);
  agg::send_lane lane;
  lane.tag_bytes = 1;
  lane.record_bytes = record;
  std::int64_t examined = 0, folded = 0;
  double seconds = 0;
  std::size_t next = 0;
  for (auto _ : state) {
    lane.buf = buf.data();
    std::memcpy(buf.data() + agg::header_bytes, drawn.data() + next * per_buffer * record,
                per_buffer * record);
    next = (next + 1) % buffers;
    lane.used = static_cast<std::uint32_t>(agg::header_bytes + per_buffer * record);
    lane.items = static_cast<std::uint32_t>(per_buffer);
    comb.opened();
    const auto t0 = std::chrono::steady_clock::now();
    const agg::fold_result r =
        entries > 0 ? cached(lane, comb, spec, cache, victim.data()) : pass(lane, comb, spec);
    const auto t1 = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(dt);
    seconds += dt;
    examined += r.examined;
    folded += r.folded;
  }
  state.SetItemsProcessed(examined);
  state.counters["ns_per_record"] =
      seconds * 1e9 / static_cast<double>(std::max<std::int64_t>(examined, 1));
  state.counters["folded_per_record"] =
      static_cast<double>(folded) / static_cast<double>(std::max<std::int64_t>(examined, 1));
}
BENCHMARK(BM_fold_pass)
    ->ArgsProduct({{0, 10, 15}, {0}, {0}})
    ->ArgsProduct({{0, 10, 15}, {2048, 16384}, {0, 1}})
    ->UseManualTime();

}  // namespace
