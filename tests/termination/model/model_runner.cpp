// The checked calls of the model-based test and its trace (model_runner.hpp).
#include "model_runner.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>

namespace convoy_test::model {

namespace t = convoy::termination;

// What a checked call returns once the sequence has failed (no more calls are made).
constexpr int stopped = -1000;

model_runner::model_runner(std::uint64_t seed, int max_ranks, bool avoid_known_bugs)
    : seed_(seed), rng_(mix(seed)), avoid_known_bugs_(avoid_known_bugs) {
  setup_ = random_setup(rng_, max_ranks);
  p_ = setup_.plan->n_ranks();
}

model_runner::~model_runner() = default;

void model_runner::build() {
  net_ = std::make_unique<convoy::aggregation::sim_network>(p_, mix(seed_ ^ 0x5eedULL));
  for (int r = 0; r < p_; ++r)
    engines_.push_back(
        std::make_unique<t::engine>(setup_.plan, r, net_->endpoint(r), setup_.options));
  const std::size_t max_item = engines_[0]->max_item_bytes();
  for (int r = 1; r < p_; ++r)
    if (eng(r).max_item_bytes() != max_item) fail("max_item_bytes differs between ranks");
  // An independent bound: a buffer holds its header, then tag (<= 8 bytes), size field
  // (elastic) and payload.
  const std::size_t room = setup_.options.buffer_bytes - 16 - (elastic() ? 4 : 0);
  if (max_item > room || max_item + 8 < room)
    fail("max_item_bytes " + std::to_string(max_item) + " is not within 8 bytes of " +
         std::to_string(room));
  model_ = std::make_unique<contract>(p_, elastic(), max_item);
  held_.assign(static_cast<std::size_t>(p_), held{});
  self_pull_posted_.assign(static_cast<std::size_t>(p_), false);
  quota_.assign(static_cast<std::size_t>(p_), 0);
  quota_cycle_.assign(static_cast<std::size_t>(p_), -2);
  // 1-3 begin..reset cycles, each with its item size (elastic: the default size, 0 allowed).
  const int cycles = uniform(1, 3);
  for (int c = 0; c < cycles; ++c) {
    const int lo = elastic() ? 0 : 1;
    const int hi = static_cast<int>(max_item);
    const int w = uniform(0, 9);
    planned_.push_back(static_cast<std::size_t>(w < 5   ? uniform(lo, std::min(hi, 16))
                                                : w < 7 ? hi
                                                        : uniform(lo, hi)));
  }
}

void model_runner::fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
}

void model_runner::record(char op, int rank, long long a, long long b, long long c, int rc) {
  trace_.push_back({op, rank, a, b, c, rc});
  // Called before the model checks the call: the model still holds the state before it.
  const char* at = std::strchr(coverage_ops, op);
  if (rank < 0 || !at) return;
  const auto st = static_cast<std::size_t>(model_->at(rank).st);
  const auto k = rc >= -8 && rc <= 2 ? static_cast<std::size_t>(rc + 8) : 11;
  ++stats_.coverage[static_cast<std::size_t>(at - coverage_ops)][st][k];
  for (int q = 0; q < p_; ++q)
    if (model_->at(q).cycle != model_->at(rank).cycle)
      return static_cast<void>(++stats_.cross_cycle_calls);
}

void model_runner::release_view(int r) {
  held& h = held_[static_cast<std::size_t>(r)];
  if (!h.live) return;
  h.live = false;
  if (h.view.bytes != h.id.bytes || first_wrong_byte(h.id, h.view.data) >= 0)
    fail("rank " + std::to_string(r) +
         ": the item of the last pull changed before the next pull, unpull, advance or "
         "reset (TERM-46)");
}

void model_runner::check_after(int r, const char* call) {
  if (failed()) return;
  const t::engine& e = eng(r);
  const rank_model& m = model_->at(r);
  const std::string who = std::string("after ") + call + " on rank " + std::to_string(r) + ": ";
  if (e.current_state() != m.st)
    return fail(who + "engine is " + state_name(e.current_state()) + ", the model says " +
                state_name(m.st));
  if (m.cycle >= 0) {
    const t::engine_stats s = e.stats();
    if (s.pushes != m.pushes || s.pulls != m.pulls || s.unpulls != m.unpulls)
      return fail(who + "stats pushes/pulls/unpulls " + std::to_string(s.pushes) + "/" +
                  std::to_string(s.pulls) + "/" + std::to_string(s.unpulls) + ", the model " +
                  std::to_string(m.pushes) + "/" + std::to_string(m.pulls) + "/" +
                  std::to_string(m.unpulls) + " (TERM-45)");
  }
  if (m.st != state::dormant && e.item_bytes() != model_->cycle_bytes(m.cycle))
    return fail(who + "item_bytes() " + std::to_string(e.item_bytes()));
  if (e.memory_bytes() > e.max_memory_bytes())
    return fail(who + "memory_bytes() " + std::to_string(e.memory_bytes()) + " above max " +
                std::to_string(e.max_memory_bytes()));
}

int model_runner::do_begin(int r, std::size_t bytes) {
  if (failed()) return stopped;
  const int rc = eng(r).begin(bytes);
  record('B', r, static_cast<long long>(bytes), 0, 0, rc);
  fail(model_->check_begin(r, bytes, rc));
  check_after(r, "begin");
  return rc;
}

namespace {
template <std::size_t N>
int typed_push(t::engine& e, const void* item, int dest) {
  return e.push<N>(item, dest);
}
}  // namespace

int model_runner::do_push(int r, int dest, bool null_item) {
  if (failed()) return stopped;
  const rank_model& m = model_->at(r);
  const std::size_t bytes =
      m.st == state::working ? model_->cycle_bytes(m.cycle) : planned_bytes(m.cycle);
  // An exact-size allocation: ASan catches a read past the item.
  auto item = std::make_unique<std::byte[]>(std::max<std::size_t>(bytes, 1));
  fill_payload(model_->next_item(r, dest, bytes), item.get());
  const void* p = null_item ? nullptr : item.get();
  t::engine& e = eng(r);
  const bool typed = m.st == state::working && uniform(0, 1) == 1;
  int rc = 0;
  if (typed && bytes == 4)
    rc = typed_push<4>(e, p, dest);
  else if (typed && bytes == 8)
    rc = typed_push<8>(e, p, dest);
  else if (typed && bytes == 16)
    rc = typed_push<16>(e, p, dest);
  else if (typed && bytes == 32)
    rc = typed_push<32>(e, p, dest);
  else
    rc = e.push(p, dest);
  record('P', r, dest, static_cast<long long>(bytes), null_item, rc);
  note_post(r, rc);
  fail(model_->check_push(r, dest, null_item, rc));
  check_after(r, "push");
  return rc;
}

int model_runner::do_epush(int r, int dest, std::size_t bytes, bool null_item) {
  if (failed()) return stopped;
  // Above the largest item, only one byte exists: the engine must not read the item.
  const std::size_t have = bytes > model_->max_item_bytes() ? 1 : std::max<std::size_t>(bytes, 1);
  auto item = std::make_unique<std::byte[]>(have);
  if (bytes <= model_->max_item_bytes())
    fill_payload(model_->next_item(r, dest, bytes), item.get());
  const int rc = eng(r).epush(null_item ? nullptr : item.get(), bytes, dest);
  record('E', r, dest, static_cast<long long>(bytes), null_item, rc);
  note_post(r, rc);
  fail(model_->check_epush(r, dest, bytes, null_item, rc));
  check_after(r, "epush");
  return rc;
}

int model_runner::do_pull(int r, bool rigid) {
  if (failed()) return stopped;
  release_view(r);
  t::item_view v;
  const int rc = eng(r).pull(v, rigid);
  record('L', r, rigid, rc == 1 ? v.from : -1, rc == 1 ? static_cast<long long>(v.bytes) : -1, rc);
  fail(model_->check_pull(r, rigid, rc, v.data, v.bytes, v.from));
  if (rc == 1) self_pull_posted_[static_cast<std::size_t>(r)] = false;
  if (rc == 1 && !failed()) {
    held_[static_cast<std::size_t>(r)] = held{true, v, model_->at(r).last};
    ++items_;
  }
  check_after(r, "pull");
  return rc;
}

void model_runner::note_post(int r, int rc) {
  const rank_model& m = model_->at(r);
  if (rc >= 0 && elastic() && m.can_unpull != undo::none && m.last.src == r)
    self_pull_posted_[static_cast<std::size_t>(r)] = true;
}

int model_runner::do_unpull(int r) {
  if (failed()) return stopped;
  if (avoid_known_bugs_ && self_pull_posted_[static_cast<std::size_t>(r)]) return stopped;
  release_view(r);
  const int rc = eng(r).unpull();
  record('U', r, 0, 0, 0, rc);
  fail(model_->check_unpull(r, rc));
  check_after(r, "unpull");
  return rc;
}

int model_runner::do_advance(int r, bool done) {
  if (failed()) return stopped;
  release_view(r);
  const int rc = eng(r).advance(done);
  record('A', r, done, 0, 0, rc);
  fail(model_->check_advance(r, done, rc));
  check_after(r, "advance");
  return rc;
}

int model_runner::do_flush(int r) {
  if (failed()) return stopped;
  const int rc = eng(r).flush();
  record('F', r, 0, 0, 0, rc);
  note_post(r, rc);
  fail(model_->check_flush(r, rc));
  check_after(r, "flush");
  return rc;
}

int model_runner::do_reset(int r) {
  if (failed()) return stopped;
  release_view(r);
  const int rc = eng(r).reset();
  record('R', r, 0, 0, 0, rc);
  fail(model_->check_reset(r, rc));
  check_after(r, "reset");
  return rc;
}

void model_runner::do_deliver(int max_buffers) {
  int n = 0;
  while (n < max_buffers && net_->deliver_one()) ++n;
  if (n > 0) record('D', -1, max_buffers, n, 0, 0);
}

void model_runner::do_destroy(int r) {
  release_view(r);
  engines_[static_cast<std::size_t>(r)].reset();
  record('X', r, 0, 0, 0, 0);
}

std::size_t model_runner::planned_bytes(int cycle) const {
  if (cycle >= 0 && cycle < static_cast<int>(planned_.size()))
    return planned_[static_cast<std::size_t>(cycle)];
  return 8;
}

int model_runner::random_dest() {
  if (uniform(0, 99) < 88) return uniform(0, p_ - 1);
  const int bad[] = {-1, p_, p_ + 1, INT_MIN, INT_MAX, -p_ - 1};
  return bad[uniform(0, 5)];
}

std::size_t model_runner::random_epush_bytes() {
  const std::size_t max = model_->max_item_bytes();
  const int w = uniform(0, 99);
  const int c = model_->at(0).cycle;
  if (w < 25) return planned_bytes(c < 0 ? 0 : c);
  if (w < 40) return 0;
  if (w < 50) return max;
  if (w < 55) return max + 1;
  if (w < 57) return SIZE_MAX;
  if (w < 59) return (std::size_t{1} << 32) + 1;
  return static_cast<std::size_t>(uniform(0, static_cast<int>(max)));
}

std::size_t model_runner::bad_begin_bytes() {
  const std::size_t max = model_->max_item_bytes();
  const std::size_t bad[] = {0, max + 1, max + 1000, SIZE_MAX, std::size_t{1} << 32};
  return bad[uniform(elastic() ? 1 : 0, 4)];
}

std::string model_runner::trace_text(std::size_t last) const {
  std::string s;
  const std::size_t from = last && trace_.size() > last ? trace_.size() - last : 0;
  for (std::size_t i = from; i < trace_.size(); ++i) {
    const call_record& c = trace_[i];
    std::string line = "#" + std::to_string(i) + " ";
    if (c.rank >= 0) line += "r" + std::to_string(c.rank) + " ";
    switch (c.op) {
      case 'B':
        line += "begin(" + std::to_string(c.a) + ")";
        break;
      case 'P':
        line += "push(dest " + std::to_string(c.a) + ", " + std::to_string(c.b) + " bytes" +
                (c.c ? ", NULL)" : ")");
        break;
      case 'E':
        line += "epush(dest " + std::to_string(c.a) + ", " + std::to_string(c.b) + " bytes" +
                (c.c ? ", NULL)" : ")");
        break;
      case 'L':
        line += std::string("pull(") + (c.a ? "rigid" : "elastic") + ")";
        if (c.rc == 1)
          line += " from " + std::to_string(c.b) + " " + std::to_string(c.c) + " bytes";
        break;
      case 'U':
        line += "unpull()";
        break;
      case 'A':
        line += std::string("advance(") + (c.a ? "true)" : "false)");
        break;
      case 'F':
        line += "flush()";
        break;
      case 'R':
        line += "reset()";
        break;
      case 'D':
        line += "network delivers " + std::to_string(c.b) + " buffers";
        s += line + "\n";
        continue;
      case 'X':
        line += "destroy";
        s += line + "\n";
        continue;
      default:
        line += c.a == 1   ? "-- drain: every rank to COMPLETE"
                : c.a == 2 ? "-- steady check"
                           : "-- finish";
        s += line + "\n";
        continue;
    }
    s += line + " -> " + code_name(c.rc) + "\n";
  }
  return s;
}

}  // namespace convoy_test::model
