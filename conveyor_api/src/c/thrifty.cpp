// THRIFTY tensor conveyors (seed 000 sec. 3.6, "Compression"): a transport decorator that
// runs the conveyor's codec on every buffer posted on a link to another node and undoes it
// on arrival, below the engine, which never sees compressed bytes.
//
// A compressed buffer keeps its 16-byte header (with bit k_compressed set in `flags` and
// `bytes` the compressed length), then {u32 original payload bytes, u32 packet bytes},
// then the codec's output. Packets are the engine's rigid records, tag + item, packed
// without padding (aggregation/packing.hpp), so cargo.packet_size = tag + item = stride.
// A buffer is sent as it was when the codec declines, when the gain is nil, or when the
// layout the codec asked for does not fit the buffer.
#include "thrifty.hpp"

#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/topology/machine.hpp>
#include <cstring>
#include <vector>

#include "facade.hpp"

namespace convoy::facade {
namespace {

namespace agg = convoy::aggregation;

constexpr std::uint32_t k_compressed = 1u << 31;
constexpr std::size_t k_prefix = 8;

class thrifty_transport final : public agg::transport, public thrifty_control {
 public:
  thrifty_transport(std::unique_ptr<agg::transport> inner,
                    std::shared_ptr<const router::route_plan> plan, std::vector<int> node_of_rank)
      : inner_(std::move(inner)), plan_(std::move(plan)), node_(std::move(node_of_rank)) {}

  ~thrifty_transport() override { end_cycle(); }

  // ---- thrifty_control ----
  void set_codec(const convey_codec_t* codec, void* arg) override {
    codec_ = codec;
    arg_ = arg;
  }
  void begin_cycle(std::size_t item_bytes) override {
    end_cycle();
    item_ = item_bytes;
    const int n_stages = plan_->n_stages();
    stage_.assign(static_cast<std::size_t>(n_stages), stage_codec{});
    if (!codec_) return;
    const std::size_t room = layout_.capacity_bytes - agg::header_bytes - k_prefix;
    for (int s = 0; s < n_stages; ++s) {
      stage_codec& sc = stage_[static_cast<std::size_t>(s)];
      const auto tag = static_cast<std::size_t>(plan_->tag_bytes(s));
      sc.cargo = convey_cargo_t{tag, item_, tag + item_, room / (tag + item_), arg_};
      sc.layout = convey_layout_t{8, tag + item_, 0, 0, 0};
      if (sc.cargo.max_items < 2 || !codec_->plan(&sc.cargo, &sc.layout)) continue;
      const std::size_t a = sc.layout.align;
      if (sc.layout.stride != tag + item_ || a < 8 || a > CONVEY_MAX_ALIGN || (a & (a - 1)) != 0 ||
          sc.layout.offset >= a || sc.layout.overrun > CONVEY_MAX_ALIGN)
        continue;
      sc.on = true;
    }
    // One compress link per off-node out-link, one decompress link per off-node in-link.
    out_link_data_.assign(layout_.out_links.size(), nullptr);
    in_link_data_.assign(layout_.in_links.size(), nullptr);
    if (codec_->link) {
      for (std::size_t i = 0; i < layout_.out_links.size(); ++i)
        if (off_out_[i] && stage_[static_cast<std::size_t>(layout_.out_links[i].stage)].on)
          out_link_data_[i] = codec_->link(
              &stage_[static_cast<std::size_t>(layout_.out_links[i].stage)].cargo, false);
      for (std::size_t i = 0; i < layout_.in_links.size(); ++i)
        if (off_in_[i] && stage_[static_cast<std::size_t>(layout_.in_links[i].stage)].on)
          in_link_data_[i] = codec_->link(
              &stage_[static_cast<std::size_t>(layout_.in_links[i].stage)].cargo, true);
    }
    linked_ = codec_;
  }
  void end_cycle() noexcept override {
    if (linked_ && linked_->unlink) {
      for (std::size_t i = 0; i < out_link_data_.size(); ++i)
        if (out_link_data_[i])
          linked_->unlink(&stage_[static_cast<std::size_t>(layout_.out_links[i].stage)].cargo,
                          out_link_data_[i]);
      for (std::size_t i = 0; i < in_link_data_.size(); ++i)
        if (in_link_data_[i])
          linked_->unlink(&stage_[static_cast<std::size_t>(layout_.in_links[i].stage)].cargo,
                          in_link_data_[i]);
    }
    out_link_data_.clear();
    in_link_data_.clear();
    linked_ = nullptr;
    for (auto& sc : stage_) sc.on = false;
  }
  std::uint64_t saved_bytes() const noexcept override { return saved_; }

  // ---- transport ----
  void open(const agg::link_layout& layout) override {
    inner_->open(layout);
    layout_ = layout;
    const int me_node = node_.at(static_cast<std::size_t>(layout.rank));
    for (const auto& l : layout.out_links)
      off_out_.push_back(node_.at(static_cast<std::size_t>(l.peer)) != me_node);
    for (const auto& l : layout.in_links)
      off_in_.push_back(node_.at(static_cast<std::size_t>(l.peer)) != me_node);
    scratch_in_.assign(layout.capacity_bytes + 2 * CONVEY_MAX_ALIGN, std::byte{0});
    scratch_out_.assign(layout.capacity_bytes + 2 * CONVEY_MAX_ALIGN, std::byte{0});
  }

  [[nodiscard]] std::byte* acquire(int out_link) noexcept override {
    return inner_->acquire(out_link);
  }

  void post(int out_link, std::byte* buffer, std::size_t bytes) override {
    const auto o = static_cast<std::size_t>(out_link);
    if (linked_ && off_out_[o] && bytes > agg::header_bytes) {
      const stage_codec& sc = stage_[static_cast<std::size_t>(layout_.out_links[o].stage)];
      const std::size_t payload = bytes - agg::header_bytes;
      const std::size_t n = payload / sc.cargo.packet_size;
      if (sc.on && n >= 2 && n * sc.cargo.packet_size == payload)
        bytes = squeeze(sc, out_link_data_[o], buffer, bytes, n);
    }
    inner_->post(out_link, buffer, bytes);
  }

  [[nodiscard]] bool poll(agg::received& out) override {
    if (!inner_->poll(out)) return false;
    agg::buffer_header h{};
    std::memcpy(&h, out.data, sizeof h);
    if (h.flags & k_compressed) expand(out, h);
    return true;
  }

  void release(const agg::received& r) override { inner_->release(r); }
  void progress() override { inner_->progress(); }
  [[nodiscard]] bool idle() const noexcept override { return inner_->idle(); }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override {
    return inner_->memory_bytes() + scratch_in_.size() + scratch_out_.size();
  }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override {
    return inner_->max_memory_bytes() + 2 * (layout_.capacity_bytes + 2 * CONVEY_MAX_ALIGN);
  }

 private:
  struct stage_codec {
    convey_cargo_t cargo{};
    convey_layout_t layout{};
    bool on = false;
  };

  static std::byte* aligned(std::vector<std::byte>& v, std::size_t align, std::size_t offset) {
    const auto p = reinterpret_cast<std::uintptr_t>(v.data());
    return v.data() + ((p + align - 1) / align * align - p) + offset;
  }

  std::size_t squeeze(const stage_codec& sc, void* link, std::byte* buffer, std::size_t bytes,
                      std::size_t n) {
    const std::size_t payload = bytes - agg::header_bytes;
    const std::size_t room = layout_.capacity_bytes - agg::header_bytes;
    // The codec may read and modify `slack` packets past the valid ones: work on a copy.
    if ((n + sc.layout.slack) * sc.layout.stride > room) return bytes;
    std::byte* in = aligned(scratch_in_, sc.layout.align, 0);
    std::memcpy(in, buffer + agg::header_bytes, payload);
    std::byte* z = aligned(scratch_out_, sc.layout.align, sc.layout.offset);
    const std::size_t limit = room - k_prefix - sc.layout.overrun;
    if (payload <= k_prefix + 1) return bytes;
    const std::size_t want = std::min(limit, payload - k_prefix - 1);
    const std::size_t got = codec_->compress(&sc.cargo, link, n, in, want, z);
    if (got == 0 || got > want) return bytes;  // declined: the buffer goes as it was
    const std::uint32_t prefix[2] = {static_cast<std::uint32_t>(payload),
                                     static_cast<std::uint32_t>(sc.cargo.packet_size)};
    std::memcpy(buffer + agg::header_bytes, prefix, k_prefix);
    std::memcpy(buffer + agg::header_bytes + k_prefix, z, got);
    agg::buffer_header h{};
    std::memcpy(&h, buffer, sizeof h);
    const std::size_t sent = agg::header_bytes + k_prefix + got;
    h.bytes = static_cast<std::uint32_t>(sent);
    h.flags |= k_compressed;
    std::memcpy(buffer, &h, sizeof h);
    saved_ += bytes - sent;
    return sent;
  }

  void expand(agg::received& r, agg::buffer_header& h) {
    std::uint32_t prefix[2];
    std::memcpy(prefix, r.data + agg::header_bytes, k_prefix);
    const std::size_t payload = prefix[0], packet = prefix[1];
    const auto i = static_cast<std::size_t>(r.in_link);
    const int stage = layout_.in_links[i].stage;
    stage_codec sc = stage < static_cast<int>(stage_.size())
                         ? stage_[static_cast<std::size_t>(stage)]
                         : stage_codec{};
    void* link = i < in_link_data_.size() ? in_link_data_[i] : nullptr;
    if (sc.cargo.packet_size != packet) {
      // From a cycle the sender began before us with another item size (T8): the codec's
      // per-cycle link state does not apply; decode with a cargo built from the prefix.
      const auto tag = static_cast<std::size_t>(plan_->tag_bytes(stage));
      sc.cargo = convey_cargo_t{tag, packet - tag, packet, payload / packet, arg_};
      sc.layout = convey_layout_t{CONVEY_MAX_ALIGN, packet, 0, 0, 0};
      link = nullptr;
    }
    const std::size_t zbytes = h.bytes - agg::header_bytes - k_prefix;
    std::byte* z = aligned(scratch_in_, sc.layout.align ? sc.layout.align : 8, sc.layout.offset);
    std::memcpy(z, r.data + agg::header_bytes + k_prefix, zbytes);
    std::byte* out = aligned(scratch_out_, CONVEY_MAX_ALIGN, 0);
    const codec_ptr codec = codec_ ? codec_ : &convey_standard_codec;
    codec->decompress(&sc.cargo, link, payload / packet, zbytes, z, out);
    std::memcpy(r.data + agg::header_bytes, out, payload);
    h.bytes = static_cast<std::uint32_t>(agg::header_bytes + payload);
    h.flags &= ~k_compressed;
    std::memcpy(r.data, &h, sizeof h);
    r.bytes = h.bytes;
  }

  using codec_ptr = const convey_codec_t*;
  std::unique_ptr<agg::transport> inner_;
  std::shared_ptr<const router::route_plan> plan_;
  std::vector<int> node_;
  agg::link_layout layout_;
  std::vector<char> off_out_, off_in_;
  std::vector<stage_codec> stage_;
  std::vector<void*> out_link_data_, in_link_data_;
  std::vector<std::byte> scratch_in_, scratch_out_;
  const convey_codec_t* codec_ = &convey_standard_codec;
  const convey_codec_t* linked_ = nullptr;
  void* arg_ = nullptr;
  std::size_t item_ = 0;
  std::uint64_t saved_ = 0;
};

}  // namespace

transport_factory thrifty_transport_factory(std::shared_ptr<aggregation::buffer_source> memory,
                                            std::function<void(thrifty_control&)> built) {
  return
      [memory = std::move(memory), built = std::move(built)](
          MPI_Comm comm,
          const std::shared_ptr<const router::route_plan>& p) -> std::unique_ptr<agg::transport> {
        std::vector<int> node_of_rank;
        for (const auto& r : topology::discover(comm).ranks) node_of_rank.push_back(r.node);
        auto t = std::make_unique<thrifty_transport>(
            std::make_unique<agg::mpi_transport>(comm, memory), p, std::move(node_of_rank));
        built(*t);
        return t;
      };
}

}  // namespace convoy::facade
