// The fold passes' instantiations (combine_table.hpp, "Fold on fill"), compiled once.
#include <convoy/aggregation/combine_table.hpp>

#include "pick_layout.hpp"

namespace convoy::aggregation {

fold_pass_fn pick_fold_pass(std::size_t item_bytes, const combine_spec& s,
                            std::uint32_t tag_bytes) noexcept {
  const bool packed = s.key_offset == 0 && s.value_offset == s.key_bytes;
  const std::uint32_t key_bytes = s.key_bytes;
  return detail::pick_layout(s.op, item_bytes,
                             [=]<combine_op Op, std::size_t Item>() -> fold_pass_fn {
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
                             });
}

}  // namespace convoy::aggregation
