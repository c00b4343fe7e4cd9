// The counting transport of sim_link_counts.hpp.
#include "sim_link_counts.hpp"

#include <algorithm>
#include <convoy/base/error.hpp>
#include <string>
#include <utility>

namespace convoy::sim {

namespace {

constexpr std::size_t header_bytes = sizeof(aggregation::buffer_header);

class counting final : public aggregation::transport {
 public:
  counting(std::unique_ptr<aggregation::transport> inner, int rank, const std::vector<int>& node_of,
           record_sizes sizes, std::vector<link_count>& sink)
      : inner_(std::move(inner)),
        rank_(rank),
        node_of_(node_of),
        sizes_(std::move(sizes)),
        sink_(sink) {}

  void open(const aggregation::link_layout& layout) override {
    inner_->open(layout);
    if (sink_.size() + layout.out_links.size() > sink_.capacity())
      throw convoy::error("link counters: room for " + std::to_string(sink_.capacity()) +
                          " links reserved, rank " + std::to_string(rank_) + " needs more");
    first_ = sink_.size();
    capacity_ = layout.buffer_bytes;
    const auto node = [this](int r) { return node_of_[static_cast<std::size_t>(r)]; };
    for (const auto& l : layout.out_links)
      sink_.push_back({rank_, l.stage, l.peer, node(l.peer) != node(rank_)});
  }
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override {
    return inner_->acquire(out_link);
  }
  [[nodiscard]] std::size_t room(int out_link, const std::byte* buffer) const noexcept override {
    return inner_->room(out_link, buffer);
  }
  [[nodiscard]] std::byte* grow(int out_link, std::byte* buffer, std::size_t used_bytes,
                                std::size_t at_least, std::size_t& room) noexcept override {
    return inner_->grow(out_link, buffer, used_bytes, at_least, room);
  }
  void post(int out_link, std::byte* buffer, std::size_t bytes) override {
    link_count& c = sink_[first_ + static_cast<std::size_t>(out_link)];
    const auto tag = static_cast<std::size_t>(sizes_.tag_bytes[static_cast<std::size_t>(c.stage)]);
    const std::size_t record = sizes_.item_bytes + tag;
    c.items += bytes > header_bytes ? (bytes - header_bytes) / record : 0;
    c.bytes += bytes;
    if (bytes + std::max<std::size_t>(record, 8) > capacity_)
      ++c.buffers_full;
    else
      ++c.buffers_partial;
    inner_->post(out_link, buffer, bytes);
  }
  [[nodiscard]] bool poll(aggregation::received& out) override { return inner_->poll(out); }
  void release(const aggregation::received& r) override { inner_->release(r); }
  void progress() override { inner_->progress(); }
  [[nodiscard]] bool idle() const noexcept override { return inner_->idle(); }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override {
    return inner_->memory_bytes();
  }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override {
    return inner_->max_memory_bytes();
  }

 private:
  std::unique_ptr<aggregation::transport> inner_;
  int rank_;
  const std::vector<int>& node_of_;
  record_sizes sizes_;
  std::vector<link_count>& sink_;
  std::size_t first_ = 0;  // this rank's first counter in sink_
  std::size_t capacity_ = 0;
};

}  // namespace

std::unique_ptr<aggregation::transport> counting_transport(
    std::unique_ptr<aggregation::transport> inner, int rank, const std::vector<int>& node_of,
    record_sizes sizes, std::vector<link_count>& sink) {
  return std::make_unique<counting>(std::move(inner), rank, node_of, std::move(sizes), sink);
}

}  // namespace convoy::sim
