#pragma once
/// @file
/// The typed C++ API: convoy::conveyor<T> over any route plan and transport.
///
/// A conveyor<T> moves items of a trivially copyable type T between ranks through the
/// streaming engine (termination/engine.hpp), following the conveyor contract of seed 000
/// sec. 3. Hot-path calls (push, pull, advance) return status values; misuse (push after
/// done, rank out of range, call in the wrong state) throws convoy::error naming the
/// problem and changes nothing.
///
///   convoy::conveyor<long> c(MPI_COMM_WORLD);         // collective; auto topology
///   c.begin();
///   size_t i = 0;
///   while (c.advance(i == n)) {
///     for (; i < n; ++i) if (!c.push(spot[i], owner[i])) break;
///     while (auto d = c.pull()) tally[d->item]++;
///   }
///   c.reset();
#include <mpi.h>

#include <convoy/aggregation/transport.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/engine.hpp>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace convoy {

using termination::state;

/// How a conveyor is laid over the ranks and buffered. Zero/empty fields take their value
/// from the settings (base::settings: CONVOY_MESH, CONVOY_BUFFER_BYTES, CONVOY_N_BUFFERS,
/// then the tuning file, CONVOY_TUNE_FILE), else the built-in defaults.
struct conveyor_options {
  /// Mesh spec ("auto", "node,core", "8x4x2", ...; see base/README.md). Used unless
  /// tensor_order is set. Empty: CONVOY_MESH, else the tuning file's mesh, else "auto".
  std::string mesh;
  /// Stage order over the mesh dimensions (empty: innermost first, TRAM sec. V.C).
  std::vector<int> dim_order;
  /// 1, 2 or 3: bale's tensor routing (seed 000 sec. 4.3.1) instead of a mesh.
  int tensor_order = 0;
  /// Tensor group size; 0: ranks per node (from the topology module).
  int n_local = 0;
  std::size_t capacity_bytes = 0;  ///< bytes per buffer (0: settings, else 16384)
  int n_buffers = 0;               ///< buffers per link (0: settings, else 2)
  bool steady = false;             ///< never hold an item indefinitely (seed 000 sec. 3.6)
  int steady_period = 1;
  bool elastic = false;  ///< items carry their own size
};

/// Builds the route plan described by `options` for the ranks of `comm` (collective:
/// runs topology discovery) with the settings `s` (base::settings::from_env(comm)).
/// Throws convoy::error on an invalid mesh or tensor setting.
std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& options,
                                                    const base::settings& s);
/// As above, resolving the settings first (collective).
std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& options);
/// Resolves zero fields of `options` against the settings `s` and the defaults. Pure.
termination::engine_options resolve_engine_options(const conveyor_options& options,
                                                   const base::settings& s);
/// Builds the transport of an engine on `comm` for `plan` (collective).
using transport_factory = std::function<std::unique_ptr<aggregation::transport>(
    MPI_Comm comm, const std::shared_ptr<const router::route_plan>& plan)>;
/// An engine over MPI for the calling rank of `comm` (collective). The transport comes
/// from `make_transport`, by default aggregation::make_transport with CONVOY_TRANSPORT
/// (shared memory on the node, MPI point-to-point off it). Resolves the settings once
/// (base::settings::from_env) for the plan and the engine. Throws convoy::error.
std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm, const conveyor_options& options,
                                                     const transport_factory& make_transport = {});
/// As above over a plan built before (e.g. by make_plan, once for several engines: no
/// topology discovery). Throws convoy::error if the plan does not span `comm`.
std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& options,
                                                     const transport_factory& make_transport = {});
/// As above with settings resolved before (base::settings::from_env(comm)): no settings
/// collective.
std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& options,
                                                     const base::settings& s,
                                                     const transport_factory& make_transport = {});

template <class T>
struct delivery {
  T item;
  int from;
};

template <class T>
class conveyor {
  static_assert(std::is_trivially_copyable_v<T>, "conveyor items must be trivially copyable");

 public:
  /// Collective over `comm`. Throws convoy::error.
  explicit conveyor(MPI_Comm comm, const conveyor_options& options = {})
      : engine_(make_mpi_engine(comm, options)) {}
  /// Over an engine built elsewhere (e.g. on a simulated transport).
  explicit conveyor(std::unique_ptr<termination::engine> engine) : engine_(std::move(engine)) {
    if (!engine_) throw error("conveyor: null engine");
  }

  /// DORMANT -> WORKING (collective). Throws convoy::error in any other state.
  void begin() { check(engine_->begin(sizeof(T)), "begin"); }

  /// True if accepted; false if the path is full (advance, pull, and retry). Throws
  /// convoy::error on misuse (rank out of range, not WORKING).
  [[nodiscard]] bool push(const T& item, int rank) {
    const int rc = engine_->template push<sizeof(T)>(&item, rank);
    if (rc < 0) [[unlikely]]
      check(rc, "push to rank " + std::to_string(rank));
    return rc > 0;
  }

  /// The next delivered item and its source, if any.
  [[nodiscard]] std::optional<delivery<T>> pull() {
    termination::item_view v;
    const int rc = engine_->pull(v);
    if (rc <= 0) {
      if (rc < 0) check(rc, "pull");
      return std::nullopt;
    }
    delivery<T> d{T{}, v.from};
    std::memcpy(&d.item, v.data, sizeof(T));
    return d;
  }

  /// Puts back the item of the last pull; it is pulled again next. Throws convoy::error
  /// if there is nothing to put back.
  void unpull() { check(engine_->unpull(), "unpull"); }

  /// Returns true while the conveyor is not complete (the loop condition of seed 000
  /// Figure 3). Throws convoy::error on misuse or transport failure.
  [[nodiscard]] bool advance(bool done) { return status(done) != termination::done; }
  /// As advance(), returning ok, near or done.
  [[nodiscard]] int status(bool done) {
    const int rc = engine_->advance(done);
    if (rc < 0) [[unlikely]]
      check(rc, "advance");
    return rc;
  }
  /// Handler style: advances, then passes every delivered item to `handler(item, from)`.
  template <class F>
  [[nodiscard]] bool advance(bool done, F&& handler) {
    const bool more = advance(done);
    while (auto d = pull()) handler(d->item, d->from);
    return more;
  }

  /// Sends every partly filled buffer now. Throws convoy::error unless WORKING/ENDGAME.
  void flush() { check(engine_->flush(), "flush"); }

  /// COMPLETE -> DORMANT. Throws convoy::error in another state (DORMANT is a no-op).
  void reset() { check(engine_->reset(), "reset"); }

  [[nodiscard]] state current_state() const noexcept { return engine_->current_state(); }
  [[nodiscard]] int rank() const noexcept { return engine_->rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return engine_->n_ranks(); }
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const {
    return engine_->stats(cumulative);
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return engine_->memory_bytes(); }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept {
    return engine_->max_memory_bytes();
  }
  [[nodiscard]] termination::engine& engine() noexcept { return *engine_; }

 private:
  void check(int rc, const std::string& what) const {
    if (rc >= 0) return;
    std::string msg = "conveyor " + what + ": " + termination::error_string(rc) + " (state " +
                      termination::to_string(engine_->current_state()) + ")";
    if (!engine_->last_message().empty()) msg += ": " + engine_->last_message();
    throw error(msg);
  }

  std::unique_ptr<termination::engine> engine_;
};

}  // namespace convoy
