#pragma once
/// @file
/// Internals of the C façade (libconvey): the object behind convey_t and the helpers its
/// files share. Not installed.
///
/// A convey_t is a `struct conveyor` (global namespace, as the C header declares it). It
/// begins with the convey_head_t of convoy/convey_view.h, whose view convey.h's inline
/// push, pull and apull use (the engine's hot state, CAPI-3), and owns a
/// convoy::untyped_conveyor, the C++ core of every conveyor, built for every kind by
/// make_conveyor. It keeps no state of its own: the dispatch functions (convey.cpp) ask
/// the one table about the core's state first (conveyor::refuse, termination::refusal;
/// Maley & DeVinney 2019, sec. 3.2), then translate each call to the core or its engine
/// (termination::conveyor_engine): names, codes, `pe`.
#include <convey.h>
#include <convey_codec.h>
#include <convoy/convey_view.h>
#include <mpi.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy/termination/layout_choice.hpp>
#include <cstddef>
#include <cstdint>
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

using termination::layout_kind;
using termination::layout_plan;
using termination::layout_request;
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

/// The object behind convey_t: the C view, the conveyor (the C++ core, which owns its
/// engine, its counters, DYNAMIC buffers and bale's rule that an apull'ed item outlives an
/// advance) and what bale's calls need to translate to it: option and feature bits, the
/// layout it reports, an aligned scratch item. No state and no counters of its own: its
/// state is the core's (now()), checked against the one table (Maley & DeVinney 2019, sec.
/// 3.2). Not polymorphic, so that it begins with the convey_head_t that convey.h's inline
/// calls read (convoy/convey_view.h).
struct conveyor {
  /// Built by convoy::facade::make_conveyor.
  conveyor(const char* kind_name, std::uint64_t options, convoy::untyped_conveyor&& core);
  ~conveyor();
  conveyor(const conveyor&) = delete;
  conveyor& operator=(const conveyor&) = delete;

  /// First: the inline calls' view (the engine's hot state, or closed_view) and apull's
  /// alignment. Kept by refresh_view() and begin.
  convey_head_t head{};
  /// The conveyor: every call goes to it or, through the one engine interface
  /// (termination::conveyor_engine), to its engine (null while DORMANT without one).
  convoy::untyped_conveyor core;
  /// The engine, whose state now() has passed the table; never null then.
  [[nodiscard]] convoy::termination::conveyor_engine& engine() noexcept { return *core.engine(); }

  /// Points head.view at the engine's hot state, or at closed_view without an engine.
  /// After construction, begin, reset.
  void refresh_view() noexcept;
  /// The view of a conveyor without an engine: no push, an empty window; never written.
  static convey_view_t closed_view;

  /// The conveyor's state: its engine's (TERM-9; one state per conveyor), DORMANT while a
  /// DYNAMIC conveyor has no engine.
  [[nodiscard]] convoy::termination::state now() const noexcept { return core.current_state(); }
  /// The one table's answer for call `c` now (termination::refusal) as a convey code: nothing
  /// when the call must do its work, else what it returns (misuse reported from `where`).
  [[nodiscard]] std::optional<int> refuse(const char* where, convoy::termination::call c) noexcept;

  /// Reports `code` (negative) from `where` once per code unless QUIET; returns it.
  int panic(const char* where, int code, const char* detail = nullptr) noexcept;

  const char* kind;            ///< "tensor", "mesh", "simple", "etensor" (convoy_convey_kind)
  std::uint64_t options;       ///< convey_opt_* bits
  std::uint64_t features = 0;  ///< convey_ELASTIC, convey_STEADY, convey_THRIFTY
  /// THRIFTY: the codec the core compresses with; convey_set_codec swaps the C codec in it.
  std::shared_ptr<convoy::facade::c_codec> codec;
  /// The layout reported by convoy/convey_ext.h: route order, group size, bale's capacity
  /// (buffer payload bytes).
  int order = 1;
  std::size_t n_local = 1;
  std::size_t payload_bytes = 0;
  /// An aligned copy of the last apull'ed item when the engine's was misaligned (items up
  /// to core.max_buffered_item_bytes(); larger elastic items are in their own buffer).
  convoy::facade::aligned_bytes scratch;
  std::size_t item_bytes = 0;    ///< the current begin's (convey_item_size), 0 after reset
  std::uint64_t suppressed = 0;  ///< bit k: code -k already printed
};

namespace convoy::facade {

/// What a constructor of convey.h asks for: a layout (tensor, mesh or bulk) and the
/// elastic and broadcast kinds' parameters. The convey_opt_* bits add the rest.
struct conveyor_request {
  layout_plan layout;    ///< route, capacity (payload bytes), n_buffers
  bool elastic = false;  ///< etensor / convey_new_elastic (not bulk)
  /// elastic: the largest item epush accepts (CAPI-6: etensor's monster_bytes,
  /// convey_new_elastic's item_bound); 0: the largest that fits a buffer
  std::size_t item_bound = 0;
  bool broadcast = false;  ///< convoy_convey_new_broadcast
};

/// The core's options for `r` under bale's option bits: the layout's, PROGRESS (steady),
/// DYNAMIC, the allocator's buffer source, the elastic kind and its bound, broadcast.
convoy::conveyor_options core_options(const conveyor_request& r, const convey_alc8r_t* alloc,
                                      std::uint64_t options);
/// A conveyor for `r` (collective): the core built from core_options (THRIFTY with a
/// c_codec for tensor and bulk layouts under COMPRESS), the view set. Throws convoy::error
/// with a message naming the problem.
::conveyor* make_conveyor(const conveyor_request& r, const convey_alc8r_t* alloc,
                          std::uint64_t options);

}  // namespace convoy::facade
