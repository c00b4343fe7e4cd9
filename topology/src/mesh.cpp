#include <convoy/base/error.hpp>
#include <convoy/base/text.hpp>
#include <convoy/topology/mesh.hpp>
#include <limits>
#include <utility>

namespace convoy::topology {

namespace {
// Largest mesh (ranks plus holes) whose cell table we are willing to build.
constexpr std::int64_t max_cells = std::int64_t{1} << 28;
}  // namespace

mesh::mesh(std::vector<dimension> dims, std::vector<std::vector<int>> coords_of_rank)
    : dims_(std::move(dims)), n_ranks_(static_cast<int>(coords_of_rank.size())) {
  if (dims_.empty()) throw error("mesh: a mesh needs at least one dimension");
  if (coords_of_rank.empty()) throw error("mesh: a mesh needs at least one rank");
  n_cells_ = 1;
  strides_.assign(dims_.size(), 1);
  for (const auto& d : dims_) {
    if (d.size < 1)
      throw error("mesh: dimension '" + d.name + "' has size " + std::to_string(d.size) +
                  "; sizes must be >= 1");
    if (n_cells_ > max_cells / d.size)
      throw error("mesh: " + shape_string() + " has more than 2^28 cells");
    n_cells_ *= d.size;
  }
  for (size_t d = dims_.size() - 1; d > 0; --d) strides_[d - 1] = strides_[d] * dims_[d].size;

  cell_rank_.assign(static_cast<size_t>(n_cells_), -1);
  coords_.reserve(static_cast<size_t>(n_ranks_) * dims_.size());
  for (int r = 0; r < n_ranks_; ++r) {
    const auto& c = coords_of_rank[static_cast<size_t>(r)];
    if (c.size() != dims_.size())
      throw error("mesh: rank " + std::to_string(r) + " has " + std::to_string(c.size()) +
                  " coordinates, the mesh has " + std::to_string(dims_.size()) + " dimensions");
    std::int64_t cell = 0;
    for (size_t d = 0; d < dims_.size(); ++d) {
      if (c[d] < 0 || c[d] >= dims_[d].size)
        throw error("mesh: rank " + std::to_string(r) + " coordinate " + std::to_string(c[d]) +
                    " is outside dimension '" + dims_[d].name + "' of size " +
                    std::to_string(dims_[d].size));
      cell += c[d] * strides_[d];
      coords_.push_back(c[d]);
    }
    auto& slot = cell_rank_[static_cast<size_t>(cell)];
    if (slot >= 0)
      throw error("mesh: ranks " + std::to_string(slot) + " and " + std::to_string(r) +
                  " have the same coordinates");
    slot = r;
  }
}

mesh mesh::cartesian(std::span<const int> shape, std::vector<std::string> names) {
  if (shape.empty()) throw error("mesh: a Cartesian shape needs at least one dimension");
  std::vector<dimension> dims;
  std::int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string name = d < names.size() ? names[d] : std::string("d").append(std::to_string(d));
    if (shape[d] < 1)
      throw error("mesh: dimension '" + name + "' has size " + std::to_string(shape[d]) +
                  "; sizes must be >= 1");
    if (n > std::numeric_limits<int>::max() / shape[d])
      throw error("mesh: Cartesian shape has more than 2^31 ranks");
    n *= shape[d];
    dims.push_back({std::move(name), shape[d]});
  }
  std::vector<std::vector<int>> coords(static_cast<size_t>(n), std::vector<int>(shape.size()));
  for (std::int64_t r = 0; r < n; ++r) {
    std::int64_t rest = r;
    for (size_t d = shape.size(); d-- > 0;) {
      coords[static_cast<size_t>(r)][d] = static_cast<int>(rest % shape[d]);
      rest /= shape[d];
    }
  }
  return mesh(std::move(dims), std::move(coords));
}

int mesh::rank_at(std::span<const int> c) const noexcept {
  if (c.size() != dims_.size()) return -1;
  std::int64_t cell = 0;
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (c[d] < 0 || c[d] >= dims_[d].size) return -1;
    cell += c[d] * strides_[d];
  }
  return cell_rank_[static_cast<size_t>(cell)];
}

std::vector<std::vector<int>> mesh::holes() const {
  std::vector<std::vector<int>> out;
  for (std::int64_t cell = 0; cell < n_cells_; ++cell) {
    if (cell_rank_[static_cast<size_t>(cell)] >= 0) continue;
    std::vector<int> c(dims_.size());
    for (size_t d = 0; d < dims_.size(); ++d)
      c[d] = static_cast<int>((cell / strides_[d]) % dims_[d].size);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<int> mesh::line_peers(int rank, int d) const {
  std::vector<int> out;
  const auto base = coords(rank);
  std::vector<int> c(base.begin(), base.end());
  for (int v = 0; v < dims_.at(static_cast<size_t>(d)).size; ++v) {
    if (v == base[static_cast<size_t>(d)]) continue;
    c[static_cast<size_t>(d)] = v;
    const int p = rank_at(c);
    if (p >= 0) out.push_back(p);
  }
  return out;
}

std::int64_t mesh::buffers_per_rank() const noexcept {
  std::int64_t n = 0;
  for (const auto& d : dims_) n += d.size - 1;
  return n;
}

std::string mesh::shape_string() const {
  std::vector<int> sizes;
  for (const auto& d : dims_) sizes.push_back(d.size);
  return base::join(sizes, "x");
}

std::string mesh::describe() const {
  std::string s;
  for (const auto& d : dims_)
    s += (s.empty() ? "" : " x ") + d.name + "(" + std::to_string(d.size) + ")";
  return s;
}

}  // namespace convoy::topology
