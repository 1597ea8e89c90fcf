// SPDX-License-Identifier: Apache-2.0
// The subcommands of `strata`, one file each (sw/tools/strata/<command>.cpp):
// add_<command>_command adds the subcommand, its options and the callback
// that runs it. Errors are exceptions: strata::Error (exit status 1),
// strata::MismatchError (3) and CLI11's parse errors (2); main.cpp maps them.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

void add_info_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_gen_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_rules_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_import_command(CLI::App& app);

}  // namespace strata::cli
