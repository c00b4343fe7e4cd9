// Laying conveyors onto the machine: topology discovery -> route plan -> MPI transport ->
// engine. Settings precedence: explicit option > environment > tuning file > default; the
// settings are resolved once per construction (base::settings::from_env(comm), BASE-6),
// unless the caller resolved them before (conveyor_options::settings).
#include <algorithm>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/bulk_engine.hpp>
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/termination/layout_choice.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <string>
#include <vector>

#include "engine_build.hpp"
#include "status_window.hpp"
#include "trace_setup.hpp"

namespace convoy::termination {

namespace {

int comm_size(MPI_Comm comm) {
  int n = 0;
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &n));
  return n;
}

// Compression on the links that leave the node (Maley & DeVinney 2019, sec. 3.6), collective.
std::unique_ptr<aggregation::compressing_transport> compress_off_node(
    MPI_Comm comm, const router::route_plan& plan, const base::settings& s,
    std::shared_ptr<aggregation::codec> codec, std::unique_ptr<aggregation::transport> inner) {
  std::vector<int> tags(static_cast<std::size_t>(plan.n_stages()));
  for (int k = 0; k < plan.n_stages(); ++k) tags[static_cast<std::size_t>(k)] = plan.tag_bytes(k);
  return std::make_unique<aggregation::compressing_transport>(
      std::move(inner), std::move(codec), std::move(tags), aggregation::off_node_links(comm, s),
      aggregation::compressing_transport::item_size_source{});
}

// The settings of `o`, else rank 0's (collective).
std::shared_ptr<const base::settings> settings_of(MPI_Comm comm, const conveyor_options& o) {
  return o.settings ? o.settings
                    : std::make_shared<const base::settings>(base::settings::from_env(comm));
}

}  // namespace

std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& o,
                                                    const base::settings& s) {
  const int p = comm_size(comm);
  if (o.tensor_order != 0) {
    int n_local = o.n_local;
    if (n_local == 0 && o.tensor_order > 1)  // API-1: groups never straddle nodes
      n_local = static_cast<int>(node_group_size(topology::discover(comm, s)));
    return router::make_tensor_plan(o.tensor_order, p, o.tensor_order == 1 ? 1 : n_local);
  }
  const auto spec = base::parse_mesh_spec(o.mesh.empty() ? s.mesh_text() : o.mesh);
  const auto m = topology::discover(comm, s);
  const topology::mesh mesh = topology::build_mesh(m, spec);
  std::vector<int> order = o.dim_order;
  if (o.kind == conveyor_kind::broadcast &&
      order.empty()) {  // outermost dimension first: node first (API-91)
    order.resize(static_cast<std::size_t>(mesh.n_dims()));
    for (std::size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
  }
  return router::make_mesh_plan(mesh, std::move(order));
}

std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& o) {
  return make_plan(comm, o, *settings_of(comm, o));
}

const char* to_string(conveyor_kind kind) noexcept {
  switch (kind) {
    case conveyor_kind::streaming:
      return "streaming";
    case conveyor_kind::bulk:
      return "bulk";
    case conveyor_kind::elastic:
      return "elastic";
    case conveyor_kind::broadcast:
      return "broadcast";
    case conveyor_kind::combining:
      return "combining";
  }
  return "?";
}

termination::item_mode detail::item_mode_of(const conveyor_options& o) {
  using termination::item_mode;
  const bool combining = o.combine.fn != nullptr;
  const item_mode mode = o.kind == conveyor_kind::elastic     ? item_mode::elastic
                         : o.kind == conveyor_kind::broadcast ? item_mode::broadcast
                                                              : item_mode::rigid;
  if (o.kind == conveyor_kind::combining && !combining)
    throw error("conveyor: the combining kind needs options.combine (a combine_spec with its fn)");
  if (combining && (o.kind == conveyor_kind::bulk || termination::combine_refusal(mode, true)))
    throw error(std::string("conveyor: the ") + to_string(o.kind) + " kind does not combine");
  return mode;
}

std::size_t broadcast_buffer_bytes(const router::route_plan& plan, int n_buffers) {
  std::size_t lanes = 1;  // the loopback lane
  const std::vector<int> sizes = plan.mesh_sizes();
  for (int s : sizes) lanes += static_cast<std::size_t>(s - 1);
  if (sizes.empty())
    for (int stage = 0; stage < plan.n_stages(); ++stage) lanes += plan.out_peers(0, stage).size();
  const std::size_t fit =
      broadcast_buffer_budget / (lanes * static_cast<std::size_t>(std::max(n_buffers, 1)));
  std::size_t bytes = base::default_buffer_bytes;
  while (bytes * 2 <= std::min(fit, broadcast_buffer_bytes_max)) bytes *= 2;
  return bytes;
}

termination::engine_options resolve_engine_options(const conveyor_options& o,
                                                   const base::settings& s) {
  termination::engine_options e;
  e.buffer_bytes = o.buffer_bytes ? o.buffer_bytes : s.buffer_bytes_or_default();
  // BCAST-8: the broadcast kind's own default, sized from the plan when the engine is built.
  if (o.kind == conveyor_kind::broadcast && !o.buffer_bytes && !s.buffer_bytes &&
      !s.tuning.buffer_bytes())
    e.buffer_bytes = 0;
  e.n_buffers = o.n_buffers ? o.n_buffers : s.n_buffers_or_default();
  e.steady = o.steady;
  e.steady_period = o.steady_period;
  e.mode = detail::item_mode_of(o);
  e.combine = o.combine;
  // TERM-27: a size set (0: none), else the default budget.
  if (const auto entries = o.combine_cache_entries ? o.combine_cache_entries : s.combine_cache)
    e.combine_cache_entries = *entries;
  else
    e.combine_cache_budget = base::default_combine_cache_budget;
  if (s.combine_min_hit) e.combine_gate.min_hit_per_1024 = *s.combine_min_hit;
  if (s.combine_saved_ns) e.combine_gate.saved_record_ns = *s.combine_saved_ns;
  e.watchdog.seconds =
      o.watchdog_seconds != 0 ? std::max(0.0, o.watchdog_seconds) : s.watchdog_seconds_or_off();
  e.watchdog.abort = o.watchdog_abort || s.watchdog_abort.value_or(false);
  return e;
}

std::unique_ptr<bulk_engine> make_bulk_engine(MPI_Comm comm, const conveyor_options& o,
                                              const base::settings& s) {
  if (o.kind != conveyor_kind::bulk && o.kind != conveyor_kind::streaming)
    throw error(std::string("conveyor: the bulk engine cannot carry the ") + to_string(o.kind) +
                " kind's items");
  if (o.make_transport) throw error("conveyor: the bulk kind has no transport to replace");
  if (o.combine.fn != nullptr) throw error("conveyor: the bulk kind does not combine");
  if (o.watchdog_seconds > 0)  // TERM-15: a stuck rank holds the others inside a collective
    throw error("conveyor: the bulk kind has no watchdog (its advance is collective)");
  aggregation::bulk_exchange::options x;
  x.buffer_bytes = detail::agreed_engine_options(comm, o, s).buffer_bytes;
  x.memory = o.buffers;
  if (o.codec) {
    x.codec = o.codec;
    x.compress_link = aggregation::off_node_links(comm, s);
  }
  bulk_engine::options b;
  b.steady = o.steady;
  b.dynamic = o.dynamic;
  return std::make_unique<bulk_engine>(
      std::make_unique<aggregation::bulk_exchange>(comm, std::move(x)), b);
}

std::unique_ptr<bulk_engine> make_bulk_engine(MPI_Comm comm, const conveyor_options& o) {
  return make_bulk_engine(comm, o, *settings_of(comm, o));
}

std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm, const conveyor_options& o,
                                                     const transport_factory& make_transport) {
  const auto s = settings_of(comm, o);
  return make_mpi_engine(comm, make_plan(comm, o, *s), o, *s, make_transport);
}

std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& o,
                                                     const transport_factory& make_transport) {
  return make_mpi_engine(comm, std::move(plan), o, *settings_of(comm, o), make_transport);
}

std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& o,
                                                     const base::settings& s,
                                                     const transport_factory& make_transport) {
  return detail::build_mpi_engine(comm, std::move(plan), o, s,
                                  detail::agreed_engine_options(comm, o, s), make_transport);
}

termination::engine_options detail::agreed_engine_options(MPI_Comm comm, const conveyor_options& o,
                                                          const base::settings& s) {
  termination::engine_options opts = resolve_engine_options(o, s);
  // The settings are rank 0's already; the options may differ between ranks. The
  // watchdog's period travels in milliseconds. The hold-back caches' size and budget too
  // (TERM-27): a rank must not keep its entries longer or fold less than the others because
  // its caller passed another figure.
  unsigned long long agreed[6] = {opts.buffer_bytes,
                                  static_cast<unsigned long long>(opts.n_buffers),
                                  static_cast<unsigned long long>(opts.watchdog.seconds * 1000.0),
                                  opts.watchdog.abort ? 1ULL : 0ULL,
                                  opts.combine_cache_entries,
                                  opts.combine_cache_budget};
  CONVOY_MPI_CHECK(MPI_Bcast(agreed, 6, MPI_UNSIGNED_LONG_LONG, 0, comm));
  opts.buffer_bytes = static_cast<std::size_t>(agreed[0]);
  opts.n_buffers = static_cast<int>(agreed[1]);
  opts.watchdog.seconds = static_cast<double>(agreed[2]) / 1000.0;
  opts.watchdog.abort = agreed[3] != 0;
  opts.combine_cache_entries = static_cast<std::size_t>(agreed[4]);
  opts.combine_cache_budget = static_cast<std::size_t>(agreed[5]);
  return opts;
}

std::unique_ptr<termination::engine> detail::build_mpi_engine(
    MPI_Comm comm, std::shared_ptr<const router::route_plan> plan, const conveyor_options& o,
    const base::settings& s, termination::engine_options opts,
    const transport_factory& make_transport) {
  if (!plan) throw error("make_mpi_engine: null route plan");
  if (plan->n_ranks() != comm_size(comm))
    throw error("make_mpi_engine: the plan has " + std::to_string(plan->n_ranks()) +
                " ranks, the communicator " + std::to_string(comm_size(comm)));
  if (opts.buffer_bytes == 0) opts.buffer_bytes = broadcast_buffer_bytes(*plan, opts.n_buffers);
  opts.watchdog.board = detail::make_status_board(comm, opts.watchdog.seconds);
  opts.trace = detail::make_trace_options(comm, s);
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // TERM-27: hold-back caches on the links that leave the node, where a folded record is
  // bytes not sent; inside a node it is a copy, which the buffer's table saves for less.
  // The node map is found on every rank alike (collective); an engine without caches does
  // not keep its copy.
  auto off_node = aggregation::off_node_links(comm, s);
  if (opts.has_combine_caches() && !opts.combine_cache_link)
    opts.combine_cache_link = std::move(off_node);
  std::unique_ptr<aggregation::transport> transport;
  if (make_transport)
    transport = make_transport(comm, plan);
  else if (o.make_transport)
    transport = o.make_transport(comm, plan);
  else
    // AGG-70: a dynamic conveyor's buffers exist only from begin to reset, so its
    // shared-memory window is freed with its engine; others keep it for the next engine.
    transport = aggregation::make_transport(
        comm, s, o.buffers,
        o.dynamic ? aggregation::window_reuse::release : aggregation::window_reuse::keep);
  aggregation::compressing_transport* squeeze = nullptr;
  if (o.codec) {
    auto c = compress_off_node(comm, *plan, s, o.codec, std::move(transport));
    squeeze = c.get();
    transport = std::move(c);
  }
  auto e = std::make_unique<termination::engine>(std::move(plan), rank, std::move(transport), opts);
  if (squeeze) {
    // The engine owns the transport, so the pointer outlives every call.
    squeeze->set_item_size_source([engine = e.get()] {
      return engine->rules().carries_size ? std::size_t{0} : engine->item_bytes();
    });
    if (o.on_compressing) o.on_compressing(*squeeze);
  }
  return e;
}

}  // namespace convoy::termination
