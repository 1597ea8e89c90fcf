// SPDX-License-Identifier: Apache-2.0
// The --network table: each convolution layer of a network packed pass by pass.
#include <fmt/format.h>

#include <algorithm>

#include "sparsity_mc.hpp"
#include "strata/network.hpp"

namespace strata::sparsity_mc {
namespace {

// One convolution layer as the PE array runs it: `taps` x `groups` dense
// cycles per pass, `channels` input channels spread over groups of N lanes
// (lanes past the last channel hold no weight), ceil(out / P) passes.
struct ConvShape {
  std::string name;
  int taps = 0;
  int channels = 0;
  int out = 0;
  int64_t pixels = 0;  // output pixels: each pass runs once per pixel
};

std::vector<ConvShape> conv_shapes(const Network& net, int lanes) {
  std::vector<ConvShape> shapes;
  bool first = true;
  for (const Layer& l : net.layers) {
    if (l.type != LayerType::kConv) continue;
    ConvShape c;
    c.name = l.name;
    const int k = l.conv.kernel;
    const int cin = static_cast<int>(l.in_shape[0]);
    // The compiler reorders the first layer's input when it has fewer than N
    // channels (docs/architecture.md): k taps of k x C channels.
    const bool reorder =
        first && cin < lanes && l.inputs.size() == 1 && l.inputs[0] == kNetworkInput;
    c.taps = reorder ? k : k * k;
    c.channels = reorder ? k * cin : cin;
    c.out = l.out_channels;
    c.pixels = l.out_shape[1] * l.out_shape[2];
    if (reorder) c.name += " (reordered input)";
    shapes.push_back(c);
    first = false;
  }
  return shapes;
}

// Dense and packed cycles of one pass set (the whole layer), per variant,
// plus the ceiling's packed_floor, for one random pruned weight set.
std::vector<int64_t> pack_layer(const ConvShape& c, int pn, double sparsity,
                                const std::vector<Variant>& vs, std::mt19937_64& rng) {
  const int groups = (c.channels + pn - 1) / pn;
  const int t = c.taps * groups;
  const int passes = (c.out + pn - 1) / pn;
  std::vector<DenseSchedule> pass(passes, DenseSchedule(pn, t, pn));
  std::vector<int8_t*> cells;  // the layer's real weights, pruned together
  for (int o = 0; o < c.out; ++o) {
    for (int tap = 0; tap < c.taps; ++tap) {
      for (int ch = 0; ch < c.channels; ++ch) {
        int8_t& w = pass[o / pn].at(o % pn, tap * groups + ch / pn, ch % pn);
        w = weight(rng);
        cells.push_back(&w);
      }
    }
  }
  prune(cells, sparsity, rng);
  std::vector<int64_t> k(vs.size() + 2, 0);
  for (const DenseSchedule& d : pass) {
    const std::vector<int> kp = pack_all(d, vs);
    for (size_t i = 0; i < kp.size(); ++i) k[i] += kp[i];
  }
  return k;
}

}  // namespace

void network_table(const std::string& path, uint64_t seed, int trials) {
  LoadOptions lo;
  lo.load_weights = false;
  const Network net = load_network(path, lo);
  fmt::print(
      "| P = N | layer | dense cycles x passes | sparsity | intra | inter 1 | inter * | "
      "ceiling | own buf |\n");
  fmt::print("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int pn : {8, 16}) {
    const auto vs = variants(pn);
    const auto shapes = conv_shapes(net, pn);
    for (double s : kSparsities) {
      std::mt19937_64 rng(seed ^ (uint64_t(pn) << 40) ^ uint64_t(s * 100));
      // [layer (last: all, per image)][variant]: sum over trials of the speed-up
      std::vector<std::vector<double>> sum(shapes.size() + 1,
                                           std::vector<double>(vs.size() + 2, 0.0));
      for (int trial = 0; trial < trials; ++trial) {
        std::vector<double> dense_img(vs.size() + 2, 0.0), packed_img(vs.size() + 2, 0.0);
        for (size_t li = 0; li < shapes.size(); ++li) {
          const ConvShape& c = shapes[li];
          const int64_t dense =
              int64_t{c.taps} * ((c.channels + pn - 1) / pn) * ((c.out + pn - 1) / pn);
          const std::vector<int64_t> k = pack_layer(c, pn, s, vs, rng);
          for (size_t i = 0; i < k.size(); ++i) {
            sum[li][i] += speedup(dense, k[i]);
            // Per image every pass runs once per output pixel.
            dense_img[i] += static_cast<double>(dense * c.pixels);
            packed_img[i] += static_cast<double>(k[i] * c.pixels);
          }
        }
        for (size_t i = 0; i < vs.size() + 2; ++i) {
          sum[shapes.size()][i] += dense_img[i] / std::max(packed_img[i], 1.0);
        }
      }
      for (size_t li = 0; li < shapes.size() + 1; ++li) {
        if (li < shapes.size()) {
          const ConvShape& c = shapes[li];
          fmt::print("| {} | {} | {} x {} | {:.0f} % |", pn, c.name,
                     c.taps * ((c.channels + pn - 1) / pn), (c.out + pn - 1) / pn, s * 100);
        } else {
          fmt::print("| {} | all conv layers, cycles per image | | {:.0f} % |", pn, s * 100);
        }
        for (double x : sum[li]) fmt::print(" {:.2f} |", x / trials);
        fmt::print("\n");
      }
    }
  }
}

}  // namespace strata::sparsity_mc
