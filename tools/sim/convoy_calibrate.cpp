// convoy-calibrate: measures convoy-sim's cost model on the machine at hand through MPI
// (docs/sim-reference.md, "Calibration") and writes the model file that
// `convoy-sim --model` reads.
//
//   mpirun -np N [--mca btl self,tcp] convoy-calibrate --out model.json
//
// Link classes come from topology discovery (CONVOY_EMULATE_NODES included): for each class
// one pair (rank 0, the first rank of that class) runs a ping-pong and two streams while
// the other ranks wait; the per-item costs are timed on the engine itself, in-process over
// the simulated transport (calibrate_items.cpp). Bad arguments: rank 0 says so, exit 2.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/topology/machine.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "../cli_checks.hpp"
#include "../cli_exit.hpp"
#include "calibrate_items.hpp"
#include "sim_model.hpp"

namespace {

using convoy::aggregation::link_class;
using convoy::aggregation::link_class_name;
using convoy::aggregation::n_link_classes;

struct options {
  std::string out;
  int iters = 2000;                 // ping-pong round trips (streams: as many messages)
  int large_bytes = 16384;          // the large stream's message size (a buffer)
  std::uint64_t items = 1'000'000;  // items per per-item measurement
};

link_class class_of(const convoy::topology::machine& m, int a, int b) {
  const auto& x = m.ranks[static_cast<std::size_t>(a)];
  const auto& y = m.ranks[static_cast<std::size_t>(b)];
  if (x.node != y.node) return link_class::off_node;
  // Unbound ranks (package -1, e.g. --bind-to none) are taken to share a socket.
  if (x.package >= 0 && y.package >= 0 && x.package != y.package) return link_class::same_node;
  return link_class::same_socket;
}

struct pair_times {
  double one_way_s = 0;    // ping-pong of 8 bytes: half a round trip
  double gap_small_s = 0;  // streaming 16-byte messages: time per message
  double gap_large_s = 0;  // streaming large messages: time per message
};

constexpr int batches = 5;  // every figure is the best of 5 batches (scheduling noise)

// Half the round trip of an 8-byte ping-pong between `a` and `b`.
double pingpong(int me, int a, int b, int iters) {
  char buf[8] = {};
  const int peer = me == a ? b : a;
  const int per = std::max(1, iters / batches);
  double best = 1e30;
  for (int k = -1; k < batches; ++k) {  // batch -1 warms up
    const double t0 = MPI_Wtime();
    for (int i = 0; i < per; ++i) {
      if (me == a) {
        MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
    }
    if (k >= 0) best = std::min(best, (MPI_Wtime() - t0) / (2.0 * per));
  }
  return best;
}

// `a` streams `n` messages of `bytes` to `b` in windows of 64, each window acknowledged
// (the acknowledgement's round trip is spread over the window); the time per message.
double stream(int me, int a, int b, int n, int bytes) {
  constexpr int window = 64;
  const int rounds = std::max(1, n / window / batches);
  std::vector<char> buf(static_cast<std::size_t>(bytes) * window);
  std::vector<MPI_Request> req(window);
  const int peer = me == a ? b : a;
  double best = 1e30;
  for (int k = -1; k < batches; ++k) {
    const double t0 = MPI_Wtime();
    for (int r = 0; r < rounds; ++r) {
      for (int w = 0; w < window; ++w) {
        char* p = buf.data() + static_cast<std::size_t>(w) * static_cast<std::size_t>(bytes);
        auto* q = &req[static_cast<std::size_t>(w)];
        if (me == a)
          MPI_Isend(p, bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, q);
        else
          MPI_Irecv(p, bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, q);
      }
      MPI_Waitall(window, req.data(), MPI_STATUSES_IGNORE);
      if (me == a)
        MPI_Recv(nullptr, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        MPI_Send(nullptr, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
    if (k >= 0) best = std::min(best, (MPI_Wtime() - t0) / (static_cast<double>(rounds) * window));
  }
  return best;
}

// Ranks outside a measurement sleep instead of spinning in MPI, so that with more ranks
// than cores the pair measured has the cores.
void wait_sleeping(MPI_Request& r) {
  int flag = 0;
  for (MPI_Test(&r, &flag, MPI_STATUS_IGNORE); !flag; MPI_Test(&r, &flag, MPI_STATUS_IGNORE))
    usleep(200);
}

// Measures the pair (a, b); every rank calls it, ranks other than a and b only wait.
pair_times measure_pair(int me, int a, int b, const options& o) {
  pair_times t;
  if (me == a || me == b) {
    t.one_way_s = pingpong(me, a, b, o.iters);
    t.gap_small_s = stream(me, a, b, o.iters, 16);
    t.gap_large_s = stream(me, a, b, std::max(64 * batches, o.iters / 4), o.large_bytes);
  }
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Ibcast(&t, 3, MPI_DOUBLE, a, MPI_COMM_WORLD, &r);
  wait_sleeping(r);
  return t;
}

// LogGP-like fit (README "Calibration"): alpha = the small stream's gap; beta from the
// large stream's extra time per byte; latency = one-way time - 2 alpha - 8 beta.
convoy::aggregation::link_cost fit(const pair_times& t, int large_bytes) {
  convoy::aggregation::link_cost c;
  c.alpha_s = t.gap_small_s;
  c.beta_s_per_byte = std::max(0.0, (t.gap_large_s - t.gap_small_s) / (large_bytes - 16));
  c.latency_s = std::max(0.0, t.one_way_s - 2 * c.alpha_s - 8 * c.beta_s_per_byte);
  return c;
}

int run(const options& o, int me, int n) {
  convoy::tools::progress_line progress("convoy-calibrate: ");  // rank 0 shows it
  const auto m = convoy::topology::discover(MPI_COMM_WORLD);
  convoy::sim::cost_model model = convoy::sim::cost_model::defaults();
  std::string measured, kept;
  for (int k = 0; k < n_link_classes; ++k) {
    int peer = 1;
    while (peer < n && static_cast<int>(class_of(m, 0, peer)) != k) ++peer;
    const char* name = link_class_name(static_cast<link_class>(k));
    if (peer == n) {  // no pair of this class: the default stays
      kept += kept.empty() ? name : std::string(", ") + name;
      continue;
    }
    if (me == 0)
      progress.show(std::string("measuring ") + name + " (ranks 0-" + std::to_string(peer) + ")",
                    true);
    const pair_times t = measure_pair(me, 0, peer, o);
    model.links[k] = fit(t, o.large_bytes);
    progress.clear();
    if (me == 0)
      std::printf(
          "%-12s ranks 0-%d: one-way %.3g s, gap 16 B %.3g s, gap %d B %.3g s -> "
          "alpha %.3g s, latency %.3g s, %.3g GB/s\n",
          name, peer, t.one_way_s, t.gap_small_s, o.large_bytes, t.gap_large_s,
          model.links[k].alpha_s, model.links[k].latency_s,
          model.links[k].beta_s_per_byte > 0 ? 1e-9 / model.links[k].beta_s_per_byte : 0.0);
    measured += (measured.empty() ? "" : ", ") + std::string(name) + " (ranks 0-" +
                std::to_string(peer) + ")";
  }
  item_costs ic;
  std::string failed;  // rank 0 alone times the engine: the others wait, then it throws
  if (me == 0) progress.show("timing push, forward and pull on the engine", true);
  if (me == 0) try {
      ic = measure_item_costs(o.items);
    } catch (const convoy::error& e) {
      failed = e.what();
    }
  MPI_Request done = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &done);
  wait_sleeping(done);
  progress.clear();
  if (!failed.empty()) throw convoy::error(failed);
  if (me == 0) {
    model.push_s = ic.push_s;
    model.forward_s = ic.forward_s;
    model.pull_s = ic.pull_s;
    std::printf("per item: push %.3g s, forward %.3g s, pull %.3g s\n", ic.push_s, ic.forward_s,
                ic.pull_s);
    const char* btl = std::getenv("OMPI_MCA_btl");
    model.source = "convoy-calibrate, np " + std::to_string(n) + ", " +
                   std::to_string(m.nodes.size()) + " nodes (" + m.source + "), btl " +
                   (btl ? btl : "default") + "; measured: " + measured +
                   (kept.empty() ? "" : "; defaults kept: " + kept);
    convoy::sim::save_model(o.out, model);
    std::printf("wrote %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace

// Errors are reported and turned into exit codes below.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  int me = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  options o;
  CLI::App app{"convoy-calibrate: measures convoy-sim's cost model through MPI",
               "convoy-calibrate"};
  app.add_option("--out", o.out, "the model file to write (JSON, convoy-sim --model)")
      ->required()
      ->check(convoy::tools::writable_file(me == 0));  // rank 0 writes it
  app.add_option("--iters", o.iters, "ping-pong round trips per pair (default 2000)")
      ->check(CLI::Range(10, 10'000'000));
  app.add_option("--large-bytes", o.large_bytes, "message size of the bandwidth stream (16384)")
      ->check(CLI::Range(1024, 1 << 26));
  app.add_option("--items", o.items, "items per per-item cost measurement (1e6)")
      ->check(CLI::Range(std::uint64_t{1000}, std::uint64_t{1} << 32));
  int code = convoy::tools::parse_command_line(app, argc, argv, me == 0);
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);  // rank 0 alone checked --out
  if (code < 0) {
    try {
      code = run(o, me, n);
    } catch (const convoy::error& e) {
      if (me == 0) std::cerr << "convoy-calibrate: " << e.what() << "\n";
      code = 2;
    }
  }
  MPI_Finalize();
  return code;
}
