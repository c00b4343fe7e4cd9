// The fold passes' instantiations (combine_table.hpp, "Fold on fill"), compiled once.
#include <convoy/aggregation/combine_table.hpp>

namespace convoy::aggregation {

namespace {

template <combine_op Op, std::size_t Item>
fold_pass_fn pick_by_key(std::uint32_t key_bytes, std::uint32_t tag_bytes, bool packed) noexcept {
  if constexpr (Item != 0) {
    if (packed && tag_bytes <= 1) {
      if (key_bytes == 8)
        return tag_bytes == 1 ? &fold_records<Item, 8, Op, 1, true>
                              : &fold_records<Item, 8, Op, 0, true>;
      if (key_bytes == 4)
        return tag_bytes == 1 ? &fold_records<Item, 4, Op, 1, true>
                              : &fold_records<Item, 4, Op, 0, true>;
    }
  }
  if (key_bytes == 8) return &fold_records<Item, 8, Op, any_tag_bytes>;
  if (key_bytes == 4) return &fold_records<Item, 4, Op, any_tag_bytes>;
  return &fold_records<Item, 0, Op, any_tag_bytes>;
}

template <combine_op Op>
fold_pass_fn pick_by_size(std::size_t item_bytes, std::uint32_t key_bytes, std::uint32_t tag_bytes,
                          bool packed) noexcept {
  switch (item_bytes) {
    case 8:
      return pick_by_key<Op, 8>(key_bytes, tag_bytes, packed);
    case 16:
      return pick_by_key<Op, 16>(key_bytes, tag_bytes, packed);
    case 24:
      return pick_by_key<Op, 24>(key_bytes, tag_bytes, packed);
    default:
      return pick_by_key<Op, 0>(key_bytes, tag_bytes, packed);
  }
}

}  // namespace

fold_pass_fn pick_fold_pass(std::size_t item_bytes, const combine_spec& s,
                            std::uint32_t tag_bytes) noexcept {
  const bool packed = s.key_offset == 0 && s.value_offset == s.key_bytes;
  switch (s.op) {
    case combine_op::add_u32:
      return pick_by_size<combine_op::add_u32>(item_bytes, s.key_bytes, tag_bytes, packed);
    case combine_op::add_u64:
      return pick_by_size<combine_op::add_u64>(item_bytes, s.key_bytes, tag_bytes, packed);
    case combine_op::add_f64:
      return pick_by_size<combine_op::add_f64>(item_bytes, s.key_bytes, tag_bytes, packed);
    case combine_op::call:
      break;
  }
  return pick_by_size<combine_op::call>(item_bytes, s.key_bytes, tag_bytes, packed);
}

}  // namespace convoy::aggregation
