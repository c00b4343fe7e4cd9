// The streaming engine: aggregation at every hop and dimension-ordered termination.
// termination/README.md states the invariants cited here as (T<n>).
#include <algorithm>
#include <convoy/aggregation/packing.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy/topology/error.hpp>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <new>
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

constexpr std::size_t self_ring_align = 8;
constexpr std::uint32_t wrap_marker = 0xFFFFFFFFu;

std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// Items pushed to this rank itself never touch the transport: a ring of records
// [u32 size, 4 spare][payload padded to 8], FIFO (self -> self is a pair too, (T2)).
// A popped record's space stays reserved until commit(), so unpull can restore it.
class self_ring {
 public:
  void init(std::size_t capacity) {
    capacity_ = round_up(capacity, self_ring_align);
    data_.reset(static_cast<std::byte*>(::operator new (capacity_, std::align_val_t{64})));
  }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }

  bool push(const void* item, std::size_t n) noexcept {
    const std::size_t need = 8 + round_up(n, self_ring_align);
    const std::size_t head = held_ ? hold_ : head_;
    const std::size_t count = count_ + (held_ ? 1 : 0);
    std::size_t at = tail_;
    if (count == 0) {
      if (need > capacity_) return false;
      head_ = tail_ = at = 0;
    } else if (tail_ > head) {
      if (need > capacity_ - tail_) {
        if (need > head) return false;
        const std::uint32_t w = wrap_marker;
        if (tail_ < capacity_) std::memcpy(data_.get() + tail_, &w, 4);
        at = 0;
      }
    } else {
      // tail <= head with records present: free space is [tail, head).
      if (tail_ == head || need > head - tail_) return false;
    }
    const auto n32 = static_cast<std::uint32_t>(n);
    std::memcpy(data_.get() + at, &n32, 4);
    if (n) std::memcpy(data_.get() + at + 8, item, n);
    tail_ = at + need;
    if (tail_ == capacity_) tail_ = 0;
    ++count_;
    return true;
  }

  // Front record (precondition: !empty()).
  [[nodiscard]] std::pair<const std::byte*, std::size_t> front() noexcept {
    normalize();
    std::uint32_t n = 0;
    std::memcpy(&n, data_.get() + head_, 4);
    return {data_.get() + head_ + 8, n};
  }
  // Removes the front record, keeping its space until commit() or unpop().
  void pop() noexcept {
    normalize();
    hold_ = head_;
    held_ = true;
    std::uint32_t n = 0;
    std::memcpy(&n, data_.get() + head_, 4);
    head_ += 8 + round_up(n, self_ring_align);
    if (head_ == capacity_) head_ = 0;
    --count_;
  }
  void commit() noexcept { held_ = false; }
  void unpop() noexcept {
    head_ = hold_;
    held_ = false;
    ++count_;
  }
  void clear() noexcept { head_ = tail_ = count_ = 0, held_ = false; }

 private:
  void normalize() noexcept {
    if (head_ == capacity_) {
      head_ = 0;
      return;
    }
    std::uint32_t n = 0;
    std::memcpy(&n, data_.get() + head_, 4);
    if (n == wrap_marker) head_ = 0;
  }
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte, aligned_delete> data_;
  std::size_t capacity_ = 0, head_ = 0, tail_ = 0, count_ = 0, hold_ = 0;
  bool held_ = false;
};

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
    std::byte* buf = nullptr;  // acquired, not yet posted
    std::size_t used = 0;
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
    bool ready = false;      // on the ready list: head record is deliverable
    // Decoded head record (valid when ready).
    agg::record head;
    int head_src = -1;
    [[nodiscard]] bool finished() const noexcept { return received == expected; }
  };

  // Where the last pulled item came from, for unpull.
  struct last_pull {
    enum class kind { none, link, self } what = kind::none;
    int link = -1;
    std::size_t offset = 0;
    bool buffer_popped = false;
  };

  engine& e;
  std::unique_ptr<agg::transport> transport;
  int n_ranks = 0;
  int n_stages = 0;
  std::size_t max_item_bytes = 0;  // largest payload that fits every stage
  std::vector<int> tag_bytes;      // per stage
  std::vector<int> out_base;       // first out-link of each stage
  std::vector<out_link> outs;
  std::vector<in_link> ins;
  std::vector<agg::received> ring_slots;       // storage of every in-link's ring
  std::vector<std::vector<int>> ins_of_stage;  // in-link ids per stage
  std::deque<int> ready;                       // in-links whose head is deliverable
  std::vector<int> blocked;                    // in-links with a forward that did not fit
  self_ring self;
  bool done_pushing = false;
  int closed_stages = 0;
  std::uint32_t epoch = 0;
  std::uint64_t tick = 0;
  bool prefer_self = false;
  last_pull last;
  agg::received pending_release;  // fully pulled buffer kept until the next operation
  bool has_pending_release = false;
  engine_stats now, life;

  impl(engine& owner, std::unique_ptr<agg::transport> t) : e(owner), transport(std::move(t)) {}

  [[nodiscard]] bool elastic() const noexcept { return e.options_.elastic; }

  void setup() {
    const auto& plan = *e.plan_;
    n_ranks = plan.n_ranks();
    n_stages = plan.n_stages();
    agg::link_layout layout;
    layout.rank = e.rank_;
    layout.n_ranks = n_ranks;
    layout.capacity_bytes = e.options_.capacity_bytes;
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
        ins.push_back(std::move(l));
        layout.in_links.push_back({s, p});
      }
    }
    out_base.push_back(static_cast<int>(outs.size()));
    const int cap = e.options_.n_buffers;
    ring_slots.resize(ins.size() * static_cast<std::size_t>(cap));
    for (std::size_t i = 0; i < ins.size(); ++i)
      ins[i].queue.bind(ring_slots.data() + i * static_cast<std::size_t>(cap), cap);
    transport->open(layout);
    self.init(e.options_.capacity_bytes * static_cast<std::size_t>(e.options_.n_buffers));
    int max_tag = 0;
    for (int t : tag_bytes) max_tag = std::max(max_tag, t);
    max_item_bytes = e.options_.capacity_bytes - agg::header_bytes -
                     static_cast<std::size_t>(max_tag) - (elastic() ? agg::size_field_bytes : 0);
    now.stages.resize(static_cast<std::size_t>(n_stages));
    life.stages.resize(static_cast<std::size_t>(n_stages));
  }

  // ---- sending ----------------------------------------------------------------

  void post(out_link& o, int link, bool is_last) {
    agg::buffer_header h{};
    h.bytes = static_cast<std::uint32_t>(o.used);
    h.epoch = epoch;
    h.seq = ++o.seq;
    h.flags = is_last ? agg::flag_last : 0u;
    std::memcpy(o.buf, &h, sizeof h);
    std::byte* b = o.buf;
    o.buf = nullptr;
    const std::size_t used = o.used;
    o.used = 0;
    for (auto* st : {&now, &life}) {
      auto& ss = st->stages[static_cast<std::size_t>(o.stage)];
      ++ss.buffers;
      ss.bytes += used;
      ++st->buffers_sent;
      st->bytes_sent += used;
    }
    transport->post(link, b, used);
  }

  // Appends a record to out-link `link`. Returns false (nothing written) if the link
  // has no free buffer: backpressure (T5).
  bool append(int link, std::uint64_t tag, const void* payload, std::size_t n) {
    out_link& o = outs[static_cast<std::size_t>(link)];
    const int tb = tag_bytes[static_cast<std::size_t>(o.stage)];
    const std::size_t need = agg::record_bytes(tb, elastic(), n);
    const std::size_t cap = e.options_.capacity_bytes;
    if (o.buf && o.used + need > cap) post(o, link, false);
    if (!o.buf) {
      o.buf = transport->acquire(link);
      if (!o.buf) return false;
      o.used = agg::header_bytes;
      o.first_tick = tick;
    }
    agg::put_record(o.buf + o.used, tag, tb, elastic(), payload, n);
    o.used += need;
    for (auto* st : {&now, &life}) ++st->stages[static_cast<std::size_t>(o.stage)].items;
    // A rigid buffer that cannot take another item goes at once (overlaps the send
    // with further pushes).
    if (!elastic() && o.used + need > cap) post(o, link, false);
    return true;
  }

  // Routes an item now at this rank (pushed here or arrived via stage first_stage-1).
  int route(int src, int dst, int first_stage, const void* payload, std::size_t n) {
    const auto h = e.plan_->next_hop(e.rank_, dst, first_stage);
    const int link = out_base[static_cast<std::size_t>(h.stage)] + h.peer_index;
    const std::uint64_t tag = e.plan_->encode(h.stage, e.rank_, h.rank, src, dst);
    return append(link, tag, payload, n) ? 1 : 0;
  }

  // A checked push: to the self ring or onto its first hop. Returns 1, 0 (full) or
  // error_transport.
  int push_item(const void* item, std::size_t n, int dest) noexcept {
    int rc;
    if (dest == e.rank_) {
      rc = self.push(item, n) ? 1 : 0;
    } else {
      try {
        rc = route(e.rank_, dest, 0, item, n);
      } catch (const std::exception& ex) {
        e.last_message_ = ex.what();
        return error_transport;
      }
    }
    if (rc > 0) {
      ++now.pushes;
      ++life.pushes;
    }
    return rc;
  }

  // ---- receiving --------------------------------------------------------------

  void release_pending() {
    if (!has_pending_release) return;
    has_pending_release = false;
    transport->release(pending_release);
  }

  // Makes the last pull final (no unpull can follow any more): frees its space and
  // looks at the next record of the link it came from.
  void settle() {
    const auto what = last.what;
    const int id = last.link;
    last = {};
    release_pending();
    if (what == last_pull::kind::self) self.commit();
    if (what == last_pull::kind::link) examine(id);
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

  // Looks at the head of in-link `id`: forwards records until one is deliverable (then
  // the link goes on the ready list), the queue is empty, or a forward does not fit.
  // Returns false if it stopped on a forward that did not fit.
  bool examine(int id) {
    in_link& l = ins[static_cast<std::size_t>(id)];
    const int tb = tag_bytes[static_cast<std::size_t>(l.stage)];
    const bool last_stage = l.stage == n_stages - 1;
    while (!l.queue.empty()) {
      const agg::received& r = l.queue.front();
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      if (l.offset >= h.bytes) {
        transport->release(r);
        l.queue.pop_front();
        l.offset = agg::header_bytes;
        continue;
      }
      const agg::record rec = agg::get_record(r.data + l.offset, tb, elastic(), e.item_bytes_);
      int src = 0, dst = 0;
      e.plan_->decode(l.stage, l.peer, e.rank_, rec.tag, src, dst);
      if (last_stage || dst == e.rank_) {
        l.head = rec;
        l.head_src = src;
        if (!l.ready) {
          l.ready = true;
          ready.push_back(id);
        }
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
      if (!l.ready && !l.queue.empty()) examine(static_cast<int>(id));
    }
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
      if (!o.buf) {
        o.buf = transport->acquire(link);
        if (!o.buf) {
          all = false;
          continue;
        }
        o.used = agg::header_bytes;
      }
      post(o, link, true);
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
    if (!self.empty()) return false;
    for (const auto& l : ins)
      if (!l.queue.empty()) return false;
    return true;
  }

  // Posts every partly filled buffer that has waited at least `period` advance calls.
  void flush_older_than(std::uint64_t period) {
    for (std::size_t link = 0; link < outs.size(); ++link) {
      out_link& o = outs[link];
      if (o.buf && o.used > agg::header_bytes && tick - o.first_tick >= period)
        post(o, static_cast<int>(link), false);
    }
  }
  void steady_flush() { flush_older_than(static_cast<std::uint64_t>(e.options_.steady_period)); }

  void start_epoch() {
    ++epoch;
    done_pushing = false;
    closed_stages = 0;
    tick = 0;
    last = {};
    now = {};
    now.stages.resize(static_cast<std::size_t>(n_stages));
    self.clear();
    ready.clear();
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
  impl_->start_epoch();
  state_ = state::working;
  ++impl_->now.begins;
  ++impl_->life.begins;
  return 1;
}

int engine::push(const void* item, int dest) noexcept {
  if (state_ != state::working) [[unlikely]]
    return error_state;
  if (options_.elastic) return epush(item, item_bytes_, dest);
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(impl_->n_ranks)) [[unlikely]]
    return error_rank;
  if (!item) [[unlikely]]
    return error_argument;
  return impl_->push_item(item, item_bytes_, dest);
}

int engine::epush(const void* item, std::size_t bytes, int dest) noexcept {
  if (!options_.elastic) return error_elastic;
  if (state_ != state::working) return error_state;
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(impl_->n_ranks)) return error_rank;
  if (!item && bytes) return error_argument;
  if (bytes > impl_->max_item_bytes) return error_size;
  return impl_->push_item(item, bytes, dest);
}

int engine::pull(item_view& out, bool rigid) noexcept {
  if (state_ == state::dormant) return error_state;
  auto& m = *impl_;
  try {
    m.settle();
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  if (state_ == state::complete) return 0;
  // Alternate between the self ring and the links so that neither starves.
  for (int k = 0; k < 2; ++k) {
    if ((k == 0) == m.prefer_self) {
      if (m.self.empty()) continue;
      auto [p, n] = m.self.front();
      if (rigid && options_.elastic && n != item_bytes_) return error_elastic;
      out = {p, n, rank_};
      m.self.pop();
      m.last.what = impl::last_pull::kind::self;
      m.prefer_self = false;
    } else {
      if (m.ready.empty()) continue;
      const int id = m.ready.front();
      auto& l = m.ins[static_cast<std::size_t>(id)];
      if (rigid && options_.elastic && l.head.bytes != item_bytes_) return error_elastic;
      out = {l.head.payload, l.head.bytes, l.head_src};
      m.last.what = impl::last_pull::kind::link;
      m.last.link = id;
      m.last.offset = l.offset;
      l.offset += l.head.record_bytes;
      l.ready = false;
      m.ready.pop_front();
      // The buffer stays alive until settle() so that the item stays valid and
      // unpull can restore it.
      agg::buffer_header h{};
      std::memcpy(&h, l.queue.front().data, sizeof h);
      if (l.offset >= h.bytes) {
        m.pending_release = l.queue.front();
        m.has_pending_release = true;
        m.last.buffer_popped = true;
        l.queue.pop_front();
        l.offset = agg::header_bytes;
      }
      m.prefer_self = true;
    }
    ++m.now.pulls;
    ++m.life.pulls;
    return 1;
  }
  return 0;
}

int engine::unpull() noexcept {
  if (state_ == state::dormant) return error_state;
  if (state_ == state::complete) return 0;  // legal, but there is nothing to put back
  auto& m = *impl_;
  switch (m.last.what) {
    case impl::last_pull::kind::none:
      return error_unpull;
    case impl::last_pull::kind::self:
      m.self.unpop();
      m.prefer_self = true;
      break;
    case impl::last_pull::kind::link: {
      const int id = m.last.link;
      auto& l = m.ins[static_cast<std::size_t>(id)];
      if (m.last.buffer_popped) {
        l.queue.push_front(m.pending_release);
        m.has_pending_release = false;
      }
      l.offset = m.last.offset;  // l.head still describes the pulled record
      l.ready = true;
      m.ready.push_front(id);
      m.prefer_self = false;
      break;
    }
  }
  m.last = {};
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
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  if (!m.done_pushing) return ok;
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
  return 1;
}

engine_stats engine::stats(bool cumulative) const { return cumulative ? impl_->life : impl_->now; }

std::size_t engine::memory_bytes() const noexcept {
  return impl_->transport->memory_bytes() + impl_->self.capacity();
}

std::size_t engine::max_memory_bytes() const noexcept {
  return impl_->transport->max_memory_bytes() + impl_->self.capacity();
}

}  // namespace convoy::termination
