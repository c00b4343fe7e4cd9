#include <algorithm>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/text.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace convoy::topology {

namespace {

constexpr int n_levels = 4;  // node, socket, numa, core

std::string coords_text(const std::vector<int>& c) {
  std::string s = "[";
  s += base::join(c, ",");
  s += ']';
  return s;
}

// Each rank's value at every level of the hierarchy. The core value is the core index when
// the ranks of a (node, package, numa) group sit on distinct known cores, else the rank's
// index within that group: a slot, so coordinates stay unique (TOPO-7).
std::vector<std::vector<int>> level_values(const machine& m) {
  const size_t n = m.ranks.size();
  std::vector<std::vector<int>> v(n, std::vector<int>(n_levels));
  std::map<std::vector<int>, std::vector<int>> groups;  // (node, package, numa) -> ranks
  for (size_t r = 0; r < n; ++r) {
    const auto& p = m.ranks[r];
    v[r] = {p.node, p.package, p.numa, p.core};
    groups[{p.node, p.package, p.numa}].push_back(static_cast<int>(r));
  }
  for (const auto& [key, ranks] : groups) {
    std::vector<int> cores;
    for (int r : ranks) cores.push_back(m.ranks[static_cast<size_t>(r)].core);
    std::sort(cores.begin(), cores.end());
    const bool distinct =
        cores.front() >= 0 && std::adjacent_find(cores.begin(), cores.end()) == cores.end();
    if (distinct) continue;
    for (size_t k = 0; k < ranks.size(); ++k)
      v[static_cast<size_t>(ranks[k])][3] = static_cast<int>(k);
  }
  return v;
}

mesh build_levels(const machine& m, const std::vector<base::level>& levels,
                  const std::string& spec) {
  const auto values = level_values(m);
  const size_t n = m.ranks.size();
  const size_t k = levels.size();
  std::vector<std::vector<int>> coords(n, std::vector<int>(k));
  std::vector<int> sizes(k, 1);
  int from = 0;  // first hierarchy level merged into the current dimension
  for (size_t d = 0; d < k; ++d) {
    const int to = static_cast<int>(levels[d]);
    // parent (levels above `from`) -> sorted distinct keys (levels from..to)
    std::map<std::vector<int>, std::vector<std::vector<int>>> distinct;
    auto parent_of = [&](size_t r) {
      return std::vector<int>(values[r].begin(), values[r].begin() + from);
    };
    auto key_of = [&](size_t r) {
      return std::vector<int>(values[r].begin() + from, values[r].begin() + to + 1);
    };
    for (size_t r = 0; r < n; ++r) distinct[parent_of(r)].push_back(key_of(r));
    for (auto& [parent, keys] : distinct) {
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      sizes[d] = std::max(sizes[d], static_cast<int>(keys.size()));
    }
    for (size_t r = 0; r < n; ++r) {
      const auto& keys = distinct.at(parent_of(r));
      coords[r][d] =
          static_cast<int>(std::lower_bound(keys.begin(), keys.end(), key_of(r)) - keys.begin());
    }
    from = to + 1;
  }

  std::map<std::vector<int>, int> seen;
  for (size_t r = 0; r < n; ++r) {
    auto [it, fresh] = seen.emplace(coords[r], static_cast<int>(r));
    if (!fresh)
      throw error("mesh spec '" + spec + "': ranks " + std::to_string(it->second) + " and " +
                  std::to_string(r) + " both land at " + coords_text(coords[r]) +
                  "; add an inner level such as core");
  }

  // Drop dimensions of size 1 (TOPO-8); keep the innermost if all are.
  std::vector<size_t> keep;
  for (size_t d = 0; d < k; ++d)
    if (sizes[d] > 1) keep.push_back(d);
  if (keep.empty()) keep.push_back(k - 1);
  std::vector<dimension> dims;
  dims.reserve(keep.size());
  for (size_t d : keep) dims.push_back({std::string(base::level_name(levels[d])), sizes[d]});
  std::vector<std::vector<int>> kept(n);
  for (size_t r = 0; r < n; ++r)
    for (size_t d : keep) kept[r].push_back(coords[r][d]);
  return mesh(std::move(dims), std::move(kept));
}

}  // namespace

mesh build_mesh(const machine& m, const base::mesh_spec& spec) {
  const std::string text = base::to_string(spec);
  if (m.ranks.empty()) throw error("mesh spec '" + text + "': the machine has no ranks");
  switch (spec.form) {
    case base::mesh_spec::kind::cartesian: {
      long long cells = 1;
      for (int s : spec.shape) {
        if (s < 1)
          throw error("mesh spec '" + text + "': size " + std::to_string(s) + " must be >= 1");
        cells = std::min(cells * s, 1LL << 40);
      }
      if (cells != static_cast<long long>(m.ranks.size()))
        throw error("mesh spec '" + text + "': the shape has " +
                    (cells >= (1LL << 40) ? std::string("too many") : std::to_string(cells)) +
                    " cells but there are " + std::to_string(m.ranks.size()) +
                    " ranks; the product of the sizes must equal the rank count");
      return mesh::cartesian(spec.shape);
    }
    case base::mesh_spec::kind::levels:
      if (spec.levels.empty()) throw error("mesh spec '" + text + "': no levels");
      for (size_t i = 1; i < spec.levels.size(); ++i)
        if (spec.levels[i - 1] >= spec.levels[i])
          throw error("mesh spec '" + text +
                      "': levels must be distinct and go from outermost to innermost");
      return build_levels(m, spec.levels, text);
    case base::mesh_spec::kind::automatic:
      break;
  }
  return build_levels(m, {base::level::node, base::level::socket, base::level::core}, text);
}

mesh discover_mesh(MPI_Comm comm, const base::settings& s) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::string spec = rank == 0 ? s.mesh_text() : std::string();
  int len = static_cast<int>(spec.size());
  CONVOY_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  spec.resize(static_cast<size_t>(len));
  if (len > 0) CONVOY_MPI_CHECK(MPI_Bcast(spec.data(), len, MPI_CHAR, 0, comm));
  const machine m = discover(comm, s);
  return base::agree(comm, [&] { return build_mesh(m, base::parse_mesh_spec(spec)); });
}

mesh discover_mesh(MPI_Comm comm) { return discover_mesh(comm, base::settings::from_env(comm)); }

}  // namespace convoy::topology
