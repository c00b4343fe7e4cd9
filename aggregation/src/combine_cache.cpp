// The hold-back cache's fold passes (combine_cache.hpp), compiled once.
#include <convoy/aggregation/combine_cache.hpp>

#include "pick_layout.hpp"

namespace convoy::aggregation {

cache_pass_fn pick_cache_pass(std::size_t item_bytes, const combine_spec& s) noexcept {
  return detail::pick_layout(
      s.op, item_bytes,
      [key_bytes = s.key_bytes]<combine_op Op, std::size_t Item>() -> cache_pass_fn {
        if constexpr (Item != 0) {
          if (key_bytes == 8) return &fold_through_cache_as<Item, 8, Op>;
          if (key_bytes == 4) return &fold_through_cache_as<Item, 4, Op>;
        }
        return &fold_through_cache_as<Item, 0, Op>;
      });
}

}  // namespace convoy::aggregation
