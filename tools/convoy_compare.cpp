// convoy-compare: one table of the benchmark programs' JSON results, convoy beside another
// convey.h library (bench/README.md "Comparing with another convey.h library"; bench/compare
// runs the programs and calls this).
//
//   convoy-compare [--by impl|mpi] [--base NAME] [--impl NAME] [--sizes 8] FILE...
//
// Rows: network configuration (from each file's context: ranks, emulated nodes,
// transport), kernel, kind, item size; columns: million items/s per rank of every library
// (impl=), then base/other for each other library. After each (configuration, kernel) a
// "best" row compares each library's fastest kind. Unverified rows show as "fail".
// With --by mpi the columns are the MPI libraries the runs were made with (the context's
// `mpi`, e.g. "MPICH 4.0.2" and "Open MPI 4.1.4"), of one library's rows (--impl, convoy
// unless given).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "bench_rows.hpp"
#include "cli_exit.hpp"
#include "first_seen.hpp"

namespace cb = convoy::bench;

namespace {

using convoy::tools::add_once;

struct cell {
  double rate = 0;  ///< items/s per rank
  bool ok = false;
};

struct table {
  std::vector<std::string> impls;    // base first
  bool has_base = false;             // some row is of the base library
  std::vector<std::string> configs;  // in order of first appearance
  // (config, kernel, item bytes) -> kinds in order of first appearance
  std::map<std::tuple<std::string, std::string, std::size_t>, std::vector<std::string>> kinds;
  std::vector<std::tuple<std::string, std::string, std::size_t>> groups;
  // (config, kernel, bytes, kind, impl) -> cell
  std::map<std::tuple<std::string, std::string, std::size_t, std::string, std::string>, cell> cells;
};

/// What the columns are and which rows count (the command line).
struct selection {
  bool by_mpi = false;             ///< columns by MPI library instead of by convey.h library
  std::string base;                ///< the numerator's column ("" with --by mpi: the first file's)
  std::string impl;                ///< only this library's rows ("": every library's)
  std::vector<std::size_t> sizes;  ///< only these item sizes (empty: all)
};

table collect(const std::vector<std::string>& files, const selection& sel) {
  table t;
  if (!sel.base.empty()) t.impls.push_back(sel.base);
  for (const auto& f : files) {
    const cb::run_results run = cb::read_results_file(f);
    const std::string config = cb::configuration_label(run.context);
    const std::string mpi = cb::mpi_label(run.context.mpi);
    for (const auto& r : run.rows) {
      const auto& sizes = sel.sizes;
      if (!sizes.empty() && std::find(sizes.begin(), sizes.end(), r.item_bytes) == sizes.end())
        continue;
      if (!sel.impl.empty() && r.impl != sel.impl) continue;
      const std::string& column = sel.by_mpi ? mpi : r.impl;
      add_once(t.impls, column);
      t.has_base = t.has_base || column == t.impls.front();
      add_once(t.configs, config);
      const auto group = std::make_tuple(config, r.kernel, r.item_bytes);
      add_once(t.groups, group);
      add_once(t.kinds[group], r.kind);
      t.cells[{config, r.kernel, r.item_bytes, r.kind, column}] = {r.items_per_s_per_rank,
                                                                   r.verified && r.error.empty()};
    }
  }
  // Groups by configuration first (files may come in any order).
  std::stable_sort(t.groups.begin(), t.groups.end(), [&](const auto& a, const auto& b) {
    const auto ia = std::find(t.configs.begin(), t.configs.end(), std::get<0>(a));
    const auto ib = std::find(t.configs.begin(), t.configs.end(), std::get<0>(b));
    return ia < ib;
  });
  return t;
}

std::string number(const cell* c) {
  if (!c) return "-";
  if (!c->ok) return "fail";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", c->rate / 1e6);
  return buf;
}

std::string ratio(const cell* a, const cell* b) {
  if (!a || !b || !a->ok || !b->ok || b->rate <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", a->rate / b->rate);
  return buf;
}

void print(const table& t) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> head{"configuration", "kernel", "bytes", "kind"};
  for (const auto& i : t.impls) head.push_back(i + " M/s");
  for (std::size_t i = 1; i < t.impls.size(); ++i) head.push_back(t.impls[0] + "/" + t.impls[i]);
  out.push_back(head);
  for (const auto& g : t.groups) {
    const auto& [config, kernel, bytes] = g;
    std::vector<cell> best(t.impls.size());
    std::vector<std::string> best_kind(t.impls.size(), "-");
    for (const auto& kind : t.kinds.at(g)) {
      std::vector<std::string> line{config, kernel, std::to_string(bytes), kind};
      std::vector<const cell*> cs;
      for (std::size_t i = 0; i < t.impls.size(); ++i) {
        auto it = t.cells.find({config, kernel, bytes, kind, t.impls[i]});
        const cell* c = it == t.cells.end() ? nullptr : &it->second;
        cs.push_back(c);
        line.push_back(number(c));
        // Baselines are the same code in every build: not a library's best.
        if (c && c->ok && kind != "alltoallv" && kind != "naive" && c->rate > best[i].rate) {
          best[i] = *c;
          best_kind[i] = kind;
        }
      }
      for (std::size_t i = 1; i < t.impls.size(); ++i) line.push_back(ratio(cs[0], cs[i]));
      out.push_back(std::move(line));
    }
    if (t.impls.size() > 1) {
      std::vector<std::string> line{config, kernel, std::to_string(bytes), "best"};
      for (std::size_t i = 0; i < t.impls.size(); ++i)
        line.push_back(best[i].ok ? number(&best[i]) + " (" + best_kind[i] + ")" : "-");
      for (std::size_t i = 1; i < t.impls.size(); ++i)
        line.push_back(best[0].ok && best[i].ok ? ratio(&best[0], &best[i]) : "-");
      out.push_back(std::move(line));
    }
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& l : out)
    for (std::size_t c = 0; c < l.size(); ++c) width[c] = std::max(width[c], l[c].size());
  for (const auto& l : out) {
    std::string s;
    for (std::size_t c = 0; c < l.size(); ++c) {
      const std::string pad(width[c] - l[c].size(), ' ');
      s += c < 4 ? l[c] + pad : pad + l[c];  // text left, numbers right
      if (c + 1 < l.size()) s += "  ";
    }
    std::cout << s << '\n';
  }
}

}  // namespace

// CLI11 throws while the options are declared only for a mistake in this table.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  selection sel;
  std::string by = "impl";
  std::vector<std::string> files;
  CLI::App app{
      "convoy-compare: one table of benchmark JSON results (bench --json FILE): "
      "items/s per rank of each library and their ratios",
      "convoy-compare"};
  app.add_option("--by", by,
                 "columns by convey.h library (impl, default) or by the MPI library the runs "
                 "were made with (mpi)")
      ->check(CLI::IsMember({"impl", "mpi"}));
  app.add_option("--base", sel.base,
                 "the column in the numerator of the ratios (default convoy; with --by mpi the "
                 "first file's MPI, e.g. \"MPICH 4.0.2\")");
  app.add_option("--impl", sel.impl,
                 "only the rows of this library (default all; with --by mpi convoy)");
  app.add_option("--sizes", sel.sizes, "only these item sizes (comma separated)")->delimiter(',');
  app.add_option("files", files, "JSON files written by the benchmark programs (--json)")
      ->required()
      ->check(CLI::ExistingFile);
  if (const int code = convoy::tools::parse_command_line(app, argc, argv); code >= 0) return code;
  sel.by_mpi = by == "mpi";
  if (sel.by_mpi && sel.impl.empty()) sel.impl = "convoy";
  if (!sel.by_mpi && sel.base.empty()) sel.base = "convoy";
  try {
    const table t = collect(files, sel);
    if (t.groups.empty()) {
      std::string given = sel.sizes.empty() ? "" : "--sizes";
      if (!sel.impl.empty()) given += (given.empty() ? "" : " and ") + std::string("--impl");
      std::cerr << "convoy-compare: no results in the input"
                << (given.empty() ? "" : " of the " + given + " given") << "\n";
      return given.empty() ? 1 : 2;
    }
    if (!t.has_base) {  // the options name something the input does not hold
      std::string known;
      for (std::size_t i = 1; i < t.impls.size(); ++i) known += (i > 1 ? ", " : "") + t.impls[i];
      std::cerr << "convoy-compare: --base: no results of '" << sel.base
                << "' in the input (it has " << known << ")\n";
      return 2;
    }
    print(t);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "convoy-compare: " << e.what() << "\n";
    return 2;
  }
}
