#pragma once
/// @file
/// Internals of the C façade (libconvey): the conveyor object behind convey_t, its kinds,
/// and the run-time helpers they share. Not installed.
///
/// A convey_t is a `struct conveyor` (global namespace, as the C header declares it) with
/// virtual methods per kind (seed 000 sec. 4: "a table of function pointers"). The
/// dispatch functions in convey.cpp track the state and check legality (seed 000
/// sec. 3.2), so a kind's method is only ever called when the call is legal.
#include <convey.h>
#include <mpi.h>

#include <convoy/aggregation/transport.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace convoy::facade {

enum class cstate : int { dormant = 0, working, endgame, cleanup, complete };
const char* state_name(cstate s) noexcept;

/// Initializes MPI if the program has not (and registers MPI_Finalize at exit); returns
/// false (with a message in `why`) if MPI was already finalized.
bool ensure_mpi(std::string& why) noexcept;

/// The environment settings the constructors read (one place; see convey.h).
struct env_settings {
  std::size_t nlocal = 0;        ///< CONVEY_NLOCAL (0: unset)
  std::size_t buffer_bytes = 0;  ///< CONVEY_BUFFER_SIZE, k = x1000 (0: unset)
  std::string mesh;              ///< CONVOY_MESH ("" unset)
};
/// Collective (rank 0's environment wins). Throws convoy::error naming an invalid variable.
env_settings read_env();

/// The node layout of MPI_COMM_WORLD from topology discovery (collective).
struct node_layout {
  std::vector<int> node_of_rank;  ///< node index of every rank
  std::size_t uniform_local = 1;  ///< gcd of the node sizes (groups never straddle nodes)
};
node_layout discover_nodes(MPI_Comm comm);

/// Large-buffer allocation through a convey_alc8r_t, or 64-byte aligned operator new.
class allocator {
 public:
  explicit allocator(const convey_alc8r_t* a) noexcept;
  /// Returns nullptr on failure. Collective when a client allocator is set.
  void* grab(std::size_t bytes, const char* tag, int line) noexcept;
  void release(void* p) noexcept;
  [[nodiscard]] bool client() const noexcept { return has_; }

 private:
  convey_alc8r_t a_{};
  bool has_ = false;
};

/// The engine's link buffers through a client allocator (aggregation/README.md, T11): a
/// buffer_source whose grab() calls `a->grab` with this file and line as the tag, and
/// release() `a->free`. nullptr when `a` is NULL or lacks grab or free (then transports
/// allocate their own buffers). The transports make the grab collective with one size.
std::shared_ptr<aggregation::buffer_source> make_buffer_source(const convey_alc8r_t* a);

/// Prints "convey: <what>" on stderr once per distinct text per process.
void print_once(const std::string& what) noexcept;

/// Largest power of two <= CONVEY_MAX_ALIGN dividing `bytes` (bytes > 0).
std::size_t natural_align(std::size_t bytes) noexcept;

}  // namespace convoy::facade

/// The object behind convey_t. Kinds derive from it.
struct conveyor {
  conveyor(const char* kind, std::uint64_t options);
  virtual ~conveyor();
  conveyor(const conveyor&) = delete;
  conveyor& operator=(const conveyor&) = delete;

  // ---- Per-kind methods (called by the dispatch functions only when legal) ----
  /// Returns convey_OK or a negative code; on failure nothing changed.
  virtual int begin_(std::size_t item_bytes, std::size_t align) = 0;
  virtual int push_(const void* item, std::int64_t pe) noexcept = 0;
  virtual int epush_(std::size_t, const void*, std::int64_t) noexcept { return convey_error_RIGID; }
  /// Rigid pull: returns a pointer to the item (aligned per `align` if `aligned`), valid
  /// until the next pull/unpull, or nullptr with *rc = 0 (nothing ready) or negative.
  virtual const void* pull_(std::int64_t* from, int* rc, bool aligned) noexcept = 0;
  virtual int epull_(convey_item_t*) noexcept { return convey_error_RIGID; }
  /// Returns convey_OK or convey_FAIL.
  virtual int unpull_() noexcept = 0;
  /// Returns convey_OK, convey_NEAR, convey_DONE or negative.
  virtual int advance_(bool done) = 0;
  virtual int reset_() = 0;
  /// Returns OK, FAIL (not THRIFTY) or negative.
  virtual int set_codec_(const convey_codec_t*, void*) { return convey_FAIL; }
  /// COMMS, SYNCS, BYTES counted by the kind.
  virtual std::int64_t comm_statistic_(int which, bool cumulative) const noexcept = 0;
  virtual std::size_t memory_bytes_() const noexcept = 0;
  virtual std::size_t max_memory_bytes_() const noexcept = 0;

  /// Reports `code` (negative) from `where` once per code unless QUIET; returns it.
  int panic(const char* where, int code, const char* detail = nullptr) noexcept;

  const char* kind;
  std::uint64_t options;
  std::uint64_t features = 0;
  convoy::facade::cstate state = convoy::facade::cstate::dormant;
  std::int64_t n_pes = 1;
  std::int64_t my_pe = 0;
  std::size_t item_bytes = 0;
  std::size_t align = 1;
  int order = 1;
  std::size_t n_local = 1;
  std::size_t buffer_bytes = 0;
  /// Lifetime counters of BEGINS..UNPULLS, ADVANCES; and their values at the last begin.
  std::uint64_t life[5] = {0, 0, 0, 0, 0};
  std::uint64_t mark[5] = {0, 0, 0, 0, 0};
  std::uint64_t suppressed = 0;  ///< bit k: code -k already printed
  /// A rigid engine-backed kind's engine while WORKING..COMPLETE, else nullptr: push,
  /// pull and apull call its inline hot paths directly instead of the virtual methods
  /// (the engine's codes map onto convey's one to one on success; failures take the
  /// virtual path, which reports them).
  convoy::termination::engine* direct = nullptr;
};

namespace convoy::facade {

/// Constructor arguments shared by the engine-backed kinds.
struct tensor_request {
  std::size_t capacity = 0;  ///< bytes per buffer (payload; the 16-byte header is added)
  int order = 0;             ///< 1..3, or 0 for a mesh
  std::size_t n_local = 1;
  std::size_t n_buffers = 2;
  std::string mesh;  ///< used when order == 0
  bool elastic = false;
  std::size_t monster_bytes = 0;
  bool steady = false;
};

/// Builders (collective). Throw convoy::error with a message naming the problem.
::conveyor* make_simple(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t options);
::conveyor* make_tensor(const tensor_request& r, const convey_alc8r_t* alloc,
                        std::uint64_t options);
/// Bytes of buffer memory a tensor/mesh conveyor built from `r` would use at most on
/// the worst PE (collective).
std::size_t tensor_memory_model(const tensor_request& r);
std::size_t simple_memory_model(std::size_t capacity, std::size_t n_pes);

/// Picks the kind for convey_new / convey_new_elastic / biconvey_new (collective).
/// Returns false if nothing fits in max_bytes. `simple` is set when a simple conveyor
/// was chosen (then only r.capacity matters).
/// `capacity_cap` (0: none) bounds the preferred buffer size.
bool choose(std::size_t max_bytes, std::size_t n_local, bool elastic, std::size_t item_bound,
            std::uint64_t options, std::size_t capacity_cap, tensor_request& r, bool& simple);

/// Prints "<who>: <what>" once unless options has QUIET (constructor failures).
void constructor_failed(const char* who, std::uint64_t options, const char* what) noexcept;

}  // namespace convoy::facade
