// SPDX-License-Identifier: Apache-2.0
// `strata rules [--update DOC | --check DOC]`: the target rules
// (strata/target_rules.hpp) as a Markdown table, or that table's section of a
// document written or checked.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "strata/error.hpp"
#include "strata/file_io.hpp"
#include "strata/target_rules.hpp"

namespace strata::cli {
namespace {

struct RulesArgs {
  std::string update, check;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read {}", path));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// --update rewrites the section of a document, --check fails (exit 1) when it differs.
void run_rules(const RulesArgs& a) {
  if (a.update.empty() && a.check.empty()) {
    fmt::print("{}", rules_markdown());
    return;
  }
  const std::string& path = a.update.empty() ? a.check : a.update;
  const std::string doc = read_text(path);
  const std::string want = with_rules_section(doc);
  if (!a.update.empty()) {
    if (want != doc) write_file(path, std::string_view(want));
    fmt::print("{}: {} target rules\n", path, target_rules().size());
    return;
  }
  if (want != doc) {
    throw Error(
        fmt::format("{}: the target rules section differs from the table "
                    "(sw/src/target_rules.cpp); run strata rules --update {}",
                    path, path));
  }
  fmt::print("{}: target rules in sync ({} rules)\n", path, target_rules().size());
}

}  // namespace

void add_rules_command(CLI::App& app) {
  auto a = std::make_shared<RulesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "rules", "Print the target rules (docs/isa.md, Target rules) as a Markdown table");
  CLI::Option* update = cmd->add_option(
      "--update", a->update, "Rewrite the generated target-rules section of this document");
  cmd->add_option("--check", a->check,
                  "Fail when the target-rules section of this document differs")
      ->excludes(update);
  cmd->callback([a] { run_rules(*a); });
}

}  // namespace strata::cli
