#pragma once
/// @file
/// Address space for many buffers whose memory is committed only where they are written
/// (aggregation/README.md AGG-141): large anonymous mappings reserved without backing store,
/// carved into page-aligned blocks that are never moved; give_back() returns a range's
/// pages to the system, so a free buffer costs nothing and a filling one what it holds
/// (rounded up to pages). For the simulated network (timed_network), where 65 536 virtual
/// ranks × ~100 links × 2 × 16 KiB of full buffers (256 GiB) would not fit in memory.
#include <cstddef>
#include <vector>

namespace convoy::aggregation::detail {

class lazy_arena {
 public:
  lazy_arena() = default;
  ~lazy_arena();
  lazy_arena(const lazy_arena&) = delete;
  lazy_arena& operator=(const lazy_arena&) = delete;

  /// A block of `bytes` (page-aligned, zero-filled, committed on first write). Throws
  /// convoy::error if the system refuses the mapping, or `bytes` exceeds a chunk (64 GiB).
  [[nodiscard]] std::byte* carve(std::size_t bytes);
  /// Gives the whole pages inside [p, p + bytes) back to the system (they read as zero
  /// afterwards). Cheap to call on a range holding no whole page.
  static void give_back(std::byte* p, std::size_t bytes) noexcept;

 private:
  struct chunk {
    std::byte* base = nullptr;
    std::size_t used = 0;
  };
  std::vector<chunk> chunks_;
};

}  // namespace convoy::aggregation::detail
