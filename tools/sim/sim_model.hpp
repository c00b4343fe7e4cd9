#pragma once
/// @file
/// The cost model of convoy-sim (docs/sim-reference.md "The model"): per link class the
/// per-message overhead, latency and inverse bandwidth, plus the library's per-item CPU
/// costs. Read from and written to a JSON file (`--model FILE`, SIM-3).
#include <convoy/aggregation/timed_network.hpp>
#include <string>

namespace convoy::sim {

struct cost_model {
  aggregation::link_cost links[aggregation::n_link_classes];
  double push_s = 0;     ///< per item pushed by the application
  double forward_s = 0;  ///< per item re-buffered at an intermediate rank
  double pull_s = 0;     ///< per item pulled at its destination
  /// The application's own work per item (e.g. the histogram's draw and table update),
  /// charged with the push: 0 models the library alone. predict-vs-measure measures it.
  double app_s = 0;
  /// Where the values come from (free text, kept through a round trip).
  std::string source;

  /// The documented defaults (README "Defaults"): not calibrated, typical of an
  /// InfiniBand cluster with shared memory on the node.
  [[nodiscard]] static cost_model defaults();
  bool operator==(const cost_model&) const = default;
};

/// The model as a JSON document (see README "The model").
[[nodiscard]] std::string to_json_text(const cost_model& m);
/// Parses a model document. Keys left out keep their value from `base`. Throws
/// convoy::error naming the key on an unknown key, a non-number or a negative value.
[[nodiscard]] cost_model model_from_json_text(const std::string& text, const cost_model& base);
/// Reads / writes a model file. Throws convoy::error naming the file on failure.
[[nodiscard]] cost_model load_model(const std::string& path, const cost_model& base);
void save_model(const std::string& path, const cost_model& m);

}  // namespace convoy::sim
