#pragma once
/// @file
/// What the command-line programs (tools/ and bench/) share beyond parsing (cli_exit.hpp):
/// an output file checked before any work is done, and progress for long runs (a line on a
/// terminal, a line every few seconds in a log).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

namespace convoy::tools {

/// Reads a count as the programs take them: 10000000, 1e7, 10M, 64k, 16Ki, 1Mi (suffixes k,
/// K, M, G, Ki, Mi), at most 1e15, rounded to the nearest integer. False for anything else
/// (empty, not a number, a negative, an unknown suffix, trailing text).
[[nodiscard]] inline bool parse_count(const std::string& text, std::uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str()) return false;
  const std::string suffix(end);
  double mult = 1;
  if (suffix == "k" || suffix == "K")
    mult = 1e3;
  else if (suffix == "M")
    mult = 1e6;
  else if (suffix == "G")
    mult = 1e9;
  else if (suffix == "Ki")
    mult = 1024;
  else if (suffix == "Mi")
    mult = 1024.0 * 1024;
  else if (!suffix.empty())
    return false;
  if (!(v >= 0) || !(v * mult <= 1e15)) return false;  // also NaN and infinity
  out = static_cast<std::uint64_t>(std::llround(v * mult));
  return true;
}

/// CLI11 validator: a count (parse_count) in [lo, hi]; the value is left as written.
[[nodiscard]] inline CLI::Validator count_in(std::uint64_t lo, std::uint64_t hi) {
  return {[lo, hi](std::string& text) -> std::string {
            std::uint64_t v = 0;
            if (!parse_count(text, v))
              return "'" + text + "' is not a count (such as 2e6, 64k or 16Ki)";
            if (v < lo || v > hi)
              return "'" + text + "' is not in " + std::to_string(lo) + ".." + std::to_string(hi);
            return {};
          },
          "N", "count"};
}

/// CLI11 validator: a finite number in [lo, hi] (its message shows the bounds as %g does,
/// not CLI::Range's full digits of the largest double).
[[nodiscard]] inline CLI::Validator number_in(double lo, double hi) {
  return {[lo, hi](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
              return "'" + text + "' is not a number";
            if (v < lo || v > hi) {
              char range[96];
              std::snprintf(range, sizeof range, "%g..%g", lo, hi);
              return "'" + text + "' is not in " + range;
            }
            return {};
          },
          "NUMBER", "number in range"};
}

/// Empty if this process can write the file `path`, else why not. A file that exists is
/// opened for appending and left as it was; one that does not is created and removed.
[[nodiscard]] inline std::string why_not_writable(const std::string& path) {
  if (path.empty()) return "an empty file name";
  struct stat st {};
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode)) return "'" + path + "' is a directory";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write '" + path + "': " + std::strerror(errno);
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
  return {};
}

/// CLI11 validator: the option names a file this process can write (why_not_writable).
/// MPI programs pass `active` true on the rank that writes and false elsewhere, so that
/// only that rank touches the file system (and the ranks agree on the outcome by a
/// broadcast of the exit code).
[[nodiscard]] inline CLI::Validator writable_file(bool active = true) {
  return {[active](std::string& path) { return active ? why_not_writable(path) : std::string(); },
          "FILE", "writable file"};
}

/// How far a long run got, on standard error. On a terminal, one line rewritten in place
/// ('\r') at most ten times a second and erased at the end. Elsewhere (a batch job's log, a
/// pipe), a whole line every log period once the run has taken that long, so that a log
/// shows the run is alive without filling up, and a short run prints nothing. The period
/// is CONVOY_PROGRESS_SECONDS (a whole number from 1 to 3600), else 5 s.
class progress_line {
 public:
  explicit progress_line(std::string prefix)
      : prefix_(std::move(prefix)),
        tty_(::isatty(STDERR_FILENO) != 0),
        log_period_(log_period()),
        last_(std::chrono::steady_clock::now()) {}

  /// CONVOY_PROGRESS_SECONDS, else 5 s; a bad value is said once and the default taken.
  static std::chrono::seconds log_period() {
    static const std::chrono::seconds period = [] {
      const char* text = std::getenv("CONVOY_PROGRESS_SECONDS");
      if (text == nullptr) return std::chrono::seconds(5);
      char* end = nullptr;
      const long v = std::strtol(text, &end, 10);
      if (end != text && *end == '\0' && v >= 1 && v <= 3600) return std::chrono::seconds(v);
      std::fprintf(stderr,
                   "convoy: CONVOY_PROGRESS_SECONDS='%s': must be a whole number of seconds "
                   "from 1 to 3600; using 5\n",
                   text);
      return std::chrono::seconds(5);
    }();
    return period;
  }
  ~progress_line() { clear(); }
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

  /// Shows `text` after the prefix; on a terminal skipped when the last line is less than
  /// 0.1 s old, unless `now`; elsewhere when it is less than the log period old.
  void show(const std::string& text, bool now = false) {
    const auto t = std::chrono::steady_clock::now();
    if (!tty_) {
      if (t - last_ < log_period_) return;
      last_ = t;
      std::fputs((prefix_ + text + "\n").c_str(), stderr);
      std::fflush(stderr);
      return;
    }
    if (!now && shown_ > 0 && t - last_ < std::chrono::milliseconds(100)) return;
    last_ = t;
    std::string line = "\r" + prefix_ + text;
    const std::size_t width = prefix_.size() + text.size();
    if (width < shown_) line.append(shown_ - width, ' ');  // erase the longer line before
    shown_ = width;
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }
  /// Erases the terminal's line (before the program prints something else on standard
  /// error); a log's lines stay.
  void clear() {
    if (!tty_ || shown_ == 0) return;
    std::fputs(("\r" + std::string(shown_, ' ') + "\r").c_str(), stderr);
    std::fflush(stderr);
    shown_ = 0;
  }

 private:
  std::string prefix_;
  bool tty_;
  std::chrono::seconds log_period_;
  std::size_t shown_ = 0;
  std::chrono::steady_clock::time_point last_;
};

/// A whole number >= 0 ("--conveyor: -3 is negative; give 0 or more"): CLI11's
/// NonNegativeNumber would print its range up to the largest double.
inline const CLI::Validator non_negative_integer(
    [](std::string& text) -> std::string {
      long long v = 0;
      std::size_t used = 0;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
        return "'" + text + "' is not a whole number";
      }
      if (used != text.size()) return "'" + text + "' is not a whole number";
      if (v < 0) return text + " is negative; give 0 or more";
      return {};
    },
    "NONNEGATIVE");

}  // namespace convoy::tools
