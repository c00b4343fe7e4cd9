/**
 * @file
 * convoy's C extensions to convey.h: introspection that bale does not offer.
 * Valid C99 and C++. None of these functions is collective; all accept NULL.
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

#ifdef __cplusplus
}
#endif

#endif /* CONVOY_CONVEY_EXT_H */
