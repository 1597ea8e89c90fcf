// SPDX-License-Identifier: Apache-2.0
// Seeded random network descriptions (random_network.hpp).
#include "strata/random_network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>
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
  std::string last;  // the layer whose output is `out` (empty: the draw's own name)
  Map out;
  After after = After::kMap;
  int64_t work = 0;

  // `next` drawn after these layers: its lines follow, its result is the result.
  void then(const Drawn& next) {
    lines.insert(lines.end(), next.lines.begin(), next.lines.end());
    work += next.work;
    out = next.out;
    after = next.after;
  }
};

// A map an earlier layer (or the network input) leaves, which a later layer
// may read as a shortcut.
struct Earlier {
  std::string name;  // "input" for the network input
  Map map;
  After after = After::kInput;
};

// The work of a drawn layer that can never fit the budget (it is drawn again).
constexpr int64_t kNeverFits = std::numeric_limits<int32_t>::max();

Drawn never_fits() {
  Drawn l;
  l.work = kNeverFits;
  return l;
}

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
    // Every draw reads the map the one before it leaves (the last entry);
    // shortcuts read any earlier entry, so each stays read by the next draw.
    earlier_ = {Earlier{"input", in, After::kInput}};
    int emitted = 0;
    for (int i = 0; i < count; ++i) {
      std::optional<Drawn> pick;
      for (int a = 0; a < kAttempts && !pick; ++a) {
        const std::string name = fmt::format("l{}", i);
        Drawn l = layer(name, earlier_.back().map, earlier_.back().after);
        if (l.last.empty()) l.last = name;
        // At most two layers per drawn one on average (a flatten before an fc,
        // a residual block's several).
        const bool fits_count =
            emitted + static_cast<int>(l.lines.size()) <= 2 * std::max(1, o_.max_layers);
        if (work + l.work <= o_.max_work && fits_count) pick = std::move(l);
      }
      if (!pick) break;
      for (const std::string& line : pick->lines) text += "  - " + line + "\n";
      emitted += static_cast<int>(pick->lines.size());
      work += pick->work;
      earlier_.push_back(Earlier{pick->last, pick->out, pick->after});
    }
    if (emitted == 0) text += "  - {name: l0, type: flatten}\n";  // costs nothing
    return text + extra_outputs(seed, work);
  }

 private:
  // Sometimes several network outputs (docs/network-format.md, "Outputs"): an
  // earlier map made an output as it is (its readers still read it), or a side
  // branch (a 1x1 conv, or a max pool) from one ending in an output, next to the
  // last layer, in a random order. Drawn from a generator of its own, so the
  // layers above are the same as without it.
  std::string extra_outputs(uint64_t seed, int64_t work) {
    Draw d(seed ^ 0x6f757470757473ull);  // "outputs"
    std::vector<size_t> maps;            // earlier_ entries of maps, not the last one
    for (size_t i = 1; i + 1 < earlier_.size(); ++i) {
      // Not the input of an FC layer, which must be its only reader.
      if (earlier_[i].after == After::kMap && earlier_[i + 1].after != After::kFc) {
        maps.push_back(i);
      }
    }
    if (earlier_.size() < 2 || !d.chance(30)) return "";
    std::vector<std::string> outputs{earlier_.back().name};
    std::string lines;
    const int extra = d.range(1, 2);
    // A side branch becomes the last layer of the file, so the network's last
    // map must be a map the compiler can store as an output (not an FC's).
    const bool branches = earlier_.back().after == After::kMap;
    for (int k = 0; k < extra; ++k) {
      const bool branch = branches && (maps.empty() || d.chance(50));
      if (!branch && maps.empty()) continue;
      // A side branch may read any map, the network input too.
      const size_t at =
          maps.empty() || (branch && d.chance(20))
              ? 0
              : maps[static_cast<size_t>(d.range(0, static_cast<int>(maps.size()) - 1))];
      const Earlier& e = earlier_[at];
      if (!branch) {
        if (std::find(outputs.begin(), outputs.end(), e.name) == outputs.end()) {
          outputs.push_back(e.name);
        }
        continue;
      }
      if (e.after != After::kMap && e.after != After::kInput) continue;
      const std::string name = fmt::format("out{}", k);
      if (e.map.h >= 2 && e.map.w >= 2 && d.chance(30)) {
        lines +=
            fmt::format("  - {{name: {}, type: maxpool, inputs: {}, kernel: 2}}\n", name, e.name);
      } else {
        const int c = d.range(1, 16);
        if (work + words(e.map.c) * e.map.h * e.map.w * c > o_.max_work) continue;
        work += words(e.map.c) * e.map.h * e.map.w * c;
        lines += fmt::format(
            "  - {{name: {}, type: conv, inputs: {}, out_channels: {}, kernel: "
            "1{}}}\n",
            name, e.name, c, d.chance(50) ? ", activation: relu" : "");
      }
      outputs.push_back(name);
    }
    if (outputs.size() < 2) return "";
    // The layer last in the file must be an output: it is, whichever order.
    for (size_t i = outputs.size() - 1; i > 0; --i) {
      std::swap(outputs[i], outputs[static_cast<size_t>(d.range(0, static_cast<int>(i)))]);
    }
    return lines + fmt::format("outputs: [{}]\n", fmt::join(outputs, ", "));
  }

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

  // A layer's activation; sometimes a lookup table (`strata gen` writes
  // <name>_table.npy: a leaky ReLU or random entries).
  std::string activation(const std::string& name) {
    const int r = d_.range(0, 99);
    if (r < 20) return "";
    if (r < 40) return ", activation: none";
    if (r < 75) return ", activation: relu";
    if (r >= 88) return fmt::format(", activation: {{table: {}_table.npy}}", name);
    const int lo = d_.range(-128, 60);
    return fmt::format(", activation: {{clamp: [{}, {}]}}", lo, d_.range(lo, 127));
  }

  // Mostly calibrated files (`strata gen` writes them); sometimes inline values
  // (kept as given), per-channel lists, or one of each.
  std::string requant(const std::string& name, int64_t cout) {
    const int r = d_.range(0, 99);
    if (r < 78) return "";
    // Mostly values that give outputs in range, sometimes the field limits
    // (M 0 and 65535, S 0 and up to kMaxShift: the requantiser's widest products).
    const auto mult = [&] {
      return d_.chance(85) ? d_.range(1, 65535) : d_.one_of<int>({0, 1, 65535});
    };
    const auto shift = [&] {
      return d_.chance(85) ? d_.range(8, 30)
                           : d_.one_of<int>({0, 1, 31, 32, 33, kMaxShift - 1, kMaxShift});
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
    // Weights of each kind: conv, maxpool, avgpool, relu, clamp, flatten, fc,
    // then the graph layers: depthwise, a residual block, a shortcut add of
    // the last map with an earlier one, a global average pool (mostly on maps
    // of up to 16 x 16, the pool of a network's head), a concat of the last map
    // with earlier ones (sliced or upsampled to its size), an upsample, a
    // squeeze-and-excitation block.
    const int gap = in.h * in.w <= 256 ? 6 : 1;
    std::vector<int> weights;
    switch (after) {
      case After::kInput:
        weights = {25, 13, 12, 12, 12, 10, 16, 6, 7, 0, gap, 6, 4, 3};
        break;
      case After::kMap:
        weights = {30, 12, 10, 8, 8, 10, 22, 7, 9, 5, gap, 14, 6, 7};
        break;
      case After::kFc:
        weights = {2, 1, 1, 15, 15, 15, 51, 1, 0, 1, 1, 0, 0, 1};
        break;
      case After::kFlatMap:
        weights = {2, 1, 1, 12, 12, 10, 62, 1, 0, 0, 1, 0, 0, 1};
        break;
    }
    int total = 0;
    for (int w : weights) total += w;
    int r = d_.range(0, total - 1), kind = 0;
    while (r >= weights[static_cast<size_t>(kind)]) r -= weights[static_cast<size_t>(kind++)];
    switch (kind) {
      case 0:
        return conv(name, in);
      case 1:
        return pool(name, in, false, after);
      case 2:
        return pool(name, in, true, after);
      case 3:
        return clamp(name, in, after, true);
      case 4:
        return clamp(name, in, after, false);
      case 5:
        return flatten(name, in, after);
      case 6:
        return fc(name, in, after);
      case 7:
        return depthwise(name, in, after);
      case 8:
        return block(name, in);
      case 9:
        return shortcut(name, in, after);
      case 10:
        return global_pool(name, in, after);
      case 11:
        return concat(name, in);
      case 12:
        return upsample(name, in);
      default:
        return squeeze_excite(name, in, after);
    }
  }

  // A squeeze-and-excitation block on the last map (MobileNet-v3, EfficientNet): a
  // global average pool, a 1x1 conv to fewer channels, a 1x1 conv back whose
  // activation stands for the gate (a table half the time), and the mul of the map by
  // that vector.
  Drawn squeeze_excite(const std::string& name, const Map& in, After after) {
    if (in.c > o_.max_channels) return never_fits();  // the excite conv has in.c filters
    const std::string x = earlier_.back().name;
    const int64_t squeezed = d_.range(1, static_cast<int>(std::max<int64_t>(1, in.c / 2)));
    Drawn l;
    const std::string pool = name + "q", fc1 = name + "r", fc2 = name + "e";
    l.lines.push_back(fmt::format("{{name: {}, type: global_avgpool}}", pool));
    l.lines.push_back(fmt::format("{{name: {}, type: conv, out_channels: {}, kernel: 1{}{}}}", fc1,
                                  squeezed, activation(fc1), requant(fc1, squeezed)));
    const std::string gate =
        d_.chance(50) ? fmt::format(", activation: {{table: {}_table.npy}}", fc2) : activation(fc2);
    l.lines.push_back(fmt::format("{{name: {}, type: conv, out_channels: {}, kernel: 1{}{}}}", fc2,
                                  in.c, gate, requant(fc2, in.c)));
    l.lines.push_back(fmt::format("{{name: {}, type: mul, inputs: [{}, {}]{}{}}}", name, x, fc2,
                                  activation(name), requant(name, in.c)));
    l.out = in;
    l.after = after == After::kInput ? After::kMap : after;
    l.work = 3 * words(in.c) * in.h * in.w + 2 * words(in.c) * words(squeezed) * kBudgetLanes +
             words(in.c) * kBudgetLanes;
    return l;
  }

  // The map `cur` (the last entry's) and one or two earlier maps of its size,
  // or of its size divided by an integer factor (then upsampled), each part
  // sometimes a channel slice, stacked along the channels in a drawn order.
  Drawn concat(const std::string& name, const Map& cur) {
    std::vector<size_t> fit;  // earlier maps that reach cur's size
    for (size_t e = 0; e + 1 < earlier_.size(); ++e) {
      const Earlier& m = earlier_[e];
      if (m.after == After::kFc || m.after == After::kFlatMap) continue;
      if (upsample_factor(m.map, cur) != 0) fit.push_back(e);
    }
    if (fit.empty()) return never_fits();
    Drawn l;
    struct Part {
      std::string name;
      int64_t c;
    };
    std::vector<Part> parts;
    const auto add_part = [&](const std::string& from, const Map& m, int factor, int i) {
      std::string at = from;
      int64_t c = m.c;
      if (factor > 1) {
        at = fmt::format("{}u{}", name, i);
        l.lines.push_back(
            fmt::format("{{name: {}, type: upsample, inputs: {}, scale: {}}}", at, from, factor));
        l.work += words(m.c) * cur.h * cur.w;
      }
      if (m.c > 1 && d_.chance(30)) {
        const int b = d_.range(0, static_cast<int>(m.c) - 1);
        const int e = d_.range(b + 1, static_cast<int>(m.c));
        const std::string sliced = fmt::format("{}s{}", name, i);
        l.lines.push_back(fmt::format("{{name: {}, type: slice, inputs: {}, begin: {}, end: {}}}",
                                      sliced, at, b, e));
        at = sliced;
        c = e - b;
      }
      parts.push_back({at, c});
    };
    add_part(earlier_.back().name, cur, 1, 0);
    const int others = d_.chance(60) ? 1 : 2;
    for (int i = 1; i <= others; ++i) {
      const Earlier& e =
          earlier_[fit[static_cast<size_t>(d_.range(0, static_cast<int>(fit.size()) - 1))]];
      add_part(e.name, e.map, upsample_factor(e.map, cur), i);
    }
    for (size_t i = parts.size() - 1; i > 0; --i) {  // a drawn order
      std::swap(parts[i], parts[static_cast<size_t>(d_.range(0, static_cast<int>(i)))]);
    }
    int64_t c = 0;
    std::vector<std::string> names;
    for (const Part& p : parts) {
      c += p.c;
      names.push_back(p.name);
    }
    if (c > 2 * o_.max_channels) return never_fits();
    l.lines.push_back(
        fmt::format("{{name: {}, type: concat, inputs: [{}]}}", name, fmt::join(names, ", ")));
    l.out = {c, cur.h, cur.w};
    l.after = After::kMap;
    l.work += words(c) * cur.h * cur.w;
    return l;
  }

  // The factor f in 1..4 with m upsampled by f of size `to`, or 0.
  static int upsample_factor(const Map& m, const Map& to) {
    for (int f = 1; f <= 4; ++f) {
      if (m.h * f == to.h && m.w * f == to.w) return f;
    }
    return 0;
  }

  // Nearest upsampling of the last map by 2 to 4 (when the result stays small).
  Drawn upsample(const std::string& name, const Map& in) {
    const int f = d_.range(2, 4);
    if (in.h * f > o_.max_side || in.w * f > o_.max_side) return never_fits();
    Drawn l;
    l.lines.push_back(fmt::format("{{name: {}, type: upsample, scale: {}}}", name, f));
    l.out = {in.c, in.h * f, in.w * f};
    l.after = After::kMap;
    l.work = 2 * words(in.c) * l.out.h * l.out.w;
    return l;
  }

  // A convolution window drawn for conv and depthwise layers: any kernel,
  // stride and padding the format allows, per-side pads too.
  struct Window {
    int k = 1, stride = 1;
    Pads pads;
    std::string text;  // "kernel: 3, stride: 2, pad: 1"
  };

  Window window(const Map& in) {
    Window w;
    const int r = d_.range(0, 99);
    w.k = r < 60 ? d_.range(1, 3) : r < 94 ? d_.range(4, 7) : d_.range(8, 11);
    const int pmin = min_pad(w.k, std::min(in.h, in.w));
    const int pr = d_.range(0, 99);
    const int pad = pr < 40   ? pmin
                    : pr < 70 ? std::max(pmin, (w.k - 1) / 2)
                              : d_.range(pmin, w.k - 1);
    const int sr = d_.range(0, 99);
    w.stride = sr < 65 ? 1 : sr < 88 ? 2 : d_.range(3, 8);
    w.pads = sides(w.k, in, pad);
    w.text = fmt::format("kernel: {}", w.k);
    if (w.stride != 1 || d_.chance(30)) w.text += fmt::format(", stride: {}", w.stride);
    w.text += pad_text(w.pads, 30);
    return w;
  }

  // A window whose output is ceil(H / stride) x ceil(W / stride), as a 1x1
  // convolution of that stride gives (a residual block's shapes): padding
  // k - 1 in all, split evenly or (always for even k) drawn per side.
  Window same_window(int stride) {
    Window w;
    const int r = d_.range(0, 99);
    w.k = r < 25 ? 1 : r < 75 ? 3 : d_.range(2, 7);
    w.stride = stride;
    const int half = (w.k - 1) / 2;
    if (w.k % 2 == 1 && d_.chance(75)) {
      w.pads = Pads{half, half, half, half};
    } else {
      const int top = d_.range(0, w.k - 1), left = d_.range(0, w.k - 1);
      w.pads = Pads{top, left, w.k - 1 - top, w.k - 1 - left};
    }
    w.text = fmt::format("kernel: {}", w.k);
    if (w.stride != 1 || d_.chance(30)) w.text += fmt::format(", stride: {}", w.stride);
    w.text += pad_text(w.pads, 30);
    return w;
  }

  static Map window_out(const Map& in, int64_t c, const Window& w) {
    return {c, conv_out_size(static_cast<int>(in.h), w.k, w.stride, w.pads.top, w.pads.bottom),
            conv_out_size(static_cast<int>(in.w), w.k, w.stride, w.pads.left, w.pads.right)};
  }

  // `extra`: more keys (e.g. ", inputs: l2").
  Drawn conv(const std::string& name, const Map& in, std::optional<Window> given = std::nullopt,
             std::optional<int64_t> given_cout = std::nullopt, const std::string& extra = "") {
    const Window w = given ? *given : window(in);
    const int64_t cout = given_cout ? *given_cout : channels();
    if (in.c * w.k * w.k > kMaxFanIn) return never_fits();  // e.g. after a flatten of a map
    Drawn l;
    l.out = window_out(in, cout, w);
    // Now and then channel groups: a divisor > 1 of both channel counts.
    std::string groups;
    if (d_.chance(15)) {
      std::vector<int> common;
      for (int g = 2; g <= std::gcd(in.c, cout); ++g) {
        if (in.c % g == 0 && cout % g == 0) common.push_back(g);
      }
      if (!common.empty()) {
        groups = fmt::format(
            ", groups: {}",
            common[static_cast<size_t>(d_.range(0, static_cast<int>(common.size()) - 1))]);
      }
    }
    const std::string act = activation(name);
    l.lines.push_back(fmt::format("{{name: {}, type: conv, out_channels: {}, {}{}{}{}{}}}", name,
                                  cout, w.text, groups, extra, act, requant(name, cout)));
    l.work =
        l.out.h * l.out.w * w.k * w.k * words(in.c) * words(cout) + cout * words(in.c) * w.k * w.k;
    return l;
  }

  // One K x K filter per channel; the compiler runs it as a grouped CONV
  // (pass g reads only input group g).
  Drawn depthwise(const std::string& name, const Map& in, After after,
                  std::optional<Window> given = std::nullopt) {
    const Window w = given ? *given : window(in);
    Drawn l;
    l.out = window_out(in, in.c, w);
    l.after = after == After::kInput ? After::kMap : after;
    const std::string act = activation(name);
    l.lines.push_back(fmt::format("{{name: {}, type: depthwise, {}{}{}}}", name, w.text, act,
                                  requant(name, in.c)));
    l.work = l.out.h * l.out.w * w.k * w.k * words(in.c) + words(in.c) * w.k * w.k * kBudgetLanes;
    return l;
  }

  // A residual block on the last map: one to three conv or depthwise layers
  // (the first may be strided), then an add of their result with the block's
  // input, through a strided 1x1 projection when the shapes differ (shortcut).
  Drawn block(const std::string& name, const Map& in) {
    const size_t from = earlier_.size() - 1;  // the block's input
    const int sr = d_.range(0, 99);
    const int stride = sr < 65 ? 1 : sr < 90 ? 2 : d_.range(3, 4);
    const int n = d_.range(1, 3);
    const int64_t cout = d_.chance(55) ? in.c : channels();
    Drawn l;
    Map cur = in;
    std::string last;
    for (int i = 0; i < n; ++i) {
      const std::string part = fmt::format("{}{}", name, static_cast<char>('a' + i));
      const Window w = same_window(i == 0 ? stride : 1);
      // Depthwise where the channels stay (MobileNet's middle layer).
      const bool dw = (i < n - 1 || cur.c == cout) && d_.chance(30);
      const int64_t c = i == n - 1 ? cout : dw || d_.chance(50) ? cur.c : channels();
      Drawn p = dw ? depthwise(part, cur, After::kMap, w) : conv(part, cur, w, c);
      if (p.work >= kNeverFits) return p;
      l.then(p);
      cur = p.out;
      last = part;
    }
    Drawn add = shortcut(name, cur, After::kMap, from, last);
    if (add.work >= kNeverFits) return add;
    l.then(add);
    return l;
  }

  // The smallest stride with which a 1x1 convolution maps `from` to `to`'s
  // height and width, or 0.
  static int projection_stride(const Map& from, const Map& to) {
    for (int s = 1; s <= 8; ++s) {
      if ((from.h - 1) / s + 1 == to.h && (from.w - 1) / s + 1 == to.w) return s;
    }
    return 0;
  }

  // An add of the map `cur` with an earlier map, through a strided 1x1
  // projection (a conv reading the earlier map) where the shapes differ. With
  // `from`, cur is what layer `last` leaves and the earlier map is
  // `earlier_[*from]`; without, cur is the last entry's map and the earlier
  // map is drawn among those of cur's shape and those a projection brings to
  // it, the network input now and then.
  Drawn shortcut(const std::string& name, const Map& cur, After after,
                 std::optional<size_t> from = std::nullopt, std::string last = "") {
    size_t k = from.value_or(0);
    if (!from) {
      last = earlier_.back().name;
      std::vector<size_t> same, projected;
      for (size_t e = 0; e + 1 < earlier_.size(); ++e) {
        const Map& m = earlier_[e].map;
        if (m.c == cur.c && m.h == cur.h && m.w == cur.w) {
          same.push_back(e);
        } else if (projection_stride(m, cur) != 0) {
          projected.push_back(e);
        }
      }
      const bool input_ok = projection_stride(earlier_[0].map, cur) != 0;
      if (input_ok && d_.chance(30)) {
        k = 0;
      } else if (!same.empty() && (projected.empty() || d_.chance(60))) {
        k = same[static_cast<size_t>(d_.range(0, static_cast<int>(same.size()) - 1))];
      } else if (!projected.empty()) {
        k = projected[static_cast<size_t>(d_.range(0, static_cast<int>(projected.size()) - 1))];
      } else {
        return never_fits();
      }
    }
    const Earlier& e = earlier_[k];
    const int stride = projection_stride(e.map, cur);
    if (stride == 0) return never_fits();
    Drawn l;
    std::string other = e.name;
    const bool same = e.map.c == cur.c && stride == 1;
    if (!same || d_.chance(10)) {  // a projection, now and then even when shapes match
      if (cur.c > o_.max_channels) return never_fits();
      Window w;
      w.stride = stride;
      w.text =
          stride != 1 || d_.chance(30) ? fmt::format("kernel: 1, stride: {}", stride) : "kernel: 1";
      other = name + "p";
      Drawn p = conv(other, e.map, w, cur.c, fmt::format(", inputs: {}", e.name));
      if (p.work >= kNeverFits) return p;
      l.lines = p.lines;
      l.work = p.work;
    }
    const bool swap = d_.chance(50);
    const std::string& a = swap ? other : last;
    const std::string& b = swap ? last : other;
    l.lines.push_back(
        fmt::format("{{name: {}, type: add, inputs: [{}, {}]{}}}", name, a, b, activation(name)));
    l.out = cur;
    l.after = after == After::kInput ? After::kMap : after;
    l.work += 2 * words(cur.c) * cur.h * cur.w + words(cur.c) * 2 * kBudgetLanes;
    return l;
  }

  // A global average pool, mostly followed by an fc (a classifier head).
  Drawn global_pool(const std::string& name, const Map& in, After after) {
    Drawn l;
    l.out = {in.c, 1, 1};
    l.after = after == After::kInput ? After::kMap : after;
    l.work = 2 * words(in.c) * in.h * in.w;
    if (!d_.chance(55)) {
      l.lines.push_back(fmt::format("{{name: {}, type: global_avgpool}}", name));
      return l;
    }
    const std::string pooled = name + "g";
    l.lines.push_back(fmt::format("{{name: {}, type: global_avgpool}}", pooled));
    if (d_.chance(40)) l.lines.push_back(fmt::format("{{name: {}f, type: flatten}}", name));
    Drawn f = fc(name, l.out, l.after);
    if (f.work >= kNeverFits) return f;
    l.then(f);
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
    std::string text =
        fmt::format("{{name: {}, type: {}, kernel: {}", name, avg ? "avgpool" : "maxpool", k);
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
    if (in.elements() > kMaxFanIn) return never_fits();
    if (in.h * in.w > 1 && after != After::kFlatMap && d_.chance(35)) {
      l.lines.push_back(fmt::format("{{name: {}f, type: flatten}}", name));
    }
    const std::string act = activation(name);
    l.lines.push_back(fmt::format("{{name: {}, type: fc, out_features: {}{}{}}}", name, out, act,
                                  requant(name, out)));
    l.out = {out, 1, 1};
    l.after = After::kFc;
    l.work = 2 * out * words(in.elements());
    return l;
  }

  Draw d_;
  const RandomNetworkOptions& o_;
  std::vector<Earlier> earlier_;  // the input, then the map each draw leaves
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

GeneratedNetwork load_generated(const std::string& yaml_path, uint64_t seed, double sparsity) {
  GeneratedNetwork g;
  g.network = load_network(yaml_path, LoadOptions{"", false});
  GenOptions o;
  o.seed = seed;
  o.sparsity = sparsity;
  g.images = random_images(g.network.input_shape, o.images, o.seed);
  generate_parameters(g.network, o, g.images);
  return g;
}

}  // namespace strata
