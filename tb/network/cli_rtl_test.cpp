// The `strata` command line on the Verilated accelerator: `run --backend rtl`
// (bit-exact with the golden backend, --check, --trace), `bench --json` (every
// field, per-layer sums against the whole-run counters, both scheduling modes)
// and the errors of the RTL backend (bad options, a configuration without a
// built model, missing weights, a hung run). Small networks only (lenet5):
// each cifar10_quick run is ~180k cycles, `make demo` covers that one.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/npy.hpp"
#include "strata/tensor.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = STRATA_SOURCE_DIR;
const std::string kLenet = kSource + "/examples/lenet5.yaml";
// Parameters generated at build time (sw/CMakeLists.txt, examples target).
const std::string kLenetWeights = std::string(STRATA_BINARY_DIR) + "/examples/lenet5";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

struct Outcome {
  int code = -1;  // exit code; -1 if the process died from a signal
  std::string out;
  std::string err;
};

class CliRtl : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("strata_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  Outcome strata(const std::vector<std::string>& args) {
    std::string cmd = quote(STRATA_CLI);
    for (const std::string& a : args) cmd += " " + quote(a);
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    cmd += " > " + quote(out.string()) + " 2> " + quote(err.string()) + " < /dev/null";
    const int status = std::system(cmd.c_str());
    Outcome r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // A failure: the exit code and one "strata: error: ..." line with every part.
  static void expect_failure(const Outcome& r, int code, const std::vector<std::string>& parts) {
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(r.err.rfind("strata: error: ", 0), 0u) << r.err;
    for (const std::string& p : parts) {
      EXPECT_TRUE(contains(r.err, p)) << "missing '" << p << "' in: " << r.err;
    }
  }

  static std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }

  fs::path dir_;
};

// `run --backend rtl --check` passes and writes the same .npy as the golden
// backend (byte for byte).
TEST_F(CliRtl, RunRtlMatchesGoldenBackend) {
  const std::string input = kLenetWeights + "/input.npy";
  const Outcome golden = strata({"run", kLenet, "--weights", kLenetWeights, "--input", input,
                                 "--output", path("golden.npy")});
  ASSERT_EQ(golden.code, 0) << golden.err;
  const Outcome rtl = strata({"run", kLenet, "--weights", kLenetWeights, "--input", input,
                              "--output", path("rtl.npy"), "--backend", "rtl", "--check"});
  ASSERT_EQ(rtl.code, 0) << rtl.err << rtl.out;
  EXPECT_TRUE(contains(rtl.out, "0 mismatches")) << rtl.out;
  EXPECT_TRUE(contains(rtl.out, "cycles")) << rtl.out;
  EXPECT_EQ(slurp(path("rtl.npy")), slurp(path("golden.npy")));
  EXPECT_FALSE(slurp(path("rtl.npy")).empty());
}

}  // namespace
}  // namespace strata
