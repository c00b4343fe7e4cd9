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
#include <string>

#include "sim_oracle.hpp"
#include "sim_prepare.hpp"

namespace convoy::sim {

namespace {

using termination::engine;
using termination::state;

struct rank_progress {
  std::uint64_t next = 0;          // items (queries) pushed so far
  std::uint64_t remote_items = 0;  // items and replies pushed to another rank
  std::uint64_t stage_items = 0;   // items in stage buffers at the last look (forwarding)
  int idle_steps = 0;
  bool complete = false;
  bool pending = false;  // request-reply: a pulled query whose reply push failed (bale's ig)
  int pending_to = 0;
  std::uint64_t pending_word = 0;
};

// Items pushed and pulled in one step (the per-item costs).
struct step_counts {
  std::uint64_t pushes = 0, pulls = 0;
};

class runner {
 public:
  runner(const run_config& c, std::shared_ptr<const router::route_plan> plan,
         std::vector<int> node_of, std::vector<int> socket_of, const traffic_matrix* matrix)
      : c_(c),
        plan_(std::move(plan)),
        p_(plan_->n_ranks()),
        node_of_(node_of),
        net_(std::move(node_of), std::move(socket_of), c.model.links, memory_of(c, p_)),
        dest_(c.workload, p_, c.items_per_rank, c.seed, matrix),
        ranks_(static_cast<std::size_t>(p_)),
        sent_(p_),
        got_(p_),
        reply_sent_(p_),
        reply_got_(p_),
        item_(c.item_bytes),
        fifo_(fifo_on(), p_, "item"),
        reply_fifo_(fifo_on() && c.workload == workload_kind::request_reply, p_, "reply") {
    termination::engine_options o;
    o.buffer_bytes = c.buffer_bytes;
    o.n_buffers = c.n_buffers;
    o.route_table_max_ranks = c.route_table_max_ranks;
    o.link_counters = false;  // the network counts links (count_links); 144 B per peer spared
    // Request-reply (bale's ig, Maley & DeVinney 2019, Figure 4): a query engine in plane 0 and a
    // reply engine in plane 1 on every rank, over the same plan.
    const int planes = c.workload == workload_kind::request_reply ? 2 : 1;
    std::size_t links = 0;
    for (int r = 0; r < p_; ++r)
      for (int s = 0; s < plan_->n_stages(); ++s) links += plan_->out_peers(r, s).size();
    net_.reserve_links(links * static_cast<std::size_t>(planes));
    record_sizes sizes{c.item_bytes, {}};
    for (int s = 0; s < plan_->n_stages(); ++s) sizes.tag_bytes.push_back(plan_->tag_bytes(s));
    if (c.count_links) links_.reserve(links * static_cast<std::size_t>(planes));
    for (int k = 0; k < planes; ++k) {
      auto& v = k == 0 ? engines_ : replies_;
      v.reserve(static_cast<std::size_t>(p_));
      for (int r = 0; r < p_; ++r) {
        auto t = net_.endpoint(r, k);
        if (c.count_links) t = counting_transport(std::move(t), r, node_of_, sizes, links_);
        v.push_back(std::make_unique<engine>(plan_, r, std::move(t), o));
      }
      for (int r = 0; r < p_; ++r)
        if (v[static_cast<std::size_t>(r)]->begin(c.item_bytes) != 1)
          throw convoy::error("item of " + std::to_string(c.item_bytes) +
                              " bytes does not fit a buffer of " + std::to_string(c.buffer_bytes) +
                              " bytes");
    }
    net_.links_complete();
  }

  void run(run_result& res) {
    for (int r = 0; r < p_; ++r) net_.wake(r);
    int rank = 0, n_complete = 0;
    const std::uint64_t total = total_items();
    while (net_.next_rank(rank)) {
      ++res.steps;
      if (step(rank)) ++n_complete;
      if (c_.on_progress && (res.steps & 0xFF) == 0) c_.on_progress(pulled_, total);
    }
    if (n_complete != p_) {
      int stuck = 0;
      while (ranks_[static_cast<std::size_t>(stuck)].complete) ++stuck;
      throw run_failure("simulation stalled (SIM-2): " + std::to_string(p_ - n_complete) +
                        " ranks never reached COMPLETE, e.g. rank " + std::to_string(stuck) +
                        " in state " +
                        std::to_string(static_cast<int>(
                            engines_[static_cast<std::size_t>(stuck)]->current_state())));
    }
    check_oracle(res);
    collect(res);
  }

 private:
  [[nodiscard]] std::uint64_t total_items() const {
    std::uint64_t total = 0;
    for (int r = 0; r < p_; ++r) total += dest_.items_of(r);
    return total;
  }
  [[nodiscard]] bool fifo_on() const { return total_items() <= c_.fifo_check_max_items; }

  // One step of `r` at its clock: push a batch, pull everything (answering queries), advance
  // the engine(s). True when the rank reached COMPLETE in this step.
  bool step(int r) {
    engine& e = *engines_[static_cast<std::size_t>(r)];
    engine* y = replies_.empty() ? nullptr : replies_[static_cast<std::size_t>(r)].get();
    rank_progress& rp = ranks_[static_cast<std::size_t>(r)];
    if (rp.complete) return false;  // woken by a late credit: nothing left to do
    const std::uint64_t activity = net_.activity(r);
    const state before = e.current_state();
    const state y_before = y ? y->current_state() : before;
    step_counts n;
    if (before == state::working) n.pushes += push_batch(e, r, rp);
    receive(r, e, y, rp, n);
    advance(e, r, rp.next == dest_.items_of(r));
    receive(r, e, y, rp, n);
    if (y) {  // replies are done when every query was answered (biconvey's advance)
      advance(*y, r, e.current_state() == state::complete && !rp.pending);
      receive(r, e, y, rp, n);
    }
    // Items are forwarded only out of received buffers: a step without transport activity
    // forwarded none.
    if (net_.activity(r) != activity) charge_forwarding(r, rp);
    net_.charge(r, (c_.model.push_s + c_.model.app_s) * static_cast<double>(n.pushes) +
                       c_.model.pull_s * static_cast<double>(n.pulls));
    if (e.current_state() == state::complete && (!y || y->current_state() == state::complete)) {
      rp.complete = true;
      return true;
    }
    const bool progress = n.pushes > 0 || n.pulls > 0 || net_.activity(r) != activity ||
                          e.current_state() != before || (y && y->current_state() != y_before);
    // One more step after the last progress (the engine may move its own buffers, e.g.
    // to itself, without the network); then sleep until an arrival or a credit.
    rp.idle_steps = progress ? 0 : rp.idle_steps + 1;
    if (rp.idle_steps < 2) net_.wake(r);
    return false;
  }

  void advance(engine& e, int r, bool done) {
    const int rc = e.advance(done);
    if (rc < 0)
      throw run_failure("advance on rank " + std::to_string(r) + " returned " + std::to_string(rc) +
                        ": " + e.last_message());
  }

  std::uint64_t push_batch(engine& e, int r, rank_progress& rp) {
    std::uint64_t pushed = 0;
    const std::uint64_t n = dest_.items_of(r);
    for (int k = 0; k < c_.batch && rp.next < n; ++k) {
      const int d = dest_(r, rp.next);
      if (!push_word(e, r, d, static_cast<std::uint64_t>(r) << seq_bits | rp.next)) break;
      sent_.add(d, fingerprint(r, d, rp.next));
      // SIM-8: the reply to this query comes back from d.
      if (!replies_.empty()) reply_sent_.add(r, fingerprint(d, r, rp.next));
      if (d != r) ++rp.remote_items;
      ++rp.next;
      ++pushed;
    }
    return pushed;
  }

  bool push_word(engine& e, int r, int d, std::uint64_t word) {
    fill_payload(item_, word);
    const int rc = e.push(item_.data(), d);
    if (rc < 0)
      throw run_failure("push on rank " + std::to_string(r) + " returned " + std::to_string(rc));
    return rc == 1;
  }

  // Pulls what arrived at `r`: items (or queries, each answered by a reply pushed back to its
  // source: bale's ig, biconvey's serve()), then replies.
  void receive(int r, engine& e, engine* y, rank_progress& rp, step_counts& n) {
    termination::item_view v;
    while (true) {
      if (rp.pending) {
        if (!push_word(*y, r, rp.pending_to, rp.pending_word)) break;
        ++n.pushes;
        if (rp.pending_to != r) ++rp.remote_items;
        rp.pending = false;
      }
      if (!pull_one(e, r, v)) break;
      ++n.pulls;
      std::uint64_t word = 0;
      std::memcpy(&word, v.data, sizeof word);
      check_payload(v, r, word);
      const int src = static_cast<int>(word >> seq_bits);
      const std::uint64_t seq = word & ((std::uint64_t{1} << seq_bits) - 1);
      if (src != v.from)
        throw run_failure("an item from rank " + std::to_string(src) + " pulled at rank " +
                          std::to_string(r) + " says it came from " + std::to_string(v.from));
      got_.add(r, fingerprint(src, r, seq));
      ++pulled_;
      fifo_(src, r, seq);
      if (y) {
        rp.pending = true;
        rp.pending_to = src;
        rp.pending_word = word;
      }
    }
    while (y && pull_one(*y, r, v)) {
      ++n.pulls;
      std::uint64_t word = 0;
      std::memcpy(&word, v.data, sizeof word);
      check_payload(v, r, word);
      const std::uint64_t seq = word & ((std::uint64_t{1} << seq_bits) - 1);
      // SIM-8: a reply comes back to its requester, from the rank the query went to.
      if (static_cast<int>(word >> seq_bits) != r || seq >= dest_.items_of(r) ||
          dest_(r, seq) != v.from)
        throw run_failure("a reply to query #" + std::to_string(seq) + " of rank " +
                          std::to_string(word >> seq_bits) + " reached rank " + std::to_string(r) +
                          " from rank " + std::to_string(v.from) + " (SIM-8)");
      reply_got_.add(r, fingerprint(v.from, r, seq));
      reply_fifo_(v.from, r, seq);
    }
  }

  static void check_payload(const termination::item_view& v, int r, std::uint64_t word) {
    if (!payload_ok(v.data, v.bytes, word))
      throw run_failure("an item pulled at rank " + std::to_string(r) + " from rank " +
                        std::to_string(v.from) + " has payload bytes that are not its own (SIM-1)");
  }

  bool pull_one(engine& e, int r, termination::item_view& v) {
    const int rc = e.pull(v);
    if (rc == 0) return false;
    if (rc < 0 || v.bytes != c_.item_bytes)
      throw run_failure("pull on rank " + std::to_string(r) + " returned " + std::to_string(rc) +
                        " (" + std::to_string(v.bytes) + " bytes)");
    return true;
  }

  // Items the step put into stage buffers beyond its own pushes were forwarded.
  void charge_forwarding(int r, rank_progress& rp) {
    if (c_.model.forward_s == 0 && plan_->max_hops() <= 1) return;
    std::uint64_t in_stages = 0;
    for (const auto* v : {&engines_, &replies_})
      if (!v->empty())
        for (const auto& s : (*v)[static_cast<std::size_t>(r)]->stats().stages)
          in_stages += s.items;
    const std::uint64_t forwarded = in_stages - rp.remote_items - rp.stage_items;
    rp.stage_items += forwarded;
    net_.charge(r, c_.model.forward_s * static_cast<double>(forwarded));
  }

  void check_oracle(run_result& res) const {
    for (int d = 0; d < p_; ++d) {
      const auto i = static_cast<std::size_t>(d);
      if (sent_.n[i] != got_.n[i] || sent_.sum[i] != got_.sum[i])
        throw run_failure("exactly-once violated (SIM-1): rank " + std::to_string(d) +
                          " was sent " + std::to_string(sent_.n[i]) + " items and pulled " +
                          std::to_string(got_.n[i]) +
                          (sent_.n[i] == got_.n[i] ? " (other items)" : ""));
      if (reply_sent_.n[i] != reply_got_.n[i] || reply_sent_.sum[i] != reply_got_.sum[i])
        throw run_failure("a reply lost or repeated (SIM-8): rank " + std::to_string(d) + " sent " +
                          std::to_string(reply_sent_.n[i]) + " queries and pulled " +
                          std::to_string(reply_got_.n[i]) + " replies");
      res.items += got_.n[i];
      res.replies += reply_got_.n[i];
    }
  }

  void collect(run_result& res) const;

  const run_config& c_;
  std::shared_ptr<const router::route_plan> plan_;
  int p_;
  std::vector<int> node_of_;  // for the link counters
  aggregation::timed_network net_;
  destinations dest_;
  std::vector<rank_progress> ranks_;
  tally sent_, got_;              // items (queries) per destination
  std::uint64_t pulled_ = 0;      // items (queries) pulled so far, on any rank
  tally reply_sent_, reply_got_;  // replies per requester
  std::vector<std::byte> item_;
  order_check fifo_, reply_fifo_;
  std::vector<link_count> links_;  // run_config::count_links; the engines' transports count here
  std::vector<std::unique_ptr<engine>> engines_;
  std::vector<std::unique_ptr<engine>> replies_;  // request-reply only
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
    std::size_t memory = 0;
    for (const auto* v : {&engines_, &replies_}) {
      if (v->empty()) continue;
      const engine& e = *(*v)[static_cast<std::size_t>(r)];
      const auto st = e.stats();
      for (std::size_t s = 0; s < st.stages.size() && s < res.per_stage.size(); ++s)
        res.per_stage[s].items += st.stages[s].items;
      memory += e.max_memory_bytes();
    }
    res.memory_bytes_per_rank = std::max(res.memory_bytes_per_rank, memory);
    if (net_.clock(r) >= res.predicted_seconds) {
      res.predicted_seconds = net_.clock(r);
      res.critical_path_messages = net_.depth(r);
    }
    sum += net_.clock(r);
    res.rank_seconds.push_back(net_.clock(r));
    res.network_items += ranks_[static_cast<std::size_t>(r)].remote_items;
    for (std::uint64_t i = 0; i < dest_.items_of(r); ++i) {
      const int d = dest_(r, i);
      if (d == r) continue;
      res.item_hops += static_cast<std::uint64_t>(router::route_hops(*plan_, r, d));
      if (!replies_.empty())
        res.item_hops += static_cast<std::uint64_t>(router::route_hops(*plan_, d, r));
    }
  }
  res.mean_rank_seconds = sum / static_cast<double>(p_);
  res.links = links_;
}

}  // namespace

run_result run(const run_config& c) {
  const auto t0 = std::chrono::steady_clock::now();
  prepared x = prepare(c);
  run_result res = std::move(x.res);
  runner rn(c, std::move(x.plan), std::move(x.node_of), std::move(x.socket_of), &x.matrix);
  const auto t1 = std::chrono::steady_clock::now();
  rn.run(res);
  const auto t2 = std::chrono::steady_clock::now();
  res.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  res.wall_seconds = std::chrono::duration<double>(t2 - t1).count();
  return res;
}

}  // namespace convoy::sim
