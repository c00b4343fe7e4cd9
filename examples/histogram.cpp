// histogram: counts[key[k]] += 1 on the owner of each key, as coroutine tasks with
// fire-and-forget updates and as the conveyor loop of Maley & DeVinney 2019, Figure 3; checked
// against a serial count of every rank's keys (each rank regenerates them from the same hash).
#include <convoy/async/dist_array.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <vector>

#include "example_util.hpp"

using namespace convoy;
using example::mix;

std::uint64_t key(int rank, std::uint64_t k, std::uint64_t n) {
  return mix(k * 977 + static_cast<std::uint64_t>(rank)) % n;
}

// ---- coroutine tasks -------------------------------------------------------------------
void histogram_tasks(async::runtime& rt, async::dist_array<std::int64_t>& counts,
                     const std::vector<std::uint64_t>& keys) {
  auto add = counts.define_update([](std::int64_t& c, std::int64_t by) { c += by; });
  rt.run([&]() -> async::task<> {
    for (auto k : keys) counts.update(k, add, 1);
    co_return;
  });
}

// ---- the same with one conveyor (Maley & DeVinney 2019, Figure 3)
// ------------------------------------
void histogram_loop(std::vector<std::int64_t>& local_counts, std::uint64_t per_rank,
                    const std::vector<std::uint64_t>& keys) {
  conveyor<std::uint64_t> c(MPI_COMM_WORLD);
  c.begin();
  std::size_t i = 0;
  while (c.advance(i == keys.size())) {
    for (; i < keys.size(); ++i)
      if (!c.push(keys[i] % per_rank, static_cast<int>(keys[i] / per_rank))) break;
    while (auto d = c.pull()) ++local_counts[d->item];
  }
  c.reset();
}

// An exception from the library ends the example with its message (std::terminate).
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::uint64_t per_rank = 300, n = per_rank * static_cast<std::uint64_t>(p), m = 30000;
  std::vector<std::uint64_t> keys(m);
  for (std::uint64_t k = 0; k < m; ++k) keys[k] = key(rank, k, n);
  bool ok = true;
  {
    async::runtime rt(MPI_COMM_WORLD);
    async::dist_array<std::int64_t> counts(rt, n);
    histogram_tasks(rt, counts, keys);
    std::vector<std::int64_t> loop(per_rank, 0);
    histogram_loop(loop, per_rank, keys);
    std::vector<std::int64_t> want(n, 0);
    for (int r = 0; r < p; ++r)
      for (std::uint64_t k = 0; k < m; ++k) ++want[key(r, k, n)];
    for (std::uint64_t l = 0; l < per_rank; ++l)
      ok = ok && counts.local()[l] == want[counts.first() + l] &&
           loop[l] == want[counts.first() + l];
  }
  const int rc = example::verdict("histogram", ok);
  MPI_Finalize();
  return rc;
}
