#include <algorithm>
#include <atomic>
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

namespace convoy::aggregation {

namespace {

constexpr std::size_t staging_alignment = 4096;

constexpr const char* who = "shm_transport";
constexpr std::size_t line = detail::buffer_alignment;  // a cache line

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "the rings need address-free (lock-free) 64-bit atomics across processes");

constexpr std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

// Ring layout (README "Shared memory", M2), offsets from the ring's start:
//   [0]                   posted tail (uint64), written by the sender only
//   [line]                posted entries: n × {slot, bytes} (uint64 each), sender-written
//   [freed_tail]          freed tail (uint64), written by the receiver only, own line
//   [freed_tail + line]   freed entries: n × slot (uint64), receiver-written
//   [slots]               n slots of round_up(capacity, line)
struct ring_offsets {
  std::size_t posted_entries, freed_tail, freed_entries, slots, total;
};

ring_offsets offsets(std::size_t capacity, int n_buffers) {
  const auto n = static_cast<std::size_t>(n_buffers);
  ring_offsets o{};
  o.posted_entries = line;
  o.freed_tail = o.posted_entries + round_up(16 * n, line);
  o.freed_entries = o.freed_tail + line;
  o.slots = o.freed_entries + round_up(8 * n, line);
  o.total = o.slots + n * round_up(capacity, line);
  return o;
}

std::atomic_ref<std::uint64_t> counter(std::byte* p) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p));
}
std::uint64_t* words(std::byte* p) { return reinterpret_cast<std::uint64_t*>(p); }

std::byte* align_up(void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return static_cast<std::byte*>(p) + (round_up(a, line) - a);
}

// What one node rank tells the others at open() (all ints; capacity is <= INT_MAX by
// validate_layout): ok, capacity, n_buffers, n_out, n_in, then (stage, peer node rank)
// for each served out-link and each served in-link, in link-id order; then its window
// pool (AGG-70): the next serial, the number of kept windows and their serials.
struct announcement {
  bool ok = false;
  std::size_t capacity_bytes = 0;
  int n_buffers = 0;
  std::vector<std::pair<int, int>> outs, ins;
  std::uint64_t next = 0;           // the serial its window pool would give a new window
  std::vector<std::uint64_t> kept;  // serials of the windows it keeps
};

bool mpi_finalized() noexcept {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
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

std::size_t shm_transport::ring_bytes(std::size_t capacity_bytes, int n_buffers) noexcept {
  return offsets(capacity_bytes, n_buffers).total;
}

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

int shm_transport::node_rank(int peer) const noexcept {
  const auto it =
      std::lower_bound(comm_to_node_.begin(), comm_to_node_.end(), std::pair<int, int>{peer, -1});
  return it != comm_to_node_.end() && it->first == peer ? it->second : -1;
}

bool shm_transport::on_node(int peer) const noexcept { return node_rank(peer) >= 0; }

std::byte* shm_transport::slot_ptr(std::byte* ring, int slot) const noexcept {
  return ring + offsets(layout_.capacity_bytes, n_).slots +
         static_cast<std::size_t>(slot) * slot_bytes_;
}

void shm_transport::open(const link_layout& layout) {
  std::vector<bool> out(layout.out_links.size(), true), in(layout.in_links.size(), true);
  open(layout, std::move(out), std::move(in));
}

void shm_transport::open(const link_layout& layout, std::vector<bool> serve_out,
                         std::vector<bool> serve_in) {
  if (opened_) throw convoy::error("shm_transport: open() called twice");
  const int node_n = node_size();
  int my_node = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(node_comm_, &my_node));

  // 1. Local checks. A failure is announced, not thrown at once: the other node ranks
  //    are about to wait for us in the exchange.
  std::string local_error;
  std::vector<int> mine{0, 0, 0, 0, 0};
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
    mine = {1, static_cast<int>(layout.capacity_bytes), layout.n_buffers,
            static_cast<int>(outs.size() / 2), static_cast<int>(ins.size() / 2)};
    mine.insert(mine.end(), outs.begin(), outs.end());
    mine.insert(mine.end(), ins.begin(), ins.end());
  } catch (const convoy::error& e) {
    local_error = e.what();
    mine = {0, 0, 0, 0, 0};
  }
  {  // the kept windows (AGG-70): the next serial, how many, their serials
    const std::lock_guard<std::mutex> hold(windows_->lock);
    mine.push_back(static_cast<int>(windows_->next));
    mine.push_back(static_cast<int>(windows_->kept.size()));
    for (const auto& w : windows_->kept) mine.push_back(static_cast<int>(w.serial));
  }

  // 2. Exchange on the node communicator.
  const int my_len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(node_n)), displs(static_cast<std::size_t>(node_n));
  CONVOY_MPI_CHECK(MPI_Allgather(&my_len, 1, MPI_INT, lens.data(), 1, MPI_INT, node_comm_));
  int total = 0;
  for (int i = 0; i < node_n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += lens[static_cast<std::size_t>(i)];
  }
  std::vector<int> all(static_cast<std::size_t>(total));
  CONVOY_MPI_CHECK(MPI_Allgatherv(mine.data(), my_len, MPI_INT, all.data(), lens.data(),
                                  displs.data(), MPI_INT, node_comm_));
  std::vector<announcement> ann(static_cast<std::size_t>(node_n));
  for (int r = 0; r < node_n; ++r) {
    const int* p = all.data() + displs[static_cast<std::size_t>(r)];
    announcement& a = ann[static_cast<std::size_t>(r)];
    a.ok = p[0] != 0;
    a.capacity_bytes = static_cast<std::size_t>(p[1]);
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

  // 3. The same checks on every node rank, so every rank throws or none does.
  if (!local_error.empty()) throw convoy::error(local_error);
  auto comm_rank = [&](int nr) {
    return std::to_string(node_to_comm_[static_cast<std::size_t>(nr)]);
  };
  for (int r = 0; r < node_n; ++r)
    if (!ann[static_cast<std::size_t>(r)].ok)
      throw convoy::error("shm_transport: open() failed on rank " + comm_rank(r) +
                          " of this node (see its message); no transport was opened");
  // in_index[r][(stage, sender)] = position of the ring in r's segment.
  std::vector<std::map<std::pair<int, int>, int>> in_index(static_cast<std::size_t>(node_n));
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
      if (a.capacity_bytes != b.capacity_bytes || a.n_buffers != b.n_buffers)
        throw convoy::error(
            text + ": the ends disagree on capacity_bytes (" + std::to_string(a.capacity_bytes) +
            " vs " + std::to_string(b.capacity_bytes) + ") or n_buffers (" +
            std::to_string(a.n_buffers) + " vs " + std::to_string(b.n_buffers) + ")");
    }
  for (int r = 0; r < node_n; ++r)
    for (const auto& [stage, s] : ann[static_cast<std::size_t>(r)].ins)
      if (!out_set[static_cast<std::size_t>(s)].count({stage, r}))
        throw convoy::error("shm_transport: link of stage " + std::to_string(stage) +
                            " from rank " + comm_rank(s) + " to rank " + comm_rank(r) +
                            ": the sender does not serve it through shared memory");

  // 4. The window: every rank hosts its in-rings (M2), with a line of slack to align. A
  //    window an earlier transport left serves when every node rank keeps it and its
  //    segments have exactly the sizes needed (AGG-70); every rank decides alike from `ann`.
  layout_ = layout;
  n_ = layout.n_buffers;
  slot_bytes_ = round_up(layout.capacity_bytes, line);
  const std::size_t rb = ring_bytes(layout.capacity_bytes, n_);
  const std::size_t n_in_rings = ann[static_cast<std::size_t>(my_node)].ins.size();
  hosted_bytes_ = n_in_rings * rb;
  std::vector<MPI_Aint> need(static_cast<std::size_t>(node_n), 0);
  std::uint64_t agreed_next = 0;
  for (int r = 0; r < node_n; ++r) {
    const announcement& a = ann[static_cast<std::size_t>(r)];
    if (!a.ins.empty())
      need[static_cast<std::size_t>(r)] =
          static_cast<MPI_Aint>(a.ins.size() * ring_bytes(a.capacity_bytes, a.n_buffers) + line);
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
  if (win_ == MPI_WIN_NULL) {
    MPI_Info info = MPI_INFO_NULL;
    CONVOY_MPI_CHECK(MPI_Info_create(&info));
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* ignored = nullptr;
    const int rc = MPI_Win_allocate_shared(need[static_cast<std::size_t>(my_node)], 1, info,
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
  void* base = nullptr;
  {
    MPI_Aint size = 0;
    int disp = 0;
    CONVOY_MPI_CHECK(MPI_Win_shared_query(win_, my_node, &size, &disp, &base));
  }
  // First touch by the host (NUMA-local pages); counters start at zero, also in a window
  // used before. The barrier orders the zeroing before any sender's first use.
  if (n_in_rings > 0) std::memset(align_up(base), 0, hosted_bytes_);
  CONVOY_MPI_CHECK(MPI_Win_sync(win_));
  CONVOY_MPI_CHECK(MPI_Barrier(node_comm_));
  CONVOY_MPI_CHECK(MPI_Win_sync(win_));

  auto segment_of = [&](int nr) {
    MPI_Aint size = 0;
    int disp = 0;
    void* p = nullptr;
    CONVOY_MPI_CHECK(MPI_Win_shared_query(win_, nr, &size, &disp, &p));
    return align_up(p);
  };
  const std::size_t n_out = layout.out_links.size(), n_in = layout.in_links.size();
  const auto n = static_cast<std::size_t>(n_);
  serve_out_ = std::move(serve_out);
  serve_in_ = std::move(serve_in);
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
    const link& k = layout.out_links[l];
    const int nr = node_rank(k.peer);
    auto it = peer_base.find(nr);
    if (it == peer_base.end()) it = peer_base.emplace(nr, segment_of(nr)).first;
    const int idx = in_index[static_cast<std::size_t>(nr)].at({k.stage, my_node});
    out_[l].base = it->second + static_cast<std::size_t>(idx) * rb;
    out_[l].n_free = n_;
    for (int s = 0; s < n_; ++s) free_[l * n + static_cast<std::size_t>(s)] = n_ - 1 - s;
  }
  std::byte* own = n_in_rings > 0 ? align_up(base) : nullptr;
  std::size_t idx = 0;
  for (std::size_t l = 0; l < n_in; ++l) {
    if (!serve_in_[l]) continue;
    in_[l].base = own + idx++ * rb;
    served_in_.push_back(static_cast<int>(l));
  }
  opened_ = true;
}

std::byte* shm_transport::acquire(int out_link) noexcept {
  if (!opened_ || out_link < 0 || static_cast<std::size_t>(out_link) >= out_.size() ||
      !serve_out_[static_cast<std::size_t>(out_link)])
    return nullptr;
  const auto l = static_cast<std::size_t>(out_link);
  out_ring& o = out_[l];
  const auto n = static_cast<std::size_t>(n_);
  // Staged: one buffer per link, handed out again only once posted.
  if (filling_ == shm_filling::staged && o.staged_slot >= 0) return nullptr;
  if (o.n_free == 0) {
    // Take back what the receiver freed (acquire pairs with its release-store, M1).
    const ring_offsets off = offsets(layout_.capacity_bytes, n_);
    const std::uint64_t tail = counter(o.base + off.freed_tail).load(std::memory_order_acquire);
    const std::uint64_t* entries = words(o.base + off.freed_entries);
    for (; o.freed_seen < tail; ++o.freed_seen) {
      const std::uint64_t slot = entries[o.freed_seen % n];
      if (slot < n && out_state_[l * n + slot] == slot_state::posted) {
        out_state_[l * n + slot] = slot_state::free;
        free_[l * n + static_cast<std::size_t>(o.n_free++)] = static_cast<int>(slot);
      }
    }
    if (o.n_free == 0) return nullptr;
  }
  const int slot = free_[l * n + static_cast<std::size_t>(--o.n_free)];
  out_state_[l * n + static_cast<std::size_t>(slot)] = slot_state::filling;
  if (filling_ == shm_filling::zero_copy) return slot_ptr(o.base, slot);
  if (!stage_[l]) {
    // Page-aligned: the copy into the slot runs at full speed only when the two page
    // offsets do not alias (see the README's note on staging buffers).
    auto* b = static_cast<std::byte*>(
        ::operator new (slot_bytes_, std::align_val_t{staging_alignment}, std::nothrow));
    if (!b) {
      out_state_[l * n + static_cast<std::size_t>(slot)] = slot_state::free;
      ++o.n_free;
      return nullptr;
    }
    stage_[l].reset(b);
    staged_bytes_ += slot_bytes_;
  }
  o.staged_slot = slot;
  return stage_[l].get();
}

std::size_t shm_transport::max_memory_bytes() const noexcept {
  if (filling_ == shm_filling::zero_copy) return hosted_bytes_;
  std::size_t served = 0;
  for (bool s : serve_out_) served += s ? 1 : 0;
  return hosted_bytes_ + served * slot_bytes_;
}

void shm_transport::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (!opened_) throw convoy::error("shm_transport: post() before open()");
  if (out_link < 0 || static_cast<std::size_t>(out_link) >= out_.size() ||
      !serve_out_[static_cast<std::size_t>(out_link)])
    throw convoy::error("shm_transport: post on out-link " + std::to_string(out_link) +
                        ", which this transport does not serve");
  const auto l = static_cast<std::size_t>(out_link);
  const auto n = static_cast<std::size_t>(n_);
  out_ring& o = out_[l];
  std::byte* const first = slot_ptr(o.base, 0);
  std::byte* const staging = buffer;
  if (filling_ == shm_filling::staged) {
    if (!stage_[l] || buffer != stage_[l].get() || o.staged_slot < 0)
      throw convoy::error(
          "shm_transport: post of a buffer that is not an acquired, unposted staging buffer of "
          "out-link " +
          std::to_string(out_link));
    buffer = slot_ptr(o.base, o.staged_slot);
  }
  const std::ptrdiff_t d = buffer - first;
  const bool inside = buffer != nullptr && d >= 0 &&
                      static_cast<std::size_t>(d) < n * slot_bytes_ &&
                      static_cast<std::size_t>(d) % slot_bytes_ == 0;
  const std::size_t slot = inside ? static_cast<std::size_t>(d) / slot_bytes_ : 0;
  if (!inside || out_state_[l * n + slot] != slot_state::filling)
    throw convoy::error(
        "shm_transport: post of a buffer that is not an acquired, unposted buffer of out-link " +
        std::to_string(out_link));
  if (bytes < sizeof(buffer_header) || bytes > layout_.capacity_bytes)
    throw convoy::error("shm_transport: post of " + std::to_string(bytes) + " bytes on out-link " +
                        std::to_string(out_link) + "; must be in [" +
                        std::to_string(sizeof(buffer_header)) + ", " +
                        std::to_string(layout_.capacity_bytes) + "]");
  if (buffer != staging) {
    std::memcpy(buffer, staging, bytes);
    o.staged_slot = -1;
  }
  out_state_[l * n + slot] = slot_state::posted;
  const ring_offsets off = offsets(layout_.capacity_bytes, n_);
  std::uint64_t* entry = words(o.base + off.posted_entries) + 2 * (o.posted % n);
  entry[0] = slot;
  entry[1] = bytes;
  ++o.posted;
  // Publishes the slot's bytes and the entry together (M1).
  counter(o.base).store(o.posted, std::memory_order_release);
}

bool shm_transport::poll(received& out) {
  if (!opened_ || served_in_.empty()) return false;
  const auto n = static_cast<std::size_t>(n_);
  const ring_offsets off = offsets(layout_.capacity_bytes, n_);
  const std::size_t m = served_in_.size();
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t pos = (cursor_ + k) % m;
    const int link = served_in_[pos];
    in_ring& i = in_[static_cast<std::size_t>(link)];
    if (i.taken == i.tail_seen) {
      i.tail_seen = counter(i.base).load(std::memory_order_acquire);
      if (i.taken == i.tail_seen) continue;
    }
    const std::uint64_t* entry = words(i.base + off.posted_entries) + 2 * (i.taken % n);
    const std::uint64_t slot = entry[0], bytes = entry[1];
    if (slot >= n || bytes < sizeof(buffer_header) || bytes > layout_.capacity_bytes ||
        held_[static_cast<std::size_t>(link) * n + slot])
      throw convoy::error("shm_transport: corrupt ring of in-link " + std::to_string(link) +
                          ": entry " + std::to_string(i.taken) + " names slot " +
                          std::to_string(slot) + " with " + std::to_string(bytes) + " bytes");
    ++i.taken;
    held_[static_cast<std::size_t>(link) * n + slot] = true;
    out.in_link = link;
    out.slot = static_cast<int>(slot);
    out.data = slot_ptr(i.base, static_cast<int>(slot));
    out.bytes = static_cast<std::size_t>(bytes);
    cursor_ = (pos + 1) % m;  // the next poll starts after this link (AGG-9)
    return true;
  }
  return false;
}

void shm_transport::release(const received& r) {
  if (!opened_) throw convoy::error("shm_transport: release() before open()");
  const auto n = static_cast<std::size_t>(n_);
  const bool ok =
      r.in_link >= 0 && static_cast<std::size_t>(r.in_link) < in_.size() &&
      serve_in_[static_cast<std::size_t>(r.in_link)] && r.slot >= 0 && r.slot < n_ &&
      held_[static_cast<std::size_t>(r.in_link) * n + static_cast<std::size_t>(r.slot)] &&
      slot_ptr(in_[static_cast<std::size_t>(r.in_link)].base, r.slot) == r.data;
  if (!ok)
    throw convoy::error(
        "shm_transport: release of a buffer that poll() did not hand out or that was already "
        "released (in_link " +
        std::to_string(r.in_link) + ", slot " + std::to_string(r.slot) + ")");
  const auto l = static_cast<std::size_t>(r.in_link);
  held_[l * n + static_cast<std::size_t>(r.slot)] = false;
  in_ring& i = in_[l];
  const ring_offsets off = offsets(layout_.capacity_bytes, n_);
  words(i.base + off.freed_entries)[i.freed % n] = static_cast<std::uint64_t>(r.slot);
  ++i.freed;
  // Our reads of the slot happen before the sender's next write to it (M1).
  counter(i.base + off.freed_tail).store(i.freed, std::memory_order_release);
}

}  // namespace convoy::aggregation
