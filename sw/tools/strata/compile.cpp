// SPDX-License-Identifier: Apache-2.0
// `strata compile NET.yaml (--out P.bin [--listing L.txt] | --bundle B.strb)`:
// the accelerator program of a network (its memory image, listing and
// bundle), or with --instances K one program per stage of a cascade chain.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "strata/bench_report.hpp"
#include "strata/bundle.hpp"
#include "strata/cascade.hpp"
#include "strata/compiler.hpp"
#include "strata/file_io.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

struct CompileArgs {
  std::string network;
  std::string weights;
  std::string target;
  std::string out;
  std::string listing;
  std::string bundle;  // --bundle: the self-describing file the driver library loads
  CompileOptions options;
  int instances = 0;  // --instances K: one program per stage of a chain
};

// `path` with ".stage<k>" before its extension: out.bin -> out.stage0.bin.
std::string stage_path(const std::string& path, size_t k) {
  const fs::path p(path);
  return (p.parent_path() /
          fmt::format("{}.stage{}{}", p.stem().string(), k, p.extension().string()))
      .string();
}

void compile_chain_stages(const CompileArgs& a, const Network& net, const HwTarget& target) {
  const ChainProgram chain = compile_chain(net, target, a.instances);
  fmt::print("{}", chain_partition(chain, net));
  const auto listing = [&](size_t k) {
    return a.listing.empty() ? std::string() : stage_path(a.listing, k);
  };
  OutputFiles files;  // every stage's files or none
  for (size_t k = 0; k < chain.stages.size(); ++k) {
    add_program(files, chain.stages[k].program, stage_path(a.out, k), listing(k));
  }
  files.commit();
  for (size_t k = 0; k < chain.stages.size(); ++k) {
    fmt::print("wrote {} ({} bytes){}\n", stage_path(a.out, k),
               chain.stages[k].program.image.size(),
               listing(k).empty() ? "" : fmt::format(" and {}", listing(k)));
  }
}

void run_compile(const CompileArgs& a) {
  const Network net = load_network(a.network, LoadOptions{a.weights, true});
  const HwTarget target = load_target(a.target);
  if (a.instances > 0) {
    compile_chain_stages(a, net, target);
    return;
  }
  const Program prog = compile(net, target, a.options);
  OutputFiles files;  // the image, the listing and the bundle: all or none
  if (!a.out.empty()) add_program(files, prog, a.out, a.listing);
  if (!a.bundle.empty()) {
    BundleScales scales{static_cast<float>(net.input_scale), {}};
    for (size_t j = 0; j < prog.outputs.size(); ++j) {
      scales.outputs.push_back(static_cast<float>(net.output_scale(j)));
    }
    files.add(a.bundle, make_bundle(prog, scales));
  }
  files.commit();
  fmt::print("network {} -> {} instructions for target '{}' (P {}, N {}), batch {}\n", net.name,
             prog.instructions.size(), target.name, target.pes, target.lanes, prog.batch);
  for (const MemRegion& r : prog.regions) {
    fmt::print("  {:<14} 0x{:08x}  {:>9} bytes\n", r.name, r.offset, r.size);
  }
  if (!a.out.empty()) {
    fmt::print("wrote {} ({} bytes){}\n", a.out, prog.image.size(),
               a.listing.empty() ? "" : fmt::format(" and {}", a.listing));
  }
  if (!a.bundle.empty()) fmt::print("wrote bundle {}\n", a.bundle);
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto a = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile a network into an accelerator program (external memory image)");
  add_network_argument(cmd, a->network);
  cmd->add_option("--weights", a->weights, "Directory of the .npy parameter files");
  add_target_option(cmd, a->target,
                    "Hardware configuration YAML (default: config/default.yaml as built)");
  CLI::Option* batch = cmd->add_option("--batch", a->options.batch, "Images per run (1..P)")
                           ->check(CLI::Range(1, 64))
                           ->capture_default_str();
  CLI::Option* out =
      cmd->add_option("--out", a->out, "Memory image to write (instructions at byte 0)");
  CLI::Option* bundle = cmd->add_option(
      "--bundle", a->bundle,
      "Bundle to write: the program, its parameters and the description the driver library "
      "strata_rt loads on any backend (docs/bundle.md)");
  cmd->add_option("--instances", a->instances,
                  "Split the network into K stages of a cascade chain (docs/cascade.md) and "
                  "write one program per stage (OUT and LISTING get .stage<k> before their "
                  "extension); a chain streams images one at a time, without --batch")
      ->check(CLI::Range(1, 4))
      ->excludes(batch)
      ->excludes(bundle);
  cmd->add_option("--listing", a->listing,
                  "Disassembly listing with the memory map and I/O placement")
      ->needs(out);
  // At least one of --out and --bundle (CLI11's needs takes all of its options).
  cmd->parse_complete_callback([a] {
    usage_check(!a->out.empty() || !a->bundle.empty(), "compile needs --out or --bundle");
  });
  cmd->callback([a] { run_compile(*a); });
}

}  // namespace strata::cli
