// SPDX-License-Identifier: Apache-2.0
// `strata gen`: random parameters for a network structure and calibrated
// requantisation (see gen.hpp and docs/network-format.md, "Generated
// parameters").
//
// Reproducibility: only std::mt19937_64 (whose output sequence the C++
// standard fixes) is used; the mapping to ranges and the shuffle are written
// here rather than taken from <random>'s distributions, whose results differ
// between standard libraries. Same seed => same bytes on every platform.
#include "strata/gen.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "strata/error.hpp"
#include "strata/file_io.hpp"
#include "strata/golden.hpp"
#include "strata/npy.hpp"
#include "strata/numerics.hpp"

namespace strata {

namespace fs = std::filesystem;

namespace {

// Image generator seed: a fixed offset (2^64 / golden ratio) from the
// parameter seed, so images and parameters are independent streams.
constexpr uint64_t kImageSeedOffset = 0x9E3779B97F4A7C15ull;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxMult = std::numeric_limits<uint16_t>::max();

// Uniform integer in [0, n), n >= 1, by rejection (no modulo bias).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t v = rng();
  while (v >= limit) v = rng();
  return v % n;
}

int64_t uniform_int(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(uniform_below(rng, static_cast<uint64_t>(hi - lo + 1)));
}

// Uniform over [lo, hi] without 0 (the range must hold a non-zero value).
int8_t uniform_nonzero(std::mt19937_64& rng, int lo, int hi) {
  if (lo > 0 || hi < 0) return static_cast<int8_t>(uniform_int(rng, lo, hi));
  int64_t v = uniform_int(rng, lo, hi - 1);  // hi - lo values besides 0
  if (v >= 0) ++v;
  return static_cast<int8_t>(v);
}

void check_options(const GenOptions& o) {
  if (!(o.sparsity >= 0.0 && o.sparsity <= 1.0)) {
    throw Error(fmt::format("sparsity {} must be in 0..1", o.sparsity));
  }
  if (o.weight_min < kInt8Min || o.weight_max > kInt8Max || o.weight_min > o.weight_max) {
    throw Error(fmt::format("weight range [{}, {}] must satisfy -128 <= min <= max <= 127",
                            o.weight_min, o.weight_max));
  }
  if (o.weight_min == 0 && o.weight_max == 0 && o.sparsity < 1.0) {
    throw Error("weight range [0, 0] holds no non-zero weight (use --sparsity 1 for all zeros)");
  }
  if (o.images < 1 || o.images > 1024) {
    throw Error(fmt::format("number of calibration images {} must be in 1..1024", o.images));
  }
  if (o.target < 1 || o.target > kInt8Max) {
    throw Error(fmt::format("calibration target {} must be in 1..127", o.target));
  }
}

// Random weights (exactly round(sparsity * count) zeros) and biases.
void fill_layer(Layer& l, const GenOptions& o, std::mt19937_64& rng, const std::string& file) {
  const int64_t cout = l.out_channels;
  const int64_t k2 = int64_t{l.conv.kernel} * l.conv.kernel;
  const int64_t fan_in = l.type == LayerType::kConv        ? l.in_shape[0] / l.groups * k2
                         : l.type == LayerType::kDepthwise ? k2
                                                           : shape_elements(l.in_shape);
  Shape wshape = l.type == LayerType::kConv
                     ? Shape{cout, l.in_shape[0] / l.groups, l.conv.kernel, l.conv.kernel}
                 : l.type == LayerType::kDepthwise ? Shape{cout, 1, l.conv.kernel, l.conv.kernel}
                                                   : Shape{cout, fan_in};
  Tensor<int8_t> w(wshape);
  for (int64_t i = 0; i < w.size(); ++i) w[i] = uniform_nonzero(rng, o.weight_min, o.weight_max);
  // Zero positions: the first `zeros` of a partial Fisher-Yates shuffle.
  const auto zeros = static_cast<int64_t>(std::llround(o.sparsity * static_cast<double>(w.size())));
  std::vector<int64_t> order(static_cast<size_t>(w.size()));
  for (int64_t i = 0; i < w.size(); ++i) order[i] = i;
  for (int64_t i = 0; i < zeros; ++i) {
    const int64_t j =
        i + static_cast<int64_t>(uniform_below(rng, static_cast<uint64_t>(w.size() - i)));
    std::swap(order[i], order[j]);
    w[order[i]] = 0;
  }

  // Biases: a fraction of the typical accumulator swing, never more than the
  // headroom the weights leave in int32.
  const int wabs = std::max(std::abs(o.weight_min), std::abs(o.weight_max));
  Tensor<int32_t> bias({cout});
  for (int64_t ch = 0; ch < cout; ++ch) {
    const AccRange r = worst_case_acc(w.data() + ch * fan_in, fan_in, 0);
    const int64_t headroom = std::min(kInt32Max - r.max, r.min + kInt32Max);
    if (headroom < 0) {
      throw Error(fmt::format("output channel {} can overflow the int32 accumulator even with "
                              "zero bias ({} inputs per output); narrow the weight range or raise "
                              "the sparsity",
                              ch, fan_in),
                  ErrorContext{file, l.line, l.name});
    }
    const auto spread = static_cast<int64_t>(std::sqrt(static_cast<double>(fan_in)) * wabs * 32.0);
    const int64_t b = std::min(spread, headroom);
    bias[ch] = static_cast<int32_t>(uniform_int(rng, -b, b));
  }
  l.weights = std::move(w);
  l.bias = std::move(bias);
}

// Multiplier and shift for one channel whose largest |acc| is `a`: the result
// a * M / 2^S is about `target`. Values given inline in the YAML stay fixed.
void calibrate_channel(int64_t a, int target, bool fixed_m, bool fixed_s, uint16_t& m, uint8_t& s) {
  a = std::max<int64_t>(a, 1);
  const auto mult_for = [&](int shift) {  // round(target * 2^shift / a)
    return ((int64_t{target} << shift) + a / 2) / a;
  };
  if (fixed_m && fixed_s) return;
  if (fixed_s) {
    m = static_cast<uint16_t>(std::min(kMaxMult, mult_for(s)));
    return;
  }
  if (fixed_m) {
    // The shift that brings a * m / 2^S closest to the target.
    int best = 0;
    double best_err = std::numeric_limits<double>::infinity();
    for (int sh = 0; sh <= kMaxShift; ++sh) {
      const double err = std::abs(std::ldexp(static_cast<double>(a) * m, -sh) - target);
      if (err < best_err) {
        best_err = err;
        best = sh;
      }
    }
    s = static_cast<uint8_t>(best);
    return;
  }
  // Largest shift whose multiplier still fits 16 bits: the most precise M.
  for (int sh = kMaxShift; sh >= 0; --sh) {
    if (mult_for(sh) <= kMaxMult) {
      m = static_cast<uint16_t>(mult_for(sh));
      s = static_cast<uint8_t>(sh);
      return;
    }
  }
}

void calibrate_layer(Layer& l, const std::vector<Tensor<int32_t>>& accs, int target,
                     LayerCalibration& cal) {
  const int64_t cout = l.out_channels;
  cal.acc_max_abs.assign(static_cast<size_t>(cout), 0);
  for (const Tensor<int32_t>& acc : accs) {
    const int64_t plane = acc.dim(1) * acc.dim(2);
    for (int64_t i = 0; i < acc.size(); ++i) {
      int64_t& mx = cal.acc_max_abs[static_cast<size_t>(i / plane)];
      mx = std::max(mx, std::abs(int64_t{acc[i]}));
    }
  }
  // Values inline in the YAML were filled in by the reader; keep those.
  const bool fixed_m = l.files.multiplier.empty();
  const bool fixed_s = l.files.shift.empty();
  l.requant.multiplier.resize(static_cast<size_t>(cout));
  l.requant.shift.resize(static_cast<size_t>(cout));
  for (int64_t ch = 0; ch < cout; ++ch) {
    calibrate_channel(cal.acc_max_abs[ch], target, fixed_m, fixed_s, l.requant.multiplier[ch],
                      l.requant.shift[ch]);
  }
}

// An add's Ma, Mb and S per channel: a * Ma + b * Mb scaled so that the
// largest |a| + |b| seen maps to about `target`, Ma = Mb (values given inline
// in the YAML stay fixed).
void calibrate_add(Layer& l, const std::vector<Tensor<int8_t>>& a,
                   const std::vector<Tensor<int8_t>>& b, int target, LayerCalibration& cal) {
  const auto c = static_cast<size_t>(l.out_channels);
  cal.acc_max_abs.assign(c, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t plane = a[i].dim(1) * a[i].dim(2);
    std::vector<int64_t> ma(c, 0), mb(c, 0);
    for (int64_t e = 0; e < a[i].size(); ++e) {
      const auto ch = static_cast<size_t>(e / plane);
      ma[ch] = std::max<int64_t>(ma[ch], std::abs(int{a[i][e]}));
      mb[ch] = std::max<int64_t>(mb[ch], std::abs(int{b[i][e]}));
    }
    for (size_t ch = 0; ch < c; ++ch) {
      cal.acc_max_abs[ch] = std::max(cal.acc_max_abs[ch], ma[ch] + mb[ch]);
    }
  }
  const bool fixed_a = l.files.multiplier.empty();
  const bool fixed_b = l.files.multiplier_b.empty();
  const bool fixed_s = l.files.shift.empty();
  l.requant.multiplier.resize(c);
  l.multiplier_b.resize(c);
  l.requant.shift.resize(c);
  for (size_t ch = 0; ch < c; ++ch) {
    // With one multiplier given, the other follows it; with both, only S is chosen.
    uint16_t m = fixed_a ? l.requant.multiplier[ch] : fixed_b ? l.multiplier_b[ch] : 0;
    calibrate_channel(cal.acc_max_abs[ch], target, fixed_a || fixed_b, fixed_s, m,
                      l.requant.shift[ch]);
    if (!fixed_a) l.requant.multiplier[ch] = m;
    if (!fixed_b) l.multiplier_b[ch] = m;
  }
}

// A lookup-table activation for a layer that names a table file: half the
// time a leaky ReLU with slope k/16 (k in 0..8; a real activation's shape),
// otherwise 256 uniform random entries (every table value and index reachable).
void fill_table(Layer& l, std::mt19937_64& rng) {
  if (l.files.table.empty()) return;
  l.requant.table.assign(kActTableSize, 0);
  const bool leaky = uniform_int(rng, 0, 1) == 0;
  const int64_t k = uniform_int(rng, 0, 8);
  for (int i = 0; i < kActTableSize; ++i) {
    const int v = i + kInt8Min;
    int64_t y = v;
    if (leaky && v < 0) y = static_cast<int64_t>(rshift_round(int64_t{v} * k, 4));
    if (!leaky) y = uniform_int(rng, kInt8Min, kInt8Max);
    l.requant.table[static_cast<size_t>(i)] = static_cast<int8_t>(y);
  }
}

void record_outputs(const std::vector<Tensor<int8_t>>& outs, LayerCalibration& cal) {
  int64_t total = 0, zeros = 0, limits = 0;
  cal.out_min = kInt8Max;
  cal.out_max = kInt8Min;
  for (const Tensor<int8_t>& t : outs) {
    for (int8_t v : t.values()) {
      cal.out_min = std::min<int>(cal.out_min, v);
      cal.out_max = std::max<int>(cal.out_max, v);
      zeros += v == 0;
      limits += v == kInt8Min || v == kInt8Max;
      ++total;
    }
  }
  cal.zero_fraction = total ? static_cast<double>(zeros) / static_cast<double>(total) : 0.0;
  cal.limit_fraction = total ? static_cast<double>(limits) / static_cast<double>(total) : 0.0;
}

template <typename T>
void add_param(OutputFiles& out, const fs::path& dir, const std::string& rel, const Tensor<T>& t,
               std::vector<std::string>& written) {
  out.add((dir / rel).string(), npy_file(t));
  written.push_back(rel);
}

}  // namespace

Tensor<int8_t> random_images(const Shape& input_shape, int count, uint64_t seed) {
  std::mt19937_64 rng(seed + kImageSeedOffset);
  Shape shape{count};
  shape.insert(shape.end(), input_shape.begin(), input_shape.end());
  Tensor<int8_t> images(shape);
  for (int64_t i = 0; i < images.size(); ++i) {
    images[i] = static_cast<int8_t>(uniform_int(rng, kInt8Min, kInt8Max));
  }
  return images;
}

std::vector<LayerCalibration> generate_parameters(Network& net, const GenOptions& options,
                                                  const Tensor<int8_t>& images) {
  check_options(options);
  Shape expected{images.rank() == 4 ? images.dim(0) : 0};
  expected.insert(expected.end(), net.input_shape.begin(), net.input_shape.end());
  if (images.shape() != expected || expected[0] < 1) {
    throw Error(
        fmt::format("calibration images must be [N, {}]", fmt::join(net.input_shape, ", ")));
  }
  std::mt19937_64 rng(options.seed);
  const int64_t n = images.dim(0);
  const int64_t image_size = shape_elements(net.input_shape);
  std::vector<Tensor<int8_t>> input;
  for (int64_t i = 0; i < n; ++i) {
    const auto first = images.values().begin() + i * image_size;
    input.emplace_back(net.input_shape, std::vector<int8_t>(first, first + image_size));
  }
  // Each layer's outputs over the images, dropped after their last reader.
  std::vector<std::vector<Tensor<int8_t>>> outs(net.layers.size());
  std::vector<size_t> last_reader(net.layers.size(), 0);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    for (int k : net.layers[i].inputs) {
      if (k != kNetworkInput) last_reader[static_cast<size_t>(k)] = i;
    }
  }
  const auto operand = [&](int k) -> const std::vector<Tensor<int8_t>>& {
    return k == kNetworkInput ? input : outs[static_cast<size_t>(k)];
  };

  std::vector<LayerCalibration> report;
  for (size_t li = 0; li < net.layers.size(); ++li) {
    Layer& l = net.layers[li];
    LayerCalibration cal;
    cal.layer = l.name;
    const std::vector<Tensor<int8_t>>& acts = operand(l.inputs[0]);
    std::vector<Tensor<int8_t>>& out = outs[li];
    if (l.has_weights()) {
      fill_layer(l, options, rng, net.source_file);
      std::vector<Tensor<int32_t>> accs;
      for (const Tensor<int8_t>& a : acts) accs.push_back(layer_accumulators(l, a));
      calibrate_layer(l, accs, options.target, cal);
      fill_table(l, rng);
      for (const Tensor<int32_t>& acc : accs) out.push_back(requantize(acc, l.requant));
    } else if (l.type == LayerType::kAdd) {
      const std::vector<Tensor<int8_t>>& b = operand(l.inputs[1]);
      calibrate_add(l, acts, b, options.target, cal);
      fill_table(l, rng);
      for (size_t i = 0; i < acts.size(); ++i) out.push_back(run_layer(l, {acts[i], b[i]}));
    } else if (l.type == LayerType::kMul) {
      // Calibrated as a convolution's accumulators: the products x * s.
      const std::vector<Tensor<int8_t>>& s = operand(l.inputs[1]);
      std::vector<Tensor<int32_t>> accs;
      for (size_t i = 0; i < acts.size(); ++i) accs.push_back(channel_mul_acc(acts[i], s[i]));
      calibrate_layer(l, accs, options.target, cal);
      fill_table(l, rng);
      for (const Tensor<int32_t>& acc : accs) out.push_back(requantize(acc, l.requant));
    } else if (l.type == LayerType::kConcat) {
      for (size_t i = 0; i < acts.size(); ++i) {
        std::vector<Tensor<int8_t>> maps;
        for (int k : l.inputs) maps.push_back(operand(k)[i]);
        out.push_back(run_layer(l, maps));
      }
    } else {
      for (const Tensor<int8_t>& a : acts) out.push_back(run_layer(l, a));
    }
    record_outputs(out, cal);
    report.push_back(std::move(cal));
    for (int k : l.inputs) {
      if (k != kNetworkInput && last_reader[static_cast<size_t>(k)] == li) {
        outs[static_cast<size_t>(k)].clear();
      }
    }
  }
  validate_parameters(net);
  return report;
}

GenResult generate_network(const std::string& yaml_path, const std::string& out_dir,
                           const GenOptions& options) {
  check_options(options);
  GenResult result;
  Network net = load_network(yaml_path, LoadOptions{out_dir, false});

  // Every file gets written once: two keys naming one file (or a file named
  // like the generated images) would leave one of them wrong.
  std::map<std::string, std::string> owners = {{"input.npy", "the input image"},
                                               {"images.npy", "the calibration images"}};
  for (const Layer& l : net.layers) {
    if (!l.has_requant()) continue;
    for (const std::string& f : {l.has_weights() ? l.files.weights : std::string(),
                                 l.has_weights() ? l.files.bias : std::string(), l.files.multiplier,
                                 l.files.multiplier_b, l.files.shift, l.files.table}) {
      if (f.empty()) continue;
      const std::string key = fs::path(f).lexically_normal().string();
      const auto [it, fresh] = owners.emplace(key, fmt::format("layer '{}'", l.name));
      if (!fresh) {
        throw Error(fmt::format("file '{}' is also used by {}; strata gen writes each file once", f,
                                it->second),
                    ErrorContext{yaml_path, l.line, l.name});
      }
    }
  }

  result.images = random_images(net.input_shape, options.images, options.seed);
  result.layers = generate_parameters(net, options, result.images);

  // Every file or none (file_io.hpp): a failed write leaves the directory as it was.
  const fs::path dir(out_dir);
  OutputFiles out;
  for (const Layer& l : net.layers) {
    if (!l.has_requant()) continue;
    if (l.has_weights()) {
      add_param(out, dir, l.files.weights, l.weights, result.files);
      add_param(out, dir, l.files.bias, l.bias, result.files);
    }
    const int64_t cout = l.out_channels;
    if (!l.files.multiplier.empty()) {
      add_param(out, dir, l.files.multiplier, Tensor<uint16_t>({cout}, l.requant.multiplier),
                result.files);
    }
    if (!l.files.multiplier_b.empty()) {
      add_param(out, dir, l.files.multiplier_b, Tensor<uint16_t>({cout}, l.multiplier_b),
                result.files);
    }
    if (!l.files.shift.empty()) {
      add_param(out, dir, l.files.shift, Tensor<uint8_t>({cout}, l.requant.shift), result.files);
    }
    if (!l.files.table.empty()) {
      add_param(out, dir, l.files.table, Tensor<int8_t>({kActTableSize}, l.requant.table),
                result.files);
    }
  }
  const int64_t image_size = shape_elements(net.input_shape);
  add_param(out, dir, "input.npy",
            Tensor<int8_t>(net.input_shape,
                           std::vector<int8_t>(result.images.values().begin(),
                                               result.images.values().begin() + image_size)),
            result.files);
  add_param(out, dir, "images.npy", result.images, result.files);
  out.commit();

  // Read everything back through the normal reader: what was written is what
  // `strata run` will see.
  result.network = load_network(yaml_path, LoadOptions{out_dir, true});
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& a = net.layers[i];
    const Layer& b = result.network.layers[i];
    if (a.weights != b.weights || a.bias != b.bias ||
        a.requant.multiplier != b.requant.multiplier || a.requant.shift != b.requant.shift ||
        a.multiplier_b != b.multiplier_b || a.requant.table != b.requant.table) {
      throw Error("parameters read back differ from those written",
                  ErrorContext{out_dir, 0, a.name});
    }
  }
  return result;
}

}  // namespace strata
