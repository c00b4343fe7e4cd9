// detail::large_buffer alone (aggregation/README.md, AGG-128): the one buffer of both
// large-item channels. Own memory grows to the largest item, never past the bound; a
// source's block is used as given, never grown, and goes back to its source once.
#include <gtest/gtest.h>

#include <convoy/aggregation/detail/large_buffer.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <string>

#include <convoy_test/counting_source.hpp>
#include "error_of.hpp"

namespace {

using convoy::aggregation::detail::check_large_item;
using convoy::aggregation::detail::large_buffer;

// AGG-128
TEST(LargeBuffer, OwnMemoryGrowsToTheLargestItemOnly) {
  large_buffer b;
  EXPECT_EQ(b.data(), nullptr);
  b.fit(0, 100);  // an empty item needs no memory
  EXPECT_EQ(b.capacity(), 0u);
  b.fit(40, 100);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u);
  EXPECT_EQ(b.capacity(), 40u);
  std::byte* first = b.data();
  b.fit(10, 100);  // smaller: kept
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b.capacity(), 40u);
  b.fit(100, 100);  // the bound itself fits
  EXPECT_EQ(b.capacity(), 100u);
  EXPECT_FALSE(b.borrowed());
  b.free();
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.capacity(), 0u);
}

// AGG-128
TEST(LargeBuffer, AnItemAboveTheBoundIsNamed) {
  large_buffer b;
  const std::string what = convoy_test::error_of([&] { b.fit(101, 100); });
  EXPECT_NE(what.find("101 bytes exceeds the bound 100"), std::string::npos) << what;
  EXPECT_EQ(b.data(), nullptr);  // nothing allocated
  EXPECT_NO_THROW(check_large_item(100, 100));
  EXPECT_THROW(check_large_item(1, 0), convoy::error);
}

// AGG-128, AGG-11
TEST(LargeBuffer, ASourceBlockIsUsedAsGivenAndReturnedOnce) {
  convoy_test::counting_source src;
  {
    large_buffer b;
    std::byte* block = src.grab(64);
    b.adopt(src, block, 64);
    EXPECT_TRUE(b.borrowed());
    b.fit(64, 64);
    EXPECT_EQ(b.data(), block);  // no own allocation beside it
    EXPECT_EQ(b.capacity(), 64u);
    EXPECT_EQ(src.n_released, 0u);
  }  // the destructor gives it back
  EXPECT_EQ(src.n_released, 1u);
  EXPECT_TRUE(src.live.empty());
  EXPECT_TRUE(src.errors.empty());
}

// AGG-128
TEST(LargeBuffer, ASourceBlockNeverGrows) {
  convoy_test::counting_source src;
  large_buffer b;
  b.adopt(src, src.grab(16), 16);
  const std::string what = convoy_test::error_of([&] { b.fit(32, 64); });
  EXPECT_NE(what.find("buffer source block smaller than the item"), std::string::npos) << what;
  EXPECT_EQ(b.capacity(), 16u);
  b.free();
  EXPECT_EQ(src.n_released, 1u);
  b.free();  // twice: nothing more
  EXPECT_EQ(src.n_released, 1u);
}

// AGG-128
TEST(LargeBuffer, LeakForgetsWithoutReturning) {
  convoy_test::counting_source src;
  std::byte* block = src.grab(8);
  {
    large_buffer b;
    b.adopt(src, block, 8);
    b.leak();
    EXPECT_EQ(b.data(), nullptr);
  }
  EXPECT_EQ(src.n_released, 0u);  // still the source's to free (its destructor does)
  EXPECT_EQ(src.live.size(), 1u);
}

}  // namespace
