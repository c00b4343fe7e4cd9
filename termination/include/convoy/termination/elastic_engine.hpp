#pragma once
/// @file
/// Elastic items of any size up to a bound over the streaming engine (Maley & DeVinney 2019,
/// sec. 4.4, 4.4.1; conveyor_api/README.md, API-14..16). An item that fits a buffer travels in the
/// engine; a larger ("monster") item sends a ticket through the engine, in order with the
/// small items, and its bytes through an aggregation::large_channel. Nothing blocks: a
/// pull that meets a ticket whose bytes have not all arrived returns 0 ("nothing yet") and
/// leaves the ticket first in line; the transfer progresses in advance() and pull().
///
/// Engine items carry the client's bytes and one kind byte (0: small item, 1: ticket); a
/// ticket's payload is {u64 size, u64 sequence number of its sender, u64 the channel's
/// descriptor (where a rendezvous channel's sender holds the bytes; 0 for two-sided)}. The engine
/// must be elastic and steady (a ticket must leave even if its buffer never fills: the "urgent
/// buffer" of sec. 4.4.1). Calls return the engine's codes (termination/engine.hpp).
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace convoy::termination {

struct elastic_stats {
  termination::engine_stats engine;  ///< the engine's own (tickets count as items)
  std::uint64_t pushes = 0;          ///< items accepted, small and large
  std::uint64_t pulls = 0;           ///< items delivered, small and large
  std::uint64_t large_pushes = 0;    ///< of the pushes, items sent through the channel
  std::uint64_t large_pulls = 0;     ///< of the pulls, items received through the channel
  std::uint64_t waits = 0;           ///< pulls that met a large item not yet arrived
  aggregation::large_channel::statistics channel;  ///< lifetime, this rank's channel
};

class elastic_engine final : public termination::conveyor_engine {
 public:
  /// The least engine item size the elastic kind (untyped_conveyor) is built with: a
  /// ticket's 24 bytes, its kind byte, and one byte more.
  static constexpr std::size_t min_buffered_bytes = 26;

  /// Over `engine` (not owned; elastic and steady) and `channel` (may be null when no item
  /// can be larger than a buffer). Items up to `max_item_bytes` are accepted (0: up to
  /// the largest that fits a buffer). Throws convoy::error if the engine is not elastic
  /// and steady, its buffers cannot hold a ticket, or the bound needs a channel that is
  /// missing or smaller.
  elastic_engine(termination::engine* engine, std::unique_ptr<aggregation::large_channel> channel,
                 std::size_t max_item_bytes);
  ~elastic_engine() override;
  elastic_engine(const elastic_engine&) = delete;
  elastic_engine& operator=(const elastic_engine&) = delete;

  /// Another engine (e.g. rebuilt at every begin with DYNAMIC buffers) and/or channel
  /// (null keeps the current one). Only while DORMANT; throws convoy::error otherwise or
  /// if they do not fit as in the constructor.
  void attach(termination::engine* engine,
              std::unique_ptr<aggregation::large_channel> channel = {});

  /// DORMANT -> WORKING (collective, as the engine's). `default_bytes` is the size of the
  /// rigid push()/pull() items. Returns 1, error_state, error_size (default above the bound).
  int begin(std::size_t default_bytes) override;

  /// Pushes `bytes` (0 allowed) to `dest`. Returns 1; 0 when the engine's path is full or
  /// the previous large item's send has not completed (rendezvous: its receiver has not
  /// fetched it yet; advance, pull, retry); error_size
  /// above the bound (nothing moved); error_state, error_rank, error_argument;
  /// error_alloc / error_transport when the channel fails (message in last_message()).
  /// push() (conveyor_engine's; this kind has no inline path) is epush() of default_bytes().
  [[nodiscard]] int epush(const void* item, std::size_t bytes, int dest) noexcept override;
  /// Never called: this kind publishes no lanes.
  void lane_full(std::uint32_t) noexcept override {}
  /// pull(out, false): the next item, 1 and `out` (data valid until the next pull,
  /// unpull, advance or reset; not aligned), 0 if none is ready or the next is a large
  /// item whose bytes have not all arrived (it stays first in line), error_state in
  /// DORMANT, error_alloc / error_transport when the channel fails. pull(out) (rigid): as
  /// epull for an item of default_bytes(); an item of another size is not taken: returns
  /// error_elastic and leaves it first in line (for epull).
  [[nodiscard]] int epull(termination::item_view& out) noexcept { return pull(out, false); }
  /// Puts back the last pulled item (a large one is not transferred again). As the engine.
  [[nodiscard]] int unpull() noexcept override;
  /// Progresses the channel, then advances the engine. As the engine's advance.
  [[nodiscard]] int advance(bool done) noexcept override;
  int flush() noexcept override;
  int reset() noexcept override;
  /// The engine's sending(), or a large item's send still in flight on the channel.
  [[nodiscard]] bool sending() const noexcept override {
    return engine_->sending() || (channel_ && !channel_->idle());
  }

  /// The engine's state: the conveyor has one, the engine's (TERM-9).
  [[nodiscard]] termination::state current_state() const noexcept override {
    return engine_->current_state();
  }

  [[nodiscard]] termination::engine* engine() noexcept { return engine_; }
  [[nodiscard]] aggregation::large_channel* channel() noexcept { return channel_.get(); }
  [[nodiscard]] std::size_t default_bytes() const noexcept { return hot_.item_bytes; }
  /// Largest item accepted.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept override { return bound_; }
  /// Largest item that travels inside the engine (larger ones go through the channel).
  [[nodiscard]] std::size_t max_small_bytes() const noexcept { return small_max_; }
  /// The engine's counters, with this conveyor's pushes, pulls and unpulls (small and
  /// large; the engine's count tickets and their returns too) and the channel's messages
  /// and bytes in buffers_sent and bytes_sent.
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const override;
  /// Counters since begin or over the lifetime (the channel's: lifetime only).
  [[nodiscard]] elastic_stats detailed_stats(bool cumulative = false) const;
  /// The engine's memory plus the channel's (0 / 2 x bound at most).
  [[nodiscard]] std::size_t memory_bytes() const noexcept override;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override;
  /// The last channel failure, else the engine's last message.
  [[nodiscard]] const std::string& last_message() const noexcept override;

 private:
  struct counters {
    std::uint64_t pushes = 0, pulls = 0, unpulls = 0, large_pushes = 0, large_pulls = 0, waits = 0;
  };
  void check_fit(termination::engine* engine, const aggregation::large_channel* channel) const;
  [[nodiscard]] int push_slow(const void* item, int dest) noexcept override {
    return epush(item, hot_.item_bytes, dest);
  }
  [[nodiscard]] int pull_slow(termination::item_view& out, bool rigid) noexcept override;
  [[nodiscard]] int take_large(termination::item_view& out, std::size_t size, std::uint64_t seq,
                               std::uint64_t descriptor, int from) noexcept;
  [[nodiscard]] int channel_failed(const std::exception& ex, bool alloc) noexcept;
  void count(std::uint64_t counters::*field) noexcept {
    ++(now_.*field);
    ++(life_.*field);
  }

  termination::engine* engine_ = nullptr;
  std::unique_ptr<aggregation::large_channel> channel_;
  std::size_t bound_ = 0, small_max_ = 0;
  std::vector<std::byte> stage_;  // an engine item being built: bytes + kind byte
  std::uint64_t next_seq_ = 0;    // tickets sent by this rank, over the lifetime
  // The receive in progress, and the item in the incoming buffer (for a pull after unpull).
  int recv_from_ = -1;
  std::uint64_t recv_seq_ = 0;
  bool held_ = false;
  bool last_large_ = false;  // the last pull delivered a large item
  int held_from_ = -1;
  std::uint64_t held_seq_ = 0;
  counters now_, life_;
  aggregation::large_channel::statistics channel_mark_;  // the channel's at begin
  std::string channel_message_;
};

}  // namespace convoy::termination
