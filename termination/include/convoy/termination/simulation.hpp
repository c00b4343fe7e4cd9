#pragma once
/// @file
/// P virtual ranks in one process: one engine per rank over the in-process simulated
/// transport, so the router, aggregation and termination run unchanged at scales no
/// machine at hand has (thousands of ranks), under seeded random schedules.
#include <algorithm>
#include <convoy/aggregation/sim_transport.hpp>
#include <convoy/termination/engine.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace convoy::termination {

class simulation {
 public:
  /// Engines for every rank of `plan`, over one simulated network seeded with `seed`.
  /// `memory` (may be null) supplies each endpoint's link buffers in one block
  /// (sim_network::endpoint): fewer, larger allocations for runs of many ranks.
  simulation(const std::shared_ptr<const router::route_plan>& plan, const engine_options& options,
             std::uint64_t seed, const std::shared_ptr<aggregation::buffer_source>& memory = {})
      : network_(plan->n_ranks(), seed), rng_(seed ^ 0x9e3779b97f4a7c15ULL) {
    engines_.reserve(static_cast<std::size_t>(plan->n_ranks()));
    for (int r = 0; r < plan->n_ranks(); ++r)
      engines_.push_back(std::make_unique<engine>(plan, r, network_.endpoint(r, memory), options));
  }

  [[nodiscard]] int n_ranks() const noexcept { return static_cast<int>(engines_.size()); }
  [[nodiscard]] engine& at(int rank) { return *engines_[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] aggregation::sim_network& network() noexcept { return network_; }
  [[nodiscard]] std::mt19937_64& rng() noexcept { return rng_; }

  /// Delivers between 0 and `max` in-flight buffers, chosen by the network's generator:
  /// the random interleaving of deliveries and rank steps is the schedule.
  void jitter(int max) {
    const int n = std::uniform_int_distribution<int>(0, max)(rng_);
    for (int i = 0; i < n && network_.deliver_one(); ++i) {
    }
  }

  /// A random permutation of the ranks: the order in which they act this round.
  [[nodiscard]] std::vector<int> round_order() {
    std::vector<int> order(engines_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::shuffle(order.begin(), order.end(), rng_);
    return order;
  }

 private:
  aggregation::sim_network network_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<engine>> engines_;
};

}  // namespace convoy::termination
