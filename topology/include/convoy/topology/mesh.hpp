#pragma once
/// @file
/// The virtual N-dimensional mesh that TRAM routes over (Wesolowski et al. 2014, sec. III.B, V.C).
///
/// Dimension 0 is the outermost (e.g. node) and dimension N-1 the innermost (e.g. core).
/// rank <-> coordinates is a table, never rank arithmetic, so ranks placed round-robin or
/// unevenly land where discovery says they are. A coordinate with no rank is a hole
/// (ragged nodes: nodes of 4, 2 and 3 ranks give a 3x4 mesh with 3 holes).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace convoy::topology {

struct dimension {
  std::string name;  ///< "node", "socket", "numa", "core", or "d<i>" for Cartesian specs
  int size = 1;      ///< number of coordinate values, >= 1
};

class mesh {
 public:
  /// Builds a mesh from its dimensions and each rank's coordinates (index = rank).
  /// Throws convoy::error naming the problem if there are no dimensions or ranks, a size
  /// is < 1, a coordinate list has the wrong length or is out of range, or two ranks share
  /// a coordinate.
  mesh(std::vector<dimension> dims, std::vector<std::vector<int>> coords_of_rank);

  /// Row-major Cartesian mesh over rank order (last dimension varies fastest): rank r has
  /// the mixed-radix digits of r. Names default to d0, d1, ... Throws convoy::error on an
  /// empty shape or a size < 1.
  static mesh cartesian(std::span<const int> shape, std::vector<std::string> names = {});

  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }
  [[nodiscard]] int n_dims() const noexcept { return static_cast<int>(dims_.size()); }
  [[nodiscard]] const std::vector<dimension>& dims() const noexcept { return dims_; }
  [[nodiscard]] const dimension& dim(int d) const { return dims_.at(static_cast<size_t>(d)); }
  /// Product of the dimension sizes: ranks plus holes.
  [[nodiscard]] std::int64_t n_cells() const noexcept { return n_cells_; }

  /// The coordinates of `rank` (n_dims() values). Precondition: 0 <= rank < n_ranks().
  [[nodiscard]] std::span<const int> coords(int rank) const noexcept {
    return {coords_.data() + static_cast<size_t>(rank) * dims_.size(), dims_.size()};
  }
  /// The rank at `c`, or -1 if `c` is a hole or out of range.
  [[nodiscard]] int rank_at(std::span<const int> c) const noexcept;
  [[nodiscard]] bool is_hole(std::span<const int> c) const noexcept { return rank_at(c) < 0; }
  /// Every hole, in row-major order.
  [[nodiscard]] std::vector<std::vector<int>> holes() const;
  [[nodiscard]] std::int64_t n_holes() const noexcept { return n_cells_ - n_ranks_; }

  /// Ranks that differ from `rank` only in dimension d (TRAM peers along d), in
  /// increasing coordinate order, holes skipped.
  [[nodiscard]] std::vector<int> line_peers(int rank, int d) const;
  /// TRAM's buffer bound per rank: sum over dimensions of (s_d - 1).
  [[nodiscard]] std::int64_t buffers_per_rank() const noexcept;
  /// "3x4" (sizes joined by 'x').
  [[nodiscard]] std::string shape_string() const;
  /// "node(3) x core(4)".
  [[nodiscard]] std::string describe() const;

 private:
  std::vector<dimension> dims_;
  int n_ranks_ = 0;
  std::int64_t n_cells_ = 0;
  std::vector<int> coords_;            // n_ranks * n_dims, row per rank
  std::vector<std::int64_t> strides_;  // row-major strides over dims
  std::vector<int> cell_rank_;         // n_cells, -1 for holes
};

}  // namespace convoy::topology
