#pragma once
/// @file
/// A transport decorator that compresses buffers on chosen links (those leaving the node)
/// and restores them on arrival, below the engine, which never sees compressed bytes
/// (Maley & DeVinney 2019, sec. 3.6, "Compression"; aggregation/README.md, AGG-43..47).
#include <convoy/aggregation/codec.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace convoy::aggregation {

/// Header flag of a compressed buffer (set and cleared by compressing_transport only).
inline constexpr std::uint32_t flag_compressed = 1u << 31;
/// Bytes after the header of a compressed buffer: {u32 payload bytes, u32 packet bytes}.
inline constexpr std::size_t compressed_prefix_bytes = 8;

/// Wraps any transport (MPI, shared memory, hybrid, simulated). On an out-link that
/// `compress_link` chose, post() runs the codec over the buffer's packets (rigid records,
/// tag + item, aggregation/packing.hpp) and sends the header, the prefix and the codec's
/// output instead, when that is smaller; poll() undoes it, so the engine above sees the
/// buffer as it was posted. A buffer goes as it is when the codec declines it, when the
/// gain would be nil, when the cycle's items are elastic, or when the codec's plan does
/// not fit convoy's packing (stride other than tag + item, alignment outside 8..64, slack
/// or overrun beyond a buffer).
///
/// A compressed buffer is restored into one of the decorator's own buffers (capacity bytes,
/// 64-byte aligned), never in place: the inner transport's buffer may hold no more than the
/// bytes sent (the rma transport's records, AGG-129). poll() hands that buffer out, and
/// release() gives the inner transport back the buffer it handed out.
///
/// The codec is planned per cycle (the engine's epoch in the buffer header) and stage, on
/// both ends alike from the same cargo; per-link codec state is made at a link's first
/// compressed buffer of a cycle and dropped at the next cycle. The receiver reads the item
/// size from the prefix, so a buffer of a cycle this rank has not begun yet decodes too.
class compressing_transport final : public transport {
 public:
  /// `compress_link(rank, peer)`: whether buffers this rank sends to `peer` are compressed
  /// (typically: peer on another node). Evaluated at open(). Empty: every link.
  using link_predicate = std::function<bool(int rank, int peer)>;
  /// The rigid item size of the engine's current cycle, or 0 when its items are elastic
  /// (then nothing is compressed). Called at the first post of each cycle.
  using item_size_source = std::function<std::size_t()>;

  /// `stage_tag_bytes[s]`: the routing tag bytes of stage s (route_plan::tag_bytes).
  /// `codec` may be null (nothing is compressed until set_codec()). Throws convoy::error if
  /// `inner` is null.
  compressing_transport(std::unique_ptr<transport> inner, std::shared_ptr<codec> codec,
                        std::vector<int> stage_tag_bytes, link_predicate compress_link,
                        item_size_source item_bytes);
  ~compressing_transport() override;

  /// The codec from the next cycle on (null: compression off). Every rank must use the same
  /// codec: a compressed buffer that arrives while this rank has none throws from poll().
  void set_codec(std::shared_ptr<codec> c);
  [[nodiscard]] const std::shared_ptr<codec>& current_codec() const noexcept { return codec_; }
  /// Where the cycle's item size comes from from now on (e.g. the engine built over this
  /// transport, which does not exist yet when the transport is made).
  void set_item_size_source(item_size_source item_bytes) { item_bytes_ = std::move(item_bytes); }

  /// Opens the inner transport, then decides which links compress. Throws convoy::error if
  /// a stage has no entry in stage_tag_bytes.
  void open(const link_layout& layout) override;
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override {
    return inner_->acquire(out_link);
  }
  /// Compresses (chosen links), then posts to the inner transport.
  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  /// Polls the inner transport and restores a compressed buffer in place. Throws
  /// convoy::error on a malformed compressed buffer or when this rank has no codec.
  [[nodiscard]] bool poll(received& out) override;
  /// Releases `r`; for a restored buffer, the inner buffer it came from (and the restored
  /// buffer becomes free for the next one).
  void release(const received& r) override;
  void progress() override { inner_->progress(); }
  [[nodiscard]] bool idle() const noexcept override { return inner_->idle(); }
  /// The inner transport's memory plus the two scratch buffers (allocated at the first
  /// compressed or restored buffer, each 2 x capacity + 128 bytes) and the restored buffers
  /// (at most n_buffers per in-link, capacity bytes each, made as buffers are held).
  [[nodiscard]] std::size_t memory_bytes() const noexcept override;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override;

  /// Counters over the transport's lifetime.
  struct statistics {
    std::uint64_t considered = 0;   ///< buffers with packets posted on compressing links
    std::uint64_t compressed = 0;   ///< of those, sent compressed
    std::uint64_t declined = 0;     ///< of those, sent as they were (codec declined, no gain)
    std::uint64_t saved_bytes = 0;  ///< bytes not sent thanks to compression
    std::uint64_t restored = 0;     ///< compressed buffers received and restored
  };
  [[nodiscard]] const statistics& stats() const noexcept { return stats_; }
  [[nodiscard]] std::uint64_t saved_bytes() const noexcept override { return stats_.saved_bytes; }
  /// Links (out + in) that compress.
  [[nodiscard]] std::size_t n_compressing_links() const noexcept;
  [[nodiscard]] transport& inner() noexcept { return *inner_; }

 private:
  struct stage_plan {
    cargo c;
    codec_layout layout;
    bool on = false;
  };
  struct in_state {
    std::uint32_t epoch = 0;
    std::size_t packet = 0;
    bool valid = false;
    std::unique_ptr<codec_link> link;
  };

  [[nodiscard]] stage_plan plan_for(int stage, std::size_t item_bytes) const;
  void replan(std::uint32_t epoch);
  std::size_t squeeze(int out_link, std::byte* buffer, std::size_t bytes);
  void restore(received& r, buffer_header& h);
  void ensure_scratch();

  std::unique_ptr<transport> inner_;
  std::shared_ptr<codec> codec_;
  std::vector<int> stage_tag_bytes_;
  link_predicate compress_link_;
  item_size_source item_bytes_;
  link_layout layout_;
  std::vector<bool> out_on_, in_on_;
  // Sending: the plan of the cycle `send_epoch_`, one per stage; per out-link codec state.
  bool planned_ = false;
  std::uint32_t send_epoch_ = 0;
  std::vector<stage_plan> send_plans_;
  std::vector<std::unique_ptr<codec_link>> out_links_;
  std::vector<bool> out_linked_;
  // Receiving: the last plan per stage (keyed by packet size), per in-link codec state.
  std::vector<stage_plan> recv_plans_;
  std::vector<in_state> in_links_;
  std::vector<std::byte> scratch_in_, scratch_out_;
  // Restored buffers: held by the engine (with the inner buffer each came from), and free.
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept;
  };
  using block = std::unique_ptr<std::byte, aligned_delete>;
  struct held_block {
    block mem;
    received inner;
  };
  std::vector<held_block> held_;
  std::vector<block> spare_;
  statistics stats_;
};

}  // namespace convoy::aggregation
