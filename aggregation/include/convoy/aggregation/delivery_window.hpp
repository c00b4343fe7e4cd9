#pragma once
/// @file
/// The delivery window: the received buffer whose records are handed out by the engine's
/// inline pull (aggregation/README.md, "Per-peer buffers", AGG-25).
#include <cstddef>

namespace convoy::aggregation {

/// The delivered buffer being pulled item by item, inline (engine.hpp): rigid records, all
/// for this rank, of one source (AGG-25), handed out with a compare and a pointer bump.
struct delivery_window {
  const std::byte* cur = nullptr;  ///< payload of the next record; cur >= end: none
  const std::byte* end = nullptr;
  std::size_t stride = 0;  ///< bytes per record
  int from = -1;           ///< the source of every record
  int in_link = -1;        ///< in-link whose front buffer this is; -1: none
  bool pulled = false;     ///< the last pull came from here (for unpull)
};

}  // namespace convoy::aggregation
