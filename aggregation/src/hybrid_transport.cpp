#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/aggregation/rma_transport.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace convoy::aggregation {

hybrid_transport::hybrid_transport(MPI_Comm comm, link_predicate use_shm,
                                   std::shared_ptr<buffer_source> memory, shm_filling filling,
                                   const node_map& nodes, int mpi_credit_window, window_reuse reuse)
    : mpi_(comm, std::move(memory), mpi_credit_window),
      shm_(comm, filling, nodes, reuse),
      use_shm_(std::move(use_shm)) {}

void hybrid_transport::open(const link_layout& layout) {
  // Both ends decide alike: on_node is symmetric, and so must use_shm_ be.
  auto pick = [&](const std::vector<link>& links, std::vector<bool>& shm) {
    shm.assign(links.size(), false);
    for (std::size_t i = 0; i < links.size(); ++i) {
      const int peer = links[i].peer;
      shm[i] = peer >= 0 && peer < layout.n_ranks && peer != layout.rank && shm_.on_node(peer) &&
               (!use_shm_ || use_shm_(layout.rank, peer));
      n_shm_links_ += shm[i] ? 1 : 0;
    }
  };
  n_shm_links_ = 0;
  pick(layout.out_links, shm_out_);
  pick(layout.in_links, shm_in_);
  std::vector<bool> mpi_out = shm_out_, mpi_in = shm_in_;
  mpi_out.flip();
  mpi_in.flip();
  // With every link on the node, MPI has nothing to poll: skip it on the hot path.
  mpi_links_ = n_shm_links_ < layout.out_links.size() + layout.in_links.size();
  // shm first: its open() is collective over the node and throws on every node rank
  // alike, so a bad layout cannot leave one rank's MPI side open and another's not.
  // With a buffer source mpi_.open() is collective over all ranks (AGG-11): a failure on
  // one node's shared-memory side is carried into it, so other nodes do not wait.
  std::exception_ptr shm_failure;
  try {
    shm_.open(layout, shm_out_, shm_in_);
  } catch (...) {
    shm_failure = std::current_exception();
  }
  mpi_.open(layout, std::move(mpi_out), std::move(mpi_in), std::move(shm_failure));
}

std::byte* hybrid_transport::acquire(int out_link) noexcept {
  return out_medium(out_link) == link_medium::shm ? shm_.acquire(out_link) : mpi_.acquire(out_link);
}

void hybrid_transport::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (out_medium(out_link) == link_medium::shm)
    shm_.post(out_link, buffer, bytes);
  else
    mpi_.post(out_link, buffer, bytes);
}

bool hybrid_transport::poll(received& out) {
  if (!mpi_links_) return shm_.poll(out);
  shm_first_ = !shm_first_;
  if (shm_first_) return shm_.poll(out) || mpi_.poll(out);
  return mpi_.poll(out) || shm_.poll(out);
}

void hybrid_transport::release(const received& r) {
  if (in_medium(r.in_link) == link_medium::shm)
    shm_.release(r);
  else
    mpi_.release(r);
}

void hybrid_transport::progress() {
  if (mpi_links_) mpi_.progress();
}

bool hybrid_transport::idle() const noexcept { return mpi_.idle() && shm_.idle(); }

std::size_t hybrid_transport::memory_bytes() const noexcept {
  return mpi_.memory_bytes() + shm_.memory_bytes();
}

std::size_t hybrid_transport::max_memory_bytes() const noexcept {
  return mpi_.max_memory_bytes() + shm_.max_memory_bytes();
}

namespace {

// `s`: the settings for node discovery; null: read them (base::settings::from_env).
std::unique_ptr<transport> make_kind(MPI_Comm comm, base::transport_kind kind,
                                     std::shared_ptr<buffer_source> memory, const base::settings* s,
                                     window_reuse reuse) {
  if (comm == MPI_COMM_NULL) throw convoy::error("make_transport: communicator is MPI_COMM_NULL");
  if (kind == base::transport_kind::rma) return std::make_unique<rma_transport>(comm);
  // AGG-60: shared memory stops at the node boundary of topology discovery, emulated or real.
  std::optional<node_map> nodes;
  if (kind != base::transport_kind::mpi) {
    nodes = s ? discover_node_map(comm, *s) : discover_node_map(comm);
    const auto group = shared_node_group(comm, *nodes);  // AGG-68: once per communicator
    if (kind == base::transport_kind::automatic) {
      // AGG-161: shared memory only where MPI makes shared windows; else one line, once.
      kind = group->largest > 1 && group->shared_windows ? base::transport_kind::shm
                                                         : base::transport_kind::mpi;
      if (group->largest > 1 && !group->shared_windows)
        base::notice_once(comm, "convoy.shared_windows",
                          "convoy: " + group->shared_windows_failure +
                              ", so links inside a node use MPI point-to-point");
    } else if (!group->shared_windows && group->largest > 1) {
      throw convoy::error("CONVOY_TRANSPORT=" + std::string(base::transport_kind_name(kind)) + ": " +
                          group->shared_windows_failure +
                          " (use CONVOY_TRANSPORT=auto or mpi)");
    }
  }
  // Every MPI link's credit window (AGG-67), alone or beside shared memory.
  constexpr int window = default_credit_window;
  if (kind == base::transport_kind::mpi)
    return std::make_unique<mpi_transport>(comm, std::move(memory), window);
  return std::make_unique<hybrid_transport>(
      comm, hybrid_transport::link_predicate{}, std::move(memory),
      kind == base::transport_kind::shm_zero_copy ? shm_filling::zero_copy : shm_filling::staged,
      *nodes, window, reuse);
}

}  // namespace

std::unique_ptr<transport> make_transport(MPI_Comm comm, base::transport_kind kind,
                                          std::shared_ptr<buffer_source> memory,
                                          window_reuse reuse) {
  return make_kind(comm, kind, std::move(memory), nullptr, reuse);
}

std::unique_ptr<transport> make_transport(MPI_Comm comm, const base::settings& s,
                                          std::shared_ptr<buffer_source> memory,
                                          window_reuse reuse) {
  return make_kind(comm, s.transport_or_auto(), std::move(memory), &s, reuse);
}

}  // namespace convoy::aggregation
