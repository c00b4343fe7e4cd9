// Elastic items and monster items over the streaming engine (Maley & DeVinney 2019, sec. 4.4.1).
// Behaviour reference: the C façade's etensor conveyor, with its blocking MPI_Recv loop in
// pull replaced by a receive started at the ticket and tested on later calls.
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/termination/elastic_engine.hpp>
#include <cstring>
#include <new>
#include <string>

namespace convoy::termination {

namespace {
constexpr std::byte k_small{0}, k_ticket{1};
constexpr std::size_t k_ticket_bytes = 24;  // {u64 size, u64 sequence number, u64 descriptor}
}  // namespace

namespace {
engine* non_null(engine* e) {
  if (!e) throw error("elastic_engine: null engine");
  return e;
}
}  // namespace

elastic_engine::elastic_engine(termination::engine* engine,
                               std::unique_ptr<aggregation::large_channel> channel,
                               std::size_t max_item_bytes)
    : conveyor_engine(non_null(engine)->rank(), engine->n_ranks()), bound_(max_item_bytes) {
  check_fit(engine, channel.get());
  engine_ = engine;
  channel_ = std::move(channel);
  small_max_ = engine_->max_item_bytes() - 1;
  if (bound_ == 0) bound_ = small_max_;
  stage_.assign(small_max_ + 1, std::byte{0});
}

elastic_engine::~elastic_engine() = default;

void elastic_engine::check_fit(termination::engine* engine,
                               const aggregation::large_channel* channel) const {
  if (!engine) throw error("elastic_engine: null engine");
  if (!engine->rules().carries_size || !engine->options().steady)
    throw error(
        "elastic_engine: the engine must be elastic and steady (tickets must leave "
        "even if their buffer never fills)");
  const std::size_t small = engine->max_item_bytes();
  if (small < k_ticket_bytes + 1)
    throw error("elastic_engine: a buffer holds at most " + std::to_string(small) +
                "-byte items, too small for a 25-byte ticket");
  if (stage_.size() && small - 1 != small_max_)
    throw error("elastic_engine: an attached engine must hold the same items as the first");
  if (bound_ > small - 1 && (!channel || channel->max_item_bytes() < bound_))
    throw error("elastic_engine: items up to " + std::to_string(bound_) +
                " bytes need a large-item channel of that bound");
}

void elastic_engine::attach(termination::engine* engine,
                            std::unique_ptr<aggregation::large_channel> channel) {
  if (refusal(current_state(), call::configure))  // between cycles only
    throw error("elastic_engine: attach while not DORMANT");
  check_fit(engine, channel ? channel.get() : channel_.get());
  engine_ = engine;
  if (channel) {
    channel_ = std::move(channel);
    held_ = false;
  }
}

int elastic_engine::begin(std::size_t default_bytes) {
  if (const auto rc = refusal(current_state(), call::begin)) return *rc;
  if (default_bytes > bound_) return error_size;
  const int rc = engine_->begin(0);  // the engine's rigid size is unused: sizes are ours
  if (rc <= 0) return rc;
  hot_.item_bytes = default_bytes;  // no inline path: push_ok stays false, the window empty
  hot_.pulls = 0;
  now_ = counters{};
  channel_mark_ = channel_ ? channel_->stats() : aggregation::large_channel::statistics{};
  return rc;
}

int elastic_engine::channel_failed(const std::exception& ex, bool alloc) noexcept {
  try {
    channel_message_ = ex.what();
  } catch (...) {
  }
  return alloc ? error_alloc : error_transport;
}

int elastic_engine::epush(const void* item, std::size_t bytes, int dest) noexcept {
  if (bytes > bound_) return error_size;
  if (bytes <= small_max_) {
    if (bytes && !item) return error_argument;
    if (bytes) std::memcpy(stage_.data(), item, bytes);
    stage_[bytes] = k_small;
    const int rc = engine_->epush(stage_.data(), bytes + 1, dest);
    if (rc > 0) count(&counters::pushes);
    return rc;
  }
  // A large item (sec. 4.4.1): its ticket through the engine, its bytes through the channel.
  if (const auto rc = refusal(current_state(), call::push)) return *rc;
  if (dest < 0 || dest >= n_ranks_) return error_rank;
  if (!item) return error_argument;
  std::uint64_t descriptor = 0;
  try {
    if (!channel_->send_ready()) return 0;  // one outgoing large item in flight per rank
    // The bytes are staged before the ticket leaves: the send cannot lack memory, and a
    // receiver that meets the ticket finds them (rendezvous, MP_Lite SHMEM notes).
    descriptor = channel_->stage_send(item, bytes, dest);
  } catch (const std::bad_alloc& ex) {
    return channel_failed(ex, true);
  } catch (const std::exception& ex) {
    return channel_failed(ex, false);
  }
  const std::uint64_t ticket[3] = {bytes, next_seq_, descriptor};
  std::memcpy(stage_.data(), ticket, k_ticket_bytes);
  stage_[k_ticket_bytes] = k_ticket;
  const int rc = engine_->epush(stage_.data(), k_ticket_bytes + 1, dest);
  if (rc <= 0) return rc;  // the staged item is replaced by the next one
  try {
    channel_->start_send();
  } catch (const std::exception& ex) {
    return channel_failed(ex, false);  // the ticket is out: only destruction is safe now
  }
  ++next_seq_;
  count(&counters::pushes);
  count(&counters::large_pushes);
  return 1;
}

int elastic_engine::pull_slow(item_view& out, bool rigid) noexcept {
  item_view v;
  const int rc = engine_->pull(v, false);
  if (rc <= 0) return rc;
  if (v.data[v.bytes - 1] != k_ticket) {
    if (rigid && v.bytes - 1 != hot_.item_bytes) {
      (void)engine_->unpull();
      return error_elastic;
    }
    out = item_view{v.data, v.bytes - 1, v.from};
    count(&counters::pulls);
    ++hot_.pulls;  // what the inline pull counts on the other kinds
    last_large_ = false;
    return 1;
  }
  std::uint64_t ticket[3];
  std::memcpy(ticket, v.data, k_ticket_bytes);
  const auto size = static_cast<std::size_t>(ticket[0]);
  if (rigid && size != hot_.item_bytes) {
    (void)engine_->unpull();
    return error_elastic;
  }
  const int got = take_large(out, size, ticket[1], ticket[2], v.from);
  if (got <= 0) (void)engine_->unpull();  // the ticket stays first in line
  return got;
}

// The large item announced by the ticket just pulled: its bytes if they have all arrived
// (1), else 0 with the receive started or still running.
int elastic_engine::take_large(item_view& out, std::size_t size, std::uint64_t seq,
                               std::uint64_t descriptor, int from) noexcept {
  const bool again = held_ && held_from_ == from && held_seq_ == seq;  // pulled, then unpulled
  if (!again) {
    try {
      if (!channel_->receiving()) {
        held_ = false;  // the incoming buffer is about to be overwritten
        channel_->start_receive(from, size, descriptor);
        recv_from_ = from;
        recv_seq_ = seq;
      } else if (recv_from_ != from || recv_seq_ != seq) {
        // Cannot happen: a ticket left in line stays first until its bytes arrive.
        channel_message_ = "elastic_engine: a second large item met while one is arriving";
        return error_transport;
      }
      if (!channel_->receive_done()) {
        count(&counters::waits);
        return 0;
      }
    } catch (const std::bad_alloc& ex) {
      return channel_failed(ex, true);
    } catch (const std::exception& ex) {
      return channel_failed(ex, false);
    }
    held_ = true;
    held_from_ = from;
    held_seq_ = seq;
  }
  out = item_view{channel_->incoming(), size, from};
  count(&counters::pulls);
  count(&counters::large_pulls);
  ++hot_.pulls;
  last_large_ = true;
  return 1;
}

int elastic_engine::unpull() noexcept {
  const int rc = engine_->unpull();
  if (rc > 0) {  // pulls count every delivery, as the engine's; large_pulls each item once
    count(&counters::unpulls);
    if (last_large_) {
      --now_.large_pulls;
      --life_.large_pulls;
    }
  }
  return rc;
}

int elastic_engine::advance(bool done) noexcept {
  if (channel_) {
    try {
      channel_->progress();
    } catch (const std::exception& ex) {
      return channel_failed(ex, false);
    }
  }
  return engine_->advance(done);
}

int elastic_engine::flush() noexcept { return engine_->flush(); }

int elastic_engine::reset() noexcept { return engine_->reset(); }

engine_stats elastic_engine::stats(bool cumulative) const {
  const counters& c = cumulative ? life_ : now_;
  engine_stats s = engine_->stats(cumulative);
  s.pushes = c.pushes;  // the client's items (the engine's own count tickets as items)
  s.pulls = c.pulls;
  s.unpulls = c.unpulls;  // the engine's own count the tickets left in line too
  if (channel_) {         // a large item's bytes are one more message
    const aggregation::large_channel::statistics& ch = channel_->stats();
    s.buffers_sent += ch.sent - (cumulative ? 0 : channel_mark_.sent);
    s.bytes_sent += ch.sent_bytes - (cumulative ? 0 : channel_mark_.sent_bytes);
  }
  s.memory_high_water = std::max(s.memory_high_water, static_cast<std::uint64_t>(memory_bytes()));
  return s;
}

elastic_stats elastic_engine::detailed_stats(bool cumulative) const {
  const counters& c = cumulative ? life_ : now_;
  elastic_stats s;
  s.engine = engine_->stats(cumulative);
  s.pushes = c.pushes;
  s.pulls = c.pulls;
  s.large_pushes = c.large_pushes;
  s.large_pulls = c.large_pulls;
  s.waits = c.waits;
  if (channel_) s.channel = channel_->stats();
  return s;
}

std::size_t elastic_engine::memory_bytes() const noexcept {
  return engine_->memory_bytes() + (channel_ ? channel_->memory_bytes() : 0);
}

std::size_t elastic_engine::max_memory_bytes() const noexcept {
  return engine_->max_memory_bytes() + (channel_ ? channel_->max_memory_bytes() : 0);
}

const std::string& elastic_engine::last_message() const noexcept {
  return channel_message_.empty() ? engine_->last_message() : channel_message_;
}

}  // namespace convoy::termination
