#pragma once
/// @file
/// Internals of the C façade (libconvey): the object behind convey_t and the helpers its
/// files share. Not installed.
///
/// A convey_t is a `struct conveyor` (global namespace, as the C header declares it). It
/// begins with the convey_head_t of convoy/convey_view.h, whose view convey.h's inline
/// push, pull and apull use (the engine's hot state, CAPI-3); it owns a
/// convoy::untyped_conveyor, the C++ core of every conveyor, and its kind's methods
/// (`ops`, a facade::kind). It keeps no state of its own: the dispatch functions
/// (convey.cpp) ask the one table about the engine's state first (conveyor::refuse,
/// termination::refusal; Maley & DeVinney 2019, sec. 3.2), then translate each call to
/// the one engine interface (termination::conveyor_engine): names, codes, `pe`.
#include <convey.h>
#include <convey_codec.h>
#include <convoy/convey_view.h>
#include <mpi.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/conveyor_api/layout_choice.hpp>
#include <convoy/conveyor_api/untyped_conveyor.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>

/// The published views (convoy/convey_view.h) are C++ structs read through C declarations:
/// a view field `cf` of C struct `C` must have the offset and size of field `cppf` of `Cpp`.
#define CONVOY_SAME_FIELD(C, Cpp, cf, cppf)                             \
  static_assert(offsetof(C, cf) == offsetof(Cpp, cppf) &&               \
                    ::convoy::facade::size_of<decltype(C::cf)> ==       \
                        ::convoy::facade::size_of<decltype(Cpp::cppf)>, \
                #C "::" #cf " is not " #Cpp "::" #cppf)

namespace convoy::facade {
/// sizeof for CONVOY_SAME_FIELD (a template, so that no sizeof of a pointer is spelled).
template <class T>
inline constexpr std::size_t size_of = sizeof(T);
}  // namespace convoy::facade

namespace convoy::facade {

using termination::state;

/// Initializes MPI if the program has not (and registers MPI_Finalize at exit); returns
/// false (with a message in `why`) if MPI was already finalized.
bool ensure_mpi(std::string& why) noexcept;
/// Whether ensure_mpi initialized MPI (and finalizes it at exit).
bool owns_mpi() noexcept;
/// This PE and the PE count (MPI_COMM_WORLD).
int world_rank() noexcept;
int world_size() noexcept;

/// An engine code (termination::engine_error) as a convey code (CAPI-2); >= 0 unchanged.
int to_convey(int engine_code) noexcept;

/// Whether `p` is not a multiple of `a` (a power of two): the item is copied to an aligned
/// scratch buffer before apull/epull hand it out (CAPI-7).
[[nodiscard]] inline bool misaligned(const void* p, std::size_t a) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) != 0;
}

/// The engine's link buffers through a client allocator (aggregation/README.md, T11): a
/// buffer_source whose grab() calls `a->grab` with this file and line as the tag, and
/// release() `a->free`. nullptr when `a` is NULL or lacks grab or free (then transports
/// allocate their own buffers). The transports make the grab collective with one size.
std::shared_ptr<aggregation::buffer_source> make_buffer_source(const convey_alc8r_t* a);

/// A convey_codec_t (with its `arg`) as the C++ core's codec (THRIFTY, CAPI-11): every call
/// is the C codec's with a convey_cargo_t; a link's destructor is its unlink. set() swaps
/// the codec for the next cycle (links made before keep theirs). NULL: the standard codec.
class c_codec final : public aggregation::codec {
 public:
  c_codec() noexcept { set(nullptr, nullptr); }
  void set(const convey_codec_t* c, void* arg) noexcept;
  [[nodiscard]] const char* name() const noexcept override { return codec_->name; }
  [[nodiscard]] bool plan(const aggregation::cargo& c, aggregation::codec_layout& layout) override;
  [[nodiscard]] std::unique_ptr<aggregation::codec_link> link(const aggregation::cargo& c,
                                                              bool decompress) override;
  [[nodiscard]] std::size_t compress(const aggregation::cargo& c, aggregation::codec_link* link,
                                     std::size_t n_items, std::byte* in, std::size_t limit,
                                     std::byte* out) override;
  void decompress(const aggregation::cargo& c, aggregation::codec_link* link, std::size_t n_items,
                  std::size_t n_bytes, std::byte* in, std::byte* out) override;

 private:
  static void* link_state(aggregation::codec_link* link) noexcept;
  const convey_codec_t* codec_ = nullptr;
  void* arg_ = nullptr;
};

/// Prints "convey: <what>" on stderr once per distinct text per process.
void print_once(const std::string& what) noexcept;

/// Largest power of two <= CONVEY_MAX_ALIGN dividing `bytes` (bytes > 0).
std::size_t natural_align(std::size_t bytes) noexcept;

/// 64-byte aligned bytes from operator new, freed by the deleter.
struct aligned_delete {
  void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{64}); }
};
using aligned_bytes = std::unique_ptr<std::byte[], aligned_delete>;
aligned_bytes make_aligned(std::size_t bytes);

}  // namespace convoy::facade

namespace convoy::facade {
class kind;
}

/// The object behind convey_t: what every kind has, the counters; its kind's methods in
/// `ops`. Its state is its engine's (now()), checked against the one table (Maley &
/// DeVinney 2019, sec. 3.2). Not polymorphic, so that it begins
/// with the convey_head_t that convey.h's inline calls read (convoy/convey_view.h).
struct conveyor {
  /// `kind_name`: "tensor", "mesh", "simple", "etensor" (convoy_convey_kind).
  conveyor(const char* kind_name, std::uint64_t options);
  ~conveyor();
  conveyor(const conveyor&) = delete;
  conveyor& operator=(const conveyor&) = delete;

  /// First: the inline calls' view (the engine's hot state, or closed_view) and apull's
  /// alignment. Kept by refresh_view() and begin.
  convey_head_t head{};
  /// The engine conveyor.
  convoy::untyped_conveyor core;
  /// The kind's methods: construction, begin, reset, statistics, codec (called by the
  /// dispatch functions only when legal).
  std::unique_ptr<convoy::facade::kind> ops;
  /// The engine every push, pull, unpull and advance goes to, through the one engine
  /// interface (the core's; an elastic conveyor's elastic engine over it). Null while a
  /// DYNAMIC conveyor has no engine. Kept by refresh_view().
  convoy::termination::conveyor_engine* engine = nullptr;
  /// Pushes and pulls are counted by the engine (the core keeps the counts of DYNAMIC
  /// engines), and an advance puts the last pull back whenever the engine can unpull it
  /// (pulls may be inline, unseen here). False for elastic conveyors, whose engine goes
  /// at a DYNAMIC reset: `life` counts their calls, and `held` says what to put back.
  bool engine_counts = true;
  /// Larger items (elastic: above what travels in the engine's buffers) are handed out in
  /// their own buffer, never copied to `scratch` nor held.
  std::size_t small_max = std::numeric_limits<std::size_t>::max();
  std::uint64_t options;
  std::size_t item_bytes = 0;
  std::size_t align = 1;
  std::int64_t n_pes = 1;
  /// Lifetime counters of BEGINS..UNPULLS, ADVANCES, and the pulls an advance took back
  /// and pulled again (CAPI-7: not the user's); their values at the last begin.
  std::uint64_t life[6] = {0, 0, 0, 0, 0, 0};
  std::uint64_t mark[6] = {0, 0, 0, 0, 0, 0};
  /// An aligned copy of the last apull'ed item when the engine's was misaligned
  /// (max_item bytes).
  convoy::facade::aligned_bytes scratch;
  /// Elastic conveyors: the pointer the last apull/epull returned when it points into the
  /// core's buffers (no pull or unpull since), else null. bale keeps it valid until the next
  /// pull or unpull; the engine only until the next advance, so advance puts the item back
  /// and takes it again (CAPI-7). Other kinds: advance does so whenever the engine can
  /// unpull, since their pulls may be inline.
  const void* held = nullptr;
  /// The last pull was taken back and pulled again by an advance, and no pull came since
  /// (the engine's pull count is still retake_mark): an unpull now fails, as it would after
  /// an advance without a held item.
  bool retaken = false;
  std::uint64_t retake_mark = 0;

  /// Sets `engine` (the kind's) and points head.view at its hot state, or at closed_view
  /// without an engine. After construction, begin, reset.
  void refresh_view() noexcept;
  /// The view of a conveyor without an engine: no push, an empty window; never written.
  static convey_view_t closed_view;

  /// The conveyor's state: its engine's (TERM-9; one state per conveyor), DORMANT while a
  /// DYNAMIC conveyor has no engine.
  [[nodiscard]] convoy::termination::state now() const noexcept {
    return engine ? engine->current_state() : convoy::termination::state::dormant;
  }
  /// The one table's answer for call `c` now (termination::refusal) as a convey code: nothing
  /// when the call must do its work, else what it returns (misuse reported from `where`).
  [[nodiscard]] std::optional<int> refuse(const char* where,
                                          convoy::termination::call c) noexcept;

  /// Reports `code` (negative) from `where` once per code unless QUIET; returns it.
  int panic(const char* where, int code, const char* detail = nullptr) noexcept;

  const char* kind;
  std::uint64_t features = 0;
  std::int64_t my_pe = 0;
  int order = 1;
  std::size_t n_local = 1;
  std::size_t payload_bytes = 0;  ///< bale's capacity (convoy_convey_buffer_bytes)
  std::uint64_t suppressed = 0;   ///< bit k: code -k already printed
};

namespace convoy::facade {

/// A kind's methods over its conveyor `c` (set up by the kind's constructor): what differs
/// between kinds — construction, begin and reset (DYNAMIC engines, codecs), statistics.
/// Every push, pull, unpull and advance goes to the engine interface (conveyor::engine).
/// Called by the dispatch functions only when legal.
class kind {
 public:
  explicit kind(::conveyor& conv) noexcept : c(conv) {}
  virtual ~kind() = default;
  kind(const kind&) = delete;
  kind& operator=(const kind&) = delete;

  /// Returns convey_OK or a negative convey code; on failure nothing changed.
  virtual int begin_(std::size_t item_bytes, std::size_t align) = 0;
  /// Returns convey_OK or negative.
  virtual int reset_() = 0;
  /// The engine the calls go to (conveyor::engine): the core's, unless the kind wraps it.
  [[nodiscard]] virtual convoy::termination::conveyor_engine* engine_() noexcept {
    return c.core.engine();
  }
  /// Returns OK, FAIL (not THRIFTY) or negative.
  virtual int set_codec_(const convey_codec_t*, void*) { return convey_FAIL; }
  /// COMMS, SYNCS, BYTES counted by the kind.
  [[nodiscard]] virtual std::int64_t comm_statistic_(int which, bool cumulative) const noexcept = 0;
  [[nodiscard]] virtual std::size_t memory_bytes_() const noexcept { return c.core.memory_bytes(); }
  [[nodiscard]] virtual std::size_t max_memory_bytes_() const noexcept {
    return c.core.max_memory_bytes();
  }

 protected:
  ::conveyor& c;
};

/// A new conveyor of kind `K`: `K(conveyor&, args...)` sets it up.
template <class K, class... A>
::conveyor* make_kind(const char* kind_name, std::uint64_t options, A&&... args) {
  auto c = std::make_unique<::conveyor>(kind_name, options);
  c->ops = std::make_unique<K>(*c, std::forward<A>(args)...);
  c->core.set_report_label("convey", kind_name);  // CONVOY_STATS (API-30)
  c->refresh_view();
  return c.release();
}

}  // namespace convoy::facade

namespace convoy::facade {

/// What the engine-backed constructors ask for.
struct engine_request {
  convoy::layout_plan layout;     ///< route, capacity (payload bytes), n_buffers
  bool steady = false;            ///< PROGRESS
  bool elastic = false;           ///< etensor / convey_new_elastic
  std::size_t monster_bytes = 0;  ///< elastic: items above a buffer up to this travel apart
  /// elastic: largest item epush accepts (CAPI-6); 0: monster_bytes (etensor, as bale)
  std::size_t item_bound = 0;
  bool broadcast = false;  ///< convoy_convey_new_broadcast
};

/// Builders (collective). Throw convoy::error with a message naming the problem.
::conveyor* make_simple(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t options);
::conveyor* make_streaming(const engine_request& r, const convey_alc8r_t* alloc,
                           std::uint64_t options);
::conveyor* make_elastic(const engine_request& r, const convey_alc8r_t* alloc,
                         std::uint64_t options);
/// The engine kinds' conveyor_options for `r` (layout, steady, elastic, DYNAMIC, allocator).
convoy::conveyor_options engine_options_for(const engine_request& r, const convey_alc8r_t* alloc,
                                            std::uint64_t options);

}  // namespace convoy::facade
