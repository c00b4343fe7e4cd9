// Run-time helpers of the C façade: MPI life cycle, environment, node layout, allocation,
// one-time messages.
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/machine.hpp>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <numeric>
#include <set>

#include "facade.hpp"

namespace convoy::facade {

const char* state_name(cstate s) noexcept {
  switch (s) {
    case cstate::dormant:
      return "DORMANT";
    case cstate::working:
      return "WORKING";
    case cstate::endgame:
      return "ENDGAME";
    case cstate::cleanup:
      return "CLEANUP";
    case cstate::complete:
      return "COMPLETE";
  }
  return "?";
}

namespace {
bool g_we_initialized = false;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace

// Process model (convey-api.md): programs of bale's MPI build call MPI_Init; OpenSHMEM-style
// programs never do, and then the library owns MPI from first use to exit.
bool ensure_mpi(std::string& why) noexcept {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return true;
  MPI_Finalized(&finalized);
  if (finalized) {
    why = "MPI has already been finalized";
    return false;
  }
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    why = "MPI_Init_thread failed";
    return false;
  }
  if (!g_we_initialized) {
    g_we_initialized = true;
    std::atexit(finalize_at_exit);
  }
  return true;
}

env_settings read_env() {
  // One place parses and validates every setting (topology/settings.hpp); collective so
  // that all PEs see rank 0's environment and choose the same conveyor.
  const auto s = convoy::base::settings::from_env(MPI_COMM_WORLD);
  env_settings e;
  if (s.convey_nlocal) e.nlocal = static_cast<std::size_t>(*s.convey_nlocal);
  if (s.convey_buffer_size) e.buffer_bytes = *s.convey_buffer_size;
  if (s.mesh) e.mesh = *s.mesh;
  return e;
}

node_layout discover_nodes(MPI_Comm comm) {
  const topology::machine m = topology::discover(comm);
  node_layout out;
  out.node_of_rank.reserve(m.ranks.size());
  for (const auto& r : m.ranks) out.node_of_rank.push_back(r.node);
  int g = 0;
  bool contiguous = true;  // bale's groups are consecutive PEs (seed 000 sec. 4.3.1)
  for (const auto& n : m.nodes) {
    g = std::gcd(g, static_cast<int>(n.ranks.size()));
    if (!n.ranks.empty() &&
        n.ranks.back() - n.ranks.front() + 1 != static_cast<int>(n.ranks.size()))
      contiguous = false;
  }
  out.uniform_local = static_cast<std::size_t>(g > 0 && contiguous ? g : 1);
  return out;
}

allocator::allocator(const convey_alc8r_t* a) noexcept {
  if (a && a->grab && a->free) {
    a_ = *a;
    has_ = true;
  }
}

void* allocator::grab(std::size_t bytes, const char* tag, int line) noexcept {
  if (bytes == 0) bytes = 1;
  if (has_) return a_.grab(a_.alc8r, bytes, tag, static_cast<std::uint64_t>(line));
  return ::operator new (bytes, std::align_val_t{64}, std::nothrow);
}

void allocator::release(void* p) noexcept {
  if (!p) return;
  if (has_)
    a_.free(a_.alc8r, p);
  else
    ::operator delete (p, std::align_val_t{64});
}

namespace {
class alc8r_source final : public aggregation::buffer_source {
 public:
  explicit alc8r_source(const convey_alc8r_t& a) noexcept : a_(a) {}
  std::byte* grab(std::size_t bytes) override {
    return static_cast<std::byte*>(a_.grab(a_.alc8r, bytes, __FILE__, __LINE__));
  }
  void release(std::byte* block) noexcept override { a_.free(a_.alc8r, block); }

 private:
  convey_alc8r_t a_;
};
}  // namespace

std::shared_ptr<aggregation::buffer_source> make_buffer_source(const convey_alc8r_t* a) {
  if (!a || !a->grab || !a->free) return nullptr;
  return std::make_shared<alc8r_source>(*a);
}

void print_once(const std::string& what) noexcept {
  try {
    static std::mutex m;
    static std::set<std::string> seen;
    std::lock_guard<std::mutex> lock(m);
    if (!seen.insert(what).second) return;
  } catch (...) {
  }
  std::fprintf(stderr, "convey: %s\n", what.c_str());
  std::fflush(stderr);
}

void constructor_failed(const char* who, std::uint64_t options, const char* what) noexcept {
  if (options & convey_opt_QUIET) return;
  try {
    print_once(std::string(who) + ": " + what);
  } catch (...) {
  }
}

std::size_t natural_align(std::size_t bytes) noexcept {
  std::size_t a = bytes & (~bytes + 1);  // lowest set bit
  if (a == 0 || a > CONVEY_MAX_ALIGN) a = CONVEY_MAX_ALIGN;
  return a;
}

}  // namespace convoy::facade
