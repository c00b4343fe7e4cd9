/// @file
/// Micro-benchmarks of routing: next-hop computation and tag encode/decode per item
/// (router/route_plan.hpp), for bale's tensor plans and TRAM meshes at 4096 ranks.
#include <benchmark/benchmark.h>

#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstdint>
#include <memory>
#include <vector>

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr int n_ranks = 4096;

// 0-2: tensor order 1-3 (n_local 16); 3: mesh 16x16x16; 4: mesh 64x64; 5: 1-D mesh.
std::unique_ptr<convoy::router::route_plan> make(int which) {
  using namespace convoy;
  if (which < 3) return router::make_tensor_plan(which + 1, n_ranks, 16);
  std::vector<int> shape = which == 3   ? std::vector<int>{16, 16, 16}
                           : which == 4 ? std::vector<int>{64, 64}
                                        : std::vector<int>{n_ranks};
  return router::make_mesh_plan(topology::mesh::cartesian(shape));
}

const char* plan_label(int which) {
  static const char* names[] = {"tensor1",      "tensor2",   "tensor3",
                                "mesh16x16x16", "mesh64x64", "mesh4096"};
  return names[which];
}

struct pair {
  int src, dst;
};

std::vector<pair> pairs(std::size_t n) {
  std::vector<pair> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = mix(i);
    v[i] = {static_cast<int>((x & 0xffffffffULL) % n_ranks), static_cast<int>((x >> 32) % n_ranks)};
  }
  return v;
}

/// One next_hop call for a freshly pushed item (stage 0).
void BM_next_hop(benchmark::State& state) {
  const auto plan = make(static_cast<int>(state.range(0)));
  const auto v = pairs(4096);
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& p = v[i++ & 4095];
    benchmark::DoNotOptimize(plan->next_hop(p.src, p.dst, 0));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(plan_label(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_next_hop)->DenseRange(0, 5);

/// A whole route, hop by hop, as the engines along it compute it.
void BM_route(benchmark::State& state) {
  const auto plan = make(static_cast<int>(state.range(0)));
  const auto v = pairs(4096);
  std::size_t i = 0;
  std::int64_t hops = 0;
  for (auto _ : state) {
    const auto& p = v[i++ & 4095];
    int at = p.src, first = 0;
    while (at != p.dst) {
      const auto h = plan->next_hop(at, p.dst, first);
      at = h.rank;
      first = h.stage + 1;
      ++hops;
    }
    benchmark::DoNotOptimize(at);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["hops_per_item"] =
      static_cast<double>(hops) / static_cast<double>(state.iterations());
  state.SetLabel(plan_label(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_route)->DenseRange(0, 5);

/// Tag encode then decode on the first hop of a route (the per-item header).
void BM_tag_encode_decode(benchmark::State& state) {
  const auto plan = make(static_cast<int>(state.range(0)));
  const auto v = pairs(4096);
  std::vector<convoy::router::hop> first(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) first[k] = plan->next_hop(v[k].src, v[k].dst, 0);
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & 4095;
    const auto& p = v[k];
    const auto& h = first[k];
    if (h.stage >= plan->n_stages()) continue;
    const std::uint64_t tag = plan->encode(h.stage, p.src, h.rank, p.src, p.dst);
    int s = 0, d = 0;
    plan->decode(h.stage, p.src, h.rank, tag, s, d);
    benchmark::DoNotOptimize(s + d);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(plan_label(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_tag_encode_decode)->DenseRange(0, 5);

}  // namespace
