// Breadth-first search on a random directed graph (vertex v has edges to
// mix(4v + j) mod n, j < 4), level by level: one phase per level (BSP supersteps with
// fine-grained messages inside, the FA-BSP model). As coroutine tasks a phase is a loop
// posting "visit(w, level)" to w's owner; as a conveyor loop, the same items pushed and
// pulled by hand. Both checked against a serial BFS of the whole graph on every rank.
#include <convoy/async/runtime.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <deque>
#include <vector>

#include "example_util.hpp"

using namespace convoy;
using example::mix;

constexpr int k_degree = 4;
std::uint64_t neighbour(std::uint64_t v, int j, std::uint64_t n) {
  return mix(v * k_degree + static_cast<std::uint64_t>(j)) % n;
}

struct graph_part {
  std::uint64_t n, per_rank, first;
  std::vector<std::int64_t> level;  // of this rank's vertices, -1 unreached
  std::vector<std::uint64_t> frontier;
  int owner(std::uint64_t v) const { return static_cast<int>(v / per_rank); }
  bool any_frontier() const {
    int mine = frontier.empty() ? 0 : 1, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any != 0;
  }
  void start() {
    level.assign(per_rank, -1);
    frontier.clear();
    if (first == 0) {
      level[0] = 0;
      frontier.push_back(0);
    }
  }
};

// ---- coroutine tasks: one phase per level ----------------------------------------------
void bfs_tasks(async::runtime& rt, graph_part& g) {
  std::vector<std::uint64_t> next;
  auto visit = rt.define([&](std::uint64_t local, std::int64_t lvl) {
    if (g.level[local] < 0) {
      g.level[local] = lvl;
      next.push_back(g.first + local);
    }
  });
  g.start();
  for (std::int64_t l = 0; g.any_frontier(); ++l) {
    rt.run([&]() -> async::task<> {
      for (auto v : g.frontier)
        for (int j = 0; j < k_degree; ++j) {
          const std::uint64_t w = neighbour(v, j, g.n);
          rt.post(g.owner(w), visit, w % g.per_rank, l + 1);
        }
      co_return;
    });
    g.frontier.swap(next);
    next.clear();
  }
}

// ---- the same with a conveyor per level ------------------------------------------------
struct visit_msg {
  std::uint64_t local;
  std::int64_t level;
};

void bfs_loop(graph_part& g) {
  conveyor<visit_msg> c(MPI_COMM_WORLD);
  g.start();
  for (std::int64_t l = 0; g.any_frontier(); ++l) {
    std::vector<std::uint64_t> next;
    std::size_t i = 0;
    int j = 0;
    c.begin();
    while (c.advance(i == g.frontier.size())) {
      for (; i < g.frontier.size(); j = 0, ++i) {
        for (; j < k_degree; ++j) {
          const std::uint64_t w = neighbour(g.frontier[i], j, g.n);
          if (!c.push({w % g.per_rank, l + 1}, g.owner(w))) break;
        }
        if (j < k_degree) break;
      }
      while (auto d = c.pull())
        if (g.level[d->item.local] < 0) {
          g.level[d->item.local] = d->item.level;
          next.push_back(g.first + d->item.local);
        }
    }
    c.reset();
    g.frontier.swap(next);
  }
}

std::vector<std::int64_t> serial_bfs(std::uint64_t n) {
  std::vector<std::int64_t> level(n, -1);
  std::deque<std::uint64_t> q{0};
  level[0] = 0;
  while (!q.empty()) {
    const auto v = q.front();
    q.pop_front();
    for (int j = 0; j < k_degree; ++j) {
      const auto w = neighbour(v, j, n);
      if (level[w] < 0) {
        level[w] = level[v] + 1;
        q.push_back(w);
      }
    }
  }
  return level;
}

// An exception from the library ends the example with its message (std::terminate).
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::uint64_t per_rank = 3000, n = per_rank * static_cast<std::uint64_t>(p);
  const auto want = serial_bfs(n);
  bool ok = true;
  {
    async::runtime rt(MPI_COMM_WORLD);
    graph_part a{n, per_rank, per_rank * static_cast<std::uint64_t>(rank), {}, {}};
    graph_part b = a;
    bfs_tasks(rt, a);
    bfs_loop(b);
    for (std::uint64_t l = 0; l < per_rank; ++l)
      ok = ok && a.level[l] == want[a.first + l] && b.level[l] == want[a.first + l];
  }
  const int rc = example::verdict("bfs", ok);
  MPI_Finalize();
  return rc;
}
