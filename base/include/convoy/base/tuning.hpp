#pragma once
/// @file
/// The tuning file (written by convoy-tune; base/README.md BASE-8, BASE-9).
///
/// Format: one `key=value` per line; `#` starts a comment; blank lines are ignored; blanks
/// around keys and values are ignored; a later line overrides an earlier one.
///
///     buffer_bytes=8Ki       # bytes per engine buffer, as CONVOY_BUFFER_BYTES
///     n_buffers=4            # buffers per link, as CONVOY_N_BUFFERS
///     mesh=node,core         # mesh spec, as CONVOY_MESH
///     kind=tensor3           # the conveyor kind convey_new should choose (text)
///     tensor3.buffer_bytes=4Ki   # a value for one kind: <kind>.<key>
///
/// Known keys (buffer_bytes, n_buffers, mesh, kind; alone or after `<kind>.`) are checked
/// as the environment variable of the same meaning; unknown keys are kept but not checked,
/// so that files written by a newer tuner stay readable.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace convoy::base {

struct tuning {
  /// The file these values came from; empty when no file was read.
  std::string path;
  /// Every `key=value` of the file, blanks trimmed (the last of repeated keys).
  std::map<std::string, std::string, std::less<>> entries;

  /// Parses the text of a tuning file; `path` names it in messages. Pure, not collective.
  /// @throws convoy::error "tuning file <path>:<line>: <problem>" for a line without '=',
  ///   an empty key, or an invalid value of a known key (e.g.
  ///   "tuning file t.conf:3: n_buffers='3': must be a power of two from 1 to 1024").
  [[nodiscard]] static tuning parse(const std::string& path, std::string_view text);

  /// The raw value of `key` for conveyor kind `kind`: entry "<kind>.<key>" if `kind` is
  /// not empty and it exists, else entry "<key>", else nullopt.
  [[nodiscard]] std::optional<std::string> get(std::string_view key,
                                               std::string_view kind = {}) const;
  /// buffer_bytes (for `kind`, as get), parsed. `capacity_bytes`, the key's name in files
  /// of convoy 0.5 and before, is read as the same key: "<kind>.buffer_bytes", then
  /// "<kind>.capacity_bytes", then "buffer_bytes", then "capacity_bytes".
  [[nodiscard]] std::optional<std::size_t> buffer_bytes(std::string_view kind = {}) const;
  /// n_buffers (for `kind`, as get), parsed.
  [[nodiscard]] std::optional<int> n_buffers(std::string_view kind = {}) const;
  /// mesh (for `kind`, as get): a mesh spec text that parses.
  [[nodiscard]] std::optional<std::string> mesh(std::string_view kind = {}) const {
    return get("mesh", kind);
  }
  /// kind: the conveyor kind the tuner chose.
  [[nodiscard]] std::optional<std::string> kind() const { return get("kind"); }

  friend bool operator==(const tuning&, const tuning&) = default;
};

}  // namespace convoy::base
