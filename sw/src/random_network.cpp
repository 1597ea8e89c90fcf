// Seeded random network descriptions (random_network.hpp).
#include "strata/random_network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/numerics.hpp"

namespace strata {

namespace {

// Words of 8 lanes: the unit of the cost budget (the default target's N).
constexpr int64_t kBudgetLanes = 8;
// Largest fan-in (conv or fc inputs per output) drawn: the int32 accumulator
// holds 2^31 / 128^2 = 131072 worst-case products; staying below keeps every
// drawn network valid.
constexpr int64_t kMaxFanIn = 100000;
// Draws of one layer before the network ends (each must fit the budget).
constexpr int kAttempts = 8;

int64_t words(int64_t c) { return (c + kBudgetLanes - 1) / kBudgetLanes; }

// Uniform draws from mt19937_64 with the mapping written out (not <random>'s
// distributions, whose results differ between standard libraries). Callers
// draw in separate statements: the order in which a call's arguments are
// evaluated is unspecified, and with it which draw gets which value.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}

  int range(int lo, int hi) {  // uniform over [lo, hi], lo <= hi
    const auto n = static_cast<uint64_t>(int64_t{hi} - lo + 1);
    const uint64_t limit =
        std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    uint64_t v = rng_();
    while (v >= limit) v = rng_();
    return static_cast<int>(lo + static_cast<int64_t>(v % n));
  }
  bool chance(int percent) { return range(0, 99) < percent; }
  template <typename T>
  T one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(range(0, static_cast<int>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 rng_;
};

struct Map {
  int64_t c = 1, h = 1, w = 1;
  int64_t elements() const { return c * h * w; }
};

// What the layers so far leave: the compiler refuses a conv or a pool after an
// fc, or after a flatten of a map larger than 1x1. The generator still draws
// those orders, rarely, so that their refusal is tested too.
enum class After { kInput, kMap, kFc, kFlatMap };

// One drawn layer (or two: a flatten before an fc): its YAML lines, the map it
// leaves and its cost.
struct Drawn {
  std::vector<std::string> lines;
  Map out;
  After after = After::kMap;
  int64_t work = 0;
};

class NetworkDraw {
 public:
  NetworkDraw(uint64_t seed, const RandomNetworkOptions& o) : d_(seed), o_(o) {}

  std::string run(uint64_t seed) {
    Map in = input();
    int64_t work = words(in.c) * in.h * in.w;
    std::string text = fmt::format(
        "# random network {} (strata::random_network_yaml)\nname: {}_{}\ninput: [{}, {}, {}]\n"
        "layers:\n",
        seed, o_.name, seed, in.c, in.h, in.w);
    const int count = d_.range(1, std::max(1, o_.max_layers));
    Map cur = in;
    After after = After::kInput;
    int emitted = 0;
    for (int i = 0; i < count; ++i) {
      std::optional<Drawn> pick;
      for (int a = 0; a < kAttempts && !pick; ++a) {
        Drawn l = layer(fmt::format("l{}", i), cur, after);
        if (work + l.work <= o_.max_work) pick = std::move(l);
      }
      if (!pick) break;
      for (const std::string& line : pick->lines) text += "  - " + line + "\n";
      emitted += static_cast<int>(pick->lines.size());
      work += pick->work;
      cur = pick->out;
      after = pick->after;
    }
    if (emitted == 0) text += "  - {name: l0, type: flatten}\n";  // costs nothing
    return text;
  }

 private:
  int side() {
    const int r = d_.range(0, 99);
    if (r < 25) return d_.range(1, std::min(4, o_.max_side));
    if (r < 80) return d_.range(1, std::min(64, o_.max_side));  // the pooling unit's row
    return d_.range(1, o_.max_side);
  }

  int channels() {
    const int r = d_.range(0, 99);
    if (r < 30) return d_.range(1, std::min(3, o_.max_channels));
    if (r < 45) return std::min(o_.max_channels, d_.one_of<int>({8, 16, 9, 7}));
    if (r < 75) return d_.range(1, std::min(12, o_.max_channels));
    return d_.range(1, o_.max_channels);
  }

  Map input() {
    Map m;
    for (int a = 0; a < kAttempts; ++a) {
      m.c = channels();
      m.h = side();
      m.w = d_.chance(50) ? m.h : side();  // square half of the time
      if (words(m.c) * m.h * m.w <= o_.max_work / 4) break;
    }
    while (words(m.c) * m.h * m.w > o_.max_work / 4 && m.h > 1) m.h = (m.h + 1) / 2;
    return m;
  }

  // Padding per side: mostly `pad` on every side; sometimes each side drawn
  // in 0..k-1 (as ONNX pads and TensorFlow's SAME give), kept only when the
  // padded input still holds a k x k window.
  Pads sides(int k, const Map& in, int pad) {
    if (k == 1 || !d_.chance(15)) return Pads{pad, pad, pad, pad};
    const Pads p{d_.range(0, k - 1), d_.range(0, k - 1), d_.range(0, k - 1), d_.range(0, k - 1)};
    const bool fits = in.h + p.top + p.bottom >= k && in.w + p.left + p.right >= k;
    return fits ? p : Pads{pad, pad, pad, pad};
  }

  // The YAML of `pads`: a list when the sides differ; one number, written
  // when not 0 or with `percent` chance.
  std::string pad_text(const Pads& p, int percent) {
    if (p.left != p.top || p.bottom != p.top || p.right != p.top) {
      return fmt::format(", pad: [{}, {}, {}, {}]", p.top, p.left, p.bottom, p.right);
    }
    return p.top != 0 || d_.chance(percent) ? fmt::format(", pad: {}", p.top) : std::string();
  }

  // The smallest pad (0..k-1) with which a k-wide window fits the input.
  static int min_pad(int k, int64_t side) {
    return static_cast<int>(std::max<int64_t>(0, (k - side + 1) / 2));
  }

  std::string activation() {
    const int r = d_.range(0, 99);
    if (r < 20) return "";
    if (r < 40) return ", activation: none";
    if (r < 75) return ", activation: relu";
    const int lo = d_.range(-128, 60);
    return fmt::format(", activation: {{clamp: [{}, {}]}}", lo, d_.range(lo, 127));
  }

  // Mostly calibrated files (`strata gen` writes them); sometimes inline values
  // (kept as given), per-channel lists, or one of each.
  std::string requant(const std::string& name, int64_t cout) {
    const int r = d_.range(0, 99);
    if (r < 78) return "";
    // Mostly values that give outputs in range, sometimes the field limits
    // (M 0 and 65535, S 0 and up to 47: the requantiser's widest products).
    const auto mult = [&] {
      return d_.chance(85) ? d_.range(1, 65535) : d_.one_of<int>({0, 1, 65535});
    };
    const auto shift = [&] {
      return d_.chance(85) ? d_.range(8, 30) : d_.one_of<int>({0, 1, 31, 32, 33, 46, 47});
    };
    if (r < 86) {
      const int m = mult();
      return fmt::format(", requant: {{multiplier: {}, shift: {}}}", m, shift());
    }
    if (r < 93 && cout <= 16) {
      std::vector<int> m, s;
      for (int64_t i = 0; i < cout; ++i) {
        m.push_back(mult());
        s.push_back(shift());
      }
      return fmt::format(", requant: {{multiplier: [{}], shift: [{}]}}", fmt::join(m, ", "),
                         fmt::join(s, ", "));
    }
    if (d_.chance(50)) {
      return fmt::format(", requant: {{multiplier: {}, shift: {}_s.npy}}", mult(), name);
    }
    return fmt::format(", requant: {{multiplier: {}_m.npy, shift: {}}}", name, shift());
  }

  Drawn layer(const std::string& name, const Map& in, After after) {
    // Weights of each kind: conv, maxpool, avgpool, relu, clamp, flatten, fc.
    std::vector<int> weights;
    switch (after) {
      case After::kInput: weights = {25, 13, 12, 12, 12, 10, 16}; break;
      case After::kMap: weights = {30, 12, 10, 8, 8, 10, 22}; break;
      case After::kFc: weights = {2, 1, 1, 15, 15, 15, 51}; break;
      case After::kFlatMap: weights = {2, 1, 1, 12, 12, 10, 62}; break;
    }
    int total = 0;
    for (int w : weights) total += w;
    int r = d_.range(0, total - 1), kind = 0;
    while (r >= weights[static_cast<size_t>(kind)]) r -= weights[static_cast<size_t>(kind++)];
    switch (kind) {
      case 0: return conv(name, in);
      case 1: return pool(name, in, false, after);
      case 2: return pool(name, in, true, after);
      case 3: return clamp(name, in, after, true);
      case 4: return clamp(name, in, after, false);
      case 5: return flatten(name, in, after);
      default: return fc(name, in, after);
    }
  }

  Drawn conv(const std::string& name, const Map& in) {
    const int r = d_.range(0, 99);
    const int k = r < 60 ? d_.range(1, 3) : r < 94 ? d_.range(4, 7) : d_.range(8, 11);
    const int pmin = min_pad(k, std::min(in.h, in.w));
    const int pr = d_.range(0, 99);
    const int pad = pr < 40   ? pmin
                    : pr < 70 ? std::max(pmin, (k - 1) / 2)
                              : d_.range(pmin, k - 1);
    const int sr = d_.range(0, 99);
    const int stride = sr < 65 ? 1 : sr < 88 ? 2 : d_.range(3, 8);
    const int cout = channels();
    const Pads pads = sides(k, in, pad);
    Drawn l;
    if (in.c * k * k > kMaxFanIn) {  // e.g. after a flatten of a large map
      l.work = std::numeric_limits<int32_t>::max();  // never fits: drawn again
      return l;
    }
    l.out = {cout, conv_out_size(static_cast<int>(in.h), k, stride, pads.top, pads.bottom),
             conv_out_size(static_cast<int>(in.w), k, stride, pads.left, pads.right)};
    std::string geometry = fmt::format("kernel: {}", k);
    if (stride != 1 || d_.chance(30)) geometry += fmt::format(", stride: {}", stride);
    geometry += pad_text(pads, 30);
    const std::string act = activation();
    l.lines.push_back(fmt::format("{{name: {}, type: conv, out_channels: {}, {}{}{}}}", name, cout,
                                  geometry, act, requant(name, cout)));
    l.work = l.out.h * l.out.w * k * k * words(in.c) * words(cout) + cout * words(in.c) * k * k;
    return l;
  }

  Drawn pool(const std::string& name, const Map& in, bool avg, After after) {
    const int64_t side = std::min(in.h, in.w);
    int k = 0, stride = 0, pad = 0;
    bool ceil = false, stride_given = true;
    if (avg && side >= 4 && d_.chance(25)) {
      // Windows of 4x4 or 8x8 without padding or cut windows: the average the
      // compiler runs as a convolution with identity weights.
      k = side >= 8 && d_.chance(40) ? 8 : 4;
      stride = k;
      stride_given = d_.chance(50);
    } else {
      const int r = d_.range(0, 99);
      k = r < 30 ? 2 : r < 82 ? d_.range(1, 3) : r < 94 ? d_.range(4, 7) : d_.range(8, 11);
      const int sr = d_.range(0, 99);
      stride_given = sr >= 40;
      stride = sr < 40 ? k : sr < 85 ? d_.range(1, 3) : d_.range(1, 8);
      const int pmin = min_pad(k, side);
      pad = d_.chance(60) ? pmin : d_.range(pmin, k - 1);
      ceil = d_.chance(35);
    }
    Pads pads = sides(k, in, pad);
    Drawn l;
    // A pool of a vector ([C][1][1]) is still a valid network (the compiler
    // refuses it after an fc or a flatten of a map).
    const auto out_side = [&](int64_t n, int before, int after) {
      return pool_out_size(static_cast<int>(n), k, stride, before, after, ceil);
    };
    try {
      l.out = {in.c, out_side(in.h, pads.top, pads.bottom), out_side(in.w, pads.left, pads.right)};
    } catch (const Error&) {  // per-side pads whose ceil-mode windows do not fit
      pads = Pads{pad, pad, pad, pad};
      l.out = {in.c, out_side(in.h, pad, pad), out_side(in.w, pad, pad)};
    }
    l.after = after == After::kInput ? After::kMap : after;
    std::string text = fmt::format("{{name: {}, type: {}, kernel: {}", name,
                                   avg ? "avgpool" : "maxpool", k);
    if (stride_given) text += fmt::format(", stride: {}", stride);
    text += pad_text(pads, 20);
    if (ceil || d_.chance(20)) text += fmt::format(", ceil_mode: {}", ceil ? "true" : "false");
    l.lines.push_back(text + "}");
    l.work = words(in.c) * in.h * in.w;
    return l;
  }

  Drawn clamp(const std::string& name, const Map& in, After after, bool relu) {
    Drawn l;
    l.out = in;
    l.after = after;
    if (relu) {
      l.lines.push_back(fmt::format("{{name: {}, type: relu}}", name));
    } else {
      int lo = 0, hi = 0;
      if (d_.chance(15)) {
        lo = hi = d_.range(-128, 127);
      } else {
        lo = d_.range(-128, 100);
        hi = d_.range(lo, 127);
      }
      l.lines.push_back(fmt::format("{{name: {}, type: clamp, lo: {}, hi: {}}}", name, lo, hi));
    }
    l.work = words(in.c) * in.h * in.w;
    return l;
  }

  Drawn flatten(const std::string& name, const Map& in, After after) {
    Drawn l;
    l.out = {in.elements(), 1, 1};
    l.after = in.h * in.w > 1 ? After::kFlatMap : after;
    l.lines.push_back(fmt::format("{{name: {}, type: flatten}}", name));
    return l;
  }

  Drawn fc(const std::string& name, const Map& in, After after) {
    Drawn l;
    const int r = d_.range(0, 99);
    const int out = r < 50   ? d_.range(1, std::min(16, o_.max_features))
                    : r < 80 ? d_.range(1, o_.max_features)
                             : std::min(o_.max_features, d_.one_of<int>({8, 9, 10, 16, 32, 64}));
    if (in.elements() > kMaxFanIn) {
      l.work = std::numeric_limits<int32_t>::max();  // never fits: drawn again
      return l;
    }
    if (in.h * in.w > 1 && after != After::kFlatMap && d_.chance(35)) {
      l.lines.push_back(fmt::format("{{name: {}f, type: flatten}}", name));
    }
    const std::string act = activation();
    l.lines.push_back(fmt::format("{{name: {}, type: fc, out_features: {}{}{}}}", name, out, act,
                                  requant(name, out)));
    l.out = {out, 1, 1};
    l.after = After::kFc;
    l.work = 2 * out * words(in.elements());
    return l;
  }

  Draw d_;
  const RandomNetworkOptions& o_;
};

}  // namespace

RandomNetworkOptions RandomNetworkOptions::large() {
  RandomNetworkOptions o;
  o.max_layers = 10;
  o.max_side = 96;
  o.max_channels = 80;
  o.max_features = 256;
  o.max_work = 30 * o.max_work;
  return o;
}

RandomNetworkOptions RandomNetworkOptions::any_size() {
  RandomNetworkOptions o;
  o.max_layers = 8;
  o.max_side = 300;
  o.max_channels = 300;
  o.max_features = 256;
  o.max_work = 10 * o.max_work;
  return o;
}

std::string random_network_yaml(uint64_t seed, const RandomNetworkOptions& options) {
  return NetworkDraw(seed, options).run(seed);
}

GeneratedNetwork load_generated(const std::string& yaml_path, uint64_t seed) {
  GeneratedNetwork g;
  g.network = load_network(yaml_path, LoadOptions{"", false});
  GenOptions o;
  o.seed = seed;
  g.images = random_images(g.network.input_shape, o.images, o.seed);
  generate_parameters(g.network, o, g.images);
  return g;
}

}  // namespace strata
