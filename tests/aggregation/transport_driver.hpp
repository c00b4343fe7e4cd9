#pragma once
// Drives one transport on one rank through a traffic plan and checks what it receives:
// every buffer carries (source rank, stage, tag, per-link sequence number) and a filler
// derived from them, so exactly-once, FIFO per link, no crosstalk between transports and
// stages, and intact bytes are all checked on receipt (aggregation/README.md, AGG-1–AGG-4).
#include <algorithm>
#include <convoy/aggregation/transport.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace convoy_test {

namespace agg = convoy::aggregation;

// All-to-all on the given stages: every other rank is a peer in each of them.
inline agg::link_layout all_to_all(int rank, int n_ranks, int n_stages, std::size_t capacity,
                                   int n_buffers) {
  agg::link_layout l;
  l.rank = rank;
  l.n_ranks = n_ranks;
  l.buffer_bytes = capacity;
  l.n_buffers = n_buffers;
  for (int s = 0; s < n_stages; ++s)
    for (int p = 0; p < n_ranks; ++p)
      if (p != rank) {
        l.out_links.push_back({s, p});
        l.in_links.push_back({s, p});
      }
  return l;
}

struct payload {
  std::uint32_t src;
  std::uint32_t stage;
};
inline constexpr std::size_t min_message = sizeof(agg::buffer_header) + sizeof(payload);

inline std::byte filler(std::uint32_t src, std::uint32_t seq, std::size_t i) {
  return static_cast<std::byte>((src * 131u + seq * 31u + static_cast<std::uint32_t>(i)) & 0xffu);
}

class traffic {
 public:
  // `tag` goes into the header's epoch field: it tells transports apart.
  traffic(agg::transport& t, agg::link_layout layout, std::uint32_t tag, std::uint64_t seed)
      : t_(t),
        layout_(std::move(layout)),
        tag_(tag),
        rng_(seed),
        to_send_(layout_.out_links.size(), 0),
        sent_(layout_.out_links.size(), 0),
        got_(layout_.in_links.size(), 0),
        expect_(layout_.in_links.size(), 0) {}

  void set_send(int out_link, std::uint32_t n) { to_send_[static_cast<std::size_t>(out_link)] = n; }
  void set_expect(int in_link, std::uint32_t n) { expect_[static_cast<std::size_t>(in_link)] = n; }
  void set_hold_percent(int p) { hold_percent_ = p; }
  void set_max_bytes(std::size_t b) { max_bytes_ = b; }
  void set_trace(std::vector<std::uint64_t>* trace) { trace_ = trace; }

  // One step of this rank: fill and post what acquire() allows, poll and check everything
  // that arrived, release some held buffers (random order), progress.
  void step() {
    for (std::size_t l = 0; l < to_send_.size(); ++l) {
      while (sent_[l] < to_send_[l]) {
        std::byte* b = t_.acquire(static_cast<int>(l));
        if (!b) break;
        post_one(static_cast<int>(l), b);
      }
    }
    agg::received r;
    while (t_.poll(r)) {
      check(r);
      if (hold_percent_ > 0 && static_cast<int>(rng_() % 100) < hold_percent_)
        held_.push_back(r);
      else
        t_.release(r);
    }
    if (!held_.empty() && rng_() % 2 == 0) {
      const std::size_t i = rng_() % held_.size();
      t_.release(held_[i]);
      held_[i] = held_.back();
      held_.pop_back();
    }
    t_.progress();
  }

  void release_all() {
    for (const auto& r : held_) t_.release(r);
    held_.clear();
  }

  [[nodiscard]] bool all_sent() const {
    for (std::size_t l = 0; l < sent_.size(); ++l)
      if (sent_[l] < to_send_[l]) return false;
    return true;
  }
  [[nodiscard]] bool all_received() const {
    for (std::size_t l = 0; l < got_.size(); ++l)
      if (got_[l] != expect_[l]) return false;
    return true;
  }
  [[nodiscard]] bool done() const {
    return all_sent() && all_received() && held_.empty() && t_.idle();
  }
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }
  [[nodiscard]] std::uint64_t n_received() const { return n_received_; }
  [[nodiscard]] std::uint32_t received_on(int in_link) const {
    return got_[static_cast<std::size_t>(in_link)];
  }

  void post_one(int l, std::byte* b) {
    const auto lu = static_cast<std::size_t>(l);
    const std::uint32_t seq = ++sent_[lu];
    std::size_t bytes = min_message;
    const std::size_t cap = std::min(layout_.buffer_bytes, max_bytes_);
    if (cap > min_message) bytes += rng_() % (cap - min_message + 1);
    agg::buffer_header h{static_cast<std::uint32_t>(bytes), tag_, seq, 0};
    payload p{static_cast<std::uint32_t>(layout_.rank),
              static_cast<std::uint32_t>(layout_.out_links[lu].stage)};
    std::memcpy(b, &h, sizeof h);
    std::memcpy(b + sizeof h, &p, sizeof p);
    for (std::size_t i = min_message; i < bytes; ++i) b[i] = filler(p.src, seq, i);
    t_.post(l, b, bytes);
  }

 private:
  void fail(const std::string& what) {
    if (errors_.size() < 20)
      errors_.push_back("rank " + std::to_string(layout_.rank) + ": " + what);
  }

  void check(const agg::received& r) {
    ++n_received_;
    if (r.in_link < 0 || static_cast<std::size_t>(r.in_link) >= got_.size()) {
      fail("in_link " + std::to_string(r.in_link) + " out of range");
      return;
    }
    const auto l = static_cast<std::size_t>(r.in_link);
    const agg::link& k = layout_.in_links[l];
    if (r.bytes < min_message) {
      fail("short buffer: " + std::to_string(r.bytes) + " bytes");
      return;
    }
    agg::buffer_header h{};
    payload p{};
    std::memcpy(&h, r.data, sizeof h);
    std::memcpy(&p, r.data + sizeof h, sizeof p);
    if (trace_)
      trace_->push_back((static_cast<std::uint64_t>(layout_.rank) << 40) ^
                        (static_cast<std::uint64_t>(l) << 20) ^ h.seq);
    if (h.epoch != tag_)
      fail("crosstalk: tag " + std::to_string(h.epoch) + ", expected " + std::to_string(tag_));
    if (p.src != static_cast<std::uint32_t>(k.peer) ||
        p.stage != static_cast<std::uint32_t>(k.stage))
      fail("in-link " + std::to_string(l) + " (stage " + std::to_string(k.stage) + ", peer " +
           std::to_string(k.peer) + ") got a buffer from rank " + std::to_string(p.src) +
           " stage " + std::to_string(p.stage));
    if (h.seq != got_[l] + 1)
      fail("in-link " + std::to_string(l) + ": seq " + std::to_string(h.seq) + " after " +
           std::to_string(got_[l]) + " (FIFO / exactly-once)");
    got_[l] = h.seq;
    if (h.bytes != r.bytes)
      fail("header says " + std::to_string(h.bytes) + " bytes, got " + std::to_string(r.bytes));
    for (std::size_t i = min_message; i < r.bytes; ++i)
      if (r.data[i] != filler(p.src, h.seq, i)) {
        fail("corrupt byte " + std::to_string(i));
        break;
      }
  }

  agg::transport& t_;
  agg::link_layout layout_;
  std::uint32_t tag_;
  std::mt19937_64 rng_;
  std::vector<std::uint32_t> to_send_, sent_, got_, expect_;
  std::vector<agg::received> held_;
  std::vector<std::string> errors_;
  std::vector<std::uint64_t>* trace_ = nullptr;
  int hold_percent_ = 0;
  std::size_t max_bytes_ = static_cast<std::size_t>(-1);
  std::uint64_t n_received_ = 0;
};

}  // namespace convoy_test
