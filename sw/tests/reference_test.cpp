// SPDX-License-Identifier: Apache-2.0
// The golden model's layer functions (strata/numerics.hpp) against reference
// vectors computed independently with PyTorch (scripts/make_reference_vectors.py,
// committed in tests/data/reference/). One test per case, bit-exact, element
// by element; a mismatch names the case, channel, row, column, expected and
// actual value. Cases whose manifest entry gives "pad" as one number run
// through the ConvGeometry / PoolGeometry overloads, those that give it per
// side ([top, left, bottom, right], with "groups" for convolutions) through
// ConvWindow / PoolWindow.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/npy.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kReferenceDir = fs::path(STRATA_SOURCE_DIR) / "tests" / "data" / "reference";

enum class RefOp {
  kConv,
  kFc,
  kMaxPool,
  kAvgPool,
  kAdd,
  kGlobalAvgPool,
  kConcat,
  kSlice,
  kUpsample,
  kMul
};

// One manifest entry, with file paths resolved against the manifest directory.
struct ReferenceCase {
  std::string name;
  RefOp op = RefOp::kConv;
  ConvWindow conv;        // conv
  PoolWindow pool;        // maxpool, avgpool
  bool per_side = false;  // conv, pools: "pad" given per side (else one number)
  int lo = kInt8Min;      // conv, fc, add, mul
  int hi = kInt8Max;
  int begin = 0, end = 0;  // slice
  int scale = 1;           // upsample
  std::map<std::string, fs::path> files;
};

// gtest prints parameters with this (instead of raw bytes).
void PrintTo(const ReferenceCase& c, std::ostream* os) { *os << c.name; }

bool has_weights(RefOp op) { return op == RefOp::kConv || op == RefOp::kFc; }

const char* op_name(RefOp op) {
  switch (op) {
    case RefOp::kConv:
      return "conv";
    case RefOp::kFc:
      return "fc";
    case RefOp::kMaxPool:
      return "maxpool";
    case RefOp::kAvgPool:
      return "avgpool";
    case RefOp::kAdd:
      return "add";
    case RefOp::kGlobalAvgPool:
      return "global_avgpool";
    case RefOp::kConcat:
      return "concat";
    case RefOp::kSlice:
      return "slice";
    case RefOp::kUpsample:
      return "upsample";
    case RefOp::kMul:
      return "mul";
  }
  return "?";
}

// What a case exercises: its op, and for convolutions and pools whether it
// has channel groups or padding per side.
std::string case_kind(const ReferenceCase& c) {
  const std::string op = op_name(c.op);
  if (c.op == RefOp::kConv && c.conv.groups > 1) return op + " grouped";
  if (c.per_side) return op + " per-side pads";
  return op;
}

// The fewest cases of each kind the committed manifest must hold (what
// make_reference_vectors.py writes today); fewer means data went missing.
const std::map<std::string, size_t> kMinCases = {{"conv", 28},
                                                 {"conv grouped", 27},
                                                 {"conv per-side pads", 9},
                                                 {"fc", 9},
                                                 {"maxpool", 21},
                                                 {"maxpool per-side pads", 9},
                                                 {"avgpool", 21},
                                                 {"avgpool per-side pads", 9},
                                                 {"add", 15},
                                                 {"global_avgpool", 12},
                                                 {"concat", 6},
                                                 {"slice", 6},
                                                 {"upsample", 6},
                                                 {"mul", 14}};

// ---------------------------------------------------------------------------
// Manifest parsing: every problem is a strata::Error naming the manifest, the
// case and the key.

class CaseReader {
 public:
  CaseReader(const json& node, std::string where) : node_(node), where_(std::move(where)) {}

  const json& get(const std::string& key) const {
    if (!node_.contains(key)) fail(fmt::format("missing key '{}'", key));
    return node_.at(key);
  }
  int integer(const std::string& key, int lo, int hi) const {
    const json& v = get(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      fail(fmt::format("'{}' must be an integer in {}..{}, is {}", key, lo, hi, v.dump()));
    }
    return v.get<int>();
  }
  std::string string(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_string()) fail(fmt::format("'{}' must be a string, is {}", key, v.dump()));
    return v.get<std::string>();
  }
  // One number for every side, or [top, left, bottom, right]; *per_side says which.
  Pads pads(const std::string& key, int hi, bool* per_side) const {
    const json& v = get(key);
    *per_side = v.is_array();
    if (!*per_side) {
      const int p = integer(key, 0, hi);
      return Pads{p, p, p, p};
    }
    const bool ok =
        v.size() == 4 && std::all_of(v.begin(), v.end(), [&](const json& e) {
          return e.is_number_integer() && e.get<int64_t>() >= 0 && e.get<int64_t>() <= hi;
        });
    if (!ok) {
      fail(
          fmt::format("'{}' must be an integer in 0..{} or four of them [top, left, bottom, "
                      "right], is {}",
                      key, hi, v.dump()));
    }
    return Pads{v[0].get<int>(), v[1].get<int>(), v[2].get<int>(), v[3].get<int>()};
  }
  bool boolean(const std::string& key) const {
    const json& v = get(key);
    if (!v.is_boolean()) fail(fmt::format("'{}' must be true or false, is {}", key, v.dump()));
    return v.get<bool>();
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(fmt::format("{}: {}", where_, message));
  }

 private:
  const json& node_;
  std::string where_;
};

ReferenceCase parse_case(const json& node, const fs::path& dir, size_t index) {
  if (!node.is_object()) {
    throw Error(fmt::format("manifest case {} is not an object", index));
  }
  const std::string fallback = fmt::format("manifest case {}", index);
  const std::string name =
      node.contains("name") && node["name"].is_string() ? node["name"].get<std::string>() : "";
  const CaseReader r(node, name.empty() ? fallback : fmt::format("case '{}'", name));

  ReferenceCase c;
  c.name = r.string("name");
  if (c.name.empty() || !std::all_of(c.name.begin(), c.name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
      })) {
    r.fail("'name' must be non-empty [A-Za-z0-9_]+ (it names the test)");
  }
  const std::string op = r.string("op");
  static const std::map<std::string, RefOp> kOps = {
      {"conv", RefOp::kConv},         {"fc", RefOp::kFc},
      {"maxpool", RefOp::kMaxPool},   {"avgpool", RefOp::kAvgPool},
      {"add", RefOp::kAdd},           {"global_avgpool", RefOp::kGlobalAvgPool},
      {"concat", RefOp::kConcat},     {"slice", RefOp::kSlice},
      {"upsample", RefOp::kUpsample}, {"mul", RefOp::kMul}};
  const auto it = kOps.find(op);
  if (it == kOps.end()) {
    r.fail(
        fmt::format("unknown op '{}' (conv, fc, maxpool, avgpool, add, global_avgpool, concat, "
                    "slice, upsample, mul)",
                    op));
  }
  c.op = it->second;

  if (c.op == RefOp::kConv) {
    const int kernel = r.integer("kernel", 1, 11), stride = r.integer("stride", 1, 8);
    const Pads pads = r.pads("pad", 10, &c.per_side);
    const int groups = node.contains("groups") ? r.integer("groups", 1, 1024) : 1;
    c.conv = ConvWindow{kernel, stride, pads, groups};
  } else if (c.op == RefOp::kMaxPool || c.op == RefOp::kAvgPool) {
    const int kernel = r.integer("kernel", 1, 11), stride = r.integer("stride", 1, 8);
    const Pads pads = r.pads("pad", 10, &c.per_side);
    c.pool = PoolWindow{kernel, stride, pads, r.boolean("ceil_mode")};
  } else if (c.op == RefOp::kSlice) {
    c.begin = r.integer("begin", 0, 65534);
    c.end = r.integer("end", c.begin + 1, 65535);
  } else if (c.op == RefOp::kUpsample) {
    c.scale = r.integer("scale", 1, 8);
  }
  if (has_weights(c.op) || c.op == RefOp::kAdd || c.op == RefOp::kMul) {
    c.lo = r.integer("lo", kInt8Min, kInt8Max);
    c.hi = r.integer("hi", c.lo, kInt8Max);
  }

  const json& files = r.get("files");
  if (!files.is_object()) r.fail("'files' must be an object");
  std::vector<std::string> keys = {"input", "expected"};
  if (has_weights(c.op)) keys.insert(keys.end(), {"weights", "bias", "mult", "shift"});
  if (c.op == RefOp::kAdd) keys.insert(keys.end(), {"input_b", "mult_a", "mult_b", "shift"});
  if (c.op == RefOp::kConcat) keys.push_back("input_b");
  if (c.op == RefOp::kMul) keys.insert(keys.end(), {"input_b", "mult", "shift"});
  const CaseReader fr(files, fmt::format("case '{}' files", c.name));
  for (const std::string& key : keys) c.files[key] = dir / fr.string(key);
  return c;
}

std::vector<ReferenceCase> parse_manifest(const std::string& text, const fs::path& dir) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("manifest is not valid JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array()) {
    throw Error("manifest must be an object with a 'cases' array");
  }
  std::vector<ReferenceCase> cases;
  std::set<std::string> names;
  for (size_t i = 0; i < doc["cases"].size(); ++i) {
    cases.push_back(parse_case(doc["cases"][i], dir, i));
    if (!names.insert(cases.back().name).second) {
      throw Error(fmt::format("case '{}' appears twice", cases.back().name));
    }
  }
  return cases;
}

std::vector<ReferenceCase> load_manifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open the reference manifest", ErrorContext{path.string(), 0, ""});
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  try {
    return parse_manifest(text, path.parent_path());
  } catch (const Error& e) {
    throw Error(e.message(), ErrorContext{path.string(), 0, ""});
  }
}

// The committed manifest, loaded once. A load error leaves no cases (the
// parameterised suite is then uninstantiated, which gtest reports as a
// failure) and is reported by ReferenceManifest.HoldsEveryKindOfCase.
struct LoadedManifest {
  std::vector<ReferenceCase> cases;
  std::string error;
};

const LoadedManifest& committed_manifest() {
  static const LoadedManifest loaded = [] {
    LoadedManifest m;
    try {
      m.cases = load_manifest(kReferenceDir / "manifest.json");
    } catch (const Error& e) {
      m.error = e.what();
    }
    return m;
  }();
  return loaded;
}

// ---------------------------------------------------------------------------
// Running a case and comparing

std::vector<std::string> mismatches(const std::string& name, const Tensor<int8_t>& expected,
                                    const Tensor<int8_t>& actual, size_t limit = 10) {
  std::vector<std::string> out;
  if (expected.shape() != actual.shape()) {
    out.push_back(fmt::format("case {}: shape expected [{}], actual [{}]", name,
                              fmt::join(expected.shape(), "]["), fmt::join(actual.shape(), "][")));
    return out;
  }
  if (expected.rank() != 3) {
    out.push_back(fmt::format("case {}: expected output must be [C][H][W]", name));
    return out;
  }
  const int64_t h = expected.dim(1), w = expected.dim(2);
  int64_t total = 0;
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    if (++total <= static_cast<int64_t>(limit)) {
      out.push_back(fmt::format("case {}: channel {} row {} column {}: expected {}, actual {}",
                                name, i / (h * w), (i / w) % h, i % w, int{expected[i]},
                                int{actual[i]}));
    }
  }
  if (total > static_cast<int64_t>(limit)) {
    out.push_back(fmt::format("case {}: ... {} mismatching elements in all", name, total));
  }
  return out;
}

template <typename T>
std::vector<T> as_vector(const Tensor<T>& t) {
  return std::vector<T>(t.values().begin(), t.values().end());
}

Tensor<int8_t> run_case(const ReferenceCase& c) {
  const auto input = load_npy<int8_t>(c.files.at("input").string());
  switch (c.op) {
    case RefOp::kConv:
    case RefOp::kFc: {
      const auto weights = load_npy<int8_t>(c.files.at("weights").string());
      const auto bias = load_npy<int32_t>(c.files.at("bias").string());
      Requant rq;
      rq.multiplier = as_vector(load_npy<uint16_t>(c.files.at("mult").string()));
      rq.shift = as_vector(load_npy<uint8_t>(c.files.at("shift").string()));
      rq.lo = c.lo;
      rq.hi = c.hi;
      if (c.op == RefOp::kFc) return requantize(fc_acc(input, weights, bias), rq);
      if (c.per_side || c.conv.groups != 1) {
        return requantize(conv2d_acc(input, weights, bias, c.conv), rq);
      }
      const ConvGeometry g{c.conv.kernel, c.conv.stride, c.conv.pad.top};
      return requantize(conv2d_acc(input, weights, bias, g), rq);
    }
    case RefOp::kMaxPool:
    case RefOp::kAvgPool: {
      const bool max = c.op == RefOp::kMaxPool;
      if (c.per_side) return max ? maxpool(input, c.pool) : avgpool(input, c.pool);
      const PoolGeometry g{c.pool.kernel, c.pool.stride, c.pool.pad.top, c.pool.ceil_mode};
      return max ? maxpool(input, g) : avgpool(input, g);
    }
    case RefOp::kAdd: {
      const auto input_b = load_npy<int8_t>(c.files.at("input_b").string());
      AddRequant rq;
      rq.mult_a = as_vector(load_npy<uint16_t>(c.files.at("mult_a").string()));
      rq.mult_b = as_vector(load_npy<uint16_t>(c.files.at("mult_b").string()));
      rq.shift = as_vector(load_npy<uint8_t>(c.files.at("shift").string()));
      rq.lo = c.lo;
      rq.hi = c.hi;
      return residual_add(input, input_b, rq);
    }
    case RefOp::kGlobalAvgPool:
      return global_avgpool(input);
    case RefOp::kConcat:
      return concat_channels({input, load_npy<int8_t>(c.files.at("input_b").string())});
    case RefOp::kSlice:
      return slice_channels(input, c.begin, c.end);
    case RefOp::kUpsample:
      return upsample_nearest(input, c.scale);
    case RefOp::kMul: {
      Requant rq;
      rq.multiplier = as_vector(load_npy<uint16_t>(c.files.at("mult").string()));
      rq.shift = as_vector(load_npy<uint8_t>(c.files.at("shift").string()));
      rq.lo = c.lo;
      rq.hi = c.hi;
      return requantize(channel_mul_acc(input, load_npy<int8_t>(c.files.at("input_b").string())),
                        rq);
    }
  }
  throw Error(fmt::format("case {}: unhandled op", c.name));
}

// ---------------------------------------------------------------------------
// Tests

class PyTorchReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(PyTorchReference, GoldenIsBitExact) {
  const ReferenceCase& c = GetParam();
  const auto expected = load_npy<int8_t>(c.files.at("expected").string());
  Tensor<int8_t> actual;
  try {
    actual = run_case(c);
  } catch (const Error& e) {
    FAIL() << "case " << c.name << ": golden model threw: " << e.what();
  }
  const auto bad = mismatches(c.name, expected, actual);
  for (const std::string& m : bad) ADD_FAILURE() << m;
  EXPECT_TRUE(bad.empty());
  EXPECT_GT(expected.size(), 0);
}

INSTANTIATE_TEST_SUITE_P(Manifest, PyTorchReference,
                         ::testing::ValuesIn(committed_manifest().cases),
                         [](const ::testing::TestParamInfo<ReferenceCase>& info) {
                           return info.param.name;
                         });

TEST(ReferenceManifest, HoldsEveryKindOfCase) {
  const LoadedManifest& m = committed_manifest();
  ASSERT_TRUE(m.error.empty()) << m.error;
  std::map<std::string, size_t> count;
  for (const ReferenceCase& c : m.cases) ++count[case_kind(c)];
  for (const auto& [kind, minimum] : kMinCases) {
    EXPECT_GE(count[kind], minimum) << kind
                                    << ": fewer reference cases than make_reference_vectors.py "
                                       "writes; regenerate with `make regen-data`";
  }
}

TEST(ReferenceManifest, EveryListedFileExists) {
  const LoadedManifest& m = committed_manifest();
  ASSERT_TRUE(m.error.empty()) << m.error;
  for (const ReferenceCase& c : m.cases) {
    for (const auto& [key, path] : c.files) {
      EXPECT_TRUE(fs::is_regular_file(path))
          << "case " << c.name << ": " << key << " file " << path << " is missing";
    }
  }
}

// The comparison must catch a single wrong element and say where it is.
TEST(ReferenceManifest, MismatchReportNamesThePosition) {
  Tensor<int8_t> expected({2, 3, 4});
  for (int64_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int8_t>(i - 10);
  Tensor<int8_t> actual = expected;
  EXPECT_TRUE(mismatches("x", expected, actual).empty());
  actual(1, 2, 3) = 99;
  const auto bad = mismatches("x", expected, actual);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "case x: channel 1 row 2 column 3: expected 13, actual 99");
  const auto shape = mismatches("x", expected, Tensor<int8_t>({2, 4, 3}));
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_EQ(shape[0], "case x: shape expected [2][3][4], actual [2][4][3]");
}

// Bad manifests give a clear strata::Error, never a crash.
void expect_manifest_error(const std::string& text, const std::string& needle) {
  try {
    parse_manifest(text, ".");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' lacks '" << needle << "'";
  }
}

TEST(ReferenceManifest, RejectsBadManifests) {
  const std::string files = R"("files": {"input": "i.npy", "expected": "e.npy"})";
  expect_manifest_error("{", "not valid JSON");
  expect_manifest_error("[]", "'cases' array");
  expect_manifest_error(R"({"cases": [1]})", "case 0 is not an object");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "conv3d", )" + files + "}]}",
                        "unknown op 'conv3d'");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "maxpool", "stride": 2, "pad": 0,
                        "ceil_mode": false, )" +
                            files + "}]}",
                        "case 'a': missing key 'kernel'");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "maxpool", "kernel": 2, "stride": 0,
                        "pad": 0, "ceil_mode": false, )" +
                            files + "}]}",
                        "'stride' must be an integer in 1..8");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "maxpool", "kernel": 2, "stride": 2,
                        "pad": 0, "ceil_mode": 1, )" +
                            files + "}]}",
                        "'ceil_mode' must be true or false");
  expect_manifest_error(
      R"({"cases": [{"name": "a", "op": "fc", "lo": 5, "hi": 4, )" + files + "}]}",
      "'hi' must be an integer in 5..127");
  expect_manifest_error(
      R"({"cases": [{"name": "a", "op": "fc", "lo": 0, "hi": 4, )" + files + "}]}",
      "case 'a' files: missing key 'weights'");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "maxpool", "kernel": 2, "stride": 2,
                        "pad": [0, 1, 1], "ceil_mode": false, )" +
                            files + "}]}",
                        "'pad' must be an integer in 0..10 or four of them");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "conv", "kernel": 3, "stride": 1,
                        "pad": [0, 1, -1, 0], "groups": 2, )" +
                            files + "}]}",
                        "'pad' must be an integer in 0..10 or four of them");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "conv", "kernel": 3, "stride": 1,
                        "pad": [0, 1, 1, 0], "groups": 0, )" +
                            files + "}]}",
                        "'groups' must be an integer in 1..1024");
  expect_manifest_error(
      R"({"cases": [{"name": "a", "op": "add", "lo": 0, "hi": 6, )" + files + "}]}",
      "case 'a' files: missing key 'input_b'");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "add", )" + files + "}]}",
                        "case 'a': missing key 'lo'");
  expect_manifest_error(R"({"cases": [{"name": "a b", "op": "avgpool"}]})",
                        "'name' must be non-empty");
  expect_manifest_error(R"({"cases": [{"name": "a", "op": "maxpool", "kernel": 2, "stride": 2,
                        "pad": 0, "ceil_mode": false, )" +
                            files +
                            R"(}, {"name": "a", "op": "avgpool", "kernel": 2, "stride": 2,
                        "pad": 0, "ceil_mode": false, )" +
                            files + "}]}",
                        "case 'a' appears twice");
}

TEST(ReferenceManifest, MissingManifestIsAnErrorNamingTheFile) {
  const fs::path path = kReferenceDir / "no_such_manifest.json";
  try {
    load_manifest(path);
    FAIL() << "loaded a manifest that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_manifest.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
