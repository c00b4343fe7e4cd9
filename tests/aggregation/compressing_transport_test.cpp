// The codec interface, the standard codec and the compressing transport over the simulated
// network (aggregation/README.md, AGG-40..47).
#include <gtest/gtest.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/sim_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_codecs.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;

namespace {

// AGG-40: the standard codec restores every byte, and declines what it cannot shrink.
TEST(StandardCodec, RoundTripAndDeclines) {
  std::mt19937_64 rng(7);
  agg::standard_codec codec;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t p = 1 + rng() % 40, n = rng() % 60;
    std::vector<std::byte> in(n * p), out(n * p + 64), back(n * p);
    const std::uint64_t varying = rng();  // bit k % 64: byte k of a packet varies
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < p; ++k)
        in[i * p + k] = static_cast<std::byte>((varying >> (k % 64)) & 1 ? rng() : k * 7);
    agg::cargo c{0, p, p, n};
    agg::codec_layout l;
    ASSERT_TRUE(codec.plan(c, l));
    EXPECT_EQ(l.stride, p);
    std::vector<std::byte> work = in;
    const std::size_t got = codec.compress(c, nullptr, n, work.data(), out.size(), out.data());
    if (n < 2) {
      EXPECT_EQ(got, 0u) << "fewer than two packets are declined";
    }
    if (got == 0) continue;
    EXPECT_LT(got, n * p);
    codec.decompress(c, nullptr, n, got, out.data(), back.data());
    EXPECT_EQ(std::memcmp(back.data(), in.data(), in.size()), 0) << "trial " << trial;
  }
  // Every byte varies: nothing to squeeze.
  std::vector<std::byte> noise(std::size_t{64} * 8), out(noise.size());
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<std::byte>(i * 37 + 11);
  EXPECT_EQ(agg::squeeze_constant_bytes(8, 64, noise.data(), out.size(), out.data()), 0u);
  // A limit below the result declines too.
  std::vector<std::byte> flat(std::size_t{64} * 8, std::byte{3});
  EXPECT_EQ(agg::squeeze_constant_bytes(8, 64, flat.data(), 4, out.data()), 0u);
  EXPECT_GT(agg::squeeze_constant_bytes(8, 64, flat.data(), out.size(), out.data()), 0u);
}

// AGG-40: the layout check both compressing paths use (compressing_transport, bulk_exchange).
TEST(StandardCodec, UsableLayout) {
  EXPECT_TRUE(agg::usable_layout({8, 12, 0, 0, 0}, 12));
  EXPECT_TRUE(agg::usable_layout({64, 12, 3, 63, 100}, 12));  // slack, overrun: caller's
  EXPECT_FALSE(agg::usable_layout({8, 16, 0, 0, 0}, 12));     // padded packets
  EXPECT_FALSE(agg::usable_layout({4, 12, 0, 0, 0}, 12));     // align below 8
  EXPECT_FALSE(agg::usable_layout({128, 12, 0, 0, 0}, 12));   // above max_codec_align
  EXPECT_FALSE(agg::usable_layout({24, 12, 0, 0, 0}, 12));    // not a power of two
  EXPECT_FALSE(agg::usable_layout({0, 12, 0, 0, 0}, 12));
  EXPECT_FALSE(agg::usable_layout({16, 12, 0, 16, 0}, 12));  // offset not below align
}

// Records the flags and sizes of what reaches the inner transport.
class spy_transport final : public agg::transport {
 public:
  explicit spy_transport(std::unique_ptr<agg::transport> inner) : inner_(std::move(inner)) {}
  void open(const agg::link_layout& l) override { inner_->open(l); }
  std::byte* acquire(int o) noexcept override { return inner_->acquire(o); }
  void post(int o, std::byte* b, std::size_t bytes) override {
    agg::buffer_header h{};
    std::memcpy(&h, b, sizeof h);
    if (h.flags & agg::flag_compressed) {
      ++compressed_posts;
      if (h.bytes != bytes) ++bad_headers;
      compressed_links.push_back(o);
    }
    inner_->post(o, b, bytes);
  }
  bool poll(agg::received& r) override { return inner_->poll(r); }
  void release(const agg::received& r) override { inner_->release(r); }
  void progress() override { inner_->progress(); }
  bool idle() const noexcept override { return inner_->idle(); }
  std::size_t memory_bytes() const noexcept override { return inner_->memory_bytes(); }
  std::size_t max_memory_bytes() const noexcept override { return inner_->max_memory_bytes(); }
  std::uint64_t compressed_posts = 0, bad_headers = 0;
  std::vector<int> compressed_links;

 private:
  std::unique_ptr<agg::transport> inner_;
};

// P simulated ranks, all-to-all on `tags.size()` stages, each behind a compressing transport.
struct rig {
  rig(int p, std::vector<std::shared_ptr<agg::codec>> codecs, const std::vector<int>& tags,
      const agg::compressing_transport::link_predicate& pick, std::size_t capacity = 1024)
      : net(p, 99), tag_bytes(tags) {
    for (int r = 0; r < p; ++r) {
      auto spy_owner = std::make_unique<spy_transport>(net.endpoint(r));
      spies.push_back(spy_owner.get());
      ts.push_back(std::make_unique<agg::compressing_transport>(
          std::move(spy_owner), codecs[static_cast<std::size_t>(r) % codecs.size()], tags, pick,
          [this] { return item; }));
      layouts.push_back(convoy_test::all_to_all(r, p, static_cast<int>(tags.size()), capacity, 2));
      ts.back()->open(layouts.back());
    }
    expected.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      expected[static_cast<std::size_t>(r)].resize(
          layouts[static_cast<std::size_t>(r)].in_links.size());
  }

  // The in-link of `to` that carries out-link `o` of `from`.
  std::size_t in_link_of(int from, std::size_t o, int to) const {
    const agg::link& l = layouts[static_cast<std::size_t>(from)].out_links[o];
    const auto& ins = layouts[static_cast<std::size_t>(to)].in_links;
    for (std::size_t i = 0; i < ins.size(); ++i)
      if (ins[i].stage == l.stage && ins[i].peer == from) return i;
    throw std::logic_error("no in-link");
  }

  // A buffer of n records: tag, then an item whose first 4 bytes vary and the rest is
  // constant per (source, cycle) unless `noise`.
  std::vector<std::byte> make_buffer(int src, std::size_t o, std::uint32_t seq, std::size_t n,
                                     bool noise) {
    const agg::link& l = layouts[static_cast<std::size_t>(src)].out_links[o];
    const auto tag = static_cast<std::size_t>(tag_bytes[static_cast<std::size_t>(l.stage)]);
    std::vector<std::byte> b(agg::header_bytes + n * (tag + item));
    const agg::buffer_header h{static_cast<std::uint32_t>(b.size()), epoch, seq, 0};
    std::memcpy(b.data(), &h, sizeof h);
    for (std::size_t i = 0; i < n; ++i) {
      std::byte* rec = b.data() + agg::header_bytes + i * (tag + item);
      for (std::size_t k = 0; k < tag; ++k) rec[k] = static_cast<std::byte>(l.peer + k);
      for (std::size_t k = 0; k < item; ++k)
        rec[tag + k] = static_cast<std::byte>(noise || k < 4 ? rng() : src * 16 + epoch + k);
    }
    return b;
  }

  // Every rank posts `per_link` buffers on every out-link (sizes random, some empty, some
  // noise); everything is delivered and checked byte for byte against what was posted.
  void run(std::uint32_t per_link) {
    const int p = net.n_ranks();
    std::vector<std::vector<std::uint32_t>> sent(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      sent[static_cast<std::size_t>(r)].assign(
          layouts[static_cast<std::size_t>(r)].out_links.size(), 0);
    bool busy = true;
    for (int round = 0; busy && round < 100000; ++round) {
      busy = false;
      for (int r = 0; r < p; ++r) {
        auto& t = *ts[static_cast<std::size_t>(r)];
        for (std::size_t o = 0; o < sent[static_cast<std::size_t>(r)].size(); ++o) {
          auto& s = sent[static_cast<std::size_t>(r)][o];
          if (s == per_link) continue;
          busy = true;
          std::byte* buf = t.acquire(static_cast<int>(o));
          if (!buf) continue;
          const std::size_t packet =
              static_cast<std::size_t>(tag_bytes[static_cast<std::size_t>(
                  layouts[static_cast<std::size_t>(r)].out_links[o].stage)]) +
              item;
          const std::size_t max_n = (1024 - agg::header_bytes) / packet;
          const auto b = make_buffer(r, o, ++s, rng() % (max_n + 1), rng() % 5 == 0);
          const int to = layouts[static_cast<std::size_t>(r)].out_links[o].peer;
          expected[static_cast<std::size_t>(to)][in_link_of(r, o, to)].push_back(b);
          std::memcpy(buf, b.data(), b.size());
          t.post(static_cast<int>(o), buf, b.size());
        }
        t.progress();
      }
      net.deliver_all();
      for (int r = 0; r < p; ++r) {
        agg::received got;
        while (ts[static_cast<std::size_t>(r)]->poll(got)) {
          busy = true;
          check(r, got);
          ts[static_cast<std::size_t>(r)]->release(got);
        }
      }
    }
    for (const auto& per_rank : expected)
      for (const auto& q : per_rank) EXPECT_TRUE(q.empty()) << "buffers never arrived";
  }

  void check(int r, const agg::received& got) {
    auto& q = expected[static_cast<std::size_t>(r)][static_cast<std::size_t>(got.in_link)];
    ASSERT_FALSE(q.empty()) << "unexpected buffer";
    const auto& want = q.front();
    EXPECT_EQ(got.bytes, want.size());
    if (got.bytes == want.size()) {
      EXPECT_EQ(std::memcmp(got.data, want.data(), want.size()), 0)
          << "rank " << r << " in-link " << got.in_link << ": bytes differ";
    }
    q.pop_front();
  }

  agg::compressing_transport::statistics totals() const {
    agg::compressing_transport::statistics s;
    for (const auto& t : ts) {
      s.considered += t->stats().considered;
      s.compressed += t->stats().compressed;
      s.declined += t->stats().declined;
      s.saved_bytes += t->stats().saved_bytes;
      s.restored += t->stats().restored;
    }
    return s;
  }

  agg::sim_network net;
  std::vector<int> tag_bytes;
  std::vector<spy_transport*> spies;
  std::vector<std::unique_ptr<agg::compressing_transport>> ts;
  std::vector<agg::link_layout> layouts;
  std::vector<std::vector<std::deque<std::vector<std::byte>>>> expected;
  std::size_t item = 24;
  std::uint32_t epoch = 1;
  std::mt19937_64 rng{5};
};

// AGG-43: every byte intact, on every stage; AGG-46: the statistics add up.
TEST(CompressingTransport, EveryByteIntactStandardCodec) {
  rig g(4, {std::make_shared<agg::standard_codec>()}, {1, 2}, {});
  g.run(40);
  const auto s = g.totals();
  EXPECT_GT(s.compressed, 0u);
  EXPECT_GT(s.declined, 0u) << "noise buffers are declined";
  EXPECT_EQ(s.considered, s.compressed + s.declined);
  EXPECT_EQ(s.restored, s.compressed);
  EXPECT_GT(s.saved_bytes, 0u);
  std::uint64_t posted = 0;
  for (const auto* spy : g.spies) {
    posted += spy->compressed_posts;
    EXPECT_EQ(spy->bad_headers, 0u);
  }
  EXPECT_EQ(posted, s.compressed);
}

// AGG-44: only the links the predicate chose compress; the others pass untouched.
TEST(CompressingTransport, OnlyChosenLinks) {
  auto chosen = [](int rank, int peer) { return (rank + peer) % 2 == 1; };
  rig g(4, {std::make_shared<agg::standard_codec>()}, {1}, chosen);
  g.run(30);
  for (int r = 0; r < 4; ++r) {
    for (int o : g.spies[static_cast<std::size_t>(r)]->compressed_links)
      EXPECT_TRUE(chosen(
          r, g.layouts[static_cast<std::size_t>(r)].out_links[static_cast<std::size_t>(o)].peer));
    EXPECT_EQ(g.ts[static_cast<std::size_t>(r)]->n_compressing_links(), 2u * 2u);
  }
  EXPECT_GT(g.totals().compressed, 0u);
}

// AGG-45: a codec that declines everything: every buffer goes as it was.
TEST(CompressingTransport, DecliningCodec) {
  auto codec = std::make_shared<convoy_test::declining_codec>();
  rig g(3, {codec}, {1}, {});
  g.run(30);
  const auto s = g.totals();
  EXPECT_GT(codec->calls, 0u);
  EXPECT_EQ(s.compressed, 0u);
  EXPECT_EQ(s.declined, s.considered);
  EXPECT_EQ(s.saved_bytes, 0u);
  EXPECT_EQ(codec->unexpected, 0u);
}

// AGG-47: codec state per link and cycle, each end's own; planned from the same cargo.
TEST(CompressingTransport, CountingCodecLinksPerCycle) {
  auto codec = std::make_shared<convoy_test::counting_codec>();
  {
    rig g(3, {codec}, {1, 2}, {});
    g.run(20);
    EXPECT_EQ(codec->wrong_link, 0u);
    EXPECT_EQ(codec->over_limit, 0u);
    EXPECT_EQ(codec->compress_calls, g.totals().considered);
    EXPECT_EQ(codec->decompress_calls, g.totals().restored);
    // 3 ranks x 2 peers x 2 stages: at most one link state per out-link and per in-link.
    EXPECT_LE(codec->links_compress, 12u);
    EXPECT_LE(codec->links_decompress, 12u);
    for (const auto& c : codec->planned) {
      EXPECT_EQ(c.item_bytes, 24u);
      EXPECT_TRUE(c.tag_bytes == 1 || c.tag_bytes == 2);
      EXPECT_EQ(c.packet_bytes, c.tag_bytes + 24);
      EXPECT_EQ(c.max_items,
                (1024 - agg::header_bytes - agg::compressed_prefix_bytes) / c.packet_bytes);
    }
    // Next cycle, another item size: replanned, the old link states dropped.
    const auto links_before = codec->links_compress;
    g.epoch = 2;
    g.item = 40;
    g.run(20);
    EXPECT_GT(codec->links_compress, links_before);
    EXPECT_EQ(codec->planned.back().item_bytes, 40u);
    EXPECT_GE(codec->unlinks, links_before);
  }
  EXPECT_EQ(codec->links_live, 0) << "every link state is destroyed with its transport";
}

// AGG-43: a codec asking for 64-byte alignment, an offset, overrun and slack gets them.
TEST(CompressingTransport, DemandingLayout) {
  auto codec = std::make_shared<convoy_test::demanding_codec>();
  rig g(3, {codec}, {0, 3}, {});
  g.run(30);
  EXPECT_GT(g.totals().compressed, 0u);
  EXPECT_EQ(codec->misaligned, 0u);
  EXPECT_EQ(codec->bad_length, 0u);
}

// AGG-41: elastic cycles (item size 0) are never compressed.
TEST(CompressingTransport, ElasticCycleNotCompressed) {
  rig g(3, {std::make_shared<agg::standard_codec>()}, {1}, {});
  g.item = 0;
  // Elastic records are not tag + item; any payload shape is left alone.
  g.run(10);
  EXPECT_EQ(g.totals().considered, 0u);
}

// AGG-42: a compressed buffer reaching a rank without a codec is an error, not garbage.
TEST(CompressingTransport, ReceiverWithoutCodecThrows) {
  rig g(2, {std::make_shared<agg::standard_codec>(), nullptr}, {1}, {});
  const auto b = g.make_buffer(0, 0, 1, 30, false);
  std::byte* buf = g.ts[0]->acquire(0);
  ASSERT_NE(buf, nullptr);
  std::memcpy(buf, b.data(), b.size());
  g.ts[0]->post(0, buf, b.size());
  ASSERT_EQ(g.ts[0]->stats().compressed, 1u);
  g.net.deliver_all();
  agg::received r;
  try {
    (void)g.ts[1]->poll(r);
    FAIL() << "poll accepted a compressed buffer without a codec";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("no codec"), std::string::npos) << e.what();
  }
}

// AGG-42: bad construction is a convoy::error naming the problem.
TEST(CompressingTransport, Errors) {
  EXPECT_THROW(agg::compressing_transport(nullptr, nullptr, {1}, {}, {}), convoy::error);
  agg::sim_network net(2, 1);
  agg::compressing_transport t(net.endpoint(0), std::make_shared<agg::standard_codec>(), {1}, {},
                               [] { return std::size_t{8}; });
  EXPECT_THROW(t.open(convoy_test::all_to_all(0, 2, 2, 1024, 2)), convoy::error)
      << "a stage without a tag size";
}

}  // namespace
