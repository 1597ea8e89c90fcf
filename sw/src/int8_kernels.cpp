// SPDX-License-Identifier: Apache-2.0
// Fast exact kernels of the golden model; see int8_kernels.hpp.
// Compiled with -fwrapv (sw/CMakeLists.txt): the int32 sums below wrap as the
// contract's accumulator does instead of being undefined on overflow.
#include "int8_kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace strata::kernels {

namespace {

// Four rows against one column: the column's values are loaded once for four
// sums. Each loop is a widening multiply-accumulate the compiler turns into
// pmaddwd / vpmaddwd (or vpdpwssd) over the depth.
inline void dot4(const int16_t* a0, const int16_t* a1, const int16_t* a2, const int16_t* a3,
                 const int16_t* b, int64_t depth, int32_t* s) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int64_t k = 0; k < depth; ++k) {
    const int32_t x = b[k];
    s0 += a0[k] * x;
    s1 += a1[k] * x;
    s2 += a2[k] * x;
    s3 += a3[k] * x;
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}

inline int32_t dot1(const int16_t* a, const int16_t* b, int64_t depth) {
  int32_t s = 0;
  for (int64_t k = 0; k < depth; ++k) s += a[k] * int32_t{b[k]};
  return s;
}

}  // namespace

// One copy per instruction set, chosen when the program starts (GCC function
// multi-versioning), so the binary runs on any x86-64 and uses AVX2 or
// AVX-512 where the machine has them.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define STRATA_KERNEL_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define STRATA_KERNEL_CLONES
#endif

STRATA_KERNEL_CLONES
void dot_block(const int16_t* a, int64_t a_stride, int64_t rows, const int16_t* b, int64_t b_stride,
               int64_t cols, int64_t depth, const int32_t* bias, int32_t* out, int64_t out_stride) {
  for (int64_t c = 0; c < cols; ++c) {
    const int16_t* bc = b + c * b_stride;
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      int32_t s[4];
      dot4(a + r * a_stride, a + (r + 1) * a_stride, a + (r + 2) * a_stride, a + (r + 3) * a_stride,
           bc, depth, s);
      for (int i = 0; i < 4; ++i) out[(r + i) * out_stride + c] = bias[r + i] + s[i];
    }
    for (; r < rows; ++r) out[r * out_stride + c] = bias[r] + dot1(a + r * a_stride, bc, depth);
  }
}

namespace {

constexpr int64_t kPatchPixels = 64;  // output pixels gathered per task (gather_patches)
constexpr int64_t kRowChunk = 64;     // filters per task
constexpr int64_t kDepthAlign = 32;   // dot lengths padded with zeros to whole vectors

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// One channel of a depthwise layer: out[y][x] = bias + sum over the taps
// inside the image of w[ky][kx] * in[y * stride - pad_top + ky][x * stride - pad_left + kx].
// Row by row, so an output row stays in the first-level cache for all its taps.
void depthwise_channel(const ConvShape& s, const int8_t* in, const int8_t* w, int32_t bias,
                       int32_t* out) {
  // Columns whose tap kx lies inside the image: 0 <= x * stride - pad_left + kx < w.
  std::vector<int64_t> first(static_cast<size_t>(s.kernel)), end(static_cast<size_t>(s.kernel));
  for (int64_t kx = 0; kx < s.kernel; ++kx) {
    const int64_t last_in = s.w - 1 + s.pad_left - kx;
    first[kx] = std::max<int64_t>(0, (s.pad_left - kx + s.stride - 1) / s.stride);
    end[kx] = last_in < 0 ? 0 : std::min<int64_t>(s.wo, last_in / s.stride + 1);
  }
  for (int64_t y = 0; y < s.ho; ++y) {
    int32_t* o = out + y * s.wo;
    std::fill(o, o + s.wo, bias);
    for (int64_t ky = 0; ky < s.kernel; ++ky) {
      const int64_t iy = y * s.stride - s.pad_top + ky;
      if (iy < 0 || iy >= s.h) continue;
      const int8_t* row = in + iy * s.w;
      for (int64_t kx = 0; kx < s.kernel; ++kx) {
        const int32_t wv = w[ky * s.kernel + kx];
        const int64_t shift = kx - s.pad_left;
        if (s.stride == 1) {
          for (int64_t x = first[kx]; x < end[kx]; ++x) o[x] += wv * int32_t{row[x + shift]};
        } else {
          for (int64_t x = first[kx]; x < end[kx]; ++x) {
            o[x] += wv * int32_t{row[x * s.stride + shift]};
          }
        }
      }
    }
  }
}

// The patches of output pixels [p0, p0 + count) of channel group `group`: row
// i holds pixel p0 + i's taps in the weights' order (channel, ky, kx), zero
// in the padding and past the depth. The taps of one kernel row inside the
// image are consecutive in both, so they are copied as a run.
void gather_patches(const ConvShape& s, const int8_t* in, int64_t group, int64_t p0, int64_t count,
                    int64_t stride_k, int16_t* patch) {
  const int64_t cin_g = s.cin / s.groups, k = s.kernel;
  std::fill(patch, patch + count * stride_k, int16_t{0});
  if (k == 1 && s.stride == 1 && s.pad_top == 0 && s.pad_left == 0 && s.wo == s.w) {
    // A 1x1 window over every pixel: the patch is the transpose of a
    // [channels][count] block of the input, read a channel row at a time.
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      const int8_t* src = in + (group * cin_g + ci) * s.h * s.w + p0;
      for (int64_t i = 0; i < count; ++i) patch[i * stride_k + ci] = src[i];
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t oy = (p0 + i) / s.wo * s.stride - s.pad_top;
    const int64_t ox = (p0 + i) % s.wo * s.stride - s.pad_left;
    // Kernel rows and columns inside the image.
    const int64_t ky0 = std::max<int64_t>(0, -oy), ky1 = std::min<int64_t>(k, s.h - oy);
    const int64_t kx0 = std::max<int64_t>(0, -ox), kx1 = std::min<int64_t>(k, s.w - ox);
    int16_t* dst = patch + i * stride_k;
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      const int8_t* plane = in + (group * cin_g + ci) * s.h * s.w;
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        const int8_t* row = plane + (oy + ky) * s.w;
        int16_t* d = dst + (ci * k + ky) * k;
        for (int64_t kx = kx0; kx < kx1; ++kx) d[kx] = row[ox + kx];
      }
    }
  }
}

}  // namespace

void conv(const ConvShape& s, const int8_t* in, const int8_t* weights, const int32_t* bias,
          int32_t* out) {
  const int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups;
  const int64_t k2 = s.kernel * s.kernel, plane = s.ho * s.wo;
  if (cin_g == 1 && cout_g == 1) {
    parallel_for(s.cout, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        depthwise_channel(s, in + c * s.h * s.w, weights + c * k2, bias[c], out + c * plane);
      }
    });
    return;
  }
  const int64_t depth = cin_g * k2, stride_k = round_up(depth, kDepthAlign);
  const int64_t pixel_blocks = (plane + kPatchPixels - 1) / kPatchPixels;
  const int64_t row_chunks = (cout_g + kRowChunk - 1) / kRowChunk;
  for (int64_t g = 0; g < s.groups; ++g) {
    // The group's filters as int16 rows, zero past the depth.
    std::vector<int16_t> a(static_cast<size_t>(cout_g * stride_k), 0);
    for (int64_t r = 0; r < cout_g; ++r) {
      const int8_t* src = weights + (g * cout_g + r) * depth;
      std::copy(src, src + depth, a.begin() + r * stride_k);
    }
    // Tasks: pixel block major, so a thread's consecutive tasks reuse a patch.
    parallel_for(pixel_blocks * row_chunks, [&](int64_t t0, int64_t t1) {
      std::vector<int16_t> patch(static_cast<size_t>(kPatchPixels * stride_k));
      int64_t gathered = -1;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t block = t / row_chunks, chunk = t % row_chunks;
        const int64_t p0 = block * kPatchPixels, count = std::min(kPatchPixels, plane - p0);
        if (block != gathered) {
          gather_patches(s, in, g, p0, count, stride_k, patch.data());
          gathered = block;
        }
        const int64_t r0 = chunk * kRowChunk, rows = std::min(kRowChunk, cout_g - r0);
        dot_block(a.data() + r0 * stride_k, stride_k, rows, patch.data(), stride_k, count, stride_k,
                  bias + g * cout_g + r0, out + (g * cout_g + r0) * plane + p0, plane);
      }
    });
  }
}

void fc(const int8_t* in, int64_t n_in, const int8_t* weights, int64_t n_out, const int32_t* bias,
        int32_t* out) {
  const int64_t stride_k = round_up(n_in, kDepthAlign);
  std::vector<int16_t> x(static_cast<size_t>(stride_k), 0);
  std::copy(in, in + n_in, x.begin());
  const int64_t chunks = (n_out + kRowChunk - 1) / kRowChunk;
  parallel_for(chunks, [&](int64_t c0, int64_t c1) {
    std::vector<int16_t> a(static_cast<size_t>(kRowChunk * stride_k), 0);
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t r0 = c * kRowChunk, rows = std::min(kRowChunk, n_out - r0);
      for (int64_t r = 0; r < rows; ++r) {
        const int8_t* src = weights + (r0 + r) * n_in;
        std::copy(src, src + n_in, a.begin() + r * stride_k);
      }
      dot_block(a.data(), stride_k, rows, x.data(), stride_k, 1, stride_k, bias + r0, out + r0, 1);
    }
  });
}

int worker_count() {
  static const int count = [] {
    if (const char* env = std::getenv("STRATA_THREADS")) {
      const int v = std::atoi(env);
      if (v >= 1 && v <= 64) return v;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp(hw, 1u, 64u));
  }();
  return count;
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t workers = std::min<int64_t>(worker_count(), n);
  if (workers <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers - 1));
  for (int64_t w = 1; w < workers; ++w) {
    threads.emplace_back(fn, n * w / workers, n * (w + 1) / workers);
  }
  fn(0, n / workers);
  for (std::thread& t : threads) t.join();
}

}  // namespace strata::kernels
