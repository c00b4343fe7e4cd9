// One rank's endpoint of the timed network: the transport calls, each charged to the
// rank's clock, and the buffers in pages or on the heap (AGG-141, AGG-144).
#include <algorithm>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/base/error.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timed_network_impl.hpp"

namespace convoy::aggregation::detail {

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
  out_.init(static_cast<int>(n_out), layout.n_buffers, layout.buffer_bytes,
            std::vector<bool>(n_out, true));
  in_.init(static_cast<int>(n_in), layout.n_buffers, layout.buffer_bytes,
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
      growable_ ? std::min(heap_first_room, out_.buffer_bytes()) : out_.buffer_bytes();
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
  room = std::min(std::max(at_least, 2 * heap_room(buffer)), out_.buffer_bytes());
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
    state_->depart(c, rank_, s, out_.bytes(out_link, s), out_.buffer_bytes());
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
    lazy_arena::give_back(r.data, in_.buffer_bytes());
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

}  // namespace convoy::aggregation::detail
