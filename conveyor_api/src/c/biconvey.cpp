// Biconveyors (Maley & DeVinney 2019, sec. 6.1): bale's arguments and codes translated to
// convoy::untyped_biconveyor (API-23..25), whose two steady conveyors are built here as
// the convey.h constructors build theirs.
#include <biconvey.h>

#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/biconveyor.hpp>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "construct.hpp"
#include "facade.hpp"
#include "reports.hpp"

namespace cf = convoy::facade;
using convoy::untyped_conveyor;
using convoy::termination::call;
using convoy::termination::layout_plan;
using convoy::termination::refusal;

struct biconveyor {
  biconveyor(convoy::untyped_biconveyor c, std::uint64_t o) : core(std::move(c)), options(o) {
    // The core's hot state is the view (the static_asserts below); biconvey.h reads it
    // through biconvey_view_t. Its address never changes: the core lives here.
    head.view = reinterpret_cast<biconvey_view_t*>(&core.hot());
  }

  biconvey_head_t head{};  // first: what biconvey.h's inline calls read
  convoy::untyped_biconveyor core;
  std::uint64_t options;
  std::uint64_t suppressed = 0;

  // Reports `code` (negative) once per code and job unless QUIET (CAPI-9); returns it.
  int panic(const char* where, int code) noexcept {
    const unsigned bit = static_cast<unsigned>(-code);
    if (code >= 0 || (bit < 64 && (suppressed >> bit & 1u))) return code;
    if (bit < 64) suppressed |= std::uint64_t{1} << bit;
    if (!(options & convey_opt_QUIET)) {
      try {
        cf::report(this, code,
                   "convey: " + std::string(where) + ": " + convey_error_string(nullptr, code) +
                       " (biconveyor, state " +
                       convoy::termination::to_string(core.current_state()) + ")");
      } catch (...) {
      }
    }
    return code;
  }
  int translate(const char* where, int engine_code) noexcept {
    return panic(where, cf::to_convey(engine_code));
  }
};

// ---- The view's layout is the core's hot state (convoy/convey_view.h) ----
namespace {
using convoy::biconveyor_hot;
static_assert(std::is_standard_layout_v<biconveyor_hot> &&
              sizeof(biconvey_view_t) == sizeof(biconveyor_hot));
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, queries, queries);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, head, head);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, tail, tail);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, mask, mask);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, query_bytes, query_bytes);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, reply_bytes, reply_bytes);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, ring, ring);
CONVOY_SAME_FIELD(biconvey_view_t, biconveyor_hot, filled, filled);
}  // namespace
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(biconveyor, head) == 0,
              "biconvey.h reads a biconvey_head_t at a biconvey_t's start");
#pragma GCC diagnostic pop

namespace {

// One of the two conveyors: steady (PROGRESS implied), DYNAMIC and the allocator as asked;
// COMPRESS: THRIFTY off-node buffers with the standard codec (tensor and bulk layouts).
untyped_conveyor make_core(const layout_plan& t, const convey_alc8r_t* alloc,
                           std::uint64_t options) {
  cf::conveyor_request r;
  r.layout = t;
  convoy::conveyor_options o = cf::core_options(r, alloc, options);
  o.steady = true;
  if ((options & convey_opt_COMPRESS) && t.kind != convoy::termination::layout_kind::mesh)
    o.codec = std::make_shared<cf::c_codec>();
  return untyped_conveyor(MPI_COMM_WORLD, std::move(o));
}

// The query conveyor first, then the reply conveyor (allocator blocks LIFO), each from
// `layout` (which builds it, collectively).
template <class F>
biconvey_t* make_pair(const char* who, std::uint64_t options, F&& layout) noexcept {
  return cf::construct(who, options, [&]() -> biconvey_t* {
    untyped_conveyor q = layout();
    untyped_conveyor r = layout();
    return std::make_unique<biconveyor>(convoy::untyped_biconveyor(std::move(q), std::move(r)),
                                        options)
        .release();
  });
}

}  // namespace

extern "C" {

biconvey_t* biconvey_new(size_t max_bytes, size_t n_local, const convey_alc8r_t* alloc,
                         uint64_t options) {
  const size_t half = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes / 2;
  return make_pair("biconvey_new", options, [&] {
    convoy::termination::layout_request lr;
    lr.max_bytes = half;
    lr.n_local = n_local;
    std::optional<untyped_conveyor> kept;
    cf::choose(lr, options, [&](const layout_plan& candidate) {
      kept.reset();  // the previous attempt's buffers go back first
      kept.emplace(make_core(candidate, alloc, options));
      return kept->max_memory_bytes();
    });
    return std::move(*kept);
  });
}

biconvey_t* biconvey_new_simple(size_t capacity, const convey_alc8r_t* alloc,
                                const convey_mpp_a2a_t* a2a, uint64_t options) {
  return make_pair("biconvey_new_simple", options, [&] {
    if (a2a) throw convoy::error("mpp_utilV4 all-to-all strategies are not supported: pass NULL");
    if (capacity == 0) throw convoy::error("capacity must be positive");
    layout_plan t;
    t.kind = convoy::termination::layout_kind::bulk;
    t.payload_bytes = capacity;
    return make_core(t, alloc, options);
  });
}

biconvey_t* biconvey_new_tensor(size_t capacity, int order, size_t n_local, size_t n_buffers,
                                const convey_alc8r_t* alloc, uint64_t options) {
  return make_pair("biconvey_new_tensor", options, [&] {
    return make_core(cf::tensor_layout(capacity, order, n_local, n_buffers), alloc, options);
  });
}

int biconvey_begin(biconvey_t* b, size_t query_bytes, size_t reply_bytes,
                   void (*answer)(const void*, void*, void*), void* context) {
  if (!b) return convey_error_NULL;
  if (const auto rc = refusal(b->core.current_state(), call::begin))
    return b->translate("biconvey_begin", *rc);
  if (!answer) return b->panic("biconvey_begin", convey_error_NOFUNC);  // bale's code
  if (query_bytes == 0 || reply_bytes == 0) return b->panic("biconvey_begin", convey_error_ZERO);
  try {
    const int rc = b->core.begin(
        query_bytes, reply_bytes,
        [answer, context](const std::byte* q, std::byte* r, int) { answer(q, r, context); });
    return rc < 0 ? b->translate("biconvey_begin", rc) : convey_OK;
  } catch (...) {  // a collective build of dynamic buffers failed
    return b->panic("biconvey_begin", convey_error_ALLOC);
  }
}

int biconvey_push(biconvey_t* b, const void* query, int64_t pe) {
  return convoy_bipush_inline_(b, query, pe);
}

int convoy_v1_bilane_full(biconvey_t* b, uint32_t lane) {
  b->core.lane_full(lane);
  return convey_OK;
}

int convoy_v1_bipush(biconvey_t* b, const void* query, int64_t pe) {
  if (!b) return convey_error_NULL;
  const int n = b->core.n_ranks();
  const int rc = b->core.push(query, pe < 0 || pe >= n ? -1 : static_cast<int>(pe));
  return rc < 0 ? b->translate("biconvey_push", rc) : rc;
}

int biconvey_pull(biconvey_t* b, void* reply) { return convoy_bipull_inline_(b, reply); }

int convoy_v1_bipull(biconvey_t* b, void* reply) {
  if (!b) return convey_error_NULL;
  const int rc = b->core.pull(reply);
  return rc < 0 ? b->translate("biconvey_pull", rc) : rc;
}

int biconvey_advance(biconvey_t* b, bool done) {
  if (!b) return convey_error_NULL;
  try {
    const int rc = b->core.advance(done);
    return rc < 0 ? b->translate("biconvey_advance", rc) : rc;
  } catch (...) {
    return b->panic("biconvey_advance", convey_error_INTERNAL);
  }
}

int biconvey_reset(biconvey_t* b) {
  if (!b) return convey_error_NULL;
  try {
    const int rc = b->core.reset();
    return rc < 0 ? b->translate("biconvey_reset", rc) : convey_OK;
  } catch (...) {
    return b->panic("biconvey_reset", convey_error_INTERNAL);
  }
}

int biconvey_free(biconvey_t* b) {
  if (!b) return convey_OK;
  if (const auto rc = refusal(b->core.current_state(), call::destroy))
    return b->translate("biconvey_free", *rc);
  int rc = convey_OK;
  try {
    rc = b->core.reset();  // COMPLETE: the reply conveyor's buffers first (LIFO)
  } catch (...) {
    rc = convey_error_INTERNAL;
  }
  delete b;  // the reply conveyor is destroyed first, so allocator blocks go back LIFO
  return rc < 0 ? cf::to_convey(rc) : convey_OK;
}

}  // extern "C"
