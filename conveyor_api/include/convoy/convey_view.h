/**
 * @file
 * The conveyor's inline view (version CONVEY_VIEW_VERSION): what convey.h's inline
 * `convey_push`, `convey_pull` and `convey_apull` read and write. Valid C99; included by
 * convey.h, not meant for programs to use directly.
 *
 * Every convey_t begins with a convey_head_t. Its `view` points at the hot state of the
 * conveyor's engine (termination::hot_state: the same bytes, checked offset by offset when
 * libconvey is compiled), or, for conveyors and states without an inline path, at a view
 * that sends every call to the library (push_ok false, an empty window). The library keeps
 * `view` current across begin and reset (dynamic conveyors build their engine in begin).
 *
 * An inline push may proceed when `push_ok` is true, `pe` is below `n_pes` and the lane
 * toward the first hop has `used <= limit`: it writes an 8-byte tag store at `buf + used`
 * (the payload overwrites its upper bytes), the item at `buf + used + tag_bytes`, adds
 * `record_bytes` to `used`, counts the item in the lane and in `pushes`, and calls
 * convoy_v1_lane_full() once `used > limit`. An inline pull may proceed while
 * `window.cur < window.end`: the item is at `cur` (`item_bytes` bytes), its source is
 * `window.from`, or, when that is negative, `source_of_tag[cur[-1]]`; it moves `cur` by
 * `stride`, sets `pulled` and counts the pull. Everything else goes to the library's
 * convoy_v1_* functions, which do the whole call with every check and code.
 *
 * biconvey.h's inline `biconvey_push` may proceed when the window has room
 * (`tail - head <= mask`) and the query conveyor's view allows a push as above: the record
 * is the tag store, the 4-byte slot `tail & mask`, then the query; it clears `filled[slot]`
 * and moves `tail`. Its inline `biconvey_pull` may proceed while `head != tail` and
 * `filled[head & mask]`: it copies the reply, clears the mark and moves `head`.
 *
 * The slow-path functions carry the view's version in their names, so a program compiled
 * against another version of this layout fails to link instead of misreading it.
 */
#ifndef CONVOY_CONVEY_VIEW_H
#define CONVOY_CONVEY_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONVEY_VIEW_VERSION 1

/** The buffer being filled toward one out-link (aggregation::send_lane). */
typedef struct convey_lane {
  unsigned char* buf;
  uint32_t used;         /**< bytes written, header included */
  uint32_t limit;        /**< a rigid record may start while used <= limit */
  uint32_t record_bytes; /**< tag + payload */
  uint32_t tag_bytes;
  uint64_t items; /**< records this cycle */
} convey_lane_t;

/** Where an item to one destination goes first (router::first_hop). */
typedef struct convey_hop {
  uint32_t lane;
  uint32_t tag;
} convey_hop_t;

/** The delivered buffer being pulled (aggregation::delivery_window). */
typedef struct convey_window {
  const unsigned char* cur; /**< payload of the next item; cur >= end: none */
  const unsigned char* end;
  size_t stride;
  const int32_t* source_of_tag; /**< when from < 0: a one-byte tag before each payload */
  int from;
  int in_link;
  bool pulled;
} convey_window_t;

/** The engine's hot state (termination::hot_state). */
typedef struct convey_view {
  bool push_ok;
  unsigned n_pes;
  size_t item_bytes;
  convey_lane_t* lanes;
  const convey_hop_t* hops;
  convey_window_t window;
  uint64_t pushes; /**< this cycle */
  uint64_t pulls;
} convey_view_t;

/** The first bytes of every convey_t. */
typedef struct convey_head {
  convey_view_t* view;
  size_t align_mask; /**< apull's alignment (set by begin) minus one */
} convey_head_t;

/** A biconveyor's inline state (convoy::biconveyor_hot): the query conveyor's view and
 *  the reorder window. A query takes slot `tail & mask` and travels as an item of
 *  4 + query_bytes bytes, the slot first; its reply arrives at `ring + slot * reply_bytes`
 *  and sets `filled[slot]`. */
typedef struct biconvey_view {
  convey_view_t* queries; /**< NULL while the query conveyor has no engine */
  uint64_t head;          /**< next reply to pull */
  uint64_t tail;          /**< next query's slot */
  uint64_t mask;          /**< window slots - 1 */
  size_t query_bytes;
  size_t reply_bytes;
  unsigned char* ring;
  unsigned char* filled;
} biconvey_view_t;

/** The first bytes of every biconvey_t. */
typedef struct biconvey_head {
  biconvey_view_t* view;
} biconvey_head_t;

#ifdef __cplusplus
}
#endif

#endif /* CONVOY_CONVEY_VIEW_H */
