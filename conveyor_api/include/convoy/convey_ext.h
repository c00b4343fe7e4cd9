/**
 * @file
 * convoy's C extensions to convey.h: introspection that bale does not offer, combining,
 * and the one-sided append (convoy_append_*). Valid C99 and C++. The introspection
 * functions are not collective and accept NULL.
 */
#ifndef CONVOY_CONVEY_EXT_H
#define CONVOY_CONVEY_EXT_H

#include <convey.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The kind of conveyor: "simple", "tensor", "etensor" or "mesh"; "" for NULL. */
const char* convoy_convey_kind(convey_t* c);

/** Hops per item: 1 for simple, the order for tensor kinds, the stage count for a mesh. */
int convoy_convey_order(convey_t* c);

/** PEs per local group used by the route (1 for simple and order 1). */
size_t convoy_convey_n_local(convey_t* c);

/** Bytes per buffer the conveyor was built with. */
size_t convoy_convey_buffer_bytes(convey_t* c);

/** Buffer memory held now / at most on this PE (bytes), as counted by the library. */
size_t convoy_convey_memory_bytes(convey_t* c);
size_t convoy_convey_max_memory_bytes(convey_t* c);

/** Number of PEs. */
int64_t convoy_convey_n_pes(convey_t* c);

/** This PE's index (its rank in MPI_COMM_WORLD). */
int64_t convoy_convey_my_pe(convey_t* c);

/* ---- Counters (docs/c-api.md, "Counters"; CAPI-110..113) ----
 *
 * Per stage and per link (this PE and one peer on one stage: what it sent there and what
 * arrived from there), and per PE. Local, not collective, legal in every state. The
 * structs grow at their end only: set `size` to sizeof the struct you have; the library
 * fills the fields it knows that fit in `size`, and sets `size` to the bytes it filled.
 * `cumulative`: nonzero for the conveyor's lifetime, 0 since the last convey_begin.
 * Errors: convey_error_NULL (c or out NULL), convey_error_RANGE (stage or link out of
 * range), convey_error_USAGE (size smaller than the first version of the struct). */

/** One link's counters. Bytes are buffer bytes, headers included. */
/* NOLINTNEXTLINE(modernize-use-using): a C99 header */
typedef struct convoy_link_stats {
  size_t size;                  /**< in: sizeof(struct convoy_link_stats); out: bytes filled */
  int64_t peer;                 /**< the other PE */
  uint64_t items_sent;          /**< items put into buffers toward the peer */
  uint64_t bytes_sent;          /**< bytes of the buffers posted to the peer */
  uint64_t buffers_full;        /**< buffers posted because the next item did not fit */
  uint64_t buffers_partial;     /**< buffers posted partly filled (flush, steady, last) */
  uint64_t credit_stalls;       /**< times a buffer toward the peer was wanted, none free */
  uint64_t items_received;      /**< items in buffers that arrived from the peer */
  uint64_t bytes_received;      /**< bytes of those buffers */
  uint64_t buffers_received;    /**< buffers that arrived from the peer */
  uint64_t combined;            /**< combining: items folded away toward the peer */
  uint64_t combine_stops;       /**< combining: buffers toward the peer the gate stopped */
  double combine_ns_per_record; /**< combining: a record's examination, ns (0: none yet) */
  double combine_saved_ns;      /**< combining: what a folded record is worth, ns */
} convoy_link_stats_t;

/** This PE's counters. */
/* NOLINTNEXTLINE(modernize-use-using): a C99 header */
typedef struct convoy_pe_stats {
  size_t size;                /**< in: sizeof(struct convoy_pe_stats); out: bytes filled */
  uint64_t begins;            /**< begin/reset cycles started */
  uint64_t pushes;            /**< as convey_statistic(convey_PUSHES) */
  uint64_t pulls;             /**< as convey_statistic(convey_PULLS) */
  uint64_t advances;          /**< advance calls */
  uint64_t items_forwarded;   /**< items this PE routed on for others */
  uint64_t credit_stalls;     /**< all links */
  uint64_t buffers_sent;      /**< all stages */
  uint64_t bytes_sent;        /**< all stages, headers included */
  uint64_t buffers_received;  /**< all stages */
  uint64_t memory_high_water; /**< most buffer memory seen, bytes */
  double advance_seconds;     /**< time inside advance */
  double cycle_seconds;       /**< time from each begin to its cycle's end */
  uint64_t combined;          /**< combining: items folded away on this PE, all lanes */
  uint64_t combine_stops;     /**< combining: buffers whose combining the gate stopped */
  double combine_record_ns;   /**< combining: handling a record in the conveyor, ns */
  double combine_use_ns;      /**< combining: the program's time per item pulled, ns */
} convoy_pe_stats_t;

/** Stages of the conveyor's route (>= 1), or convey_error_NULL. */
int convoy_convey_n_stages(convey_t* c);

/** Links of `stage` on this PE (>= 0), or convey_error_NULL / convey_error_RANGE. */
int convoy_convey_n_links(convey_t* c, int stage);

/** Fills *out with link `link` of `stage`. Returns convey_OK or a negative code. */
int convoy_convey_link_stats(convey_t* c, int stage, int link, int cumulative,
                             convoy_link_stats_t* out);

/** Fills *out with this PE's counters. Returns convey_OK or a negative code. */
int convoy_convey_pe_stats(convey_t* c, int cumulative, convoy_pe_stats_t* out);

/* ---- Combining (CAPI-120..123) ---- */

/** Folds the value at `from` into the value at `into` (value_bytes each, not necessarily
 * aligned). Must be associative and commutative, and must not longjmp out. */
typedef void (*convoy_combine_fn)(void* into, const void* from);

/** Combining on a streaming conveyor (mesh, tensor; not simple or elastic ones): from the
 * next convey_begin on, items with the same destination PE and equal key bytes (key_bytes
 * at key_offset) are merged while they wait in a send buffer, at the source and at every
 * PE they pass through, by `combine` on their values (value_bytes at value_offset); the
 * merged item keeps the key and the other bytes of the item that was there first.
 * Semantics while set: what a PE pulls is not in push order (no FIFO per pair), `from` of a
 * pulled item is unspecified, and every pushed value is folded exactly once into exactly
 * one item its destination pulls (the sum over the pulled values is the sum over the pushed
 * ones). `combine` NULL turns combining off (the other arguments are then ignored).
 * Not collective, but every PE must set the same parameters before the same begin.
 * Legal in DORMANT only (before the first begin, or after a reset). convey_begin fails
 * with a negative code if the key or the value lies beyond the item.
 * Returns convey_OK, convey_error_NULL (c NULL), convey_error_STATE (not DORMANT),
 * convey_error_USAGE (a simple or elastic conveyor; key_bytes or value_bytes 0 or above
 * UINT32_MAX; the key and the value overlap; one of the library's sums below on values of
 * another size). */
int convoy_convey_set_combine(convey_t* c, size_t key_offset, size_t key_bytes, size_t value_offset,
                              size_t value_bytes, convoy_combine_fn combine);

/** Sums for convoy_convey_set_combine: 64-bit integers (signed or unsigned, wrapping), 32-bit
 * integers, doubles. Passed as `combine` with value_bytes 8, 4 and 8, the library folds with
 * its own inlined addition instead of calling through the pointer (any other value_bytes:
 * convey_error_USAGE). */
void convoy_combine_add_u64(void* into, const void* from);
void convoy_combine_add_u32(void* into, const void* from);
void convoy_combine_add_double(void* into, const void* from);

/* ---- Broadcast (CAPI-130..133, CAPI-137) ---- */

/** Collective like convey_new_tensor: a mesh conveyor (CONVOY_MESH, default the machine's
 * nodes and cores) whose items are broadcasts: each goes to every PE, the sender included,
 * along a tree over the mesh, outermost dimension first (each item crosses to every other
 * node once, then spreads on each node). `capacity`: bytes of items per buffer (> 0, at
 * most 1 GiB), or SIZE_MAX for the broadcast default (256 KiB buffers while a PE's lanes
 * times n_buffers fit in 4 MiB, else smaller; CONVOY_BUFFER_BYTES or the tuning file's
 * size win; convoy_convey_buffer_bytes tells); `n_buffers`: buffers per link, a power of
 * two; options as convey_new
 * (PROGRESS: steady; DYNAMIC; QUIET; ALERT). convey_push returns convey_error_USAGE on it;
 * send with convoy_convey_broadcast. Returns NULL (one message) on a bad argument. */
convey_t* convoy_convey_new_broadcast(size_t capacity, size_t n_buffers,
                                      const convey_alc8r_t* alloc, uint64_t options);

/** Not collective. WORKING only: sends `item` (convey_begin's item_size bytes) to every PE,
 * this one included; each PE pulls it once, with `from` = this PE, in this PE's order.
 * Returns convey_OK, convey_FAIL (some buffer toward a first hop is full and nothing was
 * sent: advance and retry), convey_error_NULL (c or item NULL), convey_error_STATE (not
 * WORKING), convey_error_USAGE (not a broadcast conveyor). */
int convoy_convey_broadcast(convey_t* c, const void* item);

/** Not collective. WORKING only: `count` items stored one after another (item_size bytes
 * each) sent to every PE as that many convoy_convey_broadcast calls in order, copied into
 * the buffers a block at a time. Returns the number sent from the front (0 .. count: fewer
 * when some buffer toward a first hop is full; advance and send the rest),
 * convey_error_NULL (c NULL, or items NULL with count > 0), convey_error_STATE (not
 * WORKING), convey_error_USAGE (count < 0, or not a broadcast conveyor). */
int64_t convoy_convey_broadcast_batch(convey_t* c, const void* items, int64_t count);

/* ---- Bulk pull (CAPI-134..136) ---- */

/** Items pulled at once by convoy_convey_pull_batch: `count` items of convey_begin's
 * item_size bytes, item i at (const char*)items + i * stride, not necessarily aligned
 * (copy it out, e.g. with memcpy); convoy_batch_from(b, i) is its source PE. Valid until
 * the next pull, unpull, advance, reset or free of the conveyor. */
/* NOLINTNEXTLINE(modernize-use-using): a C99 header */
typedef struct convoy_batch {
  const void* items;
  size_t stride;
  int64_t count;
  int64_t from;                 /* >= 0: the source of every item */
  const int32_t* source_of_tag; /* from < 0: item i's source by the byte before it */
} convoy_batch_t;

/** The source PE of item i of a batch. */
static inline int64_t convoy_batch_from(const convoy_batch_t* b, int64_t i) {
  const unsigned char* const item = (const unsigned char*)b->items + (size_t)i * b->stride;
  return b->from >= 0 ? b->from : b->source_of_tag[item[-1]];
}

/** Pulls up to `max` items at once: the rest of a delivered buffer, or one item where items
 * arrive one by one. As that many convey_pull calls (convey_unpull puts back the last).
 * Returns the number of items (> 0) with *out set, convey_FAIL (0) if none is ready,
 * convey_error_NULL (c or out NULL), convey_error_STATE (DORMANT), convey_error_USAGE
 * (max < 1), convey_error_MISFIT (an elastic conveyor's next item is not item_size bytes:
 * pull it with convey_epull). */
int64_t convoy_convey_pull_batch(convey_t* c, convoy_batch_t* out, int64_t max);

/* ---- One-sided append (Dinan & Flajslik 2014; CAPI-100..106) ----
 *
 * Every PE owns one append buffer of the same size; any PE appends bytes to any PE's
 * buffer without the owner taking part (an atomic fetch-and-add on the owner's offset
 * counter reserves the space, a put writes it: MPI-3 passive-target RMA). Usable with no
 * conveyor. MPI: over MPI_COMM_WORLD; initialized on first use if the program has not
 * (as for conveyors). Not thread-safe: one thread per PE calls these functions.
 *
 * Return values as in convey.h: positive or >= 0 success, negative = misuse or failure,
 * an enum convey_error code (convey_error_string(NULL, code) names it). Misuse prints one
 * message per code and buffer on the PE that made it, unless created with
 * convey_opt_QUIET; a call on a freed or never-created handle returns convey_error_STATE. */

/** A handle to an append buffer: a value, copied freely; {0} is never valid. */
/* NOLINTNEXTLINE(modernize-use-using): a C99 header */
typedef struct convoy_append {
  uint64_t id;
} convoy_append_t;

/** Collective: creates an append buffer of `bytes_per_pe` bytes on every PE (the same
 * value on every PE: checked). `options`: 0 or convey_opt_QUIET. Returns 1 and sets *out;
 * convey_error_NULL if out is NULL, convey_error_USAGE if the sizes differ between PEs (on
 * every PE), convey_error_ALLOC or convey_error_COMMS if memory or MPI failed. */
int convoy_append_create(convoy_append_t* out, size_t bytes_per_pe, uint64_t options);

/** Not collective: appends `len` bytes from `bytes` to the buffer of PE `pe`. Returns the
 * number of bytes appended: len, fewer if the target's buffer fills up (the first bytes are
 * kept: truncation), 0 if it is full or len is 0 (no communication then). Negative:
 * convey_error_STATE (freed handle), convey_error_RANGE (pe out of range),
 * convey_error_NULL (bytes NULL with len > 0), convey_error_COMMS (MPI failed). Blocks for
 * three one-sided round trips at most; the bytes are in place at the target on return. */
int64_t convoy_append_push(convoy_append_t a, int64_t pe, const void* bytes, size_t len);

/** Local: what has arrived in this PE's buffer. Sets *data (start of the buffer), *bytes
 * (bytes appended, at most the capacity) and *n_appends (completed pushes that wrote at
 * least one byte); any of them may be NULL. Returns 1 if every push that reserved space
 * here has completed (data[0, bytes) is valid, e.g. after a barrier that follows the
 * pushes), 0 if some push is still in flight (call again), negative on misuse. */
int convoy_append_view(convoy_append_t a, const void** data, size_t* bytes, int64_t* n_appends);

/** Local: bytes pushes asked to append here since the last reset (the offset counter,
 * Dinan & Flajslik's shmem_oct_get); above the capacity when pushes were truncated. Negative on
 * misuse. */
int64_t convoy_append_offset(convoy_append_t a);

/** Collective: waits for every PE, empties every buffer, waits again (pushes of the next
 * cycle come after the reset everywhere). Returns 1, or a negative code. */
int convoy_append_reset(convoy_append_t a);

/** Collective: frees the buffer; the handle (and every copy of it) is invalid afterwards.
 * Returns 1, or a negative code (convey_error_STATE if already freed). */
int convoy_append_free(convoy_append_t a);

#ifdef __cplusplus
}
#endif

#endif /* CONVOY_CONVEY_EXT_H */
