#include <sys/mman.h>
#include <unistd.h>

#include <convoy/aggregation/detail/lazy_arena.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <string>

namespace convoy::aggregation::detail {

namespace {
constexpr std::size_t chunk_bytes = std::size_t{64} << 30;

std::size_t page_bytes() noexcept {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}
}  // namespace

lazy_arena::~lazy_arena() {
  for (const chunk& c : chunks_) ::munmap(c.base, chunk_bytes);
}

std::byte* lazy_arena::carve(std::size_t bytes) {
  if (bytes > chunk_bytes)
    throw convoy::error("lazy arena: a block of " + std::to_string(bytes) +
                        " bytes exceeds a chunk of 64 GiB");
  const std::size_t page = page_bytes();
  const std::size_t rounded = (bytes + page - 1) / page * page;
  if (chunks_.empty() || chunks_.back().used + rounded > chunk_bytes) {
    // NORESERVE: no swap or commit charge; pages exist once written (overcommit mode 0/1).
    void* p = ::mmap(nullptr, chunk_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)  // NOLINT(performance-no-int-to-ptr): the POSIX constant
      throw convoy::error("lazy arena: mmap of 64 GiB of address space failed");
    chunks_.push_back({static_cast<std::byte*>(p), 0});
  }
  chunk& c = chunks_.back();
  std::byte* out = c.base + c.used;
  c.used += rounded;
  return out;
}

void lazy_arena::give_back(std::byte* p, std::size_t bytes) noexcept {
  const std::size_t page = page_bytes();
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = (begin + bytes) / page * page;
  if (last > first)
    ::madvise(reinterpret_cast<void*>(first),  // NOLINT(performance-no-int-to-ptr)
              last - first, MADV_DONTNEED);
}

}  // namespace convoy::aggregation::detail
