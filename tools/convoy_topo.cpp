// convoy-topo: prints the machine convoy discovers and the virtual mesh it lays on it.
//
//   mpirun -np 8 convoy-topo [--json] [--mesh SPEC] [--settings]
//
// Collective over MPI_COMM_WORLD; only rank 0 prints. Bad arguments, settings or specs:
// one message on rank 0's stderr and exit code 2 on every rank (topology/README.md
// invariant 4), never a hang.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy/topology/mesh.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "cli_exit.hpp"
#include "topo_report.hpp"

namespace topo = convoy::topology;

namespace {

struct options {
  bool json = false;
  bool settings_only = false;
  std::optional<std::string> mesh;
};

void add_options(CLI::App& app, options& o) {
  app.add_flag("--json", o.json, "one JSON document on rank 0's stdout instead of tables");
  app.add_option("--mesh", o.mesh,
                 "mesh spec (auto | 8x4x2 | node,socket,core ...), overrides CONVOY_MESH")
      ->type_name("SPEC");
  app.add_flag("--settings", o.settings_only, "print every CONVOY_*/CONVEY_* setting and exit");
}

int run(MPI_Comm comm, const options& o) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Every step either succeeds on every rank or throws the same error on every rank.
  convoy::base::settings s = convoy::base::settings::from_env(comm);
  if (o.settings_only) {
    if (rank == 0) std::cout << s.describe();
    return 0;
  }
  if (o.mesh) s.mesh = *o.mesh;
  const std::string spec_text = s.mesh.value_or("auto");
  const convoy::base::mesh_spec spec =
      convoy::base::agree(comm, [&] { return convoy::base::parse_mesh_spec(spec_text); });
  const topo::machine m = topo::discover(comm, s);
  const topo::mesh g = convoy::base::agree(comm, [&] { return topo::build_mesh(m, spec); });
  if (rank == 0)
    std::cout << (o.json ? convoy::tools::json_report(m, g, convoy::base::to_string(spec))
                         : convoy::tools::text_report(m, g, convoy::base::to_string(spec)));
  std::cout.flush();
  return 0;
}

}  // namespace

// Errors are reported and turned into exit codes below; CLI11 throws while the options are
// declared only for a mistake in this table.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  options o;
  CLI::App app{
      "convoy-topo: the machine convoy discovers and the virtual mesh it lays on it "
      "(collective; rank 0 prints)",
      "convoy-topo"};
  add_options(app, o);
  // The same argv on every rank: the same outcome; rank 0 speaks.
  int code = convoy::tools::parse_command_line(app, argc, argv, rank == 0);
  if (code < 0) {
    try {
      code = run(comm, o);
    } catch (const std::exception& e) {
      if (rank == 0) std::cerr << "convoy-topo: " << e.what() << "\n";
      code = 2;
    }
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return code;
}
