/**
 * @file
 * bale-compatible conveyors over convoy (drop-in `convey.h`, bale 0.5 API).
 *
 * A conveyor moves small items from `push` on any PE to `pull` on the destination PE.
 * States (Maley & DeVinney 2019, sec. 3.2): a conveyor is DORMANT after construction; begin ->
 * WORKING; advance(true) -> ENDGAME, CLEANUP or COMPLETE as advance returns OK, NEAR or DONE;
 * ENDGAME -> CLEANUP -> COMPLETE; reset -> DORMANT. Legal calls per state:
 *  - DORMANT: begin, reset (does nothing), free, set_codec.
 *  - WORKING: push, epush, pull, apull, epull, unpull, advance.
 *  - ENDGAME, CLEANUP: pull, apull, epull, unpull, advance(true).
 *  - COMPLETE: pull and unpull (they fail with 0), advance (returns DONE), reset, free.
 * An illegal call returns a negative `convey_error` code (apull: NULL), moves no data,
 * changes no state and prints one message per code and conveyor unless convey_opt_QUIET.
 * The codes are bale's, call by call (conveyor_api/README.md, CAPI-2); as in bale,
 * advance(false) after advance(true) counts as advance(true), and epull on an elastic
 * conveyor in DORMANT fails with 0.
 *
 * Contract (Maley & DeVinney 2019, sec. 3.3): if every PE keeps calling pull and advance until
 * advance returns DONE, then repeated push attempts interleaved with advance succeed;
 * every pushed item is pulled exactly once on its destination before the next reset;
 * items from one PE to another are pulled in push order; if any PE is in CLEANUP or
 * COMPLETE, none is WORKING. Conveyors from convey_new_simple() synchronize all PEs in
 * advance (Maley & DeVinney 2019, sec. 3.3, "one strange clause": advance is collective while
 * WORKING or ENDGAME); all other conveyors have a nonblocking advance. When several conveyors are
 * active, advance them in the same order on every PE (Maley & DeVinney 2019, Figure 4).
 *
 * Return convention: positive = success, 0 (convey_FAIL / convey_DONE) = ordinary
 * failure, negative = misuse or internal error (see enum convey_error and
 * convey_error_string()). MPI: the library uses MPI_COMM_WORLD; if the program has not
 * initialized MPI, the first constructor initializes it and the library finalizes it at
 * exit.
 */
#ifndef CONVEY_H
#define CONVEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "convey_alc8r.h"
#include "convey_codec.h"
#include "convoy/convey_view.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Non-negative return values. */
enum convey_status {
  convey_DONE = 0, /**< advance: COMPLETE */
  convey_FAIL = 0, /**< push/pull/unpull: ordinary failure (try again later) */
  convey_OK = 1,   /**< success; advance: not finished */
  convey_NEAR = 2  /**< advance: CLEANUP (nothing more will arrive; pull what is left) */
};

/** Optional features (convey_features()). A feature only strengthens the contract. */
enum convey_feature {
  convey_ELASTIC = 0x01, /**< variable-size items: convey_epush() / convey_epull() */
  convey_STEADY = 0x02,  /**< every pushed item is delivered without an endgame */
  convey_THRIFTY = 0x04  /**< compresses buffers that leave the node */
};

/** Statistics (convey_statistic()). Add convey_CUMULATIVE for the lifetime total instead
 *  of the total since the last convey_begin(). Counted under every option. */
enum convey_statistic {
  convey_BEGINS = 0, /**< successful begins */
  convey_PUSHES,     /**< successful pushes (push and epush) */
  convey_PULLS,      /**< successful pulls (pull, apull, epull) */
  convey_UNPULLS,    /**< successful unpulls */
  convey_ADVANCES,   /**< calls of advance that did not fail */
  convey_COMMS,      /**< buffers (and monster items) sent to other PEs */
  convey_SYNCS,      /**< collective synchronizations (simple conveyors) */
  convey_BYTES,      /**< bytes sent to other PEs, headers included */
  convey_CUMULATIVE
};

/** Constructor options. */
enum convey_option {
  convey_opt_RECKLESS = 0x01, /**< skip range checks on the hot path (pe, sizes) */
  convey_opt_DYNAMIC = 0x02,  /**< allocate large buffers in begin, release in reset */
  convey_opt_QUIET = 0x04,    /**< print no error messages; just return codes */
  convey_opt_SCATTER = 0x08,  /**< pushes target random PEs (accepted; no effect) */
  convey_opt_PROGRESS = 0x10, /**< steady conveyor (feature convey_STEADY) */
  convey_opt_ALERT = 0x20,    /**< print warnings about unexpected slow conditions */
  convey_opt_COMPRESS = 0x40  /**< compress off-node buffers if supported (THRIFTY) */
};

/** Expert options (accepted and ignored: they concern bale's SHMEM internals). */
enum convey_expert_option { convey_opt_STANDARD = 0x100000, convey_opt_BLOCKING = 0x200000 };

/** Negative return codes: bale's names and values (so that code compiled against either
 *  header agrees), plus convoy's own below -13. convey_error_string() describes each. */
enum convey_error {
  convey_error_STATE = -1,    /**< operation illegal in the current state */
  convey_error_USAGE = -2,    /**< the caller violated the contract */
  convey_error_NULL = -3,     /**< conveyor or a required pointer is NULL */
  convey_error_RANGE = -4,    /**< PE number out of range */
  convey_error_TEAM = -5,     /**< collective call on the wrong communicator (never
                                   returned: convoy conveyors span MPI_COMM_WORLD) */
  convey_error_COMMS = -6,    /**< communication (MPI) failed */
  convey_error_ALLOC = -7,    /**< memory allocation failed */
  convey_error_RIGID = -8,    /**< elastic operation on a conveyor that is not elastic */
  convey_error_MISFIT = -9,   /**< the next item has the wrong size for a rigid pull */
  convey_error_OFLO = -10,    /**< item too large for this conveyor */
  convey_error_ZERO = -11,    /**< item size is zero */
  convey_error_TOOBIG = -12,  /**< buffer capacity too large */
  convey_error_NOFUNC = -13,  /**< a required function pointer is NULL */
  convey_error_INTERNAL = -14 /**< internal error (a bug in the library; convoy's own) */
};

/** The opaque conveyor. */
typedef struct conveyor convey_t;

/** Result of convey_epull(). */
typedef struct {
  size_t bytes; /**< size of the pulled item */
  void* data;   /**< aligned pointer to it, valid until the next pull or unpull */
  int64_t from; /**< PE that pushed it */
} convey_item_t;

/** bale's all-to-all strategy type for mpp_utilV4; opaque here, pass NULL. */
typedef struct mpp_alltoall convey_mpp_a2a_t;

/** Library version, "0.5.0"-style: convoy's (CONVOY_VERSION_STRING of convoy/version.h). */
extern const char convey_version[];

/** The strongest alignment convey_apull() can guarantee. */
#define CONVEY_MAX_ALIGN (UINT64_C(64))

/* ---- Constructors: collective over all PEs; NULL on failure (message unless QUIET) ---- */

/** Builds the fastest conveyor whose buffers fit in `max_bytes` bytes per PE (SIZE_MAX:
 *  no limit); NULL if none fits. `n_local == 0`: CONVEY_NLOCAL, else the PEs per node
 *  from topology discovery, else 1 if that does not divide the PE count. The
 *  environment may set CONVEY_BUFFER_SIZE (bytes; suffix k = x1000) and CONVOY_MESH
 *  (a convoy mesh spec: route over that mesh instead of bale's tensor routes). */
convey_t* convey_new(size_t max_bytes, size_t n_local, const convey_alc8r_t* alloc,
                     uint64_t options);

/** As convey_new(), for elastic items of up to `item_bound` bytes (feature ELASTIC). */
convey_t* convey_new_elastic(size_t item_bound, size_t max_bytes, size_t n_local,
                             const convey_alc8r_t* alloc, uint64_t options);

/** Bulk synchronous conveyor (Maley & DeVinney 2019, sec. 4.1, exstack style): one buffer of
 *  `capacity` bytes per destination, exchanged by an all-to-all when every PE has pulled
 *  everything. Its advance is collective and synchronizing. `a2a` must be NULL. */
convey_t* convey_new_simple(size_t capacity, const convey_alc8r_t* alloc,
                            const convey_mpp_a2a_t* a2a, uint64_t options);

/** Two-hop conveyor: PEs form a matrix of `row_procs` PEs per row (must divide the PE
 *  count); first hop within the row, second within the column. Implemented as an
 *  asynchronous order-2 tensor conveyor with n_local = row_procs. */
convey_t* convey_new_twohop(size_t capacity, size_t row_procs, const convey_alc8r_t* alloc,
                            uint64_t options)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((deprecated))
#endif
    ;

/** Asynchronous conveyor whose items take `order` hops (1, 2 or 3; Maley & DeVinney 2019,
 * sec. 4.3). For orders 2 and 3 the first (and for 3 the last) hop stays within a group of
 *  `n_local` consecutive PEs, which must divide the PE count. `capacity`: bytes per
 *  buffer (items plus routing tags). `n_buffers`: buffers per link, a power of two. */
convey_t* convey_new_tensor(size_t capacity, int order, size_t n_local, size_t n_buffers,
                            const convey_alc8r_t* alloc, uint64_t options);

/** Elastic tensor conveyor (Maley & DeVinney 2019, sec. 4.4): items of 0 to `monster_bytes` bytes;
 *  those that do not fit in a buffer of `buffer_bytes` travel separately ("monster"
 *  items, any size including above 2^31 bytes) but stay FIFO with the small ones. */
convey_t* convey_new_etensor(size_t buffer_bytes, size_t monster_bytes, int order, size_t n_local,
                             size_t n_buffers, const convey_alc8r_t* alloc, uint64_t options);

/* ---- Methods ---- */

/* convey_push, convey_pull and convey_apull are inline (static inline, in
 * convoy/convey_inline.h) unless CONVOY_NO_INLINE is defined: their common case is a few
 * loads and a copy over the conveyor's view (convoy/convey_view.h); every other case calls
 * the library, which does the whole call. The library also exports them as functions, for objects compiled
 * against another convey.h. */
#if defined(CONVOY_NO_INLINE) || defined(CONVOY_LIBCONVEY_SOURCE)
#define CONVOY_HOT_
#else
#define CONVOY_HOT_ static inline
#endif

/** DORMANT -> WORKING, collective. Sets the item size (> 0) and the alignment of
 *  pointers from apull/epull: `align` if it is a power of two dividing `item_bytes`
 *  and at most CONVEY_MAX_ALIGN, else the largest such power of two. Returns convey_OK
 *  or a negative code (STATE, ZERO, OFLO: item larger than a buffer). */
int convey_begin(convey_t* c, size_t item_bytes, size_t align);

/** Copies `item` (item_bytes) into the conveyor for `pe`. WORKING only. Returns OK, FAIL
 *  (no room: advance, pull, retry) or negative (STATE, RANGE). Never allocates. */
CONVOY_HOT_ int convey_push(convey_t* c, const void* item, int64_t pe);

/** Elastic push of `bytes` bytes (0 allowed, up to the item bound: convey_new_elastic's
 *  item_bound; etensor: a buffer's worth, or monster_bytes). As convey_push(); negative
 *  RIGID on a non-elastic conveyor, OFLO above the bound (nothing is moved). */
int convey_epush(convey_t* c, size_t bytes, const void* item, int64_t pe);

/** Copies the next delivered item into `item` and its source into `*from` (if not
 *  NULL). Legal unless DORMANT. Returns OK, FAIL (nothing ready now) or negative; on an
 *  elastic conveyor MISFIT when the next item's size is not item_bytes (it stays first,
 *  for epull). */
CONVOY_HOT_ int convey_pull(convey_t* c, void* item, int64_t* from);

/** As convey_pull(), returning a pointer aligned as set by begin, valid until the next
 *  pull or unpull; NULL on failure. Rigid tensor, twohop and mesh conveyors give a pointer
 *  into the delivered buffer when it is aligned, else a copy. */
CONVOY_HOT_ void* convey_apull(convey_t* c, int64_t* from);

/** Elastic pull: fills `*result` (size, aligned pointer valid until the next pull or
 *  unpull, source). Returns OK, FAIL (also in DORMANT, with result->data NULL, as bale),
 *  or negative (RIGID on a non-elastic conveyor). */
int convey_epull(convey_t* c, convey_item_t* result);

/** Puts back the most recently pulled item; it is pulled again next. Returns OK, or FAIL
 *  if there is nothing to put back (no successful pull since the last pull, unpull or
 *  advance, or COMPLETE); negative in DORMANT. */
int convey_unpull(convey_t* c);

/** Makes progress; `done` declares that this PE will push no more items until reset
 *  (after advance(true), a false `done` is taken as true, as bale does: refusing it could
 *  deadlock the other PEs). Returns OK, NEAR (CLEANUP: nothing more will arrive, items
 *  remain to pull) or DONE (COMPLETE); negative on misuse (STATE in DORMANT).
 *  Nonblocking, except for simple conveyors (collective while WORKING or ENDGAME). */
int convey_advance(convey_t* c, bool done);

/** COMPLETE -> DORMANT, collective; does nothing in DORMANT. Returns OK or negative. */
int convey_reset(convey_t* c);

/** Destroys the conveyor, collective; legal in DORMANT or COMPLETE. free(NULL) is OK.
 *  Returns OK or negative (the conveyor is then still alive). */
int convey_free(convey_t* c);

/** Sets the codec for compression (NULL: none), collective, DORMANT only. Returns OK,
 *  FAIL if the conveyor is not THRIFTY or the codec has no plan (as bale), negative on
 *  misuse (STATE; NOFUNC: a plan without compress or decompress). */
int convey_set_codec(convey_t* c, const convey_codec_t* codec, void* arg);

/** The item size given to begin; 0 when DORMANT or c is NULL. */
size_t convey_item_size(convey_t* c);

/** OR of enum convey_feature; 0 for NULL. */
uint64_t convey_features(convey_t* c);

/** The statistic `which` (enum convey_statistic, plus convey_CUMULATIVE); -1 if `which`
 *  is out of range, 0 for NULL. */
int64_t convey_statistic(convey_t* c, int which);

/** A description of any return value (`c` may be NULL). */
const char* convey_error_string(convey_t* c, int error);

#ifdef __cplusplus
}
#endif

/* The inline calls and the library calls behind them. */
#include "convoy/convey_inline.h"

#endif /* CONVEY_H */
