/* CAPI-11, CAPI-15. Allocators (convey_alc8r.h: used for the large buffers, collective, LIFO) and
 * compression (convey_codec.h: COMPRESS gives THRIFTY simple and tensor conveyors whose
 * off-node buffers go through the codec; a codec that declines sends the buffer as it was).
 * Run with an emulated layout of at least two nodes, e.g. CONVOY_EMULATE_NODES=2,2. */
#define _POSIX_C_SOURCE 200112L
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int64_t g_pes = 1;

/* ---- a LIFO-checking allocator ---- */
typedef struct {
  void* stack[64];
  int live, grabs, frees, lifo_errors;
} pool_t;

static void* pool_grab(void* a, size_t size, const char* tag, uint64_t value) {
  pool_t* p = a;
  void* mem = NULL;
  (void)tag;
  (void)value;
  if (p->live == 64 || posix_memalign(&mem, 64, size ? size : 1) != 0) return NULL;
  p->stack[p->live++] = mem;
  p->grabs++;
  return mem;
}

static void pool_free(void* a, void* ptr) {
  pool_t* p = a;
  if (p->live == 0 || p->stack[p->live - 1] != ptr)
    p->lifo_errors++;
  else
    p->live--;
  p->frees++;
  free(ptr);
}

/* Pushes n items of `sz` bytes (mostly constant bytes: small counters) and checks them. */
static void run(convey_t* c, size_t sz, long n, int elastic_monsters) {
  const int64_t P = g_pes, me = h_me;
  int64_t* sent = h_alloc(sizeof(int64_t) * (size_t)P);
  int64_t* recv = h_alloc(sizeof(int64_t) * (size_t)P);
  unsigned char* item = h_alloc(elastic_monsters ? 20000 : sz);
  long i = 0, iters = 0;
  int rc;
  H_EXPECT_RC(convey_begin(c, sz, 0), convey_OK);
  while ((rc = convey_advance(c, i == n)) != convey_DONE) {
    int64_t from;
    H_CHECK(rc > 0, "advance %d", rc);
    if (rc < 0) break;
    for (; i < n; i++) {
      const int64_t d = h_dest(me, i, P, 5);
      const size_t z = elastic_monsters && i % 10 == 0 ? 9000 + (size_t)i : sz;
      memset(item, 0, z);
      memcpy(item, &sent[d], sizeof sent[d] < z ? sizeof sent[d] : z);
      if ((elastic_monsters ? convey_epush(c, z, item, d) : convey_push(c, item, d)) != convey_OK)
        break;
      sent[d]++;
    }
    for (;;) {
      const unsigned char* p;
      int64_t k = 0;
      if (elastic_monsters) {
        convey_item_t e;
        if (convey_epull(c, &e) != convey_OK) break;
        p = e.data;
        from = e.from;
      } else {
        p = convey_apull(c, &from);
        if (!p) break;
      }
      memcpy(&k, p, sizeof k < sz ? sizeof k : sz);
      H_CHECK(from >= 0 && from < P &&
                  k == (int64_t)((uint64_t)recv[from] &
                                 (sz >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * sz)) - 1)),
              "item %lld from %lld: got %lld", (long long)recv[from], (long long)from,
              (long long)k);
      if (from >= 0 && from < P) recv[from]++;
    }
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "no termination");
      break;
    }
  }
  H_EXPECT_RC(convey_reset(c), convey_OK);
  free(sent);
  free(recv);
  free(item);
}

static void test_allocators(void) {
  pool_t pool;
  convey_alc8r_t a;
  convey_t* c;
  memset(&pool, 0, sizeof pool);
  a.alc8r = &pool;
  a.grab = pool_grab;
  a.free = pool_free;
  /* simple: the bulk exchange takes its send and receive buffers in one grab (AGG-50). */
  c = convey_new_simple(4096, &a, NULL, 0);
  H_CHECK(c && pool.live == 1, "simple: %d live buffers from the allocator", pool.live);
  if (c) run(c, 16, 3000, 0);
  H_EXPECT_RC(convey_free(c), convey_OK);
  H_CHECK(pool.live == 0 && pool.lifo_errors == 0, "simple: live %d, LIFO errors %d", pool.live,
          pool.lifo_errors);

  c = convey_new_simple(4096, &a, NULL, convey_opt_DYNAMIC);
  H_CHECK(c && pool.live == 0, "DYNAMIC grabbed at construction");
  if (c) {
    H_EXPECT_RC(convey_begin(c, 8, 0), convey_OK);
    H_CHECK(pool.live == 1, "DYNAMIC: %d live after begin", pool.live);
    while (convey_advance(c, true) != convey_DONE) {
    }
    H_EXPECT_RC(convey_reset(c), convey_OK);
    H_CHECK(pool.live == 0, "DYNAMIC: %d live after reset", pool.live);
  }
  H_EXPECT_RC(convey_free(c), convey_OK);

  /* Over more than one (emulated) node some links go through MPI, whose transport takes
     all its link buffers in one more grab (aggregation/README.md AGG-11; the emulated node
     boundary decides, AGG-60). */
  const char* nodes = getenv("CONVOY_EMULATE_NODES");
  const char* transport = getenv("CONVOY_TRANSPORT");
  /* The rma transport's rings live in an MPI window: it takes no block from a client's
     allocator (docs/aggregation-reference.md, "RMA transport"). */
  const int rma = transport && strcmp(transport, "rma") == 0;
  const int mpi_block = nodes && strchr(nodes, ',') && !rma ? 1 : 0;
  c = convey_new_etensor(1024, 20000, 1, 1, 2, &a, 0);
  H_CHECK(c && pool.live == 2 + mpi_block, "etensor: %d live buffers (2 monsters + %d)", pool.live,
          mpi_block);
  if (c) run(c, 8, 600, 1);
  H_EXPECT_RC(convey_free(c), convey_OK);
  H_CHECK(pool.live == 0 && pool.lifo_errors == 0 && pool.grabs == pool.frees,
          "etensor: live %d, LIFO errors %d", pool.live, pool.lifo_errors);
}

/* ---- codecs ---- */
static long g_compress_calls = 0, g_decompress_calls = 0;

static bool count_plan(const convey_cargo_t* cargo, convey_layout_t* layout) {
  return convey_standard_codec.plan(cargo, layout);
}
static size_t declining(const convey_cargo_t* cargo, void* link, size_t n, void* in, size_t limit,
                        void* out) {
  (void)cargo, (void)link, (void)n, (void)in, (void)limit, (void)out;
  g_compress_calls++;
  return 0;
}
static size_t counting(const convey_cargo_t* cargo, void* link, size_t n, void* in, size_t limit,
                       void* out) {
  g_compress_calls++;
  return convey_standard_codec.compress(cargo, link, n, in, limit, out);
}
static void counting_decompress(const convey_cargo_t* cargo, void* link, size_t n, size_t bytes,
                                void* in, void* out) {
  g_decompress_calls++;
  convey_standard_codec.decompress(cargo, link, n, bytes, in, out);
}

/* The standard codec's wire format, byte for byte (convey_codec.h): a bitmap of ceil(p/8)
 * bytes (bit k: byte k varies), the constant bytes once, then each packet's varying bytes;
 * 0 (send as is) for fewer than 2 packets, p == 0, no gain, or a result over `limit`. */
static size_t squeeze(size_t p, size_t n, unsigned char* in, size_t limit, unsigned char* out) {
  const convey_cargo_t cargo = {0, p, p, n, NULL};
  return convey_standard_codec.compress(&cargo, NULL, n, in, limit, out);
}

static void test_standard_format(void) {
  static const unsigned char want[16] = {0x02, 0x02, 0,   2,   3,   4,   5,   6,
                                         7,    8,    100, 200, 101, 201, 102, 202};
  unsigned char in[30], out[40], back[30];
  const convey_cargo_t cargo = {0, 10, 10, 3, NULL};
  size_t i, k;
  for (i = 0; i < 3; ++i) /* 3 packets of 10 bytes; bytes 1 and 9 vary */
    for (k = 0; k < 10; ++k)
      in[i * 10 + k] = (unsigned char)(k == 1 ? 100 + i : k == 9 ? 200 + i : k);
  H_CHECK(squeeze(10, 3, in, sizeof out, out) == 16 && memcmp(out, want, 16) == 0,
          "standard codec: wire format");
  memset(back, 0, sizeof back);
  convey_standard_codec.decompress(&cargo, NULL, 3, 16, out, back);
  H_CHECK(memcmp(back, in, sizeof in) == 0, "standard codec: round trip");
  H_CHECK(squeeze(10, 3, in, 16, out) == 16, "standard codec: exact limit");
  H_CHECK(squeeze(10, 3, in, 15, out) == 0, "standard codec: over the limit");
  H_CHECK(squeeze(10, 3, in, 1, out) == 0, "standard codec: bitmap over the limit");
  H_CHECK(squeeze(10, 1, in, sizeof out, out) == 0, "standard codec: one packet");
  H_CHECK(squeeze(0, 3, in, sizeof out, out) == 0, "standard codec: empty packets");
  /* p = 8, n = 2: v varying bytes give 9 + v bytes against 16 raw */
  for (k = 0; k < 16; ++k) in[k] = (unsigned char)(k < 8 || k >= 14 ? k % 8 : 50 + k);
  H_CHECK(squeeze(8, 2, in, sizeof out, out) == 15, "standard codec: 6 varying bytes");
  in[14] = 99;
  H_CHECK(squeeze(8, 2, in, sizeof out, out) == 0, "standard codec: no gain (16 of 16)");
}

static int64_t sum(int64_t v) {
  long long in = (long long)v, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return (int64_t)out;
}

/* `plain` and `squeezed` are the same kind, without and with COMPRESS; `multi`: the layout
 * has several nodes, so some buffers leave the node and are compressed. */
static void check_codecs(const char* kind, convey_t* plain, convey_t* squeezed, int multi) {
  const convey_codec_t decline = {"decline", count_plan,          NULL,
                                  declining, counting_decompress, NULL};
  const convey_codec_t count = {"count", count_plan, NULL, counting, counting_decompress, NULL};
  int64_t raw, packed;
  H_CHECK(plain && squeezed, "%s constructors", kind);
  if (!plain || !squeezed) return;
  H_CHECK(!(convey_features(plain) & convey_THRIFTY), "plain %s is THRIFTY", kind);
  H_CHECK(convey_features(squeezed) & convey_THRIFTY, "COMPRESS %s is not THRIFTY", kind);
  H_EXPECT_RC(convey_set_codec(plain, &convey_standard_codec, NULL), convey_FAIL);
  run(plain, 16, 4000, 0);
  run(squeezed, 16, 4000, 0); /* the standard codec, by default */
  raw = sum(convey_statistic(plain, convey_BYTES));
  packed = sum(convey_statistic(squeezed, convey_BYTES));
  if (multi)
    H_CHECK(packed < raw, "%s: standard codec did not shrink: %lld vs %lld bytes", kind,
            (long long)packed, (long long)raw);
  else
    H_CHECK(packed == raw, "%s: one node, yet %lld vs %lld bytes", kind, (long long)packed,
            (long long)raw);
  g_compress_calls = g_decompress_calls = 0;
  H_EXPECT_RC(convey_set_codec(squeezed, &decline, NULL), convey_OK);
  run(squeezed, 16, 4000, 0);
  H_CHECK((sum(g_compress_calls) > 0) == (multi != 0), "%s: declining codec calls %lld", kind,
          (long long)sum(g_compress_calls));
  H_CHECK(sum(g_decompress_calls) == 0, "%s: a declined buffer was decompressed", kind);
  H_EXPECT_RC(convey_set_codec(squeezed, &count, NULL), convey_OK);
  run(squeezed, 24, 4000, 0);
  H_CHECK((sum(g_decompress_calls) > 0) == (multi != 0), "%s: %lld buffers decompressed", kind,
          (long long)sum(g_decompress_calls));
  H_EXPECT_RC(convey_set_codec(squeezed, NULL, NULL), convey_OK);
  g_compress_calls = 0;
  run(squeezed, 8, 2000, 0);
  H_CHECK(g_compress_calls == 0, "%s: codec called after set_codec(NULL)", kind);
  H_EXPECT_RC(convey_free(plain), convey_OK);
  H_EXPECT_RC(convey_free(squeezed), convey_OK);
}

static void test_codecs(void) {
  const int multi = getenv("CONVOY_EMULATE_NODES") != NULL;
  const uint64_t z = convey_opt_COMPRESS;
  convey_t* e = convey_new_etensor(1024, 4000, 1, 1, 2, NULL, z | convey_opt_QUIET);
  check_codecs("simple", convey_new_simple(2048, NULL, NULL, 0),
               convey_new_simple(2048, NULL, NULL, z), multi);
  check_codecs("tensor order 1", convey_new_tensor(2048, 1, 1, 2, NULL, 0),
               convey_new_tensor(2048, 1, 1, 2, NULL, z), multi);
  /* Multi-hop tensor conveyors compress their off-node hops too. */
  if (g_pes % 2 == 0) {
    check_codecs("tensor order 2", convey_new_tensor(1024, 2, 2, 2, NULL, 0),
                 convey_new_tensor(1024, 2, 2, 2, NULL, z), multi);
    check_codecs("tensor order 3", convey_new_tensor(1024, 3, 2, 2, NULL, 0),
                 convey_new_tensor(1024, 3, 2, 2, NULL, z), multi);
  }
  /* DYNAMIC with COMPRESS (CAPI-11): the engine, and so the compressing transport, is built
   * at every begin; the codec set while DORMANT applies to it. */
  check_codecs("simple DYNAMIC", convey_new_simple(2048, NULL, NULL, convey_opt_DYNAMIC),
               convey_new_simple(2048, NULL, NULL, z | convey_opt_DYNAMIC), multi);
  check_codecs("tensor order 1 DYNAMIC", convey_new_tensor(2048, 1, 1, 2, NULL, convey_opt_DYNAMIC),
               convey_new_tensor(2048, 1, 1, 2, NULL, z | convey_opt_DYNAMIC), multi);
  H_CHECK(e && !(convey_features(e) & convey_THRIFTY), "etensor THRIFTY");
  H_EXPECT_RC(convey_set_codec(e, &convey_standard_codec, NULL), convey_FAIL);
  H_EXPECT_RC(convey_free(e), convey_OK);
}

int main(int argc, char** argv) {
  int me = 0, np = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  h_me = me;
  g_pes = np;
  test_allocators();
  test_codecs();
  test_standard_format();
  return convoy_test_verdict(h_failures, "codec/alloc on %d PEs", np);
}
