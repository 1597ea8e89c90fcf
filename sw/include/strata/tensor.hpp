// SPDX-License-Identifier: Apache-2.0
// strata::Tensor<T>: a dense, C-contiguous (row-major) n-dimensional array.
// Activations are [C][H][W] (or [N][C][H][W]); conv weights [Cout][Cin][K][K].
// Element access with operator()(i, j, ...) checks the rank and, in debug
// builds, the bounds; values() gives a std::span over all elements.
#pragma once

#include <cassert>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

namespace strata {

using Shape = std::vector<int64_t>;

inline int64_t shape_elements(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

template <typename T>
class Tensor {
 public:
  using value_type = T;

  Tensor() = default;
  explicit Tensor(Shape shape, T fill = T{})
      : shape_(std::move(shape)), data_(checked_size(shape_), fill) {}
  Tensor(Shape shape, std::vector<T> data) : shape_(std::move(shape)), data_(std::move(data)) {
    if (static_cast<int64_t>(data_.size()) != checked_size(shape_)) {
      throw std::invalid_argument("Tensor: data size does not match shape");
    }
  }

  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t dim(size_t i) const { return shape_.at(i); }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  bool empty() const { return data_.empty(); }

  std::span<T> values() { return data_; }
  std::span<const T> values() const { return data_; }
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  T& operator[](int64_t i) { return data_[static_cast<size_t>(i)]; }
  const T& operator[](int64_t i) const { return data_[static_cast<size_t>(i)]; }

  // Row-major offset of an index tuple; the number of indices must equal rank().
  template <typename... Idx>
  int64_t offset(Idx... idx) const {
    assert(sizeof...(Idx) == shape_.size());
    const int64_t ids[] = {static_cast<int64_t>(idx)...};
    int64_t off = 0;
    for (size_t d = 0; d < sizeof...(Idx); ++d) {
      assert(ids[d] >= 0 && ids[d] < shape_[d]);
      off = off * shape_[d] + ids[d];
    }
    return off;
  }
  template <typename... Idx>
  T& operator()(Idx... idx) {
    return data_[static_cast<size_t>(offset(idx...))];
  }
  template <typename... Idx>
  const T& operator()(Idx... idx) const {
    return data_[static_cast<size_t>(offset(idx...))];
  }

  // Same elements, another shape with the same element count (e.g. flatten).
  Tensor reshaped(Shape shape) const { return Tensor(std::move(shape), data_); }

  bool operator==(const Tensor& other) const = default;

 private:
  static int64_t checked_size(const Shape& shape) {
    for (int64_t d : shape) {
      if (d < 0) throw std::invalid_argument("Tensor: negative dimension");
    }
    return shape_elements(shape);
  }

  Shape shape_;
  std::vector<T> data_;
};

}  // namespace strata
