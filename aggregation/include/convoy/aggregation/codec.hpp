#pragma once
/// @file
/// Buffer compression: the codec interface the compressing transport and the bulk exchange
/// run on buffers that leave the node (Maley & DeVinney 2019, sec. 3.6, "Compression"; bale's
/// convey_codec.h), and the built-in codec (aggregation/README.md, AGG-40..42).
///
/// A buffer handed to a codec is `n_items` packets of `cargo::packet_bytes` bytes each,
/// back to back: a routing tag of `tag_bytes` then an item of `item_bytes` (rigid items
/// only; elastic buffers are never compressed). The C façade's `convey_codec_t` maps onto
/// this one to one: `plan`, `link` (an RAII `codec_link` whose destructor is `unlink`),
/// `compress`, `decompress`; `convey_cargo_t::arg` is the adapter's own state.
#include <cstddef>
#include <memory>

namespace convoy::aggregation {

/// What a codec is told about the packets it moves (bale's convey_cargo_t without `arg`).
struct cargo {
  std::size_t tag_bytes = 0;     ///< routing tag in front of each item (0 for the bulk kind)
  std::size_t item_bytes = 0;    ///< bytes per item
  std::size_t packet_bytes = 0;  ///< tag + item: the distance between packets
  std::size_t max_items = 0;     ///< most packets in one buffer
  bool operator==(const cargo&) const = default;
};

/// How a codec wants its buffers laid out (bale's convey_layout_t), filled by plan().
struct codec_layout {
  /// Alignment of the uncompressed and compressed data: a power of two, 8 to 64.
  std::size_t align = 8;
  /// Distance between packets in uncompressed buffers. convoy packs packets without
  /// padding, so a plan whose stride is not cargo::packet_bytes is not used.
  std::size_t stride = 0;
  /// Packets past the valid ones that compress may read and modify and decompress may write.
  std::size_t slack = 0;
  /// Offset from a multiple of `align` at which compressed data starts (< align).
  std::size_t offset = 0;
  /// Bytes past the end of the compressed data that compress may write and decompress read.
  std::size_t overrun = 0;
};

/// Largest alignment a codec may ask for (CONVEY_MAX_ALIGN).
inline constexpr std::size_t max_codec_align = 64;

/// Whether a codec's plan fits convoy's packing: `stride` is `packet_bytes` (packets are
/// packed without padding), `align` a power of two from 8 to max_codec_align, `offset` below
/// `align`. Whether the buffers have room for `slack` and `overrun` is the caller's check.
[[nodiscard]] bool usable_layout(const codec_layout& layout, std::size_t packet_bytes) noexcept;

/// Per-link state of a codec for one begin/reset cycle (one compressing or one
/// decompressing end of a link). Destroying it is bale's `unlink`.
class codec_link {
 public:
  virtual ~codec_link() = default;
  codec_link() = default;
  codec_link(const codec_link&) = delete;
  codec_link& operator=(const codec_link&) = delete;
};

/// A compression method. Calls come from one thread (the engine's); a codec may be shared
/// by several transports of one rank.
class codec {
 public:
  virtual ~codec() = default;
  codec() = default;
  codec(const codec&) = delete;
  codec& operator=(const codec&) = delete;

  /// Name for diagnostics.
  [[nodiscard]] virtual const char* name() const noexcept = 0;
  /// Fills `layout` for `c`; false if this cargo is not supported (buffers then go as
  /// they are). Called once per cycle and stage, on both ends of a link, so it must be a
  /// function of `c` alone.
  [[nodiscard]] virtual bool plan(const cargo& c, codec_layout& layout) = 0;
  /// State for one link's compressing (`decompress` false) or decompressing end, made at
  /// the link's first buffer of a cycle. nullptr (the default): the codec keeps none.
  [[nodiscard]] virtual std::unique_ptr<codec_link> link(const cargo& c, bool decompress);
  /// Compresses `n_items` packets (`layout.stride` apart) of `in` into `out`, writing at
  /// most `limit` bytes (plus `layout.overrun`); returns the compressed size, or 0 to
  /// decline (the buffer is then sent as it was). May modify `in`, including `slack`
  /// packets past the valid ones.
  [[nodiscard]] virtual std::size_t compress(const cargo& c, codec_link* link, std::size_t n_items,
                                             std::byte* in, std::size_t limit, std::byte* out) = 0;
  /// Restores `n_items` packets into `out` from the `n_bytes` compressed bytes of `in`
  /// (which it may modify). Called only with what compress() produced on the other end.
  virtual void decompress(const cargo& c, codec_link* link, std::size_t n_items,
                          std::size_t n_bytes, std::byte* in, std::byte* out) = 0;
};

/// The built-in codec (Maley & DeVinney 2019, sec. 3.6): squeezes out the bytes that are the same
/// in every packet of a buffer, sending them once. Stateless; declines a buffer of fewer than two
/// packets or whose compressed form would not be smaller. Byte-for-byte the format of
/// bale-compatible `convey_standard_codec` (conveyor_api/src/c/codec.cpp), which calls
/// the two functions below.
class standard_codec final : public codec {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "standard"; }
  [[nodiscard]] bool plan(const cargo& c, codec_layout& layout) override;
  [[nodiscard]] std::size_t compress(const cargo& c, codec_link* link, std::size_t n_items,
                                     std::byte* in, std::size_t limit, std::byte* out) override;
  void decompress(const cargo& c, codec_link* link, std::size_t n_items, std::size_t n_bytes,
                  std::byte* in, std::byte* out) override;
};

/// The standard codec's compression of `n_items` packets of `packet_bytes` each: a bitmap
/// of ceil(p/8) bytes (bit k set: byte k of a packet varies), the constant bytes once (from
/// the first packet), then each packet's varying bytes. Returns the compressed size, or 0
/// if n_items < 2, packet_bytes == 0, or the result would not be smaller or exceed `limit`.
[[nodiscard]] std::size_t squeeze_constant_bytes(std::size_t packet_bytes, std::size_t n_items,
                                                 const std::byte* in, std::size_t limit,
                                                 std::byte* out) noexcept;
/// Undoes squeeze_constant_bytes() into `n_items` packets at `out`.
void restore_constant_bytes(std::size_t packet_bytes, std::size_t n_items, const std::byte* in,
                            std::byte* out) noexcept;

}  // namespace convoy::aggregation
