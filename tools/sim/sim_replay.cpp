// convoy-sim --from-stats: the measured run's machine, mesh, buffers and traffic as
// simulator runs (sim_replay.hpp; README "Replaying a measured run").
#include "sim_replay.hpp"

#include <algorithm>
#include <convoy/base/error.hpp>
#include <numeric>
#include <set>
#include <string>

namespace convoy::sim {

traffic_matrix gravity_matrix(const std::vector<std::uint64_t>& pushes,
                              const std::vector<std::uint64_t>& weights) {
  const auto p = pushes.size();
  traffic_matrix m;
  m.rows.resize(p);
  std::vector<std::uint64_t> cum(weights.size());  // cum[d] = Σ weights[0..d]
  std::uint64_t w = 0;
  for (std::size_t d = 0; d < weights.size(); ++d) {
    if (weights[d] > (std::uint64_t{1} << 62) - w)
      throw convoy::error("the replay's weights add up to more than 2^62");
    cum[d] = w += weights[d];
  }
  for (std::size_t s = 0; s < p; ++s) {
    const std::uint64_t n = pushes[s];
    if (n == 0) continue;
    if (w == 0) throw convoy::error("the run pushed items but pulled none: no destinations");
    m.total += n;
    if (m.total > traffic_max_items)
      throw convoy::error("the replay's traffic holds more than " +
                          std::to_string(traffic_max_items) + " items");
    // n points evenly spaced on [0, W), shifted by s W / P (so that rounding up does not
    // favour the same destinations in every row): point k lies at shift + (2k + 1) W / 2n
    // (mod W), kept exactly as an integer part q and a remainder r in units of 1 / 2n.
    const std::uint64_t shift = (w / p) * s + (w % p) * s / p;
    const std::uint64_t step_q = 2 * w / (2 * n), step_r = 2 * w % (2 * n);
    std::uint64_t q = w / (2 * n), r = w % (2 * n);
    std::vector<int> dest(static_cast<std::size_t>(n));  // O(n) per row, not O(P)
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::uint64_t at = (q + shift) % w;
      dest[k] = static_cast<int>(std::upper_bound(cum.begin(), cum.end(), at) - cum.begin());
      q += step_q;
      r += step_r;
      if (r >= 2 * n) {
        r -= 2 * n;
        ++q;
      }
    }
    std::sort(dest.begin(), dest.end());
    for (const int d : dest)
      if (m.rows[s].empty() || m.rows[s].back().dst != d)
        m.rows[s].push_back({d, 1});
      else
        ++m.rows[s].back().items;
  }
  return m;
}

namespace {

std::string cartesian_text(const std::vector<int>& dims) {
  std::string t;
  for (const int d : dims) {  // appended in place: GCC 12 -O3 flags "x" + temp (-Wrestrict)
    if (!t.empty()) t += 'x';
    t += std::to_string(d);
  }
  return t;
}

bool default_order(const std::vector<int>& order) {  // innermost first: n-1, ..., 0
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int>(order.size() - 1 - i)) return false;
  return true;
}

// Why `c` does not reproduce the measured placement and links, or "" when it does.
std::string mismatch(const run_config& c, const measured_run& run, const measured_conveyor& cv) {
  std::vector<int> node_of, socket_of;
  std::shared_ptr<const router::route_plan> plan;
  try {
    plan = make_sim_plan(c, node_of, socket_of);
  } catch (const convoy::error& e) {
    return e.what();
  }
  if (node_of != run.rank_node) return "the ranks sit on other nodes";
  if (plan->n_stages() != static_cast<int>(cv.stage_dimension.size()))
    return std::to_string(plan->n_stages()) + " stages, the run had " +
           std::to_string(cv.stage_dimension.size());
  // A link is both directions: one the rank sent on must be an out-link of the plan, one
  // it only received on an in-link.
  for (const auto& r : cv.per_rank)
    for (const auto& l : r.links) {
      const bool sent = l.items_sent + l.buffers_full + l.buffers_partial > 0;
      const auto out = plan->out_peers(r.rank, l.stage);
      const auto in = sent ? std::vector<int>{} : plan->in_peers(r.rank, l.stage);
      if (std::find(out.begin(), out.end(), l.peer) == out.end() &&
          std::find(in.begin(), in.end(), l.peer) == in.end())
        return "rank " + std::to_string(r.rank) + " has no link to " + std::to_string(l.peer) +
               " on stage " + std::to_string(l.stage);
    }
  return "";
}

// The machine of the run: node sizes, block or round-robin placement (as rank_node says).
machine_config measured_machine(const measured_run& run) {
  machine_config m;
  m.ranks = run.ranks;
  m.node_sizes.assign(static_cast<std::size_t>(run.nodes), 0);
  for (const int n : run.rank_node) ++m.node_sizes[static_cast<std::size_t>(n)];
  for (std::size_t n = 0; n < m.node_sizes.size(); ++n)
    if (m.node_sizes[n] == 0)
      throw convoy::error("stats file '" + run.name + "': node " + std::to_string(n) +
                          " holds no rank");
  return m;
}

// The measured mesh: the first spec whose plan has the run's placement, stages and links.
void choose_plan(run_config& c, const measured_run& run, const measured_conveyor& cv,
                 std::string& text) {
  std::vector<std::string> specs;
  if (cv.kind == "mesh") {
    c.plan.dim_order = cv.stage_dimension;
    specs = {"auto"};
    const long long cells = std::accumulate(cv.mesh.begin(), cv.mesh.end(), 1LL,
                                            [](long long a, int b) { return a * b; });
    if (!cv.mesh.empty() && cells == run.ranks) specs.push_back(cartesian_text(cv.mesh));
  } else if (cv.kind == "tensor" && !cv.stage_dimension.empty() && cv.stage_dimension.size() <= 3) {
    c.plan.tensor = static_cast<int>(cv.stage_dimension.size());
    specs = {"tensor " + std::to_string(c.plan.tensor)};
  } else {
    throw convoy::error("conveyor " + std::to_string(cv.index) + " is of kind '" + cv.kind +
                        "' with " + std::to_string(cv.stage_dimension.size()) +
                        " stages: convoy-sim replays the streaming kinds mesh and tensor (1 to "
                        "3 stages), not bulk exchanges (bulk, simple) or elastic items");
  }
  // (spec, sockets per node): one socket first, then auto (node,socket,core) with each of
  // the mesh's sizes as the sockets per node.
  std::vector<std::pair<std::string, int>> tries;
  tries.reserve(specs.size() + cv.mesh.size());
  for (const auto& s : specs) tries.emplace_back(s, 1);
  if (c.plan.tensor == 0)
    for (const int d : cv.mesh)
      if (d > 1 &&
          std::find(tries.begin(), tries.end(), std::pair{std::string("auto"), d}) == tries.end())
        tries.emplace_back("auto", d);
  std::string why;
  for (const auto& [s, n_sockets] : tries)
    for (const bool cyclic : {false, true}) {  // block placement, else round-robin
      if (c.plan.tensor == 0) c.plan.mesh = s;
      c.machine.sockets_per_node = n_sockets;
      c.machine.cyclic = cyclic;
      const std::string w = mismatch(c, run, cv);
      if (w.empty()) {
        text = n_sockets > 1 ? s + " (" + std::to_string(n_sockets) + " sockets)" : s;
        return;
      }
      if (why.empty() || w != "the ranks sit on other nodes") why = w;
    }
  throw convoy::error("no plan of convoy-sim reproduces conveyor " + std::to_string(cv.index) +
                      " of '" + run.name + "' (mesh " + cartesian_text(cv.mesh) + ", tried " +
                      std::to_string(tries.size()) + " plans): " + why);
}

// The application's time per item: (cycle - advance) less the library's push and pull,
// per push; the median over the ranks that pushed.
double fit_app_seconds(const measured_conveyor& cv, const cost_model& m) {
  std::vector<double> per_item;
  for (const auto& r : cv.per_rank) {
    if (r.pushes == 0) continue;
    const double own = r.cycle_seconds - r.advance_seconds -
                       m.push_s * static_cast<double>(r.pushes) -
                       m.pull_s * static_cast<double>(r.pulls);
    per_item.push_back(std::max(0.0, own / static_cast<double>(r.pushes)));
  }
  if (per_item.empty()) return 0;
  std::nth_element(per_item.begin(), per_item.begin() + static_cast<long>(per_item.size() / 2),
                   per_item.end());
  return per_item[per_item.size() / 2];
}

// The run's traffic tiled over `p` ranks: rank r has the per-cycle pushes of measured rank
// r mod P, destination d the weight of measured rank d mod P (its pulls).
std::shared_ptr<const traffic_matrix> tiled_traffic(const measured_conveyor& cv, int p) {
  const auto big_p = cv.per_rank.size();
  std::vector<std::uint64_t> pushes(static_cast<std::size_t>(p)), weights(pushes.size());
  for (std::size_t r = 0; r < pushes.size(); ++r) {
    const auto& m = cv.per_rank[r % big_p];
    pushes[r] = (m.pushes + cv.cycles / 2) / cv.cycles;
    weights[r] = m.pulls;
  }
  return std::make_shared<const traffic_matrix>(gravity_matrix(pushes, weights));
}

run_config scaled_config(const run_config& check, const run_config& base,
                         const measured_conveyor& cv, const replay_request& req,
                         const std::string& mesh_text) {
  run_config s = check;
  s.count_links = false;
  s.machine = base.machine;
  if (!req.sockets_given) s.machine.sockets_per_node = check.machine.sockets_per_node;
  if (s.machine.node_sizes.empty() && s.machine.ranks_per_node == 0)
    s.machine.ranks_per_node = check.machine.node_sizes.front();
  if (s.plan.tensor == 0) {
    if (req.mesh_given)
      s.plan.mesh = base.plan.mesh;
    else if (check.plan.mesh != "auto")
      throw convoy::error("the measured mesh is the Cartesian " + mesh_text +
                          "; give --mesh for the scaled run");
    if (req.dim_order_given)
      s.plan.dim_order = base.plan.dim_order;
    else if (default_order(cv.stage_dimension))
      s.plan.dim_order.clear();
  } else if (req.mesh_given || req.dim_order_given) {
    throw convoy::error("conveyor " + std::to_string(cv.index) + " is of kind '" + cv.kind +
                        "': --mesh and --dim-order belong to a mesh");
  } else {
    s.plan.n_local = 0;
  }
  std::vector<int> node_of, socket_of;
  const int p = make_sim_plan(s, node_of, socket_of)->n_ranks();
  s.traffic = tiled_traffic(cv, p);
  return s;
}

}  // namespace

replay_setup setup_replay(const measured_run& run, const measured_conveyor& cv,
                          const run_config& base, const replay_request& req) {
  replay_setup out;
  run_config& c = out.check;
  c = base;
  c.workload = workload_kind::traffic;
  c.traffic_file.clear();
  c.count_links = true;
  if (cv.cycles == 0)
    throw convoy::error("conveyor " + std::to_string(cv.index) + " of '" + run.name +
                        "' ran no cycle");
  if (!req.item_bytes_given) {
    if (cv.item_bytes < 8)
      throw convoy::error("conveyor " + std::to_string(cv.index) + " moves items of " +
                          std::to_string(cv.item_bytes) +
                          " bytes (0: elastic); convoy-sim needs at least 8: give --item-bytes");
    c.item_bytes = cv.item_bytes;
  }
  if (!req.buffer_bytes_given) c.buffer_bytes = cv.buffer_bytes;
  if (!req.n_buffers_given) c.n_buffers = cv.n_buffers;
  c.machine = measured_machine(run);
  c.plan = plan_config{};
  choose_plan(c, run, cv, out.mesh_text);
  c.traffic = tiled_traffic(cv, run.ranks);
  out.app_source = "the model";
  if (req.fit_app) {
    c.model.app_s = fit_app_seconds(cv, c.model);
    out.app_source = "fitted: median over ranks of (cycle - advance - push - pull) / pushes";
  }
  if (req.scale) out.scaled = scaled_config(c, base, cv, req, out.mesh_text);
  return out;
}

}  // namespace convoy::sim
