// The fold passes' instantiations (combine_table.hpp, "Fold on fill"), compiled once.
#include <convoy/aggregation/combine_table.hpp>

namespace convoy::aggregation {

namespace {

template <combine_op Op>
fold_pass_fn pick_by_size(std::size_t item_bytes, std::uint32_t key_bytes) noexcept {
  const auto by_key = [&]<std::size_t Item>() -> fold_pass_fn {
    if (key_bytes == 8) return &fold_records<Item, 8, Op>;
    if (key_bytes == 4) return &fold_records<Item, 4, Op>;
    return &fold_records<Item, 0, Op>;
  };
  switch (item_bytes) {
    case 8:
      return by_key.template operator()<8>();
    case 16:
      return by_key.template operator()<16>();
    case 24:
      return by_key.template operator()<24>();
    default:
      return by_key.template operator()<0>();
  }
}

}  // namespace

fold_pass_fn pick_fold_pass(std::size_t item_bytes, const combine_spec& s) noexcept {
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
