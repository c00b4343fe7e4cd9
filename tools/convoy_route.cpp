// convoy-route: prints a route plan's hop distribution, peers, tag bytes and buffer memory
// for one rank, without MPI (router/README.md; Wesolowski et al. 2014, Table II, Maley & DeVinney
// 2019, sec. 4.3.1).
//
//   convoy-route --mesh 32x32x32 [--order 2,1,0]
//   convoy-route --tensor ORDER [--nlocal N] --ranks P
//   common: [--capacity BYTES] [--buffers K] [--rank R]
//
// Besides a readable summary it prints one script-readable line per fact:
//   hops <k> <count>, peers <stage> <n>, in_peers <stage> <n>, tag_bytes <stage> <n>,
//   memory_bytes_per_rank <n>. Bad arguments: a message on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/router/memory.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/router/route_stats.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cli_exit.hpp"

namespace {

struct usage_error {
  std::string what;
};

long long parse_int(const std::string& s, const std::string& what, long long lo, long long hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    throw usage_error{what + " '" + s + "' is not an integer"};
  }
  if (used != s.size()) throw usage_error{what + " '" + s + "' is not an integer"};
  if (v < lo || v > hi)
    throw usage_error{what + " " + s + " is outside " + std::to_string(lo) + ".." +
                      std::to_string(hi)};
  return v;
}

// "2,1,0" -> {2, 1, 0}, every entry an integer >= lo.
std::vector<int> parse_list(const std::string& s, const std::string& what, int lo) {
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(',', start);
    out.push_back(static_cast<int>(
        parse_int(s.substr(start, end - start), what, lo, std::numeric_limits<int>::max())));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

struct options {
  std::string mesh;
  std::string order;
  int tensor = 0;
  int n_local = 1;
  long long ranks = -1;
  std::size_t buffer_bytes = 8192;
  int n_buffers = 2;
  long long rank = 0;
};

void add_options(CLI::App& app, options& o) {
  app.add_option("--mesh", o.mesh, "Cartesian mesh AxBx... (its ranks are its cells)")
      ->type_name("SHAPE");
  app.add_option("--order", o.order, "dimension order of the route, e.g. 2,1,0 (--mesh)")
      ->type_name("LIST");
  app.add_option("--tensor", o.tensor, "bale's tensor route of this order")
      ->check(CLI::Range(1, 3));
  app.add_option("--nlocal", o.n_local, "local group of --tensor 2 and 3")
      ->check(CLI::Range(1, std::numeric_limits<int>::max()));
  app.add_option("--ranks", o.ranks, "ranks of --tensor")
      ->check(CLI::Range(1LL, static_cast<long long>(std::numeric_limits<int>::max())));
  app.add_option("--capacity", o.buffer_bytes, "bytes per buffer (default 8192)")
      ->check(CLI::Range(std::size_t{1},
                         static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())));
  app.add_option("--buffers", o.n_buffers, "buffers per link (default 2)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--rank", o.rank, "the rank whose routes are shown (default 0)")
      ->check(CLI::Range(0LL, static_cast<long long>(std::numeric_limits<int>::max())));
}

// What CLI11 cannot say per option: which options go together.
void check(const CLI::App& app, const options& o) {
  const bool have_nlocal = app.count("--nlocal") > 0;
  if (o.mesh.empty() == (o.tensor == 0))
    throw usage_error{"give exactly one of --mesh or --tensor"};
  if (!o.mesh.empty() && (o.ranks >= 0 || have_nlocal))
    throw usage_error{"--ranks and --nlocal belong to --tensor; a mesh's ranks are its cells"};
  if (o.tensor != 0 && o.ranks < 0) throw usage_error{"--tensor needs --ranks P"};
  if (o.tensor > 1 && !have_nlocal) throw usage_error{"--tensor 2 and 3 need --nlocal N"};
  if (o.tensor != 0 && !o.order.empty()) throw usage_error{"--order belongs to --mesh"};
}

std::unique_ptr<convoy::router::route_plan> make_plan(const options& o) {
  if (o.tensor != 0)
    return convoy::router::make_tensor_plan(o.tensor, static_cast<int>(o.ranks), o.n_local);
  convoy::base::mesh_spec spec;
  try {
    spec = convoy::base::parse_mesh_spec(o.mesh);  // BASE-3's grammar, its messages
  } catch (const convoy::error& e) {
    throw usage_error{std::string("--mesh: ") + e.what()};
  }
  if (spec.form != convoy::base::mesh_spec::kind::cartesian)
    throw usage_error{"--mesh " + o.mesh +
                      ": convoy-route takes a shape such as 32x32x32 (auto and machine "
                      "levels need the machine: convoy-topo --mesh)"};
  const std::vector<int>& shape = spec.shape;
  std::int64_t cells = 1;
  for (int s : shape) {
    cells *= s;
    if (cells > (std::int64_t{1} << 28)) throw usage_error{"--mesh " + o.mesh + " is too large"};
  }
  const auto m = convoy::topology::mesh::cartesian(shape);
  std::vector<int> order;
  if (!o.order.empty()) order = parse_list(o.order, "--order dimension", 0);
  return convoy::router::make_mesh_plan(m, order);
}

}  // namespace

// Errors are reported and turned into exit codes below; CLI11 throws while the options are
// declared only for a mistake in this table.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  options o;
  CLI::App app{
      "convoy-route: a route plan's hops, peers, tag bytes and buffer memory for one "
      "rank (no MPI)",
      "convoy-route"};
  add_options(app, o);
  if (const int code = convoy::tools::parse_command_line(app, argc, argv); code >= 0) return code;
  try {
    check(app, o);
    const auto plan = make_plan(o);
    if (o.rank >= plan->n_ranks())
      throw usage_error{"--rank " + std::to_string(o.rank) + " is outside 0.." +
                        std::to_string(plan->n_ranks() - 1)};
    const int rank = static_cast<int>(o.rank);

    std::cout << "plan " << plan->name() << "\n"
              << "ranks " << plan->n_ranks() << "\n"
              << "stages " << plan->n_stages() << "\n"
              << "max_hops " << plan->max_hops() << "\n"
              << "rank " << rank << "\n";
    std::cout << "# stage  name        out_peers  in_peers  tag_bytes\n";
    std::vector<std::size_t> outs, ins;
    for (int s = 0; s < plan->n_stages(); ++s) {
      outs.push_back(plan->out_peers(rank, s).size());
      ins.push_back(plan->in_peers(rank, s).size());
      std::printf("# %5d  %-10s  %9zu  %8zu  %9d\n", s, plan->stage_name(s).c_str(), outs.back(),
                  ins.back(), plan->tag_bytes(s));
    }
    const auto counts = convoy::router::hop_histogram(*plan, rank);
    std::cout << "# destinations reached from rank " << rank
              << " in k hops (Wesolowski et al. 2014, Table II)\n";
    double total = 0, weighted = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      std::cout << "hops " << k << " " << counts[k] << "\n";
      total += static_cast<double>(counts[k]);
      weighted += static_cast<double>(k) * static_cast<double>(counts[k]);
    }
    std::printf("# mean hops %.4f\n", weighted / total);
    for (int s = 0; s < plan->n_stages(); ++s)
      std::cout << "peers " << s << " " << outs[static_cast<std::size_t>(s)] << "\n";
    for (int s = 0; s < plan->n_stages(); ++s)
      std::cout << "in_peers " << s << " " << ins[static_cast<std::size_t>(s)] << "\n";
    for (int s = 0; s < plan->n_stages(); ++s)
      std::cout << "tag_bytes " << s << " " << plan->tag_bytes(s) << "\n";
    std::cout << "# memory = sum over stages (out + in peers) x " << o.n_buffers << " buffers x "
              << o.buffer_bytes << " bytes\n";
    std::cout << "memory_bytes_per_rank "
              << convoy::router::link_buffer_bytes(*plan, rank, o.buffer_bytes, o.n_buffers)
              << "\n";
    return 0;
  } catch (const usage_error& e) {
    std::cerr << "convoy-route: " << e.what << " (--help lists the options)\n";
    return 2;
  } catch (const convoy::error& e) {
    std::cerr << "convoy-route: " << e.what() << "\n";
    return 2;
  }
}
