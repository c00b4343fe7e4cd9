#include "contract_model.hpp"

#include <algorithm>
#include <cstring>

namespace convoy_test::model {

namespace t = convoy::termination;

std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {
std::uint64_t item_key(const item_id& id) noexcept {
  return mix(mix(mix(static_cast<std::uint64_t>(id.cycle) + 0x100) +
                 static_cast<std::uint64_t>(id.src)) +
             static_cast<std::uint64_t>(id.dst) * 0x10001ULL) ^
         mix(id.seq);
}
std::byte payload_byte(std::uint64_t key, std::size_t i, std::uint64_t& word) noexcept {
  if (i % 8 == 0) word = mix(key + i);
  return static_cast<std::byte>(word >> (8 * (i % 8)));
}
}  // namespace

void fill_payload(const item_id& id, std::byte* out) noexcept {
  const std::uint64_t key = item_key(id);
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < id.bytes; ++i) out[i] = payload_byte(key, i, word);
}

long first_wrong_byte(const item_id& id, const std::byte* data) noexcept {
  const std::uint64_t key = item_key(id);
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < id.bytes; ++i)
    if (data[i] != payload_byte(key, i, word)) return static_cast<long>(i);
  return -1;
}

std::string code_name(int rc) {
  switch (rc) {
    case t::error_state:
      return "error_state";
    case t::error_rank:
      return "error_rank";
    case t::error_size:
      return "error_size";
    case t::error_argument:
      return "error_argument";
    case t::error_unpull:
      return "error_unpull";
    case t::error_elastic:
      return "error_elastic";
    case t::error_transport:
      return "error_transport";
    case t::error_alloc:
      return "error_alloc";
    default:
      return std::to_string(rc);
  }
}

std::string state_name(state s) { return t::to_string(s); }

contract::contract(int n_ranks, bool elastic, std::size_t max_item_bytes)
    : elastic_(elastic), max_item_(max_item_bytes), ranks_(static_cast<std::size_t>(n_ranks)) {}

item_id contract::next_item(int r, int dest, std::size_t bytes) const {
  item_id id{at(r).cycle, r, dest, 0, bytes};
  const auto it = next_seq_.find({id.cycle, r, dest});
  if (it != next_seq_.end()) id.seq = it->second;
  return id;
}

std::uint64_t contract::owed_to(int cycle, int dst) const {
  const auto it = owed_to_.find({cycle, dst});
  return it == owed_to_.end() ? 0 : it->second;
}

std::uint64_t contract::owed(int cycle) const {
  std::uint64_t n = 0;
  for (int d = 0; d < n_ranks(); ++d) n += owed_to(cycle, d);
  return n;
}

std::string contract::check_code(const char* call, int r, int rc,
                                 const std::vector<int>& allowed) const {
  if (std::find(allowed.begin(), allowed.end(), rc) != allowed.end()) return {};
  std::string s = std::string(call) + " on rank " + std::to_string(r) + " (" +
                  state_name(at(r).st) + ") returned " + code_name(rc) + ", the contract allows";
  for (int a : allowed) s += " " + code_name(a);
  return s;
}

std::string contract::check_begin(int r, std::size_t item_bytes, int rc) {
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  std::vector<int> allowed{1};
  if (m.st != state::dormant)
    allowed = {t::error_state};
  else if ((item_bytes == 0 && !elastic_) || item_bytes > max_item_)
    allowed = {t::error_size};
  if (auto e = check_code("begin", r, rc, allowed); !e.empty() || rc != 1) return e;
  const int cycle = m.cycle + 1;
  m = rank_model{};
  m.st = state::working;
  m.cycle = cycle;
  const auto c = static_cast<std::size_t>(m.cycle);
  if (cycle_bytes_.size() == c) cycle_bytes_.push_back(item_bytes);
  if (cycle_bytes_.at(c) != item_bytes) return "model: begin of one cycle with two sizes";
  return {};
}

std::string contract::accept_push(int r, int dest, std::size_t bytes, int rc,
                                  const std::vector<int>& allowed) {
  if (auto e = check_code("push", r, rc, allowed); !e.empty() || rc != 1) return e;
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  const item_id id = next_item(r, dest, bytes);
  queues_[{id.cycle, r, dest}].push_back(id);
  ++next_seq_[{id.cycle, r, dest}];
  ++owed_to_[{id.cycle, dest}];
  ++m.pushes;
  return {};
}

std::string contract::check_push(int r, int dest, bool null_item, int rc) {
  const rank_model& m = at(r);
  if (m.st != state::working) return check_code("push", r, rc, {t::error_state});
  const std::size_t bytes = cycle_bytes(m.cycle);
  std::vector<int> allowed;
  if (dest < 0 || dest >= n_ranks()) allowed.push_back(t::error_rank);
  if (null_item && bytes > 0) allowed.push_back(t::error_argument);
  if (allowed.empty()) {
    allowed = {1, 0};
    if (null_item) allowed.push_back(t::error_argument);  // 0 bytes from NULL: either
  }
  return accept_push(r, dest, bytes, rc, allowed);
}

std::string contract::check_epush(int r, int dest, std::size_t bytes, bool null_item, int rc) {
  std::vector<int> allowed;
  // A rigid engine may name either misuse of an elastic call outside WORKING (the README
  // says the state is checked first; bale's unchecked epush answers RIGID in any state).
  if (!elastic_) allowed.push_back(t::error_elastic);
  if (at(r).st != state::working) {
    allowed.push_back(t::error_state);
    return check_code("epush", r, rc, allowed);
  }
  if (dest < 0 || dest >= n_ranks()) allowed.push_back(t::error_rank);
  if (bytes > max_item_) allowed.push_back(t::error_size);
  if (null_item && bytes > 0) allowed.push_back(t::error_argument);
  if (allowed.empty()) {
    allowed = {1, 0};
    if (null_item) allowed.push_back(t::error_argument);
  }
  return accept_push(r, dest, bytes, rc, allowed);
}

std::string contract::check_pull(int r, bool rigid, int rc, const std::byte* data,
                                 std::size_t bytes, int from) {
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  std::vector<int> allowed;
  if (m.st == state::dormant) {
    allowed = {t::error_state};
  } else if (m.st == state::complete) {
    allowed = {0};
  } else {
    const std::size_t ib = cycle_bytes(m.cycle);
    auto misfit = [&](const item_id& id) { return elastic_ && rigid && id.bytes != ib; };
    if (m.next) {
      allowed = {misfit(*m.next) ? t::error_elastic : 1};
    } else {
      allowed = {0};
      bool fit = false, misfits = false;
      for (int s = 0; s < n_ranks(); ++s) {
        const auto q = queues_.find({m.cycle, s, r});
        if (q == queues_.end() || q->second.empty()) continue;
        (misfit(q->second.front()) ? misfits : fit) = true;
      }
      if (fit) allowed.push_back(1);
      if (misfits) allowed.push_back(t::error_elastic);
    }
  }
  if (auto e = check_code("pull", r, rc, allowed); !e.empty()) return e;
  if (rc == 1) return check_pulled(r, rigid, data, bytes, from);
  // A pull that finds nothing, or a rigid pull that meets an item of another size
  // (error_elastic), is still a pull: engine.hpp lets unpull refuse after it ("no pull
  // since"), while "a failed call changes no state" lets it succeed. Either is accepted.
  if (rc <= 0 && rc != t::error_state && m.can_unpull == undo::sure) m.can_unpull = undo::maybe;
  return {};
}

std::string contract::check_pulled(int r, bool rigid, const std::byte* data, std::size_t bytes,
                                   int from) {
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  const std::string who = "pull on rank " + std::to_string(r) + ": ";
  if (from < 0 || from >= n_ranks()) return who + "reported source " + std::to_string(from);
  if (m.next && m.next->src != from)
    return who + "the unpulled item from " + std::to_string(m.next->src) +
           " must come next, got an item from " + std::to_string(from);
  auto q = queues_.find({m.cycle, from, r});
  if (q == queues_.end() || q->second.empty())
    return who + "an item from " + std::to_string(from) +
           ", but nothing is owed from it in cycle " + std::to_string(m.cycle) +
           " (duplicate, invented, or a wrong source)";
  const item_id want = q->second.front();
  if (bytes != want.bytes)
    return who + "item from " + std::to_string(from) + " seq " + std::to_string(want.seq) +
           " has " + std::to_string(bytes) + " bytes, pushed with " + std::to_string(want.bytes);
  if (elastic_ && rigid && bytes != cycle_bytes(m.cycle))
    return who + "a rigid pull returned an item of another size";
  if (const long w = first_wrong_byte(want, data); w >= 0) {
    std::string s = who + "item from " + std::to_string(from) + " expected seq " +
                    std::to_string(want.seq) + ": byte " + std::to_string(w) + " is wrong";
    item_id other = want;
    const std::uint64_t end = next_seq_[{m.cycle, from, r}];
    for (other.seq = 0; other.seq < end && other.seq < 100000; ++other.seq)
      if (other.seq != want.seq && first_wrong_byte(other, data) < 0)
        return s + "; it is seq " + std::to_string(other.seq) + " (FIFO or exactly-once broken)";
    return s + " (corrupted)";
  }
  q->second.pop_front();
  --owed_to_[{m.cycle, r}];
  m.next.reset();
  m.last = want;
  m.can_unpull = undo::sure;
  ++m.pulls;
  return {};
}

std::string contract::check_unpull(int r, int rc) {
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  std::vector<int> allowed;
  if (m.st == state::dormant)
    allowed = {t::error_state};
  else if (m.st == state::complete)
    allowed = {0};
  else if (m.can_unpull == undo::sure)
    allowed = {1};
  else if (m.can_unpull == undo::maybe)
    allowed = {1, t::error_unpull};
  else
    allowed = {t::error_unpull};
  if (auto e = check_code("unpull", r, rc, allowed); !e.empty() || rc != 1) return e;
  queues_[{m.last.cycle, m.last.src, r}].push_front(m.last);
  ++owed_to_[{m.last.cycle, r}];
  m.next = m.last;
  m.can_unpull = undo::none;
  ++m.unpulls;
  return {};
}

std::string contract::check_termination(int r, int rc) const {
  const rank_model& m = at(r);
  for (int q = 0; q < n_ranks(); ++q) {
    const rank_model& o = at(q);
    if (o.cycle > m.cycle || (o.cycle == m.cycle && o.said_done)) continue;
    return "advance on rank " + std::to_string(r) + " returned " + code_name(rc) + " in cycle " +
           std::to_string(m.cycle) + " while rank " + std::to_string(q) + " is " +
           state_name(o.st) + " in cycle " + std::to_string(o.cycle) +
           " and has not declared done (TERM-43)";
  }
  if (rc == t::done && (owed_to(m.cycle, r) > 0 || m.next)) {
    std::string s = "rank " + std::to_string(r) + " reached COMPLETE in cycle " +
                    std::to_string(m.cycle) + " with " + std::to_string(owed_to(m.cycle, r)) +
                    " items still owed to it (TERM-42)";
    for (int src = 0; src < n_ranks(); ++src) {
      const auto q = queues_.find({m.cycle, src, r});
      if (q != queues_.end() && !q->second.empty())
        return s + ", first from " + std::to_string(src) + " seq " +
               std::to_string(q->second.front().seq);
    }
    return s;
  }
  return {};
}

std::string contract::check_advance(int r, bool done, int rc) {
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  std::vector<int> allowed;
  switch (m.st) {
    case state::dormant:
      allowed = {t::error_state};
      break;
    case state::complete:
      allowed = {t::done};
      break;
    case state::working:
      allowed = done ? std::vector<int>{t::ok, t::near, t::done} : std::vector<int>{t::ok};
      break;
    case state::endgame:
      allowed = done ? std::vector<int>{t::ok, t::near, t::done} : std::vector<int>{t::error_state};
      break;
    case state::cleanup:
      allowed = done ? std::vector<int>{t::near, t::done} : std::vector<int>{t::error_state};
      break;
  }
  if (auto e = check_code(done ? "advance(true)" : "advance(false)", r, rc, allowed);
      !e.empty() || rc < 0)
    return e;
  const state before = m.st;
  m.can_unpull = undo::none;
  if (before == state::complete) return {};
  if (before == state::working && done) m.said_done = true;
  if (rc == t::ok && done) m.st = state::endgame;
  if (rc == t::near) m.st = state::cleanup;
  if (rc == t::done) m.st = state::complete;
  return rc == t::ok ? std::string{} : check_termination(r, rc);
}

std::string contract::check_flush(int r, int rc) {
  const state s = at(r).st;
  const bool legal = s == state::working || s == state::endgame;
  return check_code("flush", r, rc, {legal ? 1 : t::error_state});
}

std::string contract::check_reset(int r, int rc) {
  rank_model& m = ranks_.at(static_cast<std::size_t>(r));
  const bool legal = m.st == state::dormant || m.st == state::complete;
  if (auto e = check_code("reset", r, rc, {legal ? 1 : t::error_state}); !e.empty() || rc != 1)
    return e;
  m.st = state::dormant;
  m.can_unpull = undo::none;
  m.next.reset();
  return {};
}

}  // namespace convoy_test::model
