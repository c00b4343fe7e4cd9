// The simulated network with time (timed_network.hpp; docs/sim-reference.md "The model").
#include <algorithm>
#include <convoy/aggregation/detail/book_endpoint.hpp>
#include <convoy/aggregation/detail/lazy_arena.hpp>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/aggregation/timed_network.hpp>
#include <convoy/base/error.hpp>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace convoy::aggregation {

const char* link_class_name(link_class c) noexcept {
  switch (c) {
    case link_class::same_socket:
      return "same_socket";
    case link_class::same_node:
      return "same_node";
    case link_class::off_node:
      return "off_node";
  }
  return "?";
}

namespace detail {

class timed_endpoint;

/// One directed link (sender, receiver, stage) and its buffers in flight, FIFO. Packed:
/// a large simulation holds one per link of every rank.
struct timed_channel {
  int src = 0, dst = 0;
  timed_endpoint* sender = nullptr;
  timed_endpoint* receiver = nullptr;
  double last_arrival = 0;
  int out_link = -1;
  int in_link = -1;
  std::uint16_t stage = 0;
  std::uint8_t plane = 0;
  link_class cls = link_class::off_node;
  std::uint16_t flight_head = 0;  ///< sender slots in flight, in timed_state::flight_slots
  std::uint16_t flight_size = 0;
};

enum class event_kind : int { wake, arrival, credit };

struct event {
  double time;
  std::uint64_t seq;  ///< ties in time go in creation order: runs are deterministic
  event_kind kind;
  int index;  ///< rank (wake) or channel (arrival, credit)
  /// Arrival, credit: messages on the longest causal chain this one ends (critical path).
  std::uint32_t depth;
  bool operator>(const event& o) const noexcept {
    return time != o.time ? time > o.time : seq > o.seq;
  }
};

struct timed_state {
  int n_ranks = 0;
  int n_buffers = 0;
  std::vector<int> node_of, socket_of;
  link_cost costs[n_link_classes];
  std::vector<double> clock, port_free, nic_free;
  std::vector<std::uint8_t> scheduled;
  std::vector<std::uint64_t> activity;
  std::vector<std::uint32_t> depth;  ///< per rank: the longest message chain that reached it
  std::vector<timed_channel> channels;
  std::vector<int> flight_slots;  ///< n_buffers entries per channel
  std::unordered_map<std::uint64_t, int> channel_of;
  std::priority_queue<event, std::vector<event>, std::greater<>> events;
  std::uint64_t next_seq = 0;
  std::size_t in_flight = 0;
  timed_network_stats stats;
  lazy_arena arena;
  buffer_memory memory = buffer_memory::pages;
  bool links_complete = false;  ///< channel_of dropped: no endpoint may open any more

  // Planes (endpoint()'s `plane`) take bits 58-63, stages bits 42-57, ranks 21 bits each.
  static std::uint64_t key(int src, int dst, int stage, int plane) {
    return (static_cast<std::uint64_t>(plane) << 58) | (static_cast<std::uint64_t>(stage) << 42) |
           (static_cast<std::uint64_t>(src) << 21) | static_cast<std::uint64_t>(dst);
  }
  void push(double t, event_kind k, int index, std::uint32_t d = 0) {
    events.push({t, next_seq++, k, index, d});
  }
  void wake(int rank, double t) {
    auto& c = clock[static_cast<std::size_t>(rank)];
    c = std::max(c, t);
    if (scheduled[static_cast<std::size_t>(rank)]) return;
    scheduled[static_cast<std::size_t>(rank)] = 1;
    push(c, event_kind::wake, rank);
  }
  int channel(int src, int dst, int stage, int plane) {
    const auto [it, fresh] =
        channel_of.try_emplace(key(src, dst, stage, plane), static_cast<int>(channels.size()));
    if (fresh) {
      timed_channel ch;
      ch.src = src;
      ch.dst = dst;
      ch.stage = static_cast<std::uint16_t>(stage);
      ch.plane = static_cast<std::uint8_t>(plane);
      ch.cls = class_of(src, dst);
      channels.push_back(ch);
      flight_slots.resize(flight_slots.size() + static_cast<std::size_t>(n_buffers), -1);
    }
    return it->second;
  }
  [[nodiscard]] link_class class_of(int a, int b) const noexcept {
    const auto i = static_cast<std::size_t>(a), j = static_cast<std::size_t>(b);
    if (node_of[i] != node_of[j]) return link_class::off_node;
    return socket_of[i] != socket_of[j] ? link_class::same_node : link_class::same_socket;
  }
  void arrive(int c, double t, std::uint32_t d);
  bool next_rank(int& rank);
  void depart(int c, int sender_rank, int slot, std::size_t bytes, std::size_t capacity);
};

class timed_endpoint final : public book_endpoint {
 public:
  timed_endpoint(std::shared_ptr<timed_state> state, int rank, int plane)
      : state_(std::move(state)), rank_(rank), plane_(plane) {}
  ~timed_endpoint() override;

  void open(const link_layout& layout) override;
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override;
  [[nodiscard]] std::size_t room(int out_link, const std::byte* buffer) const noexcept override;
  [[nodiscard]] std::byte* grow(int out_link, std::byte* buffer, std::size_t used_bytes,
                                std::size_t at_least, std::size_t& room) noexcept override;
  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  [[nodiscard]] bool poll(received& out) override;
  void release(const received& r) override;
  void progress() override;

  void credit_returned(int out_link);
  void send_ready(int out_link);

  using book_endpoint::in_;  // the deliveries copy between endpoints' books
  using book_endpoint::out_;

 private:
  std::shared_ptr<timed_state> state_;
  int rank_;
  std::vector<int> out_channel_;
  std::vector<int> in_channel_;
  std::vector<int> credit_ready_;  ///< out-links with queued buffers that got credit
  std::vector<bool> in_credit_ready_;
  bool heap_ = false;              ///< buffer_memory::heap: buffers are heap blocks (AGG-144)
  bool growable_ = false;          ///< the layout's: send buffers may start small
  std::size_t out_of_memory_ = 0;  ///< a heap buffer of this size could not be had
  int plane_;  ///< timed_network::endpoint()'s plane: its links are apart from other planes'
};

namespace {
constexpr const char* who = "timed network";

// Heap-mode buffers (AGG-144): a block of `room` bytes behind a 16-byte prefix that
// records the room; nullptr when memory runs out. The endpoint then fails its next
// progress() with an error naming the size: the engines cannot treat it as backpressure
// without changing the run.
constexpr std::size_t heap_prefix = 16;
constexpr std::size_t heap_first_room = 128;

std::byte* heap_alloc(std::size_t room) noexcept {
  auto* raw = static_cast<std::byte*>(std::malloc(room + heap_prefix));
  if (!raw) return nullptr;
  std::memcpy(raw, &room, sizeof room);
  return raw + heap_prefix;
}
std::size_t heap_room(const std::byte* p) noexcept {
  std::size_t room = 0;
  std::memcpy(&room, p - heap_prefix, sizeof room);
  return room;
}
void heap_free(std::byte* p) noexcept {
  if (p) std::free(p - heap_prefix);
}
}  // namespace

timed_endpoint::~timed_endpoint() {
  if (heap_) {  // buffers still held, being filled or in flight
    for (int l = 0; l < out_.n_links(); ++l)
      for (int k = 0; k < out_.n_buffers(); ++k) heap_free(out_.buffer(l, k));
    for (int l = 0; l < in_.n_links(); ++l)
      for (int k = 0; k < in_.n_buffers(); ++k) heap_free(in_.buffer(l, k));
  }
  // Events of a detached channel are dropped when they come due.
  for (const int c : out_channel_) state_->channels[static_cast<std::size_t>(c)].sender = nullptr;
  for (const int c : in_channel_) state_->channels[static_cast<std::size_t>(c)].receiver = nullptr;
}

void timed_endpoint::open(const link_layout& layout) {
  if (opened_) throw convoy::error("timed network: open() called twice");
  if (state_->links_complete) throw convoy::error("timed network: open() after links_complete()");
  validate_layout(layout, who);
  timed_state& st = *state_;
  check_layout_rank(layout, rank_, st.n_ranks, who);
  if (st.n_buffers == 0) {
    st.n_buffers = layout.n_buffers;
    st.flight_slots.reserve(st.channels.capacity() * static_cast<std::size_t>(st.n_buffers));
  }
  if (st.n_buffers != layout.n_buffers)
    throw convoy::error("timed network: every endpoint needs the same n_buffers");
  const auto n_out = layout.out_links.size(), n_in = layout.in_links.size();
  for (const link& l : layout.out_links) {
    const auto it = st.channel_of.find(timed_state::key(rank_, l.peer, l.stage, plane_));
    if (it != st.channel_of.end() && st.channels[static_cast<std::size_t>(it->second)].sender)
      throw convoy::error("timed network: a link of rank " + std::to_string(rank_) +
                          " is already open at its sender");
  }
  out_.init(static_cast<int>(n_out), layout.n_buffers, layout.capacity_bytes,
            std::vector<bool>(n_out, true));
  in_.init(static_cast<int>(n_in), layout.n_buffers, layout.capacity_bytes,
           std::vector<bool>(n_in, true));
  heap_ = st.memory == buffer_memory::heap;
  growable_ = layout.growable;
  if (heap_) {  // AGG-144: buffers come and go with what they hold
    out_.manage_outside();
    in_.manage_outside();
  } else {  // AGG-141: one lazily committed block; untouched buffers cost no memory.
    std::byte* block = st.arena.carve(out_.block_bytes() + in_.block_bytes());
    out_.use_block(block);
    in_.use_block(block + out_.block_bytes());
  }
  in_credit_ready_.assign(n_out, false);
  for (std::size_t i = 0; i < n_out; ++i) {
    const int c = st.channel(rank_, layout.out_links[i].peer, layout.out_links[i].stage, plane_);
    st.channels[static_cast<std::size_t>(c)].sender = this;
    st.channels[static_cast<std::size_t>(c)].out_link = static_cast<int>(i);
    out_channel_.push_back(c);
  }
  for (std::size_t i = 0; i < n_in; ++i) {
    const int c = st.channel(layout.in_links[i].peer, rank_, layout.in_links[i].stage, plane_);
    st.channels[static_cast<std::size_t>(c)].receiver = this;
    st.channels[static_cast<std::size_t>(c)].in_link = static_cast<int>(i);
    in_channel_.push_back(c);
  }
  opened_ = true;
}

std::byte* timed_endpoint::acquire(int out_link) noexcept {
  if (!heap_) return book_endpoint::acquire(out_link);
  if (!opened_) return nullptr;
  const int slot = out_.acquire_slot(out_link);
  if (slot < 0) return nullptr;
  const std::size_t room =
      growable_ ? std::min(heap_first_room, out_.capacity_bytes()) : out_.capacity_bytes();
  std::byte* p = heap_alloc(room);
  if (!p) out_of_memory_ = room;
  out_.set_buffer(out_link, slot, p);
  return p;
}

std::size_t timed_endpoint::room(int /*out_link*/, const std::byte* buffer) const noexcept {
  return heap_ && growable_ ? heap_room(buffer) : 0;
}

std::byte* timed_endpoint::grow(int out_link, std::byte* buffer, std::size_t used_bytes,
                                std::size_t at_least, std::size_t& room) noexcept {
  if (!heap_ || !growable_) return nullptr;
  const int slot = out_.filling_slot(out_link, buffer);
  if (slot < 0) return nullptr;
  room = std::min(std::max(at_least, 2 * heap_room(buffer)), out_.capacity_bytes());
  std::byte* p = heap_alloc(room);
  if (!p) {
    out_of_memory_ = room;
    return nullptr;
  }
  std::memcpy(p, buffer, used_bytes);
  heap_free(buffer);
  out_.set_buffer(out_link, slot, p);
  return p;
}

void timed_endpoint::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (!opened_) throw convoy::error("timed network: post() before open()");
  timed_state& st = *state_;
  out_.post(out_link, buffer, bytes, who);
  const int c = out_channel_[static_cast<std::size_t>(out_link)];
  const link_cost& cost = st.costs[static_cast<int>(st.channels[static_cast<std::size_t>(c)].cls)];
  st.clock[static_cast<std::size_t>(rank_)] += cost.alpha_s;
  ++st.activity[static_cast<std::size_t>(rank_)];
  send_ready(out_link);
  st.stats.max_queued = std::max(st.stats.max_queued, out_.n_queued());
}

void timed_endpoint::send_ready(int out_link) {
  const int c = out_channel_[static_cast<std::size_t>(out_link)];
  for (int s = out_.next_sendable(out_link); s >= 0; s = out_.next_sendable(out_link))
    state_->depart(c, rank_, s, out_.bytes(out_link, s), out_.capacity_bytes());
}

bool timed_endpoint::poll(received& out) {
  if (!opened_ || !in_.poll(out)) return false;
  timed_state& st = *state_;
  const int c = in_channel_[static_cast<std::size_t>(out.in_link)];
  st.clock[static_cast<std::size_t>(rank_)] +=
      st.costs[static_cast<int>(st.channels[static_cast<std::size_t>(c)].cls)].alpha_s;
  ++st.activity[static_cast<std::size_t>(rank_)];
  return true;
}

void timed_endpoint::release(const received& r) {
  if (!opened_) throw convoy::error("timed network: release() before open()");
  in_.release(r, who);
  if (heap_) {
    heap_free(r.data);
    in_.set_buffer(r.in_link, r.slot, nullptr);
  } else {
    lazy_arena::give_back(r.data, in_.capacity_bytes());
  }
  timed_state& st = *state_;
  const int c = in_channel_[static_cast<std::size_t>(r.in_link)];
  const timed_channel& ch = st.channels[static_cast<std::size_t>(c)];
  ++st.activity[static_cast<std::size_t>(rank_)];
  // The credit travels back to the sender (piggybacked credits are not modelled).
  st.push(st.clock[static_cast<std::size_t>(rank_)] + st.costs[static_cast<int>(ch.cls)].latency_s,
          event_kind::credit, c, st.depth[static_cast<std::size_t>(rank_)] + 1);
}

void timed_endpoint::credit_returned(int out_link) {
  out_.add_credits(out_link, 1, who);
  const auto l = static_cast<std::size_t>(out_link);
  if (out_.has_queued(out_link) && !in_credit_ready_[l]) {
    in_credit_ready_[l] = true;
    credit_ready_.push_back(out_link);
  }
}

void timed_endpoint::progress() {
  if (out_of_memory_ != 0)
    throw convoy::error("timed network: rank " + std::to_string(rank_) +
                        ": out of memory for a buffer of " + std::to_string(out_of_memory_) +
                        " bytes");
  // As mpi_transport: buffers that waited for credit leave in the sender's progress().
  for (const int l : credit_ready_) {
    in_credit_ready_[static_cast<std::size_t>(l)] = false;
    send_ready(l);
  }
  credit_ready_.clear();
}

void timed_state::depart(int c, int sender_rank, int slot, std::size_t bytes,
                         std::size_t capacity) {
  timed_channel& ch = channels[static_cast<std::size_t>(c)];
  const link_cost& cost = costs[static_cast<int>(ch.cls)];
  const auto s = static_cast<std::size_t>(sender_rank);
  // Off-node buffers share their node's NIC; on the node each rank injects on its own.
  double& port = ch.cls == link_class::off_node ? nic_free[static_cast<std::size_t>(node_of[s])]
                                                : port_free[s];
  const double start = std::max(clock[s], port);
  port = start + cost.beta_s_per_byte * static_cast<double>(bytes);
  const double arrival = std::max(port + cost.latency_s, ch.last_arrival);
  ch.last_arrival = arrival;
  flight_slots[static_cast<std::size_t>(c) * static_cast<std::size_t>(n_buffers) +
               static_cast<std::size_t>((ch.flight_head + ch.flight_size) % n_buffers)] = slot;
  ++ch.flight_size;
  ++in_flight;
  stats.max_in_flight = std::max(stats.max_in_flight, in_flight);
  traffic_counts& k = stats.per_class[static_cast<int>(ch.cls)];
  ++k.messages;
  k.bytes += bytes;
  if (stats.per_stage.size() <= static_cast<std::size_t>(ch.stage))
    stats.per_stage.resize(static_cast<std::size_t>(ch.stage) + 1);
  ++stats.per_stage[static_cast<std::size_t>(ch.stage)].messages;
  stats.per_stage[static_cast<std::size_t>(ch.stage)].bytes += bytes;
  stats.fill_sum += static_cast<double>(bytes) / static_cast<double>(capacity);
  push(arrival, event_kind::arrival, c, depth[s] + 1);
}

void timed_state::arrive(int c, double t, std::uint32_t d) {
  timed_channel& ch = channels[static_cast<std::size_t>(c)];
  const std::size_t base = static_cast<std::size_t>(c) * static_cast<std::size_t>(n_buffers);
  const int s = flight_slots[base + static_cast<std::size_t>(ch.flight_head)];
  ch.flight_head = static_cast<std::uint16_t>((ch.flight_head + 1) % n_buffers);
  --ch.flight_size;
  --in_flight;
  if (ch.sender == nullptr || ch.receiver == nullptr) return;  // an end was destroyed
  timed_endpoint& from = *ch.sender;
  timed_endpoint& to = *ch.receiver;
  const int r = to.in_.take_free(ch.in_link);
  if (r < 0)  // the credit a sender spent guarantees a free receive buffer
    throw std::logic_error("timed network: credit invariant broken on a delivery");
  const std::size_t bytes = from.out_.bytes(ch.out_link, s);
  if (memory == buffer_memory::heap) {  // the block itself moves to the receiver
    to.in_.set_buffer(ch.in_link, r, from.out_.buffer(ch.out_link, s));
    from.out_.set_buffer(ch.out_link, s, nullptr);
  } else {
    std::memcpy(to.in_.buffer(ch.in_link, r), from.out_.buffer(ch.out_link, s), bytes);
  }
  to.in_.expect(ch.in_link, r);
  to.in_.arrived(ch.in_link, r, bytes);
  from.out_.send_done(ch.out_link, s);
  if (memory == buffer_memory::pages)
    lazy_arena::give_back(from.out_.buffer(ch.out_link, s), from.out_.capacity_bytes());
  auto& dd = depth[static_cast<std::size_t>(ch.dst)];
  dd = std::max(dd, d);
  wake(ch.dst, t);
}

bool timed_state::next_rank(int& rank) {
  while (!events.empty()) {
    const event e = events.top();
    events.pop();
    if (e.kind == event_kind::wake) {
      rank = e.index;
      scheduled[static_cast<std::size_t>(rank)] = 0;
      auto& c = clock[static_cast<std::size_t>(rank)];
      c = std::max(c, e.time);
      return true;
    }
    if (e.kind == event_kind::arrival) {
      arrive(e.index, e.time, e.depth);
      continue;
    }
    timed_channel& ch = channels[static_cast<std::size_t>(e.index)];
    if (ch.sender == nullptr) continue;
    ch.sender->credit_returned(ch.out_link);
    auto& ds = depth[static_cast<std::size_t>(ch.src)];
    ds = std::max(ds, e.depth);
    wake(ch.src, e.time);
  }
  return false;
}

}  // namespace detail

timed_network::timed_network(std::vector<int> node_of, std::vector<int> socket_of,
                             const link_cost (&costs)[n_link_classes], buffer_memory memory)
    : state_(std::make_shared<detail::timed_state>()) {
  state_->memory = memory;
  const auto p = node_of.size();
  if (p < 1 || p > (std::size_t{1} << 21))
    throw convoy::error("timed network: " + std::to_string(p) + " ranks, outside [1, 2^21]");
  if (socket_of.size() != p)
    throw convoy::error("timed network: " + std::to_string(p) + " node entries but " +
                        std::to_string(socket_of.size()) + " socket entries");
  int n_nodes = 0;
  for (const int n : node_of) {
    if (n < 0) throw convoy::error("timed network: a negative node index");
    n_nodes = std::max(n_nodes, n + 1);
  }
  for (int c = 0; c < n_link_classes; ++c) {
    const link_cost& k = costs[c];
    if (!(k.alpha_s >= 0) || !(k.latency_s >= 0) || !(k.beta_s_per_byte >= 0))
      throw convoy::error(std::string("timed network: a negative or undefined cost for ") +
                          link_class_name(static_cast<link_class>(c)));
    state_->costs[c] = k;
  }
  detail::timed_state& st = *state_;
  st.n_ranks = static_cast<int>(p);
  st.node_of = std::move(node_of);
  st.socket_of = std::move(socket_of);
  st.clock.assign(p, 0.0);
  st.port_free.assign(p, 0.0);
  st.nic_free.assign(static_cast<std::size_t>(n_nodes), 0.0);
  st.scheduled.assign(p, 0);
  st.activity.assign(p, 0);
  st.depth.assign(p, 0);
}

timed_network::~timed_network() = default;

std::unique_ptr<transport> timed_network::endpoint(int rank, int plane) {
  if (rank < 0 || rank >= state_->n_ranks)
    throw convoy::error("timed network: endpoint rank " + std::to_string(rank) +
                        " out of range [0, " + std::to_string(state_->n_ranks) + ")");
  if (plane < 0 || plane >= max_planes)
    throw convoy::error("timed network: plane " + std::to_string(plane) + " out of range [0, " +
                        std::to_string(max_planes) + ")");
  return std::make_unique<detail::timed_endpoint>(state_, rank, plane);
}

void timed_network::reserve_links(std::size_t n) {
  detail::timed_state& st = *state_;
  st.channels.reserve(n);
  st.channel_of.reserve(n);
}

void timed_network::links_complete() {
  detail::timed_state& st = *state_;
  st.links_complete = true;
  std::unordered_map<std::uint64_t, int>().swap(st.channel_of);
  st.channels.shrink_to_fit();
  st.flight_slots.shrink_to_fit();
}

int timed_network::n_ranks() const noexcept { return state_->n_ranks; }

link_class timed_network::class_of(int src, int dst) const noexcept {
  return state_->class_of(src, dst);
}

double timed_network::clock(int rank) const noexcept {
  return state_->clock[static_cast<std::size_t>(rank)];
}

void timed_network::charge(int rank, double seconds) noexcept {
  state_->clock[static_cast<std::size_t>(rank)] += seconds;
}

void timed_network::wake(int rank) { state_->wake(rank, clock(rank)); }

bool timed_network::next_rank(int& rank) { return state_->next_rank(rank); }

std::uint64_t timed_network::activity(int rank) const noexcept {
  return state_->activity[static_cast<std::size_t>(rank)];
}

timed_network_stats timed_network::stats() const { return state_->stats; }

std::uint32_t timed_network::depth(int rank) const noexcept {
  return state_->depth[static_cast<std::size_t>(rank)];
}

}  // namespace convoy::aggregation
