#pragma once
/// @file
/// Private helpers for the mixed-radix routing tags (router/README.md 7).
#include <cstdint>

namespace convoy::router::detail {

/// Bytes needed to store any value in [0, n_values): the smallest b with 256^b >= n_values.
/// 0 when n_values <= 1 (the link alone identifies the item).
[[nodiscard]] constexpr int bytes_for(std::uint64_t n_values) noexcept {
  int b = 0;
  while (b < 8 && (std::uint64_t{1} << (8 * b)) < n_values) ++b;
  return b;
}

/// Appends fields least significant first: tag = f0 + r0 * (f1 + r1 * (f2 + ...)).
class radix_writer {
 public:
  constexpr void put(std::uint64_t field, std::uint64_t radix) noexcept {
    tag_ += field * scale_;
    scale_ *= radix;
  }
  [[nodiscard]] constexpr std::uint64_t tag() const noexcept { return tag_; }

 private:
  std::uint64_t tag_ = 0;
  std::uint64_t scale_ = 1;
};

/// Reads the fields back in the order radix_writer put them.
class radix_reader {
 public:
  explicit constexpr radix_reader(std::uint64_t tag) noexcept : rest_(tag) {}
  constexpr int get(std::uint64_t radix) noexcept {
    const auto f = static_cast<int>(rest_ % radix);
    rest_ /= radix;
    return f;
  }

 private:
  std::uint64_t rest_;
};

}  // namespace convoy::router::detail
