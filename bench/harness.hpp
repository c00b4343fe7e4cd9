#pragma once
/// @file
/// The shared MPI main of the benchmark programs: runs a kernel over every requested
/// kind and item size, times each begin/reset cycle (max over ranks, Maley & DeVinney 2019, sec.
/// 5), verifies it, and prints one RESULT line per configuration (bench/README.md).
///
/// A kernel is a class with
///   static constexpr const char* name;      // "histogram"
///   static constexpr int n_channels;        // channels one cycle uses (1 or 2)
///   static constexpr const char* help;      // one line for --help
///   Kernel(const job&, const options&, std::size_t item_bytes);
///   void prepare();                         // untimed set-up before each cycle
///   template <class C> void run(C* ch);     // one cycle: begin ... reset on every channel
///   bool verify();                          // collective; true if this rank's result is exact
///   std::uint64_t items() const;            // items this rank pushed in the cycle
///   std::uint64_t offrank_payload_bytes() const;  // payload bytes pushed to other ranks
///                                           // (valid after verify)
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_rows.hpp"
#include "channels.hpp"

namespace convoy::bench {

/// Measures of one timed cycle on this rank.
struct cycle_measure {
  double seconds = 0;
  bool verified = false;
  std::uint64_t items = 0, wire = 0, payload = 0;
  /// Bytes sent to ranks of other nodes (channels with offnode_bytes()); -1: not counted.
  std::int64_t offnode = -1;
};

/// The line printed for a row: "RESULT kernel=... verified=1" (other scripts read it;
/// tools read the JSON rows, bench_rows.hpp).
std::string result_line(const result_row& r);
/// Median-of-reps and max-over-ranks reduction of this rank's cycles (collective); the
/// row's items_per_rank is the mean over ranks and cycles.
result_row collect(const std::vector<cycle_measure>& cycles, std::size_t memory,
                   std::size_t buffers, const job& j);
/// Prints rows as a table on rank 0 (demo): kind, items/s per rank, memory, verified.
void print_table(const std::vector<result_row>& rows, const job& j, std::FILE* out);
/// Writes rows with their context as JSON (rank 0; bench_rows.hpp).
void write_json(const std::string& path, const std::vector<result_row>& rows, const job& j,
                int argc, char** argv);
/// Rank 0 prints the row's RESULT line, with `extra` (" key=value ...") after it, unless
/// --quiet.
void print_result(const result_row& r, const std::string& extra, const options& opt, const job& j);
/// After the last row: the --print-table table and the --json file (rank 0).
void finish_rows(const std::vector<result_row>& rows, const options& opt, const job& j, int argc,
                 char** argv);
/// MPI start-up and shut-down (bale's MPI build needs its own init when linked with it).
void init_mpi(int& argc, char**& argv);
void finalize_mpi();
/// Throws (status 2, naming `option` and its `value`) when `bytes_per_rank` on every rank
/// that shares this rank's memory would not fit in the machine's physical memory: a table
/// too large is a bad option, not a crash in the allocator. Collective; all ranks throw
/// alike.
void check_memory(const char* option, std::uint64_t value, std::uint64_t bytes_per_rank,
                  const job& j);

/// main() of a benchmark program: MPI up, `run(argc, argv)` (its status: 0 ok, 1 a result
/// not verified, 2 usage), MPI down. An exception gives status 2 and one message
/// "<name>: <what>" (rank 0).
template <class Run>
int program_main(int argc, char** argv, const char* name, Run run) {
  init_mpi(argc, argv);
  int status = 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", name, e.what());
    status = 2;
  }
  finalize_mpi();
  return status;
}

/// Runs `Kernel` for one kind and item size; collective. Exceptions from channel
/// construction are returned as a row with `error` set (every rank agrees).
/// The coroutine kind is written for some kernels only: those that say so with
/// `static constexpr bool written_as_tasks = true;` beside their `run(coro_channel**)`.
template <class Kernel>
concept written_as_tasks = requires {
  requires Kernel::written_as_tasks;
};
/// Kind combine (an engine that merges equal keys in its buffers) runs the kernels that
/// say so with `static constexpr bool combines = true;`: their items are an 8-byte key and
/// an 8-byte value that the receiver adds.
template <class Kernel>
concept combines = requires {
  requires Kernel::combines;
};
template <class Kernel, class C>
inline constexpr bool runs_on = !is_coro_channel<C> || written_as_tasks<Kernel>;

/// The warm-up and timed cycles of `kernel` over the channels `raw`: one measure per timed
/// cycle (its time from the barrier, the bytes its channels sent, what the kernel verified).
/// A kernel that throws aborts the job: other ranks may be inside the cycle.
template <class Kernel, class C>
std::vector<cycle_measure> time_cycles(Kernel& kernel, std::vector<C*>& raw, const job& j,
                                       const options& opt, const std::string& kind_name) {
  std::vector<cycle_measure> cycles;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    kernel.prepare();
    MPI_Barrier(j.comm);
    const double t0 = MPI_Wtime();
    try {
      if constexpr (runs_on<Kernel, C>) kernel.run(raw.data());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rank %d: %s %s: %s\n", j.rank, Kernel::name, kind_name.c_str(),
                   e.what());
      MPI_Abort(j.comm, 3);
    }
    const double t1 = MPI_Wtime();
    cycle_measure m;
    m.seconds = t1 - t0;
    for (C* c : raw) m.wire += c->wire_bytes();
    if constexpr (requires(C * c) { c->offnode_bytes(j.rank_node); }) {
      m.offnode = 0;
      for (C* c : raw) m.offnode += static_cast<std::int64_t>(c->offnode_bytes(j.rank_node));
    }
    m.verified = kernel.verify();
    m.items = kernel.items();
    m.payload = kernel.offrank_payload_bytes();
    if (rep >= opt.warmup) cycles.push_back(m);
  }
  return cycles;
}

template <class Kernel>
result_row run_one(const job& j, const options& opt, const std::string& kind_name,
                   std::size_t item_bytes) {
  result_row row;
  std::string error;
  kind_spec k;
  std::optional<Kernel> kernel_holder;
  try {
    k = parse_kind(kind_name, opt, j);
    kernel_holder.emplace(j, opt, item_bytes);  // same outcome on every rank
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (error.empty()) {
    Kernel& kernel = *kernel_holder;
    dispatch(k, [&]<class C>(std::type_identity<C>) {
      if constexpr (!runs_on<Kernel, C>) {
        error = std::string("kind coro is not written for ") + Kernel::name;
        return;
      }
      if (is_coro_channel<C> && item_bytes != 8) {
        error = "kind coro runs 8-byte items only";
        return;
      }
      if (k.combine && !combines<Kernel>) {
        error = std::string("kind combine is not written for ") + Kernel::name;
        return;
      }
      if (k.combine && item_bytes != 16) {
        error = "kind combine runs 16-byte items only (8-byte key, 8-byte value)";
        return;
      }
      std::vector<std::unique_ptr<C>> ch;
      std::string local_error;
      try {
        // A coroutine kind runs all its traffic through one runtime.
        const int n_channels = is_coro_channel<C> ? 1 : Kernel::n_channels;
        for (int i = 0; i < n_channels; ++i) ch.push_back(std::make_unique<C>(j.comm, k, opt));
      } catch (const std::exception& e) {
        local_error = e.what();
      }
      int bad = !local_error.empty(), any_bad = 0;
      MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, j.comm);
      if (any_bad) {
        error = local_error.empty() ? "failed on another rank" : local_error;
        return;
      }
      std::vector<C*> raw;
      for (auto& c : ch) raw.push_back(c.get());
      const std::vector<cycle_measure> cycles = time_cycles(kernel, raw, j, opt, kind_name);
      std::size_t memory = 0, buffers = 0;
      for (C* c : raw) {
        memory += c->memory_bytes();
        buffers += c->buffers();
      }
      row = collect(cycles, memory, buffers, j);
      row.buffer_bytes = raw.front()->buffer_bytes();
    });
  }
  if (k.fam == family::convey && k.order > 0) row.n_local = k.n_local;
  row.kernel = Kernel::name;
  row.impl = j.impl;
  row.kind = kind_name;
  row.item_bytes = item_bytes;
  row.ranks = j.n_ranks;
  row.nodes = j.n_nodes;
  row.items_per_rank = opt.items;
  if constexpr (combines<Kernel>) row.skew = opt.skew;  // the kernels that read --skew
  // Injection bandwidth per node (Maley & DeVinney 2019, sec. 5): payload bytes pushed by the ranks
  // of a node / time from begin to reset.
  row.node_bw_bytes_per_s = row.items_per_s_per_rank * static_cast<double>(item_bytes) *
                            static_cast<double>(j.ranks_per_node);
  row.error = error;
  return row;
}

/// A row of a program that times its own cycles instead of a Kernel's (bench-key-exchange,
/// bench-sparse-rounds): collect() of `cycles`, named; `pushed_bytes` per item (for the
/// bandwidth per node); the bytes on the wire are not counted ("na").
result_row program_row(const char* kernel, const std::string& kind, std::size_t item_bytes,
                       std::size_t pushed_bytes, const std::vector<cycle_measure>& cycles,
                       std::size_t memory, const job& j);
/// " transport=X": the `conveyor` kind's CONVOY_TRANSPORT (auto when unset), else "-".
std::string transport_field(const std::string& kind);

/// Throws std::runtime_error naming the first of `kinds` that is not in `known`, and the
/// known ones.
void check_kinds(const std::vector<std::string>& kinds, const std::vector<std::string>& known);

/// The whole of such a program: options, then a row per kind (per size of --sizes and kind
/// when `per_size`) from `run_row(opt, j, kind, size, extra)`, printed with
/// transport_field and `extra` after it, tabled and written as run_main's rows.
template <class RunRow>
int run_program(int argc, char** argv, const char* name, const char* help,
                const std::vector<std::string>& default_kinds, bool per_size, RunRow run_row) {
  return program_main(argc, argv, name, [&](int ac, char** av) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const parsed_options p = parse_options(ac, av, name, help, rank == 0);
    if (p.exit_code >= 0) return p.exit_code;
    const options& opt = p.opt;
    const job j = describe_job(MPI_COMM_WORLD);
    const std::vector<std::string>& kinds = opt.kinds.empty() ? default_kinds : opt.kinds;
    check_kinds(kinds, default_kinds);  // a bad name is a usage error, before any run
    const std::vector<std::size_t> sizes = per_size ? opt.sizes : std::vector<std::size_t>{0};
    int status = 0;
    std::vector<result_row> rows;
    for (const std::size_t size : sizes)
      for (const std::string& kind : kinds) {
        std::string extra;
        rows.push_back(run_row(opt, j, kind, size, extra));
        print_result(rows.back(), transport_field(kind) + extra, opt, j);
        if (!rows.back().verified) status = 1;
      }
    finish_rows(rows, opt, j, ac, av);
    return status;
  });
}

/// The whole program: parse options, run every (size, kind), print RESULT lines.
template <class Kernel>
int run_main(int argc, char** argv) {
  return program_main(argc, argv, Kernel::name, [](int ac, char** av) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const parsed_options p = parse_options(ac, av, Kernel::name, Kernel::help, rank == 0);
    if (p.exit_code >= 0) return p.exit_code;
    const options& opt = p.opt;
    const job j = describe_job(MPI_COMM_WORLD);
    const std::vector<std::string> kinds = opt.kinds.empty() ? available_kinds() : opt.kinds;
    for (const auto& kind : kinds) (void)parse_kind(kind, opt, j);  // a bad name is a usage error
    if constexpr (requires { Kernel::table_bytes(opt, std::size_t{8}); }) {
      std::uint64_t most = 0;
      for (const std::size_t size : opt.sizes)
        most = std::max(most, Kernel::table_bytes(opt, size));
      check_memory("--table", opt.table, most, j);
    }
    int status = 0;
    std::vector<result_row> rows;
    for (std::size_t size : opt.sizes) {
      for (const auto& kind : kinds) {
        // Without --kinds every kind runs where it can: the coroutine kind is written for
        // some kernels and 8-byte items only (asked for by name, it reports the error).
        const bool coro = kind.rfind("coro", 0) == 0;
        if (opt.kinds.empty() && coro && (size != 8 || !written_as_tasks<Kernel>)) continue;
        result_row r = run_one<Kernel>(j, opt, kind, size);
        print_result(r, "", opt, j);
        if (!r.error.empty() || !r.verified) status = 1;
        rows.push_back(std::move(r));
      }
    }
    finish_rows(rows, opt, j, ac, av);
    return status;
  });
}

}  // namespace convoy::bench
