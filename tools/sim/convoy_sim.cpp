// convoy-sim: the library's engines for P virtual ranks over a simulated network with a
// cost model, in one process without MPI (tools/sim/README.md).
//
//   convoy-sim --mesh 16x16x16 --items 1000 [--workload uniform] [--json out.json]
//   convoy-sim --ranks 4096 --ppn 64 --mesh node,core --model cluster.json
//   convoy-sim --mesh 8x8 --workload request-reply     (bale's index-gather: two engines)
//   convoy-sim --ranks 16 --traffic matrix.txt         (lines: SOURCE DESTINATION ITEMS)
//   convoy-sim --write-model FILE   (writes the model in effect and exits)
//   convoy-sim --mesh 131072 --ppn 16 --bound   (the model's floor, without running)
//   convoy-sim --from-stats s.json [--model m.json] [--ranks 64 --ppn 8]   (replay a run)
//
// Bad arguments: a message on stderr and exit status 2 (BENCH-3's convention); a run that
// fails its oracle or stalls: a message and exit status 1.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cli_checks.hpp"
#include "../cli_exit.hpp"
#include "sim_model.hpp"
#include "sim_replay.hpp"
#include "sim_report.hpp"
#include "sim_run.hpp"

namespace {

using convoy::sim::run_config;

struct cli {
  run_config c;
  std::string nodes, dim_order, workload = "uniform", model_file, write_model, json_file;
  std::string map = "block";
  std::string from_stats;
  int conveyor = -1;
  bool keep_app = false;
  bool bound = false;
  std::string buffer_memory = "auto";
  // Model overrides: seconds (alpha, latency) and bytes/s (bandwidth) for the off-node class.
  double alpha = -1, latency = -1, bandwidth = -1;
};

[[noreturn]] void bad_list(const std::string& what, const std::string& s, const std::string& part,
                           int lo) {
  throw convoy::error(what + " '" + s + "': '" + part +
                      "' is not an integer >= " + std::to_string(lo));
}

std::vector<int> parse_list(const std::string& s, const std::string& what, int lo) {
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(',', start);
    const std::string part = s.substr(start, end - start);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || v < lo || v > std::numeric_limits<int>::max())
      bad_list(what, s, part, lo);
    out.push_back(static_cast<int>(v));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

void add_options(CLI::App& app, cli& o) {
  auto& c = o.c;
  app.add_option("--ranks", c.machine.ranks, "virtual ranks (default: the mesh's cells)")
      ->check(CLI::Range(1, 1 << 21));
  app.add_option("--nodes", o.nodes, "ranks per node, e.g. 4,2,3 (ragged; CONVOY_EMULATE_NODES)")
      ->type_name("LIST");
  app.add_option("--ppn", c.machine.ranks_per_node, "ranks per node (the last node takes the rest)")
      ->check(CLI::Range(1, 1 << 21));
  app.add_option("--sockets", c.machine.sockets_per_node, "sockets per node (default 1)")
      ->check(CLI::Range(1, 64));
  app.add_option("--map", o.map, "block or cyclic placement (CONVOY_EMULATE_MAP)")
      ->check(CLI::IsMember({"block", "cyclic"}));
  app.add_option("--mesh", c.plan.mesh, "mesh spec: auto, AxBx..., or levels node,socket,core");
  app.add_option("--dim-order", o.dim_order, "stage order over the mesh dimensions, e.g. 2,1,0")
      ->type_name("LIST");
  app.add_option("--tensor", c.plan.tensor, "bale's tensor route of this order instead of a mesh")
      ->check(CLI::Range(1, 3));
  app.add_option("--nlocal", c.plan.n_local, "local group of --tensor 2, 3 (default: node size)")
      ->check(CLI::Range(1, 1 << 21));
  app.add_option("--buffer-bytes", c.buffer_bytes, "bytes per buffer (default 16384)")
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 30));
  app.add_option("--n-buffers", c.n_buffers, "buffers per link (default 2)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--buffer-memory", o.buffer_memory,
                 "pages (full buffers in lazily committed pages), heap (buffers sized to what "
                 "they hold), auto (heap above 4096 ranks; the default)")
      ->check(CLI::IsMember({"pages", "heap", "auto"}));
  app.add_option("--workload", o.workload,
                 "uniform, hotspot, permutation, neighbour, request-reply, traffic")
      ->check(CLI::IsMember(
          {"uniform", "hotspot", "permutation", "neighbour", "request-reply", "traffic"}));
  app.add_option("--traffic", c.traffic_file,
                 "traffic-matrix file: lines 'SOURCE DESTINATION ITEMS' (implies --workload "
                 "traffic; see README)")
      ->check(CLI::ExistingFile);
  app.add_option("--items", c.items_per_rank, "items each rank pushes (default 1000)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 40));
  app.add_option("--item-bytes", c.item_bytes, "payload bytes per item (default 8)")
      ->check(CLI::Range(std::size_t{8}, std::size_t{1} << 20));
  app.add_option("--batch", c.batch, "items a rank pushes per step (default 64)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--seed", c.seed, "workload seed (default 1)");
  app.add_option("--route-table-max-ranks", c.route_table_max_ranks,
                 "engines keep a first-hop table up to this P (default 4096)")
      ->check(CLI::Range(0, 1 << 21));
  app.add_option("--model", o.model_file, "cost model file (JSON), see README")
      ->check(CLI::ExistingFile);
  using convoy::tools::number_in;
  app.add_option("--alpha", o.alpha, "off-node overhead per message, seconds (0..1)")
      ->check(number_in(0, 1));
  app.add_option("--latency", o.latency, "off-node latency, seconds (0..1)")
      ->check(number_in(0, 1));
  app.add_option("--bandwidth", o.bandwidth, "off-node bandwidth, bytes/s (1..1e15)")
      ->check(number_in(1, 1e15));
  app.add_option("--write-model", o.write_model, "write the model in effect to FILE and exit")
      ->check(convoy::tools::writable_file());
  app.add_option("--from-stats", o.from_stats,
                 "replay a measured run's stats document (CONVOY_STATS); with --ranks, --nodes, "
                 "--ppn, --mesh or --dim-order also at that scale (README)")
      ->check(CLI::ExistingFile);
  app.add_option("--conveyor", o.conveyor,
                 "--from-stats: the conveyor's index (default: the one with most pushes)")
      ->check(CLI::Range(0, 1 << 30));
  app.add_flag("--keep-app", o.keep_app,
               "--from-stats: keep the model's app_s instead of fitting it to the run");
  app.add_flag("--bound", o.bound,
               "print the model's lower bound on the predicted time without running the "
               "engines (any P whose plan can be built; README)");
  app.add_option("--json", o.json_file, "write the results as one JSON document to FILE")
      ->check(convoy::tools::writable_file());
}

// What CLI11 cannot check per option; fills the derived fields of the configuration.
void finish(const CLI::App& app, cli& o) {
  auto& c = o.c;
  if (!o.nodes.empty()) c.machine.node_sizes = parse_list(o.nodes, "--nodes", 1);
  if (!o.nodes.empty() && app.count("--ppn") > 0)
    throw convoy::error("give --nodes or --ppn, not both");
  if (!o.dim_order.empty()) c.plan.dim_order = parse_list(o.dim_order, "--dim-order", 0);
  if (c.plan.tensor != 0 && (app.count("--mesh") > 0 || !o.dim_order.empty()))
    throw convoy::error("--mesh and --dim-order belong to a mesh, not to --tensor");
  if (c.plan.n_local != 0 && c.plan.tensor < 2)
    throw convoy::error("--nlocal belongs to --tensor 2 or 3");
  c.machine.cyclic = o.map == "cyclic";
  c.buffer_memory = o.buffer_memory == "pages"  ? convoy::sim::buffer_memory_choice::pages
                    : o.buffer_memory == "heap" ? convoy::sim::buffer_memory_choice::heap
                                                : convoy::sim::buffer_memory_choice::automatic;
  if (!c.traffic_file.empty() && app.count("--workload") > 0 && o.workload != "traffic")
    throw convoy::error("--traffic gives the traffic workload, not --workload " + o.workload);
  if (!c.traffic_file.empty()) o.workload = "traffic";
  if (!c.traffic_file.empty() && app.count("--items") > 0)
    throw convoy::error("--items and --traffic: the traffic file gives the items");
  c.workload = convoy::sim::parse_workload(o.workload);
  if (!o.from_stats.empty())
    for (const char* opt : {"--traffic", "--workload", "--items", "--tensor", "--nlocal"})
      if (app.count(opt) > 0)
        throw convoy::error(std::string(opt) + " and --from-stats: the stats give the workload " +
                            "and the plan");
  if (o.bound && !o.from_stats.empty())
    throw convoy::error("--bound and --from-stats: a replay runs the engines");
  if (o.from_stats.empty() && (app.count("--conveyor") > 0 || o.keep_app))
    throw convoy::error("--conveyor and --keep-app belong to --from-stats");
  if (!o.model_file.empty()) c.model = convoy::sim::load_model(o.model_file, c.model);
  auto& off = c.model.links[static_cast<int>(convoy::aggregation::link_class::off_node)];
  if (o.alpha >= 0) off.alpha_s = o.alpha;
  if (o.latency >= 0) off.latency_s = o.latency;
  if (o.bandwidth > 0) off.beta_s_per_byte = 1.0 / o.bandwidth;
}

long peak_rss_kib();

// `c`'s progress on stderr through `progress` (a line every few seconds in a log), its
// lines starting with `what`.
void report_progress(convoy::sim::run_config& c, convoy::tools::progress_line& progress,
                     const std::string& what) {
  c.on_progress = [&progress, what](std::uint64_t pulled, std::uint64_t items) {
    progress.show(what + std::to_string(pulled) + " of " + std::to_string(items) +
                  " items delivered (" + std::to_string(items ? pulled * 100 / items : 100) +
                  " %)");
  };
}

// --from-stats: the run on the measured machine and its comparison, then the scaled run.
int replay(const CLI::App& app, const cli& o) {
  const auto run = convoy::sim::load_stats(o.from_stats);
  const auto& cv = convoy::sim::choose_conveyor(run, o.conveyor);
  convoy::sim::replay_request req;
  for (const char* opt : {"--ranks", "--nodes", "--ppn", "--sockets", "--mesh", "--dim-order"})
    req.scale = req.scale || app.count(opt) > 0;
  req.mesh_given = app.count("--mesh") > 0;
  req.dim_order_given = app.count("--dim-order") > 0;
  req.sockets_given = app.count("--sockets") > 0;
  req.buffer_bytes_given = app.count("--buffer-bytes") > 0;
  req.n_buffers_given = app.count("--n-buffers") > 0;
  req.item_bytes_given = app.count("--item-bytes") > 0;
  req.fit_app = !o.keep_app;
  auto setup = convoy::sim::setup_replay(run, cv, o.c, req);
  convoy::tools::progress_line progress("convoy-sim: ");
  report_progress(setup.check, progress, "the measured run: ");
  const auto check = convoy::sim::run(setup.check);
  progress.clear();
  convoy::sim::print_table(std::cout, setup.check, check);
  convoy::sim::print_replay(std::cout, run, cv, setup, check);
  nlohmann::json j = nlohmann::json::parse(convoy::sim::to_json_text(setup.check, check, 0));
  j["replay"] = nlohmann::json::parse(convoy::sim::replay_json_text(run, cv, setup, check));
  if (setup.scaled) {
    report_progress(*setup.scaled, progress, "the scaled run: ");
    const auto scaled = convoy::sim::run(*setup.scaled);
    progress.clear();
    std::cout << "# scaled: the run's per-rank traffic pattern at " << scaled.ranks << " ranks\n";
    convoy::sim::print_table(std::cout, *setup.scaled, scaled);
    j["scaled"] = nlohmann::json::parse(convoy::sim::to_json_text(*setup.scaled, scaled, 0));
  }
  // The process's peak, after every run: the text's figure, in the document and in its
  // scaled run's.
  const long peak = peak_rss_kib();
  std::cout << "peak_rss_kib " << peak << "\n";
  j["peak_rss_kib"] = peak;
  if (j.contains("scaled")) j["scaled"]["peak_rss_kib"] = peak;
  if (!o.json_file.empty()) {
    std::ofstream out(o.json_file);
    out << j.dump(2) << "\n";
    if (!out) throw convoy::error("cannot write --json file '" + o.json_file + "'");
  }
  return 0;
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

// Errors are reported and turned into exit codes below; CLI11 throws while the options are
// declared only for a mistake in this table.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  cli o;
  CLI::App app{
      "convoy-sim: the convoy engines for P virtual ranks over a simulated network with a "
      "cost model (no MPI)",
      "convoy-sim"};
  add_options(app, o);
  if (const int code = convoy::tools::parse_command_line(app, argc, argv); code >= 0) return code;
  try {
    finish(app, o);
    if (!o.write_model.empty()) {
      convoy::sim::save_model(o.write_model, o.c.model);
      std::cout << "wrote " << o.write_model << "\n";
      return 0;
    }
    if (!o.from_stats.empty()) return replay(app, o);
    if (o.bound) {
      const auto r = convoy::sim::bound_only(o.c);
      convoy::sim::print_table(std::cout, o.c, r);
      if (!o.json_file.empty()) {
        std::ofstream out(o.json_file);
        out << convoy::sim::to_json_text(o.c, r, peak_rss_kib());
        if (!out) throw convoy::error("cannot write --json file '" + o.json_file + "'");
      }
      return 0;
    }
    convoy::tools::progress_line progress("convoy-sim: ");
    report_progress(o.c, progress, "");
    const auto r = convoy::sim::run(o.c);
    progress.clear();
    convoy::sim::print_table(std::cout, o.c, r);
    std::cout << "peak_rss_kib " << peak_rss_kib() << "\n";
    if (!o.json_file.empty()) {
      std::ofstream out(o.json_file);
      out << convoy::sim::to_json_text(o.c, r, peak_rss_kib());
      if (!out) throw convoy::error("cannot write --json file '" + o.json_file + "'");
    }
    return 0;
  } catch (const convoy::sim::run_failure& e) {  // the run itself went wrong: exit 1
    std::cerr << "convoy-sim: run failed: " << e.what() << "\n";
    return 1;
  } catch (const convoy::error& e) {
    std::cerr << "convoy-sim: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "convoy-sim: out of memory\n";
    return 3;
  }
}
