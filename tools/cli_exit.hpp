#pragma once
/// @file
/// One convention for every command-line program of convoy (tools/ and bench/): --help
/// prints the usage and --version "<program> <convoy version>", both exiting 0; a bad
/// command line prints one line, CLI11's message naming the option ("convoy-route: --tensor:
/// Value 4 not in range 1 to 3 (--help lists the options)", "convoy-topo: unknown argument
/// '--frobnicate' ..."), and exits 2 (BENCH-3). An unknown argument is named before a
/// missing required one.
#include <convoy/version.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>
#include <string>

namespace convoy::tools {

/// Parses argv into `app`'s options. Returns -1 when the program should run, else the exit
/// code (0 after --help, 2 after an error). Only `print` writes: MPI programs parse on every
/// rank (the same argv gives the same outcome) and let rank 0 speak.
inline int parse_command_line(CLI::App& app, int argc, char** argv, bool print = true) {
  app.set_version_flag("--version", app.get_name() + " " + CONVOY_VERSION_STRING,
                       "print the program's name and convoy's version, and exit");
  // "<program>: <what is wrong>", as every convoy tool has always said it.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      const auto extra = a->remaining();
      what = extra.size() == 1 ? "unknown argument" : "unknown arguments";
      for (std::size_t i = 0; i < extra.size(); ++i) what += (i ? ", '" : " '") + extra[i] + "'";
    }
    return a->get_name() + ": " + what + " (--help lists the options)\n";
  });
  const auto fail = [&](const CLI::ParseError& e) {
    std::ostringstream sink;
    app.exit(e, print ? std::cout : sink, print ? std::cerr : sink);
    return e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success) ? 0 : 2;
  };
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::RequiredError& e) {
    // CLI11 checks what is required before what is unknown: an unknown flag is the
    // problem to name ("--bogus"), not the option it left missing.
    if (!app.remaining().empty()) return fail(CLI::ExtrasError(app.remaining()));
    return fail(e);
  } catch (const CLI::ParseError& e) {
    return fail(e);
  }
}

}  // namespace convoy::tools
