// The constructors of convey.h (collective; NULL plus one message on failure).
#include <convoy/base/error.hpp>
#include <cstdint>
#include <exception>
#include <string>

#include "facade.hpp"

namespace cf = convoy::facade;

namespace {

template <class F>
convey_t* construct(const char* who, std::uint64_t options, F&& build) noexcept {
  std::string why;
  if (!cf::ensure_mpi(why)) {
    cf::constructor_failed(who, options, why.c_str());
    return nullptr;
  }
  try {
    return build();
  } catch (const std::exception& e) {
    cf::constructor_failed(who, options, e.what());
  } catch (...) {
    cf::constructor_failed(who, options, "unknown exception");
  }
  return nullptr;
}

// Builds what choose() picked; retries with smaller buffers when the engine's fixed costs
// (beyond the link-buffer model) push the real footprint over max_bytes.
::conveyor* build_generic(std::size_t max_bytes, std::size_t n_local, bool elastic,
                          std::size_t item_bound, const convey_alc8r_t* alloc,
                          std::uint64_t options) {
  std::size_t cap = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    cf::tensor_request r;
    bool simple = false;
    if (!cf::choose(max_bytes, n_local, elastic, item_bound, options, cap, r, simple)) break;
    ::conveyor* c =
        simple ? cf::make_simple(r.capacity, alloc, options) : cf::make_tensor(r, alloc, options);
    if (max_bytes == SIZE_MAX) return c;
    unsigned long long mine = c->max_memory_bytes_(), worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (worst <= max_bytes) return c;
    delete c;
    // The engine's fixed costs (self queue, staging) grow with the buffer size too: shrink
    // the buffers in proportion and try again.
    cap = static_cast<std::size_t>(static_cast<double>(r.capacity) * 0.9 *
                                   static_cast<double>(max_bytes) / static_cast<double>(worst));
    if (cap < 32) break;
  }
  throw convoy::error("no conveyor fits in max_bytes = " + std::to_string(max_bytes) +
                      " bytes per PE");
}

}  // namespace

extern "C" {

convey_t* convey_new(size_t max_bytes, size_t n_local, const convey_alc8r_t* alloc,
                     uint64_t options) {
  return construct("convey_new", options,
                   [&] { return build_generic(max_bytes, n_local, false, 0, alloc, options); });
}

convey_t* convey_new_elastic(size_t item_bound, size_t max_bytes, size_t n_local,
                             const convey_alc8r_t* alloc, uint64_t options) {
  return construct("convey_new_elastic", options, [&] {
    return build_generic(max_bytes, n_local, true, item_bound, alloc, options);
  });
}

convey_t* convey_new_simple(size_t capacity, const convey_alc8r_t* alloc,
                            const convey_mpp_a2a_t* a2a, uint64_t options) {
  return construct("convey_new_simple", options, [&] {
    if (a2a) throw convoy::error("mpp_utilV4 all-to-all strategies are not supported: pass NULL");
    return cf::make_simple(capacity, alloc, options);
  });
}

convey_t* convey_new_twohop(size_t capacity, size_t row_procs, const convey_alc8r_t* alloc,
                            uint64_t options) {
  return construct("convey_new_twohop", options, [&] {
    cf::tensor_request r;
    r.capacity = capacity;
    r.order = 2;
    r.n_local = row_procs;
    r.n_buffers = 2;
    r.steady = (options & convey_opt_PROGRESS) != 0;
    return cf::make_tensor(r, alloc, options);
  });
}

convey_t* convey_new_tensor(size_t capacity, int order, size_t n_local, size_t n_buffers,
                            const convey_alc8r_t* alloc, uint64_t options) {
  return construct("convey_new_tensor", options, [&] {
    cf::tensor_request r;
    r.capacity = capacity;
    r.order = order == 0 ? -1 : order;  // 0 is not a valid order here (it means "mesh")
    r.n_local = order == 1 ? 1 : n_local;
    r.n_buffers = n_buffers;
    r.steady = (options & convey_opt_PROGRESS) != 0;
    return cf::make_tensor(r, alloc, options);
  });
}

convey_t* convey_new_etensor(size_t buffer_bytes, size_t monster_bytes, int order, size_t n_local,
                             size_t n_buffers, const convey_alc8r_t* alloc, uint64_t options) {
  return construct("convey_new_etensor", options, [&] {
    cf::tensor_request r;
    r.capacity = buffer_bytes;
    r.order = order == 0 ? -1 : order;
    r.n_local = order == 1 ? 1 : n_local;
    r.n_buffers = n_buffers;
    r.elastic = true;
    r.monster_bytes = monster_bytes;
    r.steady = true;
    return cf::make_tensor(r, alloc, options);
  });
}

}  // extern "C"
