// Dispatch functions of convey.h: state tracking and checks (seed 000 sec. 3.2, 3.5, 4),
// the codes bale returns for each misuse (CAPI-2, the table in conveyor_api/README.md),
// statistics, and convoy's C extensions (convoy/convey_ext.h).
//
// Rigid engine conveyors (c->streaming) take push, pull, apull and unpull straight to their
// core's inline hot paths; one call each, its code translated only when it fails (CAPI-3).
#include <convey.h>
#include <convoy/convey_ext.h>

#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <exception>
#include <new>

#include "facade.hpp"

using convoy::facade::misaligned;
using convoy::facade::state;
using convoy::facade::to_convey;

extern "C" const char convey_version[] = "0.5.0";

conveyor::conveyor(const char* k, std::uint64_t opts) : options(opts), kind(k) {
  my_pe = convoy::facade::world_rank();
  n_pes = convoy::facade::world_size();
}

conveyor::~conveyor() = default;

namespace {
enum counter { k_begins = 0, k_pushes, k_pulls, k_unpulls, k_advances };

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

// A push that failed (0: the path is full) with a convey code.
[[gnu::cold, gnu::noinline]] int push_failed(conveyor* c, int rc) noexcept {
  return rc == 0 ? convey_FAIL : c->panic("convey_push", rc);
}

// convey_push off its fast path: misuse, a kind without the inline path, a failure.
[[gnu::noinline]] int push_checked(conveyor* c, const void* item, std::int64_t pe) noexcept {
  if (!c) return convey_error_NULL;
  if (c->state != state::working) return c->panic("convey_push", convey_error_STATE);
  if (!(c->options & convey_opt_RECKLESS)) {
    if (pe < 0 || pe >= c->n_pes) return c->panic("convey_push", convey_error_RANGE);
    if (!item) return c->panic("convey_push", convey_error_NULL);
  }
  const int rc =
      c->streaming ? to_convey(c->core.push(item, static_cast<int>(pe))) : c->push_(item, pe);
  if (rc > 0) {
    ++c->life[k_pushes];
    return convey_OK;
  }
  return push_failed(c, rc);
}

// A pull or apull from a streaming kind whose engine pull returned `got` <= 0.
[[gnu::noinline]] int pull_failed(conveyor* c, const char* where, int got) noexcept {
  c->held = nullptr;
  c->retaken = false;
  return got == 0 ? convey_FAIL : c->panic(where, to_convey(got));
}

// Hands out the pulled item `v` of a streaming kind: apull (dest == nullptr) in place when
// it is aligned, else from an aligned scratch copy (CAPI-7); pull copies it to `dest`.
[[gnu::always_inline]] inline const void* hand_out(conveyor* c,
                                                   const convoy::termination::item_view& v,
                                                   void* dest, std::int64_t* from) noexcept {
  const void* p = v.data;
  c->held = nullptr;
  c->retaken = false;
  if (dest) {
    convoy::aggregation::copy_item(dest, p, c->item_bytes);
  } else if (misaligned(p, c->align)) [[unlikely]] {
    std::memcpy(c->scratch.get(), p, c->item_bytes);
    p = c->scratch.get();
  } else {
    c->held = p;
  }
  if (from) *from = v.from;
  ++c->life[k_pulls];
  return p;
}

// convey_pull (dest: where the item goes) and convey_apull (dest == nullptr) off their fast
// paths: misuse, COMPLETE, kinds without the inline path. Returns the item or nullptr,
// with the call's code in *rc.
[[gnu::noinline]] const void* pull_checked(conveyor* c, const char* where, void* dest,
                                           std::int64_t* from, int* rc) noexcept {
  *rc = convey_FAIL;
  if (c->state == state::dormant) {
    *rc = c->panic(where, convey_error_STATE);
    return nullptr;
  }
  if (c->state == state::complete) return nullptr;
  if (c->streaming) {
    convoy::termination::item_view v;
    const int got = c->core.pull(v);
    if (got <= 0) {
      *rc = pull_failed(c, where, got);
      return nullptr;
    }
    *rc = convey_OK;
    return hand_out(c, v, dest, from);
  }
  c->held = nullptr;
  c->retaken = false;
  std::int64_t src = -1;
  const void* p = c->pull_(&src, rc, dest == nullptr);
  if (!p) {
    if (*rc < 0) *rc = c->panic(where, *rc);
    return nullptr;
  }
  if (dest) convoy::aggregation::copy_item(dest, p, c->item_bytes);
  if (from) *from = src;
  ++c->life[k_pulls];
  *rc = convey_OK;
  return p;
}

}  // namespace

extern "C" {

int convey_begin(convey_t* c, size_t item_bytes, size_t align) {
  if (!c) return convey_error_NULL;
  if (c->state != state::dormant) return c->panic("convey_begin", convey_error_STATE);
  if (item_bytes == 0) return c->panic("convey_begin", convey_error_ZERO);
  if (align == 0 || (align & (align - 1)) != 0 || item_bytes % align != 0 ||
      align > CONVEY_MAX_ALIGN)
    align = convoy::facade::natural_align(item_bytes);
  const int rc = guarded(c, "convey_begin", [&] { return c->begin_(item_bytes, align); });
  if (rc < 0) return c->panic("convey_begin", rc);
  std::memcpy(c->mark, c->life, sizeof c->life);
  ++c->life[k_begins];
  c->item_bytes = item_bytes;
  c->align = align;
  c->held = nullptr;
  c->retaken = false;
  c->set_state(state::working);
  return convey_OK;
}

int convey_push(convey_t* c, const void* item, int64_t pe) {
  // A legal push to a streaming kind: one inline engine push (CAPI-3). Everything else,
  // and every failure, is settled by push_checked, with bale's codes.
  if (c && c->fast_push && item &&
      static_cast<std::uint64_t>(pe) < static_cast<std::uint64_t>(c->n_pes)) [[likely]] {
    const int dest = static_cast<int>(pe);
    // 8-byte items (bale's common case) get the engine's fixed-size copy.
    const int rc = c->item_bytes == 8 ? c->core.push<8>(item, dest) : c->core.push(item, dest);
    if (rc > 0) [[likely]] {
      ++c->life[k_pushes];
      return convey_OK;
    }
    return push_failed(c, to_convey(rc));
  }
  return push_checked(c, item, pe);
}

int convey_epush(convey_t* c, size_t bytes, const void* item, int64_t pe) {
  if (!c) return convey_error_NULL;
  if (!(c->features & convey_ELASTIC)) return c->panic("convey_epush", convey_error_RIGID);
  if (c->state != state::working) [[unlikely]]
    return c->panic("convey_epush", convey_error_STATE);
  if (!(c->options & convey_opt_RECKLESS)) {
    if (pe < 0 || pe >= c->n_pes) [[unlikely]]
      return c->panic("convey_epush", convey_error_RANGE);
    if (!item && bytes > 0) [[unlikely]]
      return c->panic("convey_epush", convey_error_NULL);
  }
  const int rc = c->epush_(bytes, item, pe);
  if (rc > 0) [[likely]] {
    ++c->life[k_pushes];
    return rc;
  }
  return rc < 0 ? c->panic("convey_epush", rc) : rc;
}

int convey_pull(convey_t* c, void* item, int64_t* from) {
  // The next item of a streaming kind's delivery window, copied out (CAPI-3).
  if (c && c->fast_pull && item) [[likely]] {
    convoy::termination::item_view v;
    const int got = c->core.pull(v);
    if (got > 0) [[likely]] {
      hand_out(c, v, item, from);
      return convey_OK;
    }
    return pull_failed(c, "convey_pull", got);
  }
  if (!c) return convey_error_NULL;
  if (!item && c->state != state::dormant) return c->panic("convey_pull", convey_error_NULL);
  int rc = 0;
  pull_checked(c, "convey_pull", item, from, &rc);
  return rc;
}

void* convey_apull(convey_t* c, int64_t* from) {
  // The next item in place (CAPI-3), or an aligned copy of it (CAPI-7).
  if (c && c->fast_pull) [[likely]] {
    convoy::termination::item_view v;
    const int got = c->core.pull(v);
    if (got > 0) [[likely]]
      return const_cast<void*>(hand_out(c, v, nullptr, from));
    pull_failed(c, "convey_apull", got);
    return nullptr;
  }
  if (!c) return nullptr;
  int rc = 0;
  return const_cast<void*>(pull_checked(c, "convey_apull", nullptr, from, &rc));
}

int convey_epull(convey_t* c, convey_item_t* result) {
  if (!c) return convey_error_NULL;
  if (!(c->features & convey_ELASTIC)) return c->panic("convey_epull", convey_error_RIGID);
  if (!result) [[unlikely]]
    return c->panic("convey_epull", convey_error_NULL);
  if (c->state == state::dormant || c->state == state::complete) {
    result->data = nullptr;  // bale: nothing to pull, not an error (CAPI-2)
    return convey_FAIL;
  }
  c->held = nullptr;
  c->retaken = false;
  const int rc = c->epull_(result);
  if (rc > 0) {
    ++c->life[k_pulls];
    return rc;
  }
  return rc < 0 ? c->panic("convey_epull", rc) : rc;
}

int convey_unpull(convey_t* c) {
  if (!c) return convey_error_NULL;
  if (c->state == state::dormant) return c->panic("convey_unpull", convey_error_STATE);
  if (c->state == state::complete) return convey_FAIL;
  c->held = nullptr;
  if (c->retaken) return convey_FAIL;  // the last pull was before an advance (CAPI-7)
  const int rc = c->streaming ? to_convey(c->core.unpull()) : c->unpull_();
  if (rc > 0) ++c->life[k_unpulls];
  return rc < 0 ? c->panic("convey_unpull", rc) : rc;
}

int convey_advance(convey_t* c, bool done) {
  if (!c) return convey_error_NULL;
  if (c->state == state::dormant) return c->panic("convey_advance", convey_error_STATE);
  if (c->state == state::complete) {
    ++c->life[k_advances];
    return convey_DONE;
  }
  // After advance(true), done stays true: bale takes a false as true rather than reject
  // it, since a PE that stops advancing could deadlock the others (CAPI-2).
  done = done || c->state != state::working;
  // An apull/epull pointer stays valid until the next pull or unpull (bale), the engine's
  // only until the next advance: put the item back, so that its buffer stays, and take it
  // again. It is first in line, so the same bytes come back in the same place (CAPI-7).
  const void* const held = c->held;
  const bool put_back = held && c->core.unpull() > 0;
  const int rc = guarded(c, "convey_advance", [&] { return c->advance_(done); });
  if (put_back) {
    convoy::termination::item_view v;
    if (c->core.pull(v, false) <= 0 || v.data != held)
      return c->panic("convey_advance", convey_error_INTERNAL, "the held item moved");
    c->retaken = true;
  }
  if (rc < 0) return c->panic("convey_advance", rc);
  ++c->life[k_advances];
  if (rc == convey_DONE)
    c->set_state(state::complete);
  else if (rc == convey_NEAR)
    c->set_state(state::cleanup);
  else if (done && c->state == state::working)
    c->set_state(state::endgame);
  return rc;
}

int convey_reset(convey_t* c) {
  if (!c) return convey_error_NULL;
  if (c->state == state::dormant) return convey_OK;
  if (c->state != state::complete) return c->panic("convey_reset", convey_error_STATE);
  const int rc = guarded(c, "convey_reset", [&] { return c->reset_(); });
  if (rc < 0) return c->panic("convey_reset", rc);
  c->set_state(state::dormant);
  c->item_bytes = 0;
  c->held = nullptr;
  return convey_OK;
}

int convey_free(convey_t* c) {
  if (!c) return convey_OK;
  if (c->state != state::dormant && c->state != state::complete)
    return c->panic("convey_free", convey_error_STATE);
  try {
    delete c;
  } catch (...) {
    return convey_error_INTERNAL;
  }
  return convey_OK;
}

int convey_set_codec(convey_t* c, const convey_codec_t* codec, void* arg) {
  if (!c) return convey_error_NULL;
  if (c->state != state::dormant) return c->panic("convey_set_codec", convey_error_STATE);
  if (!(c->features & convey_THRIFTY)) return convey_FAIL;
  if (codec && !codec->plan) return convey_FAIL;  // bale: no plan, no compression
  if (codec && (!codec->compress || !codec->decompress))
    return c->panic("convey_set_codec", convey_error_NOFUNC,
                    "a codec with plan needs compress and decompress");
  const int rc = guarded(c, "convey_set_codec", [&] { return c->set_codec_(codec, arg); });
  return rc < 0 ? c->panic("convey_set_codec", rc) : rc;
}

size_t convey_item_size(convey_t* c) {
  return (c && c->state != state::dormant) ? c->item_bytes : 0;
}

uint64_t convey_features(convey_t* c) { return c ? c->features : 0; }

int64_t convey_statistic(convey_t* c, int which) {
  if (!c) return 0;
  if (which < 0 || which >= 2 * convey_CUMULATIVE) return -1;
  const bool cumulative = which >= convey_CUMULATIVE;
  const int base = which % convey_CUMULATIVE;
  if (base <= convey_ADVANCES) {
    const auto b = static_cast<std::size_t>(base);
    return static_cast<int64_t>(cumulative ? c->life[b] : c->life[b] - c->mark[b]);
  }
  return c->comm_statistic_(base, cumulative);
}

// ---- convoy/convey_ext.h ----

const char* convoy_convey_kind(convey_t* c) { return c ? c->kind : ""; }
int convoy_convey_order(convey_t* c) { return c ? c->order : 0; }
size_t convoy_convey_n_local(convey_t* c) { return c ? c->n_local : 0; }
size_t convoy_convey_buffer_bytes(convey_t* c) { return c ? c->buffer_bytes : 0; }
size_t convoy_convey_memory_bytes(convey_t* c) { return c ? c->memory_bytes_() : 0; }
size_t convoy_convey_max_memory_bytes(convey_t* c) { return c ? c->max_memory_bytes_() : 0; }
int64_t convoy_convey_n_pes(convey_t* c) { return c ? c->n_pes : 0; }
int64_t convoy_convey_my_pe(convey_t* c) { return c ? c->my_pe : -1; }

}  // extern "C"
