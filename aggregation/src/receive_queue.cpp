// The receive side of an in-link (docs/aggregation-reference.md, "Per-peer buffers").
#include <convoy/aggregation/receive_queue.hpp>
#include <convoy/base/error.hpp>

namespace convoy::aggregation {

void receive_queue::push_back(const received& r, bool current) {
  if (size_ == capacity_)
    throw convoy::error("engine: a link delivered more buffers than its n_buffers credits");
  slots_[(head_ + size_) % capacity_] = r;
  ++size_;
  if (current) ++now_;
}

}  // namespace convoy::aggregation
