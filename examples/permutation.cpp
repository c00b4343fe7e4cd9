// A random permutation by dart throwing (bale's randperm): every item throws darts at a
// target array twice its size until one lands in an empty slot; the items in slot order
// are the permutation. As coroutine tasks each item is a plain retry loop around one
// awaited remote claim; the conveyor version needs two conveyors and a retry queue.
// Checked: every item 0..N-1 appears exactly once in the result (gathered on every rank).
#include <convoy/async/runtime.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <deque>
#include <vector>

#include "example_util.hpp"

using namespace convoy;
using example::mix;

constexpr std::uint64_t k_empty = ~0ull;

struct layout {
  std::uint64_t per_rank, slots_per_rank;
  int owner(std::uint64_t s) const { return static_cast<int>(s / slots_per_rank); }
  std::uint64_t local(std::uint64_t s) const { return s % slots_per_rank; }
  std::uint64_t dart(std::uint64_t item, std::uint64_t attempt, int p) const {
    return mix(item * 1000003 + attempt) % (slots_per_rank * static_cast<std::uint64_t>(p));
  }
};

// ---- coroutine tasks -------------------------------------------------------------------
void throw_tasks(async::runtime& rt, const layout& g, std::vector<std::uint64_t>& slots) {
  auto claim = rt.define([&slots](std::uint64_t local, std::uint64_t item) {
    if (slots[local] != k_empty) return false;
    slots[local] = item;
    return true;
  });
  const auto first = static_cast<std::uint64_t>(rt.rank()) * g.per_rank;
  rt.run_each(g.per_rank, [&](std::size_t k) -> async::task<> {
    for (std::uint64_t attempt = 0;; ++attempt) {
      const std::uint64_t s = g.dart(first + k, attempt, rt.n_ranks());
      if (co_await rt.call(g.owner(s), claim, g.local(s), first + k)) co_return;
    }
  });
}

// ---- the same with two conveyors -------------------------------------------------------
struct dart_msg {
  std::uint64_t local, item;
};
struct answer_msg {
  std::uint64_t item, ok;
};

void throw_loop(const layout& g, int rank, int p, std::vector<std::uint64_t>& slots) {
  // Retries wait on answers: without steady dispatch a partly filled buffer of darts or
  // answers could wait forever (Maley & DeVinney 2019, sec. 3.6). The task runtime flushes by
  // itself.
  conveyor_options steady;
  steady.steady = true;
  conveyor<dart_msg> darts(MPI_COMM_WORLD, steady);
  conveyor<answer_msg> answers(MPI_COMM_WORLD, steady);
  const auto first = static_cast<std::uint64_t>(rank) * g.per_rank;
  std::vector<std::uint64_t> attempt(g.per_rank, 0);
  std::deque<std::uint64_t> to_throw;
  for (std::uint64_t k = 0; k < g.per_rank; ++k) to_throw.push_back(k);
  std::uint64_t placed = 0;
  darts.begin();
  answers.begin();
  bool more = true, more_answers = true;
  while (more || more_answers) {
    more = darts.advance(placed == g.per_rank);
    more_answers = answers.advance(!more);
    while (!to_throw.empty()) {
      const std::uint64_t k = to_throw.front();
      const std::uint64_t s = g.dart(first + k, attempt[k], p);
      if (!darts.push({g.local(s), first + k}, g.owner(s))) break;
      to_throw.pop_front();
    }
    while (auto d = darts.pull()) {
      const bool ok = slots[d->item.local] == k_empty;
      if (!answers.push({d->item.item, ok ? 1u : 0u}, d->from)) {
        darts.unpull();
        break;
      }
      if (ok) slots[d->item.local] = d->item.item;
    }
    while (auto a = answers.pull()) {
      const std::uint64_t k = a->item.item - first;
      if (a->item.ok) {
        ++placed;
      } else {
        ++attempt[k];
        to_throw.push_back(k);
      }
    }
  }
  darts.reset();
  answers.reset();
}

// The items in slot order, on every rank; true if it is a permutation of 0..N-1.
bool is_permutation(const std::vector<std::uint64_t>& slots, std::uint64_t n, int p) {
  std::vector<std::uint64_t> mine;
  for (auto v : slots)
    if (v != k_empty) mine.push_back(v);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p), 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < p; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<std::uint64_t> all(static_cast<std::size_t>(displs[p - 1] + counts[p - 1]));
  MPI_Allgatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), displs.data(),
                 MPI_UINT64_T, MPI_COMM_WORLD);
  std::vector<int> seen(n, 0);
  for (auto v : all)
    if (v >= n || seen[v]++) return false;
  return all.size() == n;
}

// An exception from the library ends the example with its message (std::terminate).
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const layout g{4000, 8000};
  const std::uint64_t n = g.per_rank * static_cast<std::uint64_t>(p);
  bool ok = true;
  {
    async::runtime rt(MPI_COMM_WORLD);
    std::vector<std::uint64_t> a(g.slots_per_rank, k_empty), b(g.slots_per_rank, k_empty);
    throw_tasks(rt, g, a);
    throw_loop(g, rank, p, b);
    ok = is_permutation(a, n, p) && is_permutation(b, n, p);
  }
  const int rc = example::verdict("permutation", ok);
  MPI_Finalize();
  return rc;
}
