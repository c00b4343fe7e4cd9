// The C ABI of the one-sided append (convoy/convey_ext.h, convoy_append_*): translates to
// convoy::aggregation::append_buffer. Handles are ids, never reused, so that a call on a
// freed handle is recognized (convey_error_STATE) instead of touching freed memory. A
// program that never initialized MPI has it initialized on first use and finalized at exit,
// as for conveyors (facade::ensure_mpi).
#include <convoy/convey_ext.h>
// Included again after convey_ext.h (a no-op) so that clang names convey.h by this path, which
// clang-tidy's header filter leaves alone: its C typedefs are not C++ (as in convey.cpp).
#include <convey.h>

#include <convoy/aggregation/append_buffer.hpp>
#include <convoy/base/error.hpp>
#include <cstdio>
#include <memory>
#include <new>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

#include "facade.hpp"

namespace {

struct entry {
  std::unique_ptr<convoy::aggregation::append_buffer> buffer;
  std::uint64_t options = 0;
  std::set<int> told;  // codes already reported for this buffer
};

std::unordered_map<std::uint64_t, entry>& registry() {
  static std::unordered_map<std::uint64_t, entry> r;
  return r;
}
std::uint64_t g_next_id = 1;
std::set<int> g_told_unknown;  // codes reported for unknown handles

int my_pe() {
  int initialized = 0, finalized = 0, rank = -1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/// Reports `code` once per buffer (or once for all unknown handles) unless QUIET.
int fail(entry* e, int code, const char* where, const std::string& why) {
  std::set<int>& told = e ? e->told : g_told_unknown;
  const bool quiet = e && (e->options & convey_opt_QUIET);
  if (!quiet && told.insert(code).second)
    std::fprintf(stderr, "convoy_append: %s on PE %d: %s (%s)\n", where, my_pe(),
                 convey_error_string(nullptr, code), why.c_str());
  return code;
}

entry* find(convoy_append_t a) {
  auto it = registry().find(a.id);
  return it == registry().end() ? nullptr : &it->second;
}

/// Runs `body` on a live handle, mapping exceptions to codes.
template <class F>
auto with_live(convoy_append_t a, const char* where, F&& body) noexcept
    -> decltype(body(*find(a))) {
  entry* e = find(a);
  if (!e) return fail(nullptr, convey_error_STATE, where, "the handle was freed or never created");
  try {
    return body(*e);
  } catch (const convoy::error& err) {
    return fail(e, err.mpi_code() == MPI_SUCCESS ? convey_error_USAGE : convey_error_COMMS, where,
                err.what());
  } catch (const std::bad_alloc&) {
    return fail(e, convey_error_ALLOC, where, "out of memory");
  } catch (...) {
    return fail(e, convey_error_INTERNAL, where, "unexpected exception");
  }
}

}  // namespace

extern "C" {

int convoy_append_create(convoy_append_t* out, size_t bytes_per_pe, uint64_t options) {
  entry probe;
  probe.options = options;
  if (!out) return fail(&probe, convey_error_NULL, "create", "out is NULL");
  out->id = 0;
  if (std::string why; !convoy::facade::ensure_mpi(why))
    return fail(&probe, convey_error_COMMS, "create", "MPI is not available: " + why);
  try {
    probe.buffer =
        std::make_unique<convoy::aggregation::append_buffer>(MPI_COMM_WORLD, bytes_per_pe);
  } catch (const convoy::error& err) {
    return fail(&probe, err.mpi_code() == MPI_SUCCESS ? convey_error_USAGE : convey_error_COMMS,
                "create", err.what());
  } catch (const std::bad_alloc&) {
    return fail(&probe, convey_error_ALLOC, "create", "out of memory");
  }
  const std::uint64_t id = g_next_id++;
  registry().emplace(id, std::move(probe));
  out->id = id;
  return 1;
}

int64_t convoy_append_push(convoy_append_t a, int64_t pe, const void* bytes, size_t len) {
  return with_live(a, "push", [&](entry& e) -> int64_t {
    if (pe < 0 || pe >= e.buffer->n_ranks())
      return fail(&e, convey_error_RANGE, "push",
                  "PE " + std::to_string(pe) + " is outside [0, " +
                      std::to_string(e.buffer->n_ranks()) + ")");
    if (!bytes && len > 0) return fail(&e, convey_error_NULL, "push", "bytes is NULL");
    const auto* p = static_cast<const std::byte*>(bytes);
    return static_cast<int64_t>(
        e.buffer->push(static_cast<int>(pe), std::span<const std::byte>(p, len)));
  });
}

int convoy_append_view(convoy_append_t a, const void** data, size_t* bytes, int64_t* n_appends) {
  return with_live(a, "view", [&](entry& e) -> int {
    const auto v = e.buffer->local_view();
    if (data) *data = v.data;
    if (bytes) *bytes = v.bytes;
    if (n_appends) *n_appends = static_cast<int64_t>(v.n_appends);
    return v.complete ? 1 : 0;
  });
}

int64_t convoy_append_offset(convoy_append_t a) {
  return with_live(a, "offset", [&](entry& e) -> int64_t {
    return static_cast<int64_t>(e.buffer->local_view().requested_bytes);
  });
}

int convoy_append_reset(convoy_append_t a) {
  return with_live(a, "reset", [&](entry& e) -> int {
    e.buffer->reset();
    return 1;
  });
}

int convoy_append_free(convoy_append_t a) {
  return with_live(a, "free", [&](entry& e) -> int {
    e.buffer->free();
    registry().erase(a.id);
    return 1;
  });
}

}  // extern "C"
