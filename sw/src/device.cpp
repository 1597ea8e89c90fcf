// SPDX-License-Identifier: Apache-2.0
// Device: loading and finding config/devices/*.yaml (strata/device.hpp).
#include "strata/device.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "strata/error.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

int line_of(const YAML::Node& n) { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }

// One key of a mapping: how to read it into the device. Throws with the
// key's line when the value has the wrong type or range.
using Reader = std::function<void(const YAML::Node&, Device&, const ErrorContext&)>;

Reader text(std::string Device::*field) {
  return [field](const YAML::Node& v, Device& d, const ErrorContext& where) {
    if (!v.IsScalar() || v.as<std::string>().empty())
      throw Error("must be a non-empty string", where);
    d.*field = v.as<std::string>();
  };
}

Reader count(int Device::*field, int lo, int hi) {
  return [=](const YAML::Node& v, Device& d, const ErrorContext& where) {
    int64_t x = 0;
    try {
      x = v.as<int64_t>();
    } catch (const YAML::Exception&) {
      throw Error("must be an integer", where);
    }
    if (x < lo || x > hi) throw Error(fmt::format("= {} is outside {}..{}", x, lo, hi), where);
    d.*field = static_cast<int>(x);
  };
}

Reader real(double Device::*field, double lo, double hi) {
  return [=](const YAML::Node& v, Device& d, const ErrorContext& where) {
    double x = 0;
    try {
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      throw Error("must be a number", where);
    }
    if (!(x >= lo && x <= hi)) throw Error(fmt::format("= {} is outside {}..{}", x, lo, hi), where);
    d.*field = x;
  };
}

Reader flag(bool Device::*field) {
  return [=](const YAML::Node& v, Device& d, const ErrorContext& where) {
    try {
      d.*field = v.as<bool>();
    } catch (const YAML::Exception&) {
      throw Error("must be true or false", where);
    }
  };
}

// Reads every key of `node` with `readers` (prefix: "dsp." inside dsp:);
// every reader's key must be present.
void read_mapping(const YAML::Node& node, const std::map<std::string, Reader>& readers,
                  const std::string& prefix, Device& d, const std::string& path) {
  if (!node.IsMap()) {
    throw Error(prefix.empty()
                    ? std::string("a device file must be a mapping of keys")
                    : fmt::format("'{}' must be a mapping", prefix.substr(0, prefix.size() - 1)),
                ErrorContext{path, line_of(node), ""});
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = prefix + kv.first.as<std::string>();
    const ErrorContext where{path, line_of(kv.first), ""};
    const auto it = readers.find(key);
    if (it == readers.end()) throw Error(fmt::format("unknown key '{}'", key), where);
    if (!seen.insert(key).second) throw Error(fmt::format("key '{}' given twice", key), where);
    try {
      it->second(kv.second, d, where);
    } catch (const Error& e) {
      throw Error(fmt::format("'{}' {}", key, e.message()), where);
    }
  }
  for (const auto& [key, reader] : readers) {
    if (key.rfind(prefix, 0) == 0 && key.find('.', prefix.size()) == std::string::npos &&
        seen.count(key) == 0) {
      throw Error(fmt::format("missing key '{}'", key), ErrorContext{path, line_of(node), ""});
    }
  }
}

}  // namespace

Device Device::from_yaml(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw Error(fs::exists(path, ec) ? "device file is not a regular file"
                                     : "cannot open device file (no such file)",
                ErrorContext{path, 0, ""});
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("YAML error: {}", e.msg),
                ErrorContext{path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  }
  constexpr int kMaxCount = 1 << 24;
  const Reader nested = [](const YAML::Node&, Device&, const ErrorContext&) {};
  const std::map<std::string, Reader> readers = {
      {"name", text(&Device::name)},
      {"part", text(&Device::part)},
      {"family", text(&Device::family)},
      {"luts", count(&Device::luts, 1, kMaxCount)},
      {"lut_inputs", count(&Device::lut_inputs, 4, 6)},
      {"ffs", count(&Device::ffs, 1, kMaxCount)},
      {"dsp", nested},
      {"dsp.kind", text(&Device::dsp_kind)},
      {"dsp.count", count(&Device::dsps, 0, kMaxCount)},
      {"dsp.int8_products", count(&Device::int8_per_dsp, 1, 8)},
      {"bram", nested},
      {"bram.kind", text(&Device::bram_kind)},
      {"bram.count", count(&Device::brams, 0, kMaxCount)},
      {"bram.bits", count(&Device::bram_bits, 1024, 1 << 20)},
      {"bram.max_width", count(&Device::bram_max_width, 1, 1024)},
      {"fmax_mhz", real(&Device::fmax_mhz, 1, 2000)},
      {"fmax_measured", flag(&Device::fmax_measured)},
      {"board", text(&Device::board)},
      {"ext_bandwidth_mbytes_s", real(&Device::ext_mbytes_s, 1, 1e6)},
  };
  Device d;
  try {
    read_mapping(root, readers, "", d, path);
    read_mapping(root["dsp"], readers, "dsp.", d, path);
    read_mapping(root["bram"], readers, "bram.", d, path);
  } catch (const YAML::Exception& e) {  // a key that is not a scalar, and the like
    throw Error(fmt::format("invalid device file: {}", e.msg),
                ErrorContext{path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  }
  const std::string stem = fs::path(path).stem().string();
  if (d.name != stem) {
    throw Error(fmt::format("name '{}' differs from the file's name '{}' (--device finds a "
                            "device by its file name)",
                            d.name, stem),
                ErrorContext{path, line_of(root["name"]), ""});
  }
  return d;
}

std::vector<std::string> Device::list(const std::string& devices_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(devices_dir, ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Device Device::find(const std::string& name_or_path, const std::string& devices_dir) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return from_yaml(name_or_path);
  const fs::path file = fs::path(devices_dir) / (name_or_path + ".yaml");
  if (name_or_path.find('/') == std::string::npos && fs::is_regular_file(file, ec)) {
    return from_yaml(file.string());
  }
  std::string known;
  for (const auto& n : list(devices_dir)) known += (known.empty() ? "" : ", ") + n;
  throw Error(fmt::format("unknown device '{}' (no such file, and not one of {}: {})", name_or_path,
                          devices_dir, known.empty() ? "none" : known));
}

}  // namespace strata
