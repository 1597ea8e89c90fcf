// SPDX-License-Identifier: Apache-2.0
// .npy reader/writer: round trips for every supported dtype and clear errors
// (never crashes) for every malformed file we can think of.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/npy.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata_npy_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a file with a hand-made header and body.
  std::string write_raw(const std::string& name, const std::string& header_dict,
                        const std::string& body, int major = 1) {
    std::string header = header_dict;
    const size_t prefix = major == 1 ? 10 : 12;
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::string file = "\x93NUMPY";
    file.push_back(static_cast<char>(major));
    file.push_back('\0');
    const size_t n = header.size();
    file.push_back(static_cast<char>(n & 0xff));
    file.push_back(static_cast<char>((n >> 8) & 0xff));
    if (major != 1) {
      file.push_back('\0');
      file.push_back('\0');
    }
    file += header + body;
    std::ofstream(path(name), std::ios::binary) << file;
    return path(name);
  }

  // Expects read_npy to throw an Error naming the file and containing `what`.
  void expect_error(const std::string& file, const std::string& what) {
    try {
      read_npy(file);
      FAIL() << "no error for " << file << " (expected '" << what << "')";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }

  fs::path dir_;
};

template <typename T>
void round_trip(const std::string& file, Shape shape) {
  Tensor<T> t(shape);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<T>(i * 37 - 1000);
  save_npy(file, t);
  EXPECT_EQ(load_npy<T>(file), t);
}

TEST_F(NpyTest, RoundTripsEverySupportedDtype) {
  round_trip<int8_t>(path("a.npy"), {2, 3, 4});
  round_trip<uint8_t>(path("b.npy"), {5});
  round_trip<int16_t>(path("c.npy"), {3, 1});
  round_trip<uint16_t>(path("d.npy"), {7});
  round_trip<int32_t>(path("e.npy"), {2, 2, 2, 2});
  round_trip<int32_t>(path("f.npy"), {});     // scalar
  round_trip<int8_t>(path("g.npy"), {0, 4});  // empty
}

TEST_F(NpyTest, ReadsVersion2AndDoubleQuotedHeaders) {
  const auto f =
      write_raw("v2.npy", "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (2,), }",
                std::string("\x01\x00\xff\xff", 4), 2);
  const auto t = load_npy<int16_t>(f);
  ASSERT_EQ(t.shape(), Shape({2}));
  EXPECT_EQ(t[0], 1);
  EXPECT_EQ(t[1], -1);
}

TEST_F(NpyTest, WrittenHeaderIsWhatNumpyWrites) {
  Tensor<uint16_t> t({3});
  save_npy(path("h.npy"), t);
  std::ifstream f(path("h.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 6u);
  const size_t header_end = bytes.size() - 6;  // 3 x uint16 of data follow the header
  EXPECT_EQ(header_end % 64, 0u) << "header not padded to a multiple of 64";
  EXPECT_EQ(bytes[header_end - 1], '\n');
  EXPECT_NE(bytes.find("{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
}

TEST_F(NpyTest, DtypeMismatchIsAnError) {
  round_trip<int32_t>(path("i32.npy"), {4});
  try {
    load_npy<int8_t>(path("i32.npy"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dtype mismatch: expected int8, file has int32"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(NpyTest, MalformedFilesGiveClearErrors) {
  const std::string ok = "{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }";
  expect_error(path("missing.npy"), "cannot open");
  fs::create_directories(path("dir.npy"));
  expect_error(path("dir.npy"), "is a directory");
  {
    std::ofstream(path("empty.npy"), std::ios::binary) << "";
    expect_error(path("empty.npy"), "the file is empty");
  }
  {
    std::ofstream(path("text.npy"), std::ios::binary) << "hello, this is not numpy at all";
    expect_error(path("text.npy"), "bad magic");
  }
  expect_error(write_raw("fortran.npy",
                         "{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2), }", "abcd"),
               "Fortran");
  expect_error(
      write_raw("be.npy", "{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", "abcd"),
      "big-endian");
  expect_error(
      write_raw("f32.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd"),
      "unsupported dtype '<f4'");
  expect_error(write_raw("short.npy", ok, "abc"), "truncated data");
  expect_error(write_raw("long.npy", ok, "abcdef"), "unexpected bytes");
  expect_error(write_raw("nokey.npy", "{'descr': '|i1', 'shape': (4,), }", "abcd"),
               "malformed .npy header");
  expect_error(write_raw("badshape.npy",
                         "{'descr': '|i1', 'fortran_order': False, 'shape': (-4,), }", "abcd"),
               "malformed .npy header");
  expect_error(write_raw("extra.npy",
                         "{'descr': '|i1', 'fortran_order': False, 'shape': (4,), 'x': 1}", "abcd"),
               "unexpected key");
  expect_error(write_raw("unterminated.npy", "{'descr: |i1", "abcd"), "malformed .npy header");
  expect_error(write_raw("v9.npy", ok, "abcd", 9), "unsupported .npy format version");
  expect_error(write_raw("huge.npy",
                         "{'descr': '|i1', 'fortran_order': False, 'shape': (99999999999,), }", ""),
               "malformed .npy header");
  {  // header length pointing past the end of the file
    std::string file =
        std::string("\x93NUMPY\x01\x00", 8) + std::string("\xff\x7f", 2) + "{'descr'";
    std::ofstream(path("hdr.npy"), std::ios::binary) << file;
    expect_error(path("hdr.npy"), "truncated .npy header");
  }
  // Dimensions each below the limit whose product overflows int64 (2^31 * 2^31 * 4 = 2^64):
  // an error, not a wrapped count that lets a file with no data through.
  expect_error(write_raw("wrap.npy",
                         "{'descr': '|i1', 'fortran_order': False, 'shape': (2147483648, "
                         "2147483648, 4), }",
                         ""),
               "array too large");
  expect_error(write_raw("big.npy",
                         "{'descr': '|i1', 'fortran_order': False, 'shape': (65536, 65536), }", ""),
               "array too large");
}

TEST_F(NpyTest, ZeroElementArraysOfEveryDtypeRoundTrip) {
  round_trip<int32_t>(path("z32.npy"), {0});
  round_trip<int8_t>(path("z8.npy"), {3, 0, 2});
  std::ifstream f(path("z8.npy"), std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                   std::istreambuf_iterator<char>());
  const NpyArray a = parse_npy(bytes, "z8.npy");
  EXPECT_EQ(a.shape, Shape({3, 0, 2}));
  EXPECT_TRUE(a.bytes.empty());
}

// A write that fails (here: the file size limit, as a full disk would) is an
// error naming the file and the reason, and leaves nothing under the requested
// name: no partial file, and an existing file keeps its old contents.
TEST_F(NpyTest, AFailedWriteIsAnErrorAndLeavesNoPartialFile) {
  Tensor<int8_t> big({4, 64, 64});
  Tensor<int8_t> small({2});
  save_npy(path("old.npy"), small);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string new_error, old_error;
  try {
    save_npy(path("new.npy"), big);
  } catch (const Error& e) {
    new_error = e.what();
  }
  try {
    save_npy(path("old.npy"), big);
  } catch (const Error& e) {
    old_error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(new_error.find(path("new.npy")), std::string::npos) << new_error;
  EXPECT_NE(new_error.find("File too large"), std::string::npos) << new_error;
  EXPECT_NE(old_error.find("File too large"), std::string::npos) << old_error;
  EXPECT_FALSE(fs::exists(path("new.npy")));
  EXPECT_EQ(load_npy<int8_t>(path("old.npy")), small);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().extension(), ".npy") << "left behind: " << entry.path();
  }
}

TEST_F(NpyTest, WritingToAFullDeviceIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    save_npy("/dev/full", Tensor<int8_t>({3}));
    FAIL() << "no error writing /dev/full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists("/dev/full"));
}

}  // namespace
}  // namespace strata
