// SPDX-License-Identifier: Apache-2.0
// NumPy .npy reading and writing (format versions 1.0, 2.0 and 3.0).
// Supported dtypes: int8, uint8, int16, uint16, int32 (little-endian or
// single-byte), C order. Anything else — Fortran order, big-endian, another
// dtype, a truncated file, a malformed header — throws strata::Error naming
// the file and the problem.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strata/tensor.hpp"

namespace strata {

enum class DType { kInt8, kUInt8, kInt16, kUInt16, kInt32 };

const char* dtype_name(DType t);  // NumPy spelling: "int8", "uint16", ...
size_t dtype_size(DType t);

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::kUInt16;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}

// An array as stored: dtype, shape and raw little-endian element bytes.
struct NpyArray {
  DType dtype = DType::kInt8;
  Shape shape;
  std::vector<uint8_t> bytes;
};

NpyArray read_npy(const std::string& path);
// The same from the bytes of a file already in memory; `name` is used in errors.
NpyArray parse_npy(std::span<const uint8_t> file, const std::string& name);
// Written completely or not at all (file_io.hpp); errors name the path and the reason.
void write_npy(const std::string& path, const NpyArray& array);
// The bytes of the .npy file of `array` (version 1.0 header, 64-byte aligned data).
std::vector<uint8_t> npy_file(const NpyArray& array);

// Typed load: the file's dtype must be exactly T (otherwise strata::Error
// "dtype mismatch: expected int8, file has int32").
template <typename T>
Tensor<T> load_npy(const std::string& path);
template <typename T>
void save_npy(const std::string& path, const Tensor<T>& tensor);
// The bytes of the .npy file of `tensor`, for an OutputFiles (file_io.hpp).
template <typename T>
std::vector<uint8_t> npy_file(const Tensor<T>& tensor);

}  // namespace strata
