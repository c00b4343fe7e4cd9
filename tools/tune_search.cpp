// convoy-tune's search (tune_search.hpp).
#include "tune_search.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <sstream>

#include "bench_runner.hpp"

namespace convoy::tools::tune {

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

// Of `given`, the value nearest to `wanted` (the library's default): where the search
// starts, so that it tries only what the command line allows.
template <class T>
T nearest(const std::vector<T>& given, T wanted) {
  T best = given.front();
  for (T v : given)
    if ((v > wanted ? v - wanted : wanted - v) < (best > wanted ? best - wanted : wanted - best))
      best = v;
  return best;
}

std::string duration_text(double seconds) {
  const long s = std::lround(seconds);
  if (s < 90) return std::to_string(s) + " s";
  if (s < 5400) return std::to_string((s + 30) / 60) + " min";
  return std::to_string(s / 3600) + " h " + std::to_string((s % 3600 + 30) / 60) + " min";
}

}  // namespace

std::string tuner::which_run() const {
  return "run " + std::to_string(runs_) + " of at most " + std::to_string(planned_);
}

std::string tuner::what_remains() const {
  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int left = std::max(planned_ - runs_, 0);
  std::string text = which_run();
  if (left == 0) return text;
  // Every run measures the same items: the mean so far times the runs that may remain (an
  // upper bound, as a repeated configuration is not run again).
  return text + "; at most about " + duration_text(spent / runs_ * left) + " left";
}

std::map<std::string, double> tuner::measure(const std::string& kinds,
                                             const std::vector<std::string>& args) {
  std::string tail;
  for (const auto& a : args) tail += " " + a;
  std::map<std::string, double> rates;
  std::string missing;
  for (const auto& k : split_commas(kinds)) {
    if (auto it = seen_.find(k + tail); it != seen_.end())
      rates[k] = it->second;
    else
      missing += (missing.empty() ? "" : ",") + k;
  }
  if (missing.empty()) return rates;
  std::vector<std::string> cmd = base_;
  cmd.insert(cmd.end(), {"--kinds", missing, "--sizes", std::to_string(o_.item_bytes), "--items",
                         o_.items, "--reps", std::to_string(o_.reps)});
  cmd.insert(cmd.end(), args.begin(), args.end());
  ++runs_;
  progress_.show(which_run() + ": " + missing + tail, true);
  std::map<std::string, double> got;
  for (const auto& r : convoy::tools::run_bench(cmd, log_))
    got[r.kind] = r.verified && r.error.empty() ? r.items_per_s_per_rank : 0;
  progress_.clear();
  std::cerr << "  " << missing << tail << ":";
  for (const auto& k : split_commas(missing)) {
    rates[k] = seen_[k + tail] = got[k];  // absent: the run failed before writing
    std::fprintf(stderr, " %s %.3f M", k.c_str(), got[k] / 1e6);
  }
  std::cerr << " (" << what_remains() << ")\n";
  return rates;
}

int planned_runs(const options& o, std::size_t n_meshes) {
  const auto c = static_cast<int>(o.capacities.size());
  const auto b = static_cast<int>(o.buffers.size());
  const int kinds = o.kinds.empty() ? 0 : c + (static_cast<int>(o.kinds.size()) - 1) * b;
  return 2 * c + b + static_cast<int>(n_meshes) + kinds;
}

best tune_mesh(tuner& t, const options& o, const std::vector<std::string>& meshes) {
  best b;
  b.capacity = nearest(o.capacities, b.capacity);
  b.buffers = nearest(o.buffers, b.buffers);
  b.mesh = meshes.front();
  auto consider = [&](std::size_t cap, int buf, const std::string& mesh) {
    const double r = t.measure("mesh", {"--mesh", mesh, "--capacity", std::to_string(cap),
                                        "--n-buffers", std::to_string(buf)})["mesh"];
    if (r > b.rate) b = {r, cap, buf, mesh};
  };
  std::cerr << "C++ API (kind mesh): buffer size, buffers per link, mesh shape, buffer size\n";
  const best start = b;
  for (auto c : o.capacities) consider(c, start.buffers, start.mesh);
  for (int k : o.buffers) consider(b.capacity, k, b.mesh);
  for (const auto& m : meshes) consider(b.capacity, b.buffers, m);
  for (auto c : o.capacities) consider(c, b.buffers, b.mesh);
  return b;
}

std::map<std::string, best> tune_kinds(tuner& t, const options& o) {
  std::map<std::string, best> bests;
  std::string all;
  for (const auto& k : o.kinds) all += (all.empty() ? "" : ",") + k;
  std::cerr << "convey.h kinds: buffer size, then buffers per link (tensor kinds)\n";
  for (auto c : o.capacities) {
    const auto rates =
        t.measure(all, {"--convey-capacity", std::to_string(c), "--convey-buffers", "1"});
    for (const auto& [kind, r] : rates)
      if (r > bests[kind].rate) bests[kind] = {r, c, 1, ""};
  }
  for (auto& [kind, b] : bests) {
    if (kind == "simple" || b.rate == 0) continue;  // simple has one buffer per destination
    for (int k : o.buffers) {
      const double r = t.measure(kind, {"--convey-capacity", std::to_string(b.capacity),
                                        "--convey-buffers", std::to_string(k)})[kind];
      if (r > b.rate) b = {r, b.capacity, k, ""};
    }
  }
  std::erase_if(bests, [](const auto& kv) { return kv.second.rate <= 0; });
  return bests;
}

std::string tuning_text(const options& o, const best& m, const std::map<std::string, best>& kinds) {
  std::ostringstream s;
  const std::time_t now = std::time(nullptr);
  char date[64], host[256] = {};
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  gethostname(host, sizeof host - 1);
  s << "# written by convoy-tune on " << date << ", host " << host << "\n"
    << "# job: " << o.launcher << "; histogram, " << o.item_bytes << "-byte items, " << o.items
    << " items per rank, median of " << o.reps << "\n";
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.3f", m.rate / 1e6);
  s << "# C++ API (kind mesh): " << rate << " M items/s per rank\n"
    << "buffer_bytes=" << m.capacity << "\nn_buffers=" << m.buffers << "\nmesh=" << m.mesh << "\n";
  if (kinds.empty()) return s.str();
  std::string fastest;
  double top = 0;
  for (const auto& [kind, b] : kinds)
    if (b.rate > top) top = b.rate, fastest = kind;
  s << "# convey.h kinds: the fastest (convey_new's choice), then each kind's best\n"
    << "kind=" << fastest << "\n";
  for (const auto& [kind, b] : kinds) {
    std::snprintf(rate, sizeof rate, "%.3f", b.rate / 1e6);
    s << "# " << kind << ": " << rate << " M items/s per rank\n"
      << kind << ".buffer_bytes=" << b.capacity << "\n";
    if (kind != "simple") s << kind << ".n_buffers=" << b.buffers << "\n";
  }
  return s.str();
}

}  // namespace convoy::tools::tune
