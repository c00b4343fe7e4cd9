// index-gather: out[k] = table[index[k]] for a table spread over the ranks, written three
// times: as coroutine tasks (convoy::async: a task per element, and Fischler & Uchima's fixed set
// of tasks) and as the hand-written two-conveyor loop of Maley & DeVinney 2019, Figure 4. Each is
// checked against the serial formula table[i] = mix(i).
#include <convoy/async/dist_array.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <vector>

#include "example_util.hpp"

using namespace convoy;
using example::mix;

// ---- coroutine tasks: the whole algorithm --------------------------------------------
std::vector<std::uint64_t> gather_tasks(async::runtime& rt, async::dist_array<std::uint64_t>& table,
                                        const std::vector<std::uint64_t>& index) {
  std::vector<std::uint64_t> out(index.size());
  rt.run_each(index.size(),
              [&](std::size_t k) -> async::task<> { out[k] = co_await table.get(index[k]); });
  return out;
}

// ---- the same in Fischler & Uchima's form: T tasks ("threads"), each asking for one element after
// another; cheaper per element than a task each where the work per element is tiny ----
std::vector<std::uint64_t> gather_threads(async::runtime& rt,
                                          async::dist_array<std::uint64_t>& table,
                                          const std::vector<std::uint64_t>& index) {
  std::vector<std::uint64_t> out(index.size());
  const std::size_t threads = rt.options().max_tasks;
  rt.run_each(threads, [&](std::size_t t) -> async::task<> {
    for (std::size_t k = t; k < index.size(); k += threads) out[k] = co_await table.get(index[k]);
  });
  return out;
}

// ---- the same with two conveyors (Maley & DeVinney 2019, Figure 4)
// -----------------------------------
struct query {
  std::uint64_t slot, local;
};
struct reply {
  std::uint64_t slot, value;
};

std::vector<std::uint64_t> gather_loop(const std::vector<std::uint64_t>& local_table,
                                       std::uint64_t per_rank,
                                       const std::vector<std::uint64_t>& index) {
  conveyor<query> q(MPI_COMM_WORLD);
  conveyor<reply> r(MPI_COMM_WORLD);
  std::vector<std::uint64_t> out(index.size());
  q.begin();
  r.begin();
  std::size_t k = 0;
  bool more = true, more_replies = true;
  while (more || more_replies) {
    more = q.advance(k == index.size());
    more_replies = r.advance(!more);
    for (; k < index.size(); ++k)
      if (!q.push({k, index[k] % per_rank}, static_cast<int>(index[k] / per_rank))) break;
    while (auto d = q.pull())
      if (!r.push({d->item.slot, local_table[d->item.local]}, d->from)) {
        q.unpull();
        break;
      }
    while (auto d = r.pull()) out[d->item.slot] = d->item.value;
  }
  q.reset();
  r.reset();
  return out;
}

// An exception from the library ends the example with its message (std::terminate).
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::uint64_t per_rank = 5000, n = per_rank * static_cast<std::uint64_t>(p);
  std::vector<std::uint64_t> index(20000);
  for (std::size_t k = 0; k < index.size(); ++k)
    index[k] = mix(k * 131 + static_cast<std::uint64_t>(rank)) % n;
  bool ok = true;
  {
    async::runtime rt(MPI_COMM_WORLD);
    async::dist_array<std::uint64_t> table(rt, n);
    for (std::size_t l = 0; l < table.local().size(); ++l)
      table.local()[l] = mix(table.first() + l);
    const auto a = gather_tasks(rt, table, index);
    const auto b = gather_loop(
        std::vector<std::uint64_t>(table.local().begin(), table.local().end()), per_rank, index);
    const auto c = gather_threads(rt, table, index);
    for (std::size_t k = 0; k < index.size(); ++k)
      ok = ok && a[k] == mix(index[k]) && b[k] == a[k] && c[k] == a[k];
  }
  const int rc = example::verdict("index_gather", ok);
  MPI_Finalize();
  return rc;
}
