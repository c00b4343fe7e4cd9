// The hold-back cache's fold passes (combine_cache.hpp), compiled once.
#include <convoy/aggregation/combine_cache.hpp>

namespace convoy::aggregation {

namespace {

template <combine_op Op, std::size_t Item>
cache_pass_fn pick_by_key(std::uint32_t key_bytes) noexcept {
  if constexpr (Item != 0) {
    if (key_bytes == 8) return &fold_through_cache_as<Item, 8, Op>;
    if (key_bytes == 4) return &fold_through_cache_as<Item, 4, Op>;
  }
  return &fold_through_cache_as<Item, 0, Op>;
}

template <combine_op Op>
cache_pass_fn pick_by_size(std::size_t item_bytes, std::uint32_t key_bytes) noexcept {
  switch (item_bytes) {
    case 8:
      return pick_by_key<Op, 8>(key_bytes);
    case 16:
      return pick_by_key<Op, 16>(key_bytes);
    case 24:
      return pick_by_key<Op, 24>(key_bytes);
    default:
      return pick_by_key<Op, 0>(key_bytes);
  }
}

}  // namespace

cache_pass_fn pick_cache_pass(std::size_t item_bytes, const combine_spec& s) noexcept {
  switch (s.op) {
    case combine_op::add_u32:
      return pick_by_size<combine_op::add_u32>(item_bytes, s.key_bytes);
    case combine_op::add_u64:
      return pick_by_size<combine_op::add_u64>(item_bytes, s.key_bytes);
    case combine_op::add_f64:
      return pick_by_size<combine_op::add_f64>(item_bytes, s.key_bytes);
    case combine_op::call:
      break;
  }
  return pick_by_size<combine_op::call>(item_bytes, s.key_bytes);
}

}  // namespace convoy::aggregation
