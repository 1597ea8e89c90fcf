// SPDX-License-Identifier: Apache-2.0
// The "compiled => runs" check shared by the random-network tests of the ISA
// simulator (sw/tests/random_network_test.cpp) and of the RTL
// (tb/network/random_network_test.cpp): draw a network (random_network.hpp),
// read it and generate its parameters as `strata gen --seed S` does, compile
// it for the default target, and either
//   - the reader, the generator or the compiler refuses it with a
//     strata::Error (counted by reason), or
//   - the backend runs it with no error and every output element equals the
//     golden model's.
// Anything else (an exception of another type, a run-time error, a wrong
// element) is a failure whose message names the seed, the layer and element,
// expected and actual values, and the network's YAML, which is also kept in a
// file (STRATA_FAIL_DIR, default ./random_network_failures/<seed>.yaml).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/random_network.hpp"

namespace strata::test {

namespace rn_fs = std::filesystem;

// Seed of a random test: STRATA_SEED if set, else `fallback` (printed either way).
inline uint64_t random_seed_from_env(uint64_t fallback) {
  if (const char* s = std::getenv("STRATA_SEED"); s != nullptr && *s != '\0') {
    return std::strtoull(s, nullptr, 0);
  }
  return fallback;
}

// A count from the environment (e.g. STRATA_RANDOM_NETWORKS), else `fallback`.
inline int count_from_env(const char* name, int fallback) {
  if (const char* s = std::getenv(name); s != nullptr && *s != '\0') {
    return static_cast<int>(std::strtol(s, nullptr, 0));
  }
  return fallback;
}

// A refusal's reason without its numbers and names, so that equal reasons group.
inline std::string reason_class(const std::string& message) {
  std::string s = std::regex_replace(message, std::regex("'[^']*'"), "'*'");
  s = std::regex_replace(s, std::regex("-?[0-9]+"), "N");
  return s.size() > 160 ? s.substr(0, 160) + "..." : s;
}

// First element where `got` differs from `want` ([C][H][W] each), as text.
inline std::optional<std::string> first_difference(const Tensor<int8_t>& want,
                                                   const Tensor<int8_t>& got) {
  if (want.shape() != got.shape()) {
    return fmt::format("shape [{}] instead of [{}]", fmt::join(got.shape(), ", "),
                       fmt::join(want.shape(), ", "));
  }
  const int64_t h = want.rank() == 3 ? want.dim(1) : 1, w = want.rank() == 3 ? want.dim(2) : 1;
  int64_t wrong = 0, first = -1;
  for (int64_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i] && wrong++ == 0) first = i;
  }
  if (wrong == 0) return std::nullopt;
  return fmt::format(
      "channel {}, row {}, column {} (index {}): expected {}, got {} ({} of {} "
      "elements differ)",
      first / (h * w), first / w % h, first % w, first, want[first], got[first], wrong,
      want.size());
}

// The graph features of a network the random-network tallies count: each
// name once if the network has it.
inline constexpr const char* kGraphFeatures[] = {"depthwise",
                                                 "add",
                                                 "add with activation",
                                                 "projection (1x1 conv on a shortcut)",
                                                 "shortcut from input",
                                                 "global pool",
                                                 "concat",
                                                 "slice",
                                                 "upsample",
                                                 "channel groups",
                                                 "mul (squeeze-and-excitation)",
                                                 "several outputs"};

inline std::vector<std::string> graph_features(const Network& net) {
  std::vector<bool> has(std::size(kGraphFeatures), false);
  std::vector<int> add_operand(net.layers.size(), 0);
  for (const Layer& l : net.layers) {
    if (l.type != LayerType::kAdd) continue;
    for (int k : l.inputs) {
      if (k != kNetworkInput) add_operand[static_cast<size_t>(k)] = 1;
    }
  }
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    const int before = static_cast<int>(i) - 1;
    has[0] = has[0] || l.type == LayerType::kDepthwise;
    has[1] = has[1] || l.type == LayerType::kAdd;
    has[2] = has[2] ||
             (l.type == LayerType::kAdd && (l.requant.lo != kInt8Min || l.requant.hi != kInt8Max));
    has[3] = has[3] || (l.type == LayerType::kConv && l.conv.kernel == 1 && add_operand[i] != 0 &&
                        l.inputs.size() == 1 && l.inputs[0] != before);
    has[4] = has[4] || (i > 0 && std::find(l.inputs.begin(), l.inputs.end(), kNetworkInput) !=
                                     l.inputs.end());
    has[5] = has[5] || l.type == LayerType::kGlobalAvgPool;
    has[6] = has[6] || l.type == LayerType::kConcat;
    has[7] = has[7] || l.type == LayerType::kSlice;
    has[8] = has[8] || l.type == LayerType::kUpsample;
    has[9] = has[9] || (l.type == LayerType::kConv && l.groups > 1);
    has[10] = has[10] || l.type == LayerType::kMul;
  }
  has[11] = net.output_count() > 1;
  std::vector<std::string> out;
  for (size_t f = 0; f < has.size(); ++f) {
    if (has[f]) out.push_back(kGraphFeatures[f]);
  }
  return out;
}

// What happened to one network.
enum class Outcome { kAccepted, kRefused, kFailed };

// Runs a compiled program on a backend: outputs, one per input image, or a
// failure description (run-time error, hang, bench error).
struct BackendRun {
  std::vector<Tensor<int8_t>> outputs;
  std::string failure;  // empty when the run completed cleanly
  std::string failure_class;
};
using Backend =
    std::function<BackendRun(const Program&, const std::vector<Tensor<int8_t>>& inputs)>;

// The committed networks that once failed (tests/random_networks/*.yaml,
// minimal reproducers), in name order; every random-network test runs them
// first, with the parameters of `strata gen --seed 1`.
inline std::vector<rn_fs::path> kept_networks() {
  std::vector<rn_fs::path> files;
  const rn_fs::path dir = rn_fs::path(STRATA_SOURCE_DIR) / "tests" / "random_networks";
  std::error_code ec;
  for (const auto& e : rn_fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Counts of a random-network test and its report.
class RandomNetworkTally {
 public:
  // `replay`: the command that replays one drawn network, "{}" standing for its seed.
  // `target`: the hardware configuration the networks are compiled for.
  RandomNetworkTally(std::string backend, uint64_t base, int networks, std::string replay,
                     HwTarget target = HwTarget::defaults())
      : backend_(std::move(backend)),
        base_(base),
        networks_(networks),
        replay_(std::move(replay)),
        target_(std::move(target)) {}

  // Draws network `seed` and checks it (check_network), its weights with
  // `sparsity` of them zero (strata gen --sparsity).
  Outcome check(uint64_t seed, const RandomNetworkOptions& options, int batch,
                const Backend& backend, const std::string& dir, double sparsity = 0.0) {
    const std::string yaml = random_network_yaml(seed, options);
    const std::string path = (rn_fs::path(dir) / fmt::format("net_{}.yaml", seed)).string();
    std::ofstream(path) << yaml;
    Subject s{fmt::format("network seed {}", seed),
              std::to_string(seed),
              fmt::format(fmt::runtime(replay_), seed),
              yaml,
              seed,
              sparsity};
    return check_network(s, path, batch, backend);
  }

  // Checks a kept network (kept_networks()) with batch 1 and gen seed 1.
  Outcome check_kept(const rn_fs::path& path, const Backend& backend) {
    std::ifstream f(path);
    const std::string yaml{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    Subject s{fmt::format("kept network {}", path.filename().string()), path.stem().string(),
              fmt::format("the file {}", path.string()), yaml, 1};
    ++kept_;
    return check_network(s, path.string(), 1, backend);
  }

  int accepted() const { return accepted_; }
  int refused() const { return refused_; }
  int failed() const { return failed_; }

  // The counts: accepted, refused by reason, failed by class with their seeds.
  std::string summary() const {
    std::string s = fmt::format(
        "[ RANDOM   ] {}: {} networks from STRATA_SEED={} and {} kept: {} accepted and equal to "
        "the golden model, {} refused, {} failed\n",
        backend_, networks_, base_, kept_, accepted_, refused_, failed_);
    for (const auto& [b, n] : batches_) s += fmt::format("[ RANDOM   ]   batch {}: {}\n", b, n);
    for (const auto& [label, marker] : kPathMarkers) {
      const auto it = paths_.find(label);
      s += fmt::format("[ RANDOM   ]   {}: {}\n", label, it == paths_.end() ? 0 : it->second);
    }
    for (const char* f : kGraphFeatures) {
      const auto it = features_.find(f);
      const std::array<int, 3> n = it == features_.end() ? std::array<int, 3>{} : it->second;
      s += fmt::format("[ RANDOM   ]   {}: {} accepted, {} refused, {} failed\n", f, n[0], n[1],
                       n[2]);
      const auto why = feature_reasons_.find(f);
      if (why == feature_reasons_.end()) continue;
      for (const auto& [reason, count] : why->second) {
        s += fmt::format("[ RANDOM   ]     {:4} {}\n", count, reason);
      }
    }
    for (const auto& [reason, r] : reasons_) {
      s += fmt::format("[ REFUSED  ]   {:4} {} (e.g. {})\n", r.count, reason, r.example);
    }
    for (const auto& [cls, which] : failures_) {
      s += fmt::format("[ FAILED   ]   {:4} {}: {}\n", which.size(), cls, fmt::join(which, ", "));
    }
    return s;
  }

 private:
  // The network being checked and how to replay it.
  struct Subject {
    std::string label;   // "network seed 12"
    std::string id;      // "12": the name of its kept YAML file
    std::string replay;  // command (or file) that replays it
    std::string yaml;
    uint64_t gen_seed = 1;
    double sparsity = 0.0;  // fraction of zero weights
  };

  struct Reason {
    int count = 0;
    std::string example;
  };

  // The compiler's allocation paths an accepted network took, by a phrase of
  // the program's notes (compiler/plan.cpp): how many networks took each.
  static constexpr std::pair<const char*, const char*> kPathMarkers[] = {
      {"weights resident", "resident (loaded once"},
      {"weights streamed", "streamed per pass"},
      {"overlapping weight slots", "two overlapping slots"},
      {"parameters per use", "loaded before each use"},
      {"tiled ops", "words per buffer"},
  };

  // Reads, generates, compiles with `batch` images and runs on `backend`;
  // records and reports the outcome.
  Outcome check_network(const Subject& s, const std::string& path, int batch,
                        const Backend& backend) {
    GeneratedNetwork g;
    current_features_.clear();
    try {
      g = load_generated(path, s.gen_seed, s.sparsity);
    } catch (const Error& e) {
      return refuse(s, "reader/gen", e.message());
    } catch (const std::exception& e) {
      return fail(s, "reader/gen threw a non-strata exception",
                  fmt::format("reading or generating threw {}", e.what()));
    }
    const Network& net = g.network;
    current_features_ = graph_features(net);
    batch = std::min<int>(batch, target_.pes);
    // Image 0 is `strata gen`'s input.npy, images 0..3 its images.npy.
    const Tensor<int8_t> batch_images = random_images(net.input_shape, batch, s.gen_seed);
    std::vector<Tensor<int8_t>> inputs;
    for (int i = 0; i < batch; ++i) inputs.push_back(image(batch_images, i));
    Program program;
    try {
      CompileOptions co;
      co.batch = batch;
      program = compile(net, target_, co);
    } catch (const Error& e) {
      // A limit is a refusal; an internal inconsistency is the compiler's defect.
      if (e.message().rfind("internal", 0) == 0) {
        return fail(s, "compiler internal error", e.what());
      }
      return refuse(s, "compiler", e.message());
    } catch (const std::exception& e) {
      return fail(s, "compiler threw a non-strata exception",
                  fmt::format("compile threw {}", e.what()));
    }
    BackendRun run;
    try {
      run = backend(program, inputs);
    } catch (const std::exception& e) {
      run.failure = fmt::format("the run threw (after the compiler accepted): {}", e.what());
      run.failure_class = "exception at run time";
    }
    if (!run.failure.empty()) return fail(s, run.failure_class, run.failure);
    // Per image, every network output in order.
    const size_t outs = net.output_count();
    if (run.outputs.size() != inputs.size() * outs) {
      return fail(s, "missing outputs",
                  fmt::format("{} outputs for {} images of {} output{}", run.outputs.size(),
                              inputs.size(), outs, outs == 1 ? "" : "s"));
    }
    const std::vector<int> out_layers = net.output_layers();
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<Tensor<int8_t>> per_layer;
      run_network(net, inputs[i], [&](size_t, const Layer&, const Tensor<int8_t>& out) {
        per_layer.push_back(out);
      });
      for (size_t j = 0; j < outs; ++j) {
        const auto li = static_cast<size_t>(out_layers[j]);
        const Tensor<int8_t> want = per_layer[li].reshaped(net.output_shape(j));
        if (auto d = first_difference(want, run.outputs[i * outs + j])) {
          std::string detail = fmt::format("image {} of {}, network output {} (layer '{}'): {}", i,
                                           batch, j, net.layers[li].name, *d);
          if (batch == 1) detail += first_wrong_layer(net, inputs[i], per_layer, backend);
          return fail(s, "output differs from the golden model", detail);
        }
      }
    }
    ++accepted_;
    count_features(0);
    ++batches_[batch];
    for (const auto& [label, marker] : kPathMarkers) {
      bool hit = false;
      for (const std::string& n : program.notes) hit = hit || n.find(marker) != std::string::npos;
      if (hit) ++paths_[label];
    }
    return Outcome::kAccepted;
  }

  // Counts the checked network's graph features under outcome 0 (accepted),
  // 1 (refused) or 2 (failed).
  void count_features(size_t outcome) {
    for (const std::string& f : current_features_) ++features_[f][outcome];
  }

  static Tensor<int8_t> image(const Tensor<int8_t>& batch, int64_t i) {
    Shape shape(batch.shape().begin() + 1, batch.shape().end());
    const int64_t n = shape_elements(shape);
    return Tensor<int8_t>(shape,
                          std::vector<int8_t>(batch.data() + i * n, batch.data() + (i + 1) * n));
  }

  Outcome refuse(const Subject& s, const std::string& who, const std::string& message) {
    ++refused_;
    count_features(1);
    const std::string reason = who + ": " + reason_class(message);
    for (const std::string& f : current_features_) ++feature_reasons_[f][reason];
    Reason& r = reasons_[reason];
    if (r.count++ == 0) r.example = s.label;
    return Outcome::kRefused;
  }

  // Records a failure, reports it (in full for the first few of each class)
  // and keeps the network's YAML in a file.
  Outcome fail(const Subject& s, const std::string& cls, const std::string& detail) {
    ++failed_;
    count_features(2);
    std::vector<std::string>& which = failures_[cls];
    which.push_back(s.label);
    const char* env = std::getenv("STRATA_FAIL_DIR");
    const rn_fs::path dir = env != nullptr && *env != '\0' ? env : "random_network_failures";
    std::error_code ec;
    rn_fs::create_directories(dir, ec);
    const rn_fs::path kept = rn_fs::absolute(dir / fmt::format("{}.yaml", s.id), ec);
    std::ofstream(kept) << s.yaml;
    if (which.size() <= kFullReports) {
      ADD_FAILURE() << fmt::format(
          "{}: {}: {}\n  {}\n  replay: {}\n  the YAML is kept in {}\n"
          "  (parameters: strata gen {} --seed {} --out DIR)\n{}",
          backend_, s.label, cls, detail, s.replay, kept.string(), kept.string(), s.gen_seed,
          s.yaml);
    } else {
      ADD_FAILURE() << fmt::format("{}: {}: {}: {} (YAML kept in {})", backend_, s.label, cls,
                                   detail, kept.string());
    }
    return Outcome::kFailed;
  }

  // Runs growing prefixes of the network to name the first layer whose output
  // differs from the golden model.
  std::string first_wrong_layer(const Network& net, const Tensor<int8_t>& input,
                                const std::vector<Tensor<int8_t>>& golden,
                                const Backend& backend) const {
    for (size_t k = 1; k < net.layers.size(); ++k) {
      Network prefix = net;
      prefix.layers.resize(k);
      prefix.outputs.clear();  // its last layer only
      prefix.output_scales.clear();
      BackendRun r;
      try {
        r = backend(compile(prefix, target_, {}), {input});
      } catch (const std::exception&) {
        continue;  // a prefix the compiler refuses or that cannot run: try a longer one
      }
      if (!r.failure.empty() || r.outputs.size() != 1) continue;
      const Tensor<int8_t> want = golden[k - 1].reshaped(prefix.output_shape());
      if (auto d = first_difference(want, r.outputs[0])) {
        return fmt::format("\n  first wrong layer: '{}' ({}), {}", net.layers[k - 1].name,
                           layer_type_name(net.layers[k - 1].type), *d);
      }
    }
    return fmt::format("\n  every shorter prefix matches: first wrong layer '{}' ({})",
                       net.layers.back().name, layer_type_name(net.layers.back().type));
  }

  static constexpr size_t kFullReports = 3;

  std::string backend_;
  uint64_t base_ = 0;
  int networks_ = 0;
  std::string replay_;
  HwTarget target_;
  int kept_ = 0;
  int accepted_ = 0, refused_ = 0, failed_ = 0;
  std::map<int, int> batches_;
  std::map<std::string, int> paths_;                    // accepted networks per allocation path
  std::vector<std::string> current_features_;           // of the network being checked
  std::map<std::string, std::array<int, 3>> features_;  // accepted, refused, failed
  std::map<std::string, std::map<std::string, int>> feature_reasons_;  // refusals per feature
  std::map<std::string, Reason> reasons_;
  std::map<std::string, std::vector<std::string>> failures_;
};

}  // namespace strata::test
