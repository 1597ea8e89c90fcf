// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the .npy reader on arbitrary bytes. The input is the whole
// file, parsed from memory by strata::parse_npy (what read_npy does after
// reading the file). A strata::Error is a clean refusal; a crash, a sanitizer
// report, another exception or a broken property below is a finding.
// Properties of an accepted array:
//   - its bytes are exactly elements x dtype size, no dimension is negative;
//   - read from a file, load_npy of its own dtype gives the same elements,
//     load_npy of another dtype is a strata::Error;
//   - write_npy then read_npy gives the same dtype, shape and bytes.
// Seeds: tests/fuzz/npy/. Run: `make fuzz` (docs/regression.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>

#include "fuzz_util.hpp"
#include "strata/error.hpp"
#include "strata/npy.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string describe(const NpyArray& a) {
  return fmt::format("dtype {}, shape [{}], {} bytes", dtype_name(a.dtype),
                     fmt::join(a.shape, ", "), a.bytes.size());
}

// load_npy<T> on `path` equals `a` when T is its dtype, else is a strata::Error.
template <typename T>
void check_typed(const std::string& path, const NpyArray& a) {
  const bool same = dtype_of<T>() == a.dtype;
  try {
    const Tensor<T> t = load_npy<T>(path);
    if (!same) {
      fuzz::finding(
          fmt::format("load_npy<{}> accepted {}", dtype_name(dtype_of<T>()), describe(a)));
    }
    if (t.shape() != a.shape || static_cast<size_t>(t.size()) * sizeof(T) != a.bytes.size() ||
        (!a.bytes.empty() && std::memcmp(t.data(), a.bytes.data(), a.bytes.size()) != 0)) {
      fuzz::finding(
          fmt::format("load_npy<{}> differs from parse_npy: {}", dtype_name(a.dtype), describe(a)));
    }
  } catch (const Error& e) {
    if (same) {
      fuzz::finding(fmt::format("load_npy<{}> refused what parse_npy accepted ({}): {}",
                                dtype_name(a.dtype), describe(a), e.what()));
    }
  }
}

// The round-trip file: a per-process temporary directory, removed at exit.
const std::string& round_trip_path() {
  static const struct Dir {
    fs::path dir = fs::temp_directory_path() / fmt::format("strata_fuzz_npy_{}", ::getpid());
    Dir() { fs::create_directories(dir); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } d;
  static const std::string path = (d.dir / "round_trip.npy").string();
  return path;
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  NpyArray a;
  try {
    a = parse_npy(std::span<const uint8_t>(data, size), "fuzz.npy");
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "refused: %s\n", e.what());
    return 0;
  }
  if (fuzz::verbose()) std::fprintf(stderr, "accepted: %s\n", describe(a).c_str());
  for (int64_t d : a.shape) {
    if (d < 0) fuzz::finding("negative dimension: " + describe(a));
  }
  if (a.bytes.size() != static_cast<size_t>(shape_elements(a.shape)) * dtype_size(a.dtype)) {
    fuzz::finding("byte count does not match shape and dtype: " + describe(a));
  }
  static fuzz::MemFile file("fuzz.npy");
  const std::string& path = file.write(data, size);
  check_typed<int8_t>(path, a);
  check_typed<uint8_t>(path, a);
  check_typed<int16_t>(path, a);
  check_typed<uint16_t>(path, a);
  check_typed<int32_t>(path, a);

  NpyArray b;
  try {
    write_npy(round_trip_path(), a);
    b = read_npy(round_trip_path());
  } catch (const Error& e) {
    fuzz::finding(fmt::format("round trip of {} failed: {}", describe(a), e.what()));
  }
  if (b.dtype != a.dtype || b.shape != a.shape || b.bytes != a.bytes) {
    fuzz::finding(fmt::format("write_npy + read_npy changed the array: {} became {}", describe(a),
                              describe(b)));
  }
  return 0;
}
