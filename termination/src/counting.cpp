// Dimension-ordered termination counting (Wesolowski et al. 2014, sec. III.D; termination/README.md
// TERM-4, TERM-8).
#include <convoy/base/error.hpp>
#include <convoy/termination/counting.hpp>
#include <limits>
#include <string>

namespace convoy::termination {

namespace {
constexpr std::uint32_t not_yet = std::numeric_limits<std::uint32_t>::max();
}

stage_counting::stage_counting(int n_stages, const std::vector<int>& out_stages,
                               const std::vector<int>& in_stages)
    : n_stages_(n_stages),
      out_(out_stages.size()),
      in_(in_stages.size()),
      in_of_stage_(static_cast<std::size_t>(n_stages)) {
  auto check = [&](int s, const char* what) {
    if (s < 0 || s >= n_stages)
      throw convoy::error(std::string("stage_counting: ") + what + " stage " + std::to_string(s) +
                          " outside 0.." + std::to_string(n_stages - 1));
  };
  for (std::size_t k = 0; k < out_stages.size(); ++k) {
    check(out_stages[k], "out-link");
    if (k > 0 && out_stages[k] < out_stages[k - 1])
      throw convoy::error("stage_counting: out-links must be ordered by stage");
    out_[k].stage = out_stages[k];
  }
  // out_base_[s]: the first out-link of a stage >= s.
  std::size_t k = 0;
  for (int s = 0; s <= n_stages; ++s) {
    while (k < out_.size() && out_[k].stage < s) ++k;
    out_base_.push_back(static_cast<int>(k));
  }
  for (std::size_t i = 0; i < in_stages.size(); ++i) {
    check(in_stages[i], "in-link");
    in_of_stage_[static_cast<std::size_t>(in_stages[i])].push_back(static_cast<int>(i));
  }
  for (auto& c : in_) c.expected = not_yet;
}

void stage_counting::begin_cycle() noexcept {
  ++epoch_;
  done_pushing_ = false;
  closed_stages_ = 0;
  for (auto& o : out_) {
    o.seq = 0;
    o.closed = false;
  }
  for (auto& c : in_) c = {0, not_yet};
}

void stage_counting::count(int in_link, const aggregation::buffer_header& h) noexcept {
  in_count& c = in_[static_cast<std::size_t>(in_link)];
  ++c.received;
  // Counts, not order: finished() compares them whenever the last buffer came (TERM-4).
  if (h.flags & aggregation::flag_last) c.expected = h.seq;
}

bool stage_counting::arrive(int in_link, const aggregation::buffer_header& h, bool active,
                            bool holding) noexcept {
  if (h.epoch != epoch_ || !active || holding) return false;  // TERM-8: held until begin
  count(in_link, h);
  return true;
}

bool stage_counting::admit_held(int in_link, const aggregation::buffer_header& h) noexcept {
  if (h.epoch != epoch_) return false;
  count(in_link, h);
  return true;
}

// TERM-4: nothing can enter stage s once every in-link of the stages before it has
// finished and been drained, because routes only climb in stage (ROUTE-1).
bool stage_counting::may_close(int stage, const link_layer& links) const {
  if (!done_pushing_) return false;
  for (int j = 0; j < stage; ++j)
    for (int id : in_of_stage_[static_cast<std::size_t>(j)])
      if (!finished(id) || !links.drained(id)) return false;
  return true;
}

bool stage_counting::close_stage(int stage, link_layer& links) {
  bool all = true;
  for (int k = out_base_[static_cast<std::size_t>(stage)];
       k < out_base_[static_cast<std::size_t>(stage) + 1]; ++k) {
    out_count& o = out_[static_cast<std::size_t>(k)];
    if (o.closed) continue;
    // prepare_last may post data buffers first: o.seq is read after it.
    if (!links.prepare_last(k) || !links.send_last(k, o.seq + 1)) {
      all = false;
      continue;
    }
    ++o.seq;
    o.closed = true;
  }
  return all;
}

void stage_counting::close_stages(link_layer& links) {
  while (closed_stages_ < n_stages_ && may_close(closed_stages_, links)) {
    if (!close_stage(closed_stages_, links)) return;
    ++closed_stages_;
  }
}

bool stage_counting::everything_received() const noexcept {
  if (closed_stages_ < n_stages_) return false;
  for (std::size_t i = 0; i < in_.size(); ++i)
    if (!finished(static_cast<int>(i))) return false;
  return true;
}

}  // namespace convoy::termination
