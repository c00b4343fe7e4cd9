// convey_standard_codec, and c_codec: a convey_codec_t as the C++ core's codec.
//
// convey_standard_codec: squeezes out the bytes that are constant across a buffer's
// packets and sends them once (seed 000 sec. 3.6, "Compression").
//
// Compressed form: a bitmap of ceil(p/8) bytes (bit k set: byte k of a packet varies),
// then the constant bytes (from the first packet, in byte order), then for every packet
// its varying bytes. p = cargo->packet_size; packets are p bytes apart (stride = p).
#include <convey_codec.h>

#include <cstring>
#include <memory>

#include "facade.hpp"

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

// ---- a convey_codec_t as the C++ core's codec (THRIFTY, CAPI-11) ----

namespace convoy::facade {
namespace {

namespace agg = convoy::aggregation;

convey_cargo_t to_c(const agg::cargo& c, void* arg) noexcept {
  return convey_cargo_t{c.tag_bytes, c.item_bytes, c.packet_bytes, c.max_items, arg};
}

// One link's state from the C codec's link(); its destructor is the codec's unlink().
class c_link final : public agg::codec_link {
 public:
  c_link(const convey_codec_t* c, convey_cargo_t cargo, void* state) noexcept
      : codec_(c), cargo_(cargo), state_(state) {}
  ~c_link() override {
    if (codec_->unlink) codec_->unlink(&cargo_, state_);
  }
  c_link(const c_link&) = delete;
  c_link& operator=(const c_link&) = delete;
  [[nodiscard]] void* state() const noexcept { return state_; }

 private:
  const convey_codec_t* codec_;
  convey_cargo_t cargo_;
  void* state_;
};

}  // namespace

void* c_codec::link_state(agg::codec_link* link) noexcept {
  return link ? static_cast<c_link*>(link)->state() : nullptr;
}

void c_codec::set(const convey_codec_t* c, void* arg) noexcept {
  codec_ = c ? c : &convey_standard_codec;
  arg_ = arg;
}

bool c_codec::plan(const agg::cargo& c, agg::codec_layout& layout) {
  const convey_cargo_t cargo = to_c(c, arg_);
  convey_layout_t l{layout.align, c.packet_bytes, 0, 0, 0};
  if (!codec_->plan(&cargo, &l)) return false;
  layout = agg::codec_layout{l.align, l.stride, l.slack, l.offset, l.overrun};
  return true;
}

std::unique_ptr<agg::codec_link> c_codec::link(const agg::cargo& c, bool decompress) {
  if (!codec_->link) return nullptr;
  const convey_cargo_t cargo = to_c(c, arg_);
  return std::make_unique<c_link>(codec_, cargo, codec_->link(&cargo, decompress));
}

std::size_t c_codec::compress(const agg::cargo& c, agg::codec_link* link, std::size_t n_items,
                              std::byte* in, std::size_t limit, std::byte* out) {
  const convey_cargo_t cargo = to_c(c, arg_);
  return codec_->compress(&cargo, link_state(link), n_items, in, limit, out);
}

void c_codec::decompress(const agg::cargo& c, agg::codec_link* link, std::size_t n_items,
                         std::size_t n_bytes, std::byte* in, std::byte* out) {
  const convey_cargo_t cargo = to_c(c, arg_);
  codec_->decompress(&cargo, link_state(link), n_items, n_bytes, in, out);
}

}  // namespace convoy::facade
