// Run-time helpers of the C façade: the MPI life cycle (init, finalize, this PE and the
// PE count), allocation, one-time messages.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <set>

#include "facade.hpp"

namespace convoy::facade {

namespace {
bool g_we_initialized = false;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace

// Process model (docs/c-api.md): programs of bale's MPI build call MPI_Init; OpenSHMEM-style
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

bool owns_mpi() noexcept { return g_we_initialized; }

int world_rank() noexcept {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() noexcept {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
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

std::size_t natural_align(std::size_t bytes) noexcept {
  std::size_t a = bytes & (~bytes + 1);  // lowest set bit
  if (a == 0 || a > CONVEY_MAX_ALIGN) a = CONVEY_MAX_ALIGN;
  return a;
}

aligned_bytes make_aligned(std::size_t bytes) {
  return aligned_bytes(static_cast<std::byte*>(::operator new (bytes, std::align_val_t{64})));
}

}  // namespace convoy::facade
