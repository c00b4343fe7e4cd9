#pragma once
/// @file
/// How the user asks for a virtual mesh: `auto`, a Cartesian shape over rank order
/// (`8x4x2`), or named levels of the machine hierarchy (`node,socket,core`).
/// Grammar: base/README.md BASE-3; how topology lays each form on a machine:
/// topology/README.md TOPO-6..8.
#include <string>
#include <string_view>
#include <vector>

namespace convoy::base {

/// A level of the machine hierarchy, outermost first. Their order is the only legal order
/// in a spec (Wesolowski et al. 2014, sec. V.C: the intranode dimension goes last).
enum class level { node, socket, numa, core };

/// "node", "socket", "numa", "core".
[[nodiscard]] std::string_view level_name(level l) noexcept;

/// A mesh request, independent of the machine it will be laid on.
struct mesh_spec {
  enum class kind {
    automatic,  ///< node,socket,core with size-1 dimensions dropped
    cartesian,  ///< `shape` over rank order, row-major (last dimension fastest)
    levels      ///< one dimension per entry of `levels`, from the discovered machine
  };
  kind form = kind::automatic;
  std::vector<int> shape;     ///< kind::cartesian only; every size >= 1
  std::vector<level> levels;  ///< kind::levels only; strictly outermost to innermost

  [[nodiscard]] static mesh_spec automatic() { return {}; }
  [[nodiscard]] static mesh_spec cartesian(std::vector<int> s) {
    return {kind::cartesian, std::move(s), {}};
  }
  [[nodiscard]] static mesh_spec of_levels(std::vector<level> l) {
    return {kind::levels, {}, std::move(l)};
  }
  friend bool operator==(const mesh_spec&, const mesh_spec&) = default;
};

/// Parses a spec string. Not collective; pure.
///
/// Grammar (surrounding blanks ignored): `auto` | SIZE ('x' SIZE)* | LEVEL (',' LEVEL)*,
/// SIZE a decimal integer >= 1, LEVEL one of node, socket (alias package), numa, core,
/// each at most once and in that order.
///
/// @throws convoy::error whose message starts with `mesh spec '<spec>': ` and names the
///   problem (empty spec, empty size, size not a number, zero or negative size, unknown
///   level, repeated level, levels out of order, shape mixed with levels). The product of a
///   shape is checked against the rank count later, by build_mesh.
[[nodiscard]] mesh_spec parse_mesh_spec(std::string_view spec);

/// The canonical text of a spec: parse_mesh_spec(to_string(s)) == s.
[[nodiscard]] std::string to_string(const mesh_spec& s);

}  // namespace convoy::base
