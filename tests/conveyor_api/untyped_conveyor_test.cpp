// untyped_conveyor and what the C façade offers C++ users through conveyor_options
// (conveyor_api/README.md, API-7 and API-10 to API-13): dynamic buffers, the allocator
// hook, custom transports, elastic items, the layout choice over MPI.
#include <gtest/gtest.h>

#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/conveyor_api/broadcaster.hpp>
#include <convoy/conveyor_api/combining_conveyor.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy/termination/layout_choice.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy_test/counting_source.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using convoy::conveyor_options;
using convoy::untyped_conveyor;
using convoy_test::world_rank;
using convoy_test::world_size;
namespace term = convoy::termination;

// One cycle of `n` 8-byte items per rank to (i + me) % p, checked for exactly once and source.
void cycle(untyped_conveyor& c, int n) {
  const int me = world_rank(), p = world_size();
  ASSERT_EQ(c.begin(sizeof(std::int64_t)), 1);
  int i = 0;
  std::int64_t received = 0;
  std::uint64_t spins = 0;
  for (;;) {
    const int rc = c.advance(i == n);
    ASSERT_GE(rc, 0);
    for (; i < n && rc != term::done; ++i) {
      const std::int64_t v = std::int64_t{me} * 1000000 + i;
      const int got = c.push(&v, (i + me) % p);
      ASSERT_GE(got, 0);
      if (got == 0) break;
    }
    term::item_view view;
    while (c.pull(view) > 0) {
      std::int64_t v = 0;
      std::memcpy(&v, view.data, sizeof v);
      EXPECT_EQ(v / 1000000, view.from);
      EXPECT_EQ((v % 1000000 + view.from) % p, me);
      ++received;
    }
    if (rc == term::done) break;
    ASSERT_LT(++spins, 20'000'000u);
  }
  std::int64_t total = 0;
  MPI_Allreduce(&received, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, std::int64_t{n} * p);
  ASSERT_EQ(c.reset(), 1);
}

// API-10, API-11: a dynamic conveyor holds its engine (and link buffers from the hook) only
// from begin to reset; statistics add up across engines.
TEST(UntypedConveyor, DynamicWithAllocatorHook) {
  auto source = std::make_shared<convoy_test::counting_source>();
  conveyor_options o;
  o.buffer_bytes = 512;
  o.dynamic = true;
  o.buffers = source;
  {
    untyped_conveyor c(MPI_COMM_WORLD, o);
    EXPECT_EQ(c.engine(), nullptr);
    EXPECT_EQ(c.memory_bytes(), 0u);
    EXPECT_GT(c.max_memory_bytes(), 0u);
    EXPECT_EQ(c.current_state(), term::state::dormant);
    EXPECT_TRUE(source->live.empty());
    const int grabs_at_construction =
        static_cast<int>(source->sizes.size());  // the validating engine's
    for (int k = 0; k < 3; ++k) {
      cycle(c, 500);
      EXPECT_EQ(c.engine(), nullptr);
      EXPECT_TRUE(source->live.empty()) << "link buffers kept after reset";
      EXPECT_EQ(c.stats().pushes, 500u);  // the last cycle's, after its engine is gone
    }
    // Every engine takes its MPI links' buffers in one grab (AGG-11): one per cycle, if any.
    const int per_engine = grabs_at_construction;
    EXPECT_EQ(static_cast<int>(source->sizes.size()), per_engine * 4);
    const term::engine_stats life = c.stats(true);
    EXPECT_EQ(life.begins, 3u);
    EXPECT_EQ(life.pushes, 1500u);
    EXPECT_EQ(c.reset(), 1);  // DORMANT: nothing to do
  }
  EXPECT_TRUE(source->errors.empty()) << "blocks given back out of LIFO order";
  EXPECT_TRUE(source->live.empty());
}

// API-1: the settings are resolved once per construction: a dynamic conveyor builds every
// engine under them, whatever the environment says at begin; settings given in the options
// are used as they are.
TEST(UntypedConveyor, SettingsResolvedOncePerConstruction) {
  ::setenv("CONVOY_BUFFER_BYTES", "1024", 1);
  conveyor_options o;
  o.dynamic = true;
  untyped_conveyor c(MPI_COMM_WORLD, o);
  ::setenv("CONVOY_BUFFER_BYTES", "2048", 1);
  ASSERT_NE(c.options().settings, nullptr);
  EXPECT_EQ(c.engine_options().buffer_bytes, 1024u);
  cycle(c, 100);
  ASSERT_EQ(c.begin(sizeof(std::int64_t)), 1);
  EXPECT_EQ(c.engine_options().buffer_bytes, 1024u);
  EXPECT_EQ(c.streaming()->options().buffer_bytes, 1024u);
  while (c.advance(true) != term::done) {
  }
  ASSERT_EQ(c.reset(), 1);
  ::unsetenv("CONVOY_BUFFER_BYTES");

  auto given = std::make_shared<convoy::base::settings>();
  given->buffer_bytes = 4096;
  o.settings = given;
  o.dynamic = false;
  untyped_conveyor d(MPI_COMM_WORLD, o);
  EXPECT_EQ(d.engine_options().buffer_bytes, 4096u);
  EXPECT_EQ(d.options().settings, given);
}

// API-11: without DYNAMIC the hook's buffers live as long as the conveyor.
TEST(UntypedConveyor, AllocatorHookForTheLifetime) {
  auto source = std::make_shared<convoy_test::counting_source>();
  conveyor_options o;
  o.buffer_bytes = 400;
  o.buffers = source;
  {
    convoy::conveyor<std::int64_t> c(MPI_COMM_WORLD, o);
    const auto held = source->live.size();
    cycle(c.core(), 300);
    EXPECT_EQ(source->live.size(), held);
  }
  EXPECT_TRUE(source->live.empty());
  EXPECT_TRUE(source->errors.empty()) << "blocks given back out of LIFO order";
}

// API-12: a custom transport factory is used for every engine, dynamic ones included.
TEST(UntypedConveyor, CustomTransport) {
  int built = 0;
  conveyor_options o;
  o.buffer_bytes = 300;
  o.dynamic = true;
  o.make_transport = [&built](MPI_Comm comm, const auto&) {
    ++built;
    return convoy::aggregation::make_transport(comm, convoy::base::transport_kind::mpi);
  };
  untyped_conveyor c(MPI_COMM_WORLD, o);
  cycle(c, 200);
  cycle(c, 200);
  EXPECT_EQ(built, 3);  // construction, then one per begin
}

// What convoy::error(...).what() says when constructing with `o` throws; empty if it does not.
std::string construction_error(const conveyor_options& o) {
  try {
    untyped_conveyor c(MPI_COMM_WORLD, o);
  } catch (const convoy::error& e) {
    return e.what();
  }
  return {};
}

// The kind is the one field that selects the engine and its items: each names itself, the
// typed conveyors build theirs, an engine built elsewhere gives its kind, and a kind that
// cannot honour the combine option throws naming itself.
TEST(UntypedConveyor, KindSelectsEngineAndItems) {
  using convoy::conveyor_kind;
  const std::pair<conveyor_kind, const char*> names[] = {{conveyor_kind::streaming, "streaming"},
                                                         {conveyor_kind::bulk, "bulk"},
                                                         {conveyor_kind::elastic, "elastic"},
                                                         {conveyor_kind::broadcast, "broadcast"},
                                                         {conveyor_kind::combining, "combining"}};
  for (const auto& [kind, name] : names) EXPECT_STREQ(convoy::to_string(kind), name);

  convoy::combining_conveyor<std::uint64_t, std::uint64_t> sums(MPI_COMM_WORLD);
  EXPECT_EQ(sums.core().kind(), conveyor_kind::combining);
  EXPECT_EQ(sums.core().engine_options().mode, term::item_mode::rigid);
  convoy::broadcaster<std::uint64_t> all(MPI_COMM_WORLD);
  EXPECT_EQ(all.core().kind(), conveyor_kind::broadcast);
  EXPECT_EQ(all.core().engine_options().mode, term::item_mode::broadcast);
  conveyor_options o;
  o.kind = conveyor_kind::elastic;
  untyped_conveyor el(MPI_COMM_WORLD, o);
  EXPECT_EQ(el.engine_options().mode, term::item_mode::elastic);
  EXPECT_EQ(untyped_conveyor(convoy::make_mpi_engine(MPI_COMM_WORLD, o)).kind(),
            conveyor_kind::elastic);
  o.kind = conveyor_kind::combining;
  EXPECT_NE(construction_error(o).find("the combining kind needs options.combine"),
            std::string::npos)
      << construction_error(o);
  o.combine = sums.spec();
  EXPECT_EQ(untyped_conveyor(convoy::make_mpi_engine(MPI_COMM_WORLD, o)).kind(),
            conveyor_kind::combining);
  for (const auto& [kind, name] : {names[1], names[2], names[3]}) {
    o.kind = kind;
    const std::string why = construction_error(o);
    EXPECT_NE(why.find(std::string("the ") + name + " kind does not combine"), std::string::npos)
        << name << ": " << why;
  }
  conveyor_options elastic;
  elastic.kind = conveyor_kind::elastic;
  try {
    convoy::broadcaster<std::uint64_t> b(MPI_COMM_WORLD, elastic);
    ADD_FAILURE() << "an elastic broadcaster built";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("the elastic kind does not broadcast"), std::string::npos)
        << e.what();
  }
}

// API-13: elastic items of several sizes; a rigid pull leaves another size in place.
TEST(UntypedConveyor, Elastic) {
  conveyor_options o;
  o.buffer_bytes = 256;
  o.kind = convoy::conveyor_kind::elastic;
  untyped_conveyor c(MPI_COMM_WORLD, o);
  const int me = world_rank(), p = world_size(), n = 300;
  ASSERT_EQ(c.begin(8), 1);
  EXPECT_EQ(c.push(nullptr, 0), term::error_argument);
  std::vector<std::uint32_t> next(static_cast<std::size_t>(p), 0);
  int i = 0;
  std::int64_t received = 0;
  unsigned char item[200];
  for (std::uint64_t spins = 0;; ++spins) {
    ASSERT_LT(spins, 20'000'000u);
    const int rc = c.advance(i == n);
    ASSERT_GE(rc, 0);
    for (; i < n && rc != term::done; ++i) {
      const std::size_t bytes = static_cast<std::size_t>(i % 7) * 30;  // 0..180
      std::memset(item, i & 0xff, sizeof item);
      const int got = c.epush(item, bytes, (i + me) % p);
      ASSERT_GE(got, 0);
      if (got == 0) break;
    }
    term::item_view v;
    for (;;) {
      int got = c.pull(v, true);
      if (got == term::error_elastic) got = c.pull(v, false);  // another size: still first
      ASSERT_GE(got, 0);
      if (got == 0) break;
      const std::uint32_t k = next[static_cast<std::size_t>(v.from)]++;
      const int sent_i = static_cast<int>(k) * p + ((me - v.from) % p + p) % p;
      EXPECT_EQ(v.bytes, static_cast<std::size_t>(sent_i % 7) * 30);
      for (std::size_t b = 0; b < v.bytes; ++b)
        ASSERT_EQ(static_cast<int>(static_cast<unsigned char>(v.data[b])), sent_i & 0xff);
      ++received;
    }
    if (rc == term::done) break;
  }
  std::int64_t total = 0;
  MPI_Allreduce(&received, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, std::int64_t{n} * p);
  EXPECT_EQ(c.reset(), 1);
}

// API-7 over MPI: make_plan's tensor group size is node_group_size of the discovered
// machine (the CTest entries emulate equal and ragged nodes).
TEST(UntypedConveyor, TensorGroupFromNodes) {
  conveyor_options o;
  o.tensor_order = 2;
  const auto plan = convoy::make_plan(MPI_COMM_WORLD, o);
  const std::size_t g =
      convoy::termination::node_group_size(convoy::topology::discover(MPI_COMM_WORLD));
  const std::string want =
      "tensor order 2 ranks " + std::to_string(world_size()) + " n_local " + std::to_string(g);
  EXPECT_EQ(plan->name(), want);
}

// API-8 over MPI: choose_and_build keeps the measured memory of the worst rank under the
// limit.
TEST(UntypedConveyor, ChooseAndBuild) {
  convoy::termination::layout_request r;
  r.max_bytes = 60000;
  std::unique_ptr<untyped_conveyor> kept;
  const convoy::termination::layout_plan t = convoy::termination::choose_and_build(
      MPI_COMM_WORLD, r, [&](const convoy::termination::layout_plan& candidate) {
        EXPECT_NE(candidate.settings, nullptr);  // resolved once, handed to every build
        EXPECT_EQ(candidate.options().settings, candidate.settings);
        kept.reset();
        if (candidate.kind == convoy::termination::layout_kind::bulk) return std::size_t{0};
        kept = std::make_unique<untyped_conveyor>(MPI_COMM_WORLD, candidate.options());
        return kept->max_memory_bytes();
      });
  if (t.kind != convoy::termination::layout_kind::bulk) {
    ASSERT_TRUE(kept);
    unsigned long long mine = kept->max_memory_bytes(), worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_LE(worst, r.max_bytes);
    cycle(*kept, 400);
  }
  r.max_bytes = 10;  // not even the two monster buffers of an elastic conveyor
  r.elastic = true;
  r.allow_bulk = false;
  r.item_bound = std::size_t{1} << 20;  // above any buffer: two of it are counted
  EXPECT_THROW((void)convoy::termination::choose_and_build(
                   MPI_COMM_WORLD, r, [](const convoy::termination::layout_plan&) { return 0; }),
               convoy::error);
}

// API-8: the layout choice is collective over the communicator it is given, not over
// MPI_COMM_WORLD: all ranks but world rank 0 choose on their own communicator while rank 0
// waits (a collective over MPI_COMM_WORLD inside would wait for rank 0 forever). n_local is
// given: an emulated layout (CONVOY_EMULATE_NODES) describes the world, not this part.
TEST(UntypedConveyor, ChooseLayoutOnASubcommunicator) {
  MPI_Comm part = MPI_COMM_NULL;
  const int color = world_rank() == 0 && world_size() > 1 ? 1 : 0;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, color, world_rank(), &part), MPI_SUCCESS);
  if (color == 0) {
    convoy::termination::layout_request r;
    r.n_local = 1;
    convoy::termination::layout_plan t;
    EXPECT_NO_THROW(t = convoy::termination::choose_layout(part, r));
    EXPECT_GT(t.payload_bytes, 0u);
  }
  MPI_Comm_free(&part);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
