#include <algorithm>
#include <climits>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

namespace convoy::aggregation::detail {

namespace {

std::byte* allocate_buffer(std::size_t bytes) {
  return static_cast<std::byte*>(::operator new (bytes, std::align_val_t{buffer_alignment}));
}

void free_buffer(std::byte* p) noexcept {
  if (p) ::operator delete (p, std::align_val_t{buffer_alignment});
}

std::string link_text(const char* side, std::size_t id, const link& l) {
  return std::string(side) + "-link " + std::to_string(id) + " (stage " + std::to_string(l.stage) +
         ", peer " + std::to_string(l.peer) + ")";
}

void check_links(const link_layout& layout, const std::vector<link>& links, const char* side,
                 const std::string& who) {
  for (std::size_t i = 0; i < links.size(); ++i) {
    const link& l = links[i];
    if (l.peer < 0 || l.peer >= layout.n_ranks)
      throw convoy::error(who + ": " + link_text(side, i, l) + ": peer rank out of range [0, " +
                          std::to_string(layout.n_ranks) + ")");
    if (l.peer == layout.rank)
      throw convoy::error(who + ": " + link_text(side, i, l) +
                          ": a link to the rank itself (the engine keeps self-sends local)");
    if (l.stage < 0) throw convoy::error(who + ": " + link_text(side, i, l) + ": negative stage");
  }
  std::vector<std::pair<std::pair<int, int>, std::size_t>> sorted;
  sorted.reserve(links.size());
  for (std::size_t i = 0; i < links.size(); ++i)
    sorted.push_back({{links[i].stage, links[i].peer}, i});
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].first == sorted[i - 1].first)
      throw convoy::error(who + ": " + link_text(side, sorted[i].second, links[sorted[i].second]) +
                          " duplicates " + side + "-link " + std::to_string(sorted[i - 1].second));
}

// Points every served link's slots at consecutive slices of `block`; returns the bytes.
std::size_t carve(std::byte* block, const std::vector<bool>& serve, int n_buffers,
                  std::size_t capacity, std::vector<std::byte*>& buf,
                  std::vector<bool>& allocated) {
  const std::size_t slice = slice_bytes(capacity);
  std::size_t off = 0, used = 0;
  for (std::size_t l = 0; l < serve.size(); ++l) {
    if (!serve[l]) continue;
    for (int s = 0; s < n_buffers; ++s, off += slice)
      buf[l * static_cast<std::size_t>(n_buffers) + static_cast<std::size_t>(s)] = block + off;
    allocated[l] = true;
    used += static_cast<std::size_t>(n_buffers) * capacity;
  }
  return used;
}

std::size_t served_block_bytes(const std::vector<bool>& serve, int n_buffers,
                               std::size_t capacity) {
  std::size_t links = 0;
  for (const bool s : serve) links += s ? 1 : 0;
  return links * static_cast<std::size_t>(n_buffers) * slice_bytes(capacity);
}

template <class T>
void reset_vector(std::vector<T>& v, std::size_t n, const T& value) {
  v.assign(n, value);
}

}  // namespace

void check_layout_rank(const link_layout& layout, int rank, int n_ranks, const char* who) {
  if (layout.rank != rank || layout.n_ranks != n_ranks)
    throw convoy::error(std::string(who) + ": layout says rank " + std::to_string(layout.rank) +
                        " of " + std::to_string(layout.n_ranks) + " but this endpoint is rank " +
                        std::to_string(rank) + " of " + std::to_string(n_ranks));
}

void validate_layout(const link_layout& layout, const char* who) {
  const std::string w(who);
  if (layout.n_ranks < 1)
    throw convoy::error(w + ": n_ranks " + std::to_string(layout.n_ranks) + " < 1");
  if (layout.rank < 0 || layout.rank >= layout.n_ranks)
    throw convoy::error(w + ": rank " + std::to_string(layout.rank) + " out of range [0, " +
                        std::to_string(layout.n_ranks) + ")");
  if (layout.buffer_bytes < sizeof(buffer_header))
    throw convoy::error(w + ": buffer_bytes " + std::to_string(layout.buffer_bytes) +
                        " is smaller than the buffer header (" +
                        std::to_string(sizeof(buffer_header)) + " bytes)");
  if (layout.buffer_bytes > static_cast<std::size_t>(INT_MAX))
    throw convoy::error(w + ": buffer_bytes " + std::to_string(layout.buffer_bytes) +
                        " exceeds INT_MAX");
  if (layout.n_buffers < 1)
    throw convoy::error(w + ": n_buffers " + std::to_string(layout.n_buffers) + " < 1");
  check_links(layout, layout.out_links, "out", w);
  check_links(layout, layout.in_links, "in", w);
}

source_block grab_block(buffer_source& source, std::size_t bytes, const char* who) {
  source_block b;
  if (bytes == 0) return b;
  b.grabbed_bytes = bytes + buffer_alignment - 1;
  b.grabbed = source.grab(b.grabbed_bytes);
  if (!b.grabbed)
    throw convoy::error(std::string(who) + ": the buffer source failed to provide " +
                        std::to_string(b.grabbed_bytes) + " bytes of link buffers");
  const auto addr = reinterpret_cast<std::uintptr_t>(b.grabbed);
  b.aligned = b.grabbed + ((buffer_alignment - addr % buffer_alignment) % buffer_alignment);
  return b;
}

// ---------------------------------------------------------------------------------------
// slot_buffers

slot_buffers::~slot_buffers() {
  if (owned_)
    for (std::byte* p : buf_) free_buffer(p);
}

std::size_t slot_buffers::block_bytes() const noexcept {
  return served_block_bytes(serve_, n_, capacity_);
}

void slot_buffers::use_block(std::byte* block) noexcept {
  owned_ = false;
  memory_bytes_ = carve(block, serve_, n_, capacity_, buf_, allocated_);
}

void slot_buffers::manage_outside() noexcept {
  owned_ = false;
  allocated_.assign(allocated_.size(), true);
  memory_bytes_ = 0;
}

void slot_buffers::init_slots(int n_links, int n_buffers, std::size_t buffer_bytes,
                              std::vector<bool> serve) {
  n_links_ = n_links;
  n_ = n_buffers;
  capacity_ = buffer_bytes;
  serve_ = std::move(serve);
  serve_.resize(static_cast<std::size_t>(n_links), false);
  const auto slots = static_cast<std::size_t>(n_links) * static_cast<std::size_t>(n_buffers);
  reset_vector<std::byte*>(buf_, slots, nullptr);
  reset_vector<std::uint32_t>(bytes_, slots, 0);
  free_.resize(slots);
  for (std::size_t i = 0; i < slots; ++i)  // popped from the back: slot 0 first
    free_[i] = n_buffers - 1 - static_cast<int>(i % static_cast<std::size_t>(n_buffers));
  reset_vector(n_free_, static_cast<std::size_t>(n_links), n_buffers);
  allocated_.assign(static_cast<std::size_t>(n_links), false);
  memory_bytes_ = 0;
  std::size_t served_links = 0;
  for (int l = 0; l < n_links; ++l) served_links += serve_[static_cast<std::size_t>(l)] ? 1 : 0;
  max_memory_bytes_ = served_links * static_cast<std::size_t>(n_buffers) * buffer_bytes;
}

void slot_buffers::allocate_link(int link) {
  const auto l = static_cast<std::size_t>(link);
  if (allocated_[l]) return;
  // All n_buffers at once: after a link's first use nothing is allocated for it again.
  try {
    for (int s = 0; s < n_; ++s) buf_[index(link, s)] = allocate_buffer(capacity_);
  } catch (...) {
    for (int s = 0; s < n_; ++s) {
      free_buffer(buf_[index(link, s)]);
      buf_[index(link, s)] = nullptr;
    }
    throw;
  }
  allocated_[l] = true;
  memory_bytes_ += static_cast<std::size_t>(n_) * capacity_;
}

// ---------------------------------------------------------------------------------------
// send_book

void send_book::init(int n_links, int n_buffers, std::size_t buffer_bytes, std::vector<bool> serve,
                     int credit_window) {
  window_ = credit_window > 0 ? credit_window : n_buffers;
  init_slots(n_links, n_buffers, buffer_bytes, std::move(serve));
  const auto slots = static_cast<std::size_t>(n_links) * static_cast<std::size_t>(n_buffers);
  reset_vector(state_, slots, state::free);
  reset_vector(queue_slots_, slots, -1);
  reset_vector(queue_, static_cast<std::size_t>(n_links), ring_view{});
  reset_vector(credits_, static_cast<std::size_t>(n_links), window_);
  n_queued_ = n_sending_ = 0;
}

int send_book::acquire_slot(int link) noexcept {
  if (!served(link)) return -1;
  const auto l = static_cast<std::size_t>(link);
  if (n_free_[l] == 0) return -1;
  if (!allocated_[l]) {
    try {
      allocate_link(link);
    } catch (...) {
      return -1;
    }
  }
  const int slot = pop_free(link);
  state_[index(link, slot)] = state::filling;
  return slot;
}

std::byte* send_book::acquire(int link) noexcept {
  const int slot = acquire_slot(link);
  return slot < 0 ? nullptr : buf_[index(link, slot)];
}

int send_book::filling_slot(int link, const std::byte* buffer) const noexcept {
  for (int s = 0; s < n_; ++s)
    if (buf_[index(link, s)] == buffer && state_[index(link, s)] == state::filling) return s;
  return -1;
}

int send_book::post(int link, const std::byte* buffer, std::size_t bytes, const char* who) {
  if (!served(link))
    throw convoy::error(std::string(who) + ": post on out-link " + std::to_string(link) +
                        ", which this transport does not serve");
  int slot = -1;
  for (int s = 0; s < n_; ++s)
    if (buf_[index(link, s)] == buffer && buffer != nullptr) slot = s;
  if (slot < 0 || state_[index(link, slot)] != state::filling)
    throw convoy::error(std::string(who) +
                        ": post of a buffer that is not an acquired, unposted "
                        "buffer of out-link " +
                        std::to_string(link));
  if (bytes < sizeof(buffer_header) || bytes > capacity_)
    throw convoy::error(std::string(who) + ": post of " + std::to_string(bytes) +
                        " bytes on out-link " + std::to_string(link) + "; must be in [" +
                        std::to_string(sizeof(buffer_header)) + ", " + std::to_string(capacity_) +
                        "]");
  const auto i = index(link, slot);
  state_[i] = state::queued;
  bytes_[i] = static_cast<std::uint32_t>(bytes);
  ring_view& q = queue_[static_cast<std::size_t>(link)];
  queue_slots_[index(link, (q.head + q.size) % n_)] = slot;
  ++q.size;
  ++n_queued_;
  return slot;
}

int send_book::next_sendable(int link) noexcept {
  const auto l = static_cast<std::size_t>(link);
  ring_view& q = queue_[l];
  if (q.size == 0 || credits_[l] == 0) return -1;
  const int slot = queue_slots_[index(link, q.head)];
  q.head = (q.head + 1) % n_;
  --q.size;
  --credits_[l];
  --n_queued_;
  ++n_sending_;
  state_[index(link, slot)] = state::sending;
  return slot;
}

void send_book::send_done(int link, int slot) noexcept {
  state_[index(link, slot)] = state::free;
  push_free(link, slot);
  --n_sending_;
}

void send_book::add_credits(int link, int n, const char* who) {
  const auto l = static_cast<std::size_t>(link);
  if (n < 0 || credits_[l] + n > window_)
    throw convoy::error(std::string(who) + ": out-link " + std::to_string(link) + " received " +
                        std::to_string(n) + " credits with " + std::to_string(credits_[l]) +
                        " of " + std::to_string(window_) +
                        " in hand (the peer's layout does not match this one)");
  credits_[l] += n;
}

// ---------------------------------------------------------------------------------------
// recv_book

void recv_book::init(int n_links, int n_buffers, std::size_t buffer_bytes,
                     std::vector<bool> serve) {
  init_slots(n_links, n_buffers, buffer_bytes, std::move(serve));
  const auto slots = static_cast<std::size_t>(n_links) * static_cast<std::size_t>(n_buffers);
  reset_vector(state_, slots, state::free);
  reset_vector(order_slots_, slots, -1);
  reset_vector(order_, static_cast<std::size_t>(n_links), ring_view{});
  reset_vector(ready_, static_cast<std::size_t>(n_links), -1);
  ready_ring_ = {};
  in_ready_.assign(static_cast<std::size_t>(n_links), false);
}

int recv_book::take_free(int link) noexcept { return pop_free(link); }

void recv_book::expect(int link, int slot) noexcept {
  ring_view& o = order_[static_cast<std::size_t>(link)];
  order_slots_[index(link, (o.head + o.size) % n_)] = slot;
  ++o.size;
  state_[index(link, slot)] = state::expecting;
}

void recv_book::make_ready(int link) noexcept {
  const auto l = static_cast<std::size_t>(link);
  if (in_ready_[l]) return;
  in_ready_[l] = true;
  ready_[static_cast<std::size_t>((ready_ring_.head + ready_ring_.size) % n_links_)] = link;
  ++ready_ring_.size;
}

void recv_book::arrived(int link, int slot, std::size_t bytes) noexcept {
  const auto i = index(link, slot);
  state_[i] = state::arrived;
  bytes_[i] = static_cast<std::uint32_t>(bytes);
  const ring_view& o = order_[static_cast<std::size_t>(link)];
  if (order_slots_[index(link, o.head)] == slot) make_ready(link);
}

bool recv_book::poll(received& out) noexcept {
  if (ready_ring_.size == 0) return false;
  const int link = ready_[static_cast<std::size_t>(ready_ring_.head)];
  ready_ring_.head = (ready_ring_.head + 1) % n_links_;
  --ready_ring_.size;
  in_ready_[static_cast<std::size_t>(link)] = false;
  ring_view& o = order_[static_cast<std::size_t>(link)];
  const int slot = order_slots_[index(link, o.head)];
  o.head = (o.head + 1) % n_;
  --o.size;
  const auto i = index(link, slot);
  state_[i] = state::held;
  out.in_link = link;
  out.slot = slot;
  out.data = buf_[i];
  out.bytes = bytes_[i];
  // The link's next buffer waits behind the other ready links: no link is starved.
  if (o.size > 0 && state_[index(link, order_slots_[index(link, o.head)])] == state::arrived)
    make_ready(link);
  return true;
}

void recv_book::release(const received& r, const char* who) {
  if (!served(r.in_link) || r.slot < 0 || r.slot >= n_ ||
      state_[index(r.in_link, r.slot)] != state::held || buf_[index(r.in_link, r.slot)] != r.data)
    throw convoy::error(std::string(who) +
                        ": release of a buffer that poll() did not hand out or that was "
                        "already released (in_link " +
                        std::to_string(r.in_link) + ", slot " + std::to_string(r.slot) + ")");
  state_[index(r.in_link, r.slot)] = state::free;
  push_free(r.in_link, r.slot);
}

}  // namespace convoy::aggregation::detail
