// The trace recorder's set-up over MPI (trace_setup.hpp, TERM-17).
#include "trace_setup.hpp"

#include <array>
#include <cerrno>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace convoy::termination::detail {

namespace {

namespace fs = std::filesystem;

constexpr int clock_rounds = 5;
constexpr int clock_tag = 7301;

// Rank 0's check of the directory: empty if it can write there, else why not.
std::string check_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the directory: " + ec.message();
  if (!fs::is_directory(dir, ec)) return "is not a directory";
  const fs::path probe = fs::path(dir) / ".convoy-trace-probe";
  {
    std::ofstream f(probe);
    if (!f || !(f << "probe\n")) return "cannot write a file in it";
  }
  fs::remove(probe, ec);
  return {};
}

// The first conveyor index whose rank-0 file does not exist yet in `dir`, reserved by
// creating that file empty (exclusively: another process tracing into the same directory
// takes the next one); the engine writes it when freed.
int reserve_index(const std::string& dir) {
  for (int n = 0;; ++n) {
    const std::string path = dir + "/convoy-trace." + std::to_string(n) + ".0.json";
    if (std::FILE* f = std::fopen(path.c_str(), "wx")) {
      std::fclose(f);
      return n;
    }
    if (errno != EEXIST) {
      std::string what = "CONVOY_TRACE='" + dir;
      what += "': cannot create ";
      what += path;
      throw convoy::error(what);
    }
  }
}

// Rank 0 measures each other rank's steady clock against its own: the sample of the
// shortest round trip, offset = their time - the midpoint of ours. Returns this rank's
// {offset, error bound}.
std::array<std::int64_t, 2> clock_offset(MPI_Comm comm) {
  int rank = 0, size = 1;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size));
  std::array<std::int64_t, 2> mine{0, 0};
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      std::array<std::int64_t, 2> best{0, -1};
      for (int k = 0; k < clock_rounds; ++k) {
        std::int64_t theirs = 0;
        const std::int64_t t0 = termination::trace_recorder::now();
        CONVOY_MPI_CHECK(MPI_Send(&t0, 1, MPI_INT64_T, r, clock_tag, comm));
        CONVOY_MPI_CHECK(MPI_Recv(&theirs, 1, MPI_INT64_T, r, clock_tag, comm, MPI_STATUS_IGNORE));
        const std::int64_t t1 = termination::trace_recorder::now();
        if (best[1] < 0 || (t1 - t0) / 2 < best[1])
          best = {theirs - (t0 + (t1 - t0) / 2), (t1 - t0) / 2};
      }
      CONVOY_MPI_CHECK(MPI_Send(best.data(), 2, MPI_INT64_T, r, clock_tag, comm));
    }
    return mine;
  }
  for (int k = 0; k < clock_rounds; ++k) {
    std::int64_t t = 0;
    CONVOY_MPI_CHECK(MPI_Recv(&t, 1, MPI_INT64_T, 0, clock_tag, comm, MPI_STATUS_IGNORE));
    t = termination::trace_recorder::now();
    CONVOY_MPI_CHECK(MPI_Send(&t, 1, MPI_INT64_T, 0, clock_tag, comm));
  }
  CONVOY_MPI_CHECK(MPI_Recv(mine.data(), 2, MPI_INT64_T, 0, clock_tag, comm, MPI_STATUS_IGNORE));
  return mine;
}

}  // namespace

termination::trace_options make_trace_options(MPI_Comm comm, const base::settings& s) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Rank 0's word: on or off, the event count.
  std::array<unsigned long long, 2> head{0, 0};
  if (rank == 0 && s.trace_dir) head = {1, s.trace_events.value_or(base::default_trace_events)};
  CONVOY_MPI_CHECK(MPI_Bcast(head.data(), 2, MPI_UNSIGNED_LONG_LONG, 0, comm));
  termination::trace_options o;
  if (head[0] == 0) return o;
  std::string dir = rank == 0 ? *s.trace_dir : std::string();
  base::broadcast(comm, dir);
  // Rank 0 checks the directory and names the conveyor; a failure is every rank's error.
  int index = base::agree(comm, [&] {
    if (rank != 0) return 0;
    const std::string why = check_dir(dir);
    if (!why.empty()) throw convoy::error("CONVOY_TRACE='" + dir + "': " + why);
    return reserve_index(dir);
  });
  CONVOY_MPI_CHECK(MPI_Bcast(&index, 1, MPI_INT, 0, comm));
  o.dir = dir;
  o.events = static_cast<std::size_t>(head[1]);
  o.conveyor = index;
  MPI_Comm dup = MPI_COMM_NULL;
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &dup));
  std::array<std::int64_t, 2> offset{0, 0};
  try {
    offset = clock_offset(dup);
  } catch (...) {
    MPI_Comm_free(&dup);
    throw;
  }
  CONVOY_MPI_CHECK(MPI_Comm_free(&dup));
  o.clock_offset_ns = offset[0];
  o.clock_error_ns = offset[1];
  std::int64_t epoch = termination::trace_recorder::now();
  CONVOY_MPI_CHECK(MPI_Bcast(&epoch, 1, MPI_INT64_T, 0, comm));
  o.epoch_ns = epoch;
  return o;
}

}  // namespace convoy::termination::detail
