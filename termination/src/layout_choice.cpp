// Choosing a conveyor's layout under a memory limit (layout_choice.hpp; bale's
// convey_parameters, Maley & DeVinney 2019, sec. 4.3 and 4.6).
#include <algorithm>
#include <array>
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/router/memory.hpp>
#include <convoy/termination/layout_choice.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

namespace convoy::termination {

std::size_t node_group_size(const topology::machine& m) {
  std::size_t g = 0;
  for (const auto& node : m.nodes) {
    if (node.ranks.empty()) continue;
    // bale's groups are consecutive PEs (Maley & DeVinney 2019, sec. 4.3.1): a node that is not a
    // run of consecutive ranks cannot hold whole groups.
    if (node.ranks.back() - node.ranks.front() + 1 != static_cast<int>(node.ranks.size())) return 1;
    g = std::gcd(g, node.ranks.size());
  }
  return g > 0 ? g : 1;
}

const char* to_string(layout_kind k) noexcept {
  switch (k) {
    case layout_kind::tensor:
      return "tensor";
    case layout_kind::mesh:
      return "mesh";
    case layout_kind::bulk:
      return "bulk";
  }
  return "?";
}

conveyor_options layout_plan::options() const {
  conveyor_options o;
  if (kind == layout_kind::bulk) {  // one buffer per rank, no header (bulk_exchange)
    o.kind = conveyor_kind::bulk;
    o.buffer_bytes = payload_bytes;
    o.settings = settings;
    return o;
  }
  if (kind == layout_kind::tensor) {
    o.tensor_order = order;
    o.n_local = order >= 2 ? static_cast<int>(n_local) : 1;
  } else {
    o.mesh = mesh;
  }
  o.buffer_bytes = payload_bytes != 0 ? payload_bytes + buffer_header_bytes : 0;  // 0: the kind's
  o.n_buffers = n_buffers;
  o.settings = settings;
  return o;
}

std::size_t bulk_memory_bytes(std::size_t capacity, std::size_t n_ranks) noexcept {
  return 2 * n_ranks * ((capacity + 63) / 64 * 64);
}

namespace {

int worst_of(const router::route_plan& plan, int first, int last) {
  int worst = first;
  std::size_t most = 0;
  for (int r = first; r < last; ++r)
    if (const std::size_t n = router::link_count(plan, r); n > most) {
      most = n;
      worst = r;
    }
  return worst;
}

// The memory of `t` over its metered plan (router::link_buffer_bytes at the worst rank).
bool same_route(const route_extra& e, const layout_plan& t) noexcept {
  return e.kind == t.kind && e.order == t.order && e.n_local == t.n_local && e.mesh == t.mesh;
}

std::size_t model(const layout_plan& t, const layout_request& r, const metered_plan& m,
                  std::size_t n_ranks) {
  if (t.kind == layout_kind::bulk) return bulk_memory_bytes(t.payload_bytes, n_ranks);
  std::size_t bytes = router::link_buffer_bytes(*m.plan, m.worst_rank,
                                                t.payload_bytes + buffer_header_bytes, t.n_buffers);
  if (r.elastic && r.item_bound > t.payload_bytes) bytes += 2 * r.item_bound;
  for (const route_extra& e : r.measured_extra)
    if (same_route(e, t)) bytes += e.bytes;
  return bytes;
}

// n_local and the preferred routes, most hops first (Maley & DeVinney 2019, sec. 4.3).
std::vector<layout_plan> routes(const layout_request& r, const layout_inputs& in,
                                std::size_t payload, std::string& note, bool& warn) {
  const auto p = static_cast<std::size_t>(in.n_ranks);
  std::size_t n = r.n_local;
  const bool from_setting = n == 0 && in.settings.convey_nlocal;
  if (from_setting) n = static_cast<std::size_t>(*in.settings.convey_nlocal);
  if (n == 0) n = in.node_group;
  if (n == 0 || p % n != 0) {
    note = (from_setting ? "CONVEY_NLOCAL=" : "n_local ") + std::to_string(n) +
           " does not divide the " + std::to_string(p) + " ranks; using 1 (one-hop routes)";
    warn = from_setting;
    n = 1;
  }
  layout_plan base;
  base.payload_bytes = payload;
  base.n_local = n;
  std::vector<layout_plan> out;
  if (in.settings.mesh) {
    base.kind = layout_kind::mesh;
    base.order = 0;
    base.mesh = *in.settings.mesh;
    out.push_back(base);
    return out;
  }
  // API-8: fewest hops first up to direct_first_ranks (measured), most hops beyond.
  static constexpr std::array<int, 3> fewest_first{1, 2, 3}, most_first{3, 2, 1};
  const bool direct_first = p <= static_cast<std::size_t>(direct_first_ranks);
  for (const int order : direct_first ? fewest_first : most_first) {
    if (order == 3 && !(n > 1 && n < p && (p / (n * n)) * (p / (n * n)) >= n)) continue;
    if (order == 2 && !(n > 1 && n < p)) continue;
    layout_plan t = base;
    t.order = order;
    if (order == 1) t.n_local = 1;
    out.push_back(t);
  }
  return out;
}

}  // namespace

layout_meter machine_meter(const topology::machine& m) {
  return [m](const layout_plan& t) {
    const int p = static_cast<int>(m.ranks.size());
    metered_plan out;
    if (t.kind == layout_kind::mesh)
      out.plan = router::make_mesh_plan(
          topology::build_mesh(m, convoy::base::parse_mesh_spec(t.mesh.empty() ? "auto" : t.mesh)));
    else
      out.plan =
          router::make_tensor_plan(t.order, p, t.order == 1 ? 1 : static_cast<int>(t.n_local));
    out.worst_rank = worst_of(*out.plan, 0, p);
    return out;
  };
}

layout_meter collective_meter(MPI_Comm comm, std::shared_ptr<const base::settings> settings) {
  return [comm, settings = std::move(settings)](const layout_plan& t) {
    metered_plan out;
    conveyor_options o = t.options();
    if (settings) o.settings = settings;
    out.plan = make_plan(comm, o);
    int rank = 0;
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    struct {
      long links;
      int rank;
    } mine{static_cast<long>(router::link_count(*out.plan, rank)), rank}, worst{0, 0};
    CONVOY_MPI_CHECK(MPI_Allreduce(&mine, &worst, 1, MPI_LONG_INT, MPI_MAXLOC, comm));
    out.worst_rank = worst.rank;
    return out;
  };
}

layout_plan choose_layout(const layout_request& r, const layout_inputs& in,
                          const layout_meter& meter) {
  if (in.n_ranks < 1) throw error("choose_layout: no ranks");
  const auto p = static_cast<std::size_t>(in.n_ranks);
  const bool bulk_ok = r.allow_bulk && !r.elastic;
  if (in.preferred && (bulk_ok || in.preferred->kind != layout_kind::bulk) &&
      (r.max_payload_bytes == 0 || in.preferred->payload_bytes <= r.max_payload_bytes)) {
    layout_plan t = *in.preferred;
    if (r.max_bytes == SIZE_MAX) return t;
    const metered_plan m = t.kind == layout_kind::bulk ? metered_plan{} : meter(t);
    t.memory_bytes = model(t, r, m, p);
    if (t.memory_bytes <= r.max_bytes) return t;
  }
  std::size_t payload = in.settings.convey_buffer_size ? *in.settings.convey_buffer_size : 0;
  if (payload == 0)
    payload = in.engine_buffer_bytes > buffer_header_bytes
                  ? in.engine_buffer_bytes - buffer_header_bytes
                  : 1024;
  if (r.max_payload_bytes && payload > r.max_payload_bytes) payload = r.max_payload_bytes;
  std::string note;
  bool warn = false;
  std::vector<layout_plan> candidates = routes(r, in, payload, note, warn);
  for (auto& t : candidates) {
    t.note = note;
    t.note_is_warning = warn;
  }
  if (r.max_bytes == SIZE_MAX) return candidates.front();

  // Hard limit: fewer buffers, then the other routes, then smaller buffers (bale's
  // convey_parameters steps 1-4, each candidate checked against its worst rank).
  std::vector<metered_plan> metered;
  metered.reserve(candidates.size());
  for (const auto& t : candidates) metered.push_back(meter(t));
  const std::size_t min_payload = r.elastic ? 64 : 32;
  for (std::size_t cap = payload; cap >= min_payload; cap /= 2) {
    for (int nb : {2, 1}) {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        layout_plan t = candidates[i];
        t.payload_bytes = cap;
        t.n_buffers = nb;
        t.memory_bytes = model(t, r, metered[i], p);
        if (t.memory_bytes <= r.max_bytes) return t;
      }
    }
    if (bulk_ok && bulk_memory_bytes(cap, p) <= r.max_bytes) {
      layout_plan t;
      t.kind = layout_kind::bulk;
      t.payload_bytes = cap;
      t.n_buffers = 1;
      t.memory_bytes = bulk_memory_bytes(cap, p);
      t.note = note;
      t.note_is_warning = warn;
      return t;
    }
  }
  throw error("no conveyor fits in max_bytes = " + std::to_string(r.max_bytes) + " bytes per PE");
}

namespace {
layout_inputs collective_inputs(MPI_Comm comm, const layout_request& r) {
  layout_inputs in;
  in.settings = convoy::base::settings::from_env(comm);
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &in.n_ranks));
  if (r.n_local == 0 && !in.settings.convey_nlocal && !in.settings.mesh)
    in.node_group = node_group_size(topology::discover(comm, in.settings));
  // The engine default, from the same settings: rank 0's environment and tuning file.
  in.engine_buffer_bytes = resolve_engine_options(conveyor_options{}, in.settings).buffer_bytes;
  return in;
}
}  // namespace

layout_plan choose_layout(MPI_Comm comm, const layout_request& request) {
  const layout_inputs in = collective_inputs(comm, request);
  auto settings = std::make_shared<const base::settings>(in.settings);
  layout_plan t = choose_layout(request, in, collective_meter(comm, settings));
  t.settings = std::move(settings);
  return t;
}

layout_plan choose_and_build(MPI_Comm comm, const layout_request& request,
                             const std::function<std::size_t(const layout_plan&)>& build) {
  const layout_inputs in = collective_inputs(comm, request);
  // Resolved once (BASE-6): the choice, the meter and every build use these.
  const auto settings = std::make_shared<const base::settings>(in.settings);
  const layout_meter meter = collective_meter(comm, settings);
  layout_request r = request;
  for (int attempt = 0; attempt < 6; ++attempt) {
    layout_plan t = choose_layout(r, in, meter);
    t.settings = settings;
    const unsigned long long mine = build(t);
    if (r.max_bytes == SIZE_MAX) return t;
    unsigned long long worst = 0;
    CONVOY_MPI_CHECK(MPI_Allreduce(&mine, &worst, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    if (worst <= r.max_bytes) return t;
    // API-8: what the engine holds beyond its buffers (route and tag tables, which do not
    // shrink with the buffers) joins this route's model; the next choice may be another
    // route. Measured at this capacity, it errs on the safe side at smaller ones.
    const std::size_t extra = worst > t.memory_bytes ? worst - t.memory_bytes : 0;
    auto known = std::find_if(r.measured_extra.begin(), r.measured_extra.end(),
                              [&](const route_extra& e) { return same_route(e, t); });
    if (known == r.measured_extra.end())
      r.measured_extra.push_back({t.kind, t.order, t.n_local, t.mesh, extra});
    else
      known->bytes += extra;  // t.memory_bytes held the estimate so far
    // The loopback buffers grow with the buffer size too: shrink in proportion.
    r.max_payload_bytes =
        static_cast<std::size_t>(static_cast<double>(t.payload_bytes) * 0.9 *
                                 static_cast<double>(r.max_bytes) / static_cast<double>(worst));
    if (r.max_payload_bytes < 32) break;
  }
  throw error("no conveyor fits in max_bytes = " + std::to_string(request.max_bytes) +
              " bytes per PE");
}

}  // namespace convoy::termination
