// SPDX-License-Identifier: Apache-2.0
// `strata import MODEL.onnx --calibration X.npy --out DIR`: post-training
// import of a float ONNX model, by scripts/strata_import.py run with the
// project venv's python (onnx and onnxruntime are PyPI packages, installed
// into .venv/ by `make setup`; docs/dependencies.md). The script's exit
// status and its one-line errors are the command's.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include <unistd.h>

#include "commands.hpp"
#include "strata/error.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

struct ImportArgs {
  std::string model, calibration, out, name;
  bool no_check = false;
  bool shuffle_conv = false;
  int max_kernel = 0;  // 0: the script's default
};

// Replaces the process by the script; returns only by throwing.
void run_import(const ImportArgs& a) {
  const fs::path source = STRATA_SOURCE_DIR;
  const fs::path python = source / ".venv" / "bin" / "python";
  const fs::path script = source / "scripts" / "strata_import.py";
  std::error_code ec;
  if (!fs::exists(python, ec)) {
    throw Error(
        fmt::format("strata import needs the project venv {} with numpy, onnx and "
                    "onnxruntime: run make setup",
                    python.string()));
  }
  if (!fs::exists(script, ec)) throw Error(fmt::format("{} is missing", script.string()));
  // The agreement check runs this very binary's golden model.
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> args = {python.string(), script.string(), a.model, "--calibration",
                                   a.calibration,   "--out",         a.out};
  if (!a.name.empty()) args.insert(args.end(), {"--name", a.name});
  if (a.no_check) args.emplace_back("--no-check");
  if (a.shuffle_conv) args.emplace_back("--shuffle-conv");
  if (a.max_kernel != 0) args.insert(args.end(), {"--max-kernel", std::to_string(a.max_kernel)});
  if (!ec) args.insert(args.end(), {"--strata", self.string()});
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(argv[0], argv.data());
  throw Error(
      fmt::format("cannot run {}: {}: run make setup", python.string(), std::strerror(errno)));
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Import a float ONNX model: network YAML + int8 parameters, quantised post-training "
      "on calibration images (scripts/strata_import.py, needs make setup)");
  cmd->add_option("model", a->model, "Float ONNX model (.onnx)")->required();
  cmd->add_option("--calibration", a->calibration,
                  "float .npy calibration images, [N][C][H][W] (or one [C][H][W])")
      ->required();
  cmd->add_option("--out", a->out,
                  "Directory for <name>.yaml, <name>/*.npy and calibration_input.npy")
      ->required();
  cmd->add_option("--name", a->name, "Network name (default: the model file's stem)");
  cmd->add_flag("--no-check", a->no_check,
                "Skip the float vs int8 agreement run on the calibration images");
  cmd->add_flag("--shuffle-conv", a->shuffle_conv,
                "Make each channel shuffle a 1x1 permutation convolution where it is, "
                "instead of folding it into the layers that read it");
  cmd->add_option("--max-kernel", a->max_kernel,
                  "Largest convolution kernel to keep: a larger one at stride >= 2 becomes "
                  "a space-to-depth layer and a smaller kernel (default 7)")
      ->check(CLI::Range(1, 11));
  cmd->callback([a] { run_import(*a); });
}

}  // namespace strata::cli
