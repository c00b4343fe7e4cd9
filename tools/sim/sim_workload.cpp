// convoy-sim's workloads and the traffic-matrix file (sim_workload.hpp; README "Workloads").
#include "sim_workload.hpp"

#include <algorithm>
#include <convoy/base/error.hpp>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <unordered_map>

namespace convoy::sim {

namespace {
constexpr workload_kind all_workloads[] = {workload_kind::uniform,       workload_kind::hotspot,
                                           workload_kind::permutation,   workload_kind::neighbour,
                                           workload_kind::request_reply, workload_kind::traffic};
}

const char* workload_name(workload_kind w) noexcept {
  switch (w) {
    case workload_kind::uniform:
      return "uniform";
    case workload_kind::hotspot:
      return "hotspot";
    case workload_kind::permutation:
      return "permutation";
    case workload_kind::neighbour:
      return "neighbour";
    case workload_kind::request_reply:
      return "request-reply";
    case workload_kind::traffic:
      return "traffic";
  }
  return "?";
}

workload_kind parse_workload(const std::string& name) {
  for (const auto w : all_workloads)
    if (name == workload_name(w)) return w;
  throw convoy::error("workload '" + name +
                      "' is not one of uniform, hotspot, permutation, neighbour, request-reply, "
                      "traffic");
}

std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t fingerprint(int src, int dst, std::uint64_t seq) noexcept {
  return mix(mix(static_cast<std::uint64_t>(src) * 0x9e3779b97f4a7c15ULL ^
                 static_cast<std::uint64_t>(dst)) ^
             seq);
}

namespace {

// A whole token as a non-negative integer, or false.
bool parse_count(const std::string& tok, std::uint64_t& v) {
  if (tok.empty() || tok.size() > 19 ||
      !std::all_of(tok.begin(), tok.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return false;
  v = std::stoull(tok);
  return true;
}

}  // namespace

// SIM-7: every malformed line is an error naming the file and the line.
traffic_matrix parse_traffic(std::istream& in, const std::string& name, int ranks) {
  traffic_matrix m;
  m.rows.resize(static_cast<std::size_t>(ranks));
  std::unordered_map<std::uint64_t, std::size_t> where;  // (src, dst) -> index in rows[src]
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    const auto fail = [&](const std::string& what) {
      std::string msg = "traffic file '";
      msg += name;
      msg += "' line ";
      msg += std::to_string(number);
      msg += ": ";
      msg += what;
      throw convoy::error(msg);
    };
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> tok;
    for (std::string t; fields >> t;) tok.push_back(t);
    if (tok.empty()) continue;
    std::uint64_t v[3] = {0, 0, 0};
    if (tok.size() != 3 || !parse_count(tok[0], v[0]) || !parse_count(tok[1], v[1]) ||
        !parse_count(tok[2], v[2]))
      fail("expected 'SOURCE DESTINATION ITEMS' (three integers >= 0), got '" + line + "'");
    for (int k = 0; k < 2; ++k)
      if (v[k] >= static_cast<std::uint64_t>(ranks))
        fail(std::string(k == 0 ? "source " : "destination ") + tok[static_cast<std::size_t>(k)] +
             " is not a rank of this run (0.." + std::to_string(ranks - 1) + ")");
    if (v[2] > traffic_max_items || m.total + v[2] > traffic_max_items)
      fail("more than " + std::to_string(traffic_max_items) + " items in all");
    m.total += v[2];
    const auto src = static_cast<std::size_t>(v[0]);
    const auto [it, fresh] = where.try_emplace(v[0] << 32 | v[1], m.rows[src].size());
    if (fresh) m.rows[src].push_back({static_cast<int>(v[1]), 0});
    m.rows[src][it->second].items += v[2];
  }
  if (in.bad()) throw convoy::error("traffic file '" + name + "': read failed");
  return m;
}

traffic_matrix load_traffic(const std::string& path, int ranks) {
  std::ifstream in(path);
  if (!in) throw convoy::error("traffic file '" + path + "' cannot be read");
  return parse_traffic(in, path, ranks);
}

destinations::destinations(workload_kind w, int p, std::uint64_t items_per_rank, std::uint64_t seed,
                           const traffic_matrix* matrix)
    : w_(w), p_(p), items_per_rank_(items_per_rank), seed_(seed) {
  if (w == workload_kind::permutation) {
    perm_.resize(static_cast<std::size_t>(p));
    std::iota(perm_.begin(), perm_.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(perm_.begin(), perm_.end(), rng);
  }
  if (w == workload_kind::traffic) {
    if (matrix == nullptr || matrix->rows.size() != static_cast<std::size_t>(p))
      throw convoy::error("the traffic workload needs a traffic matrix for " + std::to_string(p) +
                          " ranks");
    per_rank_.resize(static_cast<std::size_t>(p));
    for (std::size_t r = 0; r < per_rank_.size(); ++r) {
      auto& d = per_rank_[r];
      for (const auto& e : matrix->rows[r]) d.insert(d.end(), e.items, e.dst);
      std::mt19937_64 rng(seed ^ mix(r));
      std::shuffle(d.begin(), d.end(), rng);
    }
  }
}

int destinations::operator()(int r, std::uint64_t i) const noexcept {
  switch (w_) {
    case workload_kind::uniform:
    case workload_kind::request_reply:
      return static_cast<int>(mix(seed_ ^ mix(static_cast<std::uint64_t>(r) << 40 ^ i)) %
                              static_cast<std::uint64_t>(p_));
    case workload_kind::hotspot:
      return 0;
    case workload_kind::permutation:
      return perm_[static_cast<std::size_t>(r)];
    case workload_kind::neighbour:  // alternately the next and the previous rank
      return (i & 1) ? (r + p_ - 1) % p_ : (r + 1) % p_;
    case workload_kind::traffic:
      return per_rank_[static_cast<std::size_t>(r)][i];
  }
  return 0;
}

}  // namespace convoy::sim
