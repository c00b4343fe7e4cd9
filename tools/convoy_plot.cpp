// convoy-plot: draws the benchmark programs' JSON results (--json FILE) as a PNG with
// gnuplot (bench/README.md, "Output"): one panel per kernel, items/s per rank (or injection
// bandwidth per node) against item size, one line per conveyor kind, in the manner of
// Maley & DeVinney 2019, Figures 5-7. Several files (convoy and another library, or several network
// configurations) may be given; lines are then labelled by library and configuration.
// The x axis shows key skews (--skew) when the data hold several; else item sizes when they
// hold several; else network configurations (bench/compare's files) when they hold several;
// else one bar per kind and library. --speedup BASE draws each kind's items/s divided by
// BASE's in the same configuration, item size and skew (bench/README.md, "Combining").
//
//   convoy-plot [-m items|bw] [-k KERNEL,...] [-i IMPL] [-t TITLE] [--speedup BASE] -o out.png
//   FILE...
//
//   convoy-plot --timeline DIR [--conveyor N] [-o out.png]
//
// --timeline draws the trace files CONVOY_TRACE wrote instead (timeline.hpp). Only verified
// rows count; of repeated configurations the last one read wins. The data go
// to gnuplot inline ($data blocks); --script FILE writes the gnuplot script instead of
// running gnuplot.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_rows.hpp"
#include "cli_checks.hpp"
#include "cli_exit.hpp"
#include "first_seen.hpp"
#include "timeline.hpp"

namespace cb = convoy::bench;

namespace {

using convoy::tools::add_once;

struct options {
  std::string metric = "items";
  std::vector<std::string> kernels;
  std::string impl;
  std::string title;
  std::string output;
  std::string script;
  std::vector<std::string> files;
  std::string timeline;
  int conveyor = -1;
  std::string speedup;  // a kind: values become ratios to it
};

// One verified measurement.
struct point {
  std::string kernel, impl, config, kind;
  std::size_t bytes = 0;
  double skew = 0;
  double value = 0;
};

// What the x axis shows: key skews when the data have several; item sizes (Maley & DeVinney
// 2019, Figures 5-7) when they have several; else network configurations when they have
// several; else the kinds themselves (bars).
enum class axis { skews, sizes, configs, kinds };

struct plot_data {
  std::vector<point> points;  // in reading order; a repeated configuration replaces the older
  std::vector<std::string> kernels, impls, configs, kinds;
  std::set<std::size_t> sizes;
  std::set<double> skews;
  int ranks = 0;
  axis x = axis::kinds;
};

// gnuplot single-quoted string: a quote is written twice.
std::string gp_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c == '\n' ? ' ' : c;
  }
  return out + "'";
}

plot_data collect(const options& o) {
  plot_data d;
  for (const auto& file : o.files) {
    const cb::run_results run = cb::read_results_file(file);
    const std::string config = cb::configuration_label(run.context);
    for (const auto& r : run.rows) {
      if (!r.verified || !r.error.empty()) continue;
      if (!o.kernels.empty() &&
          std::find(o.kernels.begin(), o.kernels.end(), r.kernel) == o.kernels.end())
        continue;
      if (!o.impl.empty() && r.impl != o.impl) continue;
      point p{r.kernel,
              r.impl,
              config,
              r.kind,
              r.item_bytes,
              r.skew,
              o.metric == "bw" ? r.node_bw_bytes_per_s / 1e9 : r.items_per_s_per_rank / 1e6};
      std::erase_if(d.points, [&](const point& q) {
        return q.kernel == p.kernel && q.impl == p.impl && q.config == p.config &&
               q.kind == p.kind && q.bytes == p.bytes && q.skew == p.skew;
      });
      d.points.push_back(p);
      add_once(d.kernels, p.kernel);
      add_once(d.impls, p.impl);
      add_once(d.configs, p.config);
      add_once(d.kinds, p.kind);
      d.sizes.insert(p.bytes);
      d.skews.insert(p.skew);
      if (d.ranks == 0) d.ranks = r.ranks;
    }
  }
  // Configurations by rank count ("np2" < "np4 2x2 ..." < "np8 ..."), then by name.
  auto ranks_of = [](const std::string& c) { return std::atoi(c.c_str() + 2); };
  std::stable_sort(d.configs.begin(), d.configs.end(), [&](const auto& a, const auto& b) {
    return ranks_of(a) != ranks_of(b) ? ranks_of(a) < ranks_of(b) : a < b;
  });
  d.x = d.skews.size() > 1     ? axis::skews
        : d.sizes.size() > 1   ? axis::sizes
        : d.configs.size() > 1 ? axis::configs
                               : axis::kinds;
  return d;
}

// --speedup BASE: every other kind's value divided by BASE's at the same kernel, library,
// configuration, item size and skew; points without a BASE measurement are dropped.
// @throws std::runtime_error when BASE is not among the kinds or nothing else is.
void to_speedups(plot_data& d, const std::string& base) {
  if (std::find(d.kinds.begin(), d.kinds.end(), base) == d.kinds.end())
    throw std::runtime_error("--speedup: no verified results of kind '" + base + "'");
  std::vector<point> ratios;
  for (const auto& p : d.points) {
    if (p.kind == base) continue;
    for (const auto& b : d.points)
      if (b.kind == base && b.kernel == p.kernel && b.impl == p.impl && b.config == p.config &&
          b.bytes == p.bytes && b.skew == p.skew && b.value > 0) {
        point r = p;
        r.value = p.value / b.value;
        ratios.push_back(r);
      }
  }
  if (ratios.empty())
    throw std::runtime_error("--speedup: no other kind was measured beside '" + base +
                             "' in the same configuration, item size and skew");
  d.points = std::move(ratios);
  std::erase(d.kinds, base);
}

const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                              "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#000000", "#393b79",
                              "#637939", "#843c39", "#7b4173", "#3182bd"};

// Line style of a series: baselines dashed, conveyors solid (Maley & DeVinney 2019: one style per
// family); a second library dotted, so that equal kind names stay apart.
std::string style(const plot_data& d, const std::string& impl, const std::string& kind, int idx) {
  int dt = kind == "naive" || kind == "alltoallv" ? 2 : 1;
  if (impl != d.impls.front()) dt = 3;
  return "with linespoints lw 2 lc rgb '" + std::string(colors[idx % 16]) + "' pt " +
         std::to_string(idx % 12 + 1) + " dt " + std::to_string(dt);
}

// Whether the x axis runs along a measured quantity (a line per configuration) rather than
// across configurations.
bool along(axis x) { return x == axis::skews || x == axis::sizes; }

// A point's x coordinate.
double x_of(const plot_data& d, const point& p) {
  switch (d.x) {
    case axis::skews:
      return p.skew;
    case axis::sizes:
      return static_cast<double>(p.bytes);
    default:
      return static_cast<double>(std::find(d.configs.begin(), d.configs.end(), p.config) -
                                 d.configs.begin());
  }
}

// One panel with x = skew, item size or configuration: a line per (impl, [config,] kind).
void line_panel(std::ostringstream& g, const plot_data& d, const std::string& kernel, int& block) {
  std::vector<std::tuple<std::string, std::string, std::string>> series;  // impl, config, kind
  for (const auto& p : d.points)
    if (p.kernel == kernel)
      add_once(series, {p.impl, along(d.x) ? p.config : std::string(), p.kind});
  std::vector<std::string> plots;
  int idx = 0;
  for (const auto& [impl, config, kind] : series) {
    std::map<double, double> xy;  // sorted along x, so that the line runs left to right
    for (const auto& p : d.points)
      if (p.kernel == kernel && p.impl == impl && p.kind == kind &&
          (!along(d.x) || p.config == config))
        xy[x_of(d, p)] = p.value;
    g << "$d" << block << " << EOD\n";
    for (const auto& [x, y] : xy) g << x << ' ' << y << '\n';
    g << "EOD\n";
    std::string label = kind;
    if (along(d.x) && d.configs.size() > 1) label.insert(0, " ").insert(0, config);
    if (d.impls.size() > 1) label.insert(0, " ").insert(0, impl);
    std::string plot = "$d";
    plot += std::to_string(block++);
    plot += " using 1:2 ";
    plot += style(d, impl, kind, idx++);
    plot += " title ";
    plot += gp_string(label);
    plots.push_back(std::move(plot));
  }
  g << "set title " << gp_string(kernel) << "\nplot ";
  for (std::size_t i = 0; i < plots.size(); ++i) g << (i ? ", \\\n     " : "") << plots[i];
  g << "\n";
}

// One panel with x = kind: a bar per library, clustered by kind.
void bar_panel(std::ostringstream& g, const plot_data& d, const std::string& kernel, int& block) {
  g << "$d" << block << " << EOD\n";
  for (const auto& kind : d.kinds) {
    std::string label = kind;  // a data column in double quotes
    std::erase(label, '"');
    g << '"' << label << '"';
    for (const auto& impl : d.impls) {
      double v = std::nan("");
      for (const auto& p : d.points)
        if (p.kernel == kernel && p.impl == impl && p.kind == kind) v = p.value;
      g << ' ' << v;
    }
    g << '\n';
  }
  g << "EOD\nset title " << gp_string(kernel) << "\nplot ";
  for (std::size_t i = 0; i < d.impls.size(); ++i)
    g << (i ? ", " : "") << "$d" << block << " using " << i + 2 << (i ? "" : ":xtic(1)")
      << " lc rgb '" << colors[i % 16] << "' title " << gp_string(d.impls[i]);
  g << "\n";
  ++block;
}

// What a kernel's items and sizes are (bench/README.md): the key exchange pushes 8-byte keys
// and its size is the average bucket.
struct axis_words {
  const char* items;
  const char* size;
};
axis_words words_of(const std::string& kernel) {
  if (kernel == "key_exchange") return {"keys", "average bucket size (bytes)"};
  return {"items", "item size (bytes)"};
}

// The axis labels of one kernel's panel (multiplot keeps them for the next panel).
void panel_labels(std::ostringstream& g, const options& o, const plot_data& d,
                  const std::string& kernel) {
  const axis_words w = words_of(kernel);
  const std::string measure = o.metric == "bw" ? std::string("injection bandwidth per node")
                                               : std::string(w.items) + "/s per rank";
  g << "set ylabel "
    << gp_string(!o.speedup.empty() ? measure + ", ratio to " + o.speedup
                 : o.metric == "bw" ? measure + " (GB/s)"
                                    : "million " + measure)
    << "\n";
  if (d.x == axis::sizes) g << "set xlabel " << gp_string(w.size) << "\n";
  if (d.x == axis::skews) g << "set xlabel 'key skew (Zipf exponent; 0: uniform)'\n";
}

// "convoy benchmarks", the configuration when there is one, the item size when there is one.
std::string default_title(const plot_data& d) {
  std::string t = "convoy benchmarks";
  if (d.configs.size() == 1) t += ", " + d.configs.front();
  if (d.sizes.size() == 1) t += ", " + std::to_string(*d.sizes.begin()) + "-byte items";
  return t;
}

std::string script(const options& o, const plot_data& d) {
  std::ostringstream g;
  const int n = static_cast<int>(d.kernels.size());
  const int cols = std::min(n, 2), rows = (n + cols - 1) / cols;
  const std::string title = !o.title.empty() ? o.title : default_title(d);
  // noenhanced: names such as key_exchange are text, not subscripts.
  g << "set terminal pngcairo noenhanced size " << 640 * cols << "," << 460 * rows
    << " font 'sans,10'\n"
    << "set output " << gp_string(o.output) << "\n"
    << "set multiplot layout " << rows << "," << cols << " title " << gp_string(title) << "\n"
    << "set yrange [0:*]\nset key outside right top vertical font ',8'\nset grid ytics\n";
  if (!o.speedup.empty())  // the break-even line
    g << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#7f7f7f'\n";
  if (d.x == axis::skews) {
    g << "set xrange [" << *d.skews.begin() - 0.1 << ":" << *d.skews.rbegin() + 0.1 << "]\n";
  } else if (d.x == axis::sizes) {
    g << "set logscale x 2\nset xtics (";
    for (auto it = d.sizes.begin(); it != d.sizes.end(); ++it)
      g << (it == d.sizes.begin() ? "" : ",") << *it;
    g << ")\nset xrange [" << static_cast<double>(*d.sizes.begin()) * 0.75 << ":"
      << static_cast<double>(*d.sizes.rbegin()) * 1.4 << "]\n";
  } else if (d.x == axis::configs) {
    g << "set xtics (";
    for (std::size_t i = 0; i < d.configs.size(); ++i)
      g << (i ? ", " : "") << gp_string(d.configs[i]) << ' ' << i;
    g << ") rotate by -20\nset xrange [-0.5:" << static_cast<double>(d.configs.size()) - 0.5
      << "]\nset xlabel 'configuration'\n";
  } else {
    g << "set style data histograms\nset style histogram clustered gap 1\n"
      << "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset xtics rotate by -30\n"
      << "set xlabel 'kind'\n";
  }
  int block = 0;
  for (const auto& k : d.kernels) {
    panel_labels(g, o, d, k);
    if (d.x == axis::kinds)
      bar_panel(g, d, k, block);
    else
      line_panel(g, d, k, block);
  }
  g << "unset multiplot\n";
  return g.str();
}

}  // namespace

// CLI11 throws while the options are declared only for a mistake in this table.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  options o;
  CLI::App app{"convoy-plot: PNG of benchmark JSON results (bench --json FILE) with gnuplot",
               "convoy-plot"};
  app.add_option("-m,--metric", o.metric, "items: million items/s per rank; bw: GB/s per node")
      ->check(CLI::IsMember({"items", "bw"}));
  app.add_option("-k,--kernels", o.kernels, "only these kernels (comma separated)")->delimiter(',');
  app.add_option("-i,--impl", o.impl, "only this library (impl=)");
  app.add_option("-t,--title", o.title, "title of the figure");
  // --timeline reads a directory instead of files and has a default output. Known before
  // parsing, so that CLI11 keeps the last argument for the files (a required positional)
  // after a list option such as -k.
  const bool timeline = std::any_of(argv + 1, argv + argc, [](const char* a) {
    return std::string_view(a).starts_with("--timeline");
  });
  app.add_option("-o,--output", o.output,
                 "the PNG to write; needed unless --timeline (default DIR/convoy-trace.N.png)")
      ->check(convoy::tools::writable_file());
  app.add_option("--script", o.script, "write the gnuplot script here instead of running gnuplot")
      ->check(convoy::tools::writable_file());
  app.add_option("--timeline", o.timeline,
                 "draw the per-link timeline of the trace files in this directory (CONVOY_TRACE) "
                 "and merge them into DIR/convoy-trace.N.json")
      ->check(CLI::ExistingDirectory);
  app.add_option("--speedup", o.speedup,
                 "draw each kind's value divided by this kind's in the same configuration, item "
                 "size and skew");
  app.add_option("--conveyor", o.conveyor, "with --timeline: conveyor N (default: the last)")
      ->check(convoy::tools::non_negative_integer);
  auto* files =
      app.add_option("files", o.files, "JSON files written by the benchmark programs (--json)")
          ->check(CLI::ExistingFile);
  if (!timeline) files->required();
  if (const int code = convoy::tools::parse_command_line(app, argc, argv); code >= 0) return code;
  if (o.timeline.empty() && o.output.empty()) {  // as CLI11 says a missing option
    std::fprintf(stderr, "convoy-plot: --output is required (--help lists the options)\n");
    return 2;
  }
  if (!o.timeline.empty())
    return convoy::tools::draw_timeline({o.timeline, o.conveyor, o.output, o.script, o.title});
  try {
    plot_data d = collect(o);
    if (d.kernels.empty()) {
      const bool filtered = !o.kernels.empty() || !o.impl.empty();
      std::cerr << "convoy-plot: " << (filtered ? "--kernels/--impl: " : "")
                << "no verified results in the input" << (filtered ? " match them" : "") << "\n";
      return filtered ? 2 : 1;
    }
    if (!o.speedup.empty()) to_speedups(d, o.speedup);
    const std::string text = script(o, d);
    if (!o.script.empty()) {
      std::ofstream(o.script) << text;
      return 0;
    }
    if (!convoy::tools::run_gnuplot(text)) return 1;
    std::cout << "convoy-plot: wrote " << o.output << " (" << d.kernels.size()
              << " kernel panel(s), metric " << o.metric << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "convoy-plot: " << e.what() << "\n";
    return 2;
  }
}
