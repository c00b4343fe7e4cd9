// Dispatch functions of convey.h: state tracking and checks (seed 000 sec. 3.2, 3.5, 4),
// error codes and messages, statistics, and convoy's C extensions (convoy/convey_ext.h).
#include <convoy/convey_ext.h>

#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "facade.hpp"

using convoy::facade::cstate;

extern "C" const char convey_version[] = "0.5.0";

conveyor::conveyor(const char* k, std::uint64_t opts) : kind(k), options(opts) {
  int r = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  my_pe = r;
  n_pes = n;
}

conveyor::~conveyor() = default;

int conveyor::panic(const char* where, int code, const char* detail) noexcept {
  if (code >= 0) return code;
  const unsigned bit = static_cast<unsigned>(-code);
  if (bit < 64) {
    if (suppressed >> bit & 1u) return code;
    suppressed |= std::uint64_t{1} << bit;
  }
  if (options & convey_opt_QUIET) return code;
  std::fprintf(stderr, "convey: %s on PE %lld: %s (%s conveyor, state %s)%s%s\n", where,
               static_cast<long long>(my_pe), convey_error_string(this, code), kind,
               convoy::facade::state_name(state), detail ? ": " : "", detail ? detail : "");
  std::fflush(stderr);
  return code;
}

namespace {
enum counter { k_begins = 0, k_pushes, k_pulls, k_unpulls, k_advances };

int internal_failure(conveyor* c, const char* where, const std::exception* e) noexcept {
  const bool mpi = e && dynamic_cast<const convoy::error*>(e) != nullptr;
  const bool alloc = e && dynamic_cast<const std::bad_alloc*>(e) != nullptr;
  const int code = alloc ? convey_error_ALLOC : (mpi ? convey_error_COMMS : convey_error_INTERNAL);
  return c->panic(where, code, e ? e->what() : "unknown exception");
}
}  // namespace

extern "C" {

int convey_begin(convey_t* c, size_t item_bytes, size_t align) {
  if (!c) return convey_error_NULL;
  if (c->state != cstate::dormant) return c->panic("convey_begin", convey_error_STATE);
  if (item_bytes == 0) return c->panic("convey_begin", convey_error_ZERO);
  if (align == 0 || (align & (align - 1)) != 0 || item_bytes % align != 0 ||
      align > CONVEY_MAX_ALIGN)
    align = convoy::facade::natural_align(item_bytes);
  int rc = convey_error_INTERNAL;
  try {
    rc = c->begin_(item_bytes, align);
  } catch (const std::exception& e) {
    return internal_failure(c, "convey_begin", &e);
  } catch (...) {
    return internal_failure(c, "convey_begin", nullptr);
  }
  if (rc < 0) return c->panic("convey_begin", rc);
  std::memcpy(c->mark, c->life, sizeof c->life);
  ++c->life[k_begins];
  c->item_bytes = item_bytes;
  c->align = align;
  c->state = cstate::working;
  return convey_OK;
}

int convey_push(convey_t* c, const void* item, int64_t pe) {
  if (!c) return convey_error_NULL;
  if (c->state != cstate::working) [[unlikely]]
    return c->panic("convey_push", convey_error_STATE);
  if (!(c->options & convey_opt_RECKLESS)) {
    if (pe < 0 || pe >= c->n_pes) [[unlikely]]
      return c->panic("convey_push", convey_error_RANGE);
    if (!item) [[unlikely]]
      return c->panic("convey_push", convey_error_NULL);
  }
  if (auto* e = c->direct) [[likely]] {
    const int got = e->push(item, static_cast<int>(pe));
    if (got > 0) [[likely]] {
      ++c->life[k_pushes];
      return convey_OK;
    }
    if (got == 0) return convey_FAIL;  // the path is full
  }
  // A failed push changes nothing: the virtual path repeats a misuse and maps its code.
  const int rc = c->push_(item, pe);
  if (rc > 0) [[likely]] {
    ++c->life[k_pushes];
    return rc;
  }
  return rc < 0 ? c->panic("convey_push", rc) : rc;
}

int convey_epush(convey_t* c, size_t bytes, const void* item, int64_t pe) {
  if (!c) return convey_error_NULL;
  if (!(c->features & convey_ELASTIC)) return c->panic("convey_epush", convey_error_RIGID);
  if (c->state != cstate::working) [[unlikely]]
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
  if (!c) return convey_error_NULL;
  if (c->state == cstate::dormant) [[unlikely]]
    return c->panic("convey_pull", convey_error_STATE);
  if (!item) [[unlikely]]
    return c->panic("convey_pull", convey_error_NULL);
  if (c->state == cstate::complete) return convey_FAIL;
  if (auto* e = c->direct) [[likely]] {
    convoy::termination::item_view v;
    const int got = e->pull(v);
    if (got > 0) [[likely]] {
      convoy::aggregation::copy_item(item, v.data, c->item_bytes);
      if (from) *from = v.from;
      ++c->life[k_pulls];
      return convey_OK;
    }
    if (got == 0) return convey_FAIL;  // nothing ready
  }
  int rc = 0;
  std::int64_t src = -1;
  const void* p = c->pull_(&src, &rc, false);
  if (!p) return rc < 0 ? c->panic("convey_pull", rc) : rc;
  convoy::aggregation::copy_item(item, p, c->item_bytes);
  if (from) *from = src;
  ++c->life[k_pulls];
  return convey_OK;
}

void* convey_apull(convey_t* c, int64_t* from) {
  if (!c) return nullptr;
  if (c->state == cstate::dormant) [[unlikely]] {
    c->panic("convey_apull", convey_error_STATE);
    return nullptr;
  }
  if (c->state == cstate::complete) return nullptr;
  if (auto* e = c->direct) [[likely]] {
    convoy::termination::item_view v;
    const int got = e->pull(v);
    if (got == 0) return nullptr;  // nothing ready
    if (got > 0) [[likely]] {
      if ((reinterpret_cast<std::uintptr_t>(v.data) & (c->align - 1)) == 0) [[likely]] {
        if (from) *from = v.from;
        ++c->life[k_pulls];
        return const_cast<std::byte*>(v.data);
      }
      (void)e->unpull();  // misaligned: the virtual path copies it to aligned scratch
    }
  }
  int rc = 0;
  std::int64_t src = -1;
  const void* p = c->pull_(&src, &rc, true);
  if (!p) {
    if (rc < 0) c->panic("convey_apull", rc);
    return nullptr;
  }
  if (from) *from = src;
  ++c->life[k_pulls];
  return const_cast<void*>(p);
}

int convey_epull(convey_t* c, convey_item_t* result) {
  if (!c) return convey_error_NULL;
  if (!(c->features & convey_ELASTIC)) return c->panic("convey_epull", convey_error_RIGID);
  if (c->state == cstate::dormant) [[unlikely]]
    return c->panic("convey_epull", convey_error_STATE);
  if (!result) [[unlikely]]
    return c->panic("convey_epull", convey_error_NULL);
  if (c->state == cstate::complete) return convey_FAIL;
  const int rc = c->epull_(result);
  if (rc > 0) {
    ++c->life[k_pulls];
    return rc;
  }
  return rc < 0 ? c->panic("convey_epull", rc) : rc;
}

int convey_unpull(convey_t* c) {
  if (!c) return convey_error_NULL;
  if (c->state == cstate::dormant) return c->panic("convey_unpull", convey_error_STATE);
  if (c->state == cstate::complete) return convey_FAIL;
  const int rc = c->unpull_();
  if (rc > 0) ++c->life[k_unpulls];
  return rc < 0 ? c->panic("convey_unpull", rc) : rc;
}

int convey_advance(convey_t* c, bool done) {
  if (!c) return convey_error_NULL;
  if (c->state == cstate::dormant) return c->panic("convey_advance", convey_error_STATE);
  if (c->state == cstate::complete) {
    ++c->life[k_advances];
    return convey_DONE;
  }
  if (!done && c->state != cstate::working)
    return c->panic("convey_advance", convey_error_USAGE,
                    "done must stay true after advance(true) (seed 000 sec. 3.2)");
  int rc = convey_error_INTERNAL;
  try {
    rc = c->advance_(done);
  } catch (const std::exception& e) {
    return internal_failure(c, "convey_advance", &e);
  } catch (...) {
    return internal_failure(c, "convey_advance", nullptr);
  }
  if (rc < 0) return c->panic("convey_advance", rc);
  ++c->life[k_advances];
  if (rc == convey_DONE)
    c->state = cstate::complete;
  else if (rc == convey_NEAR)
    c->state = cstate::cleanup;
  else if (done && c->state == cstate::working)
    c->state = cstate::endgame;
  return rc;
}

int convey_reset(convey_t* c) {
  if (!c) return convey_error_NULL;
  if (c->state == cstate::dormant) return convey_OK;
  if (c->state != cstate::complete) return c->panic("convey_reset", convey_error_STATE);
  int rc = convey_error_INTERNAL;
  try {
    rc = c->reset_();
  } catch (const std::exception& e) {
    return internal_failure(c, "convey_reset", &e);
  } catch (...) {
    return internal_failure(c, "convey_reset", nullptr);
  }
  if (rc < 0) return c->panic("convey_reset", rc);
  c->state = cstate::dormant;
  c->item_bytes = 0;
  return convey_OK;
}

int convey_free(convey_t* c) {
  if (!c) return convey_OK;
  if (c->state != cstate::dormant && c->state != cstate::complete)
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
  if (c->state != cstate::dormant) return c->panic("convey_set_codec", convey_error_STATE);
  if (!(c->features & convey_THRIFTY)) return convey_FAIL;
  if (codec && (!codec->plan || !codec->compress || !codec->decompress))
    return c->panic("convey_set_codec", convey_error_USAGE,
                    "a codec needs plan, compress and decompress");
  int rc = convey_error_INTERNAL;
  try {
    rc = c->set_codec_(codec, arg);
  } catch (const std::exception& e) {
    return internal_failure(c, "convey_set_codec", &e);
  }
  return rc < 0 ? c->panic("convey_set_codec", rc) : rc;
}

size_t convey_item_size(convey_t* c) {
  return (c && c->state != cstate::dormant) ? c->item_bytes : 0;
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

const char* convey_error_string(convey_t* c, int error) {
  (void)c;
  if (error > 0) return "success";
  switch (error) {
    case 0:
      return "ordinary failure (convey_FAIL / convey_DONE)";
    case convey_error_STATE:
      return "operation is illegal in the conveyor's current state";
    case convey_error_NULL:
      return "conveyor or a required pointer is NULL";
    case convey_error_RANGE:
      return "PE number is out of range";
    case convey_error_RIGID:
      return "elastic operation on a conveyor that is not elastic";
    case convey_error_ZERO:
      return "item size is zero";
    case convey_error_OFLO:
      return "item is too large for this conveyor";
    case convey_error_USAGE:
      return "invalid argument or misuse of the conveyor API";
    case convey_error_ALLOC:
      return "memory allocation failed";
    case convey_error_COMMS:
      return "communication (MPI) failed";
    case convey_error_INTERNAL:
      return "internal error in the conveyor library";
    default:
      return "unknown error code";
  }
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
