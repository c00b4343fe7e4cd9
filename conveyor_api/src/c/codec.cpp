// convey_standard_codec, and c_codec: a convey_codec_t as the C++ core's codec.
//
// convey_standard_codec: squeezes out the bytes that are constant across a buffer's
// packets and sends them once (Maley & DeVinney 2019, sec. 3.6, "Compression"). Its compress and
// decompress are aggregation::squeeze_constant_bytes / restore_constant_bytes (the
// built-in C++ codec's, same wire format); p = cargo->packet_size, stride = p.
#include <convey_codec.h>

#include <cstddef>
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
  return convoy::aggregation::squeeze_constant_bytes(cargo->packet_size, n_items,
                                                     static_cast<const std::byte*>(inbuf), limit,
                                                     static_cast<std::byte*>(outbuf));
}

void standard_decompress(const convey_cargo_t* cargo, void*, std::size_t n_items, std::size_t,
                         void* inbuf, void* outbuf) {
  convoy::aggregation::restore_constant_bytes(cargo->packet_size, n_items,
                                              static_cast<const std::byte*>(inbuf),
                                              static_cast<std::byte*>(outbuf));
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
