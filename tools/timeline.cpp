// convoy-plot --timeline (timeline.hpp): merge a conveyor's trace files, draw its timeline.
#include "timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace convoy::tools {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// rank -> its file's document, for one conveyor.
std::map<int, json> read_traces(const timeline_options& o, int& conveyor) {
  std::map<int, std::map<int, fs::path>> found;  // conveyor -> rank -> path
  for (const auto& f : fs::directory_iterator(o.dir)) {
    const std::string base = f.path().filename().string();
    int c = 0, r = 0, end = 0;
    // An empty file is an index reserved by an engine that was never freed.
    if (std::sscanf(base.c_str(), "convoy-trace.%d.%d.json%n", &c, &r, &end) == 2 &&
        end == static_cast<int>(base.size()) && c >= 0 && r >= 0 && fs::file_size(f.path()) > 0)
      found[c][r] = f.path();
  }
  if (found.empty()) throw std::invalid_argument("no convoy-trace.<conveyor>.<rank>.json files");
  conveyor = o.conveyor >= 0 ? o.conveyor : found.rbegin()->first;
  if (!found.count(conveyor))
    throw std::invalid_argument("no trace files of conveyor " + std::to_string(conveyor));
  std::map<int, json> docs;
  for (const auto& [rank, path] : found[conveyor]) {
    std::ifstream in(path);
    try {
      docs[rank] = json::parse(in);
    } catch (const json::exception& e) {
      throw std::invalid_argument(path.string() + ": not a trace file: " + e.what());
    }
  }
  return docs;
}

void write_merged(const std::map<int, json>& docs, const fs::path& path) {
  json merged{{"traceEvents", json::array()}, {"displayTimeUnit", "ns"}};
  json ranks = json::array();
  for (const auto& [rank, d] : docs) {
    for (const auto& e : d.at("traceEvents")) merged["traceEvents"].push_back(e);
    ranks.push_back(d.at("otherData"));
  }
  merged["otherData"] = {{"ranks", ranks}};
  std::ofstream out(path);
  out << merged.dump() << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// gnuplot single-quoted string.
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

struct rows {
  std::ostringstream advance, stall, full, partial, last, closed, tics;
  int n = 0;
  double t_max = 0;
};

// One rank: its row (advance, stages closed) and its out-links' rows, from the top down.
void add_rank(rows& r, int rank, const json& d) {
  const int base = r.n;
  const auto& outs = d.at("otherData").at("out_links");
  const int rank_row = base;
  r.tics << (r.n ? ", " : "") << quote(std::string("rank ").append(std::to_string(rank))) << ' '
         << -rank_row;
  for (std::size_t k = 0; k < outs.size(); ++k)
    r.tics << ", "
           << quote(std::string("s")
                        .append(outs[k][0].dump())
                        .append(" \u2192 ")
                        .append(outs[k][1].dump()))
           << ' ' << -(base + 1 + static_cast<int>(k));
  r.n += 1 + static_cast<int>(outs.size());
  for (const auto& e : d.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    if (ph == "M") continue;
    const double t = e.at("ts").get<double>() / 1000.0;
    const int y = -(base + e.at("tid").get<int>());
    const std::string name = e.at("name");
    if (ph == "X") {
      const double dur = e.at("dur").get<double>() / 1000.0;
      r.t_max = std::max(r.t_max, t + dur);
      auto& out = name == "advance" ? r.advance : r.stall;
      out << t + dur / 2 << ' ' << y << ' ' << dur / 2 << '\n';
      continue;
    }
    r.t_max = std::max(r.t_max, t);
    const json& a = e.at("args");
    if (name == "send")
      (a.value("last", false)   ? r.last
       : a.value("full", false) ? r.full
                                : r.partial)
          << t << ' ' << y << '\n';
    else if (name == "stage closed")
      r.closed << t << ' ' << y << '\n';
  }
}

std::string script(const timeline_options& o, const std::map<int, json>& docs, int conveyor,
                   const std::string& png) {
  rows r;
  std::uint64_t dropped = 0;
  for (const auto& [rank, d] : docs) {
    add_rank(r, rank, d);
    dropped += d.at("otherData").value("events_dropped", std::uint64_t{0});
  }
  std::ostringstream g;
  const int height = std::max(300, 60 + 22 * r.n);
  g << "set terminal pngcairo size 1200," << height << " font ',9'\n"
    << "set output " << quote(png) << '\n'
    << "set title "
    << quote(o.title.empty()
                 ? "conveyor " + std::to_string(conveyor) + ", " + std::to_string(docs.size()) +
                       " ranks" + (dropped ? ", oldest events dropped" : "")
                 : o.title)
    << '\n'
    << "set xlabel 'time since the conveyor was made (ms, rank 0 clock)'\n"
    << "set ytics (" << r.tics.str() << ")\nset yrange [" << -r.n << ":1]\n"
    << "set xrange [0:" << r.t_max * 1.01 + 1e-3 << "]\nset grid xtics\nset key outside bottom "
    << "horizontal\nset style fill solid 1.0 noborder\n";
  auto block = [&](const char* name, const std::ostringstream& s) {
    g << '$' << name << " << EOD\n" << s.str() << "0 5 0\nEOD\n";
  };
  block("advance", r.advance);
  block("stall", r.stall);
  block("full", r.full);
  block("partial", r.partial);
  block("last", r.last);
  block("closed", r.closed);
  g << "plot $advance using 1:2:3:(0.35) with boxxyerror lc rgb '#d8d8d8' title 'advance', \\\n"
    << "  $stall using 1:2:3:(0.35) with boxxyerror lc rgb '#f4a0a0' title 'credit stall', \\\n"
    << "  $full using 1:2 with points pt 7 ps 0.6 lc rgb '#1f5fbf' title 'buffer sent, full', \\\n"
    << "  $last using 1:2 with points pt 9 ps 0.9 lc rgb '#202020' title 'last buffer', \\\n"
    << "  $partial using 1:2 with points pt 6 ps 1.0 lw 1.5 lc rgb '#e07b00' title 'sent partly "
       "filled', \\\n"
    << "  $closed using 1:2 with points pt 2 ps 1.2 lc rgb '#208020' title 'stage closed'\n";
  return g.str();
}

}  // namespace

bool run_gnuplot(const std::string& text) {
  FILE* gp = popen("gnuplot", "w");
  if (!gp) {
    std::cerr << "convoy-plot: cannot start gnuplot (apt-get install gnuplot-nox)\n";
    return false;
  }
  std::fwrite(text.data(), 1, text.size(), gp);
  if (pclose(gp) != 0) {
    std::cerr << "convoy-plot: gnuplot failed\n";
    return false;
  }
  return true;
}

int draw_timeline(const timeline_options& o) {
  int conveyor = 0;
  std::map<int, json> docs;
  try {
    docs = read_traces(o, conveyor);
  } catch (const std::exception& e) {
    std::cerr << "convoy-plot: --timeline " << o.dir << ": " << e.what() << '\n';
    return 2;
  }
  const std::string stem =
      (fs::path(o.dir) / ("convoy-trace." + std::to_string(conveyor))).string();
  const std::string png = o.output.empty() ? stem + ".png" : o.output;
  try {
    write_merged(docs, stem + ".json");
    const std::string text = script(o, docs, conveyor, png);
    if (!o.script.empty()) {
      std::ofstream(o.script) << text;
      return 0;
    }
    if (!run_gnuplot(text)) return 1;
  } catch (const std::exception& e) {
    std::cerr << "convoy-plot: --timeline " << o.dir << ": " << e.what() << '\n';
    return 1;
  }
  std::cout << "convoy-plot: wrote " << png << " and " << stem << ".json (conveyor " << conveyor
            << ", " << docs.size() << " ranks)\n";
  return 0;
}

}  // namespace convoy::tools
