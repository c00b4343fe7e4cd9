// convoy_convey_new_broadcast, convoy_convey_broadcast and convoy_convey_broadcast_batch
// (convoy/convey_ext.h, CAPI-130..133, CAPI-137): the C++ core's broadcast conveyors
// (conveyor_options::broadcast, termination::engine::broadcast and broadcast_batch). Only
// translates: the engine validates.
#include <convoy/convey_ext.h>

#include <cstddef>
#include <cstdint>

#include "construct.hpp"
#include "facade.hpp"

namespace cf = convoy::facade;
using convoy::termination::call;

extern "C" {

convey_t* convoy_convey_new_broadcast(size_t capacity, size_t n_buffers,
                                      const convey_alc8r_t* alloc, uint64_t options) {
  return cf::construct("convoy_convey_new_broadcast", options, [&] {
    cf::conveyor_request r;
    // SIZE_MAX: the broadcast kind's default buffers (BCAST-8), sized from the mesh.
    const bool chosen = capacity == SIZE_MAX;
    r.layout = cf::tensor_layout(chosen ? 1 : capacity, 1, 1, n_buffers);  // bale's checks
    if (chosen) r.layout.payload_bytes = 0;
    r.layout.kind = convoy::termination::layout_kind::mesh;
    r.layout.order = 0;
    r.broadcast = true;
    return cf::make_conveyor(r, alloc, options);
  });
}

int convoy_convey_broadcast(convey_t* c, const void* item) {
  static const char* const where = "convoy_convey_broadcast";
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse(where, call::push)) return *rc;
  if (!item) return c->panic(where, convey_error_NULL);
  const int rc = cf::to_convey(c->engine().broadcast(item));
  if (rc == convey_error_USAGE) return c->panic(where, rc, "not a broadcast conveyor");
  return rc >= 0 ? rc : c->panic(where, rc);  // the engine counts the broadcast as a push
}

int64_t convoy_convey_broadcast_batch(convey_t* c, const void* items, int64_t count) {
  static const char* const where = "convoy_convey_broadcast_batch";
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse(where, call::push)) return *rc;
  if (count < 0) return c->panic(where, convey_error_USAGE, "count is below 0");
  if (!items && count > 0) return c->panic(where, convey_error_NULL);
  const std::int64_t sent = c->engine().broadcast_batch(items, static_cast<std::size_t>(count));
  if (sent >= 0) return sent;  // the engine counts each broadcast as a push
  const int rc = cf::to_convey(static_cast<int>(sent));
  if (rc == convey_error_USAGE) return c->panic(where, rc, "not a broadcast conveyor");
  return c->panic(where, rc);
}

}  // extern "C"
