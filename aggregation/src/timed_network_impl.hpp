#pragma once
// The simulated network with time, inside (private to timed_network): its directed links
// and the buffers in flight on them, the event queue that orders arrivals, credits and
// wake-ups, and one rank's endpoint (docs/sim-reference.md "The model").
#include <algorithm>
#include <convoy/aggregation/detail/book_endpoint.hpp>
#include <convoy/aggregation/detail/lazy_arena.hpp>
#include <convoy/aggregation/timed_network.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

namespace convoy::aggregation::detail {

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

}  // namespace convoy::aggregation::detail
