// The constructors of convey.h (collective): bale's arguments checked and turned into a
// layout (convoy::termination::layout_plan), the generic ones through
// convoy::termination::choose_and_build; NULL and one message on failure (CAPI-8).
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "construct.hpp"
#include "facade.hpp"

namespace cf = convoy::facade;
using convoy::termination::layout_kind;
using convoy::termination::layout_plan;

namespace {

// Bounds beyond which an argument is a mistake, not a size (CAPI-8): a buffer of the
// engine's largest (1 GiB, base::max_buffer_bytes), an item of 1 TiB.
using convoy::base::max_buffer_bytes;
constexpr std::size_t max_item_bytes = std::size_t{1} << 40;

void check_capacity(const char* what, std::size_t bytes) {
  if (bytes == 0) throw convoy::error(std::string(what) + " must be positive");
  if (bytes > max_buffer_bytes)
    throw convoy::error(std::string(what) + " " + std::to_string(bytes) +
                        " is above the 1 GiB limit of a buffer");
}

void check_item_bound(const char* what, std::size_t bytes) {
  if (bytes > max_item_bytes)
    throw convoy::error(std::string(what) + " " + std::to_string(bytes) +
                        " is above the 1 TiB limit of an item");
}

// convey_new's n_local is a hint (0: the node's PEs); one that does not divide the PE count
// falls back to one-hop routes, as bale's does, but more PEs than the job has is a mistake.
void check_n_local_hint(std::size_t n_local) {
  const auto p = static_cast<std::size_t>(cf::world_size());
  if (n_local > p)
    throw convoy::error("n_local " + std::to_string(n_local) + " is more than the " +
                        std::to_string(p) + " PEs");
}

}  // namespace

layout_plan cf::tensor_layout(std::size_t capacity, int order, std::size_t n_local,
                              std::size_t n_buffers) {
  const auto p = static_cast<std::size_t>(cf::world_size());
  check_capacity("buffer capacity", capacity);
  if (order < 1 || order > 3)
    throw convoy::error("order " + std::to_string(order) + " is not 1, 2 or 3");
  const auto& limit = convoy::base::limit_of("CONVOY_N_BUFFERS");
  if (n_buffers < limit.min || n_buffers > limit.max || (n_buffers & (n_buffers - 1)) != 0)
    throw convoy::error("n_buffers " + std::to_string(n_buffers) +
                        ": must be a power of two from " + convoy::base::range_text(limit));
  if (order >= 2) {
    if (n_local == 0) throw convoy::error("n_local must be at least 1");
    if (n_local > p || p % n_local != 0)
      throw convoy::error("n_local " + std::to_string(n_local) + " does not divide the PE count " +
                          std::to_string(p));
  }
  layout_plan t;
  t.kind = layout_kind::tensor;
  t.order = order;
  t.n_local = order == 1 ? 1 : n_local;
  t.payload_bytes = capacity;
  t.n_buffers = static_cast<int>(n_buffers);
  return t;
}

layout_plan cf::choose(const convoy::termination::layout_request& r, std::uint64_t options,
                       const std::function<std::size_t(const layout_plan&)>& build) {
  layout_plan t = convoy::termination::choose_and_build(MPI_COMM_WORLD, r, build);
  const bool shown =
      (options & convey_opt_ALERT) || (t.note_is_warning && !(options & convey_opt_QUIET));
  if (!t.note.empty() && shown && cf::world_rank() == 0) cf::print_once("warning: " + t.note);
  return t;
}

namespace {

cf::conveyor_request request(const layout_plan& t) {
  cf::conveyor_request r;
  r.layout = t;
  return r;
}

// What choose_and_build picked, under the request `lr`.
convey_t* build_chosen(const convoy::termination::layout_request& lr, const convey_alc8r_t* alloc,
                       std::uint64_t options) {
  std::unique_ptr<convey_t> kept;
  cf::choose(lr, options, [&](const layout_plan& candidate) {
    kept.reset();  // the previous attempt's buffers go back first
    cf::conveyor_request r = request(candidate);
    r.elastic = lr.elastic;  // never with a bulk candidate (allow_bulk = false)
    r.item_bound = lr.item_bound;
    kept.reset(cf::make_conveyor(r, alloc, options));
    return kept->core.max_memory_bytes();
  });
  return kept.release();
}

}  // namespace

extern "C" {

convey_t* convey_new(size_t max_bytes, size_t n_local, const convey_alc8r_t* alloc,
                     uint64_t options) {
  return cf::construct("convey_new", options, [&] {
    check_n_local_hint(n_local);
    convoy::termination::layout_request r;
    r.max_bytes = max_bytes;
    r.n_local = n_local;
    return build_chosen(r, alloc, options);
  });
}

convey_t* convey_new_elastic(size_t item_bound, size_t max_bytes, size_t n_local,
                             const convey_alc8r_t* alloc, uint64_t options) {
  return cf::construct("convey_new_elastic", options, [&] {
    check_n_local_hint(n_local);
    check_item_bound("item_bound", item_bound);
    convoy::termination::layout_request r;
    r.max_bytes = max_bytes;
    r.n_local = n_local;
    r.elastic = true;
    r.item_bound = item_bound;
    r.allow_bulk = false;
    return build_chosen(r, alloc, options);
  });
}

convey_t* convey_new_simple(size_t capacity, const convey_alc8r_t* alloc,
                            const convey_mpp_a2a_t* a2a, uint64_t options) {
  return cf::construct("convey_new_simple", options, [&] {
    if (a2a) throw convoy::error("mpp_utilV4 all-to-all strategies are not supported: pass NULL");
    check_capacity("capacity", capacity);
    layout_plan t;
    t.kind = layout_kind::bulk;
    t.payload_bytes = capacity;
    return cf::make_conveyor(request(t), alloc, options);
  });
}

convey_t* convey_new_twohop(size_t capacity, size_t row_procs, const convey_alc8r_t* alloc,
                            uint64_t options) {
  return cf::construct("convey_new_twohop", options, [&] {
    return cf::make_conveyor(request(cf::tensor_layout(capacity, 2, row_procs, 2)), alloc, options);
  });
}

convey_t* convey_new_tensor(size_t capacity, int order, size_t n_local, size_t n_buffers,
                            const convey_alc8r_t* alloc, uint64_t options) {
  return cf::construct("convey_new_tensor", options, [&] {
    return cf::make_conveyor(request(cf::tensor_layout(capacity, order, n_local, n_buffers)), alloc,
                             options);
  });
}

convey_t* convey_new_etensor(size_t buffer_bytes, size_t monster_bytes, int order, size_t n_local,
                             size_t n_buffers, const convey_alc8r_t* alloc, uint64_t options) {
  return cf::construct("convey_new_etensor", options, [&] {
    check_item_bound("monster_bytes", monster_bytes);
    cf::conveyor_request r = request(cf::tensor_layout(buffer_bytes, order, n_local, n_buffers));
    r.elastic = true;
    r.item_bound = monster_bytes;  // bale's elastic_epush: up to max_size
    return cf::make_conveyor(r, alloc, options);
  });
}

}  // extern "C"
