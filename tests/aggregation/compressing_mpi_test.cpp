// The compressing transport over the MPI, rma and hybrid (shared memory + MPI) transports
// (aggregation/README.md, AGG-43..46, AGG-129): every byte intact, chosen links only.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/rma_transport.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"
#include "test_codecs.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

constexpr std::size_t k_capacity = 2048, k_item = 40, k_tag = 2;

// Buffer `seq` from `src` to `dst`: n records (n from seq) of a 2-byte tag and an item
// whose first 8 bytes vary; the receiver rebuilds it from (src, dst, seq).
std::vector<std::byte> make_buffer(int src, int dst, std::uint32_t seq) {
  const std::size_t packet = k_tag + k_item;
  const std::size_t n = (std::size_t{seq} * 7u) % ((k_capacity - agg::header_bytes) / packet + 1);
  std::vector<std::byte> b(agg::header_bytes + n * packet);
  const agg::buffer_header h{static_cast<std::uint32_t>(b.size()), 1, seq, 0};
  std::memcpy(b.data(), &h, sizeof h);
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* r = b.data() + agg::header_bytes + i * packet;
    r[0] = static_cast<std::byte>(dst);
    r[1] = std::byte{0};
    const std::uint64_t v = (static_cast<std::uint64_t>(seq) << 32) ^ (i * 2654435761u);
    std::memcpy(r + k_tag, &v, 8);
    for (std::size_t k = 8; k < k_item; ++k) r[k_tag + k] = static_cast<std::byte>(src + k);
  }
  return b;
}

struct totals {
  std::uint64_t compressed = 0, restored = 0, saved = 0, considered = 0, declined = 0;
};

// All-to-all, `per_link` buffers on every link; returns the sums over ranks.
totals run(agg::compressing_transport& t, std::uint32_t per_link) {
  const int me = world_rank(), p = world_size();
  const auto lay = convoy_test::all_to_all(me, p, 1, k_capacity, 2);
  t.open(lay);
  std::vector<std::uint32_t> sent(lay.out_links.size(), 0), got(lay.in_links.size(), 0);
  std::size_t bad = 0;
  const auto start = std::chrono::steady_clock::now();
  auto finished = [&] {
    for (auto s : sent)
      if (s < per_link) return false;
    for (auto g : got)
      if (g < per_link) return false;
    return t.idle();
  };
  while (!finished() && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    for (std::size_t o = 0; o < sent.size(); ++o) {
      if (sent[o] == per_link) continue;
      std::byte* buf = t.acquire(static_cast<int>(o));
      if (!buf) continue;
      const auto b = make_buffer(me, lay.out_links[o].peer, ++sent[o]);
      std::memcpy(buf, b.data(), b.size());
      t.post(static_cast<int>(o), buf, b.size());
    }
    agg::received r;
    while (t.poll(r)) {
      const auto i = static_cast<std::size_t>(r.in_link);
      const auto want = make_buffer(lay.in_links[i].peer, me, ++got[i]);
      if (r.bytes != want.size() || std::memcmp(r.data, want.data(), want.size()) != 0) ++bad;
      t.release(r);
    }
    t.progress();
  }
  EXPECT_TRUE(finished()) << "traffic did not finish";
  EXPECT_EQ(bad, 0u) << "buffers differ from what was posted";
  MPI_Barrier(MPI_COMM_WORLD);
  const auto& s = t.stats();
  unsigned long long mine[5] = {s.compressed, s.restored, s.saved_bytes, s.considered, s.declined};
  unsigned long long all[5] = {};
  MPI_Allreduce(mine, all, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return totals{all[0], all[1], all[2], all[3], all[4]};
}

std::vector<int> one_stage() { return {static_cast<int>(k_tag)}; }

// AGG-43, AGG-46: the standard codec over `inner`, every link compressing.
void every_byte_over(std::unique_ptr<agg::transport> inner) {
  auto codec = std::make_shared<agg::standard_codec>();
  agg::compressing_transport t(std::move(inner), codec, one_stage(), {}, [] { return k_item; });
  const totals s = run(t, 50);
  EXPECT_EQ(s.compressed, s.restored);
  EXPECT_EQ(s.considered, s.compressed + s.declined);
  if (world_size() > 1) {
    EXPECT_GT(s.compressed, 0u);
    EXPECT_GT(s.saved, 0u);
  }
}

// AGG-43, AGG-46
TEST(CompressingMpi, EveryByteOverMpi) {
  every_byte_over(std::make_unique<agg::mpi_transport>(MPI_COMM_WORLD));
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-43, AGG-129: over the rma transport, whose records in the receiver's ring are only as
// long as what was sent: a compressed buffer must be restored elsewhere, not in place over
// the records behind it (which this all-to-all has queued there already).
TEST(CompressingMpi, EveryByteOverRma) {
  every_byte_over(std::make_unique<agg::rma_transport>(MPI_COMM_WORLD));
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-44: over the hybrid transport, only "off-node" links (here: odd distance) compress;
// the counting codec sees each end's own link state.
TEST(CompressingMpi, ChosenLinksOverHybrid) {
  auto codec = std::make_shared<convoy_test::counting_codec>();
  auto odd = [](int rank, int peer) { return (rank + peer) % 2 == 1; };
  agg::compressing_transport t(std::make_unique<agg::hybrid_transport>(MPI_COMM_WORLD), codec,
                               one_stage(), odd, [] { return k_item; });
  const totals s = run(t, 40);
  EXPECT_EQ(codec->wrong_link, 0u);
  EXPECT_EQ(s.compressed, s.restored);
  const std::size_t odd_peers = static_cast<std::size_t>(world_size() / 2);
  EXPECT_EQ(
      t.n_compressing_links(),
      2 * (world_rank() % 2 == 0 ? odd_peers : static_cast<std::size_t>((world_size() + 1) / 2)));
  EXPECT_LE(codec->links_compress, t.n_compressing_links());
  if (world_size() > 1) {
    EXPECT_GT(s.compressed, 0u);
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-45: a declining codec over MPI: nothing compressed, nothing restored, all intact.
TEST(CompressingMpi, DecliningOverMpi) {
  auto codec = std::make_shared<convoy_test::declining_codec>();
  agg::compressing_transport t(std::make_unique<agg::mpi_transport>(MPI_COMM_WORLD), codec,
                               one_stage(), {}, [] { return k_item; });
  const totals s = run(t, 30);
  EXPECT_EQ(s.compressed, 0u);
  EXPECT_EQ(s.restored, 0u);
  EXPECT_EQ(codec->unexpected, 0u);
  EXPECT_EQ(s.declined, s.considered);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
