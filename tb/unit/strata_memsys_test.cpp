// SPDX-License-Identifier: Apache-2.0
// Memory system end to end (rtl/memsys/strata_memsys.sv): programs built
// here run through CSR START -> fetch -> load / store engines (and the bench's
// compute stand-in, tb/unit/memsys_bench.hpp) against the AXI memory model;
// external memory, PE caches and parameter RAM are compared byte for byte
// with the program-order reference. Also: fine-grained dependencies, every
// error code with its instruction index and a good run after it, performance
// counters and the LOAD bandwidth at 60 cycles of memory latency; every LOAD
// and STORE rule of the target-rule table (strata/target_rules.hpp) on its
// boundary instructions against the table's verdict. On the sparse build
// (StrataMemsysSparse): the second compute read port against a model of the
// bank while the load engine and the compute write port write it, and LOAD
// CONTROL (control words, dst_pe_step, the schedule, every refusal).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <vector>

#include "memsys_bench.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/target_rules.hpp"

// Built once per configuration (tb/unit/memsys.cmake); the suite is named
// after it.
#ifndef STRATA_MEMSYS_SUITE
#define STRATA_MEMSYS_SUITE StrataMemsys
#endif

namespace strata::tb {
namespace {

using csr::ErrorCode;

constexpr uint64_t kSrcArea = 0x00100000;  // LOAD sources
constexpr uint64_t kDstArea = 0x04000000;  // STORE destinations
constexpr int kSlotWords = hw::kBankDepth / 2;

class STRATA_MEMSYS_SUITE : public MemsysBench {
 protected:
  // A beat-aligned external address; sometimes just below a 4 KB boundary so
  // that rows cross it.
  uint64_t ext_addr(uint64_t area, uint64_t span) {
    if (rand_int(0, 2) == 0) {
      const uint64_t page = area / 4096 + rand_int(1, 200);
      return page * 4096 - uint64_t(rand_int(1, 20)) * kBeatBytes;
    }
    return area + uint64_t(rand_int(0, int64_t(span / kBeatBytes))) * kBeatBytes;
  }

  // Tiles of LOAD -> COMPUTE (stand-in copy or relay) -> STORE, double
  // buffered: tile t uses bank slot t % 2, so LOAD t+1 overlaps COMPUTE t and
  // STORE t. Dependencies (docs/isa.md), with counts that are right in both
  // modes (a producer releases one rel0 unit per row in fine-grained mode;
  // the stand-in compute releases everything at its end):
  //   LOAD t:    rel0 L2C = rows; from tile 2 on acq0 C2L = 1 (first 1) and
  //              acq1 S2L = 1 (the tile that used the slot before);
  //   COMPUTE t: acq0 L2C = rows (first = rows: it reads the whole tile),
  //              from tile 2 on acq1 S2C = rows of tile t-2; rel0 C2S = rows,
  //              rel1 C2L = 1;
  //   STORE t:   acq0 C2S = rows, one more per row (first 1, step 1);
  //              rel0 S2C = rows, rel1 S2L = 1.
  // Emitted software-pipelined: L0, then per tile t: L(t+1), C(t), S(t).
  std::vector<Instr> random_tiles(int tiles, int max_rows, int max_words) {
    std::vector<Instr> loads, computes, stores;
    std::vector<int> rows_of;
    for (int t = 0; t < tiles; ++t) {
      const int slot = (t % 2) * kSlotWords;
      const bool later = t >= 2;
      LoadSpec l;
      l.rows = static_cast<int>(rand_int(1, max_rows));
      l.row_words = static_cast<int>(rand_int(1, max_words));
      l.dst_stride = l.row_words + static_cast<int>(rand_int(0, 5));
      const int half = kSlotWords / 2;
      while (l.rows > 1 && (l.rows - 1) * l.dst_stride + l.row_words > half) --l.rows;
      const uint64_t row_bytes = uint64_t(l.row_words) * kWordBytes;
      l.ext_stride = row_bytes + uint64_t(rand_int(0, 3)) * kBeatBytes;
      l.ext_addr = ext_addr(kSrcArea, 0x100000);
      l.dst_id = static_cast<int>(rand_int(0, hw::kBanks - 1));
      const int span = (l.rows - 1) * l.dst_stride + l.row_words;
      l.dst_addr = slot + static_cast<int>(rand_int(0, half - span));
      loads.push_back(load_instr(l).deps(later, later, l.rows, 0).fine(later, 0));

      CopySpec c;
      StoreSpec s;
      s.rows = l.rows;
      s.row_words = l.row_words;
      if (rand_int(0, 2) != 0) {
        c.in_id = l.dst_id;
        c.in_base = l.dst_addr;
        c.rows = l.rows;
        c.words = l.row_words;
        c.in_stride = l.dst_stride;
        c.dst_id = static_cast<int>(rand_int(0, hw::kBanks - 1));
        c.dst_stride = l.row_words + static_cast<int>(rand_int(0, 3));
        while ((c.rows - 1) * c.dst_stride + c.words > half) c.dst_stride = c.words;
        const int cspan = (c.rows - 1) * c.dst_stride + c.words;
        c.dst_base = slot + half + static_cast<int>(rand_int(0, half - cspan));
        s.src_id = c.dst_id;
        s.src_addr = c.dst_base;
        s.src_stride = c.dst_stride;
      } else {
        s.src_id = l.dst_id;  // relay: the store reads what the load wrote
        s.src_addr = l.dst_addr;
        s.src_stride = l.dst_stride;
      }
      c.delay = static_cast<int>(rand_int(0, 30));
      const int s2c = later ? rows_of[t - 2] : 0;
      computes.push_back(compute_instr(c).deps(l.rows, s2c, l.rows, 1).fine(l.rows, 0));
      s.ext_stride = row_bytes + uint64_t(rand_int(0, 4)) * kBeatBytes;
      s.ext_addr = ext_addr(kDstArea, 0x200000);
      stores.push_back(store_instr(s).deps(l.rows, 0, l.rows, 1).fine(1, 1));
      rows_of.push_back(l.rows);
    }
    std::vector<Instr> prog{loads[0]};
    for (int t = 0; t < tiles; ++t) {
      if (t + 1 < tiles) prog.push_back(loads[t + 1]);
      prog.push_back(computes[t]);
      prog.push_back(stores[t]);
    }
    prog.push_back(end_instr());
    return prog;
  }

  void run_and_check(const std::vector<Instr>& prog, const std::string& ctx, bool fine = false) {
    reference(prog);
    const RunResult r = run(prog, fine);
    ASSERT_TRUE(r.done()) << ctx << ": status 0x" << std::hex << r.status << " code "
                          << csr::to_string(r.code) << " index " << std::dec << r.index
                          << " (STRATA_SEED=" << seed() << ")";
    expect_matches_reference(ctx);
    EXPECT_EQ(axi_->reads_outstanding(), 0u);
    EXPECT_EQ(axi_->writes_outstanding(), 0u);
  }

  // A program that must stop with `code` at `index` (then `check`, which may
  // look at what was written), then a good one.
  void expect_error_then_recover(const std::vector<Instr>& bad, ErrorCode code, uint16_t index,
                                 const std::string& what, std::optional<uint32_t> limit = {},
                                 const std::function<void()>& check = {}) {
    const RunResult r = run(bad, false, 100000, limit);
    ASSERT_TRUE(r.finished) << what;
    EXPECT_TRUE(r.status & csr::kStatusError) << what << ": STATUS.ERROR";
    EXPECT_FALSE(r.status & csr::kStatusDone) << what << ": STATUS.DONE";
    EXPECT_EQ(r.code, code) << what << ": got " << csr::to_string(r.code)
                            << " (STRATA_SEED=" << seed() << ")";
    EXPECT_EQ(r.index, index) << what << ": error index";
    steps(50);
    EXPECT_EQ(axi_->reads_outstanding(), 0u) << what << ": reads drained";
    EXPECT_EQ(axi_->writes_outstanding(), 0u) << what << ": writes drained";
    if (check) check();
    axi_->clear_error_regions();
    // Ready for the next START: a good program runs and is correct.
    ref_ = RefMachine();
    pe_writes_.clear();
    ctl_writes_.clear();
    param_writes_.clear();
    tab_writes_.clear();
    mem_ = SparseMemory();
    mem_.set_background(background_byte);
    run_and_check(random_tiles(3, 3, 20), what + ", then a good program");
  }

  // A small legal LOAD of bank 0 at address 0.
  static LoadSpec small_load() {
    LoadSpec l;
    l.ext_addr = kSrcArea;
    l.ext_stride = 4 * kWordBytes;
    l.rows = 2;
    l.row_words = 4;
    l.dst_stride = 4;
    return l;
  }

  // A STORE of rows x row_words words of bank 0 from address 0 to kDstArea,
  // rows packed in the bank and in memory.
  static StoreSpec small_store(int rows = 2, int row_words = 4) {
    StoreSpec s;
    s.ext_addr = kDstArea;
    s.ext_stride = uint64_t(row_words) * kWordBytes;
    s.rows = rows;
    s.row_words = row_words;
    s.src_stride = row_words;
    return s;
  }

  // A legal LOAD CONTROL word (docs/isa.md, LOAD; strata/isa.hpp): a control
  // word has a select code in bits 1:0 of every byte and a destination 0..2 in
  // bits 3:2 of byte 0; a schedule word uses bytes 0..2 only.
  std::vector<uint8_t> control_word(bool schedule) {
    std::vector<uint8_t> v(kWordBytes, 0);
    for (int b = 0; b < (schedule ? 3 : kWordBytes); ++b) {
      v[b] = static_cast<uint8_t>(rand_int(0, schedule ? 255 : 3));
    }
    if (!schedule) v[0] = static_cast<uint8_t>(v[0] | rand_int(0, 2) << 2);
    return v;
  }

  // Bytes into the bench's external memory and the reference's.
  void put_bytes(uint64_t addr, const std::vector<uint8_t>& v) {
    mem_.write_block(addr, v);
    ref_.ext.write_block(addr, v);
  }

  // Legal words at the external rows of a LOAD (its rows x row_words N-byte words).
  void put_control_words(const LoadSpec& l, bool schedule) {
    for (int r = 0; r < l.rows; ++r) {
      for (int w = 0; w < l.row_words; ++w) {
        put_bytes(l.ext_addr + uint64_t(r) * l.ext_stride + uint64_t(w) * kWordBytes,
                  control_word(schedule));
      }
    }
  }

  // A LOAD CONTROL of rows x row_words words, rows packed in external memory.
  static LoadSpec control_load(int dst_id, int rows, int row_words, uint64_t ext = kSrcArea) {
    LoadSpec l;
    l.kind = isa::LoadDst::kControl;
    l.dst_id = dst_id;
    l.ext_addr = ext;
    l.rows = rows;
    l.row_words = row_words;
    l.ext_stride = uint64_t(row_words) * kWordBytes;
    l.dst_stride = row_words;
    return l;
  }

  // LOAD l -> (L2C) relay COMPUTE (C2S) -> STORE s, END.
  static std::vector<Instr> round_trip(const LoadSpec& l, const StoreSpec& s) {
    return {load_instr(l).deps(0, 0, 1, 0), compute_instr({}).deps(1, 0, 1, 0),
            store_instr(s).deps(1, 0, 0, 0), end_instr()};
  }
};

TEST_F(STRATA_MEMSYS_SUITE, LoadStoreRoundTrip) {
  run_and_check(round_trip(small_load(), small_store()), "round trip");
  EXPECT_EQ(cp_->executed, 1);
}

class MemsysRandom : public STRATA_MEMSYS_SUITE, public ::testing::WithParamInterface<double> {};

// Random 2D programs (4 KB-crossing rows, many outstanding bursts) under
// random stalls on every channel: ARREADY, AWREADY, WREADY low, R / B gaps,
// interleaved R beats of fetch and load, PE / parameter back-pressure, gaps
// in the compute stand-in. Probability 0: full rate.
TEST_P(MemsysRandom, TiledProgramsMatchReference) {
  const double p = GetParam();
  auto& c = axi_->config();
  c.ar_stall = c.aw_stall = c.w_stall = c.r_gap = c.b_gap = p;
  c.interleave = p > 0;
  c.read_latency = static_cast<unsigned>(rand_int(5, 80));
  cp_->gap = p;
  int transfers = 0;
  for (int round = 0; round < 3; ++round) {
    const auto prog = random_tiles(12, 6, 48);
    transfers += 12 * 2;
    run_and_check(prog, fmt::format("round {} (stall {})", round, p));
  }
  std::cout << "[ STATS    ] " << transfers << " LOAD/STORE transfers, "
            << axi_->stats().read_bursts << " read bursts, " << axi_->stats().write_bursts
            << " write bursts, max " << axi_->stats().max_reads_outstanding << " reads outstanding"
            << std::endl;
  EXPECT_GE(axi_->stats().max_reads_outstanding, 2u) << "several reads in flight";
}

// (One macro level more, so the prefix is the suite's expanded name.)
#define MEMSYS_INSTANTIATE(prefix, ...) INSTANTIATE_TEST_SUITE_P(prefix, __VA_ARGS__)
MEMSYS_INSTANTIATE(STRATA_MEMSYS_SUITE, MemsysRandom, ::testing::Values(0.0, 0.2, 0.5),
                   [](const auto& info) {
                     return fmt::format("Stall{}", static_cast<int>(info.param * 100));
                   });

// Write responses hundreds of cycles late: several finished STOREs wait for
// theirs at once, their S2L releases leave in order as the responses come
// in, and each LOAD that reuses a STORE's bank slot (S2L) waits for them;
// the results are those of program order in both modes.
TEST_F(STRATA_MEMSYS_SUITE, TiledProgramsWithLateWriteResponses) {
  axi_->config().write_latency = 300;
  axi_->config().b_gap = 0.2;
  for (bool fine : {false, true}) {
    run_and_check(random_tiles(12, 4, 24), fine ? "fine" : "completion", fine);
    // The last two tiles' S2L units, which no load takes: released before DONE.
    EXPECT_EQ(sem(4), 2u) << "S2L units of the last two STOREs";
  }
}

// Same programs in fine-grained mode: the result is identical.
TEST_F(STRATA_MEMSYS_SUITE, TiledProgramsFineGrained) {
  axi_->config().r_gap = 0.1;
  for (int round = 0; round < 2; ++round) {
    run_and_check(random_tiles(10, 6, 40), fmt::format("fine round {}", round), true);
  }
}

// More than 1000 single transfers in one run (random LOAD + STORE pairs).
TEST_F(STRATA_MEMSYS_SUITE, ThousandTransfers) {
  axi_->config().read_latency = 20;
  run_and_check(random_tiles(520, 2, 6), "1040 transfers");
}

TEST_F(STRATA_MEMSYS_SUITE, PeCacheAndParameterLoads) {
  pe_throttle_ = Throttle(0.3);
  param_throttle_ = Throttle(0.3);
  std::vector<Instr> prog;
  for (int k = 0; k < 12; ++k) {
    LoadSpec l;
    l.rows = static_cast<int>(rand_int(1, 20));
    l.row_words = static_cast<int>(rand_int(1, 30));
    const int unit = k % 3 == 2 ? kParamBytes : kWordBytes;
    l.ext_stride = uint64_t(l.row_words) * unit + uint64_t(rand_int(0, 2)) * kBeatBytes;
    l.ext_stride = (l.ext_stride + kBeatBytes - 1) / kBeatBytes * kBeatBytes;
    l.ext_addr = ext_addr(kSrcArea, 0x80000);
    if (k % 3 == 2) {
      l.kind = isa::LoadDst::kParam;
      while (l.rows * l.row_words > hw::kParamDepth) --l.rows;
      l.dst_stride = l.row_words;
      l.dst_addr = static_cast<int>(rand_int(0, hw::kParamDepth - l.rows * l.row_words));
    } else {
      l.kind = isa::LoadDst::kPeCache;
      l.pe_step = k % 3 == 1;
      l.dst_id = static_cast<int>(rand_int(0, hw::kPes - 1));
      l.dst_stride = l.row_words + static_cast<int>(rand_int(0, 3));
      const int drows = l.pe_step ? (l.rows - 1) / hw::kPes + 1 : l.rows;
      l.dst_addr = static_cast<int>(
          rand_int(0, hw::kPeCacheDepth - ((drows - 1) * l.dst_stride + l.row_words)));
    }
    prog.push_back(load_instr(l));
    // Later loads overwrite earlier ones in program order: each engine runs
    // its instructions in order, so no dependency is needed between them.
  }
  prog.push_back(end_instr());
  run_and_check(prog, "PE cache and parameter loads");
  EXPECT_GT(pe_write_count_, 0u);
  EXPECT_GT(param_write_count_, 0u);
}

// 64 KB LOAD (all PE caches, one row per PE) at 60 cycles of read latency,
// no stalls: beats per cycle from the first load AR to the last load beat.
TEST_F(STRATA_MEMSYS_SUITE, LoadBandwidth) {
  LoadSpec l;
  l.kind = isa::LoadDst::kPeCache;
  l.pe_step = true;
  l.rows = hw::kPes;
  l.row_words = 64 * 1024 / kWordBytes / hw::kPes;
  ASSERT_LE(l.row_words, hw::kPeCacheDepth);
  l.ext_addr = kSrcArea;
  l.ext_stride = uint64_t(l.row_words) * kWordBytes;
  std::vector<Instr> prog{load_instr(l), end_instr()};
  ASSERT_EQ(axi_->config().read_latency, 60u);
  run_and_check(prog, "64 KB load");
  const auto& st = axi_->stats();
  const uint64_t beats = st.beats_by_id.at(1);
  ASSERT_EQ(beats, 64u * 1024 / kBeatBytes);
  const uint64_t window = st.last_r_cycle.at(1) - st.first_ar_cycle.at(1) + 1;
  const double bw = double(beats) / double(window);
  const uint64_t busy = csr_->read64(csr::kPerfLoadBusy);
  std::cout << "[ MEASURED ] LOAD bandwidth " << fmt::format("{:.3f}", bw) << " beats/cycle ("
            << beats << " beats in " << window << " cycles from the first AR to the last beat, "
            << "read latency 60); PERF_LOAD_BUSY " << busy << " cycles -> "
            << fmt::format("{:.3f}", double(beats) / double(busy)) << " beats/cycle" << std::endl;
  RecordProperty("load_beats_per_cycle", fmt::format("{:.3f}", bw));
  EXPECT_GE(bw, 0.9);
  EXPECT_GE(double(beats) / double(busy), 0.9);
  EXPECT_GE(st.max_reads_outstanding, 4u) << "60 beats in flight need >= 4 bursts of 16";
  // Once data flows, one beat every cycle: the credits never run out.
  EXPECT_EQ(st.last_r_cycle.at(1) - st.first_r_cycle.at(1) + 1, beats) << "gaps in the R stream";
}

// With the memory's bandwidth halved (a beat every other cycle on R and W)
// the engines follow it exactly: the load's beats and the store's beats
// arrive every second cycle, and the data is still right.
TEST_F(STRATA_MEMSYS_SUITE, HalfBandwidthMemory) {
  axi_->config().r_interval = 2;
  axi_->config().w_interval = 2;
  LoadSpec l = small_load();
  l.rows = 1;
  l.row_words = 512;
  l.ext_stride = 512 * kWordBytes;
  StoreSpec s;
  s.ext_addr = kDstArea;
  s.ext_stride = 512 * kWordBytes;
  s.row_words = 512;
  run_and_check(round_trip(l, s), "half bandwidth");
  const auto& st = axi_->stats();
  const uint64_t beats = 512u * kWordBytes / kBeatBytes;
  EXPECT_EQ(st.last_r_cycle.at(1) - st.first_r_cycle.at(1) + 1, 2 * beats - 1);
  EXPECT_EQ(st.last_w_cycle - st.first_w_cycle + 1, 2 * beats - 1);
}

// A long STORE without stalls sends one W beat per cycle from its first to
// its last beat (bank reads, data FIFO, bursts and responses keep up).
TEST_F(STRATA_MEMSYS_SUITE, StoreWriteThroughput) {
  LoadSpec l = small_load();
  l.rows = 2;
  l.row_words = 1000;
  l.dst_stride = 1000;
  l.ext_stride = 1000 * kWordBytes;
  StoreSpec s = small_store(2, 1000);
  s.ext_addr += 0x40;  // unaligned to 4 KB: bursts are split there
  run_and_check(round_trip(l, s), "2000-word store");
  const auto& st = axi_->stats();
  const uint64_t beats = 2000u * kWordBytes / kBeatBytes;
  ASSERT_EQ(st.write_beats, beats);
  EXPECT_EQ(st.last_w_cycle - st.first_w_cycle + 1, beats) << "gaps in the W stream";
}

// Counters after a known program: exact byte and instruction counts.
TEST_F(STRATA_MEMSYS_SUITE, PerformanceCounters) {
  const auto prog = random_tiles(4, 4, 16);
  uint64_t load_bytes = 0, store_bytes = 0;
  for (const auto& i : prog) {
    if (i.op() == isa::Opcode::kLoad) {
      load_bytes += i.get(isa::load::kRows) * i.get(isa::load::kRowWords) * kWordBytes;
    } else if (i.op() == isa::Opcode::kStore) {
      store_bytes += i.get(isa::store::kRows) * i.get(isa::store::kRowWords) * kWordBytes;
    }
  }
  reference(prog);
  const RunResult r = run(prog);
  ASSERT_TRUE(r.done());
  expect_matches_reference("counters program");
  EXPECT_EQ(csr_->read64(csr::kPerfReadBytes), prog.size() * kInstrBytes + load_bytes);
  EXPECT_EQ(csr_->read64(csr::kPerfWriteBytes), store_bytes);
  EXPECT_EQ(csr_->read64(csr::kPerfInstructions), prog.size());
  const uint64_t cycles = csr_->read64(csr::kPerfCycles);
  // Busy cycles vs. the bench's count from the START response to the
  // interrupt (which adds the status and interrupt register stages).
  EXPECT_LE(cycles, r.cycles);
  EXPECT_GE(cycles + 3, r.cycles);
  const uint64_t load_busy = csr_->read64(csr::kPerfLoadBusy);
  const uint64_t store_busy = csr_->read64(csr::kPerfStoreBusy);
  EXPECT_GE(load_busy, load_bytes / kBeatBytes);
  EXPECT_LE(load_busy, cycles);
  EXPECT_GE(store_busy, store_bytes / kBeatBytes);
  EXPECT_GT(csr_->read64(csr::kPerfComputeBusy), 0u);
  EXPECT_GT(csr_->read64(csr::kPerfStallLoadMem), 0u) << "60-cycle latency shows";
  EXPECT_GT(csr_->read64(csr::kPerfStallStoreDep) + csr_->read64(csr::kPerfStallLoadDep), 0u);
  EXPECT_EQ(csr_->read64(csr::kPerfMacs), 0u) << "no compute engine";
  // A second run starts from zero.
  const auto small = std::vector<Instr>{end_instr()};
  ASSERT_TRUE(run(small).done());
  EXPECT_EQ(csr_->read64(csr::kPerfInstructions), 1u);
  EXPECT_EQ(csr_->read64(csr::kPerfReadBytes), kInstrBytes);
  EXPECT_EQ(csr_->read64(csr::kPerfWriteBytes), 0u);
}

// ---------------------------------------------------------------- fine-grained mode

// A LOAD releases one L2C unit per written row in fine-grained mode, and all
// of them at the end in completion mode.
TEST_F(STRATA_MEMSYS_SUITE, LoadReleasesPerRowWhenFineGrained) {
  for (bool fine : {false, true}) {
    LoadSpec l;
    l.rows = 4;
    l.row_words = 200;
    l.dst_stride = 200;
    l.ext_addr = kSrcArea;
    l.ext_stride = 200 * kWordBytes;
    std::vector<uint64_t> seen;
    monitor_ = [&] {
      const uint64_t v = sem(0);
      if (seen.empty() || seen.back() != v) seen.push_back(v);
    };
    const RunResult r = run({load_instr(l).deps(0, 0, 4, 0), end_instr()}, fine);
    monitor_ = nullptr;
    ASSERT_TRUE(r.done());
    const std::vector<uint64_t> want =
        fine ? std::vector<uint64_t>{0, 1, 2, 3, 4} : std::vector<uint64_t>{0, 4};
    // The counts seen from the run's clear on (earlier values: last run's).
    const auto first0 = std::find(seen.begin(), seen.end(), 0u);
    EXPECT_EQ(std::vector<uint64_t>(first0, seen.end()), want) << (fine ? "fine" : "completion");
  }
}

// A STORE acquires C2S per row in fine-grained mode: its first write burst
// goes out after the first unit is released, long before the last.
TEST_F(STRATA_MEMSYS_SUITE, StoreStartsWithFirstRowWhenFineGrained) {
  for (bool fine : {false, true}) {
    LoadSpec l = small_load();
    l.rows = 4;
    const StoreSpec s = small_store(4, 4);
    // The load fills the bank first (one L2C unit per row to a relay compute
    // that needs all four and releases nothing); the bench releases C2S one
    // unit every 400 cycles.
    std::vector<Instr> prog{load_instr(l).deps(0, 0, 4, 0),
                            compute_instr({}).deps(4, 0, 0, 0).fine(4, 0),
                            store_instr(s).deps(4, 0, 0, 0).fine(1, 1), end_instr()};
    write_program(prog, kProgBase);
    aw_cycles_.clear();
    cp_->released_at.clear();
    const uint64_t t0 = cycle();
    start(kProgBase, static_cast<uint32_t>(prog.size()), fine);
    for (int k = 1; k <= 4; ++k) cp_->scheduled.push_back({t0 + 400 * uint64_t(k), 0, 1});
    const RunResult r = wait_done(20000, t0);
    ASSERT_TRUE(r.done()) << csr::to_string(r.code);
    ASSERT_EQ(cp_->released_at.size(), 4u);
    ASSERT_FALSE(aw_cycles_.empty());
    if (fine) {
      EXPECT_GT(aw_cycles_.front(), cp_->released_at[0]);
      EXPECT_LT(aw_cycles_.front(), cp_->released_at[1]) << "row 0 written before unit 2";
    } else {
      EXPECT_GT(aw_cycles_.front(), cp_->released_at[3]) << "completion mode waits for all";
    }
    ref_ = RefMachine();
    reference(prog);
    expect_matches_reference(fine ? "fine store" : "completion store");
  }
}

// S2L orders a LOAD after a STORE's external writes (docs/isa.md): its units
// are released once every write response of the STORE is in. With the
// responses hundreds of cycles late and reads fast, a LOAD that acquires a
// STORE's S2L unit issues its first AR after that STORE's last B and loads the
// words the STORE wrote (a read before the response would see the old bytes).
// Three STOREs finish before their responses are back: A and B release one
// S2L unit each, in order, the one between them (Z) none; the LOAD of A's
// bytes does not wait for B's responses.
TEST_F(STRATA_MEMSYS_SUITE, LoadThroughS2LReadsWhatTheStoreWrote) {
  for (bool fine : {false, true}) {
    mem_ = SparseMemory();
    mem_.set_background(background_byte);
    ref_ = RefMachine();
    axi_->config().write_latency = 400;
    axi_->config().read_latency = 4;
    constexpr int kRowWords = 20;
    constexpr uint64_t kA = kDstArea, kZ = kDstArea + 0x10000, kB = kDstArea + 0x20000;
    const uint64_t row_bytes = uint64_t(kRowWords) * kWordBytes;
    LoadSpec l0 = small_load();  // bank 0, four rows: A stores rows 0-1, B rows 2-3
    l0.rows = 4;
    l0.row_words = kRowWords;
    l0.ext_stride = row_bytes;
    l0.dst_stride = kRowWords;
    const auto store_rows = [&](int first, int rows, uint64_t ext) {
      StoreSpec s = small_store(rows, kRowWords);
      s.src_addr = first * kRowWords;
      s.ext_addr = ext;
      return s;
    };
    LoadSpec la = small_load();  // A's bytes into bank 1 at 0, B's at 64
    la.ext_addr = kA;
    la.rows = 2;
    la.row_words = kRowWords;
    la.ext_stride = row_bytes;
    la.dst_id = 1;
    la.dst_stride = kRowWords;
    LoadSpec lb = la;
    lb.ext_addr = kB;
    lb.dst_addr = 64;
    const std::vector<Instr> prog{
        load_instr(l0).deps(0, 0, 1, 0),
        compute_instr({}).deps(1, 0, 3, 0).fine(1, 0),                  // C2S: one per store
        store_instr(store_rows(0, 2, kA)).deps(1, 0, 0, 1).fine(1, 0),  // A: S2L 1
        store_instr(store_rows(0, 4, kZ)).deps(1, 0, 0, 0).fine(1, 0),  // Z: no S2L
        store_instr(store_rows(2, 2, kB)).deps(1, 0, 0, 1).fine(1, 0),  // B: S2L 1
        load_instr(la).deps(0, 1, 0, 0),
        load_instr(lb).deps(0, 1, 0, 0),
        end_instr()};
    // AW addresses in order (one write ID: the k-th B answers the k-th AW) and
    // the first AR of each reload.
    std::vector<uint64_t> aw_addr;
    std::optional<uint64_t> ar_a, ar_b;
    b_cycles_.clear();
    monitor_ = [&] {
      if (bus_.m_axi_awvalid && bus_.m_axi_awready) {
        aw_addr.push_back(static_cast<uint64_t>(bus_.m_axi_awaddr));
      }
      if (bus_.m_axi_arvalid && bus_.m_axi_arready && bus_.m_axi_arid == 1) {
        const auto a = static_cast<uint64_t>(bus_.m_axi_araddr);
        if (a >= kA && a < kA + 2 * row_bytes && !ar_a) ar_a = cycle();
        if (a >= kB && a < kB + 2 * row_bytes && !ar_b) ar_b = cycle();
      }
    };
    const std::string mode = fine ? "fine" : "completion";
    run_and_check(prog, mode);
    monitor_ = nullptr;
    ASSERT_EQ(b_cycles_.size(), aw_addr.size()) << mode;
    const auto last_b = [&](uint64_t base) {
      uint64_t t = 0;
      for (size_t k = 0; k < aw_addr.size(); ++k) {
        if (aw_addr[k] >= base && aw_addr[k] < base + 2 * row_bytes) t = b_cycles_[k];
      }
      return t;
    };
    ASSERT_TRUE(ar_a && ar_b) << mode;
    EXPECT_GT(*ar_a, last_b(kA)) << mode << ": the LOAD of A read before A's last write response";
    EXPECT_GT(*ar_b, last_b(kB)) << mode << ": the LOAD of B read before B's last write response";
    EXPECT_LT(*ar_a, last_b(kB)) << mode << ": the LOAD of A waited for B's responses";
    EXPECT_EQ(sem(4), 0u) << mode << ": S2L units left";
    // The reloaded words, word by word, against the program-order reference
    // (A: rows 0-1 of the first load, B: rows 2-3).
    int bad = 0;
    for (int a = 0; a < 64 + 2 * kRowWords; ++a) {
      if (a >= 2 * kRowWords && a < 64) continue;
      const auto want = ref_.bank.at({1, a});
      const auto got = bank_word(1, a);
      if (got != want && ++bad <= 8) {
        ADD_FAILURE() << mode << ": bank 1 word " << a << " expected " << hex_bytes(want) << " got "
                      << hex_bytes(got) << " (STRATA_SEED=" << seed() << ")";
      }
    }
    EXPECT_EQ(bad, 0) << mode << ": reloaded words that differ from the stored ones";
  }
}

// Only a LOAD that acquires S2L waits for the write responses: one ordered
// after a STORE through S2C -> relay COMPUTE -> C2L (it overwrites the bank
// region the store read, and shares no external bytes with it) issues its
// reads after the store's last W beat and before its first write response.
TEST_F(STRATA_MEMSYS_SUITE, LoadWithoutS2LDoesNotWaitForWriteResponses) {
  axi_->config().write_latency = 300;
  const LoadSpec l = small_load();
  const StoreSpec s = small_store();
  LoadSpec l2 = small_load();
  l2.ext_addr = kSrcArea + 0x1000;
  l2.dst_addr = 0;  // overwrites the region the store read: WAR through S2C and C2L
  std::vector<Instr> prog{load_instr(l).deps(0, 0, 1, 0),  compute_instr({}).deps(1, 0, 1, 0),
                          store_instr(s).deps(1, 0, 1, 0), compute_instr({}).deps(0, 1, 0, 1),
                          load_instr(l2).deps(1, 0, 0, 0), end_instr()};
  uint64_t last_w = 0;
  monitor_ = [&] {
    if (bus_.m_axi_wvalid && bus_.m_axi_wready) last_w = cycle();
  };
  load_ar_cycles_.clear();
  b_cycles_.clear();
  run_and_check(prog, "store, then load through S2C and C2L");
  monitor_ = nullptr;
  ASSERT_GE(load_ar_cycles_.size(), 2u);
  ASSERT_FALSE(b_cycles_.empty());
  EXPECT_GT(load_ar_cycles_.back(), last_w) << "the second LOAD is ordered after the store";
  EXPECT_LT(load_ar_cycles_.back(), b_cycles_.front())
      << "the second LOAD waited for the write responses";
}

// ---------------------------------------------------------------- errors

TEST_F(STRATA_MEMSYS_SUITE, IllegalOpcode) {
  Instr bad;
  bad.set(isa::hdr::kOpcode, 9);
  expect_error_then_recover({load_instr(small_load()), bad, end_instr()}, ErrorCode::kIllegalInstr,
                            1, "opcode 9");
}

TEST_F(STRATA_MEMSYS_SUITE, AllZeroInstructionIsIllegal) {
  expect_error_then_recover({load_instr(small_load()), load_instr(small_load()), Instr{}},
                            ErrorCode::kIllegalInstr, 2, "all-zero instruction");
}

TEST_F(STRATA_MEMSYS_SUITE, ReservedBitSet) {
  expect_error_then_recover({load_instr(small_load()).bit(310, true), end_instr()},
                            ErrorCode::kIllegalInstr, 0, "reserved bit 310 of a LOAD");
}

TEST_F(STRATA_MEMSYS_SUITE, DependencyFieldRules) {
  expect_error_then_recover({end_instr().deps(0, 0, 1, 0)}, ErrorCode::kIllegalInstr, 0,
                            "END with rel0");
  expect_error_then_recover({load_instr(small_load()).deps(0, 0, 0, 1), end_instr()},
                            ErrorCode::kIllegalInstr, 0, "LOAD with rel1");
  StoreSpec s;
  s.ext_addr = kDstArea;
  // After END nothing is decoded: the bad STORE behind it is no error.
  const RunResult r = run({end_instr(), store_instr(s).deps(0, 1, 0, 0), end_instr()});
  EXPECT_TRUE(r.done()) << "instruction after END: " << csr::to_string(r.code);
  expect_error_then_recover({store_instr(s).deps(0, 1, 0, 0), end_instr()},
                            ErrorCode::kIllegalInstr, 0, "STORE with acq1");
  expect_error_then_recover({load_instr(small_load()).deps(1, 0, 0, 0).fine(2, 0), end_instr()},
                            ErrorCode::kIllegalInstr, 0, "acq0_first > acq0");
}

TEST_F(STRATA_MEMSYS_SUITE, LoadFieldChecks) {
  LoadSpec l = small_load();
  l.rows = 0;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kIllegalInstr, 0, "rows 0");
  l = small_load();
  l.dst_id = hw::kBanks;
  expect_error_then_recover({config_instr(), load_instr(l), end_instr()}, ErrorCode::kUnsupported,
                            1, "bank >= Banks");
  l = small_load();
  l.dst_addr = hw::kBankDepth - 5;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kUnsupported, 0,
                            "bank range past the depth");
  l = small_load();
  l.ext_addr += 4;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kUnsupported, 0,
                            "unaligned ext_addr");
  l = small_load();
  l.kind = isa::LoadDst::kPeCache;
  l.dst_id = hw::kPes;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kUnsupported, 0, "PE >= P");
  l = small_load();
  l.kind = isa::LoadDst::kParam;
  l.dst_id = 1;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "PARAM with dst_id");
  l = small_load();
  l.pe_step = true;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "dst_pe_step on a bank load");
  for (const auto& [byte, value] : {std::pair{6, hw::kMaxShift + 1}, std::pair{7, 1}}) {
    // The third of six entries is refused: the first two are written, the run stops.
    l = small_load();
    l.kind = isa::LoadDst::kParam;
    l.rows = 1;
    l.row_words = 6;
    l.dst_addr = 10;
    mem_.write(l.ext_addr + 2 * kParamBytes + byte, static_cast<uint8_t>(value));
    expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kUnsupported, 0,
                              fmt::format("parameter entry byte {} = {}", byte, value));
  }
  if (!kSparse) {  // CONTROL exists on sparse builds only (LoadControl* below)
    l = small_load();
    l.dst_addr = 0;
    Instr kind3 = load_instr(l);
    kind3.set(isa::load::kDstKind, 3);
    expect_error_then_recover({kind3, end_instr()}, ErrorCode::kIllegalInstr, 0, "dst_kind 3");
  }
}

// LOAD TABLE (act_tables > 0): N-byte words to the compute engine's table
// port at dst_addr + r * dst_row_stride + w, under back-pressure; a row past
// the last table word is UNSUPPORTED, dst_id != 0 and the undefined
// dst_kind 5 are ILLEGAL_INSTR.
TEST_F(STRATA_MEMSYS_SUITE, TableLoads) {
  if (hw::kActTables == 0) GTEST_SKIP() << "a build without activation tables";
  const int words = hw::kActTables * 256 / kWordBytes;
  param_throttle_ = Throttle(0.3);
  std::vector<Instr> prog;
  for (int k = 0; k < 4; ++k) {
    LoadSpec l;
    l.kind = isa::LoadDst::kTable;
    l.rows = static_cast<int>(rand_int(1, 4));
    l.row_words = static_cast<int>(rand_int(1, 256 / kWordBytes));
    l.ext_stride = (uint64_t(l.row_words) * kWordBytes + kBeatBytes - 1) / kBeatBytes * kBeatBytes;
    l.ext_addr = ext_addr(kSrcArea, 0x80000);
    l.dst_stride = l.row_words + static_cast<int>(rand_int(0, 3));
    l.dst_addr = static_cast<int>(rand_int(0, words - ((l.rows - 1) * l.dst_stride + l.row_words)));
    prog.push_back(load_instr(l));
  }
  prog.push_back(end_instr());
  run_and_check(prog, "table loads");
  EXPECT_FALSE(tab_writes_.empty());
  LoadSpec l = small_load();
  l.kind = isa::LoadDst::kTable;
  l.rows = 1;
  l.row_words = 2;
  l.dst_addr = words - 1;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kUnsupported, 0,
                            "table range past the last word");
  l.dst_addr = 0;
  l.dst_id = 1;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "TABLE with dst_id");
  l = small_load();
  Instr kind5 = load_instr(l);
  kind5.set(isa::load::kDstKind, 5);
  expect_error_then_recover({kind5, end_instr()}, ErrorCode::kIllegalInstr, 0, "dst_kind 5");
}

TEST_F(STRATA_MEMSYS_SUITE, StoreFieldChecks) {
  StoreSpec s;
  s.ext_addr = kDstArea;
  s.src_id = hw::kBanks;
  expect_error_then_recover({store_instr(s), end_instr()}, ErrorCode::kUnsupported, 0,
                            "store bank >= Banks");
  s.src_id = 0;
  s.row_words = 0;
  expect_error_then_recover({store_instr(s), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "store row_words 0");
}

// The load and store engines against the target-rule table: for every rule
// the table says strata_load_engine or strata_store_engine refuses, its
// boundary instructions (generated by the table for this bench's
// configuration), each alone in a program: the just-illegal one stops with
// UNSUPPORTED at index 0, the just-legal one does not (it completes, or meets
// an AXI error response past the memory model's end).
TEST_F(STRATA_MEMSYS_SUITE, TargetRulesAgreeWithTheEngines) {
  HwTarget t = HwTarget::defaults();
  t.lanes = kLanes;
  t.axi_data_width = STRATA_BENCH_AXI_BITS;
  t.sparse = kSparse;
  ASSERT_EQ(t.banks, hw::kBanks);
  ASSERT_EQ(t.pes, hw::kPes);
  ASSERT_EQ(t.bank_depth, hw::kBankDepth);
  ASSERT_EQ(t.pe_cache_depth, hw::kPeCacheDepth);
  ASSERT_EQ(t.param_depth, hw::kParamDepth);
  ASSERT_EQ(t.axi_addr_width, hw::kAxiAddrWidth);
  // A parameter entry is judged by a LOAD of it alone into its channel, from
  // an address of its own (the entry's other bytes are the background's).
  constexpr uint64_t kEntryAddr = kSrcArea + 0xF0000;
  const auto as_instr = [&](const RuleSubject& s) {
    Instr in;
    if (const auto* l = std::get_if<isa::LoadInstr>(&s)) {
      in.w = isa::encode(*l).words;
      // A LOAD CONTROL's words are judged too: zeros are legal control and
      // schedule words.
      if (l->dst_kind == isa::LoadDst::kControl) {
        for (int64_t r = 0; r < l->rows; ++r) {
          mem_.write_block(static_cast<uint64_t>(l->ext_addr + r * l->ext_row_stride),
                           std::vector<uint8_t>(static_cast<size_t>(l->row_words * kWordBytes)));
        }
      }
    }
    if (const auto* st = std::get_if<isa::StoreInstr>(&s)) in.w = isa::encode(*st).words;
    if (const auto* e = std::get_if<ParamEntry>(&s)) {
      mem_.write(kEntryAddr + 6, static_cast<uint8_t>(e->shift));
      mem_.write(kEntryAddr + 7, static_cast<uint8_t>(e->byte7));
      LoadSpec l;
      l.kind = isa::LoadDst::kParam;
      l.ext_addr = kEntryAddr;
      l.ext_stride = kBeatBytes;
      l.rows = 1;
      l.row_words = 1;
      l.dst_addr = static_cast<int>(e->channel);
      l.dst_stride = 1;
      in = load_instr(l);
    }
    return in;
  };
  int rules = 0, pairs = 0;
  for (const TargetRule& rule : target_rules()) {
    if (rule.rtl.find("strata_load_engine") == std::string_view::npos &&
        rule.rtl.find("strata_store_engine") == std::string_view::npos) {
      continue;
    }
    ++rules;
    int k = 0;
    for (const RuleBoundary& b : rule.boundaries(t)) {
      const std::string what = fmt::format("rule {} pair {}", rule.id, k++);
      ASSERT_TRUE((std::holds_alternative<isa::LoadInstr>(b.legal) ||
                   std::holds_alternative<isa::StoreInstr>(b.legal) ||
                   std::holds_alternative<ParamEntry>(b.legal)) &&
                  b.legal.index() == b.illegal.index())
          << what;
      ASSERT_FALSE(first_violation(b.legal, t).has_value()) << what;
      const auto v = first_violation(b.illegal, t);
      ASSERT_TRUE(v.has_value() && v->rule == &rule) << what;
      const RunResult ok = run({as_instr(b.legal), end_instr()}, false, 100000);
      ASSERT_TRUE(ok.finished) << what << " just legal";
      EXPECT_NE(ok.code, ErrorCode::kUnsupported)
          << what << " just legal: the engine refuses "
          << isa::disassemble(isa::Instruction{as_instr(b.legal).w}) << " (STRATA_SEED=" << seed()
          << ")";
      EXPECT_NE(ok.code, ErrorCode::kIllegalInstr) << what << " just legal";
      steps(50);
      const RunResult bad = run({as_instr(b.illegal), end_instr()}, false, 100000);
      ASSERT_TRUE(bad.finished) << what << " just illegal";
      EXPECT_EQ(bad.code, ErrorCode::kUnsupported)
          << what << " just illegal (" << v->message << "): got " << csr::to_string(bad.code)
          << " for " << isa::disassemble(isa::Instruction{as_instr(b.illegal).w})
          << " (STRATA_SEED=" << seed() << ")";
      EXPECT_EQ(bad.index, 0) << what;
      steps(50);
      EXPECT_EQ(axi_->reads_outstanding(), 0u) << what << ": reads drained";
      EXPECT_EQ(axi_->writes_outstanding(), 0u) << what << ": writes drained";
      ++pairs;
    }
  }
  EXPECT_EQ(rules, 10);  // load.control has boundaries on sparse builds only
  std::cout << "[ CHECKED  ] " << rules << " rules, " << pairs << " boundary pairs" << std::endl;
}

TEST_F(STRATA_MEMSYS_SUITE, ConfigInstruction) {
  // A matching CONFIG retires; a different P is UNSUPPORTED.
  run_and_check({config_instr(), end_instr()}, "matching CONFIG");
  Instr c = config_instr();
  c.set(isa::config::kPes, hw::kPes * 2);
  expect_error_then_recover({c, end_instr()}, ErrorCode::kUnsupported, 0, "CONFIG for 2P");
  c = config_instr();
  c.set(isa::config::kBankDepth, hw::kBankDepth + 1);
  expect_error_then_recover({c, end_instr()}, ErrorCode::kUnsupported, 0, "CONFIG deeper banks");
  // Activation tables: as many as the build has run; one more (any, on a
  // build without tables) is refused before anything executes.
  c = config_instr();
  c.set(isa::config::kActTables, hw::kActTables);
  run_and_check({c, end_instr()}, "CONFIG with every table");
  c.set(isa::config::kActTables, hw::kActTables + 1);
  expect_error_then_recover({c, end_instr()}, ErrorCode::kUnsupported, 0, "CONFIG, one table more");
}

TEST_F(STRATA_MEMSYS_SUITE, AxiReadErrorOnFetch) {
  std::vector<Instr> prog{load_instr(small_load()), load_instr(small_load()),
                          load_instr(small_load()), end_instr()};
  axi_->add_error_region({kProgBase + 2 * kInstrBytes + 8, kProgBase + 2 * kInstrBytes + 16,
                          AxiResp::kSlvErr, true, false});
  expect_error_then_recover(prog, ErrorCode::kAxiRead, 2, "SLVERR on instruction 2");
}

TEST_F(STRATA_MEMSYS_SUITE, AxiReadErrorBeyondEndIsIgnored) {
  // Instructions prefetched after END are never decoded: no error.
  std::vector<Instr> prog{end_instr(), load_instr(small_load()), load_instr(small_load())};
  axi_->add_error_region(
      {kProgBase + kInstrBytes, kProgBase + 3 * kInstrBytes, AxiResp::kDecErr, true, false});
  const RunResult r = run(prog);
  EXPECT_TRUE(r.done()) << csr::to_string(r.code);
}

TEST_F(STRATA_MEMSYS_SUITE, AxiReadErrorOnLoad) {
  LoadSpec l = small_load();
  l.ext_addr = kSrcArea + 0x3000;
  axi_->add_error_region(
      {kSrcArea + 0x3000 + 8, kSrcArea + 0x3000 + 9, AxiResp::kDecErr, true, false});
  expect_error_then_recover({load_instr(small_load()), load_instr(l), end_instr()},
                            ErrorCode::kAxiRead, 1, "DECERR on a load beat");
}

TEST_F(STRATA_MEMSYS_SUITE, AxiWriteError) {
  StoreSpec s;
  s.ext_addr = kDstArea + 0x5000;
  s.ext_stride = 64 * kWordBytes;
  s.rows = 3;
  s.row_words = 40;
  s.src_stride = 40;
  LoadSpec l = small_load();
  l.rows = 3;
  l.row_words = 40;
  l.ext_stride = 40 * kWordBytes;
  l.dst_stride = 40;
  axi_->add_error_region({kDstArea + 0x5000 + 64 * kWordBytes,
                          kDstArea + 0x5000 + 64 * kWordBytes + 1, AxiResp::kSlvErr, false, true});
  expect_error_then_recover(round_trip(l, s), ErrorCode::kAxiWrite, 2, "SLVERR on a store burst");
}

TEST_F(STRATA_MEMSYS_SUITE, StartWhileBusy) {
  LoadSpec l;
  l.kind = isa::LoadDst::kPeCache;
  l.pe_step = true;
  l.rows = hw::kPes;
  l.row_words = 1024;
  l.ext_addr = kSrcArea;
  l.ext_stride = 1024 * kWordBytes;
  std::vector<Instr> prog{load_instr(l), end_instr()};
  write_program(prog, kProgBase);
  const uint64_t t0 = cycle();
  start(kProgBase, 2);
  steps(500);
  EXPECT_TRUE(csr_->read(csr::kStatus) & csr::kStatusBusy);
  csr_->write(csr::kCtrl, csr::kCtrlStart);
  const RunResult r = wait_done(20000, t0);
  EXPECT_TRUE(r.status & csr::kStatusError);
  EXPECT_EQ(r.code, ErrorCode::kBusyStart);
  EXPECT_EQ(r.index, 0xFFFF);
  EXPECT_LT(r.cycles, 3000u) << "the long load was aborted";
  // The retry starts cleanly.
  ref_ = RefMachine();
  pe_writes_.clear();
  run_and_check(random_tiles(3, 3, 10), "after BUSY_START");
}

TEST_F(STRATA_MEMSYS_SUITE, NoEndWithinLimit) {
  std::vector<Instr> prog(6, load_instr(small_load()));
  expect_error_then_recover(prog, ErrorCode::kNoEnd, 3, "limit 3 without END", 3u);
  expect_error_then_recover({end_instr()}, ErrorCode::kNoEnd, 0, "limit 0", 0u);
}

TEST_F(STRATA_MEMSYS_SUITE, DeadlockDetected) {
  StoreSpec s;
  s.ext_addr = kDstArea;
  // The STORE waits for C2S that nothing produces; fetch reaches END.
  std::vector<Instr> prog{load_instr(small_load()), store_instr(s).deps(1, 0, 0, 0), end_instr()};
  const uint64_t t0 = cycle();
  expect_error_then_recover(prog, ErrorCode::kDeadlock, 1, "STORE waits for C2S forever");
  EXPECT_GT(cycle() - t0, 4096u) << "watchdog time";
}

TEST_F(STRATA_MEMSYS_SUITE, DeadlockWithFetchBlocked) {
  // Three loads waiting for C2L fill the load queue and block the fetcher.
  std::vector<Instr> prog;
  for (int k = 0; k < 6; ++k) prog.push_back(load_instr(small_load()).deps(1, 0, 0, 0));
  prog.push_back(end_instr());
  expect_error_then_recover(prog, ErrorCode::kDeadlock, 0, "loads wait for C2L forever");
}

TEST_F(STRATA_MEMSYS_SUITE, SemaphoreOverflow) {
  expect_rtl_errors(true);  // strata_dep_sems asserts on overflow by design
  StoreSpec s;
  s.ext_addr = kDstArea;
  // S2C is never acquired (no COMPUTE): three releases of 65535 overflow 17 bits.
  LoadSpec l = small_load();
  std::vector<Instr> prog{load_instr(l)};
  for (int k = 0; k < 3; ++k) prog.push_back(store_instr(s).deps(0, 0, 0xFFFF, 0));
  prog.push_back(end_instr());
  expect_error_then_recover(prog, ErrorCode::kIllegalInstr, 0xFFFF, "S2C overflow");
  EXPECT_GE(rtl_errors(), 1);
}

// ---------------------------------------------------------------- sparse builds

// The second compute read port (cr1; strata_banks ComputeReadPorts = 2 on
// sparse builds). Bank 1 holds region A (words 0..63, loaded first); during a
// second run the load engine writes region B (words 256..1279) of the same
// bank while the bench writes region C (words 64..127) through the compute
// write port (which the load engine's writes then wait for) and reads words
// of A and C on both compute read ports every cycle: the same word on both
// in about a third of the cycles, a word written the cycle before often.
// Every response is checked against a model of the bank, three cycles after
// its request; afterwards B and C are read back through both ports. On a
// dense build the port is ignored: ready 0, no response.
TEST_F(STRATA_MEMSYS_SUITE, SecondComputeReadPort) {
  auto& d = dut();
  if (!kSparse) {
    drive_ = [&] {
      d.cr1_req_valid_i = 1;
      set_field(d.cr1_req_i, 0, kBankAddrBits, 5);
    };
    int responses = 0, ready = 0;
    monitor_ = [&] {
      responses += d.cr1_rsp_valid_o;
      ready += d.cr1_req_ready_o;
    };
    steps(20);
    drive_ = nullptr;
    monitor_ = nullptr;
    EXPECT_EQ(responses, 0) << "the dense build answers on cr1";
    EXPECT_EQ(ready, 0) << "the dense build's cr1_req_ready_o";
    return;
  }
  using Word = std::vector<uint8_t>;
  constexpr int kBank = 1, kC = 64, kCWords = 64, kB = 256, kBRows = 4, kBRowWords = 256;
  LoadSpec a;
  a.ext_addr = kSrcArea;
  a.row_words = 64;
  a.ext_stride = 64 * kWordBytes;
  a.dst_id = kBank;
  a.dst_stride = 64;
  run_and_check({load_instr(a), end_instr()}, "region A");
  std::map<int, Word> model;  // the words of A and C the bench may read
  for (int w = 0; w < 64; ++w) model[w] = ref_.bank.at({kBank, w});

  LoadSpec b;
  b.ext_addr = kSrcArea + 0x10000;
  b.rows = kBRows;
  b.row_words = kBRowWords;
  b.ext_stride = uint64_t(kBRowWords) * kWordBytes;
  b.dst_id = kBank;
  b.dst_addr = kB;
  b.dst_stride = kBRowWords;
  const std::vector<Instr> prog{load_instr(b), end_instr()};
  reference(prog);

  // Per port: the expected word of the requests one, two and three cycles ago.
  std::array<std::array<std::optional<Word>, 3>, 2> due{};
  std::array<std::optional<Word>, 2> asked;  // this cycle's requests
  bool active = true;
  int same = 0, different = 0, after_write = 0, checked = 0, bad = 0;
  int last_written = -1;
  const auto pick = [&](int avoid) {
    for (;;) {
      auto it = model.begin();
      std::advance(it, rand_int(0, int64_t(model.size()) - 1));
      if (it->first != avoid) return it->first;
    }
  };
  drive_ = [&] {
    asked = {};
    d.cw_valid_i = 0;
    if (!active) return;
    // A compute write into C: written to both copies the next cycle, so not
    // read in this cycle.
    int written = -1;
    Word data(kWordBytes);
    if (rand_int(0, 2) == 0) {
      written = kC + static_cast<int>(rand_int(0, kCWords - 1));
      for (auto& x : data) x = static_cast<uint8_t>(rand_int(0, 255));
      d.cw_valid_i = 1;
      port_set_bytes(d.cw_req_i, data.data(), kWordBytes);
      set_field(d.cw_req_i, kWordBits, kBankAddrBits, uint64_t(written));
      set_field(d.cw_req_i, kWordBits + kBankAddrBits, kBankIdxBits, kBank);
    }
    // Reads: the word written last cycle first when there is one, often.
    const int w0 = (last_written >= 0 && last_written != written && rand_int(0, 1) == 0)
                       ? last_written
                       : pick(written);
    const int w1 = rand_int(0, 2) == 0 ? w0 : pick(written);
    for (int port = 0; port < 2; ++port) {
      const int w = port ? w1 : w0;
      auto& valid = port ? d.cr1_req_valid_i : d.cr_req_valid_i;
      auto& req = port ? d.cr1_req_i : d.cr_req_i;
      valid = 1;
      req = 0;
      set_field(req, kBankAddrBits, kBankIdxBits, kBank);
      set_field(req, 0, kBankAddrBits, uint64_t(w));
      asked[port] = model.at(w);
    }
    (w0 == w1 ? same : different)++;
    after_write += w0 == last_written || w1 == last_written;
    if (written >= 0) model[written] = data;
    last_written = written;
  };
  monitor_ = [&] {
    EXPECT_TRUE(d.cr_req_ready_o && d.cr1_req_ready_o) << "compute reads are always accepted";
    for (int port = 0; port < 2; ++port) {
      const auto& want = due[port][2];
      const bool valid = port ? d.cr1_rsp_valid_o : d.cr_rsp_valid_o;
      EXPECT_EQ(valid, want.has_value()) << "port " << port << ": response three cycles after "
                                         << "the request, cycle " << cycle();
      if (want && valid) {
        Word got(kWordBytes);
        if (port) {
          port_get_bytes(d.cr1_rsp_o, got.data(), kWordBytes);
        } else {
          port_get_bytes(d.cr_rsp_o, got.data(), kWordBytes);
        }
        ++checked;
        if (got != *want && ++bad <= 8) {
          ADD_FAILURE() << "port " << port << " cycle " << cycle() << ": expected "
                        << hex_bytes(*want) << " got " << hex_bytes(got)
                        << " (STRATA_SEED=" << seed() << ")";
        }
      }
      due[port] = {asked[port], due[port][0], due[port][1]};
    }
  };
  write_program(prog, kProgBase);
  const uint64_t t0 = cycle();
  start(kProgBase, static_cast<uint32_t>(prog.size()));
  const RunResult r = wait_done(100000, t0);
  active = false;
  steps(4);  // the last responses
  drive_ = nullptr;
  monitor_ = nullptr;
  ASSERT_TRUE(r.done()) << csr::to_string(r.code);
  expect_matches_reference("region B");
  EXPECT_EQ(bad, 0) << "responses that differ from the model";
  std::cout << "[ CHECKED  ] " << checked << " responses: " << same << " cycles with the same "
            << "word on both ports, " << different << " with two words, " << after_write
            << " reads of the word written the cycle before" << std::endl;
  EXPECT_GT(same, 200);
  EXPECT_GT(different, 200);
  EXPECT_GT(after_write, 100);
  EXPECT_GE(r.cycles, uint64_t(kBRows * kBRowWords)) << "the load ran beside the reads";
  // B (written by the load engine) and C through both ports.
  for (int port = 0; port < 2; ++port) {
    int mismatches = 0;
    for (int w = kB; w < kB + kBRows * kBRowWords; w += port ? 3 : 1) {
      const Word got = bank_word(kBank, w, port);
      if (got != ref_.bank.at({kBank, w}) && ++mismatches <= 8) {
        ADD_FAILURE() << "port " << port << ": bank " << kBank << " word " << w << " expected "
                      << hex_bytes(ref_.bank.at({kBank, w})) << " got " << hex_bytes(got);
      }
    }
    for (const auto& [w, v] : model) {
      const Word got = bank_word(kBank, w, port);
      if (got != v && ++mismatches <= 8) {
        ADD_FAILURE() << "port " << port << ": bank " << kBank << " word " << w << " expected "
                      << hex_bytes(v) << " got " << hex_bytes(got);
      }
    }
    EXPECT_EQ(mismatches, 0) << "port " << port;
  }
}

// LOAD CONTROL (docs/isa.md, LOAD): control words of one PE, of every PE
// with dst_pe_step (rows wrapping past PE P - 1, to the next address), and
// the schedule (dst_id = P), each to the addresses a PE_CACHE load would
// use, arrive on the PE write port with pe_ctl_o under back-pressure; a
// PE_CACHE load to the same addresses stays a PE-cache write.
TEST_F(STRATA_MEMSYS_SUITE, LoadControlWords) {
  if (!kSparse) GTEST_SKIP() << "LOAD CONTROL exists on sparse builds only";
  pe_throttle_ = Throttle(0.3);
  LoadSpec pe = small_load();
  pe.kind = isa::LoadDst::kPeCache;
  pe.dst_id = 3;
  pe.dst_addr = 10;
  LoadSpec one = control_load(3, 3, 5, kSrcArea + 0x1000);
  one.dst_addr = 10;
  one.dst_stride = 7;
  LoadSpec step = control_load(hw::kPes - 3, 2 * hw::kPes + 3, 4, kSrcArea + 0x2000);
  step.pe_step = true;
  step.dst_addr = 100;
  step.dst_stride = 6;
  LoadSpec sched = control_load(hw::kPes, 2, 6, kSrcArea + 0x4000);
  sched.dst_addr = hw::kPeCacheDepth - 12;  // the last words
  put_control_words(one, false);
  put_control_words(step, false);
  put_control_words(sched, true);
  run_and_check({load_instr(pe), load_instr(one), load_instr(step), load_instr(sched), end_instr()},
                "LOAD CONTROL");
  EXPECT_EQ(ctl_write_count_, uint64_t(3 * 5 + (2 * hw::kPes + 3) * 4 + 2 * 6));
  EXPECT_EQ(pe_write_count_, uint64_t(2 * 4));
  EXPECT_TRUE(ctl_writes_.count({hw::kPes, hw::kPeCacheDepth - 1})) << "the schedule's last word";
  EXPECT_TRUE(ctl_writes_.count({hw::kPes - 1, 100 + 2 * 6 + 3})) << "row 2P + 2: PE P - 1, "
                                                                     "third address row";
}

// LOAD CONTROL's refusals (rule load.control, load.dst_range, and the words'
// format): each stops the run with UNSUPPORTED at the LOAD. A bad destination
// writes nothing; a malformed word is not written and nothing after it is,
// while the words before it are.
TEST_F(STRATA_MEMSYS_SUITE, LoadControlChecks) {
  if (!kSparse) GTEST_SKIP() << "LOAD CONTROL exists on sparse builds only";
  const auto nothing_written = [&] {
    EXPECT_TRUE(ctl_writes_.empty()) << ctl_writes_.size() << " control words written";
    EXPECT_TRUE(pe_writes_.empty());
  };
  const auto refused = [&](LoadSpec l, const std::string& what) {
    put_control_words(l, l.dst_id == hw::kPes && !l.pe_step);
    expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kUnsupported, 0, what, {},
                              nothing_written);
  };
  refused(control_load(hw::kPes + 1, 2, 4), "dst_id P + 1");
  refused(control_load(63, 2, 4), "dst_id 63");
  LoadSpec l = control_load(hw::kPes, 2, 4);
  l.pe_step = true;
  refused(l, "the schedule with dst_pe_step");
  l = control_load(2, 2, 4);
  l.dst_addr = hw::kPeCacheDepth - 7;  // row 1 ends one word past the plane
  refused(l, "control words past the depth");
  l = control_load(hw::kPes, 1, 4);
  l.dst_addr = hw::kPeCacheDepth - 3;
  refused(l, "schedule words past the depth");
  l = control_load(0, 2 * hw::kPes + 1, 1);
  l.pe_step = true;
  l.dst_addr = hw::kPeCacheDepth - 2;  // rows 2P go to PE 0 at depth
  refused(l, "dst_pe_step rows past the depth");

  // Malformed words: word 2 of a row of 6 (or row 2 of dst_pe_step rows of one word).
  struct Bad {
    bool schedule, pe_step;
    int byte;
    uint8_t value;
    const char* what;
  };
  for (const Bad& bad : {Bad{false, false, 0, 0x10, "control byte 0 bit 4"},
                         Bad{false, false, 0, 0x0C, "control destination 3"},
                         Bad{false, false, 0, 0x8D, "control byte 0 bit 7"},
                         Bad{false, false, 5, 0x04, "control byte 5 bit 2"},
                         Bad{false, false, kWordBytes - 1, 0x80, "control last byte bit 7"},
                         Bad{false, true, 1, 0x08, "control byte 1 bit 3, dst_pe_step"},
                         Bad{true, false, 3, 0x01, "schedule byte 3"},
                         Bad{true, false, kWordBytes - 1, 0x40, "schedule last byte"}}) {
    LoadSpec c = bad.pe_step ? control_load(hw::kPes - 1, 6, 1) : control_load(5, 1, 6);
    if (bad.schedule) c.dst_id = hw::kPes;
    c.pe_step = bad.pe_step;
    c.dst_addr = 20;
    put_control_words(c, bad.schedule);
    std::vector<uint8_t> word = control_word(bad.schedule);
    word[bad.byte] = bad.value;
    put_bytes(c.ext_addr + 2 * kWordBytes, word);  // unit 2 (row 2 when dst_pe_step)
    // The expected writes: units 0 and 1.
    std::map<std::pair<int, int>, std::vector<uint8_t>> want;
    for (int k = 0; k < 2; ++k) {
      const auto key = bad.pe_step ? std::pair{(c.dst_id + k) % hw::kPes, c.dst_addr}
                                   : std::pair{c.dst_id, c.dst_addr + k};
      want[key] = ref_.ext.read_block(c.ext_addr + uint64_t(k) * kWordBytes, kWordBytes);
    }
    expect_error_then_recover(
        {load_instr(c), end_instr()}, ErrorCode::kUnsupported, 0, bad.what, {}, [&] {
          EXPECT_EQ(ctl_writes_, want) << bad.what << ": the words before the bad one, no other";
          EXPECT_TRUE(pe_writes_.empty()) << bad.what;
        });
  }
}

// ---------------------------------------------------------------- cascade
// (docs/cascade.md) The bench's link is a loopback: what the store engine
// sends on the cascade output comes back on the cascade input.

// LOAD ext -> bank 0 -> relay -> STORE CASCADE (one or two transfers) ...
// LOAD CASCADE (the same transfers, other row shapes) -> bank 1 and the PE
// caches -> relay -> STORE ext: the words arrive unchanged, in order, under
// random stalls on both sides of the link and on the bus, in both modes.
TEST_F(STRATA_MEMSYS_SUITE, CascadeLoopback) {
  for (int round = 0; round < 6; ++round) {
    const bool fine = round % 2 == 1;
    cas_stall_ = round < 2 ? 0.0 : 0.35;
    auto& c = axi_->config();
    c.ar_stall = c.aw_stall = c.w_stall = c.r_gap = c.b_gap = round < 4 ? 0.0 : 0.3;
    const int rows = static_cast<int>(rand_int(1, 6)), words = static_cast<int>(rand_int(1, 40));
    LoadSpec in = small_load();
    in.rows = rows;
    in.row_words = words;
    in.ext_stride = uint64_t(words) * kWordBytes;
    in.dst_stride = words;
    const uint16_t id = static_cast<uint16_t>(rand_int(0, 0xFFFF));
    // Transfer 1: the map as one STORE of rows x words; transfer 2: its first
    // row again, 1 x words.
    StoreSpec out1;
    out1.rows = rows;
    out1.row_words = words;
    out1.src_stride = words;
    out1.cascade = true;
    out1.link_id = id;
    StoreSpec out2 = out1;
    out2.rows = 1;
    out2.link_id = id ^ 1;
    LoadSpec back1;  // one row of rows x words, into bank 1
    back1.cascade = true;
    back1.link_id = id;
    back1.rows = 1;
    back1.row_words = rows * words;
    back1.dst_id = 1;
    back1.dst_addr = 100;
    LoadSpec back2;  // the second transfer into PE caches, a word per PE
    back2.cascade = true;
    back2.link_id = id ^ 1;
    back2.kind = isa::LoadDst::kPeCache;
    back2.pe_step = true;
    back2.rows = words;
    back2.row_words = 1;
    back2.dst_addr = 20;
    back2.dst_stride = 1;
    StoreSpec res = small_store(rows * words, 1);
    res.src_id = 1;
    res.src_addr = 100;
    res.src_stride = 1;
    res.rows = 1;
    res.row_words = rows * words;
    res.ext_stride = uint64_t(rows * words) * kWordBytes;
    // In fine-grained mode a LOAD releases a unit per row: the relay takes
    // them all before it starts; every other consumer takes its one unit
    // before its first step.
    run_and_check(
        {load_instr(in).deps(0, 0, rows, 0), compute_instr({}).deps(rows, 0, 1, 0).fine(rows, 0),
         store_instr(out1).deps(1, 0, 0, 0).fine(1, 0), store_instr(out2),
         load_instr(back1).deps(0, 0, 1, 0), load_instr(back2),
         compute_instr({}).deps(1, 0, 1, 0).fine(1, 0),
         store_instr(res).deps(1, 0, 0, 0).fine(1, 0), end_instr()},
        fmt::format("cascade loopback round {}", round), fine);
    EXPECT_TRUE(cas_in_.empty()) << "every beat sent was taken";
    EXPECT_EQ(cas_taken_, uint64_t((rows + 1) * words * (kWordBytes / kBeatBytes)));
    cas_taken_ = 0;
    if (HasFailure()) return;
  }
}

// S2L of a cascade STORE (no burst, so its release mark equals the one
// before it): an external STORE and a cascade STORE each release one S2L
// unit, and a LOAD that acquires both reads what the external STORE wrote;
// under random write-response gaps the releases leave in order and the run
// completes.
TEST_F(STRATA_MEMSYS_SUITE, CascadeStoreReleasesS2LInOrder) {
  auto& c = axi_->config();
  c.b_gap = 0.5;
  c.aw_stall = c.w_stall = 0.2;
  for (int round = 0; round < 8; ++round) {
    const int words = static_cast<int>(rand_int(1, 24));
    LoadSpec in = small_load();
    in.rows = 1;
    in.row_words = words;
    StoreSpec ext = small_store(1, words);
    StoreSpec link;
    link.cascade = true;
    link.link_id = round;
    link.row_words = words;
    LoadSpec back;
    back.cascade = true;
    back.link_id = round;
    back.row_words = words;
    back.dst_id = 1;
    LoadSpec reread = small_load();
    reread.ext_addr = kDstArea;
    reread.rows = 1;
    reread.row_words = words;
    reread.dst_id = 2;
    StoreSpec out = small_store(1, words);
    out.src_id = 2;
    out.ext_addr = kDstArea + 0x10000;
    run_and_check(
        {load_instr(in).deps(0, 0, 1, 0), compute_instr({}).deps(1, 0, 2, 0).fine(1, 0),
         store_instr(ext).deps(1, 0, 0, 1).fine(1, 0),
         store_instr(link).deps(1, 0, 0, 1).fine(1, 0), load_instr(back),
         load_instr(reread).deps(0, 2, 1, 0), compute_instr({}).deps(1, 0, 1, 0).fine(1, 0),
         store_instr(out).deps(1, 0, 0, 0).fine(1, 0), end_instr()},
        fmt::format("S2L of a cascade STORE, round {}", round), round % 2 == 1);
    if (HasFailure()) return;
  }
}

// What the cascade input offers, one transfer of `beats` beats (TLAST on the
// last unless `last` is false) with link id `user`.
static void offer_transfer(std::deque<CasBeat>& link, int beats, uint16_t user, bool last = true) {
  for (int b = 0; b < beats; ++b) {
    CasBeat beat;
    beat.data.assign(kBeatBytes, static_cast<uint8_t>(b));
    beat.user = user;
    beat.last = last && b == beats - 1;
    link.push_back(beat);
  }
}

// A cascade transfer that does not match its LOAD stops the run with
// CASCADE at that LOAD: another link id, TLAST early, TLAST missing on the
// LOAD's last beat. What stays in the link is dropped until the next START,
// and the next run is correct (a loopback included).
TEST_F(STRATA_MEMSYS_SUITE, CascadeTransferChecks) {
  cas_loopback_ = false;
  const int beats_per_word = kWordBytes / kBeatBytes;
  LoadSpec l;
  l.cascade = true;
  l.link_id = 5;
  l.rows = 2;
  l.row_words = 3;
  const int beats = 6 * beats_per_word;
  struct Case {
    const char* what;
    int beats;
    uint16_t user;
    bool last;
  };
  for (const Case& c : {Case{"another link id", beats, 6, true},
                        Case{"TLAST before the last beat", beats - 1, 5, true},
                        Case{"no TLAST on the last beat", beats + 3, 5, true},
                        Case{"no TLAST at all", beats, 5, false}}) {
    cas_in_.clear();
    offer_transfer(cas_in_, c.beats, c.user, c.last);
    offer_transfer(cas_in_, 4, 9);  // a later transfer, left in the link
    expect_error_then_recover(
        {load_instr(small_load()), load_instr(l), end_instr()}, ErrorCode::kCascade, 1, c.what, {},
        [&] { EXPECT_TRUE(cas_in_.empty()) << c.what << ": the link is emptied after the error"; });
    if (HasFailure()) return;
  }
  // Stale beats offered after an error are dropped; after the next START the
  // link carries a correct transfer again.
  cas_in_.clear();
  offer_transfer(cas_in_, 2, 7, false);
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kCascade, 0,
                            "short, no TLAST");
  cas_loopback_ = true;
  StoreSpec s;
  s.cascade = true;
  s.link_id = 5;
  s.rows = 1;
  s.row_words = 6;
  s.src_stride = 6;
  LoadSpec in = small_load();
  in.rows = 1;
  in.row_words = 6;
  run_and_check({load_instr(in).deps(0, 0, 1, 0), compute_instr({}).deps(1, 0, 1, 0),
                 store_instr(s).deps(1, 0, 0, 0), load_instr(l), end_instr()},
                "loopback after the errors");
}

// Field rules of the cascade transfers: an undefined source or destination
// kind, and a cascade transfer with an external address or stride, are
// ILLEGAL_INSTR.
TEST_F(STRATA_MEMSYS_SUITE, CascadeFieldChecks) {
  LoadSpec l;
  l.cascade = true;
  l.ext_addr = kBeatBytes;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "cascade LOAD with ext_addr");
  l.ext_addr = 0;
  l.ext_stride = kBeatBytes;
  expect_error_then_recover({load_instr(l), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "cascade LOAD with ext_row_stride");
  Instr src2 = load_instr(small_load());
  src2.set(isa::load::kSrcKind, 2);
  expect_error_then_recover({src2, end_instr()}, ErrorCode::kIllegalInstr, 0, "LOAD src_kind 2");
  StoreSpec s;
  s.cascade = true;
  s.ext_stride = kBeatBytes;
  expect_error_then_recover({store_instr(s), end_instr()}, ErrorCode::kIllegalInstr, 0,
                            "cascade STORE with ext_row_stride");
  Instr dst3 = store_instr(small_store());
  dst3.set(isa::store::kDstKind, 3);
  expect_error_then_recover({dst3, end_instr()}, ErrorCode::kIllegalInstr, 0, "STORE dst_kind 3");
}

// chain_stop_i (another stage of the chain stopped) stops a run waiting on
// the cascade with CHAIN_STOP, index 0xFFFF; this stage's own error raises
// chain_stop_o while it drains. Then a correct run.
TEST_F(STRATA_MEMSYS_SUITE, CascadeChainStop) {
  cas_loopback_ = false;
  LoadSpec l;
  l.cascade = true;
  l.rows = 4;
  l.row_words = 4;
  uint64_t stop_seen = 0;
  monitor_ = [&] { stop_seen += dut().chain_stop_o; };
  write_program({load_instr(l), end_instr()}, kProgBase);
  start(kProgBase, 2);
  const uint64_t started = cycle();
  steps(300);  // the LOAD waits for beats that never come
  EXPECT_TRUE(csr_->read(csr::kStatus) & csr::kStatusBusy) << "waiting on the link, no deadlock";
  chain_stop_ = true;
  const RunResult r = wait_done(1000, started);
  chain_stop_ = false;
  ASSERT_TRUE(r.finished);
  EXPECT_EQ(r.code, ErrorCode::kChainStop) << csr::to_string(r.code);
  EXPECT_EQ(r.index, 0xFFFF);
  EXPECT_GT(stop_seen, 0u) << "chain_stop_o while draining";
  stop_seen = 0;
  LoadSpec bad = small_load();
  bad.rows = 0;
  expect_error_then_recover(
      {load_instr(bad), end_instr()}, ErrorCode::kIllegalInstr, 0, "an error of this stage", {},
      [&] { EXPECT_GT(stop_seen, 0u) << "chain_stop_o after its own error"; });
  stop_seen = 0;
  run_and_check(random_tiles(2, 3, 10), "after the chain stop");
  EXPECT_EQ(stop_seen, 0u) << "no chain_stop_o on a good run";
}

}  // namespace
}  // namespace strata::tb
