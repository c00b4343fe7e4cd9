// The trace recorder (trace.hpp, TERM-17): the ring and the event sites' bookkeeping.
#include <chrono>
#include <convoy/base/error.hpp>
#include <convoy/termination/trace.hpp>
#include <utility>

namespace convoy::termination {

trace_ring::trace_ring(std::size_t capacity) : events_(capacity), mask_(capacity - 1) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0)
    throw convoy::error("trace: the ring's capacity must be a power of two >= 2, got " +
                        std::to_string(capacity));
}

trace_recorder::trace_recorder(trace_options o, int rank, int n_ranks, int n_stages,
                               std::vector<trace_link> out_links, std::vector<trace_link> in_links)
    : options_(std::move(o)),
      rank_(rank),
      n_ranks_(n_ranks),
      n_stages_(n_stages),
      outs_(std::move(out_links)),
      ins_(std::move(in_links)),
      ring_(options_.events),
      stall_since_(outs_.size(), 0) {}

trace_recorder::~trace_recorder() {
  if (!written_) (void)write_file();
}

std::int64_t trace_recorder::now() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void trace_recorder::put(trace_kind k, int link, int stage, std::size_t bytes, std::size_t items,
                         std::uint8_t flags) noexcept {
  trace_event e;
  e.t_ns = now();
  e.bytes = static_cast<std::uint32_t>(bytes);
  e.items = static_cast<std::uint32_t>(items);
  e.link = link;
  e.kind = k;
  e.stage = static_cast<std::uint8_t>(stage);
  e.flags = flags;
  ring_.put(e);
  last_advance_idle_ = false;
}

void trace_recorder::send(int out_link, std::size_t bytes, std::size_t items,
                          std::uint8_t flags) noexcept {
  put(trace_kind::send, out_link, outs_[static_cast<std::size_t>(out_link)].stage, bytes, items,
      flags);
}

void trace_recorder::receive(int in_link, std::size_t bytes, std::size_t items,
                             std::uint8_t flags) noexcept {
  put(trace_kind::receive, static_cast<int>(outs_.size()) + in_link,
      ins_[static_cast<std::size_t>(in_link)].stage, bytes, items, flags);
}

void trace_recorder::flush() noexcept { put(trace_kind::flush, -1, 0, 0, 0, 0); }

void trace_recorder::stall_edge(int out_link, bool ok) noexcept {
  std::int64_t& since = stall_since_[static_cast<std::size_t>(out_link)];
  const std::int64_t t = now();
  if (!ok) {
    since = t;
    return;
  }
  trace_event e;
  e.t_ns = since;
  e.dur_ns = t - since;
  e.link = out_link;
  e.kind = trace_kind::stall;
  e.stage = static_cast<std::uint8_t>(outs_[static_cast<std::size_t>(out_link)].stage);
  ring_.put(e);
  last_advance_idle_ = false;
  since = 0;
}

void trace_recorder::advance_enter() noexcept {
  advance_start_ = now();
  total_at_enter_ = ring_.total();
}

void trace_recorder::advance_leave() noexcept {
  const std::int64_t t = now();
  const bool idle = ring_.total() == total_at_enter_;
  if (idle && last_advance_idle_) {
    trace_event& e = ring_.newest();
    e.dur_ns = t - e.t_ns;
    ++e.items;
    return;
  }
  trace_event e;
  e.t_ns = advance_start_;
  e.dur_ns = t - advance_start_;
  e.items = 1;
  e.kind = trace_kind::advance;
  ring_.put(e);
  last_advance_idle_ = idle;
}

void trace_recorder::stages_closed(std::uint32_t epoch, int closed) noexcept {
  if (epoch != epoch_) {
    epoch_ = epoch;
    closed_ = 0;
  }
  for (; closed_ < closed; ++closed_) put(trace_kind::stage_closed, -1, closed_, 0, 0, 0);
}

}  // namespace convoy::termination
