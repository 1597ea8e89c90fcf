// SPDX-License-Identifier: Apache-2.0
// The instruction set in C++ (isa.hpp), the generated field tables, the
// hardware target, and the ISA simulator on hand-assembled programs: every
// error code, deadlock and race detection.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <bit>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/hw_config.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/isa_sim.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;
using namespace isa;

const fs::path kSource = STRATA_SOURCE_DIR;

struct Section {
  std::string name;  // "header" or the opcode in lower case
  const Field* fields;
  size_t count;
};

std::vector<Section> sections() {
  return {{"header", hdr::kFields.data(), hdr::kFields.size()},
          {"load", load::kFields.data(), load::kFields.size()},
          {"compute", compute::kFields.data(), compute::kFields.size()},
          {"store", store::kFields.data(), store::kFields.size()},
          {"end", end::kFields.data(), end::kFields.size()},
          {"config", config::kFields.data(), config::kFields.size()}};
}

int64_t field_max(const Field& f) {
  return f.is_signed ? (int64_t{1} << (f.width - 1)) - 1
                     : static_cast<int64_t>(
                           (f.width >= 63 ? ~uint64_t{0} >> 1 : (uint64_t{1} << f.width) - 1));
}
int64_t field_min(const Field& f) { return f.is_signed ? -(int64_t{1} << (f.width - 1)) : 0; }

int popcount(const Instruction& in) {
  int n = 0;
  for (uint64_t w : in.words) n += std::popcount(w);
  return n;
}

// ---- generated tables vs config/isa.yaml -------------------------------------------------

TEST(IsaFields, MatchConfigIsaYaml) {
  const YAML::Node root = YAML::LoadFile((kSource / "config/isa.yaml").string());
  EXPECT_EQ(root["instruction_bits"].as<int>(), kInstrBits);
  for (const auto& op : root["opcodes"]) {
    const char* name = opcode_name(op.second.as<uint64_t>());
    ASSERT_NE(name, nullptr) << op.first.as<std::string>();
    EXPECT_EQ(name, op.first.as<std::string>());
  }
  for (const Section& s : sections()) {
    const YAML::Node list = root[s.name];
    ASSERT_TRUE(list.IsSequence()) << s.name;
    ASSERT_EQ(list.size(), s.count) << s.name;
    for (size_t i = 0; i < s.count; ++i) {
      const Field& f = s.fields[i];
      EXPECT_EQ(list[i]["name"].as<std::string>(), f.name) << s.name;
      EXPECT_EQ(list[i]["lsb"].as<int>(), f.lsb) << s.name << "." << f.name;
      EXPECT_EQ(list[i]["width"].as<int>(), f.width) << s.name << "." << f.name;
      EXPECT_EQ(list[i]["signed"] ? list[i]["signed"].as<bool>() : false, f.is_signed)
          << s.name << "." << f.name;
    }
  }
  EXPECT_EQ(root["enums"]["compute_dst"]["PE_TRANSPOSE"].as<int>(),
            static_cast<int>(ComputeDst::kPeTranspose));
  EXPECT_EQ(root["enums"]["pool_op"]["AVG"].as<int>(), static_cast<int>(PoolOp::kAvg));
}

// The used-bit masks agree with the descriptors: a bit inside a field of the
// opcode or the header keeps the instruction legal, any other bit does not.
TEST(IsaFields, ReservedBitsAreExactlyTheBitsNoFieldUses) {
  const std::map<std::string, Opcode> ops = {{"load", Opcode::kLoad},
                                             {"compute", Opcode::kCompute},
                                             {"store", Opcode::kStore},
                                             {"end", Opcode::kEnd},
                                             {"config", Opcode::kConfig}};
  for (const Section& s : sections()) {
    if (s.name == "header") continue;
    const Opcode op = ops.at(s.name);
    std::vector<bool> used(kInstrBits, false);
    for (const Section& part : {sections()[0], s}) {
      for (size_t i = 0; i < part.count; ++i) {
        for (int b = 0; b < part.fields[i].width; ++b) used[part.fields[i].lsb + b] = true;
      }
    }
    for (int b = hdr::kOpcode.width; b < kInstrBits; ++b) {
      Instruction in;
      in.set(hdr::kOpcode, static_cast<int64_t>(op));
      in.words[b / 64] |= uint64_t{1} << (b % 64);
      EXPECT_EQ(in.reserved_bits_clear(), used[b]) << s.name << " bit " << b;
    }
  }
  Instruction zero;
  EXPECT_FALSE(zero.reserved_bits_clear()) << "opcode 0 (ILLEGAL) is never legal";
}

// ---- field access --------------------------------------------------------------------------

TEST(Instruction, EveryFieldRoundTripsItsExtremes) {
  for (const Section& s : sections()) {
    for (size_t i = 0; i < s.count; ++i) {
      const Field& f = s.fields[i];
      for (const int64_t v : {field_max(f), field_min(f), int64_t{1}, field_max(f) / 3}) {
        Instruction in;
        in.set(f, v);
        EXPECT_EQ(in.get(f), v) << s.name << "." << f.name;
        // Nothing outside the field changed.
        for (size_t j = 0; j < s.count; ++j) {
          if (j != i) {
            EXPECT_EQ(in.get(s.fields[j]), 0) << s.name << "." << s.fields[j].name;
          }
        }
      }
      Instruction all_ones;
      all_ones.set(f, f.is_signed ? -1 : field_max(f));
      EXPECT_EQ(popcount(all_ones), std::min(f.width, 63) + (f.width == 64 ? 1 : 0))
          << s.name << "." << f.name;
      EXPECT_EQ(all_ones.raw(f), f.width >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.width) - 1);
    }
  }
}

TEST(Instruction, RandomValuesInEveryFieldAtOnce) {
  std::mt19937_64 rng(7);
  for (const Section& s : sections()) {
    for (int trial = 0; trial < 200; ++trial) {
      Instruction in;
      std::vector<int64_t> values;
      for (size_t i = 0; i < s.count; ++i) {
        const Field& f = s.fields[i];
        const int64_t v = std::uniform_int_distribution<int64_t>(field_min(f), field_max(f))(rng);
        in.set(f, v);
        values.push_back(v);
      }
      for (size_t i = 0; i < s.count; ++i) {
        EXPECT_EQ(in.get(s.fields[i]), values[i]) << s.name << "." << s.fields[i].name;
      }
      uint8_t bytes[kInstrBytes];
      in.to_bytes(bytes);
      EXPECT_EQ(Instruction::from_bytes(bytes), in);
    }
  }
}

TEST(Instruction, SetRejectsValuesThatDoNotFit) {
  for (const Section& s : sections()) {
    for (size_t i = 0; i < s.count; ++i) {
      const Field& f = s.fields[i];
      Instruction in;
      const int64_t too_big = field_max(f) + 1;
      const int64_t too_small = field_min(f) - 1;
      for (const int64_t v : {too_big, too_small}) {
        try {
          in.set(f, v);
          ADD_FAILURE() << s.name << "." << f.name << " accepted " << v;
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find(std::string("'") + f.name + "'"), std::string::npos)
              << e.what();
        }
      }
      EXPECT_EQ(in, Instruction{}) << "a rejected set() must not change the instruction";
    }
  }
}

TEST(Instruction, BytesAreLittleEndianWordZeroFirst) {
  Instruction in;
  in.set(hdr::kOpcode, 3);
  in.set(hdr::kAcq0, 0x1234);
  in.set(compute::kPostHi, -2);  // bits 463:456
  uint8_t b[kInstrBytes];
  in.to_bytes(b);
  EXPECT_EQ(b[0], 0x03);
  EXPECT_EQ(b[2], 0x34);
  EXPECT_EQ(b[3], 0x12);
  EXPECT_EQ(b[57], 0xFE);
  EXPECT_EQ(in.get(compute::kPostHi), -2);
}

// ---- per-opcode structs --------------------------------------------------------------------

int64_t pick(std::mt19937_64& rng, const Field& f) {
  return std::uniform_int_distribution<int64_t>(field_min(f), field_max(f))(rng);
}

// An instruction of opcode `op`: every header field but the opcode, then every
// field of `fields`, drawn from its whole range in table order, but the fields
// named in `fixed`, which take the value given there.
template <size_t N>
Instruction random_instruction(std::mt19937_64& rng, Opcode op, const std::array<Field, N>& fields,
                               const std::map<std::string, int64_t>& fixed = {}) {
  Instruction in;
  in.set(hdr::kOpcode, static_cast<int64_t>(op));
  for (size_t i = 1; i < hdr::kFields.size(); ++i) {
    in.set(hdr::kFields[i], pick(rng, hdr::kFields[i]));
  }
  size_t fixed_found = 0;
  for (const Field& f : fields) {
    const auto it = fixed.find(f.name);
    fixed_found += it != fixed.end();
    in.set(f, it != fixed.end() ? it->second : pick(rng, f));
  }
  EXPECT_EQ(fixed_found, fixed.size()) << "a fixed field is not a field of the opcode";
  return in;
}

// The struct decoded from `in` holds every field: it encodes back to exactly
// `in` (reserved bits clear) and decodes to itself.
template <typename Decode>
void expect_round_trip(const Instruction& in, Decode decode) {
  const auto s = decode(in);
  EXPECT_EQ(encode(s), in);
  EXPECT_EQ(decode(encode(s)), s);
  EXPECT_TRUE(encode(s).reserved_bits_clear());
}

// Random values in every field of every opcode; enum and flag fields cycle
// through their legal values with the trial.
TEST(Instruction, EncodeDecodeRoundTripsEveryOpcode) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    expect_round_trip(
        random_instruction(rng, Opcode::kLoad, load::kFields,
                           {{"dst_kind", trial % 3}, {"dst_pe_step", trial % 2 == 0}}),
        decode_load);
    expect_round_trip(random_instruction(rng, Opcode::kStore, store::kFields), decode_store);
    expect_round_trip(random_instruction(rng, Opcode::kCompute, compute::kFields,
                                         {{"mode", trial % 3},
                                          {"pool_en", trial % 2 == 1},
                                          {"pool_op", trial % 2},
                                          {"pool_ceil", trial % 4 < 2},
                                          {"dst_kind", trial % 3}}),
                      decode_compute);
    expect_round_trip(random_instruction(rng, Opcode::kConfig, config::kFields), decode_config);
    expect_round_trip(random_instruction(rng, Opcode::kEnd, end::kFields), decode_end);
  }
}

TEST(Instruction, EncodeRejectsStructValuesThatDoNotFit) {
  LoadInstr l;
  l.rows = 70000;
  EXPECT_THROW(encode(l), Error);
  ComputeInstr c;
  c.clamp_lo = -129;
  EXPECT_THROW(encode(c), Error);
  c.clamp_lo = 0;
  c.kernel_h = 16;
  EXPECT_THROW(encode(c), Error);
  StoreInstr s;
  s.ext_addr = int64_t{1} << 40;
  EXPECT_THROW(encode(s), Error);
  EndInstr e;
  e.hdr.acq0 = -1;
  EXPECT_THROW(encode(e), Error);
}

TEST(Instruction, DecodeChecksTheOpcode) {
  EXPECT_THROW(decode_load(encode(StoreInstr{})), Error);
  EXPECT_THROW(decode_compute(encode(EndInstr{})), Error);
  EXPECT_THROW(decode_store(Instruction{}), Error);
  try {
    decode_config(encode(LoadInstr{}));
    ADD_FAILURE() << "decode_config accepted a LOAD";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("opcode 1 (LOAD), expected CONFIG"), std::string::npos)
        << e.what();
  }
}

// The generated structs start at config/isa.yaml's `default` of each field (0
// if absent): a default-constructed struct encodes to exactly those values.
TEST(Instruction, DefaultStructsEncodeTheYamlDefaults) {
  const YAML::Node root = YAML::LoadFile((kSource / "config/isa.yaml").string());
  const std::map<std::string, Instruction> encoded = {{"load", encode(LoadInstr{})},
                                                      {"compute", encode(ComputeInstr{})},
                                                      {"store", encode(StoreInstr{})},
                                                      {"end", encode(EndInstr{})},
                                                      {"config", encode(ConfigInstr{})}};
  int with_default = 0;
  for (const Section& s : sections()) {
    if (s.name == "header") continue;
    const Instruction& in = encoded.at(s.name);
    std::string upper = s.name;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    EXPECT_EQ(in.opcode_value(), root["opcodes"][upper].as<uint64_t>()) << s.name;
    EXPECT_TRUE(in.reserved_bits_clear()) << s.name;
    for (size_t i = 1; i < hdr::kFields.size(); ++i) {
      EXPECT_EQ(in.get(hdr::kFields[i]), 0) << s.name << " header " << hdr::kFields[i].name;
    }
    for (size_t i = 0; i < s.count; ++i) {
      const YAML::Node d = root[s.name][i]["default"];
      with_default += d ? 1 : 0;
      EXPECT_EQ(in.get(s.fields[i]), d ? d.as<int64_t>() : 0) << s.name << "." << s.fields[i].name;
    }
  }
  EXPECT_EQ(with_default, 4) << "the compute clamps start wide open";
  EXPECT_EQ(ComputeInstr{}.clamp_lo, -128);
  EXPECT_EQ(ComputeInstr{}.post_hi, 127);
}

// ---- edges ---------------------------------------------------------------------------------

TEST(IsaEdges, SlotsFollowTheDocsTable) {
  const EdgeSlots l = edge_slots(Opcode::kLoad);
  EXPECT_EQ(l.acq0, Edge::kC2L);
  EXPECT_EQ(l.acq1, Edge::kS2L);
  EXPECT_EQ(l.rel0, Edge::kL2C);
  EXPECT_FALSE(l.rel1.has_value());
  const EdgeSlots c = edge_slots(Opcode::kCompute);
  EXPECT_EQ(c.acq0, Edge::kL2C);
  EXPECT_EQ(c.acq1, Edge::kS2C);
  EXPECT_EQ(c.rel0, Edge::kC2S);
  EXPECT_EQ(c.rel1, Edge::kC2L);
  const EdgeSlots s = edge_slots(Opcode::kStore);
  EXPECT_EQ(s.acq0, Edge::kC2S);
  EXPECT_FALSE(s.acq1.has_value());
  EXPECT_EQ(s.rel0, Edge::kS2C);
  EXPECT_EQ(s.rel1, Edge::kS2L);
  for (Opcode op : {Opcode::kLoad, Opcode::kCompute, Opcode::kStore}) {
    const EdgeSlots e = edge_slots(op);
    const Engine me = *engine_of(op);
    for (auto slot : {e.acq0, e.acq1}) {
      if (slot) {
        EXPECT_EQ(edge_consumer(*slot), me) << edge_name(*slot);
      }
    }
    for (auto slot : {e.rel0, e.rel1}) {
      if (slot) {
        EXPECT_EQ(edge_producer(*slot), me) << edge_name(*slot);
      }
    }
  }
  for (Opcode op : {Opcode::kEnd, Opcode::kConfig}) {
    const EdgeSlots e = edge_slots(op);
    EXPECT_FALSE(e.acq0 || e.acq1 || e.rel0 || e.rel1);
    EXPECT_FALSE(engine_of(op).has_value());
  }
}

// ---- disassembler --------------------------------------------------------------------------

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) {
    EXPECT_NE(text.find(p), std::string::npos) << "missing '" << p << "' in: " << text;
  }
}

TEST(Disassembler, OneReadableLinePerOpcode) {
  LoadInstr l;
  l.hdr.rel0 = 32;
  l.hdr.acq1 = 1;
  l.hdr.tag = 4;
  l.ext_addr = 0x1c40;
  l.ext_row_stride = 256;
  l.rows = 32;
  l.row_words = 32;
  l.dst_kind = LoadDst::kBank;
  l.dst_id = 2;
  l.dst_addr = 16;
  l.dst_row_stride = 32;
  const std::string ld = disassemble(encode(l));
  expect_contains(ld, {"LOAD", "b2[16]", "0x1c40", "32x32w", "S2L 1", "L2C 32", "tag 4"});
  EXPECT_EQ(ld.find('\n'), std::string::npos);

  ComputeInstr c;
  c.hdr.acq0 = 32;
  c.hdr.acq0_first = 3;
  c.hdr.acq0_step = 1;
  c.mode = ComputeMode::kConv;
  c.in_id = 1;
  c.in_h = c.in_w = 32;
  c.in_groups = 2;
  c.kernel_h = 5;
  c.kernel_w = 1;
  c.stride_h = c.stride_w = 1;
  c.pad_top = c.pad_bottom = 2;
  c.out_h = c.out_w = 32;
  c.clamp_lo = 0;
  c.pool_en = true;
  c.pool_op = PoolOp::kAvg;
  c.pool_ceil = true;
  c.pool_k = 3;
  c.pool_s = 2;
  c.pool_out_h = c.pool_out_w = 16;
  c.dst_id = 3;
  c.dst_row_stride = 16;
  const std::string cv = disassemble(encode(c));
  expect_contains(
      cv, {"COMPUTE CONV", "b1[0] 32x32 g2 k5x1", "p2,0,2,0", "clamp[0,127]",
           "avgpool k3 s2 p0,0,0,0 ceil -> 16x16", "-> b3[0] row 16", "L2C 32 (first 3, step 1)"});
  c.mode = ComputeMode::kFc;
  c.dst_kind = ComputeDst::kPeTranspose;
  expect_contains(disassemble(encode(c)), {"COMPUTE FC", "transpose"});
  c.mode = ComputeMode::kPool;
  c.dst_kind = ComputeDst::kPeCache;
  expect_contains(disassemble(encode(c)), {"COMPUTE POOL", "pe3[0]", "group"});
  c.mode = ComputeMode::kDepthwise;
  c.dst_kind = ComputeDst::kBank;
  c.in_groups = 1;
  c.pool_ceil = false;
  c.pool_pad_top = 1;
  c.pool_pad_right = 2;
  c.cache_base = 40;
  c.param_base = 8;
  const std::string dw = disassemble(encode(c));
  expect_contains(dw, {"COMPUTE DEPTHWISE", "b1[0] 32x32 g1 k3 s2 p1,0,0,2 -> 16x16", "w[40]",
                       "prm[8]", "clamp[0,127]", "-> b3[0] row 16"});
  EXPECT_EQ(dw.find("group"), std::string::npos) << dw;
  EXPECT_EQ(dw.find("acc_"), std::string::npos) << dw;
  c.mode = ComputeMode::kFc;
  c.acc_in = c.acc_out = true;
  c.acc_id = 2;
  c.acc_base = 96;
  expect_contains(disassemble(encode(c)), {"COMPUTE FC", "acc_in b2[96] acc_out"});

  StoreInstr s;
  s.src_id = 1;
  s.rows = 4;
  s.row_words = 8;
  s.ext_addr = 0x400;
  expect_contains(disassemble(encode(s)), {"STORE", "b1[0] 4x8w", "ext 0x400"});
  expect_contains(disassemble(encode(EndInstr{})), {"END"});
  ConfigInstr g;
  g.pes = g.lanes = 8;
  expect_contains(disassemble(encode(g)), {"CONFIG", "P 8 N 8"});

  Instruction bad;
  bad.set(hdr::kOpcode, 9);
  expect_contains(disassemble(bad), {"ILLEGAL opcode 9"});
  Instruction odd = encode(s);
  odd.words[7] |= uint64_t{1} << 63;
  expect_contains(disassemble(odd), {"RESERVED BITS SET"});
  Instruction kind = encode(l);
  kind.set(load::kDstKind, 3);  // CONTROL (sparse builds): PE 2's control words
  expect_contains(disassemble(kind), {"ctl2["});
}

// ---- error codes and the hardware target -----------------------------------------------------

TEST(IsaSimErrors, CodesMatchConfigRegistersYaml) {
  const YAML::Node codes =
      YAML::LoadFile((kSource / "config/registers.yaml").string())["error_codes"];
  ASSERT_TRUE(codes.IsMap());
  int count = 0;
  for (const auto& kv : codes) {
    const auto value = kv.second.as<int>();
    EXPECT_EQ(sim_error_name(static_cast<SimError>(value)), kv.first.as<std::string>());
    ++count;
  }
  EXPECT_EQ(count, 10);
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("strata_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using HwTargetTest = TempDir;

TEST_F(HwTargetTest, DefaultsAreTheGeneratedConfiguration) {
  const HwTarget d = HwTarget::defaults();
  EXPECT_EQ(d.pes, hw::kPes);
  EXPECT_EQ(d.lanes, hw::kLanes);
  EXPECT_EQ(d.banks, hw::kBanks);
  EXPECT_EQ(d.bank_depth, hw::kBankDepth);
  EXPECT_EQ(d.param_depth, hw::kParamDepth);
  EXPECT_EQ(d.axi_data_width, hw::kAxiDataWidth);
  EXPECT_EQ(HwTarget::from_yaml((kSource / "config/default.yaml").string()), d);
  EXPECT_NO_THROW(d.validate());
}

TEST_F(HwTargetTest, LoadsAnotherConfigurationWithoutRebuilding) {
  std::string text = read_text(kSource / "config/default.yaml");
  text = std::regex_replace(text, std::regex("\nname: default"), "\nname: p16n16");
  text = std::regex_replace(text, std::regex("\nlanes: 8 "), "\nlanes: 16 ");
  text = std::regex_replace(text, std::regex("\npes: 8 "), "\npes: 16 ");
  const HwTarget t = HwTarget::from_yaml(write("p16n16.yaml", text));
  EXPECT_EQ(t.name, "p16n16");
  EXPECT_EQ(t.pes, 16);
  EXPECT_EQ(t.lanes, 16);
  EXPECT_EQ(t.bank_depth, hw::kBankDepth);
  EXPECT_EQ(t.pe_fabric_lanes, 0);  // optional key, absent
  EXPECT_EQ(
      HwTarget::from_yaml(write("fabric.yaml", text + "pe_fabric_lanes: 3\n")).pe_fabric_lanes, 3);
}

TEST_F(HwTargetTest, RejectsBadConfigurationsNamingFileAndProblem) {
  const std::string base = read_text(kSource / "config/default.yaml");
  const auto expect_error = [&](const std::string& text, const std::string& part) {
    const std::string path = write("bad.yaml", text);
    try {
      HwTarget::from_yaml(path);
      ADD_FAILURE() << "accepted: " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.where().file, path);
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error(std::regex_replace(base, std::regex("\nbanks: 4"), ""), "missing key 'banks'");
  expect_error(base + "colour: blue\n", "unknown key 'colour'");
  expect_error(std::regex_replace(base, std::regex("\nlanes: 8 "), "\nlanes: 16 "), "P = N");
  expect_error(std::regex_replace(base, std::regex("\ndata_width: 8 "), "\ndata_width: 16 "),
               "data_width");
  expect_error(std::regex_replace(base, std::regex("\nbanks: 4"), "\nbanks: 1"), "banks = 1");
  expect_error(std::regex_replace(base, std::regex("\naxi_data_width: 64"), "\naxi_data_width: 48"),
               "axi_data_width = 48");
  expect_error(
      std::regex_replace(base, std::regex("\naxi_data_width: 64"), "\naxi_data_width: 128"),
      "whole number of AXI beats");
  expect_error(std::regex_replace(base, std::regex("\nbank_depth: 4096"), "\nbank_depth: x"),
               "'bank_depth' must be an integer");
  expect_error(base + "pe_fabric_lanes: 9\n", "pe_fabric_lanes = 9 is outside 0..8");
  expect_error(base + "pe_fabric_lanes: all\n", "'pe_fabric_lanes' must be an integer");
  expect_error("- 1\n- 2\n", "mapping");
  expect_error(std::regex_replace(base, std::regex("\nname: default"), "\nname: [a, b]"),
               "invalid hardware configuration");
  EXPECT_THROW(HwTarget::from_yaml((dir_ / "missing.yaml").string()), Error);
}

// ---- gen_isa.py checks ---------------------------------------------------------------------

using GenIsaTest = TempDir;

// Runs gen_isa.py --check on an edited copy of config/isa.yaml.
std::pair<int, std::string> run_gen_isa(const std::string& yaml_path) {
  const std::string cmd =
      fmt::format("cd '{}' && '{}' scripts/gen_isa.py --check --source '{}' 2>&1", kSource.string(),
                  STRATA_PYTHON, yaml_path);
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(GenIsaTest, RejectsInconsistentEncodings) {
  const std::string base = read_text(kSource / "config/isa.yaml");
  const auto [ok, ok_out] = run_gen_isa(write("same.yaml", base));
  EXPECT_EQ(ok, 0) << ok_out;
  const struct {
    std::string from, to, message;
  } cases[] = {
      {"lsb: 208, width: 16, doc: \"words per row (>= 1): N-byte",
       "lsb: 200, width: 16, doc: \"words per row (>= 1): N-byte", "overlap"},
      {"{name: post_hi,         lsb: 456", "{name: post_hi,         lsb: 508",
       "outside the 512-bit instruction"},
      {"{name: tag,        lsb: 112", "{name: tag,        lsb: 120", "reaches into the payload"},
      {"{name: mode,            lsb: 128", "{name: mode,            lsb: 100",
       "overlaps the header"},
      {"CONFIG: 5 ", "CONFIG: 17 ", "does not fit"},
      {"compute_dst:    {BANK: 0, PE_CACHE: 1, PE_TRANSPOSE: 2}",
       "compute_dst:    {BANK: 0, PE_CACHE: 1, PE_TRANSPOSE: 4}", "does not fit 2 bits"},
      // An enum mapped onto an RTL type (sv_types) whose values differ from it.
      {"pool_op:        {MAX: 0, AVG: 1}",
       "pool_op:        {MAX: 1, AVG: 0}\nsv_types:\n  pool_op: strata_pkg::pool_op_e", "sv_types"},
      {"default: 127, doc: \"requantisation clamp high", "default: 128, doc: \"x",
       "default 128 does not fit 8 signed bits"},
      {"enum: compute_dst, doc:", "enum: compute_dst, default: 3, doc:", "is no value of enum"},
  };
  for (const auto& c : cases) {
    const size_t at = base.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    std::string text = base;
    text.replace(at, c.from.size(), c.to);
    const auto [code, out] = run_gen_isa(write("bad.yaml", text));
    EXPECT_EQ(code, 1) << c.message << ": " << out;
    EXPECT_NE(out.find(c.message), std::string::npos) << out;
  }
}

// ---- the simulator on hand-assembled programs ----------------------------------------------

// The CONFIG instruction of a program compiled for target t.
ConfigInstr config_for(const HwTarget& t) {
  ConfigInstr cfg;
  cfg.version = t.version;
  cfg.pes = t.pes;
  cfg.lanes = t.lanes;
  cfg.banks = t.banks;
  cfg.bank_depth = t.bank_depth;
  cfg.pe_cache_depth = t.pe_cache_depth;
  cfg.param_depth = t.param_depth;
  return cfg;
}

// A small image: one 8-channel 6x6 input, a 3x3 pad-1 convolution with 8
// output channels and ReLU, then a 2x2 max pool, stored back.
struct TinyConv {
  static constexpr int64_t kH = 6, kW = 6, kC = 8, kK = 3;
  HwTarget t = HwTarget::defaults();
  Tensor<int8_t> input{{kC, kH, kW}};
  Tensor<int8_t> weights{{kC, kC, kK, kK}};
  Tensor<int32_t> bias{{kC}};
  Requant rq;
  // memory layout
  static constexpr uint64_t kParams = 0x400, kWeights = 0x800, kInput = 0x1000, kOutput = 0x1800;
  std::vector<uint8_t> memory = std::vector<uint8_t>(0x2000, 0);
  std::vector<Instruction> program;

  TinyConv() {
    std::mt19937_64 rng(5);
    for (auto& v : input.values()) v = static_cast<int8_t>(rng() % 256 - 128);
    for (auto& v : weights.values()) v = static_cast<int8_t>(rng() % 31 - 15);
    for (auto& v : bias.values()) v = static_cast<int32_t>(rng() % 2001) - 1000;
    rq.multiplier.assign(kC, 300);
    rq.shift.assign(kC, 12);
    rq.lo = 0;
    rq.hi = 127;
    for (int64_t c = 0; c < kC; ++c) {
      uint8_t* e = &memory[kParams + c * 8];
      const auto b = static_cast<uint32_t>(bias(c));
      for (int i = 0; i < 4; ++i) e[i] = static_cast<uint8_t>(b >> (8 * i));
      e[4] = static_cast<uint8_t>(rq.multiplier[c]);
      e[5] = static_cast<uint8_t>(rq.multiplier[c] >> 8);
      e[6] = rq.shift[c];
      // PE c: word (ky*3+kx) holds w[c][lane][ky][kx]
      for (int64_t ky = 0; ky < kK; ++ky) {
        for (int64_t kx = 0; kx < kK; ++kx) {
          for (int64_t lane = 0; lane < kC; ++lane) {
            memory[kWeights + (c * 9 + ky * 3 + kx) * 8 + lane] =
                static_cast<uint8_t>(weights(c, lane, ky, kx));
          }
        }
      }
      for (int64_t y = 0; y < kH; ++y) {
        for (int64_t x = 0; x < kW; ++x) {
          memory[kInput + (y * kW + x) * 8 + c] = static_cast<uint8_t>(input(c, y, x));
        }
      }
    }
    const ConfigInstr cfg = config_for(t);
    LoadInstr lp;  // params: 1 row of 8 entries
    lp.ext_addr = kParams;
    lp.ext_row_stride = 64;
    lp.rows = 1;
    lp.row_words = 8;
    lp.dst_kind = LoadDst::kParam;
    lp.hdr.rel0 = 1;
    LoadInstr lw;  // weights: row r = PE r, 9 words
    lw.ext_addr = kWeights;
    lw.ext_row_stride = 72;
    lw.rows = 8;
    lw.row_words = 9;
    lw.dst_kind = LoadDst::kPeCache;
    lw.dst_pe_step = true;
    lw.dst_row_stride = 9;
    lw.hdr.rel0 = 8;
    LoadInstr li;  // input: 6 rows of 6 words into bank 0
    li.ext_addr = kInput;
    li.ext_row_stride = 48;
    li.rows = 6;
    li.row_words = 6;
    li.dst_row_stride = 6;
    li.hdr.rel0 = 6;
    ComputeInstr c;
    c.hdr = {15, 0, 3, 0, 11, 1, 0};  // acq0 15: params 1 + weights 8 + input rows 6
    c.mode = ComputeMode::kConv;
    c.in_id = 0;
    c.in_h = kH;
    c.in_w = kW;
    c.in_groups = 1;
    c.kernel_h = c.kernel_w = 3;
    c.stride_h = c.stride_w = 1;
    c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
    c.out_h = c.out_w = 6;
    c.clamp_lo = 0;
    c.clamp_hi = 127;
    c.pool_en = true;
    c.pool_op = PoolOp::kMax;
    c.pool_k = 2;
    c.pool_s = 2;
    c.pool_out_h = c.pool_out_w = 3;
    c.dst_kind = ComputeDst::kBank;
    c.dst_id = 1;
    c.dst_row_stride = 3;
    StoreInstr s;
    s.hdr.acq0 = 3;
    s.hdr.acq0_first = 1;
    s.hdr.acq0_step = 1;
    s.src_id = 1;
    s.rows = 3;
    s.row_words = 3;
    s.src_row_stride = 3;
    s.ext_addr = kOutput;
    s.ext_row_stride = 24;
    program = {encode(cfg), encode(lp), encode(lw),        encode(li),
               encode(c),   encode(s),  encode(EndInstr{})};
  }

  void place() {
    for (size_t i = 0; i < program.size(); ++i) program[i].to_bytes(&memory[i * kInstrBytes]);
  }
  SimResult run(const SimOptions& o = {}) {
    place();
    return IsaSim(t).run(memory, o);
  }
  Tensor<int8_t> expected() const {
    return maxpool(requantize(conv2d_acc(input, weights, bias, {3, 1, 1}), rq), {2, 2, 0, false});
  }
  Tensor<int8_t> output() const {
    Tensor<int8_t> out({kC, 3, 3});
    for (int64_t c = 0; c < kC; ++c) {
      for (int64_t y = 0; y < 3; ++y) {
        for (int64_t x = 0; x < 3; ++x) {
          out(c, y, x) = static_cast<int8_t>(memory[kOutput + (y * 3 + x) * 8 + c]);
        }
      }
    }
    return out;
  }
};

TEST(IsaSim, HandAssembledConvolutionMatchesTheGoldenModel) {
  TinyConv tc;
  const SimResult r = tc.run();
  ASSERT_TRUE(r.ok()) << describe_problems(r);
  EXPECT_TRUE(r.completion.clean()) << describe_problems(r);
  EXPECT_TRUE(r.fine.clean()) << describe_problems(r);
  EXPECT_TRUE(r.completion.balanced());
  EXPECT_EQ(r.instructions, 7);
  const Tensor<int8_t> want = tc.expected();
  const Tensor<int8_t> got = tc.output();
  for (int64_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
  // Beats: taps inside the image only (corners 4, edges 6, inside 9) for one group.
  EXPECT_EQ(r.stats[4].beats, 4 * 4 + 16 * 6 + 16 * 9);
  EXPECT_EQ(r.beats, r.stats[4].beats);
  EXPECT_EQ(r.uninitialized_reads, 0);
}

// ---- cascade: two stages linked by a queue of transfers (docs/cascade.md) ----------------

// Stage 0: LOAD 3 rows of 5 words from external memory into bank 0, STORE
// them as one cascade transfer (link id 7). Stage 1: LOAD CASCADE it as one
// row of 15 words into bank 1, STORE it to external memory. Program order
// (the stages' dependencies are not the point here).
struct CascadePair {
  static constexpr uint64_t kIn = 0x400, kOut = 0x800;
  HwTarget t = HwTarget::defaults();
  std::vector<uint8_t> mem0 = std::vector<uint8_t>(0x1000, 0), mem1 = mem0;
  LoadInstr from_link;
  StoreInstr to_link;

  CascadePair() {
    for (size_t i = 0; i < 15 * 8; ++i) mem0[kIn + i] = static_cast<uint8_t>(i * 7 + 3);
    to_link.dst_kind = StoreDst::kCascade;
    to_link.link_id = 7;
    to_link.rows = 3;
    to_link.row_words = 5;
    to_link.src_row_stride = 5;
    from_link.src_kind = LoadSrc::kCascade;
    from_link.link_id = 7;
    from_link.rows = 1;
    from_link.row_words = 15;
    from_link.dst_id = 1;
  }
  static void place(std::vector<uint8_t>& mem, const std::vector<Instruction>& prog) {
    for (size_t i = 0; i < prog.size(); ++i) prog[i].to_bytes(&mem[i * kInstrBytes]);
  }
  SimResult run_sender(std::vector<CascadeTransfer>& out) {
    LoadInstr l;
    l.ext_addr = kIn;
    l.ext_row_stride = 40;
    l.rows = 3;
    l.row_words = 5;
    l.dst_row_stride = 5;
    place(mem0, {encode(config_for(t)), encode(l), encode(to_link), encode(EndInstr{})});
    SimOptions o;
    o.check_dependencies = false;
    o.cascade_out = &out;
    return IsaSim(t).run(mem0, o);
  }
  SimResult run_receiver(std::deque<CascadeTransfer>& in) {
    StoreInstr s;
    s.src_id = 1;
    s.rows = 1;
    s.row_words = 15;
    s.ext_addr = kOut;
    place(mem1, {encode(config_for(t)), encode(from_link), encode(s), encode(EndInstr{})});
    SimOptions o;
    o.check_dependencies = false;
    o.cascade_in = &in;
    return IsaSim(t).run(mem1, o);
  }
};

TEST(IsaSimCascade, TransferCrossesTheLinkUnchanged) {
  CascadePair cp;
  std::vector<CascadeTransfer> sent;
  const SimResult a = cp.run_sender(sent);
  ASSERT_TRUE(a.ok()) << a.message;
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].link_id, 7);
  EXPECT_EQ(sent[0].bytes.size(), 15u * 8);
  EXPECT_EQ(a.stats[2].ext_bytes, 0) << "a cascade STORE writes no external byte";
  std::deque<CascadeTransfer> link(sent.begin(), sent.end());
  const SimResult b = cp.run_receiver(link);
  ASSERT_TRUE(b.ok()) << b.message;
  EXPECT_TRUE(link.empty());
  for (size_t i = 0; i < 15 * 8; ++i) {
    ASSERT_EQ(cp.mem1[CascadePair::kOut + i], cp.mem0[CascadePair::kIn + i]) << "byte " << i;
  }
  EXPECT_NE(disassemble(encode(cp.to_link)).find("cascade #7"), std::string::npos);
  EXPECT_NE(disassemble(encode(cp.from_link)).find("cascade #7"), std::string::npos);
}

TEST(IsaSimCascade, MismatchedTransfersAreErrors) {
  const auto receive = [](CascadePair& cp, std::deque<CascadeTransfer> link) {
    return cp.run_receiver(link);
  };
  CascadePair cp;
  std::vector<CascadeTransfer> sent;
  ASSERT_TRUE(cp.run_sender(sent).ok());
  EXPECT_EQ(receive(cp, {}).error, SimError::kCascade) << "nothing on the link";
  CascadeTransfer other = sent[0];
  other.link_id = 8;
  EXPECT_EQ(receive(cp, {other}).error, SimError::kCascade) << "another link id";
  CascadeTransfer short_one = sent[0];
  short_one.bytes.resize(14 * 8);
  const SimResult r = receive(cp, {short_one});
  EXPECT_EQ(r.error, SimError::kCascade) << "one beat short";
  EXPECT_EQ(r.error_index, 1);
  cp.from_link.ext_addr = 64;
  EXPECT_EQ(receive(cp, {sent[0]}).error, SimError::kIllegalInstr) << "a cascade LOAD's ext_addr";
}

// ---- asymmetric padding: the simulator against plain loops over docs/isa.md ---------------

// One CONV (optionally pooled) or POOL with padding of its own on every side
// (top, left, bottom, right).
struct PadCase {
  bool pool_only = false;
  int64_t h = 1, w = 1, groups = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  std::array<int64_t, 4> pad{};
  bool pool = false, avg = false, ceil_mode = false;
  int64_t pk = 1, ps = 1;
  std::array<int64_t, 4> pool_pad{};

  std::string str() const {
    return fmt::format("{} {}x{}x{}g k{}x{} s{},{} p{},{},{},{}{}", pool_only ? "POOL" : "CONV", h,
                       w, groups, kh, kw, sh, sw, pad[0], pad[1], pad[2], pad[3],
                       pool ? fmt::format(" {}pool k{} s{} p{},{},{},{}{}", avg ? "avg" : "max", pk,
                                          ps, pool_pad[0], pool_pad[1], pool_pad[2], pool_pad[3],
                                          ceil_mode ? " ceil" : "")
                            : "");
  }
};

// Windows along one dimension of size d with padding a before and b after
// (docs/isa.md, COMPUTE), written out without the library's helpers.
int64_t windows(int64_t d, int64_t k, int64_t s, int64_t a, int64_t b, bool ceil_mode) {
  const int64_t span = d + a + b - k;
  if (!ceil_mode) return span / s + 1;
  int64_t n = (span + s - 1) / s + 1;
  if ((n - 1) * s - a >= d) --n;  // the last window starts inside the input or before it
  return n;
}

// The case's result [P or N][rows][cols] per group, by the definitions.
std::vector<Tensor<int8_t>> reference(const PadCase& pc, const Tensor<int8_t>& in,
                                      const Tensor<int8_t>& wt, const std::vector<int32_t>& bias,
                                      int64_t lanes, int64_t pes) {
  std::vector<Tensor<int8_t>> maps;  // the pooling unit's input, one per group (POOL) or one
  if (pc.pool_only) {
    for (int64_t g = 0; g < pc.groups; ++g) {
      Tensor<int8_t> m({lanes, pc.h, pc.w});
      for (int64_t l = 0; l < lanes; ++l) {
        for (int64_t y = 0; y < pc.h; ++y) {
          for (int64_t x = 0; x < pc.w; ++x) m(l, y, x) = in(g * lanes + l, y, x);
        }
      }
      maps.push_back(m);
    }
  } else {
    const int64_t oh = (pc.h + pc.pad[0] + pc.pad[2] - pc.kh) / pc.sh + 1;
    const int64_t ow = (pc.w + pc.pad[1] + pc.pad[3] - pc.kw) / pc.sw + 1;
    Tensor<int8_t> m({pes, oh, ow});
    for (int64_t p = 0; p < pes; ++p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t acc = bias[p];
          for (int64_t ky = 0; ky < pc.kh; ++ky) {
            const int64_t iy = oy * pc.sh - pc.pad[0] + ky;
            if (iy < 0 || iy >= pc.h) continue;
            for (int64_t kx = 0; kx < pc.kw; ++kx) {
              const int64_t ix = ox * pc.sw - pc.pad[1] + kx;
              if (ix < 0 || ix >= pc.w) continue;
              for (int64_t c = 0; c < pc.groups * lanes; ++c) {
                acc += int64_t{wt(p, c, ky, kx)} * in(c, iy, ix);
              }
            }
          }
          m(p, oy, ox) = requantize(static_cast<int32_t>(acc), 300, 14, -128, 127);
        }
      }
    }
    maps.push_back(m);
  }
  if (!pc.pool) return maps;
  std::vector<Tensor<int8_t>> out;
  for (const Tensor<int8_t>& m : maps) {
    const int64_t d_h = m.dim(1), d_w = m.dim(2);
    const int64_t rh = windows(d_h, pc.pk, pc.ps, pc.pool_pad[0], pc.pool_pad[2], pc.ceil_mode);
    const int64_t rw = windows(d_w, pc.pk, pc.ps, pc.pool_pad[1], pc.pool_pad[3], pc.ceil_mode);
    Tensor<int8_t> r({m.dim(0), rh, rw});
    for (int64_t l = 0; l < m.dim(0); ++l) {
      for (int64_t oy = 0; oy < rh; ++oy) {
        for (int64_t ox = 0; ox < rw; ++ox) {
          int64_t best = -129, sum = 0, taps = 0;  // taps inside the image only
          for (int64_t ky = 0; ky < pc.pk; ++ky) {
            const int64_t iy = oy * pc.ps - pc.pool_pad[0] + ky;
            for (int64_t kx = 0; kx < pc.pk; ++kx) {
              const int64_t ix = ox * pc.ps - pc.pool_pad[1] + kx;
              if (iy < 0 || iy >= d_h || ix < 0 || ix >= d_w) continue;
              best = std::max<int64_t>(best, m(l, iy, ix));
              sum += m(l, iy, ix);
              ++taps;
            }
          }
          EXPECT_GT(taps, 0) << pc.str() << ": a window with no tap inside the input";
          r(l, oy, ox) =
              static_cast<int8_t>(pc.avg ? avg_round(sum, std::max<int64_t>(taps, 1)) : best);
        }
      }
    }
    out.push_back(r);
  }
  return out;
}

// Runs the case on strata::IsaSim (CONFIG, three LOADs, the COMPUTE, a STORE)
// on random data and compares every result word with reference().
void expect_padding_case(const PadCase& pc, uint64_t seed) {
  const HwTarget t = HwTarget::defaults();
  const int64_t n = t.lanes, pes = t.pes;
  std::mt19937_64 rng(seed);
  const auto rand8 = [&](int lo, int hi) {
    return static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  Tensor<int8_t> in({pc.groups * n, pc.h, pc.w});
  for (auto& v : in.values()) v = rand8(-128, 127);
  const int64_t kh = pc.pool_only ? 1 : pc.kh, kw = pc.pool_only ? 1 : pc.kw;
  Tensor<int8_t> wt({pes, pc.groups * n, kh, kw});
  for (auto& v : wt.values()) v = rand8(-15, 15);
  std::vector<int32_t> bias(static_cast<size_t>(pes));
  for (auto& b : bias) b = std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
  const std::vector<Tensor<int8_t>> want = reference(pc, in, wt, bias, n, pes);
  const int64_t rows = want[0].dim(1), cols = want[0].dim(2);

  // External memory: program, input words (g, y, x), weights (PE p: tap
  // (ky, kx), group g at word (ky * kw + kx) * groups + g), parameters, output.
  constexpr uint64_t kIn = 0x1000, kWeights = 0x8000, kParams = 0xC000, kOut = 0xD000;
  std::vector<uint8_t> mem(0x10000, 0);
  const int64_t in_words = pc.groups * pc.h * pc.w;
  for (int64_t g = 0; g < pc.groups; ++g) {
    for (int64_t y = 0; y < pc.h; ++y) {
      for (int64_t x = 0; x < pc.w; ++x) {
        for (int64_t l = 0; l < n; ++l) {
          mem[kIn + ((g * pc.h + y) * pc.w + x) * n + l] =
              static_cast<uint8_t>(in(g * n + l, y, x));
        }
      }
    }
  }
  const int64_t taps = kh * kw * pc.groups;
  for (int64_t p = 0; p < pes; ++p) {
    for (int64_t ky = 0; ky < kh; ++ky) {
      for (int64_t kx = 0; kx < kw; ++kx) {
        for (int64_t g = 0; g < pc.groups; ++g) {
          for (int64_t l = 0; l < n; ++l) {
            mem[kWeights + (p * taps + (ky * kw + kx) * pc.groups + g) * n + l] =
                static_cast<uint8_t>(wt(p, g * n + l, ky, kx));
          }
        }
      }
    }
    uint8_t* e = &mem[kParams + p * 8];
    const auto b = static_cast<uint32_t>(bias[p]);
    for (int i = 0; i < 4; ++i) e[i] = static_cast<uint8_t>(b >> (8 * i));
    e[4] = 300 & 0xff;
    e[5] = 300 >> 8;
    e[6] = 14;
  }

  LoadInstr li;
  li.ext_addr = kIn;
  li.ext_row_stride = in_words * n;
  li.rows = 1;
  li.row_words = in_words;
  LoadInstr lw;  // row p: PE p's weights
  lw.ext_addr = kWeights;
  lw.ext_row_stride = taps * n;
  lw.rows = pes;
  lw.row_words = taps;
  lw.dst_kind = LoadDst::kPeCache;
  lw.dst_pe_step = true;
  LoadInstr lp;
  lp.ext_addr = kParams;
  lp.ext_row_stride = pes * 8;
  lp.rows = 1;
  lp.row_words = pes;
  lp.dst_kind = LoadDst::kParam;

  ComputeInstr c;
  c.mode = pc.pool_only ? ComputeMode::kPool : ComputeMode::kConv;
  c.in_id = 0;
  c.in_h = pc.h;
  c.in_w = pc.w;
  c.in_groups = pc.groups;
  if (pc.pool_only) {
    c.out_h = pc.h;
    c.out_w = pc.w;
  } else {
    c.kernel_h = pc.kh;
    c.kernel_w = pc.kw;
    c.stride_h = pc.sh;
    c.stride_w = pc.sw;
    c.pad_top = pc.pad[0];
    c.pad_left = pc.pad[1];
    c.pad_bottom = pc.pad[2];
    c.pad_right = pc.pad[3];
    c.out_h = (pc.h + pc.pad[0] + pc.pad[2] - pc.kh) / pc.sh + 1;
    c.out_w = (pc.w + pc.pad[1] + pc.pad[3] - pc.kw) / pc.sw + 1;
  }
  c.pool_en = pc.pool;
  if (pc.pool) {
    c.pool_op = pc.avg ? PoolOp::kAvg : PoolOp::kMax;
    c.pool_ceil = pc.ceil_mode;
    c.pool_k = pc.pk;
    c.pool_s = pc.ps;
    c.pool_pad_top = pc.pool_pad[0];
    c.pool_pad_left = pc.pool_pad[1];
    c.pool_pad_bottom = pc.pool_pad[2];
    c.pool_pad_right = pc.pool_pad[3];
    c.pool_out_h = rows;
    c.pool_out_w = cols;
  }
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 1;
  c.dst_row_stride = cols;
  c.dst_group_stride = rows * cols;
  const int64_t out_words = static_cast<int64_t>(want.size()) * rows * cols;
  StoreInstr st;
  st.src_id = 1;
  st.rows = 1;
  st.row_words = out_words;
  st.ext_addr = kOut;
  st.ext_row_stride = out_words * n;

  const std::vector<Instruction> program = {
      encode(config_for(t)), encode(li), encode(lw), encode(lp), encode(c), encode(st),
      encode(EndInstr{})};
  for (size_t i = 0; i < program.size(); ++i) program[i].to_bytes(&mem[i * kInstrBytes]);
  SimOptions o;
  o.check_dependencies = false;
  const SimResult r = IsaSim(t).run(mem, o);
  ASSERT_TRUE(r.ok()) << pc.str() << ": " << describe_problems(r);
  int bad = 0;
  for (size_t g = 0; g < want.size(); ++g) {
    for (int64_t y = 0; y < rows; ++y) {
      for (int64_t x = 0; x < cols; ++x) {
        for (int64_t l = 0; l < want[g].dim(0); ++l) {
          const auto got = static_cast<int8_t>(
              mem[kOut + ((static_cast<int64_t>(g) * rows + y) * cols + x) * n + l]);
          if (got != want[g](l, y, x) && ++bad <= 8) {
            ADD_FAILURE() << pc.str() << ": group " << g << " row " << y << " col " << x
                          << " channel " << l << ": expected " << int{want[g](l, y, x)} << ", got "
                          << int{got} << " (seed " << seed << ")";
          }
        }
      }
    }
  }
}

TEST(IsaSim, AsymmetricConvolutionPaddingFollowsTheDefinition) {
  std::vector<PadCase> cases;
  const auto conv = [&](int64_t h, int64_t w, int64_t g, int64_t kh, int64_t kw, int64_t sh,
                        int64_t sw, std::array<int64_t, 4> pad) {
    PadCase pc;
    pc.h = h;
    pc.w = w;
    pc.groups = g;
    pc.kh = kh;
    pc.kw = kw;
    pc.sh = sh;
    pc.sw = sw;
    pc.pad = pad;
    return pc;
  };
  cases.push_back(conv(7, 6, 1, 3, 3, 1, 1, {1, 0, 0, 1}));  // top != bottom, left != right
  cases.push_back(conv(9, 8, 2, 5, 3, 2, 1, {2, 0, 0, 2}));
  cases.push_back(conv(6, 6, 1, 3, 3, 1, 1, {1, 0, 0, 0}));  // one side only
  cases.push_back(conv(5, 7, 1, 4, 2, 1, 2, {0, 1, 3, 0}));
  cases.push_back(conv(6, 6, 1, 3, 3, 1, 1, {1, 1, 1, 1}));  // symmetric
  PadCase p = conv(8, 8, 1, 3, 3, 1, 1, {0, 1, 1, 0});       // fused max pool, ceil, asymmetric
  p.pool = true;
  p.ceil_mode = true;
  p.pk = 3;
  p.ps = 2;
  p.pool_pad = {1, 0, 0, 1};
  cases.push_back(p);
  p = conv(7, 9, 1, 3, 3, 1, 1, {1, 1, 0, 0});  // 6 x 8 -> avg 2x2 s2 ceil, pad below / right:
  p.pool = true;                                // the fourth window would start at 6
  p.avg = true;
  p.ceil_mode = true;
  p.pk = 2;
  p.ps = 2;
  p.pool_pad = {0, 0, 1, 1};
  cases.push_back(p);
  p = conv(9, 7, 2, 3, 3, 1, 1, {2, 0, 1, 2});  // avg pool, floor, padding before only
  p.pool = true;
  p.avg = true;
  p.pk = 3;
  p.ps = 1;
  p.pool_pad = {2, 1, 0, 0};
  cases.push_back(p);
  uint64_t seed = 11;
  for (const PadCase& pc : cases) expect_padding_case(pc, seed++);
}

TEST(IsaSim, AsymmetricPoolPaddingFollowsTheDefinition) {
  const auto pool = [](int64_t h, int64_t w, int64_t g, int64_t k, int64_t s,
                       std::array<int64_t, 4> pad, bool avg, bool ceil_mode) {
    PadCase pc;
    pc.pool_only = true;
    pc.pool = true;
    pc.h = h;
    pc.w = w;
    pc.groups = g;
    pc.pk = k;
    pc.ps = s;
    pc.pool_pad = pad;
    pc.avg = avg;
    pc.ceil_mode = ceil_mode;
    return pc;
  };
  const std::vector<PadCase> cases = {
      pool(6, 6, 2, 3, 2, {0, 1, 2, 0}, false, true),  // ceil, top != bottom
      pool(6, 6, 1, 2, 2, {1, 0, 0, 1}, true, true),   // ceil, windows over the top padding
      pool(7, 6, 1, 3, 2, {0, 0, 0, 2}, true, true),   // one side only
      pool(6, 6, 1, 2, 2, {0, 0, 1, 1}, false, true),  // ceil drops the window starting at 6
      pool(5, 8, 1, 3, 1, {1, 0, 2, 1}, true, false),  // floor
      pool(9, 7, 2, 3, 3, {2, 2, 0, 0}, false, false),
      pool(1, 1, 1, 3, 1, {2, 0, 0, 2}, true, false),  // one pixel, all padding on two sides
  };
  uint64_t seed = 31;
  for (const PadCase& pc : cases) expect_padding_case(pc, seed++);
}

// The ceil rule's dropped window, counted by hand: 6 rows, window 2, stride 2,
// one padding row below: ceil(5 / 2) + 1 = 4 windows, the last would start at
// row 6, so 3; with the padding row above instead, the last starts at row 5: 4.
TEST(IsaSim, CeilModeWindowCountWithPaddingOnOneSide) {
  EXPECT_EQ(windows(6, 2, 2, 0, 1, true), 3);
  EXPECT_EQ(windows(6, 2, 2, 1, 0, true), 4);
  EXPECT_EQ(pool_out_size(6, 2, 2, 0, 1, true), 3);
  EXPECT_EQ(pool_out_size(6, 2, 2, 1, 0, true), 4);
  // The symmetric form is the special case.
  for (int in = 1; in <= 12; ++in) {
    for (int k = 1; k <= 4; ++k) {
      for (int s = 1; s <= 3; ++s) {
        for (int p = 0; p < k; ++p) {
          for (bool ceil_mode : {false, true}) {
            if (in + 2 * p < k) continue;
            EXPECT_EQ(pool_out_size(in, k, s, p, p, ceil_mode),
                      pool_out_size(in, PoolGeometry{k, s, p, ceil_mode}));
            EXPECT_EQ(pool_out_size(in, k, s, p, p, ceil_mode), windows(in, k, s, p, p, ceil_mode));
          }
        }
      }
    }
  }
}

// ---- DEPTHWISE: the simulator against a direct per-channel computation ---------------------

// One DEPTHWISE of a single channel group: window k, stride s, padding per side
// (top, left, bottom, right), requantisation clamp [lo, hi].
struct DwCase {
  int64_t h = 1, w = 1, k = 1, s = 1;
  std::array<int64_t, 4> pad{};
  int lo = -128, hi = 127;
  uint16_t mult = 300;
  std::string str() const {
    return fmt::format("DEPTHWISE {}x{} k{} s{} p{},{},{},{} clamp[{},{}] M {}", h, w, k, s, pad[0],
                       pad[1], pad[2], pad[3], lo, hi, mult);
  }
};

// Runs the case on strata::IsaSim for target t: LOADs of the parameters, the
// weights (one row of B words per PE, dst_pe_step), the input row by row, the
// DEPTHWISE, a STORE per result row; the fine-grained counts as docs/isa.md
// steps them (one input row per step, result row r after input row
// min(h - 1, r*s - pad_top + k - 1)). Compares every result with the
// definition and expects both dependency modes clean.
void expect_depthwise_case(const HwTarget& t, const DwCase& dc, uint64_t seed) {
  const int64_t n = t.lanes, kmax = t.max_pool_kernel;
  const int64_t words = t.depthwise_weight_words();
  std::mt19937_64 rng(seed);
  const auto rand8 = [&](int lo, int hi) {
    return static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  Tensor<int8_t> in({n, dc.h, dc.w});
  for (auto& v : in.values()) v = rand8(-128, 127);
  // PE p's weight bytes: tap t = ky * kmax + kx; the bytes no tap of the window
  // uses hold noise (the hardware multiplies them by zero).
  std::vector<int8_t> wbytes(static_cast<size_t>(n * words * n));
  for (auto& v : wbytes) v = rand8(-128, 127);
  const auto weight = [&](int64_t p, int64_t ky, int64_t kx) {
    return wbytes[static_cast<size_t>(p * words * n + ky * kmax + kx)];
  };
  std::vector<int32_t> bias(static_cast<size_t>(n));
  std::vector<uint8_t> shift(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) {
    bias[p] = std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
    shift[p] = static_cast<uint8_t>(8 + p % 4);
  }
  const int64_t rows = windows(dc.h, dc.k, dc.s, dc.pad[0], dc.pad[2], false);
  const int64_t cols = windows(dc.w, dc.k, dc.s, dc.pad[1], dc.pad[3], false);
  Tensor<int8_t> want({n, rows, cols});
  int64_t saturated = 0;
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        int64_t acc = bias[p];
        for (int64_t ky = 0; ky < dc.k; ++ky) {
          for (int64_t kx = 0; kx < dc.k; ++kx) {
            const int64_t iy = r * dc.s - dc.pad[0] + ky, ix = c * dc.s - dc.pad[1] + kx;
            if (iy < 0 || iy >= dc.h || ix < 0 || ix >= dc.w) continue;
            acc += int64_t{weight(p, ky, kx)} * in(p, iy, ix);
          }
        }
        want(p, r, c) = requantize(static_cast<int32_t>(acc), dc.mult, shift[p], dc.lo, dc.hi);
        saturated += want(p, r, c) == dc.lo || want(p, r, c) == dc.hi;
      }
    }
  }

  constexpr uint64_t kIn = 0x2000, kWeights = 0x8000, kParams = 0xC000, kOut = 0xD000;
  std::vector<uint8_t> mem(0x20000, 0);
  for (int64_t y = 0; y < dc.h; ++y) {
    for (int64_t x = 0; x < dc.w; ++x) {
      for (int64_t l = 0; l < n; ++l) {
        mem[kIn + (y * dc.w + x) * n + l] = static_cast<uint8_t>(in(l, y, x));
      }
    }
  }
  for (size_t i = 0; i < wbytes.size(); ++i) mem[kWeights + i] = static_cast<uint8_t>(wbytes[i]);
  for (int64_t p = 0; p < n; ++p) {
    uint8_t* e = &mem[kParams + p * 8];
    const auto b = static_cast<uint32_t>(bias[p]);
    for (int i = 0; i < 4; ++i) e[i] = static_cast<uint8_t>(b >> (8 * i));
    e[4] = static_cast<uint8_t>(dc.mult);
    e[5] = static_cast<uint8_t>(dc.mult >> 8);
    e[6] = shift[p];
  }
  const int64_t beat = t.beat_bytes();
  const auto stride_of = [&](int64_t bytes) { return (bytes + beat - 1) / beat * beat; };

  LoadInstr lp;
  lp.ext_addr = kParams;
  lp.ext_row_stride = stride_of(n * 8);
  lp.rows = 1;
  lp.row_words = n;
  lp.dst_kind = LoadDst::kParam;
  lp.hdr.rel0 = 1;
  LoadInstr lw;  // row p: PE p's B words at cache word 5
  lw.ext_addr = kWeights;
  lw.ext_row_stride = words * n;
  lw.rows = n;
  lw.row_words = words;
  lw.dst_kind = LoadDst::kPeCache;
  lw.dst_pe_step = true;
  lw.dst_addr = 5;
  lw.hdr.rel0 = n;
  LoadInstr li;  // the map row by row into bank 2 at word 7
  li.ext_addr = kIn;
  li.ext_row_stride = dc.w * n;
  li.rows = dc.h;
  li.row_words = dc.w;
  li.dst_id = 2;
  li.dst_addr = 7;
  li.dst_row_stride = dc.w;
  li.hdr.rel0 = dc.h;
  ComputeInstr c;
  c.hdr.acq0 = 1 + n + dc.h;
  c.hdr.acq0_first = 1 + n + 1;  // parameters, weights and input row 0
  c.hdr.acq0_step = 1;
  c.hdr.rel0 = rows;
  c.mode = ComputeMode::kDepthwise;
  c.in_id = 2;
  c.in_base = 7;
  c.in_h = c.out_h = dc.h;
  c.in_w = c.out_w = dc.w;
  c.in_groups = 1;
  c.cache_base = 5;
  c.param_base = 0;
  c.clamp_lo = dc.lo;
  c.clamp_hi = dc.hi;
  c.pool_en = true;
  c.pool_k = dc.k;
  c.pool_s = dc.s;
  c.pool_pad_top = dc.pad[0];
  c.pool_pad_left = dc.pad[1];
  c.pool_pad_bottom = dc.pad[2];
  c.pool_pad_right = dc.pad[3];
  c.pool_out_h = rows;
  c.pool_out_w = cols;
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 2;  // after the input in the same bank
  c.dst_base = 7 + dc.h * dc.w;
  c.dst_row_stride = cols;
  StoreInstr st;
  st.hdr.acq0 = rows;
  st.hdr.acq0_first = 1;
  st.hdr.acq0_step = 1;
  st.src_id = 2;
  st.src_addr = c.dst_base;
  st.src_row_stride = cols;
  st.rows = rows;
  st.row_words = cols;
  st.ext_addr = kOut;
  st.ext_row_stride = stride_of(cols * n);

  const std::vector<Instruction> program = {
      encode(config_for(t)), encode(lp), encode(lw), encode(li), encode(c), encode(st),
      encode(EndInstr{})};
  for (size_t i = 0; i < program.size(); ++i) program[i].to_bytes(&mem[i * kInstrBytes]);
  SimOptions o;
  o.fine_grain = true;
  o.onchip_seed = seed;
  const SimResult r = IsaSim(t).run(mem, o);
  ASSERT_TRUE(r.ok()) << t.name << " " << dc.str() << ": " << describe_problems(r);
  EXPECT_TRUE(r.completion.clean()) << t.name << " " << dc.str() << ": " << describe_problems(r);
  EXPECT_TRUE(r.fine.clean()) << t.name << " " << dc.str() << ": " << describe_problems(r);
  EXPECT_EQ(r.uninitialized_reads, 0) << dc.str();
  EXPECT_EQ(r.stats[4].beats, rows * cols * words) << dc.str();
  EXPECT_EQ(r.stats[4].pool_words, dc.h * dc.w) << dc.str();
  if (dc.lo > -128 || dc.hi < 127) {
    EXPECT_GT(saturated, 0) << dc.str() << ": clamp never hit";
  }
  int bad = 0;
  for (int64_t y = 0; y < rows; ++y) {
    for (int64_t x = 0; x < cols; ++x) {
      for (int64_t l = 0; l < n; ++l) {
        const auto got = static_cast<int8_t>(mem[kOut + y * st.ext_row_stride + x * n + l]);
        if (got != want(l, y, x) && ++bad <= 8) {
          ADD_FAILURE() << t.name << " " << dc.str() << ": row " << y << " col " << x << " channel "
                        << l << ": expected " << int{want(l, y, x)} << ", got " << int{got}
                        << " (seed " << seed << ")";
        }
      }
    }
  }
}

TEST(IsaSim, DepthwiseMatchesThePerChannelDefinition) {
  const auto dw = [](int64_t h, int64_t w, int64_t k, int64_t s, std::array<int64_t, 4> pad) {
    DwCase dc;
    dc.h = h;
    dc.w = w;
    dc.k = k;
    dc.s = s;
    dc.pad = pad;
    return dc;
  };
  std::vector<DwCase> cases = {
      dw(6, 6, 3, 1, {1, 1, 1, 1}),   // 3x3 same
      dw(7, 9, 3, 2, {1, 1, 1, 1}),   // stride 2, odd sizes
      dw(8, 8, 3, 2, {0, 0, 1, 1}),   // stride 2, padding after only (TF "same")
      dw(6, 5, 2, 2, {0, 0, 0, 0}),   // 2x2 stride 2
      dw(5, 6, 2, 1, {0, 1, 1, 0}),   // 2x2, asymmetric
      dw(8, 7, 3, 2, {0, 1, 2, 0}),   // asymmetric
      dw(5, 5, 1, 1, {0, 0, 0, 0}),   // 1x1: a per-channel scale
      dw(7, 7, 1, 2, {0, 0, 0, 0}),   // 1x1 stride 2
      dw(1, 1, 3, 1, {1, 1, 1, 1}),   // one pixel: only the centre tap
      dw(9, 4, 3, 3, {2, 0, 0, 2}),   // stride = kernel, rows no window reads
      dw(2, 64, 3, 1, {1, 1, 1, 1}),  // as wide as the line buffer
  };
  DwCase sat = dw(6, 6, 3, 1, {1, 1, 1, 1});  // saturates at both ends of a narrow clamp
  sat.lo = -20;
  sat.hi = 30;
  sat.mult = 9000;
  cases.push_back(sat);
  sat.lo = 0;  // ReLU6-style clamp
  sat.hi = 6;
  sat.mult = 400;
  cases.push_back(sat);
  const std::vector<HwTarget> targets = {
      HwTarget::defaults(), HwTarget::from_yaml((kSource / "config/p16n16.yaml").string())};
  uint64_t seed = 71;
  for (const HwTarget& t : targets) {
    for (const DwCase& dc : cases) expect_depthwise_case(t, dc, seed++);
  }
}

// DEPTHWISE steps are input rows: with the map loaded row by row (a unit per
// row), a compute that takes one unit before each step reads no row before it
// is in, and the store of its results row by row follows the release of each;
// one that starts without the first row's unit is a race in fine-grained mode
// only.
TEST(IsaSim, DepthwiseStepsAreInputRows) {
  const HwTarget t = HwTarget::defaults();
  std::vector<uint8_t> mem(0x4000, 0);
  LoadInstr li;  // 6 rows of 6 words into bank 0, one unit per row
  li.ext_addr = 0x1000;
  li.ext_row_stride = 48;
  li.rows = 6;
  li.row_words = 6;
  li.dst_row_stride = 6;
  li.hdr.rel0 = 6;
  ComputeInstr c;
  c.mode = ComputeMode::kDepthwise;
  c.in_h = c.in_w = c.out_h = c.out_w = 6;
  c.in_groups = 1;
  c.pool_en = true;
  c.pool_k = 3;
  c.pool_s = 2;
  c.pool_pad_top = c.pool_pad_left = 1;  // rows: (6 + 1 - 3) / 2 + 1 = 3
  c.pool_out_h = c.pool_out_w = 3;
  c.dst_id = 1;
  c.dst_row_stride = 3;
  c.hdr.acq0 = 6;
  c.hdr.acq0_first = 1;
  c.hdr.acq0_step = 1;
  c.hdr.rel0 = 3;
  // Result row 0 is written after input row 1, row 1 after row 3, row 2 after row 5.
  StoreInstr st;
  st.src_id = 1;
  st.rows = 3;
  st.row_words = 3;
  st.src_row_stride = 3;
  st.ext_addr = 0x2000;
  st.ext_row_stride = 24;
  st.hdr.acq0 = 3;
  st.hdr.acq0_first = 1;
  st.hdr.acq0_step = 1;
  const auto run = [&](const ComputeInstr& ci) {
    std::vector<uint8_t> m = mem;
    const std::vector<Instruction> program = {encode(config_for(t)), encode(li), encode(ci),
                                              encode(st), encode(EndInstr{})};
    for (size_t i = 0; i < program.size(); ++i) program[i].to_bytes(&m[i * kInstrBytes]);
    SimOptions o;
    o.onchip_seed = 3;
    return IsaSim(t).run(m, o);
  };
  const SimResult ok = run(c);
  ASSERT_TRUE(ok.ok()) << describe_problems(ok);
  EXPECT_TRUE(ok.completion.clean()) << describe_problems(ok);
  EXPECT_TRUE(ok.fine.clean()) << describe_problems(ok);
  ComputeInstr early = c;
  early.hdr.acq0_first = 0;
  const SimResult bad = run(early);
  EXPECT_TRUE(bad.completion.clean()) << describe_problems(bad);
  EXPECT_GT(bad.fine.race_count, 0) << "a DEPTHWISE that reads input row 0 before it is loaded";
}

TEST(IsaSim, ResultDoesNotDependOnOnChipMemoryContents) {
  TinyConv a, b;
  SimOptions o;
  o.onchip_seed = 12345;
  ASSERT_TRUE(a.run().ok());
  ASSERT_TRUE(b.run(o).ok());
  EXPECT_EQ(a.output(), b.output());
}

// Runs `tc` after `edit` and expects error `code` at instruction `index`.
void expect_sim_error(const std::function<void(TinyConv&)>& edit, SimError code, int64_t index,
                      const std::string& part) {
  TinyConv tc;
  edit(tc);
  const SimResult r = tc.run();
  EXPECT_EQ(r.error, code) << "expected '" << part << "', got " << sim_error_name(r.error) << ": "
                           << r.message;
  EXPECT_EQ(r.error_index, index) << r.message;
  EXPECT_NE(r.message.find(part), std::string::npos) << r.message;
}

TEST(IsaSim, DecodeErrorsStopWithTheirCodeAndIndex) {
  expect_sim_error([](TinyConv& t) { t.program[3].set(hdr::kOpcode, 9); }, SimError::kIllegalInstr,
                   3, "opcode 9");
  expect_sim_error([](TinyConv& t) { t.program[2] = Instruction{}; }, SimError::kIllegalInstr, 2,
                   "opcode 0");
  // COMPUTE bit 325 (between acc_out and pool_k) is reserved.
  expect_sim_error([](TinyConv& t) { t.program[4].words[5] |= uint64_t{1} << 5; },
                   SimError::kIllegalInstr, 4, "reserved bits");
  expect_sim_error([](TinyConv& t) { t.program[0].words[0] |= 1 << 5; }, SimError::kIllegalInstr, 0,
                   "reserved bits");
  expect_sim_error([](TinyConv& t) { t.program.erase(t.program.begin()); }, SimError::kIllegalInstr,
                   0, "not CONFIG");
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kRows, 0); }, SimError::kIllegalInstr,
                   3, "rows = 0");
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kDstKind, 3); },
                   SimError::kIllegalInstr, 3, "CONTROL on a dense build");
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kDstPeStep, 1); },
                   SimError::kIllegalInstr, 3, "dst_pe_step with dst_kind BANK");
  expect_sim_error(
      [](TinyConv& t) {
        t.program[3].set(load::kDstKind, static_cast<uint64_t>(LoadDst::kParam));
        t.program[3].set(load::kDstId, 1);
      },
      SimError::kIllegalInstr, 3, "PARAM with dst_id = 1");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kMode, 4); },
                   SimError::kIllegalInstr, 4, "mode 4");
  expect_sim_error([](TinyConv& t) { t.program[1].set(hdr::kRel1, 1); }, SimError::kIllegalInstr, 1,
                   "rel1 = 1");
  expect_sim_error([](TinyConv& t) { t.program[5].set(hdr::kAcq1, 2); }, SimError::kIllegalInstr, 5,
                   "acq1 = 2");
  expect_sim_error([](TinyConv& t) { t.program[6].set(hdr::kAcq0, 1); }, SimError::kIllegalInstr, 6,
                   "END has acq0");
  expect_sim_error([](TinyConv& t) { t.program[4].set(hdr::kAcq0First, 16); },
                   SimError::kIllegalInstr, 4, "acq0_first = 16 > acq0 = 15");
}

TEST(IsaSim, FieldsTheConfigurationCannotRunAreUnsupported) {
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kDstId, 4); }, SimError::kUnsupported,
                   3, "bank 4, the configuration has 4 banks");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kInId, 7); }, SimError::kUnsupported,
                   4, "bank 7");
  expect_sim_error([](TinyConv& t) { t.program[5].set(store::kSrcId, 63); }, SimError::kUnsupported,
                   5, "bank 63");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kDstId, 5); },
                   SimError::kUnsupported, 4, "bank 5");
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kDstAddr, 4095); },
                   SimError::kUnsupported, 3, "past its depth 4096");
  expect_sim_error(
      [](TinyConv& t) {
        t.program[4].set(compute::kKernelH, 9);
        t.program[4].set(compute::kKernelW, 9);
      },
      SimError::kUnsupported, 4, "MaxKernel = 7");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kOutH, 5); }, SimError::kUnsupported,
                   4, "does not follow");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kPadBottom, 0); },
                   SimError::kUnsupported, 4, "does not follow");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kPadRight, 3); },
                   SimError::kUnsupported, 4, "not below the kernel");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kPoolPadBottom, 2); },
                   SimError::kUnsupported, 4, "not below the window");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kPoolK, 4); },
                   SimError::kUnsupported, 4, "MaxPoolKernel = 3");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kPoolOutW, 4); },
                   SimError::kUnsupported, 4, "pool_out");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kClampHi, -1); },
                   SimError::kUnsupported, 4, "lo > hi");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kDstId, 0); },
                   SimError::kUnsupported, 4, "overlaps its input");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kDstKind, 2); },
                   SimError::kUnsupported, 4, "PE_TRANSPOSE");
  expect_sim_error([](TinyConv& t) { t.program[4].set(compute::kParamBase, 510); },
                   SimError::kUnsupported, 4, "parameter RAM");
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kExtAddr, 0x1004); },
                   SimError::kUnsupported, 3, "AXI beat");
  expect_sim_error([](TinyConv& t) { t.program[0].set(config::kPes, 16); }, SimError::kUnsupported,
                   0, "P = 16");
  expect_sim_error([](TinyConv& t) { t.program[0].set(config::kBankDepth, 8192); },
                   SimError::kUnsupported, 0, "bank_depth = 8192");
  expect_sim_error([](TinyConv& t) { t.memory[TinyConv::kParams + 6] = 48; },
                   SimError::kUnsupported, 1, "shift 48");
}

TEST(IsaSim, BusErrorsAndRunawayPrograms) {
  expect_sim_error([](TinyConv& t) { t.program[3].set(load::kExtAddr, 0x1ff8); },
                   SimError::kAxiRead, 3, "past the end of memory");
  expect_sim_error([](TinyConv& t) { t.program[5].set(store::kExtAddr, 0x1ff0); },
                   SimError::kAxiWrite, 5, "past the end of memory");
  {  // a program without END that runs into the end of memory
    TinyConv tc;
    tc.place();
    const uint64_t base = tc.memory.size() - 6 * kInstrBytes;
    for (size_t i = 0; i < 6; ++i) tc.program[i].to_bytes(&tc.memory[base + i * kInstrBytes]);
    SimOptions o;
    o.instr_base = base;
    const SimResult r = IsaSim(tc.t).run(tc.memory, o);
    EXPECT_EQ(r.error, SimError::kAxiRead) << r.message;
    EXPECT_EQ(r.error_index, 6);
    EXPECT_NE(r.message.find("instruction fetch"), std::string::npos) << r.message;
  }
  TinyConv tc;
  tc.place();
  SimOptions o;
  o.instr_limit = 5;
  const SimResult r = IsaSim(tc.t).run(tc.memory, o);
  EXPECT_EQ(r.error, SimError::kNoEnd);
  EXPECT_EQ(r.error_index, 5);
}

TEST(IsaSim, DeadlockIsReportedWithTheWaitingInstruction) {
  TinyConv tc;
  tc.program[4].set(hdr::kAcq0, 16);  // one unit more than the loads release
  tc.program[4].set(hdr::kAcq0First, 16);
  tc.program[4].set(hdr::kAcq0Step, 0);
  const SimResult r = tc.run();
  EXPECT_EQ(r.error, SimError::kDeadlock);
  EXPECT_EQ(r.error_index, 4);
  EXPECT_TRUE(r.completion.deadlock);
  EXPECT_TRUE(r.fine.deadlock);
  EXPECT_NE(r.message.find("compute: instruction 4 waits"), std::string::npos) << r.message;
}

TEST(IsaSim, DeadlockErrorComesFromTheSelectedMode) {
  TinyConv tc;
  tc.program[5].set(hdr::kAcq0Step, 0);  // the store's later rows acquire nothing, and
  tc.program[5].set(hdr::kAcq0, 4);      // it waits for one unit more than exists
  SimOptions fine;
  fine.fine_grain = true;
  const SimResult r = tc.run(fine);
  EXPECT_EQ(r.error, SimError::kDeadlock);
  EXPECT_EQ(r.error_index, 5);
  EXPECT_NE(r.message.find("fine-grained mode deadlock"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("store: instruction 5 waits for acq0 3"), std::string::npos)
      << r.message;
}

TEST(IsaSim, MissingDependenciesAreRaces) {
  TinyConv tc;
  for (size_t i = 1; i <= 5; ++i) encode_header(tc.program[i], Header{});
  const SimResult r = tc.run();
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_GT(r.completion.race_count, 0);
  EXPECT_GT(r.fine.race_count, 0);
  bool raw_input = false, raw_store = false;
  for (const Race& race : r.completion.races) {
    raw_input = raw_input || (race.kind == "RAW" && race.memory == "bank 0" && race.first == 3 &&
                              race.second == 4);
    raw_store = raw_store || (race.kind == "RAW" && race.memory == "bank 1" && race.first == 4 &&
                              race.second == 5);
  }
  EXPECT_TRUE(raw_input) << describe_problems(r);
  EXPECT_TRUE(raw_store) << describe_problems(r);
  // The functional result is still the program-order one.
  EXPECT_EQ(tc.output(), tc.expected());
}

// TinyConv with a table activation: a LOAD TABLE of table 1 (256 bytes at
// 0x1c00: y = 100 - v / 2, saturated) before the other loads (instruction 1), the COMPUTE
// looking the clamped value up in it (acq0 + 1 for the table's L2C unit).
struct TableConv {
  TinyConv tc;
  std::vector<int8_t> table = std::vector<int8_t>(256);
  static constexpr uint64_t kTable = 0x1c00;
  explicit TableConv(bool dependency = true) {
    tc.t.act_tables = 2;
    for (int i = 0; i < 256; ++i) {
      table[static_cast<size_t>(i)] =
          static_cast<int8_t>(std::clamp(100 - (i - 128) / 2, -128, 127));
      tc.memory[kTable + i] = static_cast<uint8_t>(table[static_cast<size_t>(i)]);
    }
    LoadInstr lt;
    lt.ext_addr = kTable;
    lt.ext_row_stride = 256;
    lt.rows = 1;
    lt.row_words = 256 / 8;
    lt.dst_kind = LoadDst::kTable;
    lt.dst_addr = 256 / 8;  // table 1
    lt.dst_row_stride = 32;
    lt.hdr.rel0 = dependency ? 1 : 0;
    ConfigInstr cfg = config_for(tc.t);
    cfg.act_tables = 2;
    tc.program[0] = encode(cfg);
    ComputeInstr c = decode_compute(tc.program[4]);
    c.act_table_en = true;
    c.act_table = 1;
    c.hdr.acq0 += dependency ? 1 : 0;
    c.hdr.acq0_first += dependency ? 1 : 0;
    tc.program[4] = encode(c);
    // Without the dependency, the LOAD TABLE comes after the loads the
    // COMPUTE waits for (the load engine runs in order: before them it would be
    // ordered through their releases).
    tc.program.insert(tc.program.begin() + (dependency ? 1 : 4), encode(lt));
  }
  Tensor<int8_t> expected() const {
    Tensor<int8_t> v = requantize(conv2d_acc(tc.input, tc.weights, tc.bias, {3, 1, 1}), tc.rq);
    for (int8_t& x : v.values()) x = table[static_cast<size_t>(x + 128)];
    return maxpool(v, {2, 2, 0, false});
  }
};

TEST(IsaSim, TableActivationLooksUpTheClampedValueBeforeThePool) {
  TableConv tb;
  const SimResult r = tb.tc.run();
  ASSERT_TRUE(r.ok()) << describe_problems(r);
  EXPECT_TRUE(r.completion.clean()) << describe_problems(r);
  EXPECT_TRUE(r.fine.clean()) << describe_problems(r);
  EXPECT_EQ(r.uninitialized_reads, 0);
  EXPECT_EQ(tb.tc.output(), tb.expected());
  EXPECT_NE(tb.tc.output(), tb.tc.expected());  // the table changed the result
  // Encoding: dst_kind TABLE (4) in bits 236..238, the lookup in bits 470 and 472..479.
  const Instruction& lt = tb.tc.program[1];
  EXPECT_EQ(lt.raw(isa::load::kDstKind), 4u);
  EXPECT_EQ((lt.words[3] >> (236 - 192)) & 7u, 4u);
  EXPECT_EQ((lt.words[3] >> (224 - 192)) & 3u, 0u);  // the old dst_kind bits: reserved
  const Instruction& c = tb.tc.program[5];
  EXPECT_EQ((c.words[7] >> (470 - 448)) & 1u, 1u);
  EXPECT_EQ((c.words[7] >> (472 - 448)) & 0xffu, 1u);
  EXPECT_NE(disassemble(lt).find("LOAD    TABLE"), std::string::npos) << disassemble(lt);
  EXPECT_NE(disassemble(c).find("table 1"), std::string::npos) << disassemble(c);
  EXPECT_NE(disassemble(tb.tc.program[0]).find("tables 2"), std::string::npos);
}

TEST(IsaSim, TableLoadsAndLookupsAreCheckedAndRaceChecked) {
  {  // the COMPUTE does not wait for the LOAD TABLE: a race on the tables
    TableConv tb(false);
    const SimResult r = tb.tc.run();
    ASSERT_TRUE(r.ok()) << r.message;
    bool raw = false;
    for (const Race& race : r.completion.races) {
      raw = raw || (race.kind == "RAW" && race.memory == "activation tables" && race.first == 4 &&
                    race.second == 5);
    }
    EXPECT_TRUE(raw) << describe_problems(r);
  }
  {  // dst_id must be 0
    TableConv tb;
    tb.tc.program[1].set(isa::load::kDstId, 1);
    const SimResult r = tb.tc.run();
    EXPECT_EQ(r.error, SimError::kIllegalInstr) << r.message;
    EXPECT_EQ(r.error_index, 1);
  }
  {  // past the last table word
    TableConv tb;
    tb.tc.program[1].set(isa::load::kDstAddr, 33);
    const SimResult r = tb.tc.run();
    EXPECT_EQ(r.error, SimError::kUnsupported) << r.message;
    EXPECT_NE(r.message.find("[rule load.table]"), std::string::npos) << r.message;
  }
  {  // table index >= act_tables
    TableConv tb;
    tb.tc.program[5].set(isa::compute::kActTable, 2);
    const SimResult r = tb.tc.run();
    EXPECT_EQ(r.error, SimError::kUnsupported) << r.message;
    EXPECT_EQ(r.error_index, 5);
    EXPECT_NE(r.message.find("[rule compute.act_table]"), std::string::npos) << r.message;
  }
  {  // a program using tables on a build without them: CONFIG refuses it
    TableConv tb;
    tb.tc.t.act_tables = 0;
    const SimResult r = tb.tc.run();
    EXPECT_EQ(r.error, SimError::kUnsupported) << r.message;
    EXPECT_EQ(r.error_index, 0);
    EXPECT_NE(r.message.find("no table unit"), std::string::npos) << r.message;
  }
  {  // without the CONFIG's count the LOAD TABLE is past the (empty) table memory
    TableConv tb;
    tb.tc.t.act_tables = 0;
    tb.tc.program[0] = encode(config_for(tb.tc.t));
    const SimResult r = tb.tc.run();
    EXPECT_EQ(r.error, SimError::kUnsupported) << r.message;
    EXPECT_EQ(r.error_index, 1);
  }
}

// A map kept in external memory between layers: after TinyConv's STORE
// (instruction 5) the convolution runs again over the same bank (instruction
// 6: it overwrites bank 1 once the STORE has read it, S2C, and releases C2L)
// and a LOAD (7) reads the stored map back into bank 2. The STORE's S2C units
// and its finish come before its write responses; only its S2L release waits
// for them (docs/isa.md, Dependencies).
struct Reload {
  TinyConv tc;
  explicit Reload(bool s2l) {
    Instruction& store = tc.program[5];
    store.set(hdr::kRel0, 3);  // S2C: one unit per row read
    if (s2l) store.set(hdr::kRel1, 1);
    Instruction again = tc.program[4];
    encode_header(again, Header{0, 3, 0, 1, 0, 0, 0});  // acq1 S2C 3, rel1 C2L 1
    LoadInstr back;
    back.hdr.acq0 = 1;  // C2L from the second convolution
    back.hdr.acq0_first = 1;
    back.hdr.acq1 = s2l ? 1 : 0;
    back.ext_addr = TinyConv::kOutput;
    back.ext_row_stride = 24;
    back.rows = 3;
    back.row_words = 3;
    back.dst_id = 2;
    back.dst_row_stride = 3;
    tc.program.insert(tc.program.end() - 1, {again, encode(back)});
  }
};

TEST(IsaSim, LoadOfStoredBytesOrderedThroughS2LIsNoRace) {
  Reload rl(true);
  const SimResult r = rl.tc.run();
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.completion.clean()) << describe_problems(r);
  EXPECT_TRUE(r.fine.clean()) << describe_problems(r);
  EXPECT_TRUE(r.completion.balanced()) << describe_problems(r);
  EXPECT_TRUE(r.fine.balanced()) << describe_problems(r);
  EXPECT_EQ(rl.tc.output(), rl.tc.expected());
}

// The same LOAD ordered after the STORE only through S2C -> COMPUTE -> C2L:
// S2C says the STORE has read its rows, not that its writes are done, so the
// read of the stored bytes is a race (in the hardware it may see the old
// bytes), in both modes and only there.
TEST(IsaSim, LoadOfStoredBytesNotOrderedThroughS2LIsARace) {
  Reload rl(false);
  const SimResult r = rl.tc.run();
  ASSERT_TRUE(r.ok()) << r.message;
  for (const DependencyCheck* d : {&r.completion, &r.fine}) {
    EXPECT_FALSE(d->deadlock);
    EXPECT_TRUE(d->balanced()) << describe_problems(r);
    EXPECT_EQ(d->race_count, 1) << describe_problems(r);
    ASSERT_FALSE(d->races.empty());
    const Race& race = d->races[0];
    EXPECT_EQ(race.kind, "RAW");
    EXPECT_EQ(race.memory, "external");
    EXPECT_EQ(race.address, TinyConv::kOutput);
    EXPECT_EQ(race.first, 5);   // the STORE
    EXPECT_EQ(race.second, 7);  // the LOAD
  }
}

TEST(IsaSim, EarlyStartThatIsTooEarlyIsARaceOnlyInFineGrainedMode) {
  TinyConv tc;
  // Needs params + weights + 2 input rows (11 units) for its first output row.
  tc.program[4].set(hdr::kAcq0First, 10);
  const SimResult r = tc.run();
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(r.completion.clean()) << describe_problems(r);
  EXPECT_GT(r.fine.race_count, 0);
  ASSERT_FALSE(r.fine.races.empty());
  EXPECT_EQ(r.fine.races[0].kind, "RAW");
  EXPECT_EQ(r.fine.races[0].memory, "bank 0");
  EXPECT_EQ(r.fine.races[0].address, 6u);  // the first word of input row 1
}

TEST(IsaSim, UnbalancedReleasesAreReported) {
  TinyConv tc;
  tc.program[4].set(hdr::kRel1, 1);  // a C2L unit no load ever takes
  const SimResult r = tc.run();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.completion.balanced());
  EXPECT_NE(describe_problems(r).find("edge C2L released 1 units, acquired 0"), std::string::npos)
      << describe_problems(r);
}

TEST(IsaSim, ApiMisuseThrows) {
  TinyConv tc;
  SimOptions o;
  o.instr_base = 8;
  EXPECT_THROW(IsaSim(tc.t).run(tc.memory, o), Error);
  o.instr_base = 0;
  o.queue_depth = 0;
  EXPECT_THROW(IsaSim(tc.t).run(tc.memory, o), Error);
  HwTarget bad = HwTarget::defaults();
  bad.lanes = 16;
  EXPECT_THROW(IsaSim{bad}, Error);
}

// Random instructions (valid opcodes, random fields biased to small values,
// sometimes random dependency counts): the simulator always ends with a
// result — an error code with the index of the failing instruction, or a run
// to END — never an exception or a crash.
TEST(IsaSim, RandomProgramsNeverCrashTheSimulator) {
  std::mt19937_64 rng(99);
  const HwTarget t = HwTarget::defaults();
  const IsaSim sim(t);
  std::map<SimError, int> outcomes;
  const auto small = [&](const Field& f) -> int64_t {
    const int bits = std::uniform_int_distribution<int>(0, std::min(f.width, 14))(rng);
    const int64_t v = bits == 0 ? 0 : static_cast<int64_t>(rng() & ((uint64_t{1} << bits) - 1));
    if (f.is_signed)
      return std::clamp<int64_t>(v - (int64_t{1} << (bits > 0 ? bits - 1 : 0)), field_min(f),
                                 field_max(f));
    return std::min(v, field_max(f));
  };
  const std::vector<std::pair<Opcode, Section>> kinds = {{Opcode::kLoad, sections()[1]},
                                                         {Opcode::kCompute, sections()[2]},
                                                         {Opcode::kStore, sections()[3]},
                                                         {Opcode::kConfig, sections()[5]}};
  for (int trial = 0; trial < 1500; ++trial) {
    std::vector<uint8_t> memory(1 << 16);
    for (size_t i = 0x2000; i < memory.size(); ++i) memory[i] = static_cast<uint8_t>(rng());
    std::vector<Instruction> prog = {encode(config_for(t))};
    const int count = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int k = 0; k < count; ++k) {
      const auto& [op, sec] = kinds[rng() % kinds.size()];
      Instruction in;
      in.set(hdr::kOpcode, static_cast<int64_t>(op));
      for (size_t f = 0; f < sec.count; ++f) in.set(sec.fields[f], small(sec.fields[f]));
      if (rng() % 4 == 0) {
        for (const Field& f : {hdr::kAcq0, hdr::kAcq1, hdr::kRel0, hdr::kRel1}) {
          in.set(f, static_cast<int64_t>(rng() % 3));
        }
      }
      if (rng() % 50 == 0) in.words[rng() % kInstrWords] ^= uint64_t{1} << (rng() % 64);
      prog.push_back(in);
    }
    // Random fields almost never make a whole program legal (about one in a
    // thousand: a lone LOAD or STORE), so every 20th program is one STORE with
    // random fields drawn inside their limits: runs to END are reached too.
    if (trial % 20 == 0) {
      StoreInstr st;
      st.src_id = static_cast<int64_t>(rng() % t.banks);
      st.rows = 1 + static_cast<int64_t>(rng() % 4);
      st.row_words = 1 + static_cast<int64_t>(rng() % 8);
      st.src_row_stride = static_cast<int64_t>(rng() % 16);
      st.src_addr = static_cast<int64_t>(rng() % 1024);
      st.ext_row_stride = t.beat_bytes() * static_cast<int64_t>(rng() % 16);
      st.ext_addr = 0x2000 + t.beat_bytes() * static_cast<int64_t>(rng() % 512);
      prog = {encode(config_for(t)), encode(st)};
    }
    prog.push_back(encode(EndInstr{}));
    for (size_t i = 0; i < prog.size(); ++i) prog[i].to_bytes(&memory[i * kInstrBytes]);
    SimResult r;
    ASSERT_NO_THROW(r = sim.run(memory)) << "trial " << trial;
    ++outcomes[r.error];
    if (!r.ok()) {
      EXPECT_GE(r.error_index, 0) << "trial " << trial;
      EXPECT_LT(r.error_index, static_cast<int64_t>(prog.size())) << "trial " << trial;
      EXPECT_FALSE(r.message.empty()) << "trial " << trial;
    }
  }
  // The generator reaches both completed runs and the decode / range errors.
  EXPECT_GT(outcomes[SimError::kNone], 0);
  EXPECT_GT(outcomes[SimError::kIllegalInstr], 0);
  EXPECT_GT(outcomes[SimError::kUnsupported], 0);
}

}  // namespace
}  // namespace strata
