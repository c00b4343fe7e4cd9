/**
 * @file
 * Allocators for a conveyor's large buffers (bale-compatible, Maley & DeVinney 2019, sec. 4.6).
 *
 * A constructor that is given a non-NULL `const convey_alc8r_t*` copies the structure
 * (it need not stay in scope) and obtains the conveyor's large internal buffers through
 * it instead of the library's own allocation. Every `grab` and `free` is called
 * collectively (on every PE, in the same order, with the same sizes), and buffers are
 * released in last-in first-out order, so that an allocator carving a preallocated
 * symmetric region needs no synchronization.
 *
 * What comes from it:
 * - simple conveyors: their send and receive buffers;
 * - tensor, mesh and etensor conveyors: the engine's link buffers that go through MPI,
 *   in ONE grab per conveyor (the largest size any PE needs, so equal on every PE) made
 *   when the engine is built, sliced into 64-byte aligned buffers (the allocator need not
 *   align); links to PEs on the same node that use node shared memory (the default
 *   transport; CONVOY_TRANSPORT=mpi sends every link through MPI) keep their buffers in
 *   an MPI shared-memory window, which other processes map and which therefore cannot
 *   come from an allocator;
 * - etensor conveyors: the two monster buffers (outgoing and incoming), grabbed after the
 *   link buffers and released before them.
 *
 * When: at construction, released by convey_free; with convey_opt_DYNAMIC, at every
 * convey_begin, released by the convey_reset of that cycle (so nothing is held between
 * cycles), or by convey_free of a conveyor left COMPLETE. `tag` is a source file name and
 * `value` a line number of the library.
 */
#ifndef CONVEY_ALC8R_H
#define CONVEY_ALC8R_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An allocator passed to conveyor constructors. */
typedef struct convey_alc8r {
  /** Passed as the first argument of `grab` and `free`. */
  void* alc8r;
  /** Returns `size` bytes (NULL on failure); `tag` and `value` name the call site
   *  (a file name and a line number) for diagnostics. */
  void* (*grab)(void* alc8r, size_t size, const char* tag, uint64_t value);
  /** Releases memory returned by `grab`. */
  void (*free)(void* alc8r, void* ptr);
} convey_alc8r_t;

#ifdef __cplusplus
}
#endif

#endif /* CONVEY_ALC8R_H */
