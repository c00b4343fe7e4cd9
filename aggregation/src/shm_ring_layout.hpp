#pragma once
// The layout of one shared-memory ring (private to shm_transport): where its counters,
// index queues and slots lie, and the address-free atomics that publish them
// (docs/aggregation-reference.md, "Shared memory", M1 and M2).
#include <atomic>
#include <convoy/aggregation/detail/link_book.hpp>
#include <cstddef>
#include <cstdint>

namespace convoy::aggregation::detail::shm {

inline constexpr std::size_t line = buffer_alignment;  // a cache line

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "the rings need address-free (lock-free) 64-bit atomics across processes");

constexpr std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

// Ring layout (README "Shared memory", M2), offsets from the ring's start:
//   [0]                   posted tail (uint64), written by the sender only
//   [line]                posted entries: n × {slot, bytes} (uint64 each), sender-written
//   [freed_tail]          freed tail (uint64), written by the receiver only, own line
//   [freed_tail + line]   freed entries: n × slot (uint64), receiver-written
//   [slots]               n slots of round_up(capacity, line)
struct ring_offsets {
  std::size_t posted_entries, freed_tail, freed_entries, slots, total;
};

inline ring_offsets offsets(std::size_t capacity, int n_buffers) {
  const auto n = static_cast<std::size_t>(n_buffers);
  ring_offsets o{};
  o.posted_entries = line;
  o.freed_tail = o.posted_entries + round_up(16 * n, line);
  o.freed_entries = o.freed_tail + line;
  o.slots = o.freed_entries + round_up(8 * n, line);
  o.total = o.slots + n * round_up(capacity, line);
  return o;
}

inline std::atomic_ref<std::uint64_t> counter(std::byte* p) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p));
}
inline std::uint64_t* words(std::byte* p) { return reinterpret_cast<std::uint64_t*>(p); }

inline std::byte* align_up(void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return static_cast<std::byte*>(p) + (round_up(a, line) - a);
}

}  // namespace convoy::aggregation::detail::shm
