// Simple conveyors (seed 000 sec. 4.1): bulk synchronous, one outgoing and one incoming
// buffer per PE, exchanged with MPI_Alltoallv once every PE has pulled everything.
//
// advance is collective (seed 000 sec. 3.3, the "strange clause"): every call while
// WORKING or ENDGAME does one MPI_Allreduce of four flags, and all PEs take the same
// decision from its result: exchange (all incoming drained and some PE has a full buffer,
// or is done or steady with items), or finish (every PE done and no outgoing items
// anywhere), after which advance is local. Compression (THRIFTY) runs the codec on the
// buffers whose destination is on another node.
#include <climits>
#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <convoy/topology/machine.hpp>
#include <cstring>
#include <new>
#include <vector>

#include "facade.hpp"

namespace convoy::facade {
namespace {

constexpr std::size_t k_region_align = 64;
constexpr std::size_t k_codec_pad = 512;  // per-buffer room for a codec's slack/overrun

std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

class simple_conveyor final : public ::conveyor {
 public:
  simple_conveyor(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t opts)
      : ::conveyor("simple", opts), alloc_(alloc), capacity_(capacity) {
    if (capacity == 0) throw error("capacity must be positive");
    const auto P = static_cast<std::size_t>(n_pes);
    region_ = round_up(capacity, k_region_align) + ((opts & convey_opt_COMPRESS) ? k_codec_pad : 0);
    if (P * region_ > static_cast<std::size_t>(INT_MAX))
      throw error("capacity " + std::to_string(capacity) + " x " + std::to_string(P) +
                  " PEs exceeds the 2 GiB that one MPI_Alltoallv can address");
    order = 1;
    n_local = 1;
    buffer_bytes = capacity;
    if (opts & convey_opt_PROGRESS) features |= convey_STEADY;
    CONVOY_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    out_count_.assign(P, 0);
    in_count_.assign(P, 0);
    send_pair_.assign(2 * P, 0);
    recv_pair_.assign(2 * P, 0);
    send_bytes_.assign(P, 0);
    recv_bytes_.assign(P, 0);
    displ_.assign(P, 0);
    for (std::size_t d = 0; d < P; ++d) displ_[d] = static_cast<int>(d * region_);
    if (opts & convey_opt_COMPRESS) {
      features |= convey_THRIFTY;
      off_node_.assign(P, 0);
      const topology::machine m = topology::discover(comm_);
      for (std::size_t d = 0; d < P; ++d)
        off_node_[d] = m.ranks[d].node != m.ranks[static_cast<std::size_t>(my_pe)].node;
      codec_ = &convey_standard_codec;
    }
    if (!(opts & convey_opt_DYNAMIC)) allocate();
  }

  ~simple_conveyor() override {
    unlink_codec();
    release();
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  int begin_(std::size_t bytes, std::size_t) override {
    const std::size_t cap_items = capacity_ / bytes;
    if (cap_items == 0) return convey_error_OFLO;
    if (!out_) {
      allocate();
      if (!out_) return convey_error_ALLOC;
    }
    item_ = bytes;
    cap_items_ = cap_items;
    std::fill(out_count_.begin(), out_count_.end(), 0);
    std::fill(in_count_.begin(), in_count_.end(), 0);
    out_total_ = 0;
    any_full_ = false;
    pending_in_ = 0;
    cur_src_ = 0;
    cur_idx_ = 0;
    can_unpull_ = false;
    done_ = false;
    finished_ = false;
    std::memcpy(comm_mark_, comm_life_, sizeof comm_life_);
    plan_codec();
    return convey_OK;
  }

  int push_(const void* item, std::int64_t pe) noexcept override {
    int& n = out_count_[static_cast<std::size_t>(pe)];
    if (static_cast<std::size_t>(n) == cap_items_) return convey_FAIL;
    aggregation::copy_item(
        out_ + static_cast<std::size_t>(pe) * region_ + static_cast<std::size_t>(n) * item_, item,
        item_);
    ++out_total_;
    if (static_cast<std::size_t>(++n) == cap_items_) any_full_ = true;
    return convey_OK;
  }

  const void* pull_(std::int64_t* from, int* rc, bool) noexcept override {
    const auto P = static_cast<std::size_t>(n_pes);
    while (cur_src_ < P && cur_idx_ == static_cast<std::size_t>(in_count_[cur_src_])) {
      ++cur_src_;
      cur_idx_ = 0;
    }
    if (cur_src_ == P) {
      *rc = convey_FAIL;
      return nullptr;
    }
    // Sources in increasing order, each buffer front to back: FIFO per pair (sec. 4.1).
    const std::byte* p = in_ + cur_src_ * region_ + cur_idx_ * item_;
    *from = static_cast<std::int64_t>(cur_src_);
    ++cur_idx_;
    --pending_in_;
    can_unpull_ = true;
    return p;
  }

  int unpull_() noexcept override {
    if (!can_unpull_) return convey_FAIL;
    --cur_idx_;
    ++pending_in_;
    can_unpull_ = false;
    return convey_OK;
  }

  int advance_(bool done) override {
    can_unpull_ = false;
    if (finished_) return pending_in_ ? convey_NEAR : convey_DONE;
    done_ = done_ || done;
    const bool need_send =
        any_full_ || (out_total_ > 0 && (done_ || (options & convey_opt_PROGRESS)));
    int flags[4] = {pending_in_ > 0, !done_, need_send, out_total_ > 0};
    int all[4] = {0, 0, 0, 0};
    CONVOY_MPI_CHECK(MPI_Allreduce(flags, all, 4, MPI_INT, MPI_MAX, comm_));
    ++comm_life_[1];
    const bool all_drained = all[0] == 0, all_done = all[1] == 0;
    if (all_done && all[3] == 0) {
      finished_ = true;
      return pending_in_ ? convey_NEAR : convey_DONE;
    }
    if (all_drained && all[2]) {
      exchange();
      if (all_done) {  // every outgoing item was just sent: nothing more can arrive
        finished_ = true;
        return pending_in_ ? convey_NEAR : convey_DONE;
      }
    }
    return convey_OK;
  }

  int reset_() override {
    unlink_codec();
    if (options & convey_opt_DYNAMIC) release();
    return convey_OK;
  }

  int set_codec_(const convey_codec_t* codec, void* arg) override {
    codec_ = codec;
    codec_arg_ = arg;
    return convey_OK;
  }

  std::int64_t comm_statistic_(int which, bool cumulative) const noexcept override {
    const int k = which == convey_COMMS ? 0 : which == convey_SYNCS ? 1 : 2;
    const std::uint64_t v = cumulative ? comm_life_[k] : comm_life_[k] - comm_mark_[k];
    return static_cast<std::int64_t>(v);
  }
  std::size_t memory_bytes_() const noexcept override { return out_ ? footprint() : 0; }
  std::size_t max_memory_bytes_() const noexcept override { return footprint(); }

 private:
  std::size_t footprint() const noexcept { return 2 * static_cast<std::size_t>(n_pes) * region_; }

  // Collective when a client allocator is set; LIFO with release().
  void allocate() {
    const std::size_t bytes = static_cast<std::size_t>(n_pes) * region_;
    out_ = static_cast<std::byte*>(alloc_.grab(bytes, __FILE__, __LINE__));
    in_ = static_cast<std::byte*>(alloc_.grab(bytes, __FILE__, __LINE__));
    if (!out_ || !in_) {
      release();
      throw std::bad_alloc();
    }
  }
  void release() noexcept {
    alloc_.release(in_);
    alloc_.release(out_);
    in_ = out_ = nullptr;
  }

  void plan_codec() {
    codec_on_ = false;
    if (!(features & convey_THRIFTY) || !codec_) return;
    cargo_ = convey_cargo_t{0, item_, item_, cap_items_, codec_arg_};
    layout_ = convey_layout_t{8, item_, 0, 0, 0};
    if (!codec_->plan(&cargo_, &layout_)) return;
    const std::size_t a = layout_.align;
    if (layout_.stride != item_ || a < 8 || a > CONVEY_MAX_ALIGN || (a & (a - 1)) != 0 ||
        layout_.offset >= a ||
        layout_.slack * layout_.stride + layout_.overrun > region_ - cap_items_ * item_) {
      if (options & convey_opt_ALERT)
        print_once(std::string("codec ") + (codec_->name ? codec_->name : "?") +
                   ": its layout does not fit simple buffers; sending uncompressed");
      return;
    }
    zscratch_.assign(region_ + CONVEY_MAX_ALIGN + layout_.offset + layout_.overrun, std::byte{0});
    const auto P = static_cast<std::size_t>(n_pes);
    links_.assign(2 * P, nullptr);
    if (codec_->link)
      for (std::size_t d = 0; d < P; ++d)
        if (off_node_[d]) {
          links_[2 * d] = codec_->link(&cargo_, false);
          links_[2 * d + 1] = codec_->link(&cargo_, true);
        }
    codec_on_ = true;
  }
  void unlink_codec() noexcept {
    if (codec_on_ && codec_ && codec_->unlink)
      for (void* l : links_)
        if (l) codec_->unlink(&cargo_, l);
    links_.clear();
    codec_on_ = false;
  }
  std::byte* zspot() noexcept {
    const auto base = reinterpret_cast<std::uintptr_t>(zscratch_.data());
    const std::uintptr_t pad = (base + layout_.align - 1) / layout_.align * layout_.align - base;
    return zscratch_.data() + pad + layout_.offset;
  }

  void exchange() {
    const auto P = static_cast<std::size_t>(n_pes);
    const auto me = static_cast<std::size_t>(my_pe);
    for (std::size_t d = 0; d < P; ++d) {
      const auto raw = static_cast<std::size_t>(out_count_[d]) * item_;
      std::size_t bytes = raw;
      if (codec_on_ && off_node_[d] && out_count_[d] > 0) {
        std::byte* z = zspot();
        const std::size_t n =
            codec_->compress(&cargo_, links_[2 * d], static_cast<std::size_t>(out_count_[d]),
                             out_ + d * region_, raw, z);
        if (n > 0 && n < raw) {  // declined or no gain: the buffer goes as it was
          std::memcpy(out_ + d * region_, z, n);
          bytes = n;
        }
      }
      send_pair_[2 * d] = out_count_[d];
      send_pair_[2 * d + 1] = static_cast<int>(bytes);
      send_bytes_[d] = static_cast<int>(bytes);
      if (d != me && out_count_[d] > 0) {
        ++comm_life_[0];
        comm_life_[2] += bytes;
      }
    }
    CONVOY_MPI_CHECK(
        MPI_Alltoall(send_pair_.data(), 2, MPI_INT, recv_pair_.data(), 2, MPI_INT, comm_));
    for (std::size_t s = 0; s < P; ++s) recv_bytes_[s] = recv_pair_[2 * s + 1];
    CONVOY_MPI_CHECK(MPI_Alltoallv(out_, send_bytes_.data(), displ_.data(), MPI_BYTE, in_,
                                   recv_bytes_.data(), displ_.data(), MPI_BYTE, comm_));
    comm_life_[1] += 2;
    pending_in_ = 0;
    for (std::size_t s = 0; s < P; ++s) {
      in_count_[s] = recv_pair_[2 * s];
      const auto n = static_cast<std::size_t>(in_count_[s]);
      pending_in_ += n;
      const auto got = static_cast<std::size_t>(recv_bytes_[s]);
      if (got != n * item_) {
        if (!codec_on_) throw error("simple conveyor: compressed buffer but no codec");
        std::byte* z = zspot();
        std::memcpy(z, in_ + s * region_, got);
        codec_->decompress(&cargo_, links_[2 * s + 1], n, got, z, in_ + s * region_);
      }
    }
    std::fill(out_count_.begin(), out_count_.end(), 0);
    out_total_ = 0;
    any_full_ = false;
    cur_src_ = 0;
    cur_idx_ = 0;
  }

  allocator alloc_;
  std::size_t capacity_;
  std::size_t region_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::byte* out_ = nullptr;
  std::byte* in_ = nullptr;
  std::size_t item_ = 0, cap_items_ = 0;
  std::vector<int> out_count_, in_count_, send_pair_, recv_pair_, send_bytes_, recv_bytes_, displ_;
  std::vector<char> off_node_;
  std::size_t out_total_ = 0, pending_in_ = 0, cur_src_ = 0, cur_idx_ = 0;
  bool any_full_ = false, can_unpull_ = false, done_ = false, finished_ = false;
  std::uint64_t comm_life_[3] = {0, 0, 0};  // COMMS, SYNCS, BYTES
  std::uint64_t comm_mark_[3] = {0, 0, 0};
  const convey_codec_t* codec_ = nullptr;
  void* codec_arg_ = nullptr;
  bool codec_on_ = false;
  convey_cargo_t cargo_{};
  convey_layout_t layout_{};
  std::vector<std::byte> zscratch_;
  std::vector<void*> links_;
};

}  // namespace

::conveyor* make_simple(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t options) {
  return new simple_conveyor(capacity, alloc, options);
}

}  // namespace convoy::facade
