// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the network description reader (strata::load_network) on
// arbitrary YAML text, and the same text as a hardware configuration
// (HwTarget::from_yaml). A strata::Error is a clean refusal; a crash, a
// sanitizer report, another exception or a broken property below is a finding.
// The network is read twice:
//   - structure only (load_weights = false): the shapes must chain from the
//     input to the output, every dimension positive, MACs and bytes >= 0;
//   - with the parameter files of tests/fuzz/weights/ (weights of the tiny
//     networks among the seeds, and malformed files): when that succeeds the
//     structure is the same and validate_parameters accepts it.
// Seeds: tests/fuzz/network_yaml/. Run: `make fuzz` (docs/regression.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "strata/error.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"

namespace strata {
namespace {

void check_structure(const Network& net) {
  const auto bad = [&](const std::string& what) {
    fuzz::finding(fmt::format("network '{}' accepted, but {}", net.name, what));
  };
  if (net.layers.empty()) bad("it has no layers");
  Shape shape = net.input_shape;
  for (const Layer& l : net.layers) {
    if (l.in_shape != shape) {
      bad(fmt::format("layer '{}' takes [{}], the previous output is [{}]", l.name,
                      fmt::join(l.in_shape, ", "), fmt::join(shape, ", ")));
    }
    if (l.out_shape.size() != 3) {
      bad(fmt::format("layer '{}' has a rank-{} output", l.name, l.out_shape.size()));
    }
    for (int64_t d : l.out_shape) {
      if (d < 1) {
        bad(fmt::format("layer '{}' has output [{}]", l.name, fmt::join(l.out_shape, ", ")));
      }
    }
    if (l.macs() < 0 || l.param_bytes() < 0) {
      bad(fmt::format("layer '{}' has negative counts", l.name));
    }
    shape = l.out_shape;
  }
  if (net.output_shape() != shape) bad("output_shape() is not the last layer's output");
  if (net.macs() < 0) bad("the network's MAC count is negative");
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  static fuzz::MemFile file("fuzz.yaml");
  const std::string& path = file.write(data, size);

  try {
    HwTarget::from_yaml(path);
  } catch (const Error&) {
  }

  Network shape_only;
  try {
    shape_only = load_network(path, LoadOptions{STRATA_FUZZ_WEIGHTS, false});
  } catch (const Error& e) {
    if (fuzz::verbose()) std::fprintf(stderr, "refused: %s\n", e.what());
    return 0;
  }
  check_structure(shape_only);

  Network net;
  try {
    net = load_network(path, LoadOptions{STRATA_FUZZ_WEIGHTS, true});
  } catch (const Error& e) {
    if (fuzz::verbose()) {
      std::fprintf(stderr, "structure accepted, parameters refused: %s\n", e.what());
    }
    return 0;
  }
  if (fuzz::verbose()) {
    std::fprintf(stderr, "accepted with parameters: %zu layers\n", net.layers.size());
  }
  check_structure(net);
  if (net.input_shape != shape_only.input_shape || net.layers.size() != shape_only.layers.size()) {
    fuzz::finding("loading the parameters changed the structure");
  }
  for (size_t i = 0; i < net.layers.size(); ++i) {
    if (net.layers[i].out_shape != shape_only.layers[i].out_shape) {
      fuzz::finding(fmt::format("loading the parameters changed layer '{}'", net.layers[i].name));
    }
  }
  try {
    validate_parameters(net);
  } catch (const Error& e) {
    fuzz::finding(
        fmt::format("load_network accepted parameters validate_parameters refuses: {}", e.what()));
  }
  return 0;
}
