// Compression below the engine (Maley & DeVinney 2019, sec. 3.6). Behaviour reference: the C
// façade's THRIFTY transport; here for any inner transport and any codec (aggregation/README.md,
// AGG-43..47).
//
// A compressed buffer: the 16-byte header (flag_compressed set, `bytes` the compressed
// length), {u32 original payload bytes, u32 packet bytes}, then the codec's output.
#include <algorithm>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace convoy::aggregation {

namespace {

std::byte* aligned(std::vector<std::byte>& v, std::size_t align, std::size_t offset) noexcept {
  const auto p = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t up = (p + align - 1) / align * align;
  return v.data() + (up - p) + offset;
}

constexpr std::align_val_t k_block_align{64};

}  // namespace

void compressing_transport::aligned_delete::operator()(std::byte* p) const noexcept {
  ::operator delete(p, k_block_align);
}

compressing_transport::compressing_transport(std::unique_ptr<transport> inner,
                                             std::shared_ptr<codec> c,
                                             std::vector<int> stage_tag_bytes,
                                             link_predicate compress_link,
                                             item_size_source item_bytes)
    : inner_(std::move(inner)),
      codec_(std::move(c)),
      stage_tag_bytes_(std::move(stage_tag_bytes)),
      compress_link_(std::move(compress_link)),
      item_bytes_(std::move(item_bytes)) {
  if (!inner_) throw error("compressing_transport: null inner transport");
}

compressing_transport::~compressing_transport() = default;

void compressing_transport::set_codec(std::shared_ptr<codec> c) {
  // Codec state belongs to the codec that made it: drop it first.
  for (auto& l : out_links_) l.reset();
  out_linked_.assign(out_linked_.size(), false);
  for (auto& s : in_links_) s = in_state{};
  recv_plans_.assign(recv_plans_.size(), stage_plan{});
  planned_ = false;
  codec_ = std::move(c);
}

void compressing_transport::open(const link_layout& layout) {
  for (const auto* links : {&layout.out_links, &layout.in_links})
    for (const link& l : *links)
      if (l.stage < 0 || static_cast<std::size_t>(l.stage) >= stage_tag_bytes_.size())
        throw error("compressing_transport: stage " + std::to_string(l.stage) +
                    " has no tag size (" + std::to_string(stage_tag_bytes_.size()) +
                    " stages given)");
  inner_->open(layout);
  layout_ = layout;
  auto pick = [&](const std::vector<link>& links, std::vector<bool>& on) {
    on.assign(links.size(), false);
    for (std::size_t i = 0; i < links.size(); ++i)
      on[i] = !compress_link_ || compress_link_(layout.rank, links[i].peer);
  };
  pick(layout.out_links, out_on_);
  pick(layout.in_links, in_on_);
  out_links_.resize(layout.out_links.size());
  out_linked_.assign(layout.out_links.size(), false);
  in_links_.resize(layout.in_links.size());
  recv_plans_.assign(stage_tag_bytes_.size(), stage_plan{});
}

std::size_t compressing_transport::n_compressing_links() const noexcept {
  std::size_t n = 0;
  for (bool b : out_on_) n += b ? 1 : 0;
  for (bool b : in_on_) n += b ? 1 : 0;
  return n;
}

// The plan of `stage` for items of `item_bytes`; off unless the codec's layout fits
// convoy's packing and the scratch buffers (2 x capacity + 128 bytes each).
compressing_transport::stage_plan compressing_transport::plan_for(int stage,
                                                                  std::size_t item_bytes) const {
  stage_plan sp;
  const auto tag = static_cast<std::size_t>(stage_tag_bytes_[static_cast<std::size_t>(stage)]);
  const std::size_t packet = tag + item_bytes;
  const std::size_t cap = layout_.buffer_bytes;
  if (!codec_ || item_bytes == 0 || cap <= header_bytes + compressed_prefix_bytes) return sp;
  sp.c = cargo{tag, item_bytes, packet, (cap - header_bytes - compressed_prefix_bytes) / packet};
  sp.layout = codec_layout{8, packet, 0, 0, 0};
  if (sp.c.max_items == 0 || !codec_->plan(sp.c, sp.layout)) return sp;
  const codec_layout& l = sp.layout;
  sp.on = usable_layout(l, packet) && l.slack <= cap / packet && l.overrun <= cap;
  return sp;
}

void compressing_transport::replan(std::uint32_t epoch) {
  for (auto& l : out_links_) l.reset();  // the last cycle's codec state goes
  out_linked_.assign(out_linked_.size(), false);
  const std::size_t item = item_bytes_ ? item_bytes_() : 0;
  send_plans_.assign(stage_tag_bytes_.size(), stage_plan{});
  for (std::size_t s = 0; s < send_plans_.size(); ++s)
    send_plans_[s] = plan_for(static_cast<int>(s), item);
  send_epoch_ = epoch;
  planned_ = true;
}

void compressing_transport::ensure_scratch() {
  if (!scratch_in_.empty()) return;
  const std::size_t bytes = 2 * layout_.buffer_bytes + 2 * max_codec_align;
  scratch_in_.assign(bytes, std::byte{0});
  scratch_out_.assign(bytes, std::byte{0});
}

void compressing_transport::post(int out_link, std::byte* buffer, std::size_t bytes) {
  const auto o = static_cast<std::size_t>(out_link);
  if (codec_ && o < out_on_.size() && out_on_[o] && bytes > header_bytes) {
    buffer_header h{};
    std::memcpy(&h, buffer, sizeof h);
    if (!planned_ || h.epoch != send_epoch_) replan(h.epoch);
    bytes = squeeze(out_link, buffer, bytes);
  }
  inner_->post(out_link, buffer, bytes);
}

std::size_t compressing_transport::squeeze(int out_link, std::byte* buffer, std::size_t bytes) {
  const auto o = static_cast<std::size_t>(out_link);
  const stage_plan& sp = send_plans_[static_cast<std::size_t>(layout_.out_links[o].stage)];
  const std::size_t payload = bytes - header_bytes;
  if (!sp.on || payload % sp.c.packet_bytes != 0) return bytes;
  const std::size_t n = payload / sp.c.packet_bytes;
  ++stats_.considered;
  if (payload <= compressed_prefix_bytes + 1) {
    ++stats_.declined;
    return bytes;
  }
  ensure_scratch();
  // The codec may read and modify `slack` packets past the valid ones: work on a copy.
  std::byte* in = aligned(scratch_in_, sp.layout.align, 0);
  std::memcpy(in, buffer + header_bytes, payload);
  std::byte* z = aligned(scratch_out_, sp.layout.align, sp.layout.offset);
  if (!out_linked_[o]) {
    out_links_[o] = codec_->link(sp.c, false);
    out_linked_[o] = true;
  }
  const std::size_t want = payload - compressed_prefix_bytes - 1;  // must save a byte
  const std::size_t got = codec_->compress(sp.c, out_links_[o].get(), n, in, want, z);
  if (got == 0 || got > want) {
    ++stats_.declined;
    return bytes;
  }
  const std::uint32_t prefix[2] = {static_cast<std::uint32_t>(payload),
                                   static_cast<std::uint32_t>(sp.c.packet_bytes)};
  std::memcpy(buffer + header_bytes, prefix, compressed_prefix_bytes);
  std::memcpy(buffer + header_bytes + compressed_prefix_bytes, z, got);
  buffer_header h{};
  std::memcpy(&h, buffer, sizeof h);
  const std::size_t sent = header_bytes + compressed_prefix_bytes + got;
  h.bytes = static_cast<std::uint32_t>(sent);
  h.flags |= flag_compressed;
  std::memcpy(buffer, &h, sizeof h);
  ++stats_.compressed;
  stats_.saved_bytes += bytes - sent;
  return sent;
}

bool compressing_transport::poll(received& out) {
  if (!inner_->poll(out)) return false;
  if (out.bytes >= header_bytes) {
    buffer_header h{};
    std::memcpy(&h, out.data, sizeof h);
    if (h.flags & flag_compressed) restore(out, h);
  }
  return true;
}

void compressing_transport::restore(received& r, buffer_header& h) {
  const auto i = static_cast<std::size_t>(r.in_link);
  const int stage = layout_.in_links.at(i).stage;
  const auto tag = static_cast<std::size_t>(stage_tag_bytes_[static_cast<std::size_t>(stage)]);
  std::uint32_t prefix[2] = {0, 0};
  if (r.bytes < header_bytes + compressed_prefix_bytes || h.bytes != r.bytes)
    throw error("compressing_transport: truncated compressed buffer");
  std::memcpy(prefix, r.data + header_bytes, compressed_prefix_bytes);
  const std::size_t payload = prefix[0], packet = prefix[1];
  if (packet <= tag || payload % packet != 0 || payload > layout_.buffer_bytes - header_bytes)
    throw error("compressing_transport: malformed compressed buffer (payload " +
                std::to_string(payload) + ", packet " + std::to_string(packet) + ")");
  if (!codec_)
    throw error("compressing_transport: a compressed buffer arrived but this rank has no codec");
  stage_plan& sp = recv_plans_[static_cast<std::size_t>(stage)];
  if (!sp.on || sp.c.packet_bytes != packet) sp = plan_for(stage, packet - tag);
  if (!sp.on)
    throw error(std::string("compressing_transport: codec ") + codec_->name() +
                " does not plan a stage its peer compressed");
  in_state& st = in_links_[i];
  if (!st.valid || st.epoch != h.epoch || st.packet != packet) {
    st.link.reset();  // the last cycle's state goes before the new one is made
    st.link = codec_->link(sp.c, true);
    st.epoch = h.epoch;
    st.packet = packet;
    st.valid = true;
  }
  ensure_scratch();
  const std::size_t zbytes = r.bytes - header_bytes - compressed_prefix_bytes;
  std::byte* z = aligned(scratch_in_, sp.layout.align, sp.layout.offset);
  std::memcpy(z, r.data + header_bytes + compressed_prefix_bytes, zbytes);
  std::byte* o = aligned(scratch_out_, sp.layout.align, 0);
  codec_->decompress(sp.c, st.link.get(), payload / packet, zbytes, z, o);
  // AGG-129: into a buffer of our own; the inner one may end where the compressed bytes do.
  block mem;
  if (spare_.empty()) {
    mem.reset(static_cast<std::byte*>(::operator new(layout_.buffer_bytes, k_block_align)));
  } else {
    mem = std::move(spare_.back());
    spare_.pop_back();
  }
  std::byte* d = mem.get();
  std::memcpy(d + header_bytes, o, payload);
  h.bytes = static_cast<std::uint32_t>(header_bytes + payload);
  h.flags &= ~flag_compressed;
  std::memcpy(d, &h, sizeof h);
  held_.push_back(held_block{std::move(mem), r});
  r.data = d;
  r.bytes = h.bytes;
  ++stats_.restored;
}

void compressing_transport::release(const received& r) {
  // Few are held (n_buffers per in-link at most), and mostly released oldest first.
  const auto it = std::find_if(held_.begin(), held_.end(),
                               [&](const held_block& b) { return b.mem.get() == r.data; });
  if (it == held_.end()) {
    inner_->release(r);
    return;
  }
  const received inner = it->inner;
  spare_.push_back(std::move(it->mem));
  held_.erase(it);
  inner_->release(inner);
}

std::size_t compressing_transport::memory_bytes() const noexcept {
  return inner_->memory_bytes() + scratch_in_.size() + scratch_out_.size() +
         (held_.size() + spare_.size()) * layout_.buffer_bytes;
}

std::size_t compressing_transport::max_memory_bytes() const noexcept {
  const std::size_t held = layout_.in_links.size() * static_cast<std::size_t>(layout_.n_buffers);
  return inner_->max_memory_bytes() + 2 * (2 * layout_.buffer_bytes + 2 * max_codec_align) +
         held * layout_.buffer_bytes;
}

}  // namespace convoy::aggregation
