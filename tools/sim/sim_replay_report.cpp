// convoy-sim --from-stats: predicted vs measured per stage and link class, per link and in
// time (sim_replay.hpp; README "Replaying a measured run").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "sim_replay.hpp"

namespace convoy::sim {

namespace {

// Counts per cycle of one stage and link class.
struct counts {
  double items = 0, bytes = 0, buffers = 0, buffers_full = 0, buffers_partial = 0;
};
struct row {
  int stage = 0;
  bool off_node = false;
  counts measured, predicted;
};
const char* class_name(bool off_node) { return off_node ? "inter" : "intra"; }

// Rows for every (stage, class) that either side used, in stage then class order.
std::vector<row> compare(const measured_conveyor& cv, const run_result& r) {
  std::map<std::pair<int, bool>, row> rows;
  const double cycles = static_cast<double>(cv.cycles);
  for (const auto& m : cv.per_rank)
    for (const auto& l : m.links) {
      auto& c = rows[{l.stage, l.peer_node != m.node}].measured;
      c.items += static_cast<double>(l.items_sent) / cycles;
      c.bytes += static_cast<double>(l.bytes_sent) / cycles;
      c.buffers_full += static_cast<double>(l.buffers_full) / cycles;
      c.buffers_partial += static_cast<double>(l.buffers_partial) / cycles;
      c.buffers += static_cast<double>(l.buffers_full + l.buffers_partial) / cycles;
    }
  for (const auto& l : r.links) {
    auto& c = rows[{l.stage, l.off_node}].predicted;
    c.items += static_cast<double>(l.items);
    c.bytes += static_cast<double>(l.bytes);
    c.buffers_full += static_cast<double>(l.buffers_full);
    c.buffers_partial += static_cast<double>(l.buffers_partial);
    c.buffers += static_cast<double>(l.buffers_full + l.buffers_partial);
  }
  std::vector<row> out;
  for (auto& [key, value] : rows) {
    value.stage = key.first;
    value.off_node = key.second;
    out.push_back(value);
  }
  return out;
}

// The link whose predicted items per cycle differ most from the measured, relative to them.
struct worst_link {
  double error = 0;  // (predicted - measured) / measured; 0 when every link agrees
  int rank = -1, stage = -1, peer = -1;
  double measured = 0, predicted = 0;
  int n_links = 0;
};
// Links either side used: a link the stats do not list counts as measured 0, and its
// error as +100 %.
worst_link worst(const measured_conveyor& cv, const run_result& r) {
  std::map<std::tuple<int, int, int>, std::pair<double, double>> links;  // measured, predicted
  for (const auto& m : cv.per_rank)
    for (const auto& l : m.links)
      links[{m.rank, l.stage, l.peer}].first =
          static_cast<double>(l.items_sent) / static_cast<double>(cv.cycles);
  for (const auto& l : r.links)
    if (l.items != 0) links[{l.rank, l.stage, l.peer}].second = static_cast<double>(l.items);
  worst_link w;
  for (const auto& [key, v] : links) {
    const auto [meas, pred] = v;
    const double err = meas > 0 ? (pred - meas) / meas : (pred > 0 ? 1.0 : 0.0);
    if (std::abs(err) > std::abs(w.error) || w.rank < 0)
      w = {err, std::get<0>(key), std::get<1>(key), std::get<2>(key), meas, pred, 0};
  }
  w.n_links = static_cast<int>(links.size());
  return w;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double largest(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}
std::vector<double> measured_cycle_seconds(const measured_conveyor& cv) {
  std::vector<double> v;
  for (const auto& r : cv.per_rank) v.push_back(r.cycle_seconds / static_cast<double>(cv.cycles));
  return v;
}
double error(double predicted, double measured) {
  return measured != 0 ? (predicted - measured) / measured : (predicted == 0 ? 0.0 : NAN);
}

}  // namespace

void print_replay(std::ostream& out, const measured_run& run, const measured_conveyor& cv,
                  const replay_setup& setup, const run_result& check) {
  char line[256];
  auto put = [&](const char* fmt, auto... v) {
    std::snprintf(line, sizeof line, fmt, v...);
    out << line;
  };
  put("# replay of conveyor %d (%s, %s) of %s: %d ranks on %d nodes, plan %s, cycles %llu\n",
      cv.index, cv.kind.c_str(), cv.api.c_str(), run.name.c_str(), run.ranks, run.nodes,
      setup.mesh_text.c_str(), static_cast<unsigned long long>(cv.cycles));
  out << "# traffic: gravity estimate T[s][d] = pushes[s] x pulls[d] / sum(pulls), per cycle\n";
  put("# app_s %.4g s per item (%s)\n", setup.check.model.app_s, setup.app_source.c_str());
  put("# per cycle  stage class %-16s %14s %14s %8s\n", "what", "measured", "predicted", "error");
  for (const auto& r : compare(cv, check)) {
    const std::pair<const char*, double counts::*> what[] = {
        {"items", &counts::items},
        {"bytes", &counts::bytes},
        {"buffers", &counts::buffers},
        {"buffers_full", &counts::buffers_full},
        {"buffers_partial", &counts::buffers_partial}};
    for (const auto& [name, field] : what)
      put("replay      %5d %-5s %-16s %14.1f %14.1f %+7.1f%%\n", r.stage, class_name(r.off_node),
          name, r.measured.*field, r.predicted.*field,
          100 * error(r.predicted.*field, r.measured.*field));
  }
  const auto w = worst(cv, check);
  if (w.rank >= 0)
    put("replay      largest link error (items) %+.1f%% of %d links: rank %d stage %d to %d, "
        "%.1f measured, %.1f predicted\n",
        100 * w.error, w.n_links, w.rank, w.stage, w.peer, w.measured, w.predicted);
  const auto meas = measured_cycle_seconds(cv);
  put("replay      cycle seconds: measured median %.6g max %.6g, predicted median %.6g max "
      "%.6g (%+.1f%% of the max)\n",
      median(meas), largest(meas), median(check.rank_seconds), largest(check.rank_seconds),
      100 * error(largest(check.rank_seconds), largest(meas)));
}

std::string replay_json_text(const measured_run& run, const measured_conveyor& cv,
                             const replay_setup& setup, const run_result& check) {
  using nlohmann::json;
  json j;
  j["stats_file"] = run.name;
  j["conveyor"] = cv.index;
  j["kind"] = cv.kind;
  j["plan"] = setup.mesh_text;
  j["cycles"] = cv.cycles;
  j["traffic_estimate"] = "gravity";
  j["app_s"] = setup.check.model.app_s;
  j["app_s_source"] = setup.app_source;
  j["per_stage_class"] = json::array();
  const auto as_json = [](const counts& c) {
    return json{{"items", c.items},
                {"bytes", c.bytes},
                {"buffers", c.buffers},
                {"buffers_full", c.buffers_full},
                {"buffers_partial", c.buffers_partial}};
  };
  for (const auto& r : compare(cv, check))
    j["per_stage_class"].push_back({{"stage", r.stage},
                                    {"class", class_name(r.off_node)},
                                    {"measured", as_json(r.measured)},
                                    {"predicted", as_json(r.predicted)}});
  const auto w = worst(cv, check);
  j["largest_link_error"] = {
      {"error", w.error},       {"rank", w.rank},           {"stage", w.stage},  {"peer", w.peer},
      {"measured", w.measured}, {"predicted", w.predicted}, {"links", w.n_links}};
  const auto meas = measured_cycle_seconds(cv);
  j["cycle_seconds"] = {{"measured_median", median(meas)},
                        {"measured_max", largest(meas)},
                        {"predicted_median", median(check.rank_seconds)},
                        {"predicted_max", largest(check.rank_seconds)}};
  return j.dump(2);
}

}  // namespace convoy::sim
