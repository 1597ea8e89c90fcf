// SPDX-License-Identifier: Apache-2.0
// `strata`: the command line of the Strata tool flow (docs/cli.md). Each
// subcommand lives in a file of its own (commands.hpp); this file registers
// them and maps errors to exit codes: 0 success, 1 error (bad network, files,
// data, a failed or hung RTL run), 2 usage error, 3 the RTL output differs
// from the golden model. Every error is one line on stderr:
// "strata: error: <what>".
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "commands.hpp"
#include "strata/bench_report.hpp"
#include "strata/error.hpp"

namespace {

// Parses the command line and runs the subcommand it names (CLI11 calls the
// subcommand's callback at the end of the parse).
int run_main(int argc, char** argv) {
  CLI::App app{
      "Strata: CNN inference accelerator tool flow (network info, runs on the golden model, "
      "the ISA simulator and the RTL, benchmarks, parameter generation, compilation)",
      "strata"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1.0");
  strata::cli::add_info_command(app);
  strata::cli::add_run_command(app);
  strata::cli::add_bench_command(app);
  strata::cli::add_gen_command(app);
  strata::cli::add_compile_command(app);
  strata::cli::add_rules_command(app);
  strata::cli::add_plan_command(app);
  strata::cli::add_import_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    fmt::print(stderr, "strata: error: {}\nRun 'strata --help' for usage.\n", e.what());
    return 2;
  }
  return 0;
}

// What could not be written to standard output (a full disk, an I/O error) is
// an error like any other: exit 1 unless the command already failed.
int finish_stdout(int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return code;
  fmt::print(stderr, "strata: error: cannot write standard output{}\n",
             errno != 0 ? fmt::format(": {}", std::strerror(errno)) : "");
  return code == 0 ? 1 : code;
}

int fail(const std::exception& e, int code) {
  std::fflush(stdout);
  fmt::print(stderr, "strata: error: {}\n", e.what());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  try {
    code = run_main(argc, argv);
  } catch (const strata::MismatchError& e) {
    code = fail(e, 3);
  } catch (const std::exception& e) {
    code = fail(e, 1);
  }
  return finish_stdout(code);
}
