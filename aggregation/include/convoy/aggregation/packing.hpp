#pragma once
/// @file
/// The wire format of items inside a buffer (docs/aggregation-reference.md).
///
/// A buffer is a buffer_header followed by packed item records. On a hop of stage s a
/// record is: the routing tag (route_plan::tag_bytes(s) bytes, little-endian), then for
/// elastic engines a 4-byte little-endian payload size, then the payload. Records are
/// packed without padding: the receiver copies (pull) or re-packs (forward) each one.
#include <bit>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace convoy::aggregation {

static_assert(std::endian::native == std::endian::little,
              "the wire format stores tags little-endian; big-endian hosts need byte swaps");

inline constexpr std::size_t header_bytes = sizeof(buffer_header);
inline constexpr std::size_t size_field_bytes = 4;

/// Copies an item of `n` bytes. The common small sizes get a fixed-size move (a few
/// instructions, inlined) instead of a call to memcpy with a runtime length, which costs
/// more than the rest of a push of an 8-byte item.
inline void copy_item(void* to, const void* from, std::size_t n) noexcept {
#if defined(__GNUC__)
  // Hides both ends from GCC's bounds analysis, which otherwise warns about the branches
  // of larger sizes when this is inlined for a smaller item.
  asm("" : "+r"(to), "+r"(from));
#endif
  if (n == 8) [[likely]] {  // the common size: a compare, not an indirect jump
    std::memcpy(to, from, 8);
    return;
  }
  switch (n) {
    case 4:
      std::memcpy(to, from, 4);
      return;
    case 12:
      std::memcpy(to, from, 12);
      return;
    case 16:
      std::memcpy(to, from, 16);
      return;
    case 24:
      std::memcpy(to, from, 24);
      return;
    case 32:
      std::memcpy(to, from, 32);
      return;
    default:
      std::memcpy(to, from, n);
  }
}

/// Bytes of one record on a stage with `tag_bytes` of tag.
[[nodiscard]] constexpr std::size_t record_bytes(int tag_bytes, bool elastic,
                                                 std::size_t payload) noexcept {
  return static_cast<std::size_t>(tag_bytes) + (elastic ? size_field_bytes : 0) + payload;
}

/// Writes a record at `out`; returns the byte past it.
inline std::byte* put_record(std::byte* out, std::uint64_t tag, int tag_bytes, bool elastic,
                             const void* payload, std::size_t n) noexcept {
  std::memcpy(out, &tag, static_cast<std::size_t>(tag_bytes));
  out += tag_bytes;
  if (elastic) {
    const auto n32 = static_cast<std::uint32_t>(n);
    std::memcpy(out, &n32, size_field_bytes);
    out += size_field_bytes;
  }
  if (n) std::memcpy(out, payload, n);
  return out + n;
}

/// A record read back from a buffer.
struct record {
  std::uint64_t tag = 0;
  const std::byte* payload = nullptr;
  std::size_t bytes = 0;
  std::size_t record_bytes = 0;  ///< tag + size field + payload
};

/// Reads the record at `in`; `rigid_bytes` is the payload size of rigid records.
[[nodiscard]] inline record get_record(const std::byte* in, int tag_bytes, bool elastic,
                                       std::size_t rigid_bytes) noexcept {
  record r;
  std::memcpy(&r.tag, in, static_cast<std::size_t>(tag_bytes));
  std::size_t off = static_cast<std::size_t>(tag_bytes);
  if (elastic) {
    std::uint32_t n32 = 0;
    std::memcpy(&n32, in + off, size_field_bytes);
    off += size_field_bytes;
    r.bytes = n32;
  } else {
    r.bytes = rigid_bytes;
  }
  r.payload = in + off;
  r.record_bytes = off + r.bytes;
  return r;
}

}  // namespace convoy::aggregation
