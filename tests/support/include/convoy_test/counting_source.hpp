#pragma once
// A buffer_source that records every grab and release and checks that blocks come back
// last-in first-out (aggregation/README.md, AGG-11). Deliberately misaligned by 8 bytes, so
// the transport's own alignment inside the block is exercised.
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

namespace convoy_test {

class counting_source final : public convoy::aggregation::buffer_source {
 public:
  std::byte* grab(std::size_t bytes) override {
    sizes.push_back(bytes);
    if (fail) return nullptr;
    auto* raw = static_cast<std::byte*>(std::malloc(bytes + 8));
    if (!raw) return nullptr;
    live.push_back(raw + 8);
    live_bytes += bytes;
    live_sizes.push_back(bytes);
    return raw + 8;
  }
  void release(std::byte* block) noexcept override {
    ++n_released;
    if (live.empty() || live.back() != block) {
      errors.emplace_back("release of a block that is not the last one grabbed");
      return;
    }
    live.pop_back();
    live_bytes -= live_sizes.back();
    live_sizes.pop_back();
    std::free(block - 8);
  }
  ~counting_source() override {
    for (std::byte* p : live) std::free(p - 8);
  }

  bool fail = false;               ///< grab returns nullptr (after recording the size)
  std::vector<std::size_t> sizes;  ///< every grab's size, in order
  std::vector<std::byte*> live;    ///< grabbed, not released, in grab order
  std::vector<std::size_t> live_sizes;
  std::size_t live_bytes = 0;
  std::size_t n_released = 0;
  std::vector<std::string> errors;
};

}  // namespace convoy_test
