// The simulated network with time (timed_network.hpp; docs/sim-reference.md "The model"):
// the network's construction and queries, and the event loop that moves buffers and
// credits along the links. One rank's endpoint is in timed_endpoint.cpp.
#include <algorithm>
#include <convoy/aggregation/timed_network.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "timed_network_impl.hpp"

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
    lazy_arena::give_back(from.out_.buffer(ch.out_link, s), from.out_.buffer_bytes());
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
