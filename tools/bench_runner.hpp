#pragma once
/// @file
/// Runs a benchmark program under a launcher and reads its JSON rows (bench_rows.hpp), for
/// convoy-tune. Not MPI itself: the launcher (mpirun, srun) starts the job.
#include <string>
#include <vector>

#include "bench_rows.hpp"

namespace convoy::tools {

/// Splits a launcher prefix such as `srun -N 128 -n 4096 --export="A=1 B=2"` into words as
/// a POSIX shell does, without expansions: blanks separate words, single and double quotes
/// group, a backslash takes the next character as it is. Throws std::invalid_argument for
/// an unterminated quote or a final backslash.
[[nodiscard]] std::vector<std::string> split_words(const std::string& text);

/// `name` if it contains a '/' and is executable, else the first executable `name` in a
/// directory of PATH; "" if none.
[[nodiscard]] std::string find_program(const std::string& name);

/// Runs `command` (program and arguments; the first word is looked up on PATH) with
/// `--json <temporary file>` appended, its standard output discarded and its standard error
/// appended to `log_path`. Returns the rows it wrote; none if it failed before writing.
[[nodiscard]] std::vector<bench::result_row> run_bench(std::vector<std::string> command,
                                                       const std::string& log_path);

/// The directory of the running executable ("" if unknown).
[[nodiscard]] std::string own_directory();

}  // namespace convoy::tools
