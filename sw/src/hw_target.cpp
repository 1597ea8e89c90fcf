// SPDX-License-Identifier: Apache-2.0
// HwTarget: defaults from hw_config.hpp, loading from a configuration YAML.
#include "strata/hw_target.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>

#include "strata/error.hpp"
#include "strata/hw_config.hpp"

namespace strata {
namespace {

// Keys of a configuration file (scripts/gen_config.py) that the target does not
// use but that must have the value the compiler and simulator are written for.
const std::map<std::string, int> kFixedKeys = {{"data_width", hw::kDataWidth},
                                               {"acc_width", hw::kAccWidth},
                                               {"mult_width", hw::kMultWidth},
                                               {"shift_width", hw::kShiftWidth},
                                               {"max_shift", hw::kMaxShift}};

int line_of(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }

void require_range(const std::string& what, int64_t v, int64_t lo, int64_t hi,
                   const std::string& why, const ErrorContext& where) {
  if (v < lo || v > hi) {
    throw Error(fmt::format("{} = {} is outside {}..{} ({})", what, v, lo, hi, why), where);
  }
}

HwTarget parse_target(const YAML::Node& root, const std::string& path) {
  HwTarget t;
  const std::map<std::string, int*> ints = {
      {"version", &t.version},
      {"pes", &t.pes},
      {"lanes", &t.lanes},
      {"banks", &t.banks},
      {"bank_depth", &t.bank_depth},
      {"pe_cache_depth", &t.pe_cache_depth},
      {"param_depth", &t.param_depth},
      {"axi_data_width", &t.axi_data_width},
      {"axi_addr_width", &t.axi_addr_width},
      {"max_kernel", &t.max_kernel},
      {"max_pool_kernel", &t.max_pool_kernel},
      {"max_image_width", &t.max_image_width},
  };
  std::set<std::string> seen;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const ErrorContext where{path, line_of(kv.first), ""};
    seen.insert(key);
    if (key == "name") {
      t.name = kv.second.as<std::string>();
      continue;
    }
    if (key == "sparse") {  // optional, default false (docs/sparsity.md)
      try {
        t.sparse = kv.second.as<bool>();
      } catch (const YAML::Exception&) {
        throw Error("'sparse' must be true or false", where);
      }
      continue;
    }
    if (key == "act_tables") {  // optional, default 0: no table unit
      try {
        t.act_tables = kv.second.as<int>();
      } catch (const YAML::Exception&) {
        throw Error("'act_tables' must be an integer", where);
      }
      continue;
    }
    if (key == "pe_fabric_lanes") {  // optional, default 0: a build choice, not in programs
      try {
        t.pe_fabric_lanes = kv.second.as<int>();
      } catch (const YAML::Exception&) {
        throw Error("'pe_fabric_lanes' must be an integer", where);
      }
      continue;
    }
    const auto it = ints.find(key);
    const auto fixed = kFixedKeys.find(key);
    if (it == ints.end() && fixed == kFixedKeys.end()) {
      throw Error(fmt::format("unknown key '{}'", key), where);
    }
    int64_t value = 0;
    try {
      value = kv.second.as<int64_t>();
    } catch (const YAML::Exception&) {
      throw Error(fmt::format("'{}' must be an integer", key), where);
    }
    if (it != ints.end()) {
      if (value < 0 || value > (int64_t{1} << 30)) {
        throw Error(fmt::format("'{}' = {} is out of range", key, value), where);
      }
      *it->second = static_cast<int>(value);
    } else if (value != fixed->second) {
      throw Error(fmt::format("'{}' = {}: the compiler and simulator support only {}", key, value,
                              fixed->second),
                  where);
    }
  }
  for (const auto& [key, ptr] : ints) {
    if (seen.count(key) == 0) throw Error(fmt::format("missing key '{}'", key), {path, 0, ""});
  }
  if (t.name.empty()) t.name = std::filesystem::path(path).stem().string();
  try {
    t.validate();
  } catch (const Error& e) {
    throw Error(e.message(), ErrorContext{path, 0, ""});
  }
  return t;
}

}  // namespace

HwTarget HwTarget::defaults() {
  HwTarget t;
  t.name = hw::kConfigName;
  t.version = hw::kVersion;
  t.pes = hw::kPes;
  t.lanes = hw::kLanes;
  t.banks = hw::kBanks;
  t.bank_depth = hw::kBankDepth;
  t.pe_cache_depth = hw::kPeCacheDepth;
  t.sparse = hw::kSparse;
  t.pe_fabric_lanes = hw::kPeFabricLanes;
  t.act_tables = hw::kActTables;
  t.param_depth = hw::kParamDepth;
  t.axi_data_width = hw::kAxiDataWidth;
  t.axi_addr_width = hw::kAxiAddrWidth;
  t.max_kernel = hw::kMaxKernel;
  t.max_pool_kernel = hw::kMaxPoolKernel;
  t.max_image_width = hw::kMaxImageWidth;
  return t;
}

void HwTarget::validate() const {
  const ErrorContext where{name.empty() ? std::string("target") : "target '" + name + "'", 0, ""};
  require_range("pes", pes, 1, 64, "PE ids are 6 bits", where);
  if (sparse && pes > 63) {
    throw Error(fmt::format("sparse with pes = {}: the packed-row schedule is LOAD CONTROL "
                            "destination P, and dst_id addresses 0..63",
                            pes),
                where);
  }
  require_range("lanes", lanes, 1, 64, "one word is N bytes", where);
  require_range("pe_fabric_lanes", pe_fabric_lanes, 0, lanes, "lanes of a PE", where);
  if (pes != lanes) {
    throw Error(fmt::format("pes = {} and lanes = {}: this version requires P = N (one output "
                            "pixel of a pass is one bank word)",
                            pes, lanes),
                where);
  }
  require_range("version", version, 0, 65535, "16-bit CONFIG field", where);
  require_range("banks", banks, 2, 64, "bank ids are 6 bits; a layer needs two banks", where);
  require_range("bank_depth", bank_depth, 1, 65536, "16-bit word addresses", where);
  require_range("pe_cache_depth", pe_cache_depth, 1, 65536, "16-bit word addresses", where);
  require_range("param_depth", param_depth, 1, 65536, "16-bit channel indices", where);
  if (axi_data_width != 32 && axi_data_width != 64 && axi_data_width != 128 &&
      axi_data_width != 256 && axi_data_width != 512) {
    throw Error(fmt::format("axi_data_width = {} must be 32, 64, 128, 256 or 512", axi_data_width),
                where);
  }
  if (lanes % beat_bytes() != 0) {
    throw Error(fmt::format("a word of lanes = {} bytes must be a whole number of AXI beats "
                            "(axi_data_width = {} bits): every word then starts on a beat",
                            lanes, axi_data_width),
                where);
  }
  require_range("axi_addr_width", axi_addr_width, 16, 40, "40-bit external address fields", where);
  require_range("max_kernel", max_kernel, 1, 15, "4-bit kernel fields", where);
  require_range("max_pool_kernel", max_pool_kernel, 1, 15, "4-bit pooling fields", where);
  require_range("max_image_width", max_image_width, 1, 65535, "16-bit widths", where);
  require_range("act_tables", act_tables, 0, 64,
                "the table unit's RAM of act_tables x 256 bytes "
                "per lane",
                where);
}

HwTarget HwTarget::from_yaml(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(std::filesystem::exists(path, ec)
                    ? "hardware configuration is not a regular file"
                    : "cannot open hardware configuration (no such file)",
                ErrorContext{path, 0, ""});
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    throw Error(fmt::format("YAML nesting deeper than {} levels", e.depth()),
                ErrorContext{path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("YAML error: {}", e.msg),
                ErrorContext{path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  }
  if (!root.IsMap()) throw Error("a hardware configuration must be a mapping", {path, 0, ""});

  try {
    return parse_target(root, path);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("invalid hardware configuration: {}", e.msg),
                ErrorContext{path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  }
}

}  // namespace strata
