#pragma once
// Codecs for the compression tests (aggregation/README.md, AGG-40..47): one that counts
// every call (and checks link state is used by the end it was made for), one that declines
// every buffer, and one that asks for a demanding layout (align 64, offset, overrun,
// slack) and scribbles over all the room it asked for, so that a transport giving less
// shows under ASan or as corrupt bytes.
#include <convoy/aggregation/codec.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace convoy_test {

namespace agg = convoy::aggregation;

// Counts calls; compresses with the standard codec.
class counting_codec final : public agg::codec {
 public:
  struct link_state final : agg::codec_link {
    link_state(counting_codec& c, bool d) : owner(c), decompress(d) { ++owner.links_live; }
    ~link_state() override {
      --owner.links_live;
      ++owner.unlinks;
    }
    counting_codec& owner;
    bool decompress;
    std::uint64_t uses = 0;
  };

  [[nodiscard]] const char* name() const noexcept override { return "counting"; }
  [[nodiscard]] bool plan(const agg::cargo& c, agg::codec_layout& l) override {
    ++plans;
    planned.push_back(c);
    return std::make_unique<agg::standard_codec>()->plan(c, l);
  }
  [[nodiscard]] std::unique_ptr<agg::codec_link> link(const agg::cargo&, bool d) override {
    ++(d ? links_decompress : links_compress);
    return std::make_unique<link_state>(*this, d);
  }
  [[nodiscard]] std::size_t compress(const agg::cargo& c, agg::codec_link* l, std::size_t n,
                                     std::byte* in, std::size_t limit, std::byte* out) override {
    ++compress_calls;
    auto* s = dynamic_cast<link_state*>(l);
    if (!s || s->decompress) ++wrong_link;
    if (s) ++s->uses;
    const std::size_t got = agg::squeeze_constant_bytes(c.packet_bytes, n, in, limit, out);
    if (got > limit) ++over_limit;
    return got;
  }
  void decompress(const agg::cargo& c, agg::codec_link* l, std::size_t n, std::size_t,
                  std::byte* in, std::byte* out) override {
    ++decompress_calls;
    auto* s = dynamic_cast<link_state*>(l);
    if (!s || !s->decompress) ++wrong_link;
    agg::restore_constant_bytes(c.packet_bytes, n, in, out);
  }

  std::uint64_t plans = 0, links_compress = 0, links_decompress = 0, unlinks = 0;
  std::int64_t links_live = 0;
  std::uint64_t compress_calls = 0, decompress_calls = 0, wrong_link = 0, over_limit = 0;
  std::vector<agg::cargo> planned;
};

// Plans every cargo and declines every buffer.
class declining_codec final : public agg::codec {
 public:
  [[nodiscard]] const char* name() const noexcept override { return "declining"; }
  [[nodiscard]] bool plan(const agg::cargo& c, agg::codec_layout& l) override {
    l = agg::codec_layout{8, c.packet_bytes, 0, 0, 0};
    return true;
  }
  [[nodiscard]] std::size_t compress(const agg::cargo&, agg::codec_link*, std::size_t, std::byte*,
                                     std::size_t, std::byte*) override {
    ++calls;
    return 0;
  }
  void decompress(const agg::cargo&, agg::codec_link*, std::size_t, std::size_t, std::byte*,
                  std::byte*) override {
    ++unexpected;  // nothing was compressed, so nothing may be restored
  }
  std::uint64_t calls = 0, unexpected = 0;
};

// The standard format behind a 4-byte length, with align 64, offset 24, overrun 40 and one
// slack packet, every byte of which it overwrites. Checks the alignment it was promised.
class demanding_codec final : public agg::codec {
 public:
  static constexpr std::size_t align = 64, offset = 24, overrun = 40, slack = 1;
  [[nodiscard]] const char* name() const noexcept override { return "demanding"; }
  [[nodiscard]] bool plan(const agg::cargo& c, agg::codec_layout& l) override {
    l = agg::codec_layout{align, c.packet_bytes, slack, offset, overrun};
    return true;
  }
  [[nodiscard]] std::size_t compress(const agg::cargo& c, agg::codec_link*, std::size_t n,
                                     std::byte* in, std::size_t limit, std::byte* out) override {
    check(in, 0);
    check(out, offset);
    std::memset(in + n * c.packet_bytes, 0xA5, slack * c.packet_bytes);  // its slack
    if (limit < 5) return 0;
    const std::size_t got = agg::squeeze_constant_bytes(c.packet_bytes, n, in, limit - 4, out + 4);
    if (got == 0) return 0;
    const auto len = static_cast<std::uint32_t>(got);
    std::memcpy(out, &len, 4);
    std::memset(out + 4 + got, 0x5A, overrun);  // its overrun
    return got + 4;
  }
  void decompress(const agg::cargo& c, agg::codec_link*, std::size_t n, std::size_t bytes,
                  std::byte* in, std::byte* out) override {
    check(in, offset);
    check(out, 0);
    std::uint32_t len = 0;
    std::memcpy(&len, in, 4);
    if (len + 4 != bytes) ++bad_length;
    volatile std::byte sink = in[bytes + overrun - 1];  // it may read its overrun
    (void)sink;
    std::memset(out + n * c.packet_bytes, 0x3C, slack * c.packet_bytes);  // and write slack
    agg::restore_constant_bytes(c.packet_bytes, n, in + 4, out);
  }
  void check(const std::byte* p, std::size_t off) {
    if ((reinterpret_cast<std::uintptr_t>(p) - off) % align != 0) ++misaligned;
  }
  std::uint64_t misaligned = 0, bad_length = 0;
};

}  // namespace convoy_test
