// shm_transport's set-up and tear-down: the node group and its window pool (AGG-60,
// AGG-70), and open() — what the node ranks tell each other, the checks every rank makes
// alike, the window, and the places of the rings in it (M2).
#include <algorithm>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/aggregation/shm_transport.hpp>
#include <convoy/base/comm_cache.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "shm_ring_layout.hpp"

namespace convoy::aggregation {

namespace {

namespace shm = detail::shm;

constexpr const char* who = "shm_transport";

// What one node rank tells the others at open() (all ints; capacity is <= INT_MAX by
// validate_layout): ok, capacity, n_buffers, n_out, n_in, then (stage, peer node rank)
// for each served out-link and each served in-link, in link-id order; then its window
// pool (AGG-70): the next serial, the number of kept windows and their serials.
struct announcement {
  bool ok = false;
  std::size_t buffer_bytes = 0;
  int n_buffers = 0;
  std::vector<std::pair<int, int>> outs, ins;
  std::uint64_t next = 0;           // the serial its window pool would give a new window
  std::vector<std::uint64_t> kept;  // serials of the windows it keeps
};

// in_index[r][(stage, sender)] = position of the ring in r's segment.
using ring_index = std::vector<std::map<std::pair<int, int>, int>>;

bool mpi_finalized() noexcept {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

// Every node rank's announcement, gathered on the node communicator (MPI_Allgatherv).
std::vector<announcement> exchange(MPI_Comm node_comm, int node_n, const std::vector<int>& mine) {
  const int my_len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(node_n)), displs(static_cast<std::size_t>(node_n));
  CONVOY_MPI_CHECK(MPI_Allgather(&my_len, 1, MPI_INT, lens.data(), 1, MPI_INT, node_comm));
  int total = 0;
  for (int i = 0; i < node_n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += lens[static_cast<std::size_t>(i)];
  }
  std::vector<int> all(static_cast<std::size_t>(total));
  CONVOY_MPI_CHECK(MPI_Allgatherv(mine.data(), my_len, MPI_INT, all.data(), lens.data(),
                                  displs.data(), MPI_INT, node_comm));
  std::vector<announcement> ann(static_cast<std::size_t>(node_n));
  for (int r = 0; r < node_n; ++r) {
    const int* p = all.data() + displs[static_cast<std::size_t>(r)];
    announcement& a = ann[static_cast<std::size_t>(r)];
    a.ok = p[0] != 0;
    a.buffer_bytes = static_cast<std::size_t>(p[1]);
    a.n_buffers = p[2];
    p += 5;
    for (int i = 0; i < all[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]) + 3];
         ++i, p += 2)
      a.outs.emplace_back(p[0], p[1]);
    for (int i = 0; i < all[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]) + 4];
         ++i, p += 2)
      a.ins.emplace_back(p[0], p[1]);
    a.next = static_cast<std::uint64_t>(p[0]);
    for (int i = 0; i < p[1]; ++i) a.kept.push_back(static_cast<std::uint64_t>(p[2 + i]));
  }
  return ann;
}

// The same checks on every node rank, from the same announcements, so every rank throws or
// none does: every rank opened, and both ends of every link serve it here and agree on its
// buffers. Returns where each rank's in-rings lie in its segment.
ring_index check_links(const std::vector<announcement>& ann, const std::vector<int>& node_to_comm) {
  const auto node_n = static_cast<int>(ann.size());
  auto comm_rank = [&](int nr) {
    return std::to_string(node_to_comm[static_cast<std::size_t>(nr)]);
  };
  for (int r = 0; r < node_n; ++r)
    if (!ann[static_cast<std::size_t>(r)].ok)
      throw convoy::error("shm_transport: open() failed on rank " + comm_rank(r) +
                          " of this node (see its message); no transport was opened");
  ring_index in_index(static_cast<std::size_t>(node_n));
  std::vector<std::set<std::pair<int, int>>> out_set(static_cast<std::size_t>(node_n));
  for (int r = 0; r < node_n; ++r) {
    const announcement& a = ann[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < a.ins.size(); ++i)
      in_index[static_cast<std::size_t>(r)][a.ins[i]] = static_cast<int>(i);
    for (const auto& o : a.outs) out_set[static_cast<std::size_t>(r)].insert(o);
  }
  for (int s = 0; s < node_n; ++s)
    for (const auto& [stage, r] : ann[static_cast<std::size_t>(s)].outs) {
      const std::string text = "shm_transport: link of stage " + std::to_string(stage) +
                               " from rank " + comm_rank(s) + " to rank " + comm_rank(r);
      if (!in_index[static_cast<std::size_t>(r)].count({stage, s}))
        throw convoy::error(text + ": the receiver does not serve it through shared memory");
      const announcement& a = ann[static_cast<std::size_t>(s)];
      const announcement& b = ann[static_cast<std::size_t>(r)];
      if (a.buffer_bytes != b.buffer_bytes || a.n_buffers != b.n_buffers)
        throw convoy::error(
            text + ": the ends disagree on buffer_bytes (" + std::to_string(a.buffer_bytes) +
            " vs " + std::to_string(b.buffer_bytes) + ") or n_buffers (" +
            std::to_string(a.n_buffers) + " vs " + std::to_string(b.n_buffers) + ")");
    }
  for (int r = 0; r < node_n; ++r)
    for (const auto& [stage, s] : ann[static_cast<std::size_t>(r)].ins)
      if (!out_set[static_cast<std::size_t>(s)].count({stage, r}))
        throw convoy::error("shm_transport: link of stage " + std::to_string(stage) +
                            " from rank " + comm_rank(s) + " to rank " + comm_rank(r) +
                            ": the sender does not serve it through shared memory");
  return in_index;
}

}  // namespace

namespace detail {

// The windows transports on one node communicator left behind (AGG-70), kept with it.
// Serials are agreed by the node ranks, so one window has one serial everywhere.
class shm_window_pool {
 public:
  struct window {
    std::uint64_t serial = 0;
    MPI_Win win = MPI_WIN_NULL;
    std::vector<MPI_Aint> sizes;  // every node rank's segment bytes
  };
  shm_window_pool() = default;
  shm_window_pool(const shm_window_pool&) = delete;
  shm_window_pool& operator=(const shm_window_pool&) = delete;
  ~shm_window_pool() {  // collective over the node: every rank keeps the same windows
    if (mpi_finalized()) return;
    for (window& w : kept) {
      MPI_Win_unlock_all(w.win);
      MPI_Win_free(&w.win);
    }
  }

  std::mutex lock;
  std::uint64_t next = 1;
  std::vector<window> kept;  // by increasing serial
};

}  // namespace detail

// What open() learns from the node ranks, step by step.
struct shm_transport::node_handshake {
  int my_node = 0;                // this rank in the node communicator
  std::string local_error;        // this rank's own failed check, announced first
  std::vector<int> mine;          // what this rank announces
  std::vector<announcement> ann;  // what every node rank announced, by node rank
  ring_index in_index;
};

shm_transport::shm_transport(MPI_Comm comm, shm_filling filling, const node_map& nodes,
                             window_reuse reuse)
    : reuse_(reuse), filling_(filling) {
  if (comm == MPI_COMM_NULL) throw convoy::error("shm_transport: communicator is MPI_COMM_NULL");
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size_));
  node_ = shared_node_group(comm, nodes);  // AGG-60: the emulated node when there is one
  node_comm_ = node_->comm;
  const int node_size = node_->size;
  node_to_comm_ = node_->parent_rank;
  const char* key = "convoy.aggregation.shm_windows";
  windows_ = base::comm_cached_as<detail::shm_window_pool>(node_comm_, key);
  if (!windows_) {
    windows_ = std::make_shared<detail::shm_window_pool>();
    base::comm_cache(node_comm_, key, windows_);
  }
  for (int i = 0; i < node_size; ++i)
    comm_to_node_.emplace_back(node_to_comm_[static_cast<std::size_t>(i)], i);
  std::sort(comm_to_node_.begin(), comm_to_node_.end());
}

shm_transport::~shm_transport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (win_ == MPI_WIN_NULL) return;
  if (reuse_ == window_reuse::keep) {  // AGG-70: for the next transport on the node
    const std::lock_guard<std::mutex> hold(windows_->lock);
    auto& kept = windows_->kept;
    if (kept.size() < max_kept_windows) {
      detail::shm_window_pool::window w{win_serial_, win_, std::move(win_sizes_)};
      auto at = std::find_if(kept.begin(), kept.end(),
                             [&](const auto& k) { return k.serial > win_serial_; });
      kept.insert(at, std::move(w));
      win_ = MPI_WIN_NULL;
      return;
    }
  }
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void shm_transport::open(const link_layout& layout) {
  std::vector<bool> out(layout.out_links.size(), true), in(layout.in_links.size(), true);
  open(layout, std::move(out), std::move(in));
}

void shm_transport::open(const link_layout& layout, std::vector<bool> serve_out,
                         std::vector<bool> serve_in) {
  if (opened_) throw convoy::error("shm_transport: open() called twice");
  node_handshake h;
  CONVOY_MPI_CHECK(MPI_Comm_rank(node_comm_, &h.my_node));

  // 1. Local checks. A failure is announced, not thrown at once: the other node ranks
  //    are about to wait for us in the exchange.
  announce(layout, serve_out, serve_in, h);

  // 2. Exchange on the node communicator.
  h.ann = exchange(node_comm_, node_size(), h.mine);

  // 3. The same checks on every node rank, so every rank throws or none does.
  if (!h.local_error.empty()) throw convoy::error(h.local_error);
  h.in_index = check_links(h.ann, node_to_comm_);

  // 4. The window: every rank hosts its in-rings (M2), with a line of slack to align.
  layout_ = layout;
  n_ = layout.n_buffers;
  slot_bytes_ = shm::round_up(layout.buffer_bytes, shm::line);
  const std::size_t n_in_rings = h.ann[static_cast<std::size_t>(h.my_node)].ins.size();
  hosted_bytes_ = n_in_rings * ring_bytes(layout.buffer_bytes, n_);
  adopt_window(h);
  void* base = nullptr;
  {
    MPI_Aint size = 0;
    int disp = 0;
    CONVOY_MPI_CHECK(MPI_Win_shared_query(win_, h.my_node, &size, &disp, &base));
  }
  // First touch by the host (NUMA-local pages); counters start at zero, also in a window
  // used before. The barrier orders the zeroing before any sender's first use.
  if (n_in_rings > 0) std::memset(shm::align_up(base), 0, hosted_bytes_);
  CONVOY_MPI_CHECK(MPI_Win_sync(win_));
  CONVOY_MPI_CHECK(MPI_Barrier(node_comm_));
  CONVOY_MPI_CHECK(MPI_Win_sync(win_));

  // 5. The rings: ours in our segment, each out-ring in its receiver's.
  serve_out_ = std::move(serve_out);
  serve_in_ = std::move(serve_in);
  map_rings(h, n_in_rings > 0 ? shm::align_up(base) : nullptr);
  opened_ = true;
}

void shm_transport::announce(const link_layout& layout, const std::vector<bool>& serve_out,
                             const std::vector<bool>& serve_in, node_handshake& h) const {
  std::vector<int>& mine = h.mine;
  mine = {0, 0, 0, 0, 0};
  try {
    detail::validate_layout(layout, who);
    detail::check_layout_rank(layout, rank_, size_, who);
    if (serve_out.size() != layout.out_links.size() || serve_in.size() != layout.in_links.size())
      throw convoy::error("shm_transport: serve_out/serve_in must have one flag per link");
    std::vector<int> outs, ins;
    auto collect = [&](const std::vector<link>& links, const std::vector<bool>& serve,
                       std::vector<int>& list) {
      for (std::size_t i = 0; i < links.size(); ++i) {
        if (!serve[i]) continue;
        const int nr = node_rank(links[i].peer);
        if (nr < 0)
          throw convoy::error("shm_transport: link (stage " + std::to_string(links[i].stage) +
                              ", peer " + std::to_string(links[i].peer) +
                              ") leaves the node; serve it with mpi_transport or use "
                              "hybrid_transport");
        list.push_back(links[i].stage);
        list.push_back(nr);
      }
    };
    collect(layout.out_links, serve_out, outs);
    collect(layout.in_links, serve_in, ins);
    mine = {1, static_cast<int>(layout.buffer_bytes), layout.n_buffers,
            static_cast<int>(outs.size() / 2), static_cast<int>(ins.size() / 2)};
    mine.insert(mine.end(), outs.begin(), outs.end());
    mine.insert(mine.end(), ins.begin(), ins.end());
  } catch (const convoy::error& e) {
    h.local_error = e.what();
    mine = {0, 0, 0, 0, 0};
  }
  {  // the kept windows (AGG-70): the next serial, how many, their serials
    const std::lock_guard<std::mutex> hold(windows_->lock);
    mine.push_back(static_cast<int>(windows_->next));
    mine.push_back(static_cast<int>(windows_->kept.size()));
    for (const auto& w : windows_->kept) mine.push_back(static_cast<int>(w.serial));
  }
}

// A window an earlier transport left serves when every node rank keeps it and its segments
// have exactly the sizes needed (AGG-70); every rank decides alike from the announcements.
// Otherwise a new one is allocated, locked for as long as it lives.
void shm_transport::adopt_window(const node_handshake& h) {
  const std::vector<announcement>& ann = h.ann;
  std::vector<MPI_Aint> need(ann.size(), 0);
  std::uint64_t agreed_next = 0;
  for (std::size_t r = 0; r < ann.size(); ++r) {
    const announcement& a = ann[r];
    if (!a.ins.empty())
      need[r] =
          static_cast<MPI_Aint>(a.ins.size() * ring_bytes(a.buffer_bytes, a.n_buffers) + shm::line);
    agreed_next = std::max(agreed_next, a.next);
  }
  {
    const std::lock_guard<std::mutex> hold(windows_->lock);
    auto& kept = windows_->kept;
    for (auto w = kept.begin(); w != kept.end(); ++w) {
      const bool everywhere = std::all_of(ann.begin(), ann.end(), [&](const announcement& a) {
        return std::find(a.kept.begin(), a.kept.end(), w->serial) != a.kept.end();
      });
      if (everywhere && w->sizes == need) {
        win_ = w->win;
        win_serial_ = w->serial;
        win_sizes_ = std::move(w->sizes);
        kept.erase(w);
        break;
      }
    }
    windows_->next = std::max(windows_->next, agreed_next);
  }
  if (win_ != MPI_WIN_NULL) return;
  MPI_Info info = MPI_INFO_NULL;
  CONVOY_MPI_CHECK(MPI_Info_create(&info));
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* ignored = nullptr;
  const int rc = MPI_Win_allocate_shared(need[static_cast<std::size_t>(h.my_node)], 1, info,
                                         node_comm_, &ignored, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    convoy::detail::throw_mpi_error("MPI_Win_allocate_shared", rc, __FILE__, __LINE__);
  win_serial_ = agreed_next;
  win_sizes_ = need;
  {
    const std::lock_guard<std::mutex> hold(windows_->lock);
    windows_->next = agreed_next + 1;
  }
  CONVOY_MPI_CHECK(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));
  CONVOY_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));  // kept while the window lives
}

// Our in-rings lie one after the other from `own`, in in-link order; an out-ring lies in
// its receiver's segment, at the place the receiver's announcement gives it (M2).
void shm_transport::map_rings(const node_handshake& h, std::byte* own) {
  auto segment_of = [&](int nr) {
    MPI_Aint size = 0;
    int disp = 0;
    void* p = nullptr;
    CONVOY_MPI_CHECK(MPI_Win_shared_query(win_, nr, &size, &disp, &p));
    return shm::align_up(p);
  };
  const std::size_t rb = ring_bytes(layout_.buffer_bytes, n_);
  const std::size_t n_out = layout_.out_links.size(), n_in = layout_.in_links.size();
  const auto n = static_cast<std::size_t>(n_);
  out_.assign(n_out, out_ring{});
  stage_.clear();
  stage_.resize(n_out);
  in_.assign(n_in, in_ring{});
  free_.assign(n_out * n, 0);
  out_state_.assign(n_out * n, slot_state::free);
  held_.assign(n_in * n, false);
  std::map<int, std::byte*> peer_base;
  for (std::size_t l = 0; l < n_out; ++l) {
    if (!serve_out_[l]) continue;
    const link& k = layout_.out_links[l];
    const int nr = node_rank(k.peer);
    auto it = peer_base.find(nr);
    if (it == peer_base.end()) it = peer_base.emplace(nr, segment_of(nr)).first;
    const int idx = h.in_index[static_cast<std::size_t>(nr)].at({k.stage, h.my_node});
    out_[l].base = it->second + static_cast<std::size_t>(idx) * rb;
    out_[l].n_free = n_;
    for (int s = 0; s < n_; ++s) free_[l * n + static_cast<std::size_t>(s)] = n_ - 1 - s;
  }
  std::size_t idx = 0;
  for (std::size_t l = 0; l < n_in; ++l) {
    if (!serve_in_[l]) continue;
    in_[l].base = own + idx++ * rb;
    served_in_.push_back(static_cast<int>(l));
  }
}

}  // namespace convoy::aggregation
