#pragma once
/// @file
/// The per-item costs of convoy-sim's model (push, forward, pull), timed on the library's
/// engine itself, in-process over the simulated transport (no MPI): convoy-calibrate's
/// second half (docs/sim-reference.md "Calibration").
#include <cstdint>

struct item_costs {
  double push_s = 0;     ///< push() per item (rank 0 of 2, tensor order 1)
  double forward_s = 0;  ///< advance() at the intermediate ranks of a 2x2 mesh, per item
  double pull_s = 0;     ///< pull() per item
};

/// Times `items` 8-byte items through each measurement. Throws convoy::error if an engine
/// fails or does not terminate.
[[nodiscard]] item_costs measure_item_costs(std::uint64_t items);
