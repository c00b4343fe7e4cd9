// The streaming engine: aggregation at every hop and dimension-ordered termination.
// termination/README.md states the invariants cited here as (T<n>).
#include <algorithm>
#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <convoy/termination/engine.hpp>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <new>
#include <thread>
#include <utility>

namespace convoy::termination {

namespace agg = convoy::aggregation;

const char* to_string(state s) noexcept {
  switch (s) {
    case state::dormant:
      return "DORMANT";
    case state::working:
      return "WORKING";
    case state::endgame:
      return "ENDGAME";
    case state::cleanup:
      return "CLEANUP";
    case state::complete:
      return "COMPLETE";
  }
  return "?";
}

const char* error_string(int code) noexcept {
  switch (code) {
    case error_state:
      return "operation not legal in the conveyor's current state";
    case error_rank:
      return "destination rank out of range";
    case error_size:
      return "item size invalid or too large for a buffer";
    case error_argument:
      return "invalid argument (null pointer)";
    case error_unpull:
      return "nothing to unpull: no successful pull since the last pull or advance";
    case error_elastic:
      return "elastic/rigid mismatch (elastic call on a rigid conveyor, or item size differs from "
             "begin's)";
    case error_transport:
      return "transport failure";
    case error_alloc:
      return "out of memory";
    default:
      return code >= 0 ? "no error" : "unknown error";
  }
}

namespace {

// The received buffers of one in-link, in arrival order: this cycle's first (`now`
// of them), then any of the next cycle. A sender never has more than n_buffers
// unreleased buffers on a link, so a fixed ring of n_buffers slots (in one flat array
// shared by all links) always has room.
class link_ring {
 public:
  void bind(agg::received* slots, int capacity) noexcept {
    slots_ = slots;
    capacity_ = capacity;
  }
  [[nodiscard]] bool empty() const noexcept { return now_ == 0; }  // nothing of this cycle
  [[nodiscard]] int now() const noexcept { return now_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] agg::received& front() noexcept { return slots_[head_]; }
  [[nodiscard]] const agg::received& at(int i) const noexcept {
    return slots_[(head_ + i) % capacity_];
  }
  // Appends a buffer; `current` says whether it belongs to this cycle.
  void push_back(const agg::received& r, bool current) {
    if (size_ == capacity_)
      throw convoy::error("engine: a link delivered more buffers than its n_buffers credits");
    slots_[(head_ + size_) % capacity_] = r;
    ++size_;
    if (current) ++now_;
  }
  void pop_front() noexcept {
    head_ = (head_ + 1) % capacity_;
    --size_;
    --now_;
  }
  void push_front(const agg::received& r) noexcept {
    head_ = (head_ + capacity_ - 1) % capacity_;
    slots_[head_] = r;
    ++size_;
    ++now_;
  }
  // A new cycle: the first `n` buffers (those stamped with it) become current.
  void set_now(int n) noexcept { now_ = n; }

 private:
  agg::received* slots_ = nullptr;
  int capacity_ = 0, head_ = 0, size_ = 0, now_ = 0;
};

}  // namespace

struct engine::impl {
  struct out_link {
    int stage = 0;
    int peer = 0;
    std::uint32_t seq = 0;  // buffers posted this epoch
    std::uint64_t first_tick = 0;
    bool closed = false;  // its stage's last buffer was posted this epoch
  };

  struct in_link {
    int stage = 0;
    int peer = 0;
    std::uint32_t received = 0;
    std::uint32_t expected = std::numeric_limits<std::uint32_t>::max();
    link_ring queue;         // received buffers, front being processed
    std::size_t offset = 0;  // cursor in queue.front()
    bool ready = false;      // on the ready list: head record (or whole buffer) deliverable
    bool bulk = false;       // every record is this rank's, tag-free and rigid: deliver whole
    int bulk_from = -1;      // the source of every record of a bulk link
    bool loopback = false;   // items this rank pushed to itself (no transport, no counting)
    // Decoded head record (valid when ready and not bulk).
    agg::record head;
    int head_src = -1;
    [[nodiscard]] bool finished() const noexcept { return loopback || received == expected; }
  };

  // Where the last per-item pull came from, for unpull (window pulls: window_.pulled).
  struct last_pull {
    bool valid = false;
    int link = -1;
    std::size_t offset = 0;
    bool buffer_popped = false;
  };

  engine& e;
  std::unique_ptr<agg::transport> transport;
  int n_ranks = 0;
  int n_stages = 0;
  int n_out = 0;                   // real out-links; lane n_out is the loopback
  int self_in = 0;                 // in-link id of the loopback
  std::size_t max_item_bytes = 0;  // largest payload that fits every stage
  std::vector<int> tag_bytes;      // per stage
  std::vector<int> out_base;       // first out-link of each stage
  std::vector<out_link> outs;
  std::vector<lane> lanes;  // n_out + 1
  std::vector<in_link> ins;
  std::vector<route_entry> routes;             // per destination, if the plan is small
  std::vector<agg::received> ring_slots;       // storage of every in-link's ring
  std::vector<std::vector<int>> ins_of_stage;  // in-link ids per stage (loopback in none)
  std::deque<int> ready;                       // in-links whose head is deliverable
  // Loopback buffers (n_buffers of capacity_bytes) and the free ones.
  std::vector<std::unique_ptr<std::byte, void (*)(std::byte*)>> self_bufs;
  std::vector<int> self_free;
  int self_slot = -1;  // the loopback buffer being filled
  bool done_pushing = false;
  int closed_stages = 0;
  std::uint32_t epoch = 0;
  std::uint64_t tick = 0;
  last_pull last;
  agg::received pending_release;  // fully pulled buffer kept until the next operation
  bool has_pending_release = false;
  static constexpr int idle_rounds_before_yield = 8;
  bool post_failed = false;  // the transport threw in a post from the push hot path
  // Idle detection: advance() calls in a row that saw no push, pull or buffer move.
  std::uint64_t activity_mark = 0;
  int idle_advances = 0;

  // Everything that shows progress, summed (only compared for change).
  [[nodiscard]] std::uint64_t activity() const noexcept {
    return e.pushes_ + e.pulls_ + life.buffers_sent + life.buffers_received + life.unpulls;
  }
  engine_stats now, life;  // pushes, pulls and per-stage items live in the engine/lanes

  impl(engine& owner, std::unique_ptr<agg::transport> t) : e(owner), transport(std::move(t)) {}

  [[nodiscard]] bool elastic() const noexcept { return e.options_.elastic; }
  [[nodiscard]] std::size_t capacity() const noexcept { return e.options_.capacity_bytes; }

  static void free_aligned(std::byte* p) { ::operator delete (p, std::align_val_t{64}); }

  void setup() {
    const auto& plan = *e.plan_;
    n_ranks = plan.n_ranks();
    n_stages = plan.n_stages();
    agg::link_layout layout;
    layout.rank = e.rank_;
    layout.n_ranks = n_ranks;
    layout.capacity_bytes = capacity();
    layout.n_buffers = e.options_.n_buffers;
    ins_of_stage.resize(static_cast<std::size_t>(n_stages));
    for (int s = 0; s < n_stages; ++s) {
      tag_bytes.push_back(plan.tag_bytes(s));
      out_base.push_back(static_cast<int>(outs.size()));
      for (int p : plan.out_peers(e.rank_, s)) {
        out_link o;
        o.stage = s;
        o.peer = p;
        outs.push_back(o);
        layout.out_links.push_back({s, p});
      }
      for (int p : plan.in_peers(e.rank_, s)) {
        ins_of_stage[static_cast<std::size_t>(s)].push_back(static_cast<int>(ins.size()));
        in_link l;
        l.stage = s;
        l.peer = p;
        // Without a tag on the stage, every record of the link has the same source and
        // destination, which decode() gives from the link's ends alone: if the destination
        // is this rank, whole buffers are delivered (any stage, e.g. tensor order 2's local
        // stage when there is one group).
        if (!elastic() && tag_bytes.back() == 0) {
          int src = -1, dst = -1;
          plan.decode(s, p, e.rank_, 0, src, dst);
          l.bulk = dst == e.rank_ && src >= 0 && src < n_ranks;
          l.bulk_from = src;
        }
        ins.push_back(l);
        layout.in_links.push_back({s, p});
      }
    }
    out_base.push_back(static_cast<int>(outs.size()));
    n_out = static_cast<int>(outs.size());
    lanes.resize(outs.size() + 1);
    for (int k = 0; k < n_out; ++k)
      lanes[static_cast<std::size_t>(k)].tag_bytes = static_cast<std::uint32_t>(
          tag_bytes[static_cast<std::size_t>(outs[static_cast<std::size_t>(k)].stage)]);
    {
      in_link self;
      self.stage = n_stages - 1;
      self.peer = e.rank_;
      self.loopback = true;
      self.bulk = !elastic();
      self.bulk_from = e.rank_;
      self_in = static_cast<int>(ins.size());
      ins.push_back(self);
    }
    const int cap = e.options_.n_buffers;
    ring_slots.resize(ins.size() * static_cast<std::size_t>(cap));
    for (std::size_t i = 0; i < ins.size(); ++i)
      ins[i].queue.bind(ring_slots.data() + i * static_cast<std::size_t>(cap), cap);
    for (int k = 0; k < cap; ++k) {
      self_bufs.emplace_back(
          static_cast<std::byte*>(::operator new (capacity(), std::align_val_t{64})),
          &free_aligned);
      self_free.push_back(cap - 1 - k);
    }
    transport->open(layout);
    int max_tag = 0;
    for (int t : tag_bytes) max_tag = std::max(max_tag, t);
    max_item_bytes = capacity() - agg::header_bytes - static_cast<std::size_t>(max_tag) -
                     (elastic() ? agg::size_field_bytes : 0);
    build_routes();
    now.stages.resize(static_cast<std::size_t>(n_stages));
    life.stages.resize(static_cast<std::size_t>(n_stages));
    e.lanes_ = lanes.data();
    e.n_ranks_u_ = static_cast<unsigned>(n_ranks);
  }

  // The first hop toward every destination, when the plan is small enough and every tag
  // of a first hop fits 32 bits.
  void build_routes() {
    if (n_ranks > e.options_.route_table_max_ranks) return;
    routes.resize(static_cast<std::size_t>(n_ranks));
    for (int d = 0; d < n_ranks; ++d) {
      auto& r = routes[static_cast<std::size_t>(d)];
      if (d == e.rank_) {
        r = {static_cast<std::uint32_t>(n_out), 0};
        continue;
      }
      const auto h = e.plan_->next_hop(e.rank_, d, 0);
      const std::uint64_t tag = e.plan_->encode(h.stage, e.rank_, h.rank, e.rank_, d);
      if (tag > std::numeric_limits<std::uint32_t>::max()) {
        routes.clear();
        routes.shrink_to_fit();
        return;
      }
      r.lane =
          static_cast<std::uint32_t>(out_base[static_cast<std::size_t>(h.stage)] + h.peer_index);
      r.tag = static_cast<std::uint32_t>(tag);
    }
    e.routes_ = routes.data();
  }

  // Memory of this engine's own: loopback buffers and the route table.
  [[nodiscard]] std::size_t fixed_bytes() const noexcept {
    return self_bufs.size() * capacity() + routes.size() * sizeof(route_entry);
  }

  // ---- sending ----------------------------------------------------------------

  [[nodiscard]] bool lane_has_items(int link) const noexcept {
    const lane& l = lanes[static_cast<std::size_t>(link)];
    return l.buf && l.used > agg::header_bytes;
  }

  // Takes a fresh buffer for lane `link`; false if none is free (backpressure, T5).
  bool open_lane(int link) {
    lane& l = lanes[static_cast<std::size_t>(link)];
    std::byte* b = nullptr;
    if (link == n_out) {
      if (self_free.empty()) return false;
      self_slot = self_free.back();
      self_free.pop_back();
      b = self_bufs[static_cast<std::size_t>(self_slot)].get();
    } else {
      b = transport->acquire(link);
      if (!b) return false;
      outs[static_cast<std::size_t>(link)].first_tick = tick;
    }
    l.buf = b;
    l.used = static_cast<std::uint32_t>(agg::header_bytes);
    // Room for one more rigid record and the push fast path's 8-byte tag store.
    const std::size_t rec = std::max<std::size_t>(l.record_bytes, 8);
    l.limit = elastic() ? 0 : static_cast<std::uint32_t>(capacity() - rec);
    return true;
  }

  void close_lane(lane& l) noexcept {
    l.buf = nullptr;
    l.used = 1;
    l.limit = 0;
  }

  void post(int link, bool is_last) {
    lane& l = lanes[static_cast<std::size_t>(link)];
    agg::buffer_header h{};
    h.bytes = l.used;
    h.epoch = epoch;
    h.flags = is_last ? agg::flag_last : 0u;
    std::byte* b = l.buf;
    const std::size_t used = l.used;
    close_lane(l);
    if (link == n_out) {  // loopback: straight onto this rank's own in-link
      h.seq = 0;
      std::memcpy(b, &h, sizeof h);
      agg::received r;
      r.in_link = self_in;
      r.data = b;
      r.bytes = used;
      r.slot = self_slot;
      in_link& s = ins[static_cast<std::size_t>(self_in)];
      const bool was_empty = s.queue.empty();
      s.queue.push_back(r, true);
      if (was_empty) {
        s.offset = agg::header_bytes;
        examine(self_in);
      }
      return;
    }
    out_link& o = outs[static_cast<std::size_t>(link)];
    h.seq = ++o.seq;
    std::memcpy(b, &h, sizeof h);
    for (auto* st : {&now, &life}) {
      auto& ss = st->stages[static_cast<std::size_t>(o.stage)];
      ++ss.buffers;
      ss.bytes += used;
      ++st->buffers_sent;
      st->bytes_sent += used;
    }
    transport->post(link, b, used);
  }

  // Gives a delivered buffer back: to the transport, or to the loopback pool.
  void release_buffer(const agg::received& r) {
    if (r.in_link == self_in)
      self_free.push_back(r.slot);
    else
      transport->release(r);
  }

  // Appends a record to lane `link`. Returns false (nothing written) if the lane has no
  // free buffer: backpressure (T5).
  bool append(int link, std::uint64_t tag, const void* payload, std::size_t n) {
    lane& l = lanes[static_cast<std::size_t>(link)];
    const int tb = static_cast<int>(l.tag_bytes);
    const std::size_t need = agg::record_bytes(tb, elastic(), n);
    if (l.buf && l.used + need > capacity()) post(link, false);
    if (!l.buf && !open_lane(link)) return false;
    agg::put_record(l.buf + l.used, tag, tb, elastic(), payload, n);
    l.used += static_cast<std::uint32_t>(need);
    ++l.items;
    // A rigid buffer that cannot take another item goes at once (overlaps the send
    // with further pushes).
    if (!elastic() && l.used > l.limit) post(link, false);
    return true;
  }

  // Routes an item now at this rank (pushed here or arrived via stage first_stage-1).
  int route(int src, int dst, int first_stage, const void* payload, std::size_t n) {
    const auto h = e.plan_->next_hop(e.rank_, dst, first_stage);
    const int link = out_base[static_cast<std::size_t>(h.stage)] + h.peer_index;
    const std::uint64_t tag = e.plan_->encode(h.stage, e.rank_, h.rank, src, dst);
    return append(link, tag, payload, n) ? 1 : 0;
  }

  // A checked push: to the loopback lane or onto its first hop. Returns 1, 0 (full) or
  // error_transport.
  int push_item(const void* item, std::size_t n, int dest) noexcept {
    int rc;
    try {
      if (dest == e.rank_)
        rc = append(n_out, 0, item, n) ? 1 : 0;
      else if (!routes.empty())
        rc = append(static_cast<int>(routes[static_cast<std::size_t>(dest)].lane),
                    routes[static_cast<std::size_t>(dest)].tag, item, n)
                 ? 1
                 : 0;
      else
        rc = route(e.rank_, dest, 0, item, n);
    } catch (const std::exception& ex) {
      e.last_message_ = ex.what();
      return error_transport;
    }
    if (rc > 0) ++e.pushes_;
    return rc;
  }

  // ---- receiving --------------------------------------------------------------

  void release_pending() {
    if (!has_pending_release) return;
    has_pending_release = false;
    release_buffer(pending_release);
  }

  // The window's buffer is fully pulled: give it back and look at the link's next one.
  void close_window() {
    window& w = e.window_;
    const int id = w.link;
    w = {};
    in_link& l = ins[static_cast<std::size_t>(id)];
    release_buffer(l.queue.front());
    l.queue.pop_front();
    l.offset = agg::header_bytes;
    examine(id);
  }

  // Makes the last pull final (no unpull can follow any more): frees its space and
  // looks at the next record of the link it came from.
  void settle() {
    e.window_.pulled = false;
    if (e.window_.link >= 0 && e.window_.cur >= e.window_.end) close_window();
    const bool valid = last.valid;
    const int id = last.link;
    last = {};
    release_pending();
    if (valid) examine(id);
  }

  void drain_transport() {
    agg::received r;
    while (transport->poll(r)) {
      in_link& l = ins[static_cast<std::size_t>(r.in_link)];
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      for (auto* st : {&now, &life}) ++st->buffers_received;
      if (h.epoch != epoch || e.state_ == state::dormant || e.state_ == state::complete ||
          l.queue.size() > l.queue.now()) {
        // The sender has begun the next cycle before us (T8): keep it for begin().
        l.queue.push_back(r, false);
        continue;
      }
      accept(l, r, h);
    }
  }

  void accept(in_link& l, const agg::received& r, const agg::buffer_header& h) {
    ++l.received;
    if (h.flags & agg::flag_last) l.expected = h.seq;
    const bool was_empty = l.queue.empty();
    l.queue.push_back(r, true);
    if (was_empty) {
      l.offset = agg::header_bytes;
      examine(static_cast<int>(&l - ins.data()));
    }
  }

  void make_ready(in_link& l, int id) {
    if (!l.ready) {
      l.ready = true;
      ready.push_back(id);
    }
  }

  // Looks at the head of in-link `id`: forwards records until one is deliverable (then
  // the link goes on the ready list), the queue is empty, or a forward does not fit.
  // Bulk links go on the ready list with their whole front buffer.
  // Returns false if it stopped on a forward that did not fit.
  bool examine(int id) {
    in_link& l = ins[static_cast<std::size_t>(id)];
    if (e.window_.link == id) return true;  // its front buffer is being pulled
    const int tb = l.loopback ? 0 : tag_bytes[static_cast<std::size_t>(l.stage)];
    const bool last_stage = l.stage == n_stages - 1;
    while (!l.queue.empty()) {
      const agg::received& r = l.queue.front();
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      if (l.offset >= h.bytes) {
        release_buffer(r);
        l.queue.pop_front();
        l.offset = agg::header_bytes;
        continue;
      }
      if (l.bulk) {
        make_ready(l, id);
        return true;
      }
      const agg::record rec = agg::get_record(r.data + l.offset, tb, elastic(), e.item_bytes_);
      int src = e.rank_, dst = e.rank_;
      if (!l.loopback) e.plan_->decode(l.stage, l.peer, e.rank_, rec.tag, src, dst);
      if (last_stage || dst == e.rank_) {
        l.head = rec;
        l.head_src = src;
        make_ready(l, id);
        return true;
      }
      if (!route(src, dst, l.stage + 1, rec.payload, rec.bytes)) return false;
      l.offset += rec.record_bytes;
    }
    return true;
  }

  void forward_all() {
    // Links blocked on a full out-buffer, and links with queued buffers not on the ready
    // list, are retried.
    for (std::size_t id = 0; id < ins.size(); ++id) {
      in_link& l = ins[id];
      if (!l.ready && e.window_.link != static_cast<int>(id) && !l.queue.empty())
        examine(static_cast<int>(id));
    }
  }

  // Items pushed to this rank become pullable: the loopback lane's buffer is handed over.
  bool flush_self() {
    if (!lane_has_items(n_out)) return false;
    post(n_out, false);
    return true;
  }

  // The next delivered item off the ready list (precondition: not empty).
  int take_ready(item_view& out, bool rigid) {
    const int id = ready.front();
    in_link& l = ins[static_cast<std::size_t>(id)];
    const agg::received& r = l.queue.front();
    if (l.bulk) {
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      ready.pop_front();
      l.ready = false;
      window& w = e.window_;
      w.cur = r.data + l.offset;
      w.end = r.data + h.bytes;
      w.stride = e.item_bytes_;
      w.from = l.bulk_from;
      w.link = id;
      out = {w.cur, e.item_bytes_, w.from};
      w.cur += w.stride;
      w.pulled = true;
      return 1;
    }
    if (rigid && elastic() && l.head.bytes != e.item_bytes_) return error_elastic;
    ready.pop_front();
    l.ready = false;
    out = {l.head.payload, l.head.bytes, l.head_src};
    last.valid = true;
    last.link = id;
    last.offset = l.offset;
    l.offset += l.head.record_bytes;
    // The buffer stays alive until settle() so that the item stays valid and unpull can
    // restore it.
    agg::buffer_header h{};
    std::memcpy(&h, r.data, sizeof h);
    if (l.offset >= h.bytes) {
      pending_release = r;
      has_pending_release = true;
      last.buffer_popped = true;
      l.queue.pop_front();
      l.offset = agg::header_bytes;
    }
    return 1;
  }

  // ---- termination (TRAM sec. III.D) ----------------------------------------------

  // Stage s may close once this rank is done pushing and every in-link of every earlier
  // stage has delivered its last buffer and been fully processed (T4): no item can be
  // routed into stage s afterwards, since routes only climb in stage.
  [[nodiscard]] bool can_close(int s) const noexcept {
    if (!done_pushing) return false;
    for (int j = 0; j < s; ++j)
      for (int id : ins_of_stage[static_cast<std::size_t>(j)]) {
        const in_link& l = ins[static_cast<std::size_t>(id)];
        if (!l.finished() || !l.queue.empty()) return false;
      }
    return true;
  }

  // Posts a last buffer on every out-link of stage s. Returns false if some link has no
  // free buffer yet (retried on the next advance).
  bool close_stage(int s) {
    bool all = true;
    for (int link = out_base[static_cast<std::size_t>(s)];
         link < out_base[static_cast<std::size_t>(s) + 1]; ++link) {
      out_link& o = outs[static_cast<std::size_t>(link)];
      if (o.closed) continue;
      if (!lanes[static_cast<std::size_t>(link)].buf && !open_lane(link)) {
        all = false;
        continue;
      }
      post(link, true);
      o.closed = true;
    }
    return all;
  }

  void close_stages() {
    while (closed_stages < n_stages && can_close(closed_stages)) {
      if (!close_stage(closed_stages)) return;
      ++closed_stages;
    }
  }

  [[nodiscard]] bool everything_received() const noexcept {
    if (closed_stages < n_stages) return false;
    for (const auto& l : ins)
      if (!l.finished()) return false;
    return true;
  }

  [[nodiscard]] bool nothing_to_pull() const noexcept {
    if (lane_has_items(n_out)) return false;
    for (const auto& l : ins)
      if (!l.queue.empty()) return false;
    return true;
  }

  // Posts every partly filled buffer that has waited at least `period` advance calls.
  void flush_older_than(std::uint64_t period) {
    for (int link = 0; link < n_out; ++link) {
      const out_link& o = outs[static_cast<std::size_t>(link)];
      if (lane_has_items(link) && tick - o.first_tick >= period) post(link, false);
    }
  }
  void steady_flush() { flush_older_than(static_cast<std::uint64_t>(e.options_.steady_period)); }

  // Folds this cycle's hot-path counters into the lifetime statistics.
  void fold_counters() {
    life.pushes += e.pushes_;
    life.pulls += e.pulls_;
    e.pushes_ = e.pulls_ = 0;
    for (int k = 0; k < n_out; ++k) {
      lane& l = lanes[static_cast<std::size_t>(k)];
      life.stages[static_cast<std::size_t>(outs[static_cast<std::size_t>(k)].stage)].items +=
          l.items;
      l.items = 0;
    }
    lanes[static_cast<std::size_t>(n_out)].items = 0;
  }

  [[nodiscard]] engine_stats stats(bool cumulative) const {
    engine_stats s = cumulative ? life : now;
    s.pushes += e.pushes_;
    s.pulls += e.pulls_;
    for (int k = 0; k < n_out; ++k)
      s.stages[static_cast<std::size_t>(outs[static_cast<std::size_t>(k)].stage)].items +=
          lanes[static_cast<std::size_t>(k)].items;
    return s;
  }

  void start_epoch(std::size_t item_bytes) {
    fold_counters();
    ++epoch;
    done_pushing = false;
    closed_stages = 0;
    tick = 0;
    last = {};
    now = {};
    now.stages.resize(static_cast<std::size_t>(n_stages));
    ready.clear();
    e.window_ = {};
    for (int k = 0; k <= n_out; ++k) {
      lane& l = lanes[static_cast<std::size_t>(k)];
      l.record_bytes = l.tag_bytes + static_cast<std::uint32_t>(item_bytes);
    }
    for (auto& o : outs) {
      o.seq = 0;
      o.closed = false;
    }
    for (auto& l : ins) {
      l.received = 0;
      l.expected = std::numeric_limits<std::uint32_t>::max();
      l.ready = false;
      l.offset = agg::header_bytes;
    }
    // Buffers that arrived early for this epoch are accepted now, in arrival order.
    for (std::size_t id = 0; id < ins.size(); ++id) {
      in_link& l = ins[id];
      int n = 0;
      for (; n < l.queue.size(); ++n) {
        agg::buffer_header h{};
        std::memcpy(&h, l.queue.at(n).data, sizeof h);
        if (h.epoch != epoch) break;
        ++l.received;
        if (h.flags & agg::flag_last) l.expected = h.seq;
      }
      l.queue.set_now(n);
      if (n > 0) examine(static_cast<int>(id));
    }
  }
};

engine::engine(std::shared_ptr<const router::route_plan> plan, int rank,
               std::unique_ptr<aggregation::transport> transport, engine_options options)
    : plan_(std::move(plan)), rank_(rank), options_(options) {
  if (!plan_) throw convoy::error("engine: null route plan");
  if (!transport) throw convoy::error("engine: null transport");
  if (rank_ < 0 || rank_ >= plan_->n_ranks())
    throw convoy::error("engine: rank " + std::to_string(rank_) + " is outside the plan's " +
                        std::to_string(plan_->n_ranks()) + " ranks");
  if (options_.n_buffers < 1)
    throw convoy::error("engine: n_buffers must be >= 1, got " +
                        std::to_string(options_.n_buffers));
  int max_tag = 0;
  for (int s = 0; s < plan_->n_stages(); ++s) max_tag = std::max(max_tag, plan_->tag_bytes(s));
  const std::size_t min_capacity = aggregation::header_bytes + static_cast<std::size_t>(max_tag) +
                                   aggregation::size_field_bytes + 8;
  if (options_.capacity_bytes < min_capacity)
    throw convoy::error("engine: capacity_bytes " + std::to_string(options_.capacity_bytes) +
                        " is too small: a buffer needs at least " + std::to_string(min_capacity) +
                        " bytes");
  if (options_.capacity_bytes > (std::size_t{1} << 30))
    throw convoy::error("engine: capacity_bytes " + std::to_string(options_.capacity_bytes) +
                        " is above the 1 GiB limit");
  if (options_.steady_period < 1) throw convoy::error("engine: steady_period must be >= 1");
  impl_ = std::make_unique<impl>(*this, std::move(transport));
  impl_->setup();
}

engine::~engine() = default;

int engine::n_ranks() const noexcept { return plan_->n_ranks(); }

std::size_t engine::max_item_bytes() const noexcept { return impl_->max_item_bytes; }

int engine::begin(std::size_t item_bytes) {
  if (state_ != state::dormant) return error_state;
  if (item_bytes == 0 && !options_.elastic) return error_size;
  if (item_bytes > max_item_bytes()) return error_size;
  item_bytes_ = item_bytes;
  impl_->start_epoch(item_bytes);
  state_ = state::working;
  fast_push_ = !options_.elastic && routes_ != nullptr;
  ++impl_->now.begins;
  ++impl_->life.begins;
  return 1;
}

int engine::push_slow(const void* item, int dest) noexcept {
  if (state_ != state::working) [[unlikely]]
    return error_state;
  if (options_.elastic) return epush(item, item_bytes_, dest);
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(impl_->n_ranks)) [[unlikely]]
    return error_rank;
  if (!item) [[unlikely]]
    return error_argument;
  return impl_->push_item(item, item_bytes_, dest);
}

void engine::lane_full(std::uint32_t link) noexcept {
  try {
    impl_->post(static_cast<int>(link), false);
  } catch (const std::exception& ex) {
    // The failure shows on the next advance().
    last_message_ = ex.what();
    impl_->post_failed = true;
  }
}

int engine::epush(const void* item, std::size_t bytes, int dest) noexcept {
  if (!options_.elastic) return error_elastic;
  if (state_ != state::working) return error_state;
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(impl_->n_ranks)) return error_rank;
  if (!item && bytes) return error_argument;
  if (bytes > impl_->max_item_bytes) return error_size;
  return impl_->push_item(item, bytes, dest);
}

int engine::pull_slow(item_view& out, bool rigid) noexcept {
  if (state_ == state::dormant) return error_state;
  auto& m = *impl_;
  try {
    m.settle();
    if (state_ == state::complete) return 0;
    // Items to self wait in the loopback lane until nothing else is ready or it fills.
    if (m.ready.empty() && !m.flush_self()) return 0;
    if (m.ready.empty()) return 0;
    const int rc = m.take_ready(out, rigid);
    if (rc > 0) ++pulls_;
    return rc;
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
}

int engine::unpull() noexcept {
  if (state_ == state::dormant) return error_state;
  if (state_ == state::complete) return 0;  // legal, but there is nothing to put back
  auto& m = *impl_;
  if (window_.pulled) {
    window_.cur -= window_.stride;
    window_.pulled = false;
  } else if (m.last.valid) {
    const int id = m.last.link;
    auto& l = m.ins[static_cast<std::size_t>(id)];
    if (m.last.buffer_popped) {
      l.queue.push_front(m.pending_release);
      m.has_pending_release = false;
    }
    l.offset = m.last.offset;  // l.head still describes the pulled record
    l.ready = true;
    m.ready.push_front(id);
    m.last = {};
  } else {
    return error_unpull;
  }
  ++m.now.unpulls;
  ++m.life.unpulls;
  return 1;
}

int engine::advance(bool done) noexcept {
  auto& m = *impl_;
  switch (state_) {
    case state::dormant:
      return error_state;
    case state::complete:
      return termination::done;
    case state::endgame:
    case state::cleanup:
      if (!done) return error_state;
      break;
    case state::working:
      break;
  }
  ++m.now.advances;
  ++m.life.advances;
  if (m.post_failed) return error_transport;  // a send from push() failed (last_message)
  try {
    m.settle();
    ++m.tick;
    m.transport->progress();
    m.drain_transport();
    m.forward_all();
    if (done && !m.done_pushing) m.done_pushing = true;
    if (options_.steady || m.done_pushing) m.steady_flush();
    m.close_stages();
    m.transport->progress();
    // A caller spinning on a blocked push or an empty pull waits for another rank; after
    // a few idle rounds give the core away, so oversubscribed ranks make progress.
    const std::uint64_t a = m.activity();
    if (a != m.activity_mark) {
      m.activity_mark = a;
      m.idle_advances = 0;
    } else if (++m.idle_advances >= impl::idle_rounds_before_yield) {
      std::this_thread::yield();
    }
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  if (!m.done_pushing) return ok;
  fast_push_ = false;
  if (m.everything_received() && m.transport->idle()) {
    if (m.nothing_to_pull()) {
      state_ = state::complete;
      return termination::done;
    }
    state_ = state::cleanup;
    return near;
  }
  state_ = state::endgame;
  return ok;
}

int engine::flush() noexcept {
  if (state_ != state::working && state_ != state::endgame) return error_state;
  try {
    impl_->flush_older_than(0);
    impl_->flush_self();
    impl_->transport->progress();
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  return 1;
}

int engine::reset() noexcept {
  if (state_ == state::dormant) return 1;
  if (state_ != state::complete) return error_state;
  try {
    impl_->settle();
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  state_ = state::dormant;
  fast_push_ = false;
  return 1;
}

engine_stats engine::stats(bool cumulative) const { return impl_->stats(cumulative); }

std::size_t engine::memory_bytes() const noexcept {
  return impl_->transport->memory_bytes() + impl_->fixed_bytes();
}

std::size_t engine::max_memory_bytes() const noexcept {
  return impl_->transport->max_memory_bytes() + impl_->fixed_bytes();
}

}  // namespace convoy::termination
