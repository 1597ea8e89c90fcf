// SPDX-License-Identifier: Apache-2.0
// Devices as data (config/devices/*.yaml, strata/device.hpp): every shipped
// device loads with figures a planner can use, a device is found by name or
// path, and malformed device files are errors naming the file, the line and
// the problem.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "strata/device.hpp"
#include "strata/error.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

const std::string kDevices = std::string(STRATA_SOURCE_DIR) + "/config/devices";

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The parts the planner issue names: three ECP5 sizes, two Xilinx, one Gowin.
TEST(Devices, ShippedDevicesLoad) {
  const std::vector<std::string> names = Device::list(kDevices);
  for (const char* want : {"ecp5-25f", "ecp5-45f", "ecp5-85f", "xc7z020", "xczu3eg", "gw2a-18"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const auto& n : names) {
    const Device d = Device::find(n, kDevices);
    EXPECT_EQ(d.name, n);
    EXPECT_GT(d.int8_multipliers(), 0) << n;
    EXPECT_GT(d.brams, 0) << n;
    EXPECT_GE(d.bram_bits, 16384) << n;
    EXPECT_GT(d.ext_mbytes_s, 0) << n;
  }
  // The measured part (docs/fpga.md): the figures nextpnr reports for it.
  const Device e85 = Device::find("ecp5-85f", kDevices);
  EXPECT_EQ(e85.dsps, 156);
  EXPECT_EQ(e85.brams, 208);
  EXPECT_EQ(e85.luts, 83640);
  EXPECT_TRUE(e85.fmax_measured);
  EXPECT_FALSE(Device::find("xc7z020", kDevices).fmax_measured);
}

class DeviceErrors : public test::TempDirTest {
 protected:
  // Loading `text` fails with an error naming the file, `line` (0: any) and `part`.
  void expect_error(const std::string& name, const std::string& text, int line,
                    const std::string& part) {
    const std::string p = write(name + ".yaml", text);
    try {
      Device::from_yaml(p);
      ADD_FAILURE() << "accepted: " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.where().file, p);
      if (line != 0) EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  std::string base_ = read_text(kDevices + "/ecp5-45f.yaml");
};

TEST_F(DeviceErrors, MalformedFilesAreClearErrors) {
  const auto edit = [&](const std::string& from, const std::string& to) {
    return std::regex_replace(base_, std::regex(from), to);
  };
  const int luts_line = 7;  // config/devices/ecp5-45f.yaml
  expect_error("ecp5-45f", edit("\nluts: 43848", "\nluts: many"), luts_line,
               "'luts' must be an integer");
  expect_error("ecp5-45f", edit("\nluts: 43848", "\nluts: -5"), luts_line,
               "'luts' = -5 is outside");
  expect_error("ecp5-45f", edit("\nluts: 43848[^\n]*", ""), 0, "missing key 'luts'");
  expect_error("ecp5-45f", edit("  count: 72", "  count: 72\n  colour: blue"), 13,
               "unknown key 'dsp.colour'");
  expect_error("ecp5-45f", edit("  count: 108\n", ""), 0, "missing key 'bram.count'");
  expect_error("ecp5-45f", edit("\nfmax_mhz: 114", "\nfmax_mhz: 0"), 0, "'fmax_mhz' = 0");
  expect_error("ecp5-45f", edit("\nfmax_measured: true", "\nfmax_measured: maybe"), 0,
               "'fmax_measured' must be true or false");
  expect_error("ecp5-45f", edit("\ndsp:\n  kind: MULT18X18D\n  count: 72\n[^\n]*\n", "\ndsp: 72\n"),
               0, "'dsp' must be a mapping");
  expect_error("other", base_, 0, "differs from the file's name 'other'");
  expect_error("ecp5-45f", "- 1\n- 2\n", 0, "must be a mapping");
  expect_error("ecp5-45f", "name: [unclosed\n", 0, "YAML error");
  expect_error("ecp5-45f", base_ + "luts: 1\n", 0, "given twice");
}

TEST_F(DeviceErrors, UnknownDeviceNamesTheKnownOnes) {
  try {
    Device::find("ecp5-12x", kDevices);
    ADD_FAILURE() << "found";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown device 'ecp5-12x'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("ecp5-85f"), std::string::npos) << e.what();
  }
  // A path is read as a file, whatever directory it is in.
  const std::string p = write("ecp5-45f.yaml", base_);
  EXPECT_EQ(Device::find(p, kDevices).dsps, 72);
}

}  // namespace
}  // namespace strata
