// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: compile, then run on the ISA simulator, against the
// golden model. The input bytes are decoded (FuzzedDataProvider) into a small
// network description of every layer type the format has (conv, fc, maxpool,
// avgpool, relu, clamp, flatten) with fuzzed kernel, stride, pad, ceil mode,
// activation and inline requantisation, plus a batch size, an input-reordering
// choice and a seed. The network is read with strata::load_network, its
// parameters come from strata::generate_parameters (that seed), it is compiled
// for the default target and run on strata::IsaSim with seeded noise in the
// on-chip memories, and every output element of every image is compared with
// strata::run_network.
// Clean refusals (a strata::Error from the reader, the parameter generator or
// the compiler) are fine. A finding (abort, so libFuzzer keeps the input):
// a crash or sanitizer report, any other exception, a simulator error,
// deadlock, race or unbalanced dependency edge on a program the compiler
// accepted, an accumulator that wrapped, or an output that differs.
// STRATA_FUZZ_VERBOSE=1 prints each decoded network (to turn a reproducer into
// YAML). Networks above kMaxMacs are skipped so that each input stays fast.
// Seeds: tests/fuzz/compile_run/. Run: `make fuzz` (docs/regression.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

// MACs of all images of one input: keeps an input under about 0.1 s.
constexpr int64_t kMaxMacs = 500'000;
constexpr int kMaxLayers = 7;

struct Case {
  std::string yaml;
  uint64_t seed = 1;
  int batch = 1;
  Reorder reorder = Reorder::kAuto;
};

std::string activation(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0:
      return "none";
    case 1:
      return "relu";
    default: {
      const int a = in.ConsumeIntegral<int8_t>(), b = in.ConsumeIntegral<int8_t>();
      return fmt::format("{{clamp: [{}, {}]}}", std::min(a, b), std::max(a, b));
    }
  }
}

// ", requant: {...}" with inline values, or "" (then generate_parameters calibrates).
std::string requant(FuzzedDataProvider& in) {
  if (!in.ConsumeBool()) return "";
  const int m = in.ConsumeIntegral<uint16_t>();
  const int s = in.ConsumeIntegralInRange(0, kMaxShift);
  return fmt::format(", requant: {{multiplier: {}, shift: {}}}", m, s);
}

// A window of side 1..max_k over an h x w map with a pad that lets it fit
// (0..k-1, at least what the smaller side needs), so the reader accepts it and
// the compiler's own limits are what gets explored.
struct Window {
  int k = 1, pad = 0;
};
Window window(FuzzedDataProvider& in, int max_k, int64_t h, int64_t w) {
  Window win;
  win.k = in.ConsumeIntegralInRange(1, max_k);
  const int64_t side = std::min(h, w);
  const int least = side >= win.k ? 0 : static_cast<int>((win.k - side + 1) / 2);
  win.pad = in.ConsumeIntegralInRange(least, win.k - 1);
  return win;
}

Case decode(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Case c;
  c.seed = in.ConsumeIntegral<uint32_t>();
  c.batch = in.ConsumeIntegralInRange(1, HwTarget::defaults().pes);
  c.reorder = static_cast<Reorder>(in.ConsumeIntegralInRange(0, 2));
  int64_t ch = in.ConsumeIntegralInRange(1, 24);
  int64_t h = in.ConsumeIntegralInRange(1, 40);
  int64_t w = in.ConsumeIntegralInRange(1, 72);
  c.yaml = fmt::format("name: fuzz\ninput: [{}, {}, {}]\nlayers:\n", ch, h, w);
  const int layers = in.ConsumeIntegralInRange(1, kMaxLayers);
  for (int i = 0; i < layers; ++i) {
    const std::string name = fmt::format("l{}", i);
    const int kind = in.ConsumeIntegralInRange(0, 7);
    switch (kind) {
      case 0:
      case 1: {  // conv
        const int oc = in.ConsumeIntegralInRange(1, 40);
        const Window win = window(in, 8, h, w);
        const int s = in.ConsumeIntegralInRange(1, 4);
        const std::string act = activation(in);
        c.yaml += fmt::format(
            "  - {{name: {}, type: conv, out_channels: {}, kernel: {}, stride: {}, pad: {}, "
            "activation: {}{}}}\n",
            name, oc, win.k, s, win.pad, act, requant(in));
        ch = oc;
        h = (h + 2 * win.pad - win.k) / s + 1;
        w = (w + 2 * win.pad - win.k) / s + 1;
        break;
      }
      case 2: {  // fc
        const int features = in.ConsumeIntegralInRange(1, 64);
        const std::string act = activation(in);
        c.yaml += fmt::format("  - {{name: {}, type: fc, out_features: {}, activation: {}{}}}\n",
                              name, features, act, requant(in));
        ch = features;
        h = w = 1;
        break;
      }
      case 3:
      case 4: {  // maxpool, avgpool
        const Window win = window(in, 4, h, w);
        PoolGeometry g{win.k, win.k, win.pad, false};
        std::string keys = fmt::format("kernel: {}, pad: {}", win.k, win.pad);
        if (in.ConsumeBool()) {
          g.stride = in.ConsumeIntegralInRange(1, 4);
          keys += fmt::format(", stride: {}", g.stride);
        }
        if (in.ConsumeBool()) {
          g.ceil_mode = true;
          keys += ", ceil_mode: true";
        }
        c.yaml += fmt::format("  - {{name: {}, type: {}, {}}}\n", name,
                              kind == 3 ? "maxpool" : "avgpool", keys);
        h = pool_out_size(static_cast<int>(h), g);
        w = pool_out_size(static_cast<int>(w), g);
        break;
      }
      case 5:
        c.yaml += fmt::format("  - {{name: {}, type: relu}}\n", name);
        break;
      case 6: {
        const int a = in.ConsumeIntegral<int8_t>(), b = in.ConsumeIntegral<int8_t>();
        c.yaml += fmt::format("  - {{name: {}, type: clamp, lo: {}, hi: {}}}\n", name,
                              std::min(a, b), std::max(a, b));
        break;
      }
      default:
        c.yaml += fmt::format("  - {{name: {}, type: flatten}}\n", name);
        ch *= h * w;
        h = w = 1;
        break;
    }
  }
  return c;
}

const char* reorder_name(Reorder r) {
  switch (r) {
    case Reorder::kAuto:
      return "auto";
    case Reorder::kNever:
      return "never";
    case Reorder::kAlways:
      return "always";
  }
  return "?";
}

std::vector<Tensor<int8_t>> split(const Tensor<int8_t>& batch) {
  std::vector<Tensor<int8_t>> images;
  const int64_t per = batch.size() / batch.dim(0);
  for (int64_t i = 0; i < batch.dim(0); ++i) {
    const int8_t* first = batch.data() + i * per;
    images.emplace_back(Shape(batch.shape().begin() + 1, batch.shape().end()),
                        std::vector<int8_t>(first, first + per));
  }
  return images;
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  static fuzz::MemFile file("fuzz.yaml");
  static const HwTarget target = HwTarget::defaults();
  const Case c = decode(data, size);
  const std::string where = fmt::format("seed {}, batch {}, reorder {}, network:\n{}", c.seed,
                                        c.batch, reorder_name(c.reorder), c.yaml);
  if (fuzz::verbose()) std::fprintf(stderr, "%s", where.c_str());

  Network net;
  try {
    net = load_network(file.write(c.yaml), LoadOptions{"", false});
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "reader refused: %s\n", e.what());
    return 0;
  }
  if (net.macs() * c.batch > kMaxMacs) {
    if (fuzz::verbose()) {
      std::fprintf(stderr, "skipped: %lld MACs\n", static_cast<long long>(net.macs() * c.batch));
    }
    return 0;
  }
  try {
    GenOptions go;
    go.seed = c.seed;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, go.images, c.seed));
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "parameters refused: %s\n", e.what());
    return 0;
  }
  Program prog;
  try {
    CompileOptions o;
    o.batch = c.batch;
    o.reorder = c.reorder;
    prog = compile(net, target, o);
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "compiler refused: %s\n", e.what());
    return 0;
  }

  const std::vector<Tensor<int8_t>> images =
      split(random_images(net.input_shape, c.batch, c.seed + 1));
  std::vector<uint8_t> memory = prog.image;
  for (int i = 0; i < c.batch; ++i) write_input(prog, memory, i, images[static_cast<size_t>(i)]);
  SimOptions so;
  so.onchip_seed = c.seed | 1;  // the results may not depend on what the memories held
  const SimResult r = IsaSim(target).run(memory, so);
  if (!r.ok() || !r.completion.clean() || !r.fine.clean() || !r.completion.balanced()) {
    fuzz::finding(fmt::format("ISA simulation of a compiled program failed: {}\n{}",
                              describe_problems(r), where));
  }
  if (r.acc_wraps != 0) {
    fuzz::finding(fmt::format("{} accumulations wrapped\n{}", r.acc_wraps, where));
  }
  for (int i = 0; i < c.batch; ++i) {
    const Tensor<int8_t> got = read_output(prog, memory, i);
    const Tensor<int8_t> want = run_network(net, images[static_cast<size_t>(i)]);
    if (got.shape() != want.shape()) {
      fuzz::finding(fmt::format("image {}: output shape [{}], golden model [{}]\n{}", i,
                                fmt::join(got.shape(), ", "), fmt::join(want.shape(), ", "),
                                where));
    }
    int64_t wrong = 0, first = -1;
    for (int64_t k = 0; k < want.size(); ++k) {
      if (got[k] != want[k] && wrong++ == 0) first = k;
    }
    if (wrong != 0) {
      const Shape& s = want.shape();
      const int64_t plane = s[1] * s[2];
      fuzz::finding(fmt::format(
          "image {}: {} of {} elements differ from the golden model; first at channel {}, row {}, "
          "column {} (index {}): expected {}, got {}\n{}",
          i, wrong, want.size(), first / plane, (first % plane) / s[2], first % s[2], first,
          want[first], got[first], where));
    }
  }
  return 0;
}
