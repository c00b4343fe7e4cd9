// The layout choice without MPI (conveyor_api/README.md, API-7 to API-9): emulated
// machines, settings from values, plans metered over every rank.
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/router/memory.hpp>
#include <convoy/termination/layout_choice.hpp>
#include <string>
#include <vector>

namespace {

using convoy::base::placement;
using convoy::termination::choose_layout;
using convoy::termination::layout_inputs;
using convoy::termination::layout_kind;
using convoy::termination::layout_plan;
using convoy::termination::layout_request;
using convoy::topology::emulate_machine;

convoy::topology::machine nodes(const std::vector<int>& sizes, placement map = placement::block) {
  int p = 0;
  for (int s : sizes) p += s;
  return emulate_machine(p, sizes, "", map);
}

layout_inputs inputs(const convoy::topology::machine& m,
                     const std::map<std::string, std::string>& env = {}) {
  layout_inputs in;
  in.n_ranks = static_cast<int>(m.ranks.size());
  in.node_group = convoy::termination::node_group_size(m);
  in.settings = convoy::base::settings::from_values(env);
  return in;
}

// API-7: one n_local policy for ragged and equal nodes.
TEST(LayoutChoice, NodeGroupSize) {
  EXPECT_EQ(convoy::termination::node_group_size(nodes({4, 4})), 4u);     // equal
  EXPECT_EQ(convoy::termination::node_group_size(nodes({3, 3, 2})), 1u);  // ragged, gcd 1
  EXPECT_EQ(convoy::termination::node_group_size(nodes({4, 2})), 2u);     // ragged, gcd 2
  EXPECT_EQ(convoy::termination::node_group_size(nodes({6, 3, 3})), 3u);  // ragged, gcd 3
  EXPECT_EQ(convoy::termination::node_group_size(nodes({5})), 5u);        // one node
  EXPECT_EQ(convoy::termination::node_group_size(nodes({4, 4}, placement::cyclic)),
            1u);  // not consecutive
  EXPECT_EQ(convoy::termination::node_group_size(nodes({1, 1, 1})), 1u);
}

// API-8: without a limit, the first route: up to direct_first_ranks ranks order 1 (the
// fastest measured there), beyond it order 3 or 2 from n_local and P (bale's rule).
TEST(LayoutChoice, PreferredRoutes) {
  static_assert(convoy::termination::direct_first_ranks == 8, "the cases below straddle 8 ranks");
  const auto meter = [](const auto& m) { return convoy::termination::machine_meter(m); };
  {
    const auto m = nodes({4, 4});  // P 8: direct first, although order 2 applies
    const layout_plan t = choose_layout({}, inputs(m), meter(m));
    EXPECT_EQ(t.kind, layout_kind::tensor);
    EXPECT_EQ(t.order, 1);
    EXPECT_EQ(t.n_local, 1u);
    EXPECT_EQ(t.payload_bytes, 16384u - convoy::termination::buffer_header_bytes);
    EXPECT_EQ(t.n_buffers, 2);
    EXPECT_EQ(t.memory_bytes, 0u);  // nothing metered without a limit
  }
  {
    const auto m = nodes({4, 4, 4});  // P 12, n 4: middle 0 -> order 2
    const layout_plan t = choose_layout({}, inputs(m), meter(m));
    EXPECT_EQ(t.kind, layout_kind::tensor);
    EXPECT_EQ(t.order, 2);
    EXPECT_EQ(t.n_local, 4u);
    EXPECT_EQ(t.payload_bytes, 16384u - convoy::termination::buffer_header_bytes);
    EXPECT_EQ(t.n_buffers, 2);
    EXPECT_EQ(t.memory_bytes, 0u);  // nothing metered without a limit
  }
  {
    const auto m = nodes(std::vector<int>(16, 4));  // P 64, n 4: middle 4, 16 >= 4
    EXPECT_EQ(choose_layout({}, inputs(m), meter(m)).order, 3);
  }
  {
    const auto m = nodes({3, 3, 2});  // ragged: n_local 1 -> order 1
    const layout_plan t = choose_layout({}, inputs(m), meter(m));
    EXPECT_EQ(t.order, 1);
    EXPECT_EQ(t.n_local, 1u);
  }
  {
    const auto m = nodes({6});  // one node: n_local == P -> order 1
    EXPECT_EQ(choose_layout({}, inputs(m), meter(m)).order, 1);
  }
}

// API-8: the settings the façade reads come from the one settings parser.
TEST(LayoutChoice, Settings) {
  const auto m = nodes({6, 6});  // P 12: beyond direct_first_ranks, most hops first
  {
    const layout_plan t =
        choose_layout({}, inputs(m, {{"CONVEY_NLOCAL", "2"}, {"CONVEY_BUFFER_SIZE", "1k"}}),
                      convoy::termination::machine_meter(m));
    EXPECT_EQ(t.n_local, 2u);
    EXPECT_EQ(t.order, 3);  // (12 / 2^2)^2 = 9 >= 2
    EXPECT_EQ(t.payload_bytes, 1000u);
  }
  {
    const layout_plan t = choose_layout({}, inputs(m, {{"CONVOY_MESH", "2x6"}}),
                                        convoy::termination::machine_meter(m));
    EXPECT_EQ(t.kind, layout_kind::mesh);
    EXPECT_EQ(t.mesh, "2x6");
  }
  {  // an n_local that does not divide P is replaced by 1, with a note
    layout_request r;
    r.n_local = 5;
    const layout_plan t = choose_layout(r, inputs(m), convoy::termination::machine_meter(m));
    EXPECT_EQ(t.order, 1);
    EXPECT_NE(t.note.find("n_local 5"), std::string::npos) << t.note;
  }
  EXPECT_THROW((void)convoy::base::settings::from_values({{"CONVEY_NLOCAL", "x"}}), convoy::error);
}

// API-8: max_bytes is a hard limit on the modelled memory of the worst rank.
TEST(LayoutChoice, MemoryLimitIsHard) {
  const auto m = nodes({4, 4, 4, 4});
  const auto meter = convoy::termination::machine_meter(m);
  for (std::size_t limit :
       {std::size_t{3000}, std::size_t{20000}, std::size_t{200000}, std::size_t{2000000}}) {
    layout_request r;
    r.max_bytes = limit;
    const layout_plan t = choose_layout(r, inputs(m), meter);
    EXPECT_LE(t.memory_bytes, limit);
    EXPECT_GT(t.memory_bytes, 0u);
    if (t.kind != layout_kind::bulk) {  // the model is router::link_buffer_bytes at the worst rank
      const auto mp = meter(t);
      EXPECT_EQ(t.memory_bytes,
                convoy::router::link_buffer_bytes(
                    *mp.plan, mp.worst_rank,
                    t.payload_bytes + convoy::termination::buffer_header_bytes, t.n_buffers));
    } else {
      EXPECT_EQ(t.memory_bytes, convoy::termination::bulk_memory_bytes(t.payload_bytes, 16));
    }
  }
  layout_request r;
  r.max_bytes = 100;
  EXPECT_THROW((void)choose_layout(r, inputs(m), meter), convoy::error);
}

// API-8: bytes measured beyond the buffer model join that route's model only: a route whose
// extra alone exceeds the limit gives way to another; an extra on another route changes
// nothing.
TEST(LayoutChoice, MeasuredExtraJoinsTheModel) {
  const auto m = nodes({4, 4, 4, 4});  // 16 ranks: most hops first
  const auto meter = convoy::termination::machine_meter(m);
  layout_request r;
  r.max_bytes = 200000;
  const layout_plan first = choose_layout(r, inputs(m), meter);
  ASSERT_EQ(first.kind, layout_kind::tensor);
  ASSERT_GT(first.order, 1);

  layout_request other = r;  // an extra on a route that was not chosen: same choice
  other.measured_extra.push_back({layout_kind::tensor, 1, 1, "", r.max_bytes});
  const layout_plan same = choose_layout(other, inputs(m), meter);
  EXPECT_EQ(same.order, first.order);
  EXPECT_EQ(same.payload_bytes, first.payload_bytes);
  EXPECT_EQ(same.memory_bytes, first.memory_bytes);

  layout_request some = r;  // a modest extra on the chosen route: counted in its model
  some.measured_extra.push_back({first.kind, first.order, first.n_local, first.mesh, 5000});
  const layout_plan counted = choose_layout(some, inputs(m), meter);
  EXPECT_LE(counted.memory_bytes, r.max_bytes);
  if (counted.order == first.order) {
    const auto mp = meter(counted);
    EXPECT_EQ(counted.memory_bytes,
              5000 + convoy::router::link_buffer_bytes(
                         *mp.plan, mp.worst_rank,
                         counted.payload_bytes + convoy::termination::buffer_header_bytes,
                         counted.n_buffers));
  }

  layout_request full = r;  // the chosen route's extra alone fills the limit: another route
  full.measured_extra.push_back({first.kind, first.order, first.n_local, first.mesh, r.max_bytes});
  const layout_plan moved = choose_layout(full, inputs(m), meter);
  EXPECT_NE(moved.order, first.order);
  EXPECT_LE(moved.memory_bytes, r.max_bytes);
}

// API-8: elastic items never take the bulk kind; their monster buffers are counted.
TEST(LayoutChoice, Elastic) {
  const auto m = nodes({2, 2});
  const auto meter = convoy::termination::machine_meter(m);
  layout_request r;
  r.elastic = true;
  r.allow_bulk = false;
  r.item_bound = 50000;
  r.max_bytes = 200000;
  const layout_plan t = choose_layout(r, inputs(m), meter);
  EXPECT_NE(t.kind, layout_kind::bulk);
  EXPECT_LE(t.memory_bytes, r.max_bytes);
  EXPECT_GE(t.memory_bytes, 2 * r.item_bound);
  r.max_bytes = 2 * r.item_bound;  // nothing left for the buffers
  EXPECT_THROW((void)choose_layout(r, inputs(m), meter), convoy::error);
}

// API-8: with a tight limit the bulk kind may win; max_payload_bytes bounds the buffers.
TEST(LayoutChoice, BulkAndCap) {
  const auto m = nodes({1, 1, 1, 1});
  const auto meter = convoy::termination::machine_meter(m);
  layout_request r;
  r.max_bytes = convoy::termination::bulk_memory_bytes(64, 4);
  const layout_plan t = choose_layout(r, inputs(m), meter);
  EXPECT_LE(t.memory_bytes, r.max_bytes);
  r = {};
  r.max_payload_bytes = 500;
  EXPECT_EQ(choose_layout(r, inputs(m), meter).payload_bytes, 500u);
}

// API-9: a preferred layout (a tuning-file entry) is taken when it fits, else ignored.
TEST(LayoutChoice, PreferredEntry) {
  const auto m = nodes({4, 4});
  const auto meter = convoy::termination::machine_meter(m);
  layout_inputs in = inputs(m);
  layout_plan pref;
  pref.kind = layout_kind::tensor;
  pref.order = 2;  // not the ordinary choice at P 8 (order 1)
  pref.n_local = 4;
  pref.payload_bytes = 4096;
  pref.n_buffers = 4;
  in.preferred = pref;
  EXPECT_EQ(choose_layout({}, in, meter).order, 2);  // no limit: taken as is
  EXPECT_EQ(choose_layout({}, in, meter).n_buffers, 4);
  layout_request r;
  r.max_bytes = 1000000;
  const layout_plan fits = choose_layout(r, in, meter);
  EXPECT_EQ(fits.order, 2);
  EXPECT_EQ(fits.payload_bytes, 4096u);
  EXPECT_LE(fits.memory_bytes, r.max_bytes);
  r.max_bytes = 20000;  // 8 links x 4 x 4112 bytes do not fit: the ordinary choice
  const layout_plan other = choose_layout(r, in, meter);
  EXPECT_LE(other.memory_bytes, r.max_bytes);
  EXPECT_NE(other.payload_bytes, 4096u);
  r = {};
  r.elastic = true;
  pref.kind = layout_kind::bulk;  // never for elastic items
  in.preferred = pref;
  EXPECT_NE(choose_layout(r, in, meter).kind, layout_kind::bulk);
}

}  // namespace
