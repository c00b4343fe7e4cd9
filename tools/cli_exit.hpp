#pragma once
/// @file
/// One convention for every command-line program of convoy (tools/ and bench/): --help
/// prints the usage and exits 0; a bad command line prints CLI11's message naming the
/// option, and "Run with --help for more information.", and exits 2 (BENCH-3).
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

namespace convoy::tools {

/// Parses argv into `app`'s options. Returns -1 when the program should run, else the exit
/// code (0 after --help, 2 after an error). Only `print` writes: MPI programs parse on every
/// rank (the same argv gives the same outcome) and let rank 0 speak.
inline int parse_command_line(CLI::App& app, int argc, char** argv, bool print = true) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    std::ostringstream sink;
    app.exit(e, print ? std::cout : sink, print ? std::cerr : sink);
    return e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success) ? 0 : 2;
  }
}

}  // namespace convoy::tools
