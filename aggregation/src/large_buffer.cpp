// A large-item channel's buffer (detail/large_buffer.hpp), shared by the two-sided and the
// rendezvous channels (AGG-52..57, AGG-120..127).
#include <convoy/aggregation/detail/large_buffer.hpp>
#include <convoy/base/error.hpp>
#include <new>
#include <string>

namespace convoy::aggregation::detail {

namespace {
constexpr std::align_val_t k_align{64};
}  // namespace

void check_large_item(std::size_t bytes, std::size_t bound) {
  if (bytes > bound)
    throw error("large item of " + std::to_string(bytes) + " bytes exceeds the bound " +
                std::to_string(bound));
}

void large_buffer::adopt(buffer_source& source, std::byte* block, std::size_t bytes) noexcept {
  free();
  data_ = block;
  capacity_ = bytes;
  source_ = &source;
}

void large_buffer::fit(std::size_t bytes, std::size_t bound) {
  check_large_item(bytes, bound);
  if (capacity_ >= bytes && (data_ || bytes == 0)) return;
  if (source_)  // a source's block holds the bound: cannot be too small
    throw error("large_channel: buffer source block smaller than the item");
  free();
  data_ = static_cast<std::byte*>(::operator new(bytes, k_align));
  capacity_ = bytes;
}

void large_buffer::free() noexcept {
  if (data_) {
    if (source_)
      source_->release(data_);
    else
      ::operator delete(data_, k_align);
  }
  leak();
}

void large_buffer::leak() noexcept {
  data_ = nullptr;
  capacity_ = 0;
  source_ = nullptr;
}

}  // namespace convoy::aggregation::detail
