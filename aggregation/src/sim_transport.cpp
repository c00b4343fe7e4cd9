#include <convoy/aggregation/detail/book_endpoint.hpp>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/aggregation/sim_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace convoy::aggregation {

namespace detail {

class sim_endpoint;

/// One directed link (sender, receiver, stage) and the buffers in flight on it, FIFO.
struct sim_channel {
  sim_endpoint* sender = nullptr;
  int out_link = -1;
  sim_endpoint* receiver = nullptr;
  int in_link = -1;
  int n_buffers = 0;
  std::size_t buffer_bytes = 0;
  std::vector<int> flight;  ///< sender slots in flight, a ring of n_buffers entries
  ring_view flight_ring;
  int nonempty_pos = -1;  ///< index in sim_state::nonempty, or -1
};

struct sim_state {
  int n_ranks = 0;
  std::uint64_t rng = 0;
  std::vector<sim_channel> channels;
  std::unordered_map<std::uint64_t, int> channel_of;
  /// Channels that can deliver (flight non-empty, receiver open); swap-remove keeps
  /// every operation O(1).
  std::vector<int> nonempty;
  std::size_t in_flight = 0;
  std::vector<std::uint64_t> activity;  ///< per rank (AGG-143)

  static std::uint64_t key(int src, int dst, int stage) {
    return (static_cast<std::uint64_t>(stage) << 42) | (static_cast<std::uint64_t>(src) << 21) |
           static_cast<std::uint64_t>(dst);
  }
  /// splitmix64: small, fast, and the same sequence on every platform.
  std::uint64_t next_random() {
    std::uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  void update_nonempty(int c) {
    sim_channel& ch = channels[static_cast<std::size_t>(c)];
    const bool want = ch.receiver != nullptr && ch.flight_ring.size > 0;
    if (want && ch.nonempty_pos < 0) {
      ch.nonempty_pos = static_cast<int>(nonempty.size());
      nonempty.push_back(c);
    } else if (!want && ch.nonempty_pos >= 0) {
      const int last = nonempty.back();
      nonempty[static_cast<std::size_t>(ch.nonempty_pos)] = last;
      channels[static_cast<std::size_t>(last)].nonempty_pos = ch.nonempty_pos;
      nonempty.pop_back();
      ch.nonempty_pos = -1;
    }
  }
  bool deliver_one();
};

class sim_endpoint final : public book_endpoint {
 public:
  sim_endpoint(std::shared_ptr<sim_state> state, int rank, std::shared_ptr<buffer_source> memory)
      : state_(std::move(state)), rank_(rank), memory_(std::move(memory)) {}
  ~sim_endpoint() override;

  void open(const link_layout& layout) override;
  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  [[nodiscard]] bool poll(received& out) override {
    if (!opened_ || !in_.poll(out)) return false;
    touch();
    return true;
  }
  void release(const received& r) override;
  void progress() override;

  void credit_returned(int out_link);
  void send_ready(int out_link);

  void touch() noexcept { ++state_->activity[static_cast<std::size_t>(rank_)]; }

  using book_endpoint::in_;  // the deliveries copy between endpoints' books
  using book_endpoint::out_;

 private:
  std::shared_ptr<sim_state> state_;
  int rank_;
  std::shared_ptr<buffer_source> memory_;
  source_block block_;  ///< from memory_, released at the end of the destructor (AGG-11)
  std::vector<int> out_channel_;
  std::vector<int> in_channel_;
  std::vector<int> credit_ready_;  ///< out-links with queued buffers that got credit
  std::vector<bool> in_credit_ready_;
};

namespace {
constexpr const char* who = "sim transport";

std::string link_name(int src, int dst, int stage) {
  return "link " + std::to_string(src) + "->" + std::to_string(dst) + " of stage " +
         std::to_string(stage);
}
}  // namespace

sim_endpoint::~sim_endpoint() {
  for (const int c : out_channel_) {
    sim_channel& ch = state_->channels[static_cast<std::size_t>(c)];
    state_->in_flight -= static_cast<std::size_t>(ch.flight_ring.size);
    ch.flight_ring = {};
    ch.sender = nullptr;
    state_->update_nonempty(c);
  }
  for (const int c : in_channel_) {
    sim_channel& ch = state_->channels[static_cast<std::size_t>(c)];
    ch.receiver = nullptr;
    state_->update_nonempty(c);
  }
  // Nothing refers to the block any more: the flights above were dropped, and a delivery
  // copies out of a sender only while it is registered.
  if (block_.grabbed) memory_->release(block_.grabbed);
}

void sim_endpoint::open(const link_layout& layout) {
  if (opened_) throw convoy::error("sim transport: open() called twice");
  validate_layout(layout, who);
  check_layout_rank(layout, rank_, state_->n_ranks, who);
  // Check everything before registering anything, so a failed open() changes nothing.
  auto check = [&](int src, int dst, int stage, bool as_sender) {
    const auto it = state_->channel_of.find(sim_state::key(src, dst, stage));
    if (it == state_->channel_of.end()) return;
    const sim_channel& ch = state_->channels[static_cast<std::size_t>(it->second)];
    if ((as_sender ? ch.sender : ch.receiver) != nullptr)
      throw convoy::error("sim transport: " + link_name(src, dst, stage) +
                          " is already open at its " + (as_sender ? "sender" : "receiver"));
    if (ch.n_buffers != layout.n_buffers || ch.buffer_bytes != layout.buffer_bytes)
      throw convoy::error("sim transport: " + link_name(src, dst, stage) +
                          ": the two ends "
                          "disagree on n_buffers or buffer_bytes");
  };
  for (const link& l : layout.out_links) check(rank_, l.peer, l.stage, true);
  for (const link& l : layout.in_links) check(l.peer, rank_, l.stage, false);

  const auto n_out = layout.out_links.size(), n_in = layout.in_links.size();
  out_.init(static_cast<int>(n_out), layout.n_buffers, layout.buffer_bytes,
            std::vector<bool>(n_out, true));
  in_.init(static_cast<int>(n_in), layout.n_buffers, layout.buffer_bytes,
           std::vector<bool>(n_in, true));
  if (memory_) {
    // One process, no collective: each virtual rank grabs what it needs itself.
    block_ = grab_block(*memory_, out_.block_bytes() + in_.block_bytes(), who);
    if (block_.aligned) {
      out_.use_block(block_.aligned);
      in_.use_block(block_.aligned + out_.block_bytes());
    }
  }
  in_credit_ready_.assign(n_out, false);
  credit_ready_.reserve(n_out);
  auto channel = [&](int src, int dst, int stage) {
    const auto [it, fresh] = state_->channel_of.try_emplace(
        sim_state::key(src, dst, stage), static_cast<int>(state_->channels.size()));
    if (fresh) {
      sim_channel ch;
      ch.n_buffers = layout.n_buffers;
      ch.buffer_bytes = layout.buffer_bytes;
      ch.flight.assign(static_cast<std::size_t>(layout.n_buffers), -1);
      state_->channels.push_back(std::move(ch));
    }
    return it->second;
  };
  out_channel_.reserve(n_out);
  for (std::size_t i = 0; i < n_out; ++i) {
    const link& l = layout.out_links[i];
    const int c = channel(rank_, l.peer, l.stage);
    sim_channel& ch = state_->channels[static_cast<std::size_t>(c)];
    ch.sender = this;
    ch.out_link = static_cast<int>(i);
    out_channel_.push_back(c);
  }
  in_channel_.reserve(n_in);
  for (std::size_t i = 0; i < n_in; ++i) {
    const link& l = layout.in_links[i];
    const int c = channel(l.peer, rank_, l.stage);
    sim_channel& ch = state_->channels[static_cast<std::size_t>(c)];
    ch.receiver = this;
    ch.in_link = static_cast<int>(i);
    in_channel_.push_back(c);
    state_->update_nonempty(c);
  }
  opened_ = true;
}

void sim_endpoint::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (!opened_) throw convoy::error("sim transport: post() before open()");
  out_.post(out_link, buffer, bytes, who);
  touch();
  send_ready(out_link);
}

void sim_endpoint::send_ready(int out_link) {
  const int c = out_channel_[static_cast<std::size_t>(out_link)];
  sim_channel& ch = state_->channels[static_cast<std::size_t>(c)];
  for (int s = out_.next_sendable(out_link); s >= 0; s = out_.next_sendable(out_link)) {
    ch.flight[static_cast<std::size_t>((ch.flight_ring.head + ch.flight_ring.size) %
                                       ch.n_buffers)] = s;
    ++ch.flight_ring.size;
    ++state_->in_flight;
  }
  state_->update_nonempty(c);
}

void sim_endpoint::release(const received& r) {
  if (!opened_) throw convoy::error("sim transport: release() before open()");
  in_.release(r, who);
  touch();
  const sim_channel& ch =
      state_->channels[static_cast<std::size_t>(in_channel_[static_cast<std::size_t>(r.in_link)])];
  if (ch.sender != nullptr) ch.sender->credit_returned(ch.out_link);
}

void sim_endpoint::credit_returned(int out_link) {
  out_.add_credits(out_link, 1, who);
  touch();
  const auto l = static_cast<std::size_t>(out_link);
  if (out_.has_queued(out_link) && !in_credit_ready_[l]) {
    in_credit_ready_[l] = true;
    credit_ready_.push_back(out_link);
  }
}

void sim_endpoint::progress() {
  // Swap-free loop: send_ready() never adds to credit_ready_ (only release() does).
  for (const int l : credit_ready_) {
    in_credit_ready_[static_cast<std::size_t>(l)] = false;
    send_ready(l);
  }
  if (!credit_ready_.empty()) touch();
  credit_ready_.clear();
}

bool sim_state::deliver_one() {
  if (nonempty.empty()) return false;
  const int c = nonempty[static_cast<std::size_t>(next_random() % nonempty.size())];
  sim_channel& ch = channels[static_cast<std::size_t>(c)];
  const int s = ch.flight[static_cast<std::size_t>(ch.flight_ring.head)];
  ch.flight_ring.head = (ch.flight_ring.head + 1) % ch.n_buffers;
  --ch.flight_ring.size;
  --in_flight;
  sim_endpoint& from = *ch.sender;
  sim_endpoint& to = *ch.receiver;
  to.in_.allocate(ch.in_link);
  const int r = to.in_.take_free(ch.in_link);
  if (r < 0)  // the credit a sender spent guarantees a free receive buffer
    throw std::logic_error("sim transport: credit invariant broken on a delivery");
  const std::size_t bytes = from.out_.bytes(ch.out_link, s);
  std::memcpy(to.in_.buffer(ch.in_link, r), from.out_.buffer(ch.out_link, s), bytes);
  to.in_.expect(ch.in_link, r);
  to.in_.arrived(ch.in_link, r, bytes);
  from.out_.send_done(ch.out_link, s);
  from.touch();
  to.touch();
  update_nonempty(c);
  return true;
}

}  // namespace detail

sim_network::sim_network(int n_ranks, std::uint64_t seed)
    : state_(std::make_shared<detail::sim_state>()) {
  if (n_ranks < 1 || n_ranks > (1 << 21))
    throw convoy::error("sim_network: n_ranks " + std::to_string(n_ranks) +
                        " out of range [1, 2^21]");
  state_->n_ranks = n_ranks;
  state_->activity.assign(static_cast<std::size_t>(n_ranks), 0);
  state_->rng = seed;
}

sim_network::~sim_network() = default;

std::unique_ptr<transport> sim_network::endpoint(int rank, std::shared_ptr<buffer_source> memory) {
  if (rank < 0 || rank >= state_->n_ranks)
    throw convoy::error("sim_network: endpoint rank " + std::to_string(rank) +
                        " out of range [0, " + std::to_string(state_->n_ranks) + ")");
  return std::make_unique<detail::sim_endpoint>(state_, rank, std::move(memory));
}

bool sim_network::deliver_one() { return state_->deliver_one(); }

std::size_t sim_network::deliver_all() {
  std::size_t n = 0;
  while (state_->deliver_one()) ++n;
  return n;
}

std::uint64_t sim_network::activity(int rank) const noexcept {
  if (rank < 0 || rank >= state_->n_ranks) return 0;
  return state_->activity[static_cast<std::size_t>(rank)];
}

std::size_t sim_network::in_flight() const noexcept { return state_->in_flight; }

int sim_network::n_ranks() const noexcept { return state_->n_ranks; }

}  // namespace convoy::aggregation
