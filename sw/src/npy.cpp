// SPDX-License-Identifier: Apache-2.0
// NumPy .npy reader and writer; see npy.hpp for what is accepted.
// Format: 6-byte magic "\x93NUMPY", major/minor version, header length
// (uint16 LE for 1.0, uint32 LE for 2.0/3.0), then a Python dict literal
// {'descr': '<i2', 'fortran_order': False, 'shape': (3, 4), } padded with
// spaces to a multiple of 64 bytes and ending in '\n', then the raw data.
#include "strata/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "strata/error.hpp"
#include "strata/file_io.hpp"

namespace strata {
namespace {

constexpr std::array<char, 6> kMagic = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
// Largest header accepted; real headers are < 200 bytes.
constexpr uint32_t kMaxHeaderBytes = 1 << 16;
// Largest array accepted (elements): 2^31, far above any Strata tensor.
constexpr int64_t kMaxElements = int64_t{1} << 31;

struct DescrEntry {
  const char* descr;  // NumPy descr strings accepted for this dtype
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"|i1", DType::kInt8},  {"<i1", DType::kInt8},   {"|u1", DType::kUInt8}, {"<u1", DType::kUInt8},
    {"<i2", DType::kInt16}, {"<u2", DType::kUInt16}, {"<i4", DType::kInt32},
};

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error(message, ErrorContext{path, 0, ""});
}

// A tiny cursor over the header dict text. The dict is a fixed, machine-written
// literal, so this recognises exactly the three keys NumPy writes.
class HeaderParser {
 public:
  HeaderParser(std::string text, std::string path) : s_(std::move(text)), path_(std::move(path)) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = quoted();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        descr = quoted();
        seen_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        seen_fortran = true;
      } else if (key == "shape") {
        shape = tuple();
        seen_shape = true;
      } else {
        fail(path_, fmt::format("malformed .npy header: unexpected key '{}'", key));
      }
      skip_ws();
      if (peek() == ',') ++i_;
    }
    if (!seen_descr || !seen_fortran || !seen_shape) {
      fail(path_, "malformed .npy header: needs 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(path_, fmt::format("malformed .npy header: expected '{}'", c));
    ++i_;
  }
  std::string quoted() {
    const char q = peek();
    if (q != '\'' && q != '"') fail(path_, "malformed .npy header: expected a quoted string");
    const size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail(path_, "malformed .npy header: unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail(path_, "malformed .npy header: fortran_order must be True or False");
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        return shape;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) {
        fail(path_, "malformed .npy header: shape must be a tuple of non-negative integers");
      }
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        v = v * 10 + (s_[i_++] - '0');
        if (v > kMaxElements) fail(path_, "malformed .npy header: dimension too large");
      }
      shape.push_back(v);
      skip_ws();
      if (peek() == ',') ++i_;
    }
  }

  std::string s_;
  std::string path_;
  size_t i_ = 0;
};

uint32_t read_le(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::kInt8:
      return "|i1";
    case DType::kUInt8:
      return "|u1";
    case DType::kInt16:
      return "<i2";
    case DType::kUInt16:
      return "<u2";
    case DType::kInt32:
      return "<i4";
  }
  return "?";
}

// Python tuple spelling: "()", "(3,)", "(3, 4)".
std::string shape_text(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kInt8:
      return "int8";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt16:
      return "int16";
    case DType::kUInt16:
      return "uint16";
    case DType::kInt32:
      return "int32";
  }
  return "unknown";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kInt32:
      return 4;
  }
  return 0;
}

NpyArray read_npy(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a .npy file");
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, fmt::format("cannot open file: {}", std::strerror(errno)));
  std::vector<uint8_t> file;
  try {
    file.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  } catch (const std::exception& e) {
    fail(path, fmt::format("cannot read file: {}", e.what()));
  }
  if (f.bad()) fail(path, "cannot read file");
  if (file.empty()) fail(path, "not a .npy file (the file is empty)");
  return parse_npy(file, path);
}

NpyArray parse_npy(std::span<const uint8_t> file, const std::string& path) {
  if (file.size() < 10 || std::memcmp(file.data(), kMagic.data(), kMagic.size()) != 0) {
    fail(path, "not a .npy file (bad magic string)");
  }
  const int major = file[6];
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = read_le(&file[8], 2);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) fail(path, "truncated .npy header");
    header_len = read_le(&file[8], 4);
    offset = 12;
  } else {
    fail(path, fmt::format("unsupported .npy format version {}.{}", major, file[7]));
  }
  if (header_len > kMaxHeaderBytes || offset + header_len > file.size()) {
    fail(path, "truncated .npy header");
  }
  const std::string header(reinterpret_cast<const char*>(file.data() + offset), header_len);
  std::string descr;
  bool fortran = false;
  NpyArray out;
  HeaderParser(header, path).parse(descr, fortran, out.shape);
  if (fortran) fail(path, "Fortran-order arrays are not supported (save with C order)");

  bool known = false;
  for (const auto& e : kDescrs) {
    if (descr == e.descr) {
      out.dtype = e.dtype;
      known = true;
    }
  }
  if (!known) {
    if (descr.size() == 3 && descr[0] == '>') {
      fail(path, fmt::format("big-endian dtype '{}' is not supported", descr));
    }
    fail(path, fmt::format("unsupported dtype '{}' (supported: int8, uint8, int16, uint16, int32)",
                           descr));
  }
  // Multiplied with a bound at every step: a shape like (2^31, 2^31, 4) must not wrap.
  int64_t count = 1;
  for (const int64_t d : out.shape) {
    if (d != 0 && count > kMaxElements / d) {
      fail(path, fmt::format("array too large: shape {} has more than {} elements",
                             shape_text(out.shape), kMaxElements));
    }
    count *= d;
  }
  const size_t data_bytes = static_cast<size_t>(count) * dtype_size(out.dtype);
  const size_t data_offset = offset + header_len;
  if (file.size() - data_offset < data_bytes) {
    fail(path, fmt::format("truncated data: shape {} needs {} bytes, file has {}",
                           shape_text(out.shape), data_bytes, file.size() - data_offset));
  }
  if (file.size() - data_offset > data_bytes) {
    fail(path,
         fmt::format("{} unexpected bytes after the data", file.size() - data_offset - data_bytes));
  }
  out.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(data_offset), file.end());
  return out;
}

std::vector<uint8_t> npy_file(const NpyArray& array) {
  if (array.bytes.size() !=
      static_cast<size_t>(shape_elements(array.shape)) * dtype_size(array.dtype)) {
    throw Error("npy_file: byte count does not match shape and dtype");
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   descr_of(array.dtype), shape_text(array.shape));
  // Pad so that magic + version + length + header is a multiple of 64, ending in '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> file(kMagic.begin(), kMagic.end());
  file.insert(file.end(), {1, 0, static_cast<uint8_t>(header.size() & 0xff),
                           static_cast<uint8_t>(header.size() >> 8)});
  file.insert(file.end(), header.begin(), header.end());
  file.insert(file.end(), array.bytes.begin(), array.bytes.end());
  return file;
}

void write_npy(const std::string& path, const NpyArray& array) {
  write_file(path, npy_file(array));
}

template <typename T>
std::vector<uint8_t> npy_file(const Tensor<T>& tensor) {
  NpyArray a;
  a.dtype = dtype_of<T>();
  a.shape = tensor.shape();
  a.bytes.resize(static_cast<size_t>(tensor.size()) * sizeof(T));
  if (!a.bytes.empty()) std::memcpy(a.bytes.data(), tensor.data(), a.bytes.size());
  return npy_file(a);
}

template <typename T>
Tensor<T> load_npy(const std::string& path) {
  NpyArray a = read_npy(path);
  if (a.dtype != dtype_of<T>()) {
    fail(path, fmt::format("dtype mismatch: expected {}, file has {}", dtype_name(dtype_of<T>()),
                           dtype_name(a.dtype)));
  }
  std::vector<T> values(a.bytes.size() / sizeof(T));
  // Host is little-endian x86-64/ARM64; memcpy keeps the element bits.
  if (!a.bytes.empty()) std::memcpy(values.data(), a.bytes.data(), a.bytes.size());
  return Tensor<T>(a.shape, std::move(values));
}

template <typename T>
void save_npy(const std::string& path, const Tensor<T>& tensor) {
  write_file(path, npy_file(tensor));
}

template Tensor<int8_t> load_npy<int8_t>(const std::string&);
template Tensor<uint8_t> load_npy<uint8_t>(const std::string&);
template Tensor<int16_t> load_npy<int16_t>(const std::string&);
template Tensor<uint16_t> load_npy<uint16_t>(const std::string&);
template Tensor<int32_t> load_npy<int32_t>(const std::string&);
template std::vector<uint8_t> npy_file<int8_t>(const Tensor<int8_t>&);
template std::vector<uint8_t> npy_file<uint8_t>(const Tensor<uint8_t>&);
template std::vector<uint8_t> npy_file<int16_t>(const Tensor<int16_t>&);
template std::vector<uint8_t> npy_file<uint16_t>(const Tensor<uint16_t>&);
template std::vector<uint8_t> npy_file<int32_t>(const Tensor<int32_t>&);
template void save_npy<int8_t>(const std::string&, const Tensor<int8_t>&);
template void save_npy<uint8_t>(const std::string&, const Tensor<uint8_t>&);
template void save_npy<int16_t>(const std::string&, const Tensor<int16_t>&);
template void save_npy<uint16_t>(const std::string&, const Tensor<uint16_t>&);
template void save_npy<int32_t>(const std::string&, const Tensor<int32_t>&);

}  // namespace strata
