// Settings from the environment and the tuning file; the collective resolution reads both
// on rank 0 only and broadcasts what it read (base/README.md BASE-6, BASE-7).
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "variables.hpp"

namespace convoy::base {

namespace {

// A tuning file larger than this is not one (CONVOY_TUNE_FILE=/dev/zero must not hang).
constexpr std::size_t max_tune_file_bytes = std::size_t{1} << 20;

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> values;
  for (const auto& v : detail::variables())
    if (const char* text = std::getenv(v.name.c_str())) values.emplace(v.name, text);
  return values;
}

// The tuning file named by `s` (CONVOY_TUNE_FILE, else the default path if it exists),
// read and parsed. Rank 0 only.
tuning read_tuning(const settings& s) {
  std::string path;
  if (s.tune_file) {
    path = *s.tune_file;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    path = std::string(home) + "/.config/convoy/tune.conf";
  }
  if (path.empty()) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (s.tune_file) throw error("CONVOY_TUNE_FILE: cannot read '" + path + "'");
    return {};
  }
  std::string text;
  char chunk[4096];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_tune_file_bytes)
      throw error("tuning file " + path + ": larger than 1 MiB; is it a tuning file?");
  }
  if (in.bad()) throw error("tuning file " + path + ": read error");
  return tuning::parse(path, text);
}

// Strings as [8-byte length][bytes]..., so that any byte may appear in them.
std::string pack(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) {
    const auto n = static_cast<std::uint64_t>(f.size());
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    out += f;
  }
  return out;
}

std::vector<std::string> unpack(const std::string& blob) {
  std::vector<std::string> fields;
  for (std::size_t pos = 0; pos + 8 <= blob.size();) {
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i)
      n |= static_cast<std::uint64_t>(static_cast<unsigned char>(blob[pos + i])) << (8 * i);
    pos += 8;
    fields.push_back(blob.substr(pos, static_cast<std::size_t>(n)));
    pos += static_cast<std::size_t>(n);
  }
  return fields;
}

}  // namespace

settings settings::from_env() { return from_values(environment()); }

settings settings::from_env(MPI_Comm comm) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Rank 0 reads and parses; it sends either {"error", message} or {"ok", tuning path,
  // tuning text entries..., "", NAME, VALUE, ...}: the inputs it parsed, so that every
  // rank parses the same text and gets the same settings (BASE-6, BASE-7).
  std::string blob;
  settings mine;
  if (rank == 0) {
    std::vector<std::string> fields;
    try {
      const auto env = environment();
      mine = from_values(env);
      mine.tuning = read_tuning(mine);
      fields = {"ok", mine.tuning.path};
      for (const auto& [key, value] : mine.tuning.entries) {
        std::string entry = key;
        entry += '=';
        entry += value;
        fields.push_back(std::move(entry));
      }
      fields.emplace_back();
      for (const auto& [name, value] : env) {
        fields.push_back(name);
        fields.push_back(value);
      }
    } catch (const std::exception& e) {
      fields = {"error", e.what()};
    }
    blob = pack(fields);
  }
  broadcast(comm, blob);  // one MPI_Bcast for a few hundred bytes
  const std::vector<std::string> fields = unpack(blob);
  if (fields.at(0) == "error") throw error(fields.at(1));
  if (rank == 0) return mine;
  std::size_t i = 2;
  std::string tune_text;
  for (; i < fields.size() && !fields[i].empty(); ++i) tune_text += fields[i] + "\n";
  std::map<std::string, std::string> env;
  for (++i; i + 1 < fields.size(); i += 2) env.emplace(fields[i], fields[i + 1]);
  settings s = from_values(env);
  if (!fields[1].empty()) s.tuning = tuning::parse(fields[1], tune_text);
  return s;
}

}  // namespace convoy::base
