// The forwarding step (router/README.md ROUTE-20..23): link numbering, first hops, the next
// step of an arrived record, whole-buffer sources. Every pair of every small plan is walked
// hop by hop through the forwarders of the ranks on its route.
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using convoy::router::first_hop;
using convoy::router::forwarder;
using convoy::router::route_plan;
using convoy::router::step;
using convoy_test::mesh_plan;
using convoy_test::plan_ptr;
using convoy_test::ragged_plan;

std::vector<plan_ptr> plans() {
  return {mesh_plan({1}),
          mesh_plan({7}),
          mesh_plan({4, 4}),
          mesh_plan({2, 3, 2}, {1, 0, 2}),
          mesh_plan({3, 3, 3}),
          ragged_plan({4, 2, 3}),
          ragged_plan({5, 1}),
          convoy::router::make_tensor_plan(1, 6, 1),
          convoy::router::make_tensor_plan(2, 8, 4),
          convoy::router::make_tensor_plan(2, 4, 4),
          convoy::router::make_tensor_plan(3, 12, 2),
          convoy::router::make_tensor_plan(3, 18, 3)};
}

std::vector<forwarder> forwarders(const plan_ptr& plan) {
  std::vector<forwarder> f;
  f.reserve(static_cast<std::size_t>(plan->n_ranks()));
  for (int r = 0; r < plan->n_ranks(); ++r) f.emplace_back(plan, r);
  return f;
}

// The in-link of `at` that comes from `sender` on `stage`.
int in_link_of(const forwarder& at, int stage, int sender) {
  const auto& in = at.in_links();
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].stage == stage && in[i].peer == sender) return static_cast<int>(i);
  return -1;
}

// ROUTE-20: out-links are out_peers stage by stage, in-links in_peers stage by stage.
TEST(Forwarding, LinksNumberedAcrossStages) {
  for (const auto& plan : plans())
    for (int r = 0; r < plan->n_ranks(); ++r) {
      const forwarder f(plan, r);
      std::size_t k = 0, i = 0;
      for (int s = 0; s < plan->n_stages(); ++s) {
        EXPECT_EQ(f.first_out_link(s), static_cast<int>(k)) << plan->name();
        for (int p : plan->out_peers(r, s)) {
          ASSERT_LT(k, f.out_links().size());
          EXPECT_EQ(f.out_links()[k].stage, s);
          EXPECT_EQ(f.out_links()[k++].peer, p);
        }
        for (int p : plan->in_peers(r, s)) {
          ASSERT_LT(i, f.in_links().size());
          EXPECT_EQ(f.in_links()[i].stage, s);
          EXPECT_EQ(f.in_links()[i++].peer, p);
        }
        EXPECT_EQ(f.tag_bytes(s), plan->tag_bytes(s));
      }
      EXPECT_EQ(k, f.out_links().size());
      EXPECT_EQ(i, f.in_links().size());
      EXPECT_EQ(f.n_out_links(), static_cast<int>(k));
    }
}

// ROUTE-21: from every source to every destination, first() and then next() on each rank
// reached (through the in-link the hop arrives on) recover the item's source and
// destination at every hop and deliver it at the destination, stages climbing.
TEST(Forwarding, EveryPairWalksToItsDestination) {
  for (const auto& plan : plans()) {
    const auto f = forwarders(plan);
    const int p = plan->n_ranks();
    for (int src = 0; src < p; ++src)
      for (int dst = 0; dst < p; ++dst) {
        SCOPED_TRACE(plan->name() + " " + std::to_string(src) + "->" + std::to_string(dst));
        int at = src, hops = 0, stage = -1;
        step s = f[static_cast<std::size_t>(src)].route(src, dst, 0);
        while (!s.deliver()) {
          ASSERT_LT(hops, plan->max_hops());
          const auto& link =
              f[static_cast<std::size_t>(at)].out_links()[static_cast<std::size_t>(s.out_link)];
          ASSERT_GT(link.stage, stage);
          stage = link.stage;
          const int next = link.peer;
          const int in = in_link_of(f[static_cast<std::size_t>(next)], stage, at);
          ASSERT_GE(in, 0) << "no in-link for the hop";
          s = f[static_cast<std::size_t>(next)].next(in, s.tag);
          EXPECT_EQ(s.src, src);
          EXPECT_EQ(s.dst, dst);
          at = next;
          ++hops;
        }
        EXPECT_EQ(at, dst);
        EXPECT_EQ(hops == 0, src == dst);
      }
  }
}

// ROUTE-22: the first-hop table is route(rank, d, 0) for every d, this rank's own entry
// is n_out_links(); no table above max_ranks.
TEST(Forwarding, FirstHopTable) {
  for (const auto& plan : plans())
    for (int r = 0; r < plan->n_ranks(); ++r) {
      const forwarder f(plan, r);
      const auto table = f.first_hop_table(1 << 16);
      ASSERT_EQ(table.size(), static_cast<std::size_t>(plan->n_ranks()));
      for (int d = 0; d < plan->n_ranks(); ++d) {
        const first_hop h = table[static_cast<std::size_t>(d)];
        const step s = f.route(r, d, 0);
        if (d == r) {
          EXPECT_EQ(h.out_link, static_cast<std::uint32_t>(f.n_out_links()));
          continue;
        }
        EXPECT_EQ(h.out_link, static_cast<std::uint32_t>(s.out_link));
        EXPECT_EQ(h.tag, s.tag);
      }
      EXPECT_TRUE(f.first_hop_table(plan->n_ranks() - 1).empty());
    }
}

// A plan whose tags need more than 32 bits gets no first-hop table.
class wide_tags final : public route_plan {
 public:
  std::string name() const override { return "wide"; }
  int n_ranks() const noexcept override { return 2; }
  int n_stages() const noexcept override { return 1; }
  std::string stage_name(int) const override { return "s"; }
  convoy::router::hop next_hop(int at, int dest, int) const noexcept override {
    return at == dest ? convoy::router::hop{1, 0, at} : convoy::router::hop{0, 0, dest};
  }
  std::vector<int> out_peers(int rank, int) const override { return {1 - rank}; }
  std::vector<int> in_peers(int rank, int) const override { return {1 - rank}; }
  int tag_bytes(int) const noexcept override { return 8; }
  std::uint64_t encode(int, int, int, int, int) const noexcept override {
    return std::uint64_t{1} << 40;
  }
  void decode(int, int sender, int receiver, std::uint64_t, int& src,
              int& dst) const noexcept override {
    src = sender;
    dst = receiver;
  }
};

TEST(Forwarding, NoFirstHopTableForTagsOver32Bits) {
  const forwarder f(std::make_shared<wide_tags>(), 0);
  EXPECT_TRUE(f.first_hop_table(1 << 16).empty());
  EXPECT_EQ(f.route(0, 1, 0).tag, std::uint64_t{1} << 40);
}

// ROUTE-23: a single source exactly where a stage carries no tag and the link's ends
// name the record's source and this rank as its destination.
TEST(Forwarding, SingleSourceLinks) {
  const forwarder t1(convoy::router::make_tensor_plan(1, 6, 1), 2);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(t1.single_source(i), t1.in_links()[static_cast<std::size_t>(i)].peer);
  const forwarder line(mesh_plan({7}), 3);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(line.single_source(i), line.in_links()[static_cast<std::size_t>(i)].peer);
  // Tensor order 2 with one group: the local stage carries no tag and delivers.
  const forwarder one_group(convoy::router::make_tensor_plan(2, 4, 4), 1);
  for (std::size_t i = 0; i < one_group.in_links().size(); ++i)
    EXPECT_EQ(one_group.single_source(static_cast<int>(i)), one_group.in_links()[i].peer);
  // Tagged stages: every link of a 4x4 mesh and of tensor order 3.
  for (const plan_ptr& plan :
       {mesh_plan({4, 4}), plan_ptr(convoy::router::make_tensor_plan(3, 18, 3))}) {
    const forwarder f(plan, 5);
    for (std::size_t i = 0; i < f.in_links().size(); ++i)
      EXPECT_EQ(f.single_source(static_cast<int>(i)), -1) << plan->name();
  }
}

// ROUTE-24: walking every pair hop by hop, each step_of on a link with a step table equals
// next() on the same record, the first time (filled) and the second (loaded); a table
// never holds more than 256 entries of 8 bytes.
TEST(Forwarding, StepTablesAgreeWithNext) {
  using convoy::router::next_step;
  for (const auto& plan : plans()) {
    auto f = forwarders(plan);
    std::vector<std::vector<bool>> has(f.size());
    for (std::size_t r = 0; r < f.size(); ++r)
      for (std::size_t i = 0; i < f[r].in_links().size(); ++i)
        has[r].push_back(f[r].enable_step_table(static_cast<int>(i)));
    const int p = plan->n_ranks();
    for (int src = 0; src < p; ++src)
      for (int dst = 0; dst < p; ++dst) {
        int at = src;
        step s = f[static_cast<std::size_t>(src)].route(src, dst, 0);
        while (!s.deliver()) {
          const auto& link =
              f[static_cast<std::size_t>(at)].out_links()[static_cast<std::size_t>(s.out_link)];
          auto& g = f[static_cast<std::size_t>(link.peer)];
          const int in = in_link_of(g, link.stage, at);
          ASSERT_GE(in, 0);
          const step want = g.next(in, s.tag);
          if (has[static_cast<std::size_t>(link.peer)][static_cast<std::size_t>(in)]) {
            for (int again = 0; again < 2; ++again) {
              const next_step n = g.step_of(in, s.tag);
              SCOPED_TRACE(plan->name() + " " + std::to_string(src) + "->" + std::to_string(dst));
              if (want.deliver()) {
                EXPECT_EQ(n.out_link, next_step::deliver);
                EXPECT_EQ(n.word, static_cast<std::uint32_t>(want.src));
              } else {
                EXPECT_EQ(n.out_link, want.out_link);
                EXPECT_EQ(n.word, want.tag);
              }
            }
          }
          at = link.peer;
          s = want;
        }
      }
    for (const auto& g : f) {
      EXPECT_LE(g.step_table_bytes(), g.step_table_max_bytes()) << plan->name();
      EXPECT_LE(g.step_table_max_bytes(), g.in_links().size() * 256 * sizeof(next_step));
    }
  }
}

// ROUTE-24: step tables only on links whose stage carries at most one byte of tag; a next
// tag wider than 32 bits is not cached.
TEST(Forwarding, StepTablesOnlyForOneByteTags) {
  for (const auto& plan : plans()) {
    forwarder f(plan, plan->n_ranks() / 2);
    for (std::size_t i = 0; i < f.in_links().size(); ++i) {
      const bool small = plan->tag_bytes(f.in_links()[i].stage) <= 1;
      EXPECT_EQ(f.enable_step_table(static_cast<int>(i)), small) << plan->name();
      EXPECT_EQ(f.has_step_table(static_cast<int>(i)), small) << plan->name();
    }
    EXPECT_EQ(f.step_table_bytes(), 0U) << "nothing seen yet";
  }
  forwarder wide(std::make_shared<wide_tags>(), 0);
  EXPECT_FALSE(wide.enable_step_table(0));
}

TEST(Forwarding, BadArgumentsThrow) {
  EXPECT_THROW(forwarder(nullptr, 0), convoy::error);
  EXPECT_THROW(forwarder(mesh_plan({4}), 4), convoy::error);
  EXPECT_THROW(forwarder(mesh_plan({4}), -1), convoy::error);
}

}  // namespace
