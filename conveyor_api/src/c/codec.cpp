// convey_standard_codec: squeezes out the bytes that are constant across a buffer's
// packets and sends them once (seed 000 sec. 3.6, "Compression").
//
// Compressed form: a bitmap of ceil(p/8) bytes (bit k set: byte k of a packet varies),
// then the constant bytes (from the first packet, in byte order), then for every packet
// its varying bytes. p = cargo->packet_size; packets are p bytes apart (stride = p).
#include <convey_codec.h>

#include <cstring>

namespace {

bool standard_plan(const convey_cargo_t* cargo, convey_layout_t* layout) {
  if (!cargo || !layout || cargo->packet_size == 0 ||
      cargo->packet_size < cargo->tag_size + cargo->item_size)
    return false;
  layout->align = 8;
  layout->stride = cargo->packet_size;
  layout->slack = 0;
  layout->offset = 0;
  layout->overrun = 0;
  return true;
}

std::size_t standard_compress(const convey_cargo_t* cargo, void*, std::size_t n_items, void* inbuf,
                              std::size_t limit, void* outbuf) {
  const std::size_t p = cargo->packet_size;
  if (n_items < 2 || p == 0) return 0;
  const auto* in = static_cast<const unsigned char*>(inbuf);
  auto* out = static_cast<unsigned char*>(outbuf);
  const std::size_t mask_bytes = (p + 7) / 8;
  if (mask_bytes > limit) return 0;
  std::memset(out, 0, mask_bytes);
  std::size_t n_var = 0;
  for (std::size_t k = 0; k < p; ++k) {
    const unsigned char first = in[k];
    for (std::size_t i = 1; i < n_items; ++i)
      if (in[i * p + k] != first) {
        out[k / 8] = static_cast<unsigned char>(out[k / 8] | (1u << (k % 8)));
        ++n_var;
        break;
      }
  }
  const std::size_t total = mask_bytes + (p - n_var) + n_items * n_var;
  if (total >= n_items * p || total > limit) return 0;  // not worth it: send as is
  unsigned char* w = out + mask_bytes;
  for (std::size_t k = 0; k < p; ++k)
    if (!(out[k / 8] >> (k % 8) & 1u)) *w++ = in[k];
  for (std::size_t i = 0; i < n_items; ++i)
    for (std::size_t k = 0; k < p; ++k)
      if (out[k / 8] >> (k % 8) & 1u) *w++ = in[i * p + k];
  return total;
}

void standard_decompress(const convey_cargo_t* cargo, void*, std::size_t n_items, std::size_t,
                         void* inbuf, void* outbuf) {
  const std::size_t p = cargo->packet_size;
  const auto* in = static_cast<const unsigned char*>(inbuf);
  auto* out = static_cast<unsigned char*>(outbuf);
  const std::size_t mask_bytes = (p + 7) / 8;
  const unsigned char* r = in + mask_bytes;
  for (std::size_t k = 0; k < p; ++k)
    if (!(in[k / 8] >> (k % 8) & 1u)) {
      const unsigned char v = *r++;
      for (std::size_t i = 0; i < n_items; ++i) out[i * p + k] = v;
    }
  for (std::size_t i = 0; i < n_items; ++i)
    for (std::size_t k = 0; k < p; ++k)
      if (in[k / 8] >> (k % 8) & 1u) out[i * p + k] = *r++;
}

}  // namespace

extern "C" const convey_codec_t convey_standard_codec = {
    "standard", standard_plan, nullptr, standard_compress, standard_decompress, nullptr};
