#pragma once
/// @file
/// Kinds `coro` and `coro-each` (and `:<tasks>`): the kernels written as coroutine tasks over
/// convoy::async (conveyor_api/include/convoy/async/), on the same plan as kind `mesh`.
/// Not a channel in the push/pull sense: a kernel runs it through its own
/// `run(coro_channel**)` overload. `<tasks>` is the runtime's max_tasks (default: runtime_options,
/// 1024), so `coro:1`, `coro:64`, ... give Fischler & Uchima's curve of throughput against tasks in
/// flight.
/// - `coro`: Fischler & Uchima's threads (sec. 4): `threads()` tasks per rank, each running the
/// kernel's
///   routine for one item after another (items k, k + T, k + 2T, ...);
/// - `coro-each`: one task per item, at most `threads()` in flight (`run_each`): each item pays
///   for creating and finishing its task.
#include <convoy/async/dist_array.hpp>
#include <convoy/async/runtime.hpp>
#include <memory>

#include "bench_common.hpp"

namespace convoy::bench {

class coro_channel {
 public:
  coro_channel(MPI_Comm comm, const struct kind_spec& k, const options& opt);
  [[nodiscard]] async::runtime& rt() noexcept { return *rt_; }
  /// Tasks in flight at most (the runtime's max_tasks): the number of threads of kind `coro`.
  [[nodiscard]] std::size_t threads() const noexcept { return rt_->options().max_tasks; }
  [[nodiscard]] bool each() const noexcept { return each_; }
  /// Buffer memory of the two conveyors plus the frames of the tasks in flight at most.
  [[nodiscard]] std::size_t memory_bytes() const;
  [[nodiscard]] std::size_t buffers() const;
  [[nodiscard]] std::size_t buffer_bytes() const;
  [[nodiscard]] std::uint64_t wire_bytes() const { return 0; }

 private:
  std::unique_ptr<async::runtime> rt_;
  bool each_ = false;
};

}  // namespace convoy::bench
