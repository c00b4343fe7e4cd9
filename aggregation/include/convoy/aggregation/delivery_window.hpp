#pragma once
/// @file
/// The delivery window: the received buffer whose records are handed out by the engine's
/// inline pull (docs/aggregation-reference.md, "Per-peer buffers", AGG-25).
#include <cstddef>
#include <cstdint>

namespace convoy::aggregation {

/// The delivered buffer being pulled item by item, inline (engine.hpp): rigid records, all
/// for this rank (AGG-25), handed out with a compare and a pointer bump. Either every record
/// has one source (`from` >= 0), or each carries a one-byte tag, just before its payload,
/// whose source is `source_of_tag[tag]` (a table filled before the window opens).
struct delivery_window {
  const std::byte* cur = nullptr;  ///< payload of the next record; cur >= end: none
  const std::byte* end = nullptr;
  std::size_t stride = 0;                       ///< bytes per record
  const std::int32_t* source_of_tag = nullptr;  ///< tag -> source, when from < 0
  int from = -1;                                ///< the source of every record, or -1
  int in_link = -1;                             ///< in-link whose front buffer this is; -1: none
  bool pulled = false;                          ///< the last pull came from here (for unpull)

  /// Source of the record at `cur`.
  [[nodiscard]] int source() const noexcept {
    return from >= 0 ? from : source_of_tag[std::to_integer<unsigned>(cur[-1])];
  }
};

}  // namespace convoy::aggregation
