#pragma once
/// @file
/// convoy-tune's search (Wesolowski et al. 2014, sec. V.E; see convoy_tune.cpp): what the
/// command line asks for, the measurements through bench-histogram, coordinate descent
/// over the C++ API's buffer size, buffers per link and mesh shape and over the convey.h
/// kinds, and the tuning file's text.
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "cli_checks.hpp"

namespace convoy::tools::tune {

struct options {
  std::string launcher;
  int ranks = 0;
  std::string items = "2e6";
  int reps = 3;
  int item_bytes = 8;
  std::vector<std::size_t> capacities{4096, 8192, 16384, 32768, 65536, 131072, 262144};
  std::vector<int> buffers{1, 2, 4};
  std::vector<std::string> meshes;
  std::vector<std::string> kinds{"simple", "tensor1", "tensor2", "tensor3"};
  std::string bench;
  std::string output;
  bool dry_run = false;
};

class tuner {
 public:
  tuner(const options& o, std::vector<std::string> base, std::string log, int planned)
      : o_(o), base_(std::move(base)), log_(std::move(log)), planned_(planned) {}

  // Rates (items/s per rank) of `kinds` (comma separated) under `args`; 0 for a failed or
  // unverified kind. Each (kind, args) is measured once.
  std::map<std::string, double> measure(const std::string& kinds,
                                        const std::vector<std::string>& args);

 private:
  // "run N of at most M": the run under way or last made.
  [[nodiscard]] std::string which_run() const;
  // which_run() and "; at most about T left", from the mean time of the runs so far.
  [[nodiscard]] std::string what_remains() const;

  const options& o_;
  std::vector<std::string> base_;
  std::string log_;
  std::map<std::string, double> seen_;  // "kind args" -> rate
  int planned_;                         // runs of the whole search, before repeats are skipped
  int runs_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  convoy::tools::progress_line progress_{"convoy-tune: "};
};

/// Runs of the search below at most (a repeated (kind, arguments) is measured once).
int planned_runs(const options& o, std::size_t n_meshes);

struct best {
  double rate = 0;
  std::size_t capacity = 16384;
  int buffers = 2;
  std::string mesh = "auto";
};

/// The C++ API (kind mesh): buffer size, buffers per link, mesh shape over `meshes`, then
/// buffer size again around the winner.
best tune_mesh(tuner& t, const options& o, const std::vector<std::string>& meshes);
/// Every convey.h kind over buffer sizes, then the tensor kinds over buffers per link; the
/// kinds that ran, with their best.
std::map<std::string, best> tune_kinds(tuner& t, const options& o);
/// The tuning file: the C++ API's choice, the fastest convey.h kind and each kind's best.
std::string tuning_text(const options& o, const best& m, const std::map<std::string, best>& kinds);

}  // namespace convoy::tools::tune
