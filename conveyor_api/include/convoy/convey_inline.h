/* convoy/convey_inline.h: the inline push, pull and apull of convey.h over the conveyor's
 * view (convoy/convey_view.h), and the library calls behind them. convey.h includes it at
 * its end; included first, it includes convey.h. */
#ifndef CONVOY_CONVEY_INLINE_H
#define CONVOY_CONVEY_INLINE_H

#include <stdint.h>

#include "../convey.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The inline calls (convoy/convey_view.h) ---- */

/** The library's whole calls behind the inline ones, named by the view's version. */
int convoy_v1_push(convey_t* c, const void* item, int64_t pe);
int convoy_v1_lane_full(convey_t* c, uint32_t lane);
int convoy_v1_pull(convey_t* c, void* item, int64_t* from);
void* convoy_v1_apull(convey_t* c, int64_t* from);

#if !defined(CONVOY_NO_INLINE) || defined(CONVOY_LIBCONVEY_SOURCE)
#ifdef __cplusplus
#define CONVOY_RCAST_(T, x) reinterpret_cast<T>(x)
#define CONVOY_SCAST_(T, x) static_cast<T>(x)
#else
#define CONVOY_RCAST_(T, x) ((T)(x))
#define CONVOY_SCAST_(T, x) ((T)(x))
#endif

/* An item of `n` bytes: the common sizes as fixed-size moves (the same sizes as the
   library's own copy, aggregation::copy_item). */
static inline void convoy_copy_(void* to, const void* from, size_t n) {
#if defined(__GNUC__)
  /* Hides both ends from GCC's bounds analysis, which otherwise warns about the larger
     sizes' branches when this is inlined for a smaller item. */
  __asm__("" : "+r"(to), "+r"(from));
#endif
  if (n == 8) {
    memcpy(to, from, 8);
    return;
  }
  switch (n) {
    case 4:
      memcpy(to, from, 4);
      return;
    case 12: /* index-gather's reply: a 4-byte slot and an 8-byte value */
      memcpy(to, from, 12);
      return;
    case 16:
      memcpy(to, from, 16);
      return;
    case 24:
      memcpy(to, from, 24);
      return;
    case 32:
      memcpy(to, from, 32);
      return;
    default:
      memcpy(to, from, n);
      return;
  }
}

static inline convey_view_t* convoy_view_(convey_t* c) {
  return CONVOY_RCAST_(convey_head_t*, c)->view;
}

/* The common case of a push toward `pe` over view `v`: reserves a record in the lane toward
   the first hop (bookkeeping first: the caller's copies may alias anything), writes its
   8-byte tag store and returns where the payload goes, with the lane and whether it is now
   full; NULL when the library must do the call. */
static inline unsigned char* convoy_reserve_(convey_view_t* v, int64_t pe, uint32_t* lane,
                                             int* full) {
  if (v->push_ok && CONVOY_SCAST_(uint64_t, pe) < v->n_pes) {
    const convey_hop_t h = v->hops[pe];
    convey_lane_t* const l = v->lanes + h.lane;
    const uint32_t used = l->used;
    if (used <= l->limit) {
      unsigned char* const p = l->buf + used;
      const uint64_t tag = h.tag;
      const uint32_t tag_bytes = l->tag_bytes;
      const uint32_t next = used + l->record_bytes;
      *full = next > l->limit;
      *lane = h.lane;
      l->used = next;
      ++l->items;
      ++v->pushes;
      memcpy(p, &tag, sizeof tag);
      return p + tag_bytes;
    }
  }
  return NULL;
}

static inline int convoy_push_inline_(convey_t* c, const void* item, int64_t pe) {
  if (c && item) {
    convey_view_t* const v = convoy_view_(c);
    const size_t n = v->item_bytes;
    uint32_t lane;
    int full;
    unsigned char* const p = convoy_reserve_(v, pe, &lane, &full);
    if (p) {
      convoy_copy_(p, item, n);
      return full ? convoy_v1_lane_full(c, lane) : convey_OK;
    }
  }
  return convoy_v1_push(c, item, pe);
}

/* The next item of the delivery window, or NULL (then the library does the call). */
static inline const unsigned char* convoy_take_(convey_view_t* v, int64_t* from) {
  convey_window_t* const w = &v->window;
  const unsigned char* const p = w->cur;
  int src;
  if (p >= w->end) return NULL;
  src = w->from >= 0 ? w->from : w->source_of_tag[p[-1]];
  w->cur = p + w->stride;
  w->pulled = true;
  ++v->pulls;
  if (from) *from = src;
  return p;
}

static inline int convoy_pull_inline_(convey_t* c, void* item, int64_t* from) {
  if (c && item) {
    convey_view_t* const v = convoy_view_(c);
    const unsigned char* const p = convoy_take_(v, from);
    if (p) {
      convoy_copy_(item, p, v->item_bytes);
      return convey_OK;
    }
  }
  return convoy_v1_pull(c, item, from);
}

static inline void* convoy_apull_inline_(convey_t* c, int64_t* from) {
  if (c) {
    const convey_head_t* const h = CONVOY_RCAST_(const convey_head_t*, c);
    const unsigned char* const cur = h->view->window.cur;
    if ((CONVOY_RCAST_(uintptr_t, cur) & h->align_mask) == 0) {
      const unsigned char* const p = convoy_take_(h->view, from);
      if (p) return CONVOY_RCAST_(void*, CONVOY_RCAST_(uintptr_t, p));
    }
  }
  return convoy_v1_apull(c, from);
}

#if !defined(CONVOY_NO_INLINE) && !defined(CONVOY_LIBCONVEY_SOURCE)
static inline int convey_push(convey_t* c, const void* item, int64_t pe) {
  return convoy_push_inline_(c, item, pe);
}
static inline int convey_pull(convey_t* c, void* item, int64_t* from) {
  return convoy_pull_inline_(c, item, from);
}
static inline void* convey_apull(convey_t* c, int64_t* from) {
  return convoy_apull_inline_(c, from);
}
#endif
#endif

#ifdef __cplusplus
}
#endif

#endif /* CONVOY_CONVEY_INLINE_H */
