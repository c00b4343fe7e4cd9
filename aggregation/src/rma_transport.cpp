#include <algorithm>
#include <array>
#include <climits>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/aggregation/rma_transport.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <new>
#include <string>

namespace convoy::aggregation {

namespace {

constexpr const char* who = "rma_transport";
// Header line, control line, record alignment: the transports' buffer alignment.
constexpr std::size_t line = detail::buffer_alignment;

// A record's header line (README AGG-112): the ready word first, written last.
constexpr std::size_t ready_word = 0;  // absolute position + 1 once the record is complete
constexpr std::size_t kind_word = 8;   // kind | source << 32
constexpr std::size_t size_word = 16;  // data: buffer bytes; skip: record bytes
constexpr std::size_t link_word = 24;  // data: the sender's out-link (its credit word)
constexpr std::uint64_t kind_data = 1;
constexpr std::uint64_t kind_skip = 2;

// A stage's control line: the tail senders reserve at, the head the receiver publishes.
constexpr std::size_t tail_word = 0;
constexpr std::size_t head_word = 8;

std::uint64_t key(int stage, int source) {
  return (static_cast<std::uint64_t>(stage) << 32) | static_cast<std::uint32_t>(source);
}

}  // namespace

std::size_t rma_transport::record_bytes(std::size_t buffer_bytes) noexcept {
  return line + detail::slice_bytes(buffer_bytes);
}

rma_transport::rma_transport(MPI_Comm comm, std::size_t ring_bytes_per_stage)
    : comm_(comm), asked_ring_bytes_(ring_bytes_per_stage) {
  if (comm == MPI_COMM_NULL) throw convoy::error("rma_transport: communicator is MPI_COMM_NULL");
}

rma_transport::~rma_transport() {
  window_.reset();  // collective (MPI_Win_free) once opened
  for (auto& l : out_)
    for (auto& s : l.slots)
      if (s.mem) ::operator delete (s.mem, std::align_val_t{line});
}

std::size_t rma_transport::control_disp(int stage) const noexcept {
  return static_cast<std::size_t>(stage) * line;
}

std::size_t rma_transport::credit_disp(int out_link) const noexcept {
  return static_cast<std::size_t>(n_stages_) * (line + ring_bytes_) +
         static_cast<std::size_t>(out_link) * sizeof(std::uint64_t);
}

std::size_t rma_transport::ring_disp(int stage) const noexcept {
  return static_cast<std::size_t>(n_stages_) * line + static_cast<std::size_t>(stage) * ring_bytes_;
}

void rma_transport::open(const link_layout& layout) {
  if (window_) throw convoy::error("rma_transport: open() called twice");
  // AGG-115: a bad layout on any rank throws on every rank, with the lowest such rank's message.
  const int stages = base::agree(comm_, [&] {
    detail::validate_layout(layout, who);
    int rank = 0, size = 0;
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
    CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &size));
    detail::check_layout_rank(layout, rank, size, who);
    int n = 0;
    for (const auto* links : {&layout.out_links, &layout.in_links})
      for (const link& l : *links) n = std::max(n, l.stage + 1);
    return n;
  });
  // Then one reduction: stages, ring size, and that every rank has the same capacity and
  // n_buffers (maxima of x and of ~x give max and min).
  const std::size_t record = record_bytes(layout.buffer_bytes);
  std::size_t ring = asked_ring_bytes_ != 0
                         ? detail::slice_bytes(asked_ring_bytes_)
                         : 4 * static_cast<std::size_t>(std::max(layout.n_buffers, 1)) * record;
  ring = std::max(ring, 2 * record);  // a record always fits after a wrap's skip
  const unsigned long long all = ~0ULL;
  std::array<unsigned long long, 6> mine{static_cast<unsigned long long>(stages),
                                         ring,
                                         layout.buffer_bytes,
                                         all - layout.buffer_bytes,
                                         static_cast<unsigned long long>(layout.n_buffers),
                                         all - static_cast<unsigned long long>(layout.n_buffers)};
  std::array<unsigned long long, 6> most{};
  CONVOY_MPI_CHECK(MPI_Allreduce(mine.data(), most.data(), static_cast<int>(mine.size()),
                                 MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_));
  if (most[2] != all - most[3] || most[4] != all - most[5])
    throw convoy::error("rma_transport: the ranks disagree on buffer_bytes or n_buffers");
  layout_ = layout;
  n_stages_ = static_cast<int>(most[0]);
  ring_bytes_ = static_cast<std::size_t>(most[1]);
  record_max_ = record;
  if (static_cast<unsigned long long>(n_stages_) * (ring_bytes_ / line) > INT_MAX)
    throw convoy::error("rma_transport: ring of " + std::to_string(ring_bytes_) +
                        " bytes per stage is too large");
  // Rings (the same on every rank), then this rank's credit words, one per out-link (AGG-118).
  try {
    window_ = std::make_unique<detail::rma_window>(
        comm_, static_cast<std::size_t>(n_stages_) * (line + ring_bytes_) +
                   layout.out_links.size() * sizeof(std::uint64_t));
  } catch (const convoy::error& e) {  // agreed on every rank (AGG-161)
    throw convoy::error(std::string("CONVOY_TRANSPORT=rma: ") + e.what() +
                        " (use CONVOY_TRANSPORT=auto or mpi)");
  }
  out_.assign(layout.out_links.size(), {});
  rings_.assign(static_cast<std::size_t>(n_stages_), {});
  for (auto& r : rings_) r.records.resize(ring_bytes_ / line);
  for (std::size_t i = 0; i < layout.in_links.size(); ++i)
    in_link_of_[key(layout.in_links[i].stage, layout.in_links[i].peer)] = static_cast<int>(i);
}

std::byte* rma_transport::acquire(int out_link) noexcept {
  if (!window_ || out_link < 0 || static_cast<std::size_t>(out_link) >= out_.size()) return nullptr;
  auto& l = out_[static_cast<std::size_t>(out_link)];
  if (l.slots.empty()) {
    // First use of the link: its n_buffers staging slots, each a header line + buffer.
    try {
      l.slots.resize(static_cast<std::size_t>(layout_.n_buffers));
      for (auto& s : l.slots) {
        s.mem = static_cast<std::byte*>(::operator new (record_max_, std::align_val_t{line}));
        send_memory_ += record_max_;
      }
    } catch (...) {
      return nullptr;
    }
  }
  for (auto& s : l.slots)
    if (s.st == out_slot::state::free) {
      s.st = out_slot::state::filling;
      return s.mem + line;
    }
  return nullptr;
}

void rma_transport::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (!window_) throw convoy::error("rma_transport: post() before open()");
  if (out_link < 0 || static_cast<std::size_t>(out_link) >= out_.size())
    throw convoy::error("rma_transport: post() on out-link " + std::to_string(out_link) +
                        " out of range");
  auto& l = out_[static_cast<std::size_t>(out_link)];
  auto it = std::find_if(l.slots.begin(), l.slots.end(), [&](const out_slot& s) {
    return s.mem + line == buffer && s.st == out_slot::state::filling;
  });
  if (it == l.slots.end())
    throw convoy::error("rma_transport: post() of a buffer that is not out-link " +
                        std::to_string(out_link) + "'s acquired buffer");
  if (bytes < sizeof(buffer_header) || bytes > layout_.buffer_bytes)
    throw convoy::error("rma_transport: post() of " + std::to_string(bytes) +
                        " bytes, outside [header, buffer_bytes]");
  it->st = out_slot::state::queued;
  it->bytes = bytes;
  l.queue.push_back(static_cast<int>(it - l.slots.begin()));
  ++n_queued_;
  drain(out_link);
}

// FIFO per link (AGG-116): only the oldest queued buffer of a link may go.
void rma_transport::drain(int out_link) {
  auto& l = out_[static_cast<std::size_t>(out_link)];
  while (l.queue_head < l.queue.size()) {
    auto& s = l.slots[static_cast<std::size_t>(l.queue[l.queue_head])];
    if (!try_send(out_link, s)) break;
    s.st = out_slot::state::free;
    ++l.queue_head;
    --n_queued_;
  }
  if (l.queue_head == l.queue.size()) {
    l.queue.clear();
    l.queue_head = 0;
  }
}

// Dinan & Flajslik 2014, Listing 1 made circular: reserve (CAS on the tail, checked against the
// head), put, then publish the ready word.
bool rma_transport::try_send(int out_link, out_slot& s) {
  const link& lk = layout_.out_links[static_cast<std::size_t>(out_link)];
  out_link_state& ol = out_[static_cast<std::size_t>(out_link)];
  // AGG-4 / AGG-118: at most n_buffers records of a link unreleased at the receiver (its engine
  // queues no more per link); the receiver adds its releases to our credit word.
  if (ol.sent - ol.released >= static_cast<std::uint64_t>(layout_.n_buffers)) {
    window_->read_words(layout_.rank, credit_disp(out_link), &ol.released, 1);
    if (ol.sent - ol.released >= static_cast<std::uint64_t>(layout_.n_buffers)) return false;
  }
  const int target = lk.peer;
  const std::size_t ctl = control_disp(lk.stage), ring = ring_disp(lk.stage);
  const std::uint64_t rec = line + detail::slice_bytes(s.bytes);
  std::array<std::uint64_t, 2> th{};  // tail, head
  window_->read_words(target, ctl + tail_word, th.data(), 2);
  std::uint64_t t = th[0];
  bool head_fresh = true;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::uint64_t pos = t % ring_bytes_;
    const std::uint64_t pad = ring_bytes_ - pos < rec ? ring_bytes_ - pos : 0;
    if (t + pad + rec - th[1] > ring_bytes_) {  // AGG-111: never past the receiver's head
      if (head_fresh) {
        ++n_full_;
        return false;
      }
      window_->read_words(target, ctl + tail_word, th.data(), 2);
      t = th[0];
      head_fresh = true;
      continue;
    }
    const std::uint64_t old = window_->compare_swap(target, ctl + tail_word, t, t + pad + rec);
    if (old != t) {  // another sender reserved first: retry from the tail it left
      t = old;
      head_fresh = false;
      continue;
    }
    if (pad != 0) {
      const std::array<std::uint64_t, 2> skip{kind_skip, pad};
      window_->put(target, ring + pos + kind_word, skip.data(), sizeof skip);
      const std::uint64_t ready = t + 1;
      window_->store_words(target, ring + pos + ready_word, &ready, 1);
    }
    const std::uint64_t at = t + pad;
    const std::array<std::uint64_t, 3> head{
        kind_data | (static_cast<std::uint64_t>(layout_.rank) << 32), s.bytes,
        static_cast<std::uint64_t>(out_link)};
    std::memcpy(s.mem + kind_word, head.data(), sizeof head);
    window_->put(target, ring + at % ring_bytes_ + kind_word, s.mem + kind_word,
                 line - kind_word + s.bytes);
    const std::uint64_t ready = at + 1;
    window_->store_words(target, ring + at % ring_bytes_ + ready_word, &ready, 1);
    ++ol.sent;
    return true;
  }
  ++n_full_;
  return false;  // heavy contention: leave it queued, retry in progress()
}

bool rma_transport::poll(received& out) {
  if (!window_) return false;
  for (int k = 0; k < n_stages_; ++k) {
    const int st = (poll_stage_ + k) % n_stages_;
    stage_ring& r = rings_[static_cast<std::size_t>(st)];
    const std::size_t cap = r.records.size();
    for (;;) {
      if (r.next - r.first >= cap) break;  // every record slot held: release first
      const std::size_t off = ring_disp(st) + r.cursor % ring_bytes_;
      std::uint64_t ready = 0;
      window_->read_words(window_->rank(), off + ready_word, &ready, 1);
      if (ready != r.cursor + 1) break;  // AGG-112: not (yet) a complete record
      window_->sync();
      const std::byte* h = window_->base() + off;
      std::uint64_t kind = 0, size = 0, sender_link = 0;
      std::memcpy(&kind, h + kind_word, sizeof kind);
      std::memcpy(&size, h + size_word, sizeof size);
      std::memcpy(&sender_link, h + link_word, sizeof sender_link);
      held_record& rec = r.records[r.next % cap];
      rec.pos = r.cursor;
      if ((kind & 0xffffffffu) == kind_skip) {
        rec.bytes = size;
        rec.held = false;
        ++r.next;
        r.cursor += size;
        advance_head(st);
        continue;
      }
      const int source = static_cast<int>(kind >> 32);
      const auto it = in_link_of_.find(key(st, source));
      if ((kind & 0xffffffffu) != kind_data || it == in_link_of_.end() ||
          size > layout_.buffer_bytes)
        throw convoy::error("rma_transport: a record from rank " + std::to_string(source) +
                            " on stage " + std::to_string(st) + " matches no in-link");
      rec.bytes = line + detail::slice_bytes(size);
      rec.held = true;
      rec.source = source;
      rec.sender_link = sender_link;
      out.in_link = it->second;
      out.data = window_->base() + off + line;
      out.bytes = static_cast<std::size_t>(size);
      out.slot = static_cast<int>(static_cast<std::size_t>(st) * cap + r.next % cap);
      ++r.next;
      r.cursor += rec.bytes;
      poll_stage_ = (st + 1) % n_stages_;
      return true;
    }
  }
  return false;
}

void rma_transport::release(const received& r) {
  const std::size_t cap = ring_bytes_ / line;
  if (!window_ || r.slot < 0 || static_cast<std::size_t>(r.slot) >= cap * rings_.size())
    throw convoy::error("rma_transport: release() of a buffer this transport did not hand out");
  const int st = static_cast<int>(static_cast<std::size_t>(r.slot) / cap);
  stage_ring& ring = rings_[static_cast<std::size_t>(st)];
  held_record& rec = ring.records[static_cast<std::size_t>(r.slot) % cap];
  if (!rec.held || window_->base() + ring_disp(st) + rec.pos % ring_bytes_ + line != r.data)
    throw convoy::error("rma_transport: release() of a buffer not held (released twice?)");
  rec.held = false;
  advance_head(st);
  const std::uint64_t one = 1;  // AGG-118: the credit goes back to the sender's word
  window_->add_words(rec.source, credit_disp(static_cast<int>(rec.sender_link)), &one, 1);
}

// AGG-113: the head moves over the released prefix and is published with an atomic store, so a
// sender's room check never sees space the receiver still reads.
void rma_transport::advance_head(int stage) {
  stage_ring& r = rings_[static_cast<std::size_t>(stage)];
  const std::size_t cap = r.records.size();
  const std::uint64_t before = r.head;
  while (r.first < r.next && !r.records[r.first % cap].held) {
    const held_record& rec = r.records[r.first % cap];
    r.head = rec.pos + rec.bytes;
    ++r.first;
  }
  if (r.head != before)
    window_->store_words(window_->rank(), control_disp(stage) + head_word, &r.head, 1);
}

void rma_transport::progress() {
  if (n_queued_ == 0) return;
  for (std::size_t i = 0; i < out_.size() && n_queued_ > 0; ++i)
    if (out_[i].queue_head < out_[i].queue.size()) drain(static_cast<int>(i));
}

std::size_t rma_transport::memory_bytes() const noexcept {
  return (window_ ? window_->bytes() : 0) + send_memory_;
}

std::size_t rma_transport::max_memory_bytes() const noexcept {
  return (window_ ? window_->bytes() : 0) +
         layout_.out_links.size() * static_cast<std::size_t>(layout_.n_buffers) * record_max_;
}

}  // namespace convoy::aggregation
