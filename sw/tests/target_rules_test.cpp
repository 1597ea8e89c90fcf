// SPDX-License-Identifier: Apache-2.0
// The table of target rules (strata/target_rules.hpp): its shape, each rule's
// boundary instructions against the table itself, and strata::IsaSim's verdict
// on them (UNSUPPORTED with the table's message, or not UNSUPPORTED), on the
// default configuration, config/p16n16.yaml, config/tiny.yaml and config/sparse.yaml.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa_sim.hpp"
#include "strata/target_rules.hpp"

namespace strata {
namespace {

std::string subject_text(const RuleSubject& s) {
  if (const auto* e = std::get_if<ParamEntry>(&s)) {
    return "param entry shift " + std::to_string(e->shift) + " byte7 " + std::to_string(e->byte7);
  }
  return std::visit(
      [](const auto& in) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(in)>, ParamEntry>) {
          return "";
        } else {
          return isa::disassemble(isa::encode(in));
        }
      },
      s);
}

std::vector<HwTarget> targets() {
  HwTarget tables = HwTarget::defaults();  // with the table unit (act_tables = 3)
  tables.name = "tables";
  tables.act_tables = 3;
  return {HwTarget::defaults(), tables,
          HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/p16n16.yaml"),
          HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/tiny.yaml"),
          HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/sparse.yaml")};
}

TEST(TargetRules, EveryRuleIsDescribedAndHasBoundaries) {
  std::set<std::string_view> ids;
  for (const TargetRule& r : target_rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate rule id " << r.id;
    EXPECT_FALSE(r.description.empty()) << r.id;
    EXPECT_FALSE(r.applies.empty()) << r.id;
    EXPECT_EQ(&target_rule(r.id), &r);
    // Rules of the sparse datapath have their boundaries on a sparse build.
    EXPECT_FALSE(r.boundaries(HwTarget::defaults()).empty() &&
                 r.boundaries(targets().back()).empty())
        << r.id;
    EXPECT_NE(rules_markdown().find(fmt::format("| `{}` |", r.id)), std::string::npos) << r.id;
  }
  EXPECT_THROW(target_rule("no.such.rule"), Error);
  // Every configuration parameter named is one of config/default.yaml's.
  const std::set<std::string> params = {"banks",           "pes",
                                        "bank_depth",      "pe_cache_depth",
                                        "param_depth",     "max_kernel",
                                        "max_pool_kernel", "max_image_width",
                                        "axi_data_width",  "axi_addr_width",
                                        "max_shift",       "sparse",
                                        "act_tables"};
  for (const TargetRule& r : target_rules()) {
    std::string p(r.parameter);
    for (size_t at = 0; !p.empty();) {
      const size_t comma = p.find(", ", at);
      const std::string one =
          p.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      EXPECT_TRUE(params.count(one)) << r.id << ": unknown parameter '" << one << "'";
      if (comma == std::string::npos) break;
      at = comma + 2;
    }
  }
}

// Just legal passes every rule; just illegal breaks this rule and no earlier one.
TEST(TargetRules, BoundariesAreJustLegalAndJustIllegal) {
  for (const HwTarget& t : targets()) {
    int pairs = 0;
    for (const TargetRule& r : target_rules()) {
      for (const RuleBoundary& b : r.boundaries(t)) {
        ++pairs;
        const auto legal = violations(b.legal, t);
        EXPECT_TRUE(legal.empty())
            << t.name << " " << r.id << ": legal side breaks "
            << (legal.empty() ? "" : legal.front().message) << "\n  " << subject_text(b.legal);
        const auto bad = first_violation(b.illegal, t);
        ASSERT_TRUE(bad.has_value())
            << t.name << " " << r.id << ": illegal side passes\n  " << subject_text(b.illegal);
        EXPECT_EQ(bad->rule, &r) << t.name << " " << r.id << ": illegal side breaks "
                                 << bad->rule->id << " first: " << bad->message;
        EXPECT_NE(bad->message.find(std::string("[rule ") + std::string(r.id) + "]"),
                  std::string::npos)
            << bad->message;
        if (!r.parameter.empty()) {
          EXPECT_NE(bad->message.find(std::string(r.parameter)), std::string::npos) << bad->message;
        }
      }
    }
    EXPECT_GE(pairs, static_cast<int>(target_rules().size())) << t.name;
  }
}

// Runs CONFIG, `program`, END on `t` with `data` at byte 4096.
SimResult sim_program(const HwTarget& t, const std::vector<isa::Instruction>& program,
                      const std::vector<uint8_t>& data) {
  isa::ConfigInstr cfg;
  cfg.version = t.version;
  cfg.pes = t.pes;
  cfg.lanes = t.lanes;
  cfg.banks = t.banks;
  cfg.bank_depth = t.bank_depth;
  cfg.pe_cache_depth = t.pe_cache_depth;
  cfg.param_depth = t.param_depth;
  cfg.sparse = t.sparse ? 1 : 0;
  std::vector<uint8_t> mem(8192);
  isa::encode(cfg).to_bytes(&mem[0]);
  for (size_t i = 0; i < program.size(); ++i) program[i].to_bytes(&mem[64 * (i + 1)]);
  isa::encode(isa::EndInstr{}).to_bytes(&mem[64 * (program.size() + 1)]);
  std::copy(data.begin(), data.end(), mem.begin() + 4096);
  SimOptions o;
  o.check_dependencies = false;
  o.onchip_seed = 1;
  return IsaSim(t).run(mem, o);
}

// IsaSim on CONFIG, the instruction, END: the error it stops with.
SimResult sim_one(const isa::Instruction& in, const HwTarget& t) {
  return sim_program(t, {in}, {});
}

// The ISA simulator's checks are the table: UNSUPPORTED with the table's message
// on the illegal side, anything but UNSUPPORTED on the legal side (the legal side
// may still run past the end of this small memory: AXI_READ / AXI_WRITE).
TEST(TargetRules, IsaSimulatorRefusesExactlyTheIllegalSide) {
  for (const HwTarget& t : targets()) {
    for (const TargetRule& r : target_rules()) {
      for (const RuleBoundary& b : r.boundaries(t)) {
        if (std::holds_alternative<ParamEntry>(b.legal)) continue;  // next test
        const auto encode = [](const RuleSubject& s) {
          return std::visit(
              [](const auto& in) {
                if constexpr (std::is_same_v<std::decay_t<decltype(in)>, ParamEntry>) {
                  return isa::Instruction{};
                } else {
                  return isa::encode(in);
                }
              },
              s);
        };
        const SimResult ok = sim_one(encode(b.legal), t);
        EXPECT_NE(ok.error, SimError::kUnsupported)
            << t.name << " " << r.id << ": " << ok.message << "\n  " << subject_text(b.legal);
        EXPECT_NE(ok.error, SimError::kIllegalInstr) << t.name << " " << r.id << ": " << ok.message;
        const SimResult bad = sim_one(encode(b.illegal), t);
        EXPECT_EQ(bad.error, SimError::kUnsupported)
            << t.name << " " << r.id << ": " << bad.message << "\n  " << subject_text(b.illegal);
        EXPECT_EQ(bad.error_index, 1);
        EXPECT_NE(bad.message.find(first_violation(b.illegal, t)->message), std::string::npos)
            << bad.message;
      }
    }
  }
}

// param.shift: a LOAD to PARAM of an entry on either side of the limit.
TEST(TargetRules, IsaSimulatorChecksParameterEntriesWithTheTable) {
  const HwTarget t = HwTarget::defaults();
  for (const RuleBoundary& b : target_rule("param.shift").boundaries(t)) {
    for (bool illegal : {false, true}) {
      const ParamEntry& e = std::get<ParamEntry>(illegal ? b.illegal : b.legal);
      isa::LoadInstr l;
      l.ext_addr = 4096;
      l.ext_row_stride = 64;
      l.rows = 1;
      l.row_words = 1;
      l.dst_kind = isa::LoadDst::kParam;
      l.dst_addr = e.channel;
      l.dst_row_stride = 1;
      std::vector<uint8_t> entry(8, 0);
      entry[6] = static_cast<uint8_t>(e.shift);
      entry[7] = static_cast<uint8_t>(e.byte7);
      const SimResult r = sim_program(t, {isa::encode(l)}, entry);
      if (illegal) {
        EXPECT_EQ(r.error, SimError::kUnsupported) << r.message;
        EXPECT_NE(r.message.find(first_violation(e, t)->message), std::string::npos) << r.message;
      } else {
        EXPECT_EQ(r.error, SimError::kNone) << r.message;
      }
    }
  }
}

// LOAD CONTROL: undefined on a dense build; on a sparse one, a control word or a
// schedule word with a bit its format does not have is refused before anything
// is written; a packed CONV whose schedule names a tap outside its kernel stops.
TEST(TargetRules, SparseControlWordsAndSchedulesAreChecked) {
  const HwTarget sparse =
      HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/sparse.yaml");
  const int n = sparse.lanes;
  isa::LoadInstr l;
  l.ext_addr = 4096;
  l.ext_row_stride = 64;
  l.rows = 1;
  l.row_words = 1;
  l.dst_kind = isa::LoadDst::kControl;
  l.dst_row_stride = 1;
  std::vector<uint8_t> word(static_cast<size_t>(n), 0);
  word[0] = 0x03 | 0x08;  // SelDown, destination PE p + 1
  word[1] = 0x02;
  const SimResult dense = sim_program(HwTarget::defaults(), {isa::encode(l)}, word);
  EXPECT_EQ(dense.error, SimError::kIllegalInstr) << dense.message;
  EXPECT_EQ(sim_program(sparse, {isa::encode(l)}, word).error, SimError::kNone);

  const auto refused = [&](isa::LoadInstr load, std::vector<uint8_t> w, const std::string& what) {
    const SimResult r = sim_program(sparse, {isa::encode(load)}, w);
    EXPECT_EQ(r.error, SimError::kUnsupported) << what << ": " << r.message;
    EXPECT_EQ(r.error_index, 1) << what;
  };
  std::vector<uint8_t> bad = word;
  bad[1] = 0x04;  // above the select code
  refused(l, bad, "control bit 2 of byte 1");
  bad = word;
  bad[0] = 0x0C;  // destination 3
  refused(l, bad, "destination 3");
  isa::LoadInstr sched = l;
  sched.dst_id = sparse.pes;
  std::vector<uint8_t> entry(static_cast<size_t>(n), 0);
  entry[0] = 1;     // group 1
  entry[2] = 0x21;  // ky 1, kx 2
  EXPECT_EQ(sim_program(sparse, {isa::encode(sched)}, entry).error, SimError::kNone);
  bad = entry;
  bad[3] = 1;
  refused(sched, bad, "schedule byte 3");

  // A packed CONV (3x3, 2 groups) whose row 0 names kx = 3.
  isa::ComputeInstr c;
  c.mode = isa::ComputeMode::kConv;
  c.in_h = c.in_w = 6;
  c.in_groups = 2;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = 1;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
  c.out_h = c.out_w = 6;
  c.dst_kind = isa::ComputeDst::kBank;
  c.dst_id = 1;
  c.dst_row_stride = 6;
  c.packed_rows = 1;
  EXPECT_EQ(sim_program(sparse, {isa::encode(sched), isa::encode(c)}, entry).error,
            SimError::kNone);
  bad = entry;
  bad[2] = 0x31;
  const SimResult r = sim_program(sparse, {isa::encode(sched), isa::encode(c)}, bad);
  EXPECT_EQ(r.error, SimError::kUnsupported) << r.message;
  EXPECT_EQ(r.error_index, 2);
  EXPECT_NE(r.message.find("outside the 3x3 kernel"), std::string::npos) << r.message;

  // Two rows: (ky 1, kx 2, g 1) then (ky 1, kx 2, g 0), a dense row earlier.
  isa::LoadInstr two = sched;
  two.row_words = 2;
  std::vector<uint8_t> entries = entry;
  entries.insert(entries.end(), entry.begin(), entry.end());
  entries[static_cast<size_t>(n)] = 0;
  c.packed_rows = 2;
  const SimResult back = sim_program(sparse, {isa::encode(two), isa::encode(c)}, entries);
  EXPECT_EQ(back.error, SimError::kUnsupported) << back.message;
  EXPECT_EQ(back.error_index, 2);
  EXPECT_NE(back.message.find("dense order"), std::string::npos) << back.message;
  std::swap(entries[0], entries[static_cast<size_t>(n)]);  // g 0, then g 1: in order
  EXPECT_EQ(sim_program(sparse, {isa::encode(two), isa::encode(c)}, entries).error,
            SimError::kNone);
}

// ---- partial sums (docs/isa.md, COMPUTE, "Partial sums"): each rule on the ISA simulator ----

// A 6x6 x 2 groups 3x3 pad 1 CONV writing its raw accumulators to bank 1 (rows
// of 4 x 6 words), and 10 neurons of 4 groups doing the same.
isa::ComputeInstr acc_conv() {
  isa::ComputeInstr c;
  c.mode = isa::ComputeMode::kConv;
  c.in_h = c.in_w = 6;
  c.in_groups = 2;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = 1;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
  c.out_h = c.out_w = 6;
  c.dst_id = 1;
  c.dst_row_stride = 24;
  c.acc_out = true;
  return c;
}
isa::ComputeInstr acc_fc() {
  isa::ComputeInstr c;
  c.mode = isa::ComputeMode::kFc;
  c.in_groups = 4;
  c.out_h = 10;
  c.out_w = 1;
  c.dst_id = 1;
  c.acc_out = true;
  return c;
}

// `c` runs (no error) when legal; else it stops at it with UNSUPPORTED and a
// message holding `rule`'s id and `part`.
void expect_acc_verdict(const isa::ComputeInstr& c, const char* rule, const std::string& part) {
  const HwTarget t = HwTarget::defaults();
  const SimResult r = sim_one(isa::encode(c), t);
  const std::string text = isa::disassemble(isa::encode(c));
  if (rule == nullptr) {
    EXPECT_EQ(r.error, SimError::kNone) << r.message << "\n  " << text;
    return;
  }
  EXPECT_EQ(r.error, SimError::kUnsupported) << text;
  EXPECT_EQ(r.error_index, 1);
  EXPECT_NE(r.message.find(fmt::format("[rule {}]", rule)), std::string::npos) << r.message;
  EXPECT_NE(r.message.find(part), std::string::npos) << r.message;
}

TEST(TargetRules, AccModeRefusesPartialSumsOutsideDenseConvAndFc) {
  expect_acc_verdict(acc_conv(), nullptr, "");
  expect_acc_verdict(acc_fc(), nullptr, "");
  isa::ComputeInstr pool;
  pool.mode = isa::ComputeMode::kPool;
  pool.in_h = pool.in_w = pool.out_h = pool.out_w = 6;
  pool.in_groups = 1;
  pool.pool_en = true;
  pool.pool_k = pool.pool_s = 2;
  pool.pool_out_h = pool.pool_out_w = 3;
  pool.dst_id = 1;
  pool.dst_row_stride = 3;
  pool.dst_group_stride = 9;
  expect_acc_verdict(pool, nullptr, "");
  pool.acc_out = true;
  expect_acc_verdict(pool, "compute.acc_mode", "acc_out on a POOL");
  isa::ComputeInstr dw = pool;
  dw.mode = isa::ComputeMode::kDepthwise;
  dw.acc_out = false;
  dw.acc_in = true;
  expect_acc_verdict(dw, "compute.acc_mode", "acc_in on a DEPTHWISE");
  const HwTarget sparse =
      HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/sparse.yaml");
  isa::ComputeInstr packed = acc_conv();
  packed.packed_rows = 1;
  const SimResult r = sim_one(isa::encode(packed), sparse);
  EXPECT_EQ(r.error, SimError::kUnsupported);
  EXPECT_NE(r.message.find("acc_out on a packed CONV (packed_rows = 1)"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("[rule compute.acc_mode]"), std::string::npos) << r.message;
}

TEST(TargetRules, AccOutRefusesPoolingTablesAndPeDestinations) {
  isa::ComputeInstr c = acc_conv();
  c.pool_en = true;
  c.pool_k = c.pool_s = 2;
  c.pool_out_h = c.pool_out_w = 3;
  expect_acc_verdict(c, "compute.acc_out", "CONV with acc_out and pool_en = 1");
  c.acc_out = false;  // pooling is fine without acc_out, also from partial sums
  c.acc_in = true;
  c.acc_id = 2;
  expect_acc_verdict(c, nullptr, "");
  isa::ComputeInstr f = acc_fc();
  f.act_table_en = true;  // the default configuration has tables
  expect_acc_verdict(f, "compute.acc_out", "FC with acc_out and act_table_en = 1");
  f.act_table_en = false;
  f.dst_kind = isa::ComputeDst::kPeTranspose;
  f.dst_id = 0;
  f.dst_base = 512;
  expect_acc_verdict(f, "compute.acc_out", "FC with acc_out writes PE_TRANSPOSE");
  f.acc_out = false;  // transposed results from partial sums
  f.acc_in = true;
  f.acc_id = 2;
  expect_acc_verdict(f, nullptr, "");
  c = acc_conv();
  c.dst_kind = isa::ComputeDst::kPeCache;
  c.dst_id = 3;
  c.dst_base = 512;
  c.dst_row_stride = 6;
  expect_acc_verdict(c, "compute.acc_out", "CONV with acc_out writes PE_CACHE");
}

TEST(TargetRules, AccBankRefusesAMissingBank) {
  const HwTarget t = HwTarget::defaults();
  for (isa::ComputeInstr c : {acc_conv(), acc_fc()}) {
    c.acc_in = true;
    c.acc_base = 512;
    c.acc_id = t.banks - 1;
    expect_acc_verdict(c, nullptr, "");
    c.acc_id = t.banks;
    expect_acc_verdict(c, "compute.acc_bank",
                       fmt::format("reads its partial sums from bank {}, the configuration has {} "
                                   "banks; bounded by banks",
                                   t.banks, t.banks));
  }
}

TEST(TargetRules, AccRangeRefusesPartialSumsPastTheBank) {
  const HwTarget t = HwTarget::defaults();
  isa::ComputeInstr c = acc_conv();
  c.acc_in = true;
  c.acc_id = 2;
  c.pad_top = 0;  // 5 x 6 pixels: 120 words
  c.out_h = 5;
  c.acc_base = t.bank_depth - 120;
  expect_acc_verdict(c, nullptr, "");
  c.acc_base += 1;
  expect_acc_verdict(c, "compute.acc_range",
                     fmt::format("CONV partial sums [{}, {}) (30 pixels x 4 words) past the bank "
                                 "depth {}; bounded by bank_depth",
                                 t.bank_depth - 119, t.bank_depth + 1, t.bank_depth));
  isa::ComputeInstr f = acc_fc();
  f.acc_out = false;
  f.acc_in = true;
  f.acc_id = 1;
  f.dst_id = 2;
  f.acc_base = t.bank_depth - 40;
  expect_acc_verdict(f, nullptr, "");
  f.acc_base += 1;
  expect_acc_verdict(f, "compute.acc_range", "(10 neurons x 4 words)");
}

TEST(TargetRules, AccOverlapAllowsOnlyInPlace) {
  isa::ComputeInstr c = acc_conv();
  c.acc_in = true;
  c.acc_id = c.dst_id;
  c.dst_base = c.acc_base = 300;
  expect_acc_verdict(c, nullptr, "");  // in place
  c.dst_row_stride = 25;
  expect_acc_verdict(c, "compute.acc_overlap",
                     "CONV partial sums [300, 444) overlap its results [300, 449) in bank 1");
  c.dst_row_stride = 24;
  c.acc_base = 299;
  expect_acc_verdict(c, "compute.acc_overlap", "(only in place");
  c.acc_base = 300 - 144;  // right before
  expect_acc_verdict(c, nullptr, "");
  c.acc_base = 444;  // right after
  expect_acc_verdict(c, nullptr, "");
  c.acc_base = 443;
  expect_acc_verdict(c, "compute.acc_overlap", "overlap its results");
  c.acc_id = 2;  // another bank: anywhere
  c.acc_base = 301;
  expect_acc_verdict(c, nullptr, "");
  // Requantised results (36 words from 300) in the partial sums' bank: never in place.
  c = acc_conv();
  c.acc_out = false;
  c.acc_in = true;
  c.acc_id = c.dst_id;
  c.dst_row_stride = 6;
  c.dst_base = c.acc_base = 300;
  expect_acc_verdict(c, "compute.acc_overlap", "overlap its results [300, 336)");
  c.acc_base = 336;
  expect_acc_verdict(c, nullptr, "");
  // FC: in place at acc_base = dst_base, else apart.
  isa::ComputeInstr f = acc_fc();
  f.acc_in = true;
  f.acc_id = f.dst_id;
  f.dst_base = f.acc_base = 100;
  expect_acc_verdict(f, nullptr, "");
  f.acc_base = 104;
  expect_acc_verdict(f, "compute.acc_overlap", "FC partial sums [104, 144) overlap its results");
  f.acc_base = 140;
  expect_acc_verdict(f, nullptr, "");
}

// The result-range rules measure acc_out's results: (out_h - 1) x dst_row_stride +
// 4 x out_w words (FC: 4 x out_h).
TEST(TargetRules, DestinationRulesUseTheAccOutExtent) {
  const HwTarget t = HwTarget::defaults();
  isa::ComputeInstr c = acc_conv();
  c.dst_row_stride = 30;
  c.dst_base = t.bank_depth - (5 * 30 + 24);
  expect_acc_verdict(c, nullptr, "");
  c.dst_base += 1;
  expect_acc_verdict(c, "compute.dst_bank_range",
                     fmt::format("CONV results up to word {} past the bank depth", t.bank_depth));
  isa::ComputeInstr f = acc_fc();
  f.dst_base = t.bank_depth - 40;
  expect_acc_verdict(f, nullptr, "");
  f.dst_base += 1;
  expect_acc_verdict(f, "compute.dst_bank_range", "FC results up to word");
  // Results in the input's bank, ending at the input (words 144 on): the raw
  // accumulators reach it where the requantised results (36 words) would not.
  c = acc_conv();
  c.dst_id = c.in_id;
  c.in_base = 144;
  expect_acc_verdict(c, nullptr, "");
  c.in_base = 143;
  expect_acc_verdict(c, "compute.dst_bank_overlap", "CONV destination overlaps its input");
  f = acc_fc();
  f.dst_id = f.in_id;
  f.in_base = 39;
  expect_acc_verdict(f, "compute.dst_bank_overlap", "FC destination overlaps its weights");
}

TEST(TargetRules, DocsSectionIsReplacedBetweenTheMarkers) {
  const std::string doc = std::string("intro\n") + std::string(kRulesBegin) + "\nold\n" +
                          std::string(kRulesEnd) + "\nrest\n";
  const std::string out = with_rules_section(doc);
  EXPECT_EQ(out.find("old"), std::string::npos);
  EXPECT_NE(out.find(rules_markdown()), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 5), "rest\n");
  EXPECT_EQ(with_rules_section(out), out);
  EXPECT_THROW(with_rules_section("no markers"), Error);
}

}  // namespace
}  // namespace strata
