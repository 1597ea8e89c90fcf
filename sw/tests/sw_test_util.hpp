// Helpers shared by the sw/ unit tests: a per-test temporary directory and a
// check that a strata::Error names the file, line, layer and problem.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
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
