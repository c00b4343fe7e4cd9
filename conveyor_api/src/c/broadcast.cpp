// convoy_convey_new_broadcast and convoy_convey_broadcast (convoy/convey_ext.h,
// CAPI-130..133): the C++ core's broadcast conveyors (conveyor_options::broadcast,
// termination::engine::broadcast). Only translates: the engine validates.
#include <convoy/convey_ext.h>

#include "construct.hpp"
#include "facade.hpp"

namespace cf = convoy::facade;
using convoy::termination::call;

extern "C" {

convey_t* convoy_convey_new_broadcast(size_t capacity, size_t n_buffers,
                                      const convey_alc8r_t* alloc, uint64_t options) {
  return cf::construct("convoy_convey_new_broadcast", options, [&] {
    cf::conveyor_request r;
    r.layout = cf::tensor_layout(capacity, 1, 1, n_buffers);  // bale's checks of both
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

}  // extern "C"
