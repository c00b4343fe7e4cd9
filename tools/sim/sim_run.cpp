// convoy-sim's event loop (tools/sim/README.md "How it runs"): the library's engines over
// the timed network, the rank whose next event is earliest stepped first, every delivered
// item checked against an independent oracle (SIM-1, SIM-2).
#include "sim_run.hpp"

#include <algorithm>
#include <chrono>
#include <convoy/aggregation/timed_network.hpp>
#include <convoy/base/error.hpp>
#include <convoy/router/route_stats.hpp>
#include <convoy/termination/engine.hpp>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>

namespace convoy::sim {

namespace {

using termination::engine;
using termination::state;

std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The oracle's fingerprint of item `seq` from `src` to `dst`: per destination, the sums of
// fingerprints pushed and pulled agree iff (with overwhelming probability) every item
// arrived exactly once at the rank it was pushed to (SIM-1).
std::uint64_t fingerprint(int src, int dst, std::uint64_t seq) noexcept {
  return mix(mix(static_cast<std::uint64_t>(src) * 0x9e3779b97f4a7c15ULL ^
                 static_cast<std::uint64_t>(dst)) ^
             seq);
}

// Where rank r's i-th item goes.
class destinations {
 public:
  destinations(workload_kind w, int p, std::uint64_t seed) : w_(w), p_(p), seed_(seed) {
    if (w == workload_kind::permutation) {
      perm_.resize(static_cast<std::size_t>(p));
      std::iota(perm_.begin(), perm_.end(), 0);
      std::mt19937_64 rng(seed);
      std::shuffle(perm_.begin(), perm_.end(), rng);
    }
  }
  [[nodiscard]] int operator()(int r, std::uint64_t i) const noexcept {
    switch (w_) {
      case workload_kind::uniform:
        return static_cast<int>(mix(seed_ ^ mix(static_cast<std::uint64_t>(r) << 40 ^ i)) %
                                static_cast<std::uint64_t>(p_));
      case workload_kind::hotspot:
        return 0;
      case workload_kind::permutation:
        return perm_[static_cast<std::size_t>(r)];
      case workload_kind::neighbour:  // alternately the next and the previous rank
        return (i & 1) ? (r + p_ - 1) % p_ : (r + 1) % p_;
    }
    return 0;
  }

 private:
  workload_kind w_;
  int p_;
  std::uint64_t seed_;
  std::vector<int> perm_;
};

struct rank_progress {
  std::uint64_t next = 0;          // items pushed so far
  std::uint64_t remote_items = 0;  // of them to another rank
  std::uint64_t stage_items = 0;   // items in stage buffers at the last look (forwarding)
  int idle_steps = 0;
  bool complete = false;
};

struct oracle {
  std::vector<std::uint64_t> sent_n, sent_sum, got_n, got_sum;
  explicit oracle(int p)
      : sent_n(static_cast<std::size_t>(p)),
        sent_sum(static_cast<std::size_t>(p)),
        got_n(static_cast<std::size_t>(p)),
        got_sum(static_cast<std::size_t>(p)) {}
};

class runner {
 public:
  runner(const run_config& c, std::shared_ptr<const router::route_plan> plan,
         std::vector<int> node_of, std::vector<int> socket_of)
      : c_(c),
        plan_(std::move(plan)),
        p_(plan_->n_ranks()),
        net_(std::move(node_of), std::move(socket_of), c.model.links),
        dest_(c.workload, p_, c.seed),
        ranks_(static_cast<std::size_t>(p_)),
        oracle_(p_),
        item_(c.item_bytes),
        check_fifo_(static_cast<double>(p_) * static_cast<double>(c.items_per_rank) <=
                    static_cast<double>(c.fifo_check_max_items)),
        last_seq_(check_fifo_ ? static_cast<std::size_t>(p_) : 0) {
    termination::engine_options o;
    o.capacity_bytes = c.buffer_bytes;
    o.n_buffers = c.n_buffers;
    o.route_table_max_ranks = c.route_table_max_ranks;
    engines_.reserve(static_cast<std::size_t>(p_));
    for (int r = 0; r < p_; ++r)
      engines_.push_back(std::make_unique<engine>(plan_, r, net_.endpoint(r), o));
    for (int r = 0; r < p_; ++r)
      if (engines_[static_cast<std::size_t>(r)]->begin(c.item_bytes) != 1)
        throw convoy::error("item of " + std::to_string(c.item_bytes) +
                            " bytes does not fit a buffer of " + std::to_string(c.buffer_bytes) +
                            " bytes");
  }

  void run(run_result& res) {
    for (int r = 0; r < p_; ++r) net_.wake(r);
    int rank = 0, n_complete = 0;
    while (net_.next_rank(rank)) {
      ++res.steps;
      if (step(rank)) ++n_complete;
    }
    if (n_complete != p_) {
      int stuck = 0;
      while (ranks_[static_cast<std::size_t>(stuck)].complete) ++stuck;
      throw convoy::error("simulation stalled (SIM-2): " + std::to_string(p_ - n_complete) +
                          " ranks never reached COMPLETE, e.g. rank " + std::to_string(stuck) +
                          " in state " +
                          std::to_string(static_cast<int>(
                              engines_[static_cast<std::size_t>(stuck)]->current_state())));
    }
    check_oracle(res);
    collect(res);
  }

 private:
  // One step of `r` at its clock: push a batch, pull everything, advance. True when the
  // rank reached COMPLETE in this step.
  bool step(int r) {
    engine& e = *engines_[static_cast<std::size_t>(r)];
    rank_progress& rp = ranks_[static_cast<std::size_t>(r)];
    if (rp.complete) return false;  // woken by a late credit: nothing left to do
    const std::uint64_t activity = net_.activity(r);
    const state before = e.current_state();
    std::uint64_t pushed = 0;
    if (before == state::working) pushed = push_batch(e, r, rp);
    std::uint64_t pulled = pull_all(e, r);
    const bool done = rp.next == c_.items_per_rank;
    const int rc = e.advance(done);
    if (rc < 0)
      throw convoy::error("advance on rank " + std::to_string(r) + " returned " +
                          std::to_string(rc) + ": " + e.last_message());
    pulled += pull_all(e, r);
    // Items are forwarded only out of received buffers: a step without transport activity
    // forwarded none.
    if (net_.activity(r) != activity) charge_forwarding(e, r, rp);
    net_.charge(r, c_.model.push_s * static_cast<double>(pushed) +
                       c_.model.pull_s * static_cast<double>(pulled));
    if (e.current_state() == state::complete) {
      rp.complete = true;
      return true;
    }
    const bool progress =
        pushed > 0 || pulled > 0 || net_.activity(r) != activity || e.current_state() != before;
    // One more step after the last progress (the engine may move its own buffers, e.g.
    // to itself, without the network); then sleep until an arrival or a credit.
    rp.idle_steps = progress ? 0 : rp.idle_steps + 1;
    if (rp.idle_steps < 2) net_.wake(r);
    return false;
  }

  std::uint64_t push_batch(engine& e, int r, rank_progress& rp) {
    std::uint64_t pushed = 0;
    for (int k = 0; k < c_.batch && rp.next < c_.items_per_rank; ++k) {
      const int d = dest_(r, rp.next);
      const std::uint64_t word = static_cast<std::uint64_t>(r) << 43 | rp.next;
      std::memcpy(item_.data(), &word, sizeof word);
      const int rc = e.push(item_.data(), d);
      if (rc == 0) break;
      if (rc < 0)
        throw convoy::error("push on rank " + std::to_string(r) + " returned " +
                            std::to_string(rc));
      ++oracle_.sent_n[static_cast<std::size_t>(d)];
      oracle_.sent_sum[static_cast<std::size_t>(d)] += fingerprint(r, d, rp.next);
      if (d != r) ++rp.remote_items;
      ++rp.next;
      ++pushed;
    }
    return pushed;
  }

  std::uint64_t pull_all(engine& e, int r) {
    std::uint64_t pulled = 0;
    termination::item_view v;
    while (true) {
      const int rc = e.pull(v);
      if (rc == 0) return pulled;
      if (rc < 0 || v.bytes != c_.item_bytes)
        throw convoy::error("pull on rank " + std::to_string(r) + " returned " +
                            std::to_string(rc) + " (" + std::to_string(v.bytes) + " bytes)");
      std::uint64_t word = 0;
      std::memcpy(&word, v.data, sizeof word);
      const int src = static_cast<int>(word >> 43);
      if (src != v.from)
        throw convoy::error("an item from rank " + std::to_string(src) + " pulled at rank " +
                            std::to_string(r) + " says it came from " + std::to_string(v.from));
      const std::uint64_t seq = word & ((std::uint64_t{1} << 43) - 1);
      ++oracle_.got_n[static_cast<std::size_t>(r)];
      oracle_.got_sum[static_cast<std::size_t>(r)] += fingerprint(src, r, seq);
      if (check_fifo_) check_order(src, r, seq);
      ++pulled;
    }
  }

  // A source numbers its items in push order, so per (source, destination) they must arrive
  // in increasing order (FIFO per pair, TERM-2).
  void check_order(int src, int dst, std::uint64_t seq) {
    auto [it, fresh] = last_seq_[static_cast<std::size_t>(dst)].try_emplace(src, seq);
    if (!fresh && it->second >= seq)
      throw convoy::error("FIFO per pair violated (SIM-1): at rank " + std::to_string(dst) +
                          " item #" + std::to_string(seq) + " from rank " + std::to_string(src) +
                          " arrived after #" + std::to_string(it->second));
    it->second = seq;
  }

  // Items the step put into stage buffers beyond its own pushes were forwarded.
  void charge_forwarding(engine& e, int r, rank_progress& rp) {
    if (c_.model.forward_s == 0 && plan_->max_hops() <= 1) return;
    std::uint64_t in_stages = 0;
    for (const auto& s : e.stats().stages) in_stages += s.items;
    const std::uint64_t forwarded = in_stages - rp.remote_items - rp.stage_items;
    rp.stage_items += forwarded;
    net_.charge(r, c_.model.forward_s * static_cast<double>(forwarded));
  }

  void check_oracle(run_result& res) const {
    for (int d = 0; d < p_; ++d) {
      const auto i = static_cast<std::size_t>(d);
      if (oracle_.sent_n[i] != oracle_.got_n[i] || oracle_.sent_sum[i] != oracle_.got_sum[i])
        throw convoy::error("exactly-once violated (SIM-1): rank " + std::to_string(d) +
                            " was sent " + std::to_string(oracle_.sent_n[i]) +
                            " items and pulled " + std::to_string(oracle_.got_n[i]) +
                            (oracle_.sent_n[i] == oracle_.got_n[i] ? " (other items)" : ""));
      res.items += oracle_.got_n[i];
    }
  }

  void collect(run_result& res) const;

  const run_config& c_;
  std::shared_ptr<const router::route_plan> plan_;
  int p_;
  aggregation::timed_network net_;
  destinations dest_;
  std::vector<rank_progress> ranks_;
  oracle oracle_;
  std::vector<std::byte> item_;
  std::vector<std::unique_ptr<engine>> engines_;
  // FIFO check: per destination, the last sequence number seen from each source. Its size
  // grows with the pairs that communicate, so large runs leave it off.
  bool check_fifo_;
  std::vector<std::unordered_map<int, std::uint64_t>> last_seq_;
};

void runner::collect(run_result& res) const {
  const auto ns = net_.stats();
  res.per_stage.assign(static_cast<std::size_t>(plan_->n_stages()), {});
  for (int s = 0; s < plan_->n_stages(); ++s) res.tag_bytes.push_back(plan_->tag_bytes(s));
  for (std::size_t s = 0; s < ns.per_stage.size() && s < res.per_stage.size(); ++s) {
    res.per_stage[s].messages = ns.per_stage[s].messages;
    res.per_stage[s].bytes = ns.per_stage[s].bytes;
  }
  for (int k = 0; k < aggregation::n_link_classes; ++k) {
    res.per_class[k].messages = ns.per_class[k].messages;
    res.per_class[k].bytes = ns.per_class[k].bytes;
    res.messages += ns.per_class[k].messages;
    res.bytes_injected += ns.per_class[k].bytes;
  }
  res.mean_fill = res.messages ? ns.fill_sum / static_cast<double>(res.messages) : 0.0;
  res.max_queued = ns.max_queued;
  res.max_in_flight = ns.max_in_flight;
  double sum = 0;
  for (int r = 0; r < p_; ++r) {
    const engine& e = *engines_[static_cast<std::size_t>(r)];
    const auto st = e.stats();
    for (std::size_t s = 0; s < st.stages.size() && s < res.per_stage.size(); ++s)
      res.per_stage[s].items += st.stages[s].items;
    res.memory_bytes_per_rank = std::max(res.memory_bytes_per_rank, e.max_memory_bytes());
    res.predicted_seconds = std::max(res.predicted_seconds, net_.clock(r));
    sum += net_.clock(r);
    res.network_items += ranks_[static_cast<std::size_t>(r)].remote_items;
    for (std::uint64_t i = 0; i < c_.items_per_rank; ++i) {
      const int d = dest_(r, i);
      if (d != r) res.item_hops += static_cast<std::uint64_t>(router::route_hops(*plan_, r, d));
    }
  }
  res.mean_rank_seconds = sum / static_cast<double>(p_);
}

}  // namespace

run_result run(const run_config& c) {
  if (c.item_bytes < 8) throw convoy::error("--item-bytes must be at least 8 (the oracle's tag)");
  if (c.batch < 1) throw convoy::error("--batch must be at least 1");
  if (c.items_per_rank >= (std::uint64_t{1} << 43))
    throw convoy::error("--items must be below 2^43");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> node_of, socket_of;
  auto plan = make_sim_plan(c, node_of, socket_of);
  run_result res;
  res.plan_name = plan->name();
  res.ranks = plan->n_ranks();
  res.nodes = node_of.empty() ? 0 : *std::max_element(node_of.begin(), node_of.end()) + 1;
  res.stages = plan->n_stages();
  res.max_hops = plan->max_hops();
  runner rn(c, std::move(plan), std::move(node_of), std::move(socket_of));
  const auto t1 = std::chrono::steady_clock::now();
  rn.run(res);
  const auto t2 = std::chrono::steady_clock::now();
  res.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  res.wall_seconds = std::chrono::duration<double>(t2 - t1).count();
  return res;
}

}  // namespace convoy::sim
