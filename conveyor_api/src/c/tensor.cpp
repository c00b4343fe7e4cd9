// Engine-backed conveyors: tensor (seed 000 sec. 4.3), etensor with monster items
// (sec. 4.4, 4.4.1), twohop and mesh, all over convoy::termination::engine; plus the
// choice made by the generic constructors (convey_new, convey_new_elastic).
//
// Elastic wire format: each engine item is the client's bytes followed by one kind byte
// (0: a small item; 1: a monster ticket). A ticket's payload is {u64 size, u64 seq}; the
// monster's bytes go by MPI_Isend on the conveyor's own duplicated communicator, in
// chunks of at most 2^30 bytes (so items above 2^31 bytes work), and the receiver takes
// them with MPI_Recv when it pulls the ticket. Tickets ride the engine, so monsters stay
// FIFO with small items (seed 000 sec. 4.4.1). Elastic engines are always steady: a
// ticket must reach its destination even if its buffer never fills, otherwise the next
// monster push could wait forever (the "urgent buffer" of sec. 4.4.1).
//
// Memory (seed 000 sec. 4.6): with a client allocator the engine's link buffers that go
// through MPI come from it, one collective grab per engine (aggregation/README.md, T11);
// on-node shared-memory rings stay in their MPI window. With convey_opt_DYNAMIC the
// engine, and so all its link buffers, exists only from convey_begin to convey_reset
// (the monster buffers of an etensor too); lifetime statistics of the retired engines
// are kept here.
#include <algorithm>
#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy/router/memory.hpp>
#include <cstring>
#include <new>
#include <thread>

#include "facade.hpp"
#include "thrifty.hpp"

namespace convoy::facade {
namespace {

namespace term = convoy::termination;

constexpr std::size_t k_header_bytes = 16;  // aggregation::buffer_header
constexpr std::size_t k_chunk = std::size_t{1} << 30;
constexpr int k_monster_tag = 7;
constexpr unsigned char k_small = 0, k_ticket = 1;
constexpr std::size_t k_ticket_bytes = 16;

int map_engine(int rc) noexcept {
  if (rc >= 0) return rc;
  switch (rc) {
    case term::error_state:
      return convey_error_STATE;
    case term::error_rank:
      return convey_error_RANGE;
    case term::error_size:
      return convey_error_OFLO;
    case term::error_argument:
      return convey_error_USAGE;
    case term::error_unpull:
      return convey_FAIL;
    case term::error_elastic:
      return convey_error_RIGID;
    case term::error_transport:
      return convey_error_COMMS;
    case term::error_alloc:
      return convey_error_ALLOC;
    default:
      return convey_error_INTERNAL;
  }
}

bool misaligned(const void* p, std::size_t a) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) != 0;
}

conveyor_options engine_request(const tensor_request& r) {
  conveyor_options o;
  o.tensor_order = r.order;
  o.n_local = r.order >= 2 ? static_cast<int>(r.n_local) : 1;
  o.mesh = r.mesh;
  o.capacity_bytes = r.capacity + k_header_bytes;
  o.n_buffers = static_cast<int>(r.n_buffers);
  o.steady = r.steady || r.elastic;
  o.elastic = r.elastic;
  return o;
}

class tensor_conveyor final : public ::conveyor {
 public:
  tensor_conveyor(const tensor_request& r, const convey_alc8r_t* alloc, std::uint64_t opts)
      : ::conveyor(r.elastic ? "etensor" : (r.order == 0 ? "mesh" : "tensor"), opts),
        alloc_(alloc),
        memory_(make_buffer_source(alloc)),
        request_(engine_request(r)),
        // THRIFTY: the compressing transport squeezes buffers on off-node links of every
        // order (elastic conveyors do not compress, as in bale).
        thrifty_mode_((opts & convey_opt_COMPRESS) && !r.elastic && r.order >= 1),
        dynamic_((opts & convey_opt_DYNAMIC) != 0),
        elastic_(r.elastic),
        monster_bytes_(r.monster_bytes) {
    // Built once even under DYNAMIC: construction validates everything (plan, options,
    // transport) and learns the engine's shape; DYNAMIC then drops it until begin.
    eng_ = build_engine();
    if (thrifty_mode_) features |= convey_THRIFTY;
    engine_max_memory_ = eng_->max_memory_bytes();
    order = r.order == 0 ? eng_->plan().max_hops() : r.order;
    n_local = r.order >= 2 ? r.n_local : 1;
    buffer_bytes = r.capacity;
    if (eng_->options().steady) features |= convey_STEADY;
    if ((opts & convey_opt_COMPRESS) && !(features & convey_THRIFTY) && (opts & convey_opt_ALERT) &&
        my_pe == 0)
      print_once(std::string("warning: ") + kind + " conveyors of order " + std::to_string(order) +
                 " do not compress; buffers are sent uncompressed");
    const std::size_t max_item = eng_->max_item_bytes();
    scratch_ = static_cast<std::byte*>(
        ::operator new (std::max<std::size_t>(max_item, 64), std::align_val_t{64}));
    if (elastic_) {
      features |= convey_ELASTIC;
      if (max_item < k_ticket_bytes + 1)
        throw error("buffer_bytes " + std::to_string(r.capacity) +
                    " is too small for elastic items (a buffer must hold a 17-byte ticket)");
      small_max_ = max_item - 1;
      stage_ = static_cast<std::byte*>(::operator new (max_item, std::align_val_t{64}));
      CONVOY_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &mcomm_));
      MPI_Comm_set_errhandler(mcomm_, MPI_ERRORS_RETURN);
      reqs_.assign(monster_bytes_ / k_chunk + 2, MPI_REQUEST_NULL);
      // A client allocator is collective: grab the monster buffers now (DYNAMIC: at
      // every begin), after the engine's link buffers, so they go back first (LIFO).
      if (!dynamic_ && !grab_monsters()) throw std::bad_alloc();
    }
    if (dynamic_) drop_engine();
  }

  ~tensor_conveyor() override {
    if (elastic_) {
      release_monsters();
      if (mcomm_ != MPI_COMM_NULL) MPI_Comm_free(&mcomm_);
      ::operator delete (stage_, std::align_val_t{64});
    }
    ::operator delete (scratch_, std::align_val_t{64});
  }

  int begin_(std::size_t bytes, std::size_t) override {
    if (elastic_ && bytes > monster_bytes_ && bytes > small_max_) return convey_error_OFLO;
    if (dynamic_) {
      // Collective like begin: the transport's buffers (one grab each, T11), then the
      // monster buffers.
      eng_ = build_engine();
      if (elastic_ && !grab_monsters()) {
        drop_engine();
        return convey_error_ALLOC;
      }
    }
    const int rc = start_cycle(bytes);
    if (rc < 0 && dynamic_) drop_engine();
    return rc;
  }

  int start_cycle(std::size_t bytes) {
    if (elastic_) {
      test_monster_send();
      last_monster_ = unpulled_monster_ = false;
      std::memcpy(mmark_, mlife_, sizeof mlife_);
      return map_engine(eng_->begin(1));
    }
    std::memcpy(mmark_, mlife_, sizeof mlife_);
    if (thrifty_) thrifty_->begin_cycle(bytes);
    saved_mark_ = saved_total();
    const int rc = map_engine(eng_->begin(bytes));
    if (rc < 0 && thrifty_) thrifty_->end_cycle();
    direct = rc >= 0 ? eng_.get() : nullptr;
    return rc;
  }

  int push_(const void* item, std::int64_t pe) noexcept override {
    if (elastic_) return epush_(item_bytes, item, pe);
    return map_engine(eng_->push(item, static_cast<int>(pe)));
  }

  int epush_(std::size_t bytes, const void* item, std::int64_t pe) noexcept override {
    const int dest = static_cast<int>(pe);
    if (bytes <= small_max_) {
      if (bytes) std::memcpy(stage_, item, bytes);
      stage_[bytes] = std::byte{k_small};
      return map_engine(eng_->epush(stage_, bytes + 1, dest));
    }
    if (bytes > monster_bytes_) return convey_error_OFLO;
    // Monster (sec. 4.4.1): one outgoing buffer; the next monster waits for its send.
    if (send_active_ && !test_monster_send()) return convey_FAIL;
    if (mout_cap_ < bytes) {
      if (alloc_.client()) return convey_error_OFLO;
      free_own(mout_);
      mout_ = static_cast<std::byte*>(::operator new (bytes, std::align_val_t{64}, std::nothrow));
      mout_cap_ = mout_ ? bytes : 0;
      if (!mout_) return convey_error_ALLOC;
    }
    const std::uint64_t ticket[2] = {bytes, seq_out_};
    std::memcpy(stage_, ticket, k_ticket_bytes);
    stage_[k_ticket_bytes] = std::byte{k_ticket};
    const int rc = map_engine(eng_->epush(stage_, k_ticket_bytes + 1, dest));
    if (rc <= 0) return rc;
    std::memcpy(mout_, item, bytes);
    std::size_t k = 0;
    for (std::size_t off = 0; off < bytes; off += k_chunk, ++k) {
      const auto n = static_cast<int>(std::min(k_chunk, bytes - off));
      if (MPI_Isend(mout_ + off, n, MPI_BYTE, dest, k_monster_tag, mcomm_, &reqs_[k]) !=
          MPI_SUCCESS)
        return convey_error_COMMS;
    }
    send_active_ = true;
    ++seq_out_;
    if (dest != my_pe) {
      ++mlife_[0];
      mlife_[1] += bytes;
    }
    return convey_OK;
  }

  const void* pull_(std::int64_t* from, int* rc, bool aligned) noexcept override {
    term::item_view v;
    int got = eng_->pull(v, !elastic_);
    if (got <= 0) {
      *rc = map_engine(got);
      return nullptr;
    }
    const void* p = v.data;
    if (elastic_) {
      std::size_t size = 0;
      const bool ticket = classify(v, size);
      if (size != item_bytes) {  // leave it for epull (contract over bale: never discard)
        (void)eng_->unpull();
        *rc = convey_FAIL;
        return nullptr;
      }
      if (ticket) {
        p = take_monster(v, size, rc);
        if (!p) return nullptr;
      } else {
        last_monster_ = false;
      }
    }
    *from = v.from;
    if (aligned && misaligned(p, align)) {
      std::memcpy(scratch_, p, item_bytes);
      p = scratch_;
    }
    return p;
  }

  int epull_(convey_item_t* result) noexcept override {
    term::item_view v;
    const int got = eng_->pull(v, false);
    if (got <= 0) return map_engine(got);
    std::size_t size = 0;
    const void* p = v.data;
    if (classify(v, size)) {
      int rc = 0;
      p = take_monster(v, size, &rc);
      if (!p) return rc;
    } else {
      last_monster_ = false;
      if (size == 0 || misaligned(p, align)) {
        if (size) std::memcpy(scratch_, p, size);
        p = scratch_;
      }
    }
    result->bytes = size;
    result->data = const_cast<void*>(p);
    result->from = v.from;
    return convey_OK;
  }

  int unpull_() noexcept override {
    const int rc = map_engine(eng_->unpull());
    if (rc > 0 && last_monster_) unpulled_monster_ = true;
    return rc;
  }

  int advance_(bool done) override {
    if (send_active_) test_monster_send();
    const int rc = map_engine(eng_->advance(done));
    if (rc == convey_error_COMMS && !(options & convey_opt_QUIET))
      print_once("PE " + std::to_string(my_pe) + ": " + eng_->last_message());
    return rc;
  }

  int reset_() override {
    test_monster_send();  // completes later (begin, next monster, free) if still in flight
    const int rc = map_engine(eng_->reset());
    if (rc >= 0 && thrifty_) thrifty_->end_cycle();
    if (rc >= 0 && dynamic_) {
      // Collective like reset; every PE's engine has terminated, so every monster was
      // received and every link buffer released: monsters first, then the engine (LIFO).
      release_monsters();
      retire_engine();
    }
    return rc;
  }

  int set_codec_(const convey_codec_t* codec, void* arg) override {
    if (!thrifty_mode_) return convey_FAIL;
    codec_ = codec;
    codec_arg_ = arg;
    codec_set_ = true;
    if (thrifty_) thrifty_->set_codec(codec, arg);  // DYNAMIC: applied at the next begin
    return convey_OK;
  }

  std::int64_t comm_statistic_(int which, bool cumulative) const noexcept override {
    if (which == convey_SYNCS) return 0;  // asynchronous: no collective synchronization
    try {
      // Retired engines (DYNAMIC) count in the lifetime totals; between reset and the
      // next begin, "this cycle" is the last one.
      std::uint64_t buffers = cumulative ? retired_.buffers : (eng_ ? 0 : last_.buffers);
      std::uint64_t bytes = cumulative ? retired_.bytes : (eng_ ? 0 : last_.bytes);
      if (eng_) {
        const term::engine_stats s = eng_->stats(cumulative);
        buffers += s.buffers_sent;
        bytes += s.bytes_sent;
      }
      const int k = which == convey_COMMS ? 0 : 1;
      const std::uint64_t mon = cumulative ? mlife_[k] : mlife_[k] - mmark_[k];
      std::uint64_t saved = 0;  // compression: BYTES counts what was actually sent
      if (thrifty_mode_ && which == convey_BYTES)
        saved = saved_total() - (cumulative ? 0 : saved_mark_);
      return static_cast<std::int64_t>((which == convey_COMMS ? buffers : bytes) + mon - saved);
    } catch (...) {
      return -1;
    }
  }
  std::size_t memory_bytes_() const noexcept override {
    return (eng_ ? eng_->memory_bytes() : 0) + mout_cap_ + min_cap_;
  }
  std::size_t max_memory_bytes_() const noexcept override {
    return engine_max_memory_ + (monster_bytes_ > small_max_ && elastic_ ? 2 * monster_bytes_ : 0);
  }

 private:
  // A fresh engine for request_ (collective), its MPI link buffers from memory_ when the
  // client gave an allocator; THRIFTY engines get the codec set so far.
  // The plan is made once (topology discovery is collective and not cheap); DYNAMIC
  // conveyors build an engine over it at every begin.
  std::unique_ptr<term::engine> build_engine() {
    if (!plan_) plan_ = make_plan(MPI_COMM_WORLD, request_);
    if (thrifty_mode_) {
      thrifty_control* control = nullptr;
      auto e = make_thrifty_engine(plan_, request_, control, memory_);
      thrifty_ = control;
      if (codec_set_) thrifty_->set_codec(codec_, codec_arg_);
      return e;
    }
    if (!memory_) return make_mpi_engine(MPI_COMM_WORLD, plan_, request_);
    return make_mpi_engine(
        MPI_COMM_WORLD, plan_, request_,
        [memory = memory_](MPI_Comm comm, const std::shared_ptr<const router::route_plan>&) {
          return aggregation::make_transport(
              comm, convoy::base::settings::from_env(comm).transport_or_auto(), memory);
        });
  }

  // DYNAMIC, after a successful reset: keeps the engine's statistics, then destroys it
  // (its transport gives the link buffers back).
  void retire_engine() {
    const term::engine_stats whole = eng_->stats(true), cycle = eng_->stats(false);
    retired_.buffers += whole.buffers_sent;
    retired_.bytes += whole.bytes_sent;
    last_ = {cycle.buffers_sent, cycle.bytes_sent};
    drop_engine();
  }
  // DYNAMIC: the engine goes without a cycle to account for (failed begin).
  void drop_engine() noexcept {
    if (elastic_) release_monsters();
    if (thrifty_) saved_cum_ += thrifty_->saved_bytes();
    thrifty_ = nullptr;
    direct = nullptr;
    eng_.reset();
  }
  [[nodiscard]] std::uint64_t saved_total() const noexcept {
    return saved_cum_ + (thrifty_ ? thrifty_->saved_bytes() : 0);
  }

  // With a client allocator: both monster buffers, collectively (true if there are none).
  bool grab_monsters() noexcept {
    if (monster_bytes_ <= small_max_ || !alloc_.client()) return true;
    mout_ = static_cast<std::byte*>(alloc_.grab(monster_bytes_, __FILE__, __LINE__));
    min_ = static_cast<std::byte*>(alloc_.grab(monster_bytes_, __FILE__, __LINE__));
    if (mout_ && min_) {
      mout_cap_ = min_cap_ = monster_bytes_;
      return true;
    }
    release_monsters();
    return false;
  }
  // Waits for the outgoing monster, then frees both buffers, LIFO (client or own).
  void release_monsters() noexcept {
    wait_monster_send();
    if (alloc_.client()) {
      alloc_.release(min_);
      alloc_.release(mout_);
    } else {
      free_own(min_);
      free_own(mout_);
    }
    min_ = mout_ = nullptr;
    min_cap_ = mout_cap_ = 0;
  }

  // Returns true for a ticket; `size` is the client item's size.
  bool classify(const term::item_view& v, std::size_t& size) const noexcept {
    const auto tag = static_cast<unsigned char>(v.data[v.bytes - 1]);
    if (tag == k_ticket) {
      std::uint64_t t[2];
      std::memcpy(t, v.data, k_ticket_bytes);
      size = static_cast<std::size_t>(t[0]);
      return true;
    }
    size = v.bytes - 1;
    return false;
  }

  // Receives the monster announced by ticket `v` (or reuses it after an unpull).
  const void* take_monster(const term::item_view& v, std::size_t size, int* rc) noexcept {
    std::uint64_t t[2];
    std::memcpy(t, v.data, k_ticket_bytes);
    if (unpulled_monster_ && held_from_ == v.from && held_seq_ == t[1]) {
      unpulled_monster_ = false;
      last_monster_ = true;
      return min_;
    }
    unpulled_monster_ = false;
    if (min_cap_ < size) {
      if (alloc_.client()) {
        *rc = convey_error_OFLO;
        (void)eng_->unpull();
        return nullptr;
      }
      free_own(min_);
      min_ = static_cast<std::byte*>(::operator new (size, std::align_val_t{64}, std::nothrow));
      min_cap_ = min_ ? size : 0;
      if (!min_) {
        (void)eng_->unpull();
        *rc = convey_error_ALLOC;
        return nullptr;
      }
    }
    // The sender posted its Isend before the ticket could leave it, so these receives
    // match (MPI keeps order per source, tag and communicator).
    for (std::size_t off = 0; off < size; off += k_chunk) {
      const auto n = static_cast<int>(std::min(k_chunk, size - off));
      if (MPI_Recv(min_ + off, n, MPI_BYTE, v.from, k_monster_tag, mcomm_, MPI_STATUS_IGNORE) !=
          MPI_SUCCESS) {
        *rc = convey_error_COMMS;
        return nullptr;
      }
    }
    held_from_ = v.from;
    held_seq_ = t[1];
    last_monster_ = true;
    return min_;
  }

  bool test_monster_send() noexcept {
    if (!send_active_) return true;
    int flag = 0;
    MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE);
    if (flag) send_active_ = false;
    return flag != 0;
  }
  void wait_monster_send() noexcept {
    if (!send_active_) return;
    MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
    send_active_ = false;
  }
  void free_own(std::byte* p) noexcept {
    if (p) ::operator delete (p, std::align_val_t{64});
  }

  struct sent_counts {
    std::uint64_t buffers = 0, bytes = 0;
  };

  allocator alloc_;
  std::shared_ptr<aggregation::buffer_source> memory_;  // null: transports allocate
  conveyor_options request_;
  bool thrifty_mode_;
  bool dynamic_;
  std::shared_ptr<const router::route_plan> plan_;
  thrifty_control* thrifty_ = nullptr;  // in eng_'s transport, when THRIFTY
  const convey_codec_t* codec_ = nullptr;
  void* codec_arg_ = nullptr;
  bool codec_set_ = false;
  std::uint64_t saved_mark_ = 0;
  std::uint64_t saved_cum_ = 0;  // compression savings of retired engines
  sent_counts retired_;          // lifetime sends of retired engines (DYNAMIC)
  sent_counts last_;             // the last cycle's sends, once its engine is retired
  std::size_t engine_max_memory_ = 0;
  std::unique_ptr<term::engine> eng_;
  bool elastic_;
  std::size_t monster_bytes_;
  std::size_t small_max_ = 0;
  std::byte* scratch_ = nullptr;
  std::byte* stage_ = nullptr;
  MPI_Comm mcomm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> reqs_;
  bool send_active_ = false;
  std::uint64_t seq_out_ = 0;
  std::byte* mout_ = nullptr;
  std::byte* min_ = nullptr;
  std::size_t mout_cap_ = 0, min_cap_ = 0;
  bool last_monster_ = false, unpulled_monster_ = false;
  int held_from_ = -1;
  std::uint64_t held_seq_ = 0;
  std::uint64_t mlife_[2] = {0, 0};  // monster COMMS, BYTES
  std::uint64_t mmark_[2] = {0, 0};
};

void check_request(const tensor_request& r, std::int64_t n_pes) {
  if (r.capacity == 0) throw error("buffer capacity must be positive");
  if (r.order != 0 && (r.order < 1 || r.order > 3))
    throw error("order " + std::to_string(r.order) + " is not 1, 2 or 3");
  if (r.n_buffers == 0 || (r.n_buffers & (r.n_buffers - 1)) != 0 || r.n_buffers > 1024)
    throw error("n_buffers " + std::to_string(r.n_buffers) +
                " is not a power of two (1, 2, 4, ...)");
  if (r.order >= 2) {
    if (r.n_local == 0) throw error("n_local must be at least 1");
    if (static_cast<std::int64_t>(r.n_local) > n_pes ||
        n_pes % static_cast<std::int64_t>(r.n_local) != 0)
      throw error("n_local " + std::to_string(r.n_local) + " does not divide the PE count " +
                  std::to_string(n_pes));
  }
}

}  // namespace

::conveyor* make_tensor(const tensor_request& r, const convey_alc8r_t* alloc,
                        std::uint64_t options) {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  check_request(r, n);
  return new tensor_conveyor(r, alloc, options);
}

namespace {
// Most links any PE has on the route of `r` (collective).
std::size_t worst_link_count(const tensor_request& r) {
  const auto plan = make_plan(MPI_COMM_WORLD, engine_request(r));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  unsigned long long mine = router::link_count(*plan, rank), worst = 0;
  CONVOY_MPI_CHECK(
      MPI_Allreduce(&mine, &worst, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
  return static_cast<std::size_t>(worst);
}

// router/memory.hpp's model: links x n_buffers x capacity, plus the two monster buffers.
std::size_t model(const tensor_request& r, std::size_t links) {
  std::size_t bytes = links * r.n_buffers * (r.capacity + k_header_bytes);
  if (r.elastic && r.monster_bytes > r.capacity) bytes += 2 * r.monster_bytes;
  return bytes;
}
}  // namespace

std::size_t tensor_memory_model(const tensor_request& r) { return model(r, worst_link_count(r)); }

bool choose(std::size_t max_bytes, std::size_t n_local_arg, bool elastic, std::size_t item_bound,
            std::uint64_t options, std::size_t capacity_cap, tensor_request& r, bool& simple) {
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const env_settings env = read_env();
  std::size_t n_local = n_local_arg ? n_local_arg : env.nlocal;
  if (n_local == 0) n_local = discover_nodes(MPI_COMM_WORLD).uniform_local;
  if (n_local == 0 || P % static_cast<int>(n_local) != 0) {
    if ((options & convey_opt_ALERT) && n_local != 0)
      print_once("warning: n_local " + std::to_string(n_local) + " does not divide the " +
                 std::to_string(P) + " PEs; using 1 (one-hop routes)");
    n_local = 1;
  }
  std::size_t capacity = env.buffer_bytes;
  if (capacity == 0) {
    const auto e = resolve_engine_options(conveyor_options{},
                                          convoy::base::settings::from_env(MPI_COMM_WORLD));
    capacity = e.capacity_bytes > k_header_bytes ? e.capacity_bytes - k_header_bytes : 1024;
  }
  if (capacity_cap && capacity > capacity_cap) capacity = capacity_cap;
  r = tensor_request{};
  r.elastic = elastic;
  r.monster_bytes = item_bound;
  r.steady = (options & convey_opt_PROGRESS) != 0;
  r.n_local = n_local;
  simple = false;

  // Preferred route (seed 000 sec. 4.3): 3 hops when the middle dimension is wide enough,
  // 2 when there is a proper local group, else 1; CONVOY_MESH overrides with a mesh.
  std::vector<int> orders;
  if (!env.mesh.empty()) {
    orders.push_back(0);
    r.mesh = env.mesh;
  } else {
    const std::size_t n = n_local, p = static_cast<std::size_t>(P);
    if (n > 1 && n < p) {
      const std::size_t middle = p / (n * n);
      if (middle * middle >= n) orders.push_back(3);
      orders.push_back(2);
    }
    orders.push_back(1);
  }
  if (max_bytes == SIZE_MAX) {
    r.order = orders.front();
    r.capacity = capacity;
    return true;
  }
  // Hard memory limit: shrink n_buffers, then the route's width, then the buffer size.
  std::vector<std::size_t> links;
  for (int o : orders) {
    tensor_request t = r;
    t.order = o;
    t.capacity = capacity;
    links.push_back(worst_link_count(t));
  }
  const std::size_t min_capacity = elastic ? 64 : 32;
  for (std::size_t cap = capacity; cap >= min_capacity; cap /= 2) {
    for (std::size_t nb : {std::size_t{2}, std::size_t{1}}) {
      for (std::size_t i = 0; i < orders.size(); ++i) {
        tensor_request t = r;
        t.order = orders[i];
        t.capacity = cap;
        t.n_buffers = nb;
        if (model(t, links[i]) <= max_bytes) {
          r = t;
          return true;
        }
      }
    }
    if (!elastic && simple_memory_model(cap, static_cast<std::size_t>(P)) <= max_bytes) {
      r.capacity = cap;
      simple = true;
      return true;
    }
  }
  return false;
}

}  // namespace convoy::facade
