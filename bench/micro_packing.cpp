/// @file
/// Micro-benchmarks of the wire format (aggregation/packing.hpp): packing item records
/// into a buffer and unpacking them, per item, for tag sizes 0-4 and item sizes 8-128.
#include <benchmark/benchmark.h>

#include <convoy/aggregation/packing.hpp>
#include <cstdint>
#include <vector>

namespace {

using namespace convoy::aggregation;

constexpr std::size_t capacity = 16384;

/// Fill one buffer with records (tag_bytes = range(0), payload = range(1)).
void BM_pack(benchmark::State& state) {
  const int tag_bytes = static_cast<int>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1));
  alignas(64) std::vector<std::byte> buf(capacity);
  std::vector<std::byte> item(n, std::byte{7});
  const std::size_t per = record_bytes(tag_bytes, false, n);
  const std::size_t fit = (capacity - header_bytes) / per;
  std::int64_t items = 0;
  for (auto _ : state) {
    std::byte* out = buf.data() + header_bytes;
    for (std::size_t k = 0; k < fit; ++k)
      out = put_record(out, k, tag_bytes, false, item.data(), n);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
    items += static_cast<std::int64_t>(fit);
  }
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_pack)->ArgsProduct({{0, 2, 4}, {8, 16, 32, 128}});

/// Read every record of a full buffer back (what pull and forwarding do).
void BM_unpack(benchmark::State& state) {
  const int tag_bytes = static_cast<int>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1));
  alignas(64) std::vector<std::byte> buf(capacity);
  std::vector<std::byte> item(n, std::byte{7});
  const std::size_t per = record_bytes(tag_bytes, false, n);
  const std::size_t fit = (capacity - header_bytes) / per;
  std::byte* out = buf.data() + header_bytes;
  for (std::size_t k = 0; k < fit; ++k) out = put_record(out, k, tag_bytes, false, item.data(), n);
  std::vector<std::byte> sink(n);
  std::int64_t items = 0;
  for (auto _ : state) {
    const std::byte* in = buf.data() + header_bytes;
    std::uint64_t tags = 0;
    for (std::size_t k = 0; k < fit; ++k) {
      const record r = get_record(in, tag_bytes, false, n);
      std::memcpy(sink.data(), r.payload, r.bytes);
      tags += r.tag;
      in += r.record_bytes;
    }
    benchmark::DoNotOptimize(tags);
    benchmark::DoNotOptimize(sink.data());
    items += static_cast<std::int64_t>(fit);
  }
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_unpack)->ArgsProduct({{0, 2, 4}, {8, 16, 32, 128}});

}  // namespace
