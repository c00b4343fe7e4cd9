#pragma once
// The conveyor contract as an executable model, written from Maley & DeVinney 2019, sec. 3.2-3.3
// and 3.6 (states, what is legal in each, exactly once, FIFO per pair, unpull, termination, steady,
// elastic) and from the return codes engine.hpp documents — never from the engine's code.
//
// For every call on rank r the driver asks the model which results the contract allows
// (where the contract leaves freedom, e.g. whether a push meets backpressure, all of them),
// compares the engine's actual result, and lets the model apply the consequence. The model
// keeps, per (cycle, source, destination), the items pushed and not yet pulled, in push
// order; a pull must return the head of one of those queues (exactly once, FIFO, source,
// every byte); termination must not be announced before every rank has declared done, nor
// COMPLETE reached with an item still owed (termination/README.md, TERM-40..TERM-47).
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace convoy_test::model {

using convoy::termination::state;

// One pushed item: which begin..reset cycle, pair, position in the pair's stream, size.
struct item_id {
  int cycle = -1;
  int src = -1;
  int dst = -1;
  std::uint64_t seq = 0;
  std::size_t bytes = 0;
};

// The payload is a function of (cycle, source, destination, sequence) and the byte index,
// so a receiver can check every byte of every item it pulls.
std::uint64_t mix(std::uint64_t x) noexcept;
void fill_payload(const item_id& id, std::byte* out) noexcept;
// Index of the first wrong byte of `data` as the payload of `id`, or -1 if all are right.
long first_wrong_byte(const item_id& id, const std::byte* data) noexcept;

// Whether unpull can put an item back: none, surely, or (after a pull that found nothing —
// the contract does not say whether that ends the right to unpull) maybe.
enum class undo { none, sure, maybe };

struct rank_model {
  state st = state::dormant;
  int cycle = -1;          // index of the latest successful begin
  bool said_done = false;  // advance(true) called in this cycle
  undo can_unpull = undo::none;
  item_id last;                 // what unpull puts back
  std::optional<item_id> next;  // put back by unpull: the next successful pull returns it
  std::uint64_t pushes = 0, pulls = 0, unpulls = 0;  // this cycle (engine_stats)
};

class contract {
 public:
  contract(int n_ranks, bool elastic, std::size_t max_item_bytes);

  [[nodiscard]] int n_ranks() const noexcept { return static_cast<int>(ranks_.size()); }
  [[nodiscard]] bool elastic() const noexcept { return elastic_; }
  [[nodiscard]] std::size_t max_item_bytes() const noexcept { return max_item_; }
  [[nodiscard]] const rank_model& at(int r) const { return ranks_.at(static_cast<size_t>(r)); }
  // Item size of `cycle` (set by its first successful begin).
  [[nodiscard]] std::size_t cycle_bytes(int cycle) const {
    return cycle_bytes_.at(static_cast<size_t>(cycle));
  }
  [[nodiscard]] int n_cycles() const noexcept { return static_cast<int>(cycle_bytes_.size()); }
  // The item a successful push from r to dest now would carry.
  [[nodiscard]] item_id next_item(int r, int dest, std::size_t bytes) const;
  // Items pushed in `cycle` and not pulled yet (on every destination).
  [[nodiscard]] std::uint64_t owed(int cycle) const;
  [[nodiscard]] std::uint64_t owed_to(int cycle, int dst) const;

  // Each check_* compares a call's actual result with what the contract allows and applies
  // its effect; it returns "" or what is wrong. A negative result must leave the model as
  // it was (misuse changes no state).
  std::string check_begin(int r, std::size_t item_bytes, int rc);
  std::string check_push(int r, int dest, bool null_item, int rc);
  std::string check_epush(int r, int dest, std::size_t bytes, bool null_item, int rc);
  // `data`, `bytes`, `from`: the item_view when rc == 1.
  std::string check_pull(int r, bool rigid, int rc, const std::byte* data, std::size_t bytes,
                         int from);
  std::string check_unpull(int r, int rc);
  std::string check_advance(int r, bool done, int rc);
  std::string check_flush(int r, int rc);
  std::string check_reset(int r, int rc);

 private:
  using pair_key = std::tuple<int, int, int>;  // cycle, src, dst
  std::string check_code(const char* call, int r, int rc, const std::vector<int>& allowed) const;
  std::string check_termination(int r, int rc) const;
  std::string accept_push(int r, int dest, std::size_t bytes, int rc,
                          const std::vector<int>& allowed);
  std::string check_pulled(int r, bool rigid, const std::byte* data, std::size_t bytes, int from);

  bool elastic_;
  std::size_t max_item_;
  std::vector<rank_model> ranks_;
  std::vector<std::size_t> cycle_bytes_;
  std::map<pair_key, std::deque<item_id>> queues_;
  std::map<pair_key, std::uint64_t> next_seq_;
  std::map<std::pair<int, int>, std::uint64_t> owed_to_;  // (cycle, dst) -> items
};

// "error_state" etc. for messages.
std::string code_name(int rc);
std::string state_name(state s);

}  // namespace convoy_test::model
