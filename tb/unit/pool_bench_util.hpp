// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the window-generator and pooling benches (port bit fields
// come from tb/common/port_fields.hpp): stream sources and sinks that obey the AXI
// handshake rules while inserting random gaps and back-pressure, and the C++
// reference window extraction (built on strata::pool_out_size).
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "port_fields.hpp"
#include "sim_fixture.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {

inline int8_t get_i8(uint64_t raw) { return static_cast<int8_t>(static_cast<uint8_t>(raw)); }

// Fills a port of any width with random bits (payload driven while valid is low).
template <typename Port>
void randomize(Port& port, unsigned width, std::mt19937_64& rng) {
  for (unsigned lsb = 0; lsb < width; lsb += 32) {
    set_field(port, lsb, std::min(32u, width - lsb), rng());
  }
}

// ---------------------------------------------------------------------------
// Streams.

// Holds the items of one valid/ready input. valid rises after a random gap and
// then stays high, with the payload unchanged, until the handshake.
template <typename Item>
class StreamSource {
 public:
  explicit StreamSource(double gap_probability = 0.0) : throttle_(gap_probability) {}
  void push(Item item) { queue_.push_back(std::move(item)); }
  // Drive point: whether valid is high this cycle (the payload is front()).
  bool drive(std::mt19937_64& rng) {
    if (!valid_ && !queue_.empty() && !throttle_.stall(rng)) valid_ = true;
    return valid_;
  }
  const Item& front() const { return queue_.front(); }
  // After the sample point: `fired` is valid && ready of this cycle.
  void handshake(bool fired) {
    if (fired) {
      queue_.pop_front();
      valid_ = false;
    }
  }
  bool empty() const { return queue_.empty(); }
  size_t pending() const { return queue_.size(); }

 private:
  Throttle throttle_;
  std::deque<Item> queue_;
  bool valid_ = false;
};

// Output back-pressure: ready is low with the given probability each cycle.
class StreamSink {
 public:
  explicit StreamSink(double stall_probability = 0.0) : throttle_(stall_probability) {}
  bool ready(std::mt19937_64& rng) { return !throttle_.stall(rng); }

 private:
  Throttle throttle_;
};

// ---------------------------------------------------------------------------
// Reference windows.

struct WindowGeometry {
  int height = 1;
  int width = 1;
  int kernel = 1;
  int stride = 1;
  int pad = 0;  // on every side, unless given per side below
  bool ceil_mode = false;
  int pad_top = -1, pad_left = -1, pad_bottom = -1, pad_right = -1;  // -1: pad

  Pads pads() const {
    const auto side = [&](int p) { return p < 0 ? pad : p; };
    return Pads{side(pad_top), side(pad_left), side(pad_bottom), side(pad_right)};
  }
  PoolWindow pool() const { return PoolWindow{kernel, stride, pads(), ceil_mode}; }
  int out_height() const {
    return pool_out_size(height, kernel, stride, pads().top, pads().bottom, ceil_mode);
  }
  int out_width() const {
    return pool_out_size(width, kernel, stride, pads().left, pads().right, ceil_mode);
  }
  std::string str() const {
    const Pads q = pads();
    return fmt::format("{}x{} k{} s{} p{},{},{},{} {}", height, width, kernel, stride, q.top,
                       q.left, q.bottom, q.right, ceil_mode ? "ceil" : "floor");
  }
};

// One window as the window generator must present it: taps in a max_kernel x
// max_kernel grid, padded or unused taps zero with mask bit 0.
struct RefWindow {
  int oy = 0, ox = 0;
  bool first = false, last = false;
  uint64_t mask = 0;  // bit ky * max_kernel + kx
  int count = 0;      // valid taps
  int ky_lo = 0, ky_hi = 0, kx_lo = 0, kx_hi = 0;
  std::vector<int8_t> taps;  // [ky][kx][lane], max_kernel^2 * lanes
};

// image is [lanes][H][W]; the window order is row-major over (oy, ox).
inline std::vector<RefWindow> reference_windows(const Tensor<int8_t>& image,
                                                const WindowGeometry& g, int max_kernel) {
  const int lanes = static_cast<int>(image.dim(0));
  const int ho = g.out_height(), wo = g.out_width();
  std::vector<RefWindow> out;
  out.reserve(static_cast<size_t>(ho) * wo);
  for (int oy = 0; oy < ho; ++oy) {
    for (int ox = 0; ox < wo; ++ox) {
      RefWindow w;
      w.oy = oy;
      w.ox = ox;
      w.first = oy == 0 && ox == 0;
      w.last = oy == ho - 1 && ox == wo - 1;
      w.taps.assign(static_cast<size_t>(max_kernel) * max_kernel * lanes, 0);
      w.ky_lo = w.kx_lo = max_kernel;
      w.ky_hi = w.kx_hi = -1;
      for (int ky = 0; ky < g.kernel; ++ky) {
        const int iy = oy * g.stride - g.pads().top + ky;
        if (iy < 0 || iy >= g.height) continue;
        for (int kx = 0; kx < g.kernel; ++kx) {
          const int ix = ox * g.stride - g.pads().left + kx;
          if (ix < 0 || ix >= g.width) continue;
          const int t = ky * max_kernel + kx;
          w.mask |= uint64_t{1} << t;
          ++w.count;
          w.ky_lo = std::min(w.ky_lo, ky);
          w.ky_hi = std::max(w.ky_hi, ky);
          w.kx_lo = std::min(w.kx_lo, kx);
          w.kx_hi = std::max(w.kx_hi, kx);
          for (int l = 0; l < lanes; ++l) {
            w.taps[static_cast<size_t>(t) * lanes + l] = image(l, iy, ix);
          }
        }
      }
      out.push_back(std::move(w));
    }
  }
  return out;
}

inline Tensor<int8_t> random_image(int lanes, int height, int width, std::mt19937_64& rng) {
  Tensor<int8_t> t({lanes, height, width});
  std::uniform_int_distribution<int> d(kInt8Min, kInt8Max);
  for (auto& v : t.values()) v = static_cast<int8_t>(d(rng));
  return t;
}

// Pixel vector (x, y) of a [lanes][H][W] image packed as the RTL stream word.
inline uint64_t pack_pixel(const Tensor<int8_t>& image, int y, int x, int data_width = 8) {
  uint64_t v = 0;
  for (int64_t l = 0; l < image.dim(0); ++l) {
    v |= uint64_t{static_cast<uint8_t>(image(l, y, x))} << (l * data_width);
  }
  return v;
}

// Upper bound on the cycles strata_window_gen needs for one frame with no
// stalls, from its configuration handshake to its last window (see
// docs/rtl-blocks.md). One column is shifted per cycle; an output row takes
// (k - pl) shifts to its first window and min(s, k) per further window. Either
// the row walks are the limit (the first starts when input row k - 1 - pt
// arrives and they run back to back) or the input is (one pixel per cycle;
// the output rows whose lowest image row is the last one walk after it).
// Plus 10 cycles: 3 setup cycles, the first pixel's handshake and the 6
// cycles of latency from a pixel to the window that needs it.
inline uint64_t window_gen_cycle_bound(const WindowGeometry& g) {
  const int ho = g.out_height(), wo = g.out_width();
  const Pads q = g.pads();
  const uint64_t row_walk =
      uint64_t(g.kernel - q.left) + uint64_t(wo - 1) * uint64_t(std::min(g.stride, g.kernel));
  uint64_t tail_rows = 0;
  for (int oy = 0; oy < ho; ++oy) {
    if (oy * g.stride - q.top + g.kernel - 1 >= g.height - 1) ++tail_rows;
  }
  const uint64_t pixels = uint64_t(g.height) * uint64_t(g.width);
  const uint64_t fill = uint64_t(std::min(g.kernel - 1 - q.top, g.height - 1)) * uint64_t(g.width);
  return std::max(pixels + tail_rows * row_walk, fill + uint64_t(ho) * row_walk) + 10;
}

// Legal geometry for the window generator / pooling: every pad < k, k <=
// padded input.
inline bool legal(const WindowGeometry& g) {
  const Pads q = g.pads();
  const auto pad_ok = [&](int p) { return p >= 0 && p < g.kernel; };
  return g.height >= 1 && g.width >= 1 && g.kernel >= 1 && g.stride >= 1 && pad_ok(q.top) &&
         pad_ok(q.left) && pad_ok(q.bottom) && pad_ok(q.right) &&
         g.kernel <= g.height + q.top + q.bottom && g.kernel <= g.width + q.left + q.right;
}

}  // namespace strata::tb
