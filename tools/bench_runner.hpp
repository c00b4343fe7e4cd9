#pragma once
/// @file
/// Runs a benchmark program under a launcher and reads its JSON rows (bench_rows.hpp), for
/// convoy-tune. Not MPI itself: the launcher (mpirun, srun) starts the job.
#include <string>
#include <vector>

#include "bench_rows.hpp"

namespace convoy::tools {

/// Splits a launcher prefix such as "srun -N 128 -n 4096" at blanks (no shell quoting).
[[nodiscard]] std::vector<std::string> split_words(const std::string& text);

/// Runs `command` (program and arguments; the first word is looked up on PATH) with
/// `--json <temporary file>` appended, its standard output discarded and its standard error
/// appended to `log_path`. Returns the rows it wrote; none if it failed before writing.
[[nodiscard]] std::vector<bench::result_row> run_bench(std::vector<std::string> command,
                                                       const std::string& log_path);

/// The directory of the running executable ("" if unknown).
[[nodiscard]] std::string own_directory();

}  // namespace convoy::tools
