// The lazily committed buffer memory of the timed network (aggregation/README.md AGG-141).
#include <gtest/gtest.h>
#include <unistd.h>

#include <convoy/aggregation/detail/lazy_arena.hpp>
#include <cstdint>
#include <cstring>

namespace {

using convoy::aggregation::detail::lazy_arena;

// AGG-141: blocks are page-aligned, distinct and zero; give_back() returns whole pages only
// (they read as zero again) and leaves partial pages alone.
TEST(LazyArena, BlocksAreAlignedAndGiveBackDropsWholePages) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  lazy_arena arena;
  std::byte* a = arena.carve(3 * page);
  std::byte* b = arena.carve(1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % page, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % page, 0u);
  EXPECT_GE(b, a + 3 * page);
  for (std::size_t i = 0; i < 3 * page; ++i) ASSERT_EQ(a[i], std::byte{0});
  std::memset(a, 0x5a, 3 * page);
  b[0] = std::byte{1};
  // From the middle of page 0 to the middle of page 2: only page 1 is whole.
  lazy_arena::give_back(a + page / 2, 2 * page);
  EXPECT_EQ(a[page / 2], std::byte{0x5a});
  EXPECT_EQ(a[page], std::byte{0});
  EXPECT_EQ(a[2 * page - 1], std::byte{0});
  EXPECT_EQ(a[2 * page], std::byte{0x5a});
  lazy_arena::give_back(a + 10, 20);  // no whole page: nothing changes
  EXPECT_EQ(a[15], std::byte{0x5a});
  EXPECT_EQ(b[0], std::byte{1});
}

}  // namespace
