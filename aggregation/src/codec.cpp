// The built-in codec: constant bytes of a buffer's packets sent once (Maley & DeVinney 2019,
// sec. 3.6, "Compression"). The C façade's convey_standard_codec calls the same two functions.
#include <convoy/aggregation/codec.hpp>
#include <cstring>

namespace convoy::aggregation {

std::unique_ptr<codec_link> codec::link(const cargo&, bool) { return nullptr; }

bool usable_layout(const codec_layout& l, std::size_t packet_bytes) noexcept {
  const bool power_of_two = l.align != 0 && (l.align & (l.align - 1)) == 0;
  return l.stride == packet_bytes && power_of_two && l.align >= 8 && l.align <= max_codec_align &&
         l.offset < l.align;
}

namespace {
bool varies(const std::byte* mask, std::size_t k) noexcept {
  return ((std::to_integer<unsigned>(mask[k / 8]) >> (k % 8)) & 1u) != 0;
}
}  // namespace

std::size_t squeeze_constant_bytes(std::size_t p, std::size_t n_items, const std::byte* in,
                                   std::size_t limit, std::byte* out) noexcept {
  if (n_items < 2 || p == 0) return 0;
  const std::size_t mask_bytes = (p + 7) / 8;
  if (mask_bytes > limit) return 0;
  std::memset(out, 0, mask_bytes);
  std::size_t n_var = 0;
  for (std::size_t k = 0; k < p; ++k) {
    const std::byte first = in[k];
    for (std::size_t i = 1; i < n_items; ++i)
      if (in[i * p + k] != first) {
        out[k / 8] |= std::byte{static_cast<unsigned char>(1u << (k % 8))};
        ++n_var;
        break;
      }
  }
  const std::size_t total = mask_bytes + (p - n_var) + n_items * n_var;
  if (total >= n_items * p || total > limit) return 0;  // not worth it: sent as it is
  std::byte* w = out + mask_bytes;
  for (std::size_t k = 0; k < p; ++k)
    if (!varies(out, k)) *w++ = in[k];
  for (std::size_t i = 0; i < n_items; ++i)
    for (std::size_t k = 0; k < p; ++k)
      if (varies(out, k)) *w++ = in[i * p + k];
  return total;
}

void restore_constant_bytes(std::size_t p, std::size_t n_items, const std::byte* in,
                            std::byte* out) noexcept {
  const std::size_t mask_bytes = (p + 7) / 8;
  const std::byte* r = in + mask_bytes;
  for (std::size_t k = 0; k < p; ++k)
    if (!varies(in, k)) {
      const std::byte v = *r++;
      for (std::size_t i = 0; i < n_items; ++i) out[i * p + k] = v;
    }
  for (std::size_t i = 0; i < n_items; ++i)
    for (std::size_t k = 0; k < p; ++k)
      if (varies(in, k)) out[i * p + k] = *r++;
}

bool standard_codec::plan(const cargo& c, codec_layout& layout) {
  if (c.packet_bytes == 0 || c.packet_bytes < c.tag_bytes + c.item_bytes) return false;
  layout = codec_layout{8, c.packet_bytes, 0, 0, 0};
  return true;
}

std::size_t standard_codec::compress(const cargo& c, codec_link*, std::size_t n_items,
                                     std::byte* in, std::size_t limit, std::byte* out) {
  return squeeze_constant_bytes(c.packet_bytes, n_items, in, limit, out);
}

void standard_codec::decompress(const cargo& c, codec_link*, std::size_t n_items, std::size_t,
                                std::byte* in, std::byte* out) {
  restore_constant_bytes(c.packet_bytes, n_items, in, out);
}

}  // namespace convoy::aggregation
