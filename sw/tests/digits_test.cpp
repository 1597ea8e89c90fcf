// SPDX-License-Identifier: Apache-2.0
// The trained digits model (examples/digits/, docs/digits-model.md) end to end
// on the golden model: every one of the 1797 predictions must equal the one
// computed by the independent numpy integer pipeline in scripts/train_digits.py,
// and the accuracy must stay within one percentage point of the float model.
// The same image-by-image check, and a count of zero weights, for the pruned
// models of scripts/prune_digits.py (DigitsPruned).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/golden.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

const fs::path kDigitsDir = fs::path(STRATA_SOURCE_DIR) / "examples" / "digits";
constexpr int64_t kImages = 1797;
constexpr int64_t kClasses = 10;
constexpr double kMaxAccuracyLoss = 0.01;  // one percentage point

// Index of the largest logit of a [10][1][1] output; ties go to the lowest
// index (the same rule as numpy's argmax in train_digits.py).
int argmax_lowest(const Tensor<int8_t>& logits) {
  int best = 0;
  for (int64_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int>(i);
  }
  return best;
}

// Image n of a batch [N][C][H][W] as a [C][H][W] tensor.
Tensor<int8_t> image(const Tensor<int8_t>& batch, int64_t n) {
  const int64_t per_image = batch.size() / batch.dim(0);
  const int8_t* first = batch.data() + n * per_image;
  return Tensor<int8_t>({batch.dim(1), batch.dim(2), batch.dim(3)},
                        std::vector<int8_t>(first, first + per_image));
}

std::string logits_text(const Tensor<int8_t>& logits) {
  std::string s;
  for (int64_t i = 0; i < logits.size(); ++i) s += fmt::format("{}{}", i ? " " : "", logits[i]);
  return s;
}

// The model, the data and the golden model's predictions, computed once for
// the whole suite.
class DigitsModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // gtest does not catch exceptions here: keep the message for the tests.
    try {
      load_and_run();
    } catch (const std::exception& e) {
      setup_error_ = e.what();
    }
  }
  static void load_and_run() {
    net_ = load_network((kDigitsDir / "digits.yaml").string());
    images_ = load_npy<int8_t>((kDigitsDir / "images.npy").string());
    labels_ = load_npy<int32_t>((kDigitsDir / "labels.npy").string());
    expected_ = load_npy<int32_t>((kDigitsDir / "expected_predictions.npy").string());
    const fs::path accuracy_file = kDigitsDir / "accuracy.json";
    std::ifstream in(accuracy_file);
    if (!in) throw Error("cannot open the file", ErrorContext{accuracy_file.string(), 0, ""});
    accuracy_ = nlohmann::json::parse(in);  // a parse error is a std::exception: reported
    if (images_.shape() != Shape{kImages, 1, 8, 8}) {
      throw Error(fmt::format("images.npy must be [{}][1][8][8]", kImages));
    }
    for (int64_t n = 0; n < kImages; ++n) {
      const Tensor<int8_t> out = run_network(net_, image(images_, n));
      predictions_.push_back(argmax_lowest(out));
      outputs_.push_back(out);
    }
  }
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }
  static void TearDownTestSuite() {
    predictions_.clear();
    outputs_.clear();
    setup_error_.clear();
  }

  static double json_fraction(const char* key) {
    const auto& v = accuracy_.at(key);
    if (!v.is_number()) throw Error(fmt::format("accuracy.json: '{}' is not a number", key));
    return v.get<double>();
  }

  static inline std::string setup_error_;
  static inline Network net_;
  static inline Tensor<int8_t> images_;
  static inline Tensor<int32_t> labels_;
  static inline Tensor<int32_t> expected_;
  static inline nlohmann::json accuracy_;
  static inline std::vector<int> predictions_;
  static inline std::vector<Tensor<int8_t>> outputs_;
};

TEST_F(DigitsModel, NetworkHasTheDocumentedShape) {
  EXPECT_EQ(net_.name, "digits");
  EXPECT_EQ(net_.input_shape, (Shape{1, 8, 8}));
  ASSERT_EQ(net_.layers.size(), 5u);
  EXPECT_EQ(net_.layers[0].type, LayerType::kConv);
  EXPECT_EQ(net_.layers[1].type, LayerType::kMaxPool);
  EXPECT_EQ(net_.layers[2].type, LayerType::kConv);
  EXPECT_EQ(net_.layers[3].type, LayerType::kAvgPool);
  EXPECT_EQ(net_.layers[4].type, LayerType::kFc);
  EXPECT_EQ(net_.output_shape(), (Shape{kClasses, 1, 1}));
  // Taps inside the image only: per dimension 8*3-2 = 22 (conv1), 4*3-2 = 10 (conv2).
  EXPECT_EQ(net_.macs(), 8 * 22 * 22 + 16 * 8 * 10 * 10 + 10 * 64);
}

TEST_F(DigitsModel, DataFilesAreConsistent) {
  ASSERT_EQ(images_.shape(), (Shape{kImages, 1, 8, 8}));
  ASSERT_EQ(labels_.shape(), (Shape{kImages}));
  ASSERT_EQ(expected_.shape(), (Shape{kImages}));
  for (int8_t v : images_.values()) ASSERT_TRUE(v >= 0 && v <= 127) << "pixel " << int{v};
  for (int64_t n = 0; n < kImages; ++n) {
    ASSERT_TRUE(labels_[n] >= 0 && labels_[n] < kClasses) << "label of image " << n;
    ASSERT_TRUE(expected_[n] >= 0 && expected_[n] < kClasses) << "prediction of image " << n;
  }
  for (const char* key : {"float_all", "float_test", "quant_all", "quant_test"}) {
    const double v = json_fraction(key);
    EXPECT_TRUE(v >= 0.0 && v <= 1.0) << key << " = " << v << " is not a fraction";
  }
}

// (a) Golden model == numpy integer pipeline, image by image.
TEST_F(DigitsModel, PredictionsMatchTheNumpyIntegerPipeline) {
  ASSERT_EQ(predictions_.size(), static_cast<size_t>(kImages));
  int64_t wrong = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    ASSERT_EQ(outputs_[n].shape(), (Shape{kClasses, 1, 1}));
    if (predictions_[n] == expected_[n]) continue;
    if (++wrong <= 10) {
      ADD_FAILURE() << fmt::format(
          "image {}: numpy pipeline predicts {}, golden model {} "
          "(golden logits {})",
          n, expected_[n], predictions_[n], logits_text(outputs_[n]));
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << kImages << " images disagree";
}

// (b) Golden accuracy within one percentage point of the float model.
TEST_F(DigitsModel, AccuracyWithinOnePointOfTheFloatModel) {
  ASSERT_EQ(predictions_.size(), static_cast<size_t>(kImages));
  int64_t correct = 0;
  for (int64_t n = 0; n < kImages; ++n) correct += predictions_[n] == labels_[n];
  const double golden = static_cast<double>(correct) / kImages;
  const double float_all = json_fraction("float_all");
  std::cout << fmt::format(
      "digits: float model {:.2f} %, golden model (int8) {:.2f} % "
      "({} of {} images)\n",
      100.0 * float_all, 100.0 * golden, correct, kImages);
  EXPECT_LE(std::abs(golden - float_all), kMaxAccuracyLoss)
      << "golden " << golden << " vs float " << float_all;
  // The same predictions as the numpy pipeline, hence its accuracy exactly.
  EXPECT_NEAR(golden, json_fraction("quant_all"), 0.5 / kImages);
}

// The logits are not trivially saturated: the largest one varies across images.
TEST_F(DigitsModel, LogitsUseTheInt8Range) {
  ASSERT_EQ(outputs_.size(), static_cast<size_t>(kImages));
  int lo = 127, hi = -128;
  for (const auto& out : outputs_) {
    const int top = out[argmax_lowest(out)];
    lo = std::min(lo, top);
    hi = std::max(hi, top);
  }
  EXPECT_LT(lo, hi - 32) << "largest logit spans only " << lo << ".." << hi;
}

// The magnitude-pruned digits models (scripts/prune_digits.py, docs/sparsity.md):
// the golden model must give the numpy pipeline's prediction for every image,
// and every weighted layer must hold at least the stated fraction of zero
// weights, the fractions accuracy.json records for the documentation's table.
struct PrunedDigits {
  const char* name;  // directory under examples/, stem of its YAML and network name
  double sparsity;   // fraction of zero weights every weighted layer must hold
};
// How gtest prints the parameter, also in the test list ctest's names come from.
void PrintTo(const PrunedDigits& p, std::ostream* os) { *os << p.name; }

class DigitsPruned : public ::testing::TestWithParam<PrunedDigits> {
 protected:
  fs::path dir() const { return fs::path(STRATA_SOURCE_DIR) / "examples" / GetParam().name; }
  Network network() const {
    return load_network((dir() / (std::string(GetParam().name) + ".yaml")).string());
  }
  nlohmann::json record() const {
    const fs::path file = dir() / "accuracy.json";
    std::ifstream in(file);
    if (!in) throw Error("cannot open the file", ErrorContext{file.string(), 0, ""});
    return nlohmann::json::parse(in);
  }
};

TEST_P(DigitsPruned, PredictionsMatchTheNumpyIntegerPipeline) {
  const Network net = network();
  const nlohmann::json rec = record();
  EXPECT_EQ(net.name, GetParam().name);
  // The images and labels are examples/digits/'s, named relative to the model's directory.
  const auto images = load_npy<int8_t>((dir() / rec.at("images").get<std::string>()).string());
  const auto labels = load_npy<int32_t>((dir() / rec.at("labels").get<std::string>()).string());
  const auto expected = load_npy<int32_t>((dir() / "expected_predictions.npy").string());
  ASSERT_EQ(images.shape(), (Shape{kImages, 1, 8, 8}));
  ASSERT_EQ(labels.shape(), (Shape{kImages}));
  ASSERT_EQ(expected.shape(), (Shape{kImages}));
  int64_t wrong = 0, correct = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    const Tensor<int8_t> out = run_network(net, image(images, n));
    ASSERT_EQ(out.shape(), (Shape{kClasses, 1, 1}));
    const int predicted = argmax_lowest(out);
    correct += predicted == labels[n];
    if (predicted == expected[n]) continue;
    if (++wrong <= 10) {
      ADD_FAILURE() << fmt::format(
          "{} image {}: numpy pipeline predicts {}, golden model {} "
          "(golden logits {})",
          GetParam().name, n, expected[n], predicted, logits_text(out));
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << kImages << " images disagree";
  const double golden = static_cast<double>(correct) / kImages;
  std::cout << fmt::format(
      "{}: float model {:.2f} %, golden model (int8) {:.2f} % "
      "({} of {} images)\n",
      GetParam().name, 100.0 * rec.at("float_all").get<double>(), 100.0 * golden, correct, kImages);
  EXPECT_NEAR(golden, rec.at("quant_all").get<double>(), 0.5 / kImages);
}

TEST_P(DigitsPruned, EveryLayerHoldsTheStatedFractionOfZeroWeights) {
  const Network net = network();
  const nlohmann::json rec = record();
  EXPECT_EQ(rec.at("sparsity").get<double>(), GetParam().sparsity);
  const auto& recorded = rec.at("zero_fraction");
  int64_t zeros_all = 0, size_all = 0;
  for (const Layer& layer : net.layers) {
    if (!layer.has_weights()) continue;
    const auto w = layer.weights.values();
    const int64_t zeros = std::count(w.begin(), w.end(), int8_t{0});
    const int64_t size = layer.weights.size();
    zeros_all += zeros;
    size_all += size;
    const double fraction = static_cast<double>(zeros) / size;
    EXPECT_GE(fraction, GetParam().sparsity)
        << GetParam().name << " " << layer.name << ": " << zeros << " of " << size << " zero";
    EXPECT_DOUBLE_EQ(fraction, recorded.at(layer.name).get<double>()) << layer.name;
  }
  ASSERT_EQ(size_all, 8 * 9 + 16 * 8 * 9 + 10 * 64);  // conv1, conv2, fc1
  const double fraction = static_cast<double>(zeros_all) / size_all;
  EXPECT_GE(fraction, GetParam().sparsity) << zeros_all << " of " << size_all << " zero";
  EXPECT_DOUBLE_EQ(fraction, recorded.at("all").get<double>());
}

INSTANTIATE_TEST_SUITE_P(Models, DigitsPruned,
                         ::testing::Values(PrunedDigits{"digits_pruned50", 0.50},
                                           PrunedDigits{"digits_pruned75", 0.75}),
                         [](const ::testing::TestParamInfo<PrunedDigits>& info) {
                           return std::string(info.param.name);
                         });

TEST(DigitsModelErrors, MissingWeightsDirectoryIsAnError) {
  LoadOptions options;
  options.weights_dir = (kDigitsDir / "no_such_directory").string();
  try {
    load_network((kDigitsDir / "digits.yaml").string(), options);
    FAIL() << "loaded weights from a directory that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv1"), std::string::npos) << e.what();
  }
}

TEST(DigitsModelErrors, WrongImageShapeIsAnError) {
  const Network net = load_network((kDigitsDir / "digits.yaml").string());
  EXPECT_THROW(run_network(net, Tensor<int8_t>({1, 7, 8})), Error);
  EXPECT_THROW(run_network(net, Tensor<int8_t>({2, 8, 8})), Error);
}

}  // namespace
}  // namespace strata
