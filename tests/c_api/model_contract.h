/* The conveyor contract as a per-PE model for the MPI model test (model_test.c), written
 * from Maley & DeVinney 2019, sec. 3 and bale's convey.h — bale's codes, by name. Each m_*
 * function compares the result of one call on this PE with what the contract allows there (every
 * allowed outcome where it leaves freedom), applies its effect, and returns NULL or a
 * description of the discrepancy (conveyor_api/README.md, CAPI-60..CAPI-66).
 *
 * Items: the k-th item from PE s to PE d in cycle c of conveyor instance `salt` has size
 * m_item_size(...) (elastic; rigid: the cycle's item size) and bytes h_fill(m_item_seed(...)),
 * so the receiver checks source, size, every byte, exactly once and FIFO per pair alone. */
#ifndef CONVOY_C_API_MODEL_CONTRACT_H
#define CONVOY_C_API_MODEL_CONTRACT_H

#include <convey.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { M_DORMANT, M_WORKING, M_ENDGAME, M_CLEANUP, M_COMPLETE } m_state;

typedef struct {
  int64_t n_pes, me;
  uint64_t salt;     /* conveyor instance */
  int elastic;       /* convey_ELASTIC */
  size_t bound;      /* elastic: largest item */
  size_t item_bytes; /* this cycle */
  size_t align;      /* effective alignment of apull/epull */
  m_state st;
  int cycle;
  int said_done;                  /* advance(true) called in this cycle */
  int64_t* sent;                  /* per destination, this cycle */
  int64_t* recv;                  /* per source: items pulled this cycle (the next seq expected) */
  int can_unpull;                 /* 0 no, 1 yes, 2 either (after a pull that failed) */
  int64_t last_src;               /* source of the item unpull puts back */
  int pending;                    /* an unpulled item (from last_src) must be pulled next */
  int64_t pushes, pulls, unpulls; /* this cycle: convey_statistic */
} m_model;

void m_init(m_model* m, int64_t n_pes, int64_t me, uint64_t salt, int elastic, size_t bound);
void m_destroy(m_model* m);
/* The effective alignment begin gives for (item_bytes, align) (docs/c-api.md, CAPI-7). */
size_t m_effective_align(size_t item_bytes, size_t align);
uint64_t m_item_seed(const m_model* m, int64_t src, int64_t dst, int64_t k);
size_t m_item_size(const m_model* m, int64_t src, int64_t dst, int64_t k);
/* Size of the next item this PE would push to `dst`. */
size_t m_next_size(const m_model* m, int64_t dst);

const char* m_begin(m_model* m, size_t item_bytes, size_t align, int rc);
const char* m_push(m_model* m, int64_t pe, int null_item, int rc);
const char* m_epush(m_model* m, int64_t pe, size_t bytes, int null_item, int rc);
/* pull/apull/epull: rc is convey_OK with (data, bytes, from) the item, or the failure. */
const char* m_pull(m_model* m, int kind, int null_out, int rc, const void* data, size_t bytes,
                   int64_t from);
const char* m_unpull(m_model* m, int rc);
/* advance: `peers_done`/`owed` are filled by the caller (one-sided reads) when rc is NEAR
 * or DONE: peers_done = every PE has declared done in this cycle; owed = items pushed to
 * this PE and not pulled. */
const char* m_advance(m_model* m, int done, int rc, int peers_done, int64_t owed);
const char* m_reset(m_model* m, int rc);
const char* m_free_illegal(const m_model* m, int rc);
/* Statistics and item_size against the model. */
const char* m_queries(const m_model* m, convey_t* c);

enum { M_PULL = 0, M_APULL = 1, M_EPULL = 2 };

#endif
