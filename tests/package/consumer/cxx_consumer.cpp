// A C++ program written only against the installed <convoy/conveyor_api/conveyor.hpp>:
// every rank sends item i = rank * n + k to rank k % P; each receiver checks source,
// destination, FIFO per source and the count against what the senders must have sent.
// Exit code 0 only if every rank saw exactly its items.
#include <mpi.h>

#include <convoy/conveyor_api/conveyor.hpp>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr std::int64_t n = 1000;

int run(int me, int p) {
  convoy::conveyor<std::int64_t> c(MPI_COMM_WORLD);
  // From every source, in order: the k < n with k % P == me.
  std::vector<std::int64_t> next_k(static_cast<std::size_t>(p), me);
  int bad = 0;
  std::int64_t got = 0, k = 0;
  c.begin();
  while (c.advance(k == n)) {
    for (; k < n; ++k)
      if (!c.push(me * n + k, static_cast<int>(k % p))) break;
    while (auto d = c.pull()) {
      if (d->from < 0 || d->from >= p) {
        ++bad;
        continue;
      }
      auto& want = next_k[static_cast<std::size_t>(d->from)];
      if (d->item != d->from * n + want) ++bad;  // wrong source, content or order
      want += p;
      ++got;
    }
  }
  c.reset();
  const std::int64_t expected = p * ((n - me + p - 1) / p);
  if (got != expected) ++bad;
  std::printf("cxx_consumer rank %d of %d: pulled %lld items, expected %lld%s\n", me, p,
              static_cast<long long>(got), static_cast<long long>(expected),
              bad ? " MISMATCH" : "");
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int bad = 0;
  try {
    bad = run(me, p);
  } catch (const convoy::error& e) {
    std::fprintf(stderr, "cxx_consumer rank %d: %s\n", me, e.what());
    bad = 1;
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_bad ? 1 : 0;
}
