// SPDX-License-Identifier: Apache-2.0
// The bundle (strata/bundle.hpp, docs/bundle.md) and the driver library
// strata_rt (strata_rt.h) on a device whose runs execute on the ISA
// simulator (strata/isa_device.hpp): every example network compiled, bundled,
// placed at an address other than 0 (so every relocation is exercised), run
// through strata_run and compared element by element with the golden model;
// bundles for other hardware, impossible placements and malformed bundles
// refused with the field named; a hardware error reported with the failing
// instruction and the device usable afterwards; a hung run aborted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "strata/bundle.hpp"
#include "strata/compiler.hpp"
#include "strata/csr_map.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa_device.hpp"
#include "strata/network.hpp"
#include "strata_isa.h"
#include "strata_rt.h"
#include "sw_test_util.hpp"

namespace strata {
namespace {

const std::string kSource = STRATA_SOURCE_DIR;

class Driver : public test::TempDirTest {
 protected:
  Network load(const std::string& name) {
    const std::string yaml = kSource + "/examples/" + name + ".yaml";
    generate_network(yaml, path(name), GenOptions{.seed = 5});
    return load_network(yaml, {path(name), true});
  }
};

HwTarget config(const std::string& name) {
  return HwTarget::from_yaml(kSource + "/config/" + name + ".yaml");
}

// The block's place in device memory in these tests: not 0, a multiple of the alignment.
constexpr uint64_t kBase = 5 * kBundleBlockAlign;

std::vector<int8_t> vec(std::span<const int8_t> v) { return {v.begin(), v.end()}; }

std::vector<int8_t> flat(const std::vector<Tensor<int8_t>>& images) {
  std::vector<int8_t> v;
  for (const Tensor<int8_t>& t : images) v.insert(v.end(), t.values().begin(), t.values().end());
  return v;
}

TEST_F(Driver, EveryExampleRunsFromItsBundleAtAnotherAddress) {
  for (const auto& [name, batch] :
       std::vector<std::pair<std::string, int>>{{"cifar10_quick", 1},
                                                {"cifar10_quick", 3},
                                                {"lenet5", 2},
                                                {"strided_net", 1},
                                                {"residual_net", 1},
                                                {"inverted_residual_net", 2},
                                                {"table_net", 2},
                                                {"imagenet_small", 1}}) {
    SCOPED_TRACE(fmt::format("{} batch {}", name, batch));
    const Network net = load(name);
    CompileOptions co;
    co.batch = batch;
    const Program prog = compile(net, HwTarget::defaults(), co);
    const std::vector<uint8_t> bytes = make_bundle(prog);
    strata_bundle b{};
    strata_error err{};
    ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &err), STRATA_OK) << err.text;
    EXPECT_EQ(b.instructions, prog.instructions.size());
    EXPECT_EQ(b.batch, static_cast<uint32_t>(batch));
    EXPECT_EQ(b.block_bytes, prog.image.size());
    EXPECT_EQ(std::string(b.network), net.name);
    EXPECT_EQ(std::string(b.config), "default");
    EXPECT_EQ(strata_input_elements(&b), static_cast<uint64_t>(shape_elements(net.input_shape)));
    EXPECT_EQ(strata_output_elements(&b),
              static_cast<uint64_t>(shape_elements(net.output_shape())));

    IsaDevice device(HwTarget::defaults(), kBase + prog.image.size());
    const strata_hal hal = device.hal();
    strata_device dev{};
    ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK) << dev.error.text;
    strata_network loaded{};
    ASSERT_EQ(strata_load(&dev, &b, kBase, prog.image.size(), &loaded), STRATA_OK)
        << dev.error.text;
    // Two runs: a batch of `batch` images, then one image (the rest run on zeros).
    const Tensor<int8_t> images = random_images(net.input_shape, batch, 11);
    std::vector<Tensor<int8_t>> inputs;
    for (int i = 0; i < batch; ++i) {
      std::vector<int8_t> v(images.values().begin() + i * shape_elements(net.input_shape),
                            images.values().begin() + (i + 1) * shape_elements(net.input_shape));
      inputs.emplace_back(net.input_shape, std::move(v));
    }
    for (const uint32_t images_run : {static_cast<uint32_t>(batch), 1u}) {
      const std::vector<int8_t> in =
          flat(std::vector<Tensor<int8_t>>(inputs.begin(), inputs.begin() + images_run));
      std::vector<int8_t> out(images_run * strata_output_elements(&b), 0x55);
      ASSERT_EQ(strata_run(&loaded, in.data(), in.size(), out.data(), out.size(), images_run),
                STRATA_OK)
          << dev.error.text;
      EXPECT_TRUE(device.problems().empty()) << device.problems();
      for (uint32_t i = 0; i < images_run; ++i) {
        const Tensor<int8_t> want = run_network(net, inputs[i]);
        const std::vector<int8_t> got(out.begin() + i * want.size(),
                                      out.begin() + (i + 1) * want.size());
        ASSERT_EQ(got, vec(want.values())) << "image " << i;
      }
    }
    uint64_t counters[STRATA_PERF_COUNTERS] = {};
    ASSERT_EQ(strata_read_counters(&dev, counters), STRATA_OK);
    EXPECT_EQ(counters[STRATA_PERF_INSTRUCTIONS_INDEX], prog.instructions.size());
    // Nothing below the block was touched: the program runs where it was placed.
    for (uint64_t a = 0; a < kBase; ++a) ASSERT_EQ(device.memory()[a], 0) << a;
  }
}

TEST_F(Driver, ABundleForOtherHardwareIsRefusedNamingTheField) {
  const Network net = load("lenet5");
  IsaDevice device(HwTarget::defaults(), 1 << 22);
  const strata_hal hal = device.hal();
  strata_device dev{};
  ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK);
  const struct {
    std::string config;
    std::string text;
  } cases[] = {
      {"p4n4", "the bundle was compiled for P (CFG_PES) = 4, the device has 8"},
      {"sparse",
       "the bundle was compiled for a sparse build (CFG_FEATURES.SPARSE) = 1, the "
       "device has 0"},
      {"p16n16", "the bundle was compiled for P (CFG_PES) = 16, the device has 8"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.config);
    const std::vector<uint8_t> bytes = make_bundle(compile(net, config(c.config)));
    strata_bundle b{};
    ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &dev.error), STRATA_OK);
    strata_network loaded{};
    EXPECT_EQ(strata_load(&dev, &b, 0, 1 << 22, &loaded), STRATA_E_CONFIG);
    EXPECT_EQ(std::string(dev.error.text), c.text);
    EXPECT_EQ(dev.error.status, STRATA_E_CONFIG);
  }
  // A configuration with smaller memories runs on the larger device.
  HwTarget small = HwTarget::defaults();
  small.bank_depth /= 2;
  small.name = "half_banks";
  const std::vector<uint8_t> bytes = make_bundle(compile(net, small));
  strata_bundle b{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &dev.error), STRATA_OK);
  EXPECT_EQ(strata_check_config(&dev, &b), STRATA_OK) << dev.error.text;
}

// Table activations: a bundle that uses them is refused by a device without
// the table unit (CFG_FEATURES.ACT_TABLES = 0); one without them still runs there.
TEST_F(Driver, ABundleWithTablesNeedsTheTableUnit) {
  HwTarget bare = HwTarget::defaults();
  bare.act_tables = 0;
  IsaDevice device(bare, 1 << 22);
  const strata_hal hal = device.hal();
  strata_device dev{};
  ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK);
  EXPECT_EQ(dev.hw.act_tables, 0u);
  const std::vector<uint8_t> bytes = make_bundle(compile(load("table_net"), HwTarget::defaults()));
  strata_bundle b{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &dev.error), STRATA_OK);
  // c1, d1, c2, a1 and f1's distinct tables, resident in a slot each.
  EXPECT_GE(b.hw.act_tables, 1u);
  EXPECT_LE(b.hw.act_tables, 5u);
  strata_network loaded{};
  EXPECT_EQ(strata_load(&dev, &b, 0, 1 << 22, &loaded), STRATA_E_CONFIG);
  EXPECT_EQ(std::string(dev.error.text),
            fmt::format("the bundle was compiled for activation tables (CFG_FEATURES.ACT_TABLES) "
                        "<= {}, the device has 0",
                        b.hw.act_tables));
  const std::vector<uint8_t> plain = make_bundle(compile(load("lenet5"), HwTarget::defaults()));
  ASSERT_EQ(strata_bundle_parse(&b, plain.data(), plain.size(), &dev.error), STRATA_OK);
  EXPECT_EQ(b.hw.act_tables, 0u);
  EXPECT_EQ(strata_check_config(&dev, &b), STRATA_OK) << dev.error.text;
}

TEST_F(Driver, ImpossiblePlacementsChangeNoDeviceMemory) {
  const Network net = load("lenet5");
  const Program prog = compile(net, HwTarget::defaults());
  const std::vector<uint8_t> bytes = make_bundle(prog);
  strata_bundle b{};
  strata_error err{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &err), STRATA_OK);
  IsaDevice device(HwTarget::defaults(), 1 << 22);
  const strata_hal hal = device.hal();
  strata_device dev{};
  ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK);
  strata_network loaded{};
  EXPECT_EQ(strata_load(&dev, &b, 64, 1 << 22, &loaded), STRATA_E_PLACEMENT);
  EXPECT_EQ(std::string(dev.error.text),
            "the block's device address is not a multiple of 4096 bytes");
  EXPECT_EQ(strata_load(&dev, &b, 0, prog.image.size() - 1, &loaded), STRATA_E_PLACEMENT);
  EXPECT_EQ(std::string(dev.error.text),
            fmt::format("the bundle needs {} bytes of device memory, fewer were given",
                        prog.image.size()));
  const uint64_t top = (uint64_t{1} << 40) - kBundleBlockAlign;
  EXPECT_EQ(strata_load(&dev, &b, top, uint64_t{1} << 30, &loaded), STRATA_E_PLACEMENT);
  EXPECT_TRUE(test::contains(dev.error.text, "beyond its 40-bit field")) << dev.error.text;
  for (uint8_t v : device.memory()) ASSERT_EQ(v, 0);
  // A run on a network that was never loaded.
  int8_t x = 0;
  EXPECT_EQ(strata_run(&loaded, &x, 1, &x, 1, 1), STRATA_E_NOT_LOADED);
}

// A bundle's bytes with the CRC recomputed (after a deliberate change).
void fix_crc(std::vector<uint8_t>& b) {
  for (int i = 0; i < 4; ++i) b[STRATA_BH_CRC32 + i] = 0;
  const uint32_t crc = strata_crc32(0, b.data(), b.size());
  for (int i = 0; i < 4; ++i) b[STRATA_BH_CRC32 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  strata_bundle b{};
  strata_error err{};
  const strata_status s = strata_bundle_parse(&b, bytes.data(), bytes.size(), &err);
  return s == STRATA_OK ? "" : err.text;
}

// A network of two outputs (examples/two_heads.yaml): a version 2 bundle that
// lists both (offset, shape, layout, scale); the driver reads each of them,
// equal to the golden model's, and refuses an output it does not have. Version 2
// forms that are wrong are refused naming what.
TEST_F(Driver, ABundleListsEveryOutputAndTheDriverReadsEach) {
  const Network net = load("two_heads");
  ASSERT_EQ(net.output_count(), 2u);
  CompileOptions co;
  co.batch = 2;
  const Program prog = compile(net, HwTarget::defaults(), co);
  ASSERT_EQ(prog.outputs.size(), 2u);
  const std::vector<uint8_t> bytes = make_bundle(prog, BundleScales{0.5f, {0.25f, 0.125f}});
  strata_bundle b{};
  strata_error err{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &err), STRATA_OK) << err.text;
  EXPECT_EQ(strata_le16(bytes.data() + STRATA_BH_VERSION), 2u);
  ASSERT_EQ(b.output_count, 2u);
  strata_tensor_info outs[3]{};
  ASSERT_EQ(strata_bundle_output(&b, 0, &outs[0]), STRATA_OK);
  ASSERT_EQ(strata_bundle_output(&b, 1, &outs[1]), STRATA_OK);
  EXPECT_EQ(strata_bundle_output(&b, 2, &outs[2]), STRATA_E_ARGUMENT);
  EXPECT_EQ(outs[0].layout, static_cast<uint32_t>(STRATA_OUTPUT_ROWS));  // head32, a stored map
  EXPECT_EQ(outs[1].layout, static_cast<uint32_t>(STRATA_OUTPUT_MAP));   // head16, the last
  EXPECT_EQ(outs[0].c, 18u);
  EXPECT_EQ(outs[0].h, 3u);
  EXPECT_EQ(outs[1].h, 6u);
  EXPECT_EQ(outs[0].scale, 0.25f);
  EXPECT_EQ(outs[1].scale, 0.125f);
  EXPECT_EQ(b.output.c, outs[0].c);  // output 0, for code written for one output
  EXPECT_EQ(b.output.addr[1], outs[0].addr[1]);
  EXPECT_EQ(strata_output_elements_at(&b, 0), 18u * 3 * 3);
  EXPECT_EQ(strata_output_elements_at(&b, 1), 18u * 6 * 6);
  EXPECT_EQ(strata_output_elements_at(&b, 2), 0u);
  for (uint32_t j = 0; j < 2; ++j) {
    for (uint32_t i = 0; i < 2; ++i) {
      EXPECT_EQ(outs[j].addr[i], prog.outputs[j].image_addr[i]) << j << " " << i;
    }
  }

  IsaDevice device(HwTarget::defaults(), kBase + prog.image.size());
  const strata_hal hal = device.hal();
  strata_device dev{};
  ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK) << dev.error.text;
  strata_network loaded{};
  ASSERT_EQ(strata_load(&dev, &b, kBase, prog.image.size(), &loaded), STRATA_OK) << dev.error.text;
  const Tensor<int8_t> images = random_images(net.input_shape, 2, 13);
  std::vector<Tensor<int8_t>> inputs;
  for (int i = 0; i < 2; ++i) {
    std::vector<int8_t> v(images.values().begin() + i * shape_elements(net.input_shape),
                          images.values().begin() + (i + 1) * shape_elements(net.input_shape));
    inputs.emplace_back(net.input_shape, std::move(v));
  }
  const std::vector<int8_t> in = flat(inputs);
  std::vector<int8_t> out0(2 * strata_output_elements(&b), 0x55);
  ASSERT_EQ(strata_run(&loaded, in.data(), in.size(), out0.data(), out0.size(), 2), STRATA_OK)
      << dev.error.text;
  for (uint32_t i = 0; i < 2; ++i) {
    const std::vector<Tensor<int8_t>> want = run_network_outputs(net, inputs[i]);
    ASSERT_EQ(want.size(), 2u);
    EXPECT_EQ(std::vector<int8_t>(out0.begin() + i * want[0].size(),
                                  out0.begin() + (i + 1) * want[0].size()),
              vec(want[0].values()))
        << "image " << i << ", output 0 through strata_run";
    for (uint32_t j = 0; j < 2; ++j) {
      std::vector<int8_t> got(static_cast<size_t>(strata_output_elements_at(&b, j)), 0x55);
      ASSERT_EQ(strata_read_output_at(&loaded, i, j, got.data()), STRATA_OK) << dev.error.text;
      EXPECT_EQ(got, vec(want[j].values())) << "image " << i << ", output " << j;
    }
  }
  std::vector<int8_t> none(16);
  EXPECT_EQ(strata_read_output_at(&loaded, 0, 2, none.data()), STRATA_E_ARGUMENT);
  EXPECT_EQ(std::string(dev.error.text), "output 2 is beyond the network's outputs");

  const auto patched = [&](size_t at, std::vector<uint8_t> value) {
    std::vector<uint8_t> p = bytes;
    std::copy(value.begin(), value.end(), p.begin() + static_cast<long>(at));
    fix_crc(p);
    return parse_error(p);
  };
  const uint32_t tensors = strata_le32(bytes.data() + STRATA_BH_TENSOR_TABLE);
  EXPECT_EQ(patched(STRATA_BH_VERSION, {1, 0}),
            "malformed bundle: the tensor table must hold the input and the output, inside the "
            "file");
  EXPECT_EQ(patched(STRATA_BH_TENSOR_COUNT, {18, 0, 0, 0}),
            "malformed bundle: the tensor table must hold the input and 1 to 16 outputs, inside "
            "the file");
  EXPECT_EQ(patched(STRATA_BH_TENSOR_COUNT, {1, 0, 0, 0}),
            "malformed bundle: the tensor table must hold the input and 1 to 16 outputs, inside "
            "the file");
  EXPECT_EQ(patched(tensors + 2 * STRATA_BUNDLE_TENSOR_BYTES + STRATA_BT_KIND, {0}),
            "malformed bundle: tensor 2: the entries after the first must be outputs");
  EXPECT_EQ(patched(tensors + 2 * STRATA_BUNDLE_TENSOR_BYTES + STRATA_BT_LAYOUT, {9}),
            "malformed bundle: tensor 2: an output layout that is not one");
  // Output 0's rows read from the instructions: not an output region.
  EXPECT_EQ(
      patched(tensors + STRATA_BUNDLE_TENSOR_BYTES + STRATA_BT_ADDR, {0, 0, 0, 0, 0, 0, 0, 0}),
      "malformed bundle: output image 0: its bytes do not lie inside one region of its "
      "kind");
}

TEST_F(Driver, MalformedBundlesAreRefusedNamingWhatIsWrong) {
  const Network net = load("strided_net");
  const Program prog = compile(net, HwTarget::defaults());
  const std::vector<uint8_t> good = make_bundle(prog);
  ASSERT_EQ(parse_error(good), "");
  const auto patched = [&](size_t at, std::vector<uint8_t> value, bool crc = true) {
    std::vector<uint8_t> b = good;
    std::copy(value.begin(), value.end(), b.begin() + static_cast<long>(at));
    if (crc) fix_crc(b);
    return parse_error(b);
  };
  const uint32_t regions = strata_le32(good.data() + STRATA_BH_REGION_TABLE);
  const uint32_t relocs = strata_le32(good.data() + STRATA_BH_RELOC_TABLE);
  const uint32_t tensors = strata_le32(good.data() + STRATA_BH_TENSOR_TABLE);
  EXPECT_EQ(patched(0, {'X'}, false), "not a bundle: the file does not start with 'STRB'");
  EXPECT_EQ(patched(STRATA_BH_VERSION, {3, 0}, false),
            "bundle format version 3, this driver reads versions 1 and 2");
  // A rows output is version 2's: refused in a version 1 bundle.
  EXPECT_EQ(patched(tensors + STRATA_BUNDLE_TENSOR_BYTES + STRATA_BT_LAYOUT, {STRATA_OUTPUT_ROWS}),
            "malformed bundle: tensor 1: a rows output in a version 1 bundle");
  // Version 1 holds exactly the input and one output.
  EXPECT_EQ(patched(STRATA_BH_TENSOR_COUNT, {3, 0, 0, 0}),
            "malformed bundle: the tensor table must hold the input and the output, inside the "
            "file");
  EXPECT_EQ(patched(good.size() - 1, {static_cast<uint8_t>(good.back() ^ 1)}, false),
            "corrupt bundle: the CRC-32 does not match");
  EXPECT_EQ(parse_error(std::vector<uint8_t>(good.begin(), good.end() - 64)),
            fmt::format("truncated or padded bundle: the header says {} bytes", good.size()));
  EXPECT_EQ(parse_error(std::vector<uint8_t>(good.begin(), good.begin() + 100)),
            "not a bundle: 100 bytes, shorter than the 256-byte header");
  EXPECT_EQ(patched(STRATA_BH_BATCH, {9, 0, 0, 0}), "malformed bundle: batch outside 1..P");
  EXPECT_EQ(patched(STRATA_BH_BLOCK_ALIGN, {3, 0, 0, 0}),
            "malformed bundle: the block alignment is not a power of two of at least 64");
  EXPECT_EQ(patched(200, {1}), "malformed bundle: reserved header bytes are not 0");
  EXPECT_EQ(patched(STRATA_BH_REGION_TABLE, {0xF0, 0xFF, 0xFF, 0}),
            "malformed bundle: the region table is empty or outside the file");
  // The second region (parameters) made to reach past the block.
  EXPECT_EQ(
      patched(regions + STRATA_BUNDLE_REGION_BYTES + STRATA_BR_SIZE, {0, 0, 0, 0, 0, 1, 0, 0}),
      "malformed bundle: region 1: not 64-byte aligned, or beyond the block");
  EXPECT_EQ(patched(regions + STRATA_BR_KIND, {4}), "malformed bundle: no program region");
  // The first relocation moved to another instruction: its LOAD is left without one.
  const uint32_t first = strata_le32(good.data() + relocs + STRATA_BL_INDEX);
  EXPECT_EQ(patched(relocs + STRATA_BL_INDEX, {0xFF, 0xFF, 0, 0}),
            fmt::format("malformed bundle: instruction {} (LOAD): external memory without a "
                        "relocation",
                        first));
  EXPECT_EQ(patched(relocs + STRATA_BL_INDEX, {0, 0, 0, 0}),
            "malformed bundle: relocation 0: its instruction is not a LOAD or STORE of external "
            "memory");
  EXPECT_EQ(patched(relocs + STRATA_BL_WIDTH, {39, 0}),
            "malformed bundle: relocation 0: it names another field than ext_addr");
  // That LOAD made to read 65535 rows: beyond the block.
  const uint32_t program = strata_le32(good.data() + regions + STRATA_BR_CONTENT);
  EXPECT_EQ(patched(program + first * 64 + STRATA_LOAD_ROWS_LSB / 8, {0xFF, 0xFF}),
            fmt::format("malformed bundle: instruction {} (LOAD): its rows reach beyond the "
                        "block",
                        first));
  EXPECT_EQ(patched(tensors + STRATA_BT_ADDR, {0, 0, 0, 0, 0, 1, 0, 0}),
            "malformed bundle: input image 0: its bytes do not lie inside one region of its kind");
  EXPECT_EQ(patched(tensors + STRATA_BT_LAYOUT, {7}),
            "malformed bundle: tensor 0: an input layout that is not one");
  EXPECT_EQ(patched(tensors + STRATA_BUNDLE_TENSOR_BYTES + STRATA_BT_C, {0, 0, 0, 0}),
            "malformed bundle: tensor 1: a dimension is 0");
  // Every length and, with the CRC recomputed, every byte of the header and
  // the tables set to a random value: refused with a message, or accepted (and
  // then loaded and run to a status), never a read or write out of bounds (the
  // sanitizer build runs this test too).
  std::mt19937 rng(7);
  for (size_t n = 0; n < good.size(); n += 1 + n / 8) {
    EXPECT_NE(parse_error(std::vector<uint8_t>(good.begin(), good.begin() + n)), "") << n;
  }
  // The same for every byte of the first 32 instructions: a program the
  // parser accepts moves no byte outside its block (the device's memory
  // around the block stays zero).
  const size_t tables_end = tensors + 2 * STRATA_BUNDLE_TENSOR_BYTES;
  std::vector<size_t> places;
  for (size_t at = 0; at < tables_end; ++at) {
    if (at < STRATA_BH_CRC32 || at >= STRATA_BH_CRC32 + 4) places.push_back(at);
  }
  for (size_t at = program; at < program + std::min<size_t>(32, prog.instructions.size()) * 64;
       ++at) {
    places.push_back(at);
  }
  constexpr uint64_t kGuard = 1 << 16;
  int accepted = 0;
  for (const size_t at : places) {
    std::vector<uint8_t> b = good;
    b[at] = static_cast<uint8_t>(b[at] ^ (1 + rng() % 255));
    fix_crc(b);
    strata_bundle parsed{};
    strata_error err{};
    if (strata_bundle_parse(&parsed, b.data(), b.size(), &err) != STRATA_OK) {
      EXPECT_GT(std::strlen(err.text), 10u) << at;
      continue;
    }
    if (accepted++ % 16 != 0) continue;  // one in 16 accepted is also loaded and run
    IsaDevice device(HwTarget::defaults(), kBase + prog.image.size() + kGuard);
    const strata_hal hal = device.hal();
    strata_device dev{};
    ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK);
    strata_network loaded{};
    if (strata_load(&dev, &parsed, kBase, prog.image.size(), &loaded) != STRATA_OK) continue;
    std::vector<int8_t> in(strata_input_elements(&parsed)), out(strata_output_elements(&parsed));
    strata_run(&loaded, in.data(), in.size(), out.data(), out.size(), 1);
    const std::vector<uint8_t>& m = device.memory();
    EXPECT_TRUE(std::all_of(m.begin(), m.begin() + kBase, [](uint8_t v) { return v == 0; }) &&
                std::all_of(m.end() - kGuard, m.end(), [](uint8_t v) { return v == 0; }))
        << "byte " << at << " changed: a run wrote outside its block";
  }
  // Names, a scale, a kernel of an unused layout: some bytes change nothing checked.
  EXPECT_GT(accepted, 0);
  std::cout << "[ BUNDLE   ] " << places.size() << " bytes changed one at a time: " << accepted
            << " accepted\n";
}

TEST_F(Driver, AHardwareErrorNamesTheInstructionAndTheNextRunIsCorrect) {
  const Network net = load("lenet5");
  const Program prog = compile(net, HwTarget::defaults());
  const std::vector<uint8_t> bytes = make_bundle(prog);
  strata_bundle b{};
  strata_error err{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &err), STRATA_OK);
  IsaDevice device(HwTarget::defaults(), kBase + prog.image.size());
  const strata_hal hal = device.hal();
  strata_device dev{};
  ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK);
  strata_network loaded{};
  ASSERT_EQ(strata_load(&dev, &b, kBase, prog.image.size(), &loaded), STRATA_OK);
  // The first LOAD from external memory made to read beyond the memory.
  size_t first_load = 0;
  while (prog.instructions[first_load].opcode_value() !=
         static_cast<uint64_t>(isa::Opcode::kLoad)) {
    ++first_load;
  }
  uint8_t* instr = &device.memory()[kBase + first_load * 64];
  instr[20] = 0x7F;  // ext_addr bits 160..167: far past the end
  const Tensor<int8_t> image = random_images(net.input_shape, 1, 3);
  std::vector<int8_t> out(strata_output_elements(&b));
  ASSERT_EQ(strata_run(&loaded, image.data(), image.size(), out.data(), out.size(), 1),
            STRATA_E_HARDWARE);
  EXPECT_EQ(dev.error.hw_code, STRATA_HW_ERR_AXI_READ);
  EXPECT_EQ(dev.error.hw_index, first_load);
  const int tag = static_cast<int>(isa::decode_header(prog.instructions[first_load]).tag);
  EXPECT_EQ(std::string(dev.error.text),
            fmt::format("the accelerator stopped with error AXI_READ at instruction {} (LOAD of "
                        "layer {}): SLVERR/DECERR on an instruction fetch or a load",
                        first_load, tag));
  EXPECT_FALSE(device.irq()) << "the interrupt is left pending";
  // Loaded again (the program restored), the same device runs correctly.
  ASSERT_EQ(strata_load(&dev, &b, kBase, prog.image.size(), &loaded), STRATA_OK);
  ASSERT_EQ(strata_run(&loaded, image.data(), image.size(), out.data(), out.size(), 1), STRATA_OK)
      << dev.error.text;
  const Tensor<int8_t> want =
      run_network(net, Tensor<int8_t>(net.input_shape, vec(image.values())));
  EXPECT_EQ(out, vec(want.values()));
}

// A device that never finishes: the wait gives up after the timeout, aborts
// the run with a START (BUSY_START) and says so.
TEST_F(Driver, AHungRunTimesOutAndIsAborted) {
  struct Stuck {
    bool busy = false;
    int starts = 0;
  } stuck;
  strata_hal hal{};
  hal.ctx = &stuck;
  hal.read32 = [](void* ctx, uint32_t offset) -> uint32_t {
    auto* s = static_cast<Stuck*>(ctx);
    if (offset == csr::kId) return 0x53545241u;
    if (offset == csr::kCfgPes || offset == csr::kCfgLanes) return 8;
    if (offset == csr::kStatus) return s->busy ? csr::kStatusBusy : 0u;
    return 0;
  };
  hal.write32 = [](void* ctx, uint32_t offset, uint32_t value) {
    auto* s = static_cast<Stuck*>(ctx);
    if (offset == csr::kCtrl && (value & csr::kCtrlStart) != 0) {
      ++s->starts;
      s->busy = s->starts == 1;  // the first start hangs; the abort ends it
    }
  };
  hal.mem_write = [](void*, uint64_t, const void*, size_t) { return 0; };
  hal.mem_read = [](void*, uint64_t, void*, size_t) { return 0; };
  strata_device dev{};
  ASSERT_EQ(strata_open(&dev, &hal), STRATA_OK);
  dev.timeout = 1000;
  ASSERT_EQ(strata_start(&dev, 0, 10), STRATA_OK);
  EXPECT_EQ(strata_wait(&dev, nullptr), STRATA_E_TIMEOUT);
  EXPECT_EQ(std::string(dev.error.text),
            "no end of the run within the timeout of 1000 (the run was aborted)");
  EXPECT_EQ(stuck.starts, 2);
  EXPECT_FALSE(stuck.busy);
  // Not a Strata device.
  hal.read32 = [](void*, uint32_t) -> uint32_t { return 0xDEADBEEFu; };
  EXPECT_EQ(strata_open(&dev, &hal), STRATA_E_NO_DEVICE);
  EXPECT_EQ(std::string(dev.error.text),
            "no Strata accelerator: the ID register reads 0xdeadbeef, not 0x53545241 ('STRA')");
}

TEST(DriverText, EveryErrorCodeAndStatusHasANameAndAMeaning) {
  for (uint32_t code = 0; code < 256; ++code) {
    const std::string_view name = csr::to_string(static_cast<csr::ErrorCode>(code));
    if (name == "(unknown error code)") {
      EXPECT_EQ(strata_hw_error_name(code), nullptr);
      continue;
    }
    ASSERT_NE(strata_hw_error_name(code), nullptr) << code;
    EXPECT_EQ(std::string_view(strata_hw_error_name(code)), name);
    ASSERT_NE(strata_hw_error_text(code), nullptr);
    EXPECT_GT(std::strlen(strata_hw_error_text(code)), 5u);
  }
  for (int s = STRATA_OK; s <= STRATA_E_NOT_LOADED; ++s) {
    EXPECT_EQ(std::string(strata_status_name(static_cast<strata_status>(s))).rfind("STRATA_", 0),
              0u);
  }
}

}  // namespace
}  // namespace strata
