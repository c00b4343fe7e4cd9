#pragma once
// The layouts the fold passes are compiled for (combine_table.cpp, combine_cache.cpp): the
// operations of combine_op, and items of 8, 16 or 24 bytes (Item 0: the size read at run
// time).
#include <convoy/aggregation/combine_spec.hpp>
#include <cstddef>

namespace convoy::aggregation::detail {

// pick.template operator()<Op, Item>() for `op` and `item_bytes`.
template <class Pick>
auto pick_layout(combine_op op, std::size_t item_bytes, Pick pick) noexcept {
  const auto by_size = [&]<combine_op Op>() {
    switch (item_bytes) {
      case 8:
        return pick.template operator()<Op, 8>();
      case 16:
        return pick.template operator()<Op, 16>();
      case 24:
        return pick.template operator()<Op, 24>();
      default:
        return pick.template operator()<Op, 0>();
    }
  };
  switch (op) {
    case combine_op::add_u32:
      return by_size.template operator()<combine_op::add_u32>();
    case combine_op::add_u64:
      return by_size.template operator()<combine_op::add_u64>();
    case combine_op::add_f64:
      return by_size.template operator()<combine_op::add_f64>();
    case combine_op::call:
      break;
  }
  return by_size.template operator()<combine_op::call>();
}

}  // namespace convoy::aggregation::detail
