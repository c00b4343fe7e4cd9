// The forwarding step (router/README.md, ROUTE-20..23; Wesolowski et al. 2014, sec. III.B).
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/router/forwarding.hpp>
#include <limits>
#include <string>
#include <utility>

namespace convoy::router {

forwarder::forwarder(std::shared_ptr<const route_plan> plan, int rank)
    : plan_(std::move(plan)), rank_(rank), n_stages_(plan_ ? plan_->n_stages() : 0) {
  if (!plan_) throw convoy::error("forwarder: null route plan");
  if (rank_ < 0 || rank_ >= plan_->n_ranks())
    throw convoy::error("forwarder: rank " + std::to_string(rank_) + " is outside the plan's " +
                        std::to_string(plan_->n_ranks()) + " ranks");
  for (int s = 0; s < n_stages_; ++s) {
    tag_bytes_.push_back(plan_->tag_bytes(s));
    max_tag_bytes_ = std::max(max_tag_bytes_, tag_bytes_.back());
    out_base_.push_back(static_cast<int>(out_.size()));
    for (int p : plan_->out_peers(rank_, s)) out_.push_back({s, p});
    for (int p : plan_->in_peers(rank_, s)) in_.push_back({s, p});
  }
  out_base_.push_back(static_cast<int>(out_.size()));
}

bool forwarder::enable_step_table(int in_link) {
  // Sized on the first table: a rank without tables (large plans) holds none of this.
  if (steps_.empty()) steps_.resize(in_.size());
  auto& t = steps_[static_cast<std::size_t>(in_link)];
  t.enabled = tag_bytes(in_[static_cast<std::size_t>(in_link)].stage) <= step_table_tag_bytes;
  return t.enabled;
}

void forwarder::set_canonical_source(bool on) {
  if (on == canonical_) return;
  canonical_ = on;
  for (auto& t : steps_) std::fill(t.entries.begin(), t.entries.end(), next_step{});
}

next_step forwarder::learn(int in_link, std::uint64_t tag) {
  const step s = next(in_link, tag);
  next_step n;
  if (s.deliver()) {
    n = {next_step::deliver, static_cast<std::uint32_t>(s.src)};
  } else {
    // A next tag wider than 32 bits is not cached: the caller takes next() itself.
    if (s.tag > std::numeric_limits<std::uint32_t>::max()) return {};
    n = {s.out_link, static_cast<std::uint32_t>(s.tag)};
  }
  auto& t = steps_[static_cast<std::size_t>(in_link)].entries;
  if (tag >= t.size()) {
    // Exact growth (libstdc++'s reserve allocates what it is asked), at most 256 entries.
    const std::size_t want = std::max<std::size_t>(tag + 1, 2 * t.size());
    t.reserve(std::min<std::size_t>(want, std::size_t{1} << (8 * step_table_tag_bytes)));
    t.resize(static_cast<std::size_t>(tag) + 1);
  }
  t[static_cast<std::size_t>(tag)] = n;
  return n;
}

std::size_t forwarder::step_table_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& t : steps_) n += t.entries.capacity() * sizeof(next_step);
  return n;
}

std::size_t forwarder::step_table_max_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& t : steps_)
    if (t.enabled) n += (std::size_t{1} << (8 * step_table_tag_bytes)) * sizeof(next_step);
  return n;
}

int forwarder::single_source(int in_link) const noexcept {
  const link_end& l = in_[static_cast<std::size_t>(in_link)];
  if (tag_bytes(l.stage) != 0) return -1;
  int src = -1, dst = -1;
  plan_->decode(l.stage, l.peer, rank_, 0, src, dst);
  return dst == rank_ && src >= 0 && src < plan_->n_ranks() ? src : -1;
}

std::vector<first_hop> forwarder::first_hop_table(int max_ranks) const {
  const int p = plan_->n_ranks();
  std::vector<first_hop> table;
  if (p > max_ranks) return table;
  table.resize(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    const step s = route(rank_, d, 0);
    if (s.deliver()) {
      table[static_cast<std::size_t>(d)] = {static_cast<std::uint32_t>(out_.size()), 0};
      continue;
    }
    if (s.tag > std::numeric_limits<std::uint32_t>::max()) return {};
    table[static_cast<std::size_t>(d)] = {static_cast<std::uint32_t>(s.out_link),
                                          static_cast<std::uint32_t>(s.tag)};
  }
  return table;
}

}  // namespace convoy::router
