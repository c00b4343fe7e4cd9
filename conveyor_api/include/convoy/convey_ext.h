/**
 * @file
 * convoy's C extensions to convey.h: introspection that bale does not offer, and the
 * one-sided append (convoy_append_*). Valid C99 and C++. The introspection functions are not
 * collective and accept NULL.
 */
#ifndef CONVOY_CONVEY_EXT_H
#define CONVOY_CONVEY_EXT_H

#include <stddef.h>
#include <stdint.h>

#include <convey.h>

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
