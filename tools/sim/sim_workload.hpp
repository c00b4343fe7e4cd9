#pragma once
/// @file
/// convoy-sim's workloads (tools/sim/README.md "Workloads"): where rank r's i-th item goes,
/// for the built-in patterns and for a traffic-matrix file, and the oracle's fingerprints
/// (SIM-1).
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace convoy::sim {

enum class workload_kind { uniform, hotspot, permutation, neighbour, request_reply, traffic };
/// "uniform", "hotspot", "permutation", "neighbour", "request-reply", "traffic";
/// parse_workload throws convoy::error.
[[nodiscard]] const char* workload_name(workload_kind w) noexcept;
[[nodiscard]] workload_kind parse_workload(const std::string& name);

/// The items of a traffic-matrix file: count[src][dst] as a sparse list per source.
struct traffic_matrix {
  struct entry {
    int dst = 0;
    std::uint64_t items = 0;
  };
  std::vector<std::vector<entry>> rows;  ///< per source, in file order (pairs merged)
  std::uint64_t total = 0;
};
/// Most items a traffic matrix may hold in all (the tool expands it, 4 bytes per item).
inline constexpr std::uint64_t traffic_max_items = std::uint64_t{1} << 28;

/// Parses a traffic matrix for `ranks` ranks (README "Traffic-matrix file"): lines
/// `SOURCE DESTINATION ITEMS`, `#` comments and blank lines ignored, a pair given twice adds
/// up. Throws convoy::error naming `name` and the line on a malformed line, a rank outside
/// [0, ranks) or too many items (SIM-7).
[[nodiscard]] traffic_matrix parse_traffic(std::istream& in, const std::string& name, int ranks);
[[nodiscard]] traffic_matrix load_traffic(const std::string& path, int ranks);

/// Where rank r's i-th item goes (request-reply: the query's destination, uniform).
class destinations {
 public:
  /// `items_per_rank` for the built-in patterns; `matrix` for workload_kind::traffic,
  /// whose items a rank sends in an order shuffled by `seed`.
  destinations(workload_kind w, int p, std::uint64_t items_per_rank, std::uint64_t seed,
               const traffic_matrix* matrix);
  [[nodiscard]] std::uint64_t items_of(int r) const noexcept {
    return w_ == workload_kind::traffic ? per_rank_[static_cast<std::size_t>(r)].size()
                                        : items_per_rank_;
  }
  [[nodiscard]] int operator()(int r, std::uint64_t i) const noexcept;

 private:
  workload_kind w_;
  int p_;
  std::uint64_t items_per_rank_;
  std::uint64_t seed_;
  std::vector<int> perm_;
  std::vector<std::vector<int>> per_rank_;  ///< traffic: every item's destination
};

/// The oracle's fingerprint of item `seq` from `src` to `dst`: per destination, the sums of
/// fingerprints pushed and pulled agree iff (with overwhelming probability) every item
/// arrived exactly once at the rank it was pushed to (SIM-1).
[[nodiscard]] std::uint64_t fingerprint(int src, int dst, std::uint64_t seq) noexcept;
/// splitmix64's finalizer.
[[nodiscard]] std::uint64_t mix(std::uint64_t x) noexcept;

}  // namespace convoy::sim
