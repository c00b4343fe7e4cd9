#pragma once
/// @file
/// What a convoy::async::runtime is built with (its conveyors, how many tasks it keeps in
/// flight, how often a posting task serves) and what it counts (runtime.hpp).
#include <convoy/conveyor_api/options.hpp>
#include <cstddef>
#include <cstdint>

namespace convoy::async {

struct runtime_options {
  /// Mesh or tensor plan, buffer size and buffers per link of the two conveyors
  /// (steady/elastic are ignored: the runtime flushes partly filled buffers whenever no
  /// task can run, Fischler & Uchima's "transfers are done when no further work can be done").
  conveyor_options conveyor;
  /// Root tasks in flight at most on this rank (run_each starts a new one only below it),
  /// so memory stays bounded when a phase has 10^7 tasks. >= 1. The default is measured
  /// (docs/cpp-api.md, "Coroutine tasks"): more frames than the cache holds beside
  /// the user's data cost more than the coalescing they add.
  std::size_t max_tasks = 1024;
  /// A task that posts many updates without waiting serves the requests that other ranks
  /// sent here once every this many posts (otherwise only when its own path is full, and
  /// ranks can settle into taking turns: one serves while the other waits). >= 1.
  std::uint32_t serve_every = 4096;
};

/// Counters of a runtime (this rank, since construction).
struct runtime_stats {
  std::uint64_t phases = 0, tasks = 0;
  std::uint64_t calls = 0;           ///< calls sent as requests (`local` ones not counted)
  std::uint64_t posts = 0;           ///< fire-and-forget requests issued (to any rank)
  std::uint64_t handled = 0;         ///< requests from other ranks handled here
  std::uint64_t local = 0;           ///< calls to this rank run at once, without a request
  std::uint64_t suspensions = 0;     ///< times a task waited on a reply
  std::uint64_t flushes = 0;         ///< partly filled buffers sent because no task could run
  std::uint64_t peak_tasks = 0;      ///< most root tasks in flight at once
  std::uint64_t blocked = 0;         ///< requests that found their path full at first
  std::uint64_t blocked_rounds = 0;  ///< progress rounds spent waiting for such paths
  std::uint64_t combinable = 0;      ///< combinable updates issued (to any rank)
  /// Combinable updates folded into another by this rank's combining engines (at the
  /// source or forwarding), summed at the end of each phase.
  std::uint64_t combined = 0;
};

}  // namespace convoy::async
