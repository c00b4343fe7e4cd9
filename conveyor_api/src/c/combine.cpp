// convoy_convey_set_combine (convoy/convey_ext.h, CAPI-120..123): the C++ core's combining
// (conveyor_options::combine, termination::engine::set_combine) for the streaming kinds.
// Only translates: the engine checks the spec against the item size at begin; the library's
// sums (convoy_combine_add_*) become the core's inlined operations (combine_op).
#include <convoy/convey_ext.h>

#include <cstdint>

#include "facade.hpp"

using convoy::termination::call;
namespace agg = convoy::aggregation;
using agg::combine_op;

extern "C" {

void convoy_combine_add_u64(void* into, const void* from) {
  agg::combine_add<std::uint64_t>(into, from);
}
void convoy_combine_add_u32(void* into, const void* from) {
  agg::combine_add<std::uint32_t>(into, from);
}
void convoy_combine_add_double(void* into, const void* from) {
  agg::combine_add<double>(into, from);
}

}  // extern "C"

namespace {

// The fold the core inlines for one of the library's sums, else a call of `fn`.
combine_op library_op(convoy_combine_fn fn) noexcept {
  if (fn == &convoy_combine_add_u64) return combine_op::add_u64;
  if (fn == &convoy_combine_add_u32) return combine_op::add_u32;
  if (fn == &convoy_combine_add_double) return combine_op::add_f64;
  return combine_op::call;
}

}  // namespace

extern "C" {

int convoy_convey_set_combine(convey_t* c, size_t key_offset, size_t key_bytes, size_t value_offset,
                              size_t value_bytes, convoy_combine_fn combine) {
  static const char* const where = "convoy_convey_set_combine";
  if (!c) return convey_error_NULL;
  if (const auto rc = c->refuse(where, call::configure)) return *rc;
  convoy::aggregation::combine_spec spec;
  if (combine) {
    constexpr std::size_t most = UINT32_MAX;
    if (key_bytes == 0 || value_bytes == 0)
      return c->panic(where, convey_error_USAGE, "key_bytes and value_bytes must be >= 1");
    if (key_offset > most || key_bytes > most || value_offset > most || value_bytes > most ||
        key_offset + key_bytes > most || value_offset + value_bytes > most)
      return c->panic(where, convey_error_USAGE, "key or value beyond 4 GiB");
    if (key_offset < value_offset + value_bytes && value_offset < key_offset + key_bytes)
      return c->panic(where, convey_error_USAGE, "the key and the value overlap");
    spec = {static_cast<std::uint32_t>(key_offset),
            static_cast<std::uint32_t>(key_bytes),
            static_cast<std::uint32_t>(value_offset),
            static_cast<std::uint32_t>(value_bytes),
            combine,
            library_op(combine)};
    if (spec.op != combine_op::call && agg::combine_spec_problem(spec, SIZE_MAX) != nullptr)
      return c->panic(where, convey_error_USAGE,
                      "value_bytes must be 8 for convoy_combine_add_u64 and "
                      "convoy_combine_add_double, 4 for convoy_combine_add_u32");
  } else {
    spec.fn = nullptr;
  }
  int rc = 0;
  try {
    rc = c->core.set_combine(spec);
  } catch (...) {
    return c->panic(where, convey_error_ALLOC);
  }
  if (rc == convoy::termination::error_elastic || rc == convoy::termination::error_mode)
    return c->panic(where, convey_error_USAGE,
                    "combining needs a tensor or mesh conveyor of rigid items, not a broadcast");
  if (rc < 0) return c->panic(where, convoy::facade::to_convey(rc));
  return convey_OK;
}

}  // extern "C"
