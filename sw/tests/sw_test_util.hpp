// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the sw/ unit tests and the command-line tests (sw/tests,
// tb/network): a per-test temporary directory, a check that a strata::Error
// names the file, line, layer and problem, and a runner of a command line
// whose exit code, stdout and stderr the test inspects.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "strata/error.hpp"

namespace strata::test {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("strata_" + std::string(info->test_suite_name()) + "_" +
                                        info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes `text` to dir/name and returns the path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  fs::path dir_;
};

// The whole file as bytes ("" if it cannot be read).
inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// What a command line did.
struct Outcome {
  int code = -1;  // exit code; -1 if the process died from a signal
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `exe args...` with stdin from /dev/null; stdout and stderr go through
// files in `dir` (overwritten by the next run).
inline Outcome run_command(const std::string& exe, const std::vector<std::string>& args,
                           const fs::path& dir) {
  std::string cmd = shell_quote(exe);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  cmd += " > " + shell_quote(out.string()) + " 2> " + shell_quote(err.string()) + " < /dev/null";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// A failed `strata` run: the exit code, stderr starting "strata: error: " and
// containing every part.
inline void expect_cli_failure(const Outcome& r, int code, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(r.err.rfind("strata: error: ", 0), 0u) << r.err;
  for (const std::string& p : parts) {
    EXPECT_TRUE(contains(r.err, p)) << "missing '" << p << "' in: " << r.err;
  }
}

// Runs `f`, which must throw strata::Error located at file:line in `layer`
// ("" = no layer) whose what() contains every string in `parts`.
inline void expect_error(const std::function<void()>& f, const std::string& file, int line,
                         const std::string& layer, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.where().file, file) << what;
    EXPECT_EQ(e.where().line, line) << what;
    EXPECT_EQ(e.where().layer, layer) << what;
    if (!file.empty()) {
      const std::string place = line > 0 ? file + ":" + std::to_string(line) + ": " : file + ": ";
      EXPECT_EQ(what.rfind(place, 0), 0u)
          << "what() does not start with '" << place << "': " << what;
    }
    if (!layer.empty()) {
      EXPECT_NE(what.find("layer '" + layer + "'"), std::string::npos) << what;
    }
    for (const std::string& p : parts) {
      EXPECT_NE(what.find(p), std::string::npos) << "missing '" << p << "' in: " << what;
    }
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected strata::Error, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected strata::Error, nothing was thrown";
}

}  // namespace strata::test
