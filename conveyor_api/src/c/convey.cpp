// Dispatch functions of convey.h: legality (the one table, Maley & DeVinney 2019, sec. 3.2,
// 3.5, 4), the codes bale returns for each misuse (CAPI-2, the table in
// conveyor_api/README.md), statistics, and convoy's C extensions (convoy/convey_ext.h).
// The object behind convey_t is in conveyor.cpp.
//
// push, pull and apull are inline in convey.h over the conveyor's view (the engine's hot
// state, convoy/convey_view.h); the convoy_v1_* functions here do every call
// the inline code does not take, and the exported convey_push/pull/apull run the same
// inline code for objects compiled against another convey.h (CAPI-3).
#include <convey.h>
#include <convoy/convey_ext.h>
#include <convoy/version.h>

#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <new>
#include <type_traits>

#include "facade.hpp"
#include "reports.hpp"

using convoy::facade::misaligned;
using convoy::facade::to_convey;
using convoy::termination::call;

extern "C" const char convey_version[] = CONVOY_VERSION_STRING;

namespace {
namespace agg = convoy::aggregation;
namespace term = convoy::termination;
}  // namespace

namespace {

int internal_failure(conveyor* c, const char* where, const std::exception* e) noexcept {
  const bool mpi = e && dynamic_cast<const convoy::error*>(e) != nullptr;
  const bool alloc = e && dynamic_cast<const std::bad_alloc*>(e) != nullptr;
  const int code = alloc ? convey_error_ALLOC : (mpi ? convey_error_COMMS : convey_error_INTERNAL);
  return c->panic(where, code, e ? e->what() : "unknown exception");
}

// Runs a collective per-kind call, turning an exception into its code.
template <class F>
int guarded(conveyor* c, const char* where, F&& call) noexcept {
  try {
    return call();
  } catch (const std::exception& e) {
    return internal_failure(c, where, &e);
  } catch (...) {
    return internal_failure(c, where, nullptr);
  }
}

// Hands out the pulled item `v`: pull copies it to `dest`; apull and epull (dest ==
// nullptr) return it in place when it is aligned as begin asked, else an aligned scratch
// copy (CAPI-7). An elastic item larger than the buffers' is in its own buffer until the
// next pull.
const void* hand_out(conveyor* c, const term::item_view& v, void* dest,
                     std::int64_t* from) noexcept {
  const void* p = v.data;
  if (dest) {
    agg::copy_item(dest, p, v.bytes);
  } else if (v.bytes <= c->core.max_buffered_item_bytes() &&
             (v.bytes == 0 || misaligned(p, c->head.align_mask + 1))) {
    if (v.bytes) std::memcpy(c->scratch.get(), p, v.bytes);
    p = c->scratch.get();
  }
  if (from) *from = v.from;
  return p;
}

// convey_pull (dest: where the item goes) and convey_apull (dest == nullptr) when the
// inline call did not take the item: misuse, an empty window, a misaligned item, COMPLETE,
// kinds without the inline path. Returns the item or nullptr, with the call's code in *rc.
const void* pull_checked(conveyor* c, const char* where, void* dest, std::int64_t* from,
                         int* rc) noexcept {
  *rc = convey_FAIL;
  if (!c) {
    *rc = convey_error_NULL;
    return nullptr;
  }
  if (const auto refused = c->refuse(where, call::pull)) {  // DORMANT, COMPLETE
    *rc = *refused;
    return nullptr;
  }
  term::item_view v;
  const int got = c->engine().pull(v, true);
  if (got <= 0) {
    // An elastic item of another size stays for epull: bale's MISFIT (CAPI-5).
    if (got < 0)
      *rc = c->panic(where, got == term::error_elastic ? convey_error_MISFIT : to_convey(got));
    return nullptr;
  }
  *rc = convey_OK;
  return hand_out(c, v, dest, from);
}

// convey_BEGINS .. convey_BYTES in the core's counters. COMMS: a large elastic item's
// bytes are one more; SYNCS: the simple kind's collectives, 0 for the others; BYTES: as
// sent (compressed).
using counter = std::uint64_t term::engine_stats::*;
constexpr counter k_statistic[] = {
    &term::engine_stats::begins,      &term::engine_stats::pushes,
    &term::engine_stats::pulls,       &term::engine_stats::unpulls,
    &term::engine_stats::advances,    &term::engine_stats::buffers_sent,
    &term::engine_stats::collectives, &term::engine_stats::bytes_sent};
static_assert(std::size(k_statistic) == convey_CUMULATIVE);

}  // namespace

extern "C" {

int convey_begin(convey_t* c, size_t item_bytes, size_t align) {
  if (!c) return convey_error_NULL;
  convoy::facade::drain_reports();
  if (const auto rc = c->refuse("convey_begin", call::begin)) return *rc;
  if (item_bytes == 0) return c->panic("convey_begin", convey_error_ZERO);
  if (align == 0 || (align & (align - 1)) != 0 || item_bytes % align != 0 ||
      align > CONVEY_MAX_ALIGN)
    align = convoy::facade::natural_align(item_bytes);
  const int rc = guarded(c, "convey_begin", [&] { return to_convey(c->core.begin(item_bytes)); });
  c->refresh_view();  // a dynamic conveyor's engine exists from begin
  if (rc == convey_error_OFLO && c->core.options().combine.fn)  // convoy_convey_set_combine
    return c->panic("convey_begin", rc, "the combining key or value lies beyond the item");
  if (rc < 0) return c->panic("convey_begin", rc);
  c->item_bytes = item_bytes;
  c->head.align_mask = align - 1;
  return convey_OK;
}

int convey_push(convey_t* c, const void* item, int64_t pe) {
  return convoy_push_inline_(c, item, pe);
}

int convoy_v1_push(convey_t* c, const void* item, int64_t pe) {
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse("convey_push", call::push)) return *rc;
  if (!(c->options & convey_opt_RECKLESS)) {
    if (pe < 0 || pe >= c->core.n_ranks()) return c->panic("convey_push", convey_error_RANGE);
    if (!item) return c->panic("convey_push", convey_error_NULL);
  }
  const int rc = to_convey(c->engine().push(item, static_cast<int>(pe)));
  if (rc == convey_error_USAGE)
    return c->panic("convey_push", rc, "a broadcast conveyor: send with convoy_convey_broadcast");
  return rc >= 0 ? rc : c->panic("convey_push", rc);
}

int convoy_v1_lane_full(convey_t* c, uint32_t lane) {
  c->engine().lane_full(lane);  // only the engine's view lets the inline push run
  return convey_OK;
}

int convey_epush(convey_t* c, size_t bytes, const void* item, int64_t pe) {
  if (!c) return convey_error_NULL;
  if (!(c->features & convey_ELASTIC)) return c->panic("convey_epush", convey_error_RIGID);
  if (const auto rc = c->refuse("convey_epush", call::push)) [[unlikely]]
    return *rc;
  if (!(c->options & convey_opt_RECKLESS)) {
    if (pe < 0 || pe >= c->core.n_ranks()) [[unlikely]]
      return c->panic("convey_epush", convey_error_RANGE);
    if (!item && bytes > 0) [[unlikely]]
      return c->panic("convey_epush", convey_error_NULL);
  }
  // Above the conveyor's bound: OFLO, nothing moved (CAPI-6).
  const int rc = to_convey(c->engine().epush(item, bytes, static_cast<int>(pe)));
  return rc < 0 ? c->panic("convey_epush", rc) : rc;
}

int convey_pull(convey_t* c, void* item, int64_t* from) {
  return convoy_pull_inline_(c, item, from);
}

int convoy_v1_pull(convey_t* c, void* item, int64_t* from) {
  if (!c) return convey_error_NULL;
  if (!item) {  // the state's code first (STATE in DORMANT), then NULL
    if (const auto rc = c->refuse("convey_pull", call::pull); rc && *rc < 0) return *rc;
    return c->panic("convey_pull", convey_error_NULL);
  }
  int rc = 0;
  pull_checked(c, "convey_pull", item, from, &rc);
  return rc;
}

void* convey_apull(convey_t* c, int64_t* from) { return convoy_apull_inline_(c, from); }

void* convoy_v1_apull(convey_t* c, int64_t* from) {
  int rc = 0;
  return const_cast<void*>(pull_checked(c, "convey_apull", nullptr, from, &rc));
}

int64_t convoy_convey_pull_batch(convey_t* c, convoy_batch_t* out, int64_t max) {
  static const char* const where = "convoy_convey_pull_batch";
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse(where, call::pull)) return *rc;  // DORMANT, COMPLETE
  if (!out) return c->panic(where, convey_error_NULL);
  if (max < 1) return c->panic(where, convey_error_USAGE, "max is below 1");
  term::item_batch b;
  const std::int64_t got = c->engine().pull_batch(b, static_cast<std::size_t>(max), true);
  if (got < 0) {
    const int rc = static_cast<int>(got);
    return c->panic(where, rc == term::error_elastic ? convey_error_MISFIT : to_convey(rc));
  }
  if (got == 0) return convey_FAIL;
  *out = {b.data, b.stride, got, b.from, b.source_of_tag};
  return got;
}

int convey_epull(convey_t* c, convey_item_t* result) {
  if (!c) return convey_error_NULL;
  if (!(c->features & convey_ELASTIC)) return c->panic("convey_epull", convey_error_RIGID);
  if (!result) [[unlikely]]
    return c->panic("convey_epull", convey_error_NULL);
  if (term::refusal(c->now(), call::pull)) {  // DORMANT, COMPLETE
    result->data = nullptr;  // bale: nothing to pull, in DORMANT too, not an error (CAPI-2)
    return convey_FAIL;
  }
  term::item_view v;
  const int rc = to_convey(c->engine().pull(v, false));
  if (rc > 0) {
    result->data = const_cast<void*>(hand_out(c, v, nullptr, nullptr));
    result->bytes = v.bytes;
    result->from = v.from;
    return rc;
  }
  return rc < 0 ? c->panic("convey_epull", rc) : rc;
}

int convey_unpull(convey_t* c) {
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse("convey_unpull", call::unpull)) return *rc;
  // Nothing pulled since the last advance (CAPI-7), inline or not: FAIL, as bale.
  const int rc = c->core.unpull();
  if (rc == term::error_unpull) return convey_FAIL;
  return rc < 0 ? c->panic("convey_unpull", to_convey(rc)) : rc;
}

int convey_advance(convey_t* c, bool done) {
  if (!c) return convey_error_NULL;
  convoy::facade::drain_reports_sometimes();
  // After advance(true), done stays true (CAPI-2, termination::done_pushing).
  done = term::done_pushing(c->now(), done);
  // COMPLETE: the engine answers DONE and counts the call.
  if (const auto rc = c->refuse("convey_advance", term::advance_call(done)); rc && *rc < 0)
    return *rc;
  // An apull/epull pointer stays valid until the next pull or unpull (bale): the core
  // keeps the last pulled item in place across the advance (CAPI-7).
  const int rc = guarded(c, "convey_advance", [&] {
    const int code = to_convey(c->core.advance_keeping_pull(done));
    if (code == convey_error_COMMS && !(c->options & convey_opt_QUIET))
      convoy::facade::print_once("PE " + std::to_string(c->core.rank()) + ": " +
                                 c->core.last_message());
    return code;
  });
  return rc < 0 ? c->panic("convey_advance", rc) : rc;
}

int convey_reset(convey_t* c) {
  if (!c) return convey_error_NULL;
  convoy::facade::drain_reports();
  if (const auto rc = c->refuse("convey_reset", call::reset)) return *rc;  // DORMANT: OK
  const int rc = guarded(c, "convey_reset", [&] { return to_convey(c->core.reset()); });
  c->refresh_view();  // a dynamic conveyor's engine goes at reset
  if (rc < 0) return c->panic("convey_reset", rc);
  c->item_bytes = 0;
  return convey_OK;
}

int convey_free(convey_t* c) {
  if (!c) return convey_OK;
  convoy::facade::drain_reports();
  if (const auto rc = c->refuse("convey_free", call::destroy)) return *rc;
  try {
    delete c;  // with CONVOY_STATS, the core's counters go to the job's document (API-30)
  } catch (...) {
    return convey_error_INTERNAL;
  }
  return convey_OK;
}

int convey_set_codec(convey_t* c, const convey_codec_t* codec, void* arg) {
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse("convey_set_codec", call::configure)) return *rc;
  if (!(c->features & convey_THRIFTY)) return convey_FAIL;
  if (codec && !codec->plan) return convey_FAIL;  // bale: no plan, no compression
  if (codec && (!codec->compress || !codec->decompress))
    return c->panic("convey_set_codec", convey_error_NOFUNC,
                    "a codec with plan needs compress and decompress");
  c->codec->set(codec, arg);  // the transports or the exchange plan it at the next begin
  return convey_OK;
}

size_t convey_item_size(convey_t* c) {
  return c ? c->item_bytes : 0;  // 0 from reset to the next begin
}

uint64_t convey_features(convey_t* c) { return c ? c->features : 0; }

int64_t convey_statistic(convey_t* c, int which) {
  if (!c) return 0;
  if (which < 0 || which >= 2 * convey_CUMULATIVE) return -1;
  try {
    const term::engine_stats s = c->core.stats(which >= convey_CUMULATIVE);
    return static_cast<int64_t>(s.*k_statistic[which % convey_CUMULATIVE]);
  } catch (...) {
    return -1;
  }
}

// ---- convoy/convey_ext.h ----

const char* convoy_convey_kind(convey_t* c) { return c ? c->kind : ""; }
int convoy_convey_order(convey_t* c) { return c ? c->order : 0; }
size_t convoy_convey_n_local(convey_t* c) { return c ? c->n_local : 0; }
size_t convoy_convey_buffer_bytes(convey_t* c) { return c ? c->payload_bytes : 0; }
size_t convoy_convey_memory_bytes(convey_t* c) { return c ? c->core.memory_bytes() : 0; }
size_t convoy_convey_max_memory_bytes(convey_t* c) { return c ? c->core.max_memory_bytes() : 0; }
int64_t convoy_convey_n_pes(convey_t* c) { return c ? c->core.n_ranks() : 0; }
int64_t convoy_convey_my_pe(convey_t* c) { return c ? c->core.rank() : -1; }

}  // extern "C"
