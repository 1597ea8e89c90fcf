// SPDX-License-Identifier: Apache-2.0
// Bench infrastructure for the memory system (rtl/memsys/strata_memsys.sv):
//   - Instr: a 512-bit instruction built field by field from the generated
//     descriptors of strata/isa_fields.hpp;
//   - RefMachine: the program-order reference (external memory, banks, PE
//     caches, parameter RAM) that LOAD / STORE and the compute stand-in's
//     COMPUTE are checked against;
//   - ComputeStandIn: plays the compute engine on the top's cp_ / cw_ / cr_
//     ports (queue, semaphores, bank ports, status), with its own simple
//     COMPUTE semantics (a 2D bank-to-bank copy with each byte XOR 0x5A);
//   - MemsysBench: the fixture (AXI memory model, CSR driver, stand-in, PE /
//     control / parameter write recorders, run_program with a cycle timeout,
//     bank words read back through either compute read port), and the
//     cascade link: by default a loopback (the cascade output's beats come
//     back on the cascade input, both sides with random stalls), or beats
//     a test puts on the input itself.
// On a sparse build (STRATA_BENCH_SPARSE, the top built with Sparse = 1) the
// reference also runs LOAD CONTROL (control words and the schedule, which
// the load engine writes through the PE port with pe_ctl_o), and CONFIG says
// sparse.
#pragma once

#include <Vstrata_memsys.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axi_mem_model.hpp"
#include "axil_driver.hpp"
#include "memsys_bus_view.hpp"
#include "port_fields.hpp"
#include "sim_fixture.hpp"
#include "strata/csr_map.hpp"
#include "strata/hw_config.hpp"
#include "strata/isa_fields.hpp"

namespace strata::tb {

using Vtop = Vstrata_memsys;

// The configuration the bench top was built with (tb/unit/memsys.cmake sets
// these when it overrides the top's Lanes / AxiDataWidth).
#ifndef STRATA_BENCH_LANES
#define STRATA_BENCH_LANES hw::kLanes
#endif
#ifndef STRATA_BENCH_AXI_BITS
#define STRATA_BENCH_AXI_BITS hw::kAxiDataWidth
#endif
#ifndef STRATA_BENCH_SPARSE
#define STRATA_BENCH_SPARSE 0
#endif
inline constexpr int kLanes = STRATA_BENCH_LANES;
inline constexpr bool kSparse = STRATA_BENCH_SPARSE != 0;  // the top's Sparse parameter
inline constexpr int kWordBytes = kLanes;                  // N
inline constexpr int kBeatBytes = STRATA_BENCH_AXI_BITS / 8;
inline constexpr int kParamBytes = 8;
inline constexpr uint64_t kInstrBytes = isa::kInstrBytes;
// The compute bank ports carry the payload structs of strata_bank_types.svh:
// cw_req_i = {bank, addr, data}, cr_req_i = {bank, addr}, cr_rsp_o = {data},
// first field most significant.
inline constexpr unsigned kWordBits = 8 * kWordBytes;
inline constexpr unsigned kBankIdxBits = hw::kBanks > 1 ? std::bit_width(unsigned(hw::kBanks - 1))
                                                        : 1;
inline constexpr unsigned kBankAddrBits = std::bit_width(unsigned(hw::kBankDepth - 1));

// The flat bus names the AXI agents drive and sample (memsys_bus_view.hpp).
using BusView = MemsysBusView<hw::kAxiAddrWidth, STRATA_BENCH_AXI_BITS>;

// Background contents of external memory never written: a hash of the address,
// except that bytes 6 and 7 of every 8-byte entry are a shift of 0..47 and a
// zero, so a PARAM load of the background is legal (docs/isa.md, LOAD).
inline uint8_t background_byte(uint64_t addr) {
  uint64_t x = addr * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  const auto h = static_cast<uint8_t>(x * 0xBF58476D1CE4E5B9ull >> 56);
  if (addr % kParamBytes == 6) return h % (hw::kMaxShift + 1);
  if (addr % kParamBytes == 7) return 0;
  return h;
}

// ---------------------------------------------------------------------------

struct Instr {
  std::array<uint64_t, isa::kInstrWords> w{};

  Instr& set(const isa::Field& f, uint64_t v) {
    for (int i = 0; i < f.width; ++i) {
      const int b = f.lsb + i;
      const uint64_t bit = (v >> i) & 1;
      w[b / 64] = (w[b / 64] & ~(uint64_t{1} << (b % 64))) | (bit << (b % 64));
    }
    return *this;
  }
  uint64_t get(const isa::Field& f) const {
    uint64_t v = 0;
    for (int i = 0; i < f.width; ++i) {
      const int b = f.lsb + i;
      v |= ((w[b / 64] >> (b % 64)) & 1) << i;
    }
    return v;
  }
  Instr& bit(int b, bool v) {
    w[b / 64] = (w[b / 64] & ~(uint64_t{1} << (b % 64))) | (uint64_t{v} << (b % 64));
    return *this;
  }
  isa::Opcode op() const { return static_cast<isa::Opcode>(get(isa::hdr::kOpcode)); }
  Instr& deps(uint64_t acq0, uint64_t acq1, uint64_t rel0, uint64_t rel1) {
    return set(isa::hdr::kAcq0, acq0)
        .set(isa::hdr::kAcq1, acq1)
        .set(isa::hdr::kRel0, rel0)
        .set(isa::hdr::kRel1, rel1);
  }
  Instr& fine(uint64_t first, uint64_t step) {
    return set(isa::hdr::kAcq0First, first).set(isa::hdr::kAcq0Step, step);
  }
};

struct LoadSpec {
  uint64_t ext_addr = 0, ext_stride = 0;
  int rows = 1, row_words = 1;
  isa::LoadDst kind = isa::LoadDst::kBank;
  int dst_id = 0;
  bool pe_step = false;
  int dst_addr = 0, dst_stride = 0;
  bool cascade = false;  // src_kind CASCADE (ext_addr, ext_stride 0)
  int link_id = 0;
};

struct StoreSpec {
  uint64_t ext_addr = 0, ext_stride = 0;
  int rows = 1, row_words = 1;
  int src_id = 0, src_addr = 0, src_stride = 0;
  bool cascade = false;  // dst_kind CASCADE (ext_addr, ext_stride 0)
  int link_id = 0;
};

// The stand-in's COMPUTE: rows x words of bank in_id from in_base (rows
// in_stride apart) to bank dst_id from dst_base (rows dst_stride apart), each
// byte XOR 0x5A. rows = 0: a pure dependency relay. Encoded in the COMPUTE
// fields in_id, in_base, in_h (rows), in_w (words), in_groups (in_stride),
// dst_id, dst_base, dst_row_stride; delay = out_w (extra busy cycles).
struct CopySpec {
  int in_id = 0, in_base = 0, rows = 0, words = 0, in_stride = 0;
  int dst_id = 0, dst_base = 0, dst_stride = 0;
  int delay = 0;
};

inline Instr load_instr(const LoadSpec& s) {
  using namespace isa::load;
  Instr i;
  i.set(isa::hdr::kOpcode, uint64_t(isa::Opcode::kLoad))
      .set(kExtAddr, s.ext_addr)
      .set(kExtRowStride, s.ext_stride)
      .set(kRows, s.rows)
      .set(kRowWords, s.row_words)
      .set(kDstKind, uint64_t(s.kind))
      .set(kDstId, s.dst_id)
      .set(kDstPeStep, s.pe_step)
      .set(kSrcKind, uint64_t(s.cascade ? isa::LoadSrc::kCascade : isa::LoadSrc::kExt))
      .set(kLinkId, uint64_t(s.link_id))
      .set(kDstAddr, s.dst_addr)
      .set(kDstRowStride, s.dst_stride);
  return i;
}

inline Instr store_instr(const StoreSpec& s) {
  using namespace isa::store;
  Instr i;
  i.set(isa::hdr::kOpcode, uint64_t(isa::Opcode::kStore))
      .set(kExtAddr, s.ext_addr)
      .set(kExtRowStride, s.ext_stride)
      .set(kRows, s.rows)
      .set(kRowWords, s.row_words)
      .set(kSrcId, s.src_id)
      .set(kSrcAddr, s.src_addr)
      .set(kSrcRowStride, s.src_stride)
      .set(kDstKind, uint64_t(s.cascade ? isa::StoreDst::kCascade : isa::StoreDst::kExt))
      .set(kLinkId, uint64_t(s.link_id));
  return i;
}

// Where each CopySpec member lives in the COMPUTE instruction (one table for
// encoding and decoding).
inline constexpr std::array<std::pair<const isa::Field*, int CopySpec::*>, 9> kCopyFields{{
    {&isa::compute::kInId, &CopySpec::in_id},
    {&isa::compute::kInBase, &CopySpec::in_base},
    {&isa::compute::kInH, &CopySpec::rows},
    {&isa::compute::kInW, &CopySpec::words},
    {&isa::compute::kInGroups, &CopySpec::in_stride},
    {&isa::compute::kOutW, &CopySpec::delay},
    {&isa::compute::kDstId, &CopySpec::dst_id},
    {&isa::compute::kDstBase, &CopySpec::dst_base},
    {&isa::compute::kDstRowStride, &CopySpec::dst_stride},
}};

inline Instr compute_instr(const CopySpec& s) {
  Instr i;
  i.set(isa::hdr::kOpcode, uint64_t(isa::Opcode::kCompute))
      .set(isa::compute::kMode, uint64_t(isa::ComputeMode::kPool));
  for (const auto& [field, member] : kCopyFields) i.set(*field, uint64_t(s.*member));
  return i;
}

inline CopySpec decode_copy(const Instr& i) {
  CopySpec s;
  for (const auto& [field, member] : kCopyFields) s.*member = static_cast<int>(i.get(*field));
  return s;
}

inline Instr end_instr() {
  Instr i;
  i.set(isa::hdr::kOpcode, uint64_t(isa::Opcode::kEnd));
  return i;
}

inline Instr config_instr() {
  using namespace isa::config;
  Instr i;
  i.set(isa::hdr::kOpcode, uint64_t(isa::Opcode::kConfig))
      .set(kVersion, hw::kVersion)
      .set(kPes, hw::kPes)
      .set(isa::config::kLanes, tb::kLanes)
      .set(kBanks, hw::kBanks)
      .set(kBankDepth, hw::kBankDepth)
      .set(kPeCacheDepth, hw::kPeCacheDepth)
      .set(kParamDepth, hw::kParamDepth)
      .set(isa::config::kSparse, kSparse ? 1 : 0);
  return i;
}

// ---------------------------------------------------------------------------

// Program-order reference of LOAD, STORE and the stand-in COMPUTE.
class RefMachine {
 public:
  using Word = std::vector<uint8_t>;

  RefMachine() { ext.set_background(background_byte); }

  SparseMemory ext;
  std::map<std::pair<int, int>, Word> bank;      // (bank, addr) -> word, written words only
  std::map<std::pair<int, int>, Word> pe_cache;  // (pe, addr) -> word
  std::map<std::pair<int, int>, Word> control;   // (pe or P = schedule, addr) -> word
  std::map<int, Word> param;                     // channel -> 8 bytes
  std::map<int, Word> table;                     // activation-table word -> N bytes
  std::deque<uint8_t> link;                      // cascade loopback: stored, not yet loaded

  void execute(const Instr& i) {
    switch (i.op()) {
      case isa::Opcode::kLoad:
        load(i);
        break;
      case isa::Opcode::kStore:
        store(i);
        break;
      case isa::Opcode::kCompute:
        copy(decode_copy(i));
        break;
      default:
        break;
    }
  }

  void load(const Instr& i) {
    using namespace isa::load;
    const auto kind = static_cast<isa::LoadDst>(i.get(kDstKind));
    const int rows = static_cast<int>(i.get(kRows)), words = static_cast<int>(i.get(kRowWords));
    const int unit = kind == isa::LoadDst::kParam ? kParamBytes : kWordBytes;
    const bool cascade = i.get(kSrcKind) == uint64_t(isa::LoadSrc::kCascade);
    if (cascade && kind == isa::LoadDst::kParam) {
      ADD_FAILURE() << "test bug: the reference loads words, not parameter entries, from the link";
    }
    for (int r = 0; r < rows; ++r) {
      const uint64_t src = i.get(kExtAddr) + uint64_t(r) * i.get(kExtRowStride);
      for (int w = 0; w < words; ++w) {
        Word v;
        if (cascade) {
          if (link.size() < size_t(unit)) {
            ADD_FAILURE() << "test bug: a cascade LOAD takes more than the STOREs before it sent";
            return;
          }
          v.assign(link.begin(), link.begin() + unit);
          link.erase(link.begin(), link.begin() + unit);
        } else {
          v = ext.read_block(src + uint64_t(w) * unit, unit);
        }
        const int id = static_cast<int>(i.get(kDstId));
        const int base = static_cast<int>(i.get(kDstAddr)),
                  stride = static_cast<int>(i.get(kDstRowStride));
        if (kind == isa::LoadDst::kBank) {
          bank[{id, base + r * stride + w}] = v;
        } else if (kind == isa::LoadDst::kParam) {
          param[base + r * stride + w] = v;
        } else if (kind == isa::LoadDst::kTable) {
          table[base + r * stride + w] = v;
        } else {
          auto& dst = kind == isa::LoadDst::kControl ? control : pe_cache;
          if (i.get(kDstPeStep)) {
            dst[{(id + r) % hw::kPes, base + (r / hw::kPes) * stride + w}] = v;
          } else {
            dst[{id, base + r * stride + w}] = v;
          }
        }
      }
    }
  }

  void store(const Instr& i) {
    using namespace isa::store;
    const int rows = static_cast<int>(i.get(kRows)), words = static_cast<int>(i.get(kRowWords));
    for (int r = 0; r < rows; ++r) {
      const uint64_t dst = i.get(kExtAddr) + uint64_t(r) * i.get(kExtRowStride);
      for (int w = 0; w < words; ++w) {
        const auto key =
            std::make_pair(static_cast<int>(i.get(kSrcId)),
                           static_cast<int>(i.get(kSrcAddr) + r * i.get(kSrcRowStride)) + w);
        const auto it = bank.find(key);
        if (it == bank.end()) {
          ADD_FAILURE() << "test bug: STORE reads bank " << key.first << " word " << key.second
                        << " that nothing wrote";
          continue;
        }
        if (i.get(kDstKind) == uint64_t(isa::StoreDst::kCascade)) {
          link.insert(link.end(), it->second.begin(), it->second.end());
        } else {
          ext.write_block(dst + uint64_t(w) * kWordBytes, it->second);
        }
      }
    }
  }

  void copy(const CopySpec& s) {
    for (int r = 0; r < s.rows; ++r) {
      for (int w = 0; w < s.words; ++w) {
        const auto it = bank.find({s.in_id, s.in_base + r * s.in_stride + w});
        if (it == bank.end()) {
          ADD_FAILURE() << "test bug: COMPUTE reads an unwritten bank word";
          continue;
        }
        Word v = it->second;
        for (auto& b : v) b ^= 0x5A;
        bank[{s.dst_id, s.dst_base + r * s.dst_stride + w}] = v;
      }
    }
  }
};

// ---------------------------------------------------------------------------

// The compute engine's part, played by the bench (completion-granular:
// acquires acq1 then acq0 up front, copies at up to one word per cycle,
// releases rel0 and rel1 at the end).
class ComputeStandIn {
 public:
  explicit ComputeStandIn(std::mt19937_64& rng) : rng_(rng) {}

  double gap = 0.0;  // probability of an idle cycle in the copy / of not taking an instruction
  int executed = 0;

  // Extra releases the test schedules: (cycle >= at) -> release `amount` on edge.
  struct Release {
    uint64_t at;
    int edge;
    uint16_t amount;
  };
  std::deque<Release> scheduled;
  std::vector<uint64_t> released_at;  // cycles scheduled releases went out

  void drive(Vtop& d, uint64_t cycle) {
    d.cp_instr_ready_i = state_ == St::kIdle && !Throttle(gap).stall(rng_);
    d.cp_acq_req_i = 0;
    d.cp_acq_amount_i = 0;
    if (state_ == St::kAcq1) {
      d.cp_acq_req_i = 2;
      d.cp_acq_amount_i = uint32_t(acq1_) << 16;
    } else if (state_ == St::kAcq0) {
      d.cp_acq_req_i = 1;
      d.cp_acq_amount_i = acq0_;
    }
    d.cp_rel_valid_i = 0;
    d.cp_rel_amount_i = 0;
    d.cp_retire_i = 0;
    if (state_ == St::kRelease) {
      d.cp_rel_valid_i = (rel0_ ? 1 : 0) | (rel1_ ? 2 : 0);
      d.cp_rel_amount_i = rel0_ | (uint32_t(rel1_) << 16);
      d.cp_retire_i = 1;
    } else if (!scheduled.empty() && scheduled.front().at <= cycle) {
      const Release& r = scheduled.front();
      d.cp_rel_valid_i = 1u << r.edge;
      d.cp_rel_amount_i = uint32_t(r.amount) << (16 * r.edge);
      sched_fired_ = true;
    }
    // Copy, pipelined: a read request per cycle (random gaps), each word
    // written from a queue as soon as its response is in (one per cycle).
    d.cr_req_valid_i = 0;
    d.cw_valid_i = 0;
    if (state_ == St::kCopy) {
      if (reads_ < total() && !Throttle(gap).stall(rng_)) {
        d.cr_req_valid_i = 1;
        set_field(d.cr_req_i, kBankAddrBits, kBankIdxBits, spec_.in_id);
        set_field(d.cr_req_i, 0, kBankAddrBits,
                  spec_.in_base + (reads_ / spec_.words) * spec_.in_stride + reads_ % spec_.words);
      }
      if (!wq_.empty()) {
        const int k = wq_.front().first;
        d.cw_valid_i = 1;
        // The word first: port_set_bytes clears the whole port.
        port_set_bytes(d.cw_req_i, wq_.front().second.data(), kWordBytes);
        set_field(d.cw_req_i, kWordBits, kBankAddrBits,
                  spec_.dst_base + (k / spec_.words) * spec_.dst_stride + k % spec_.words);
        set_field(d.cw_req_i, kWordBits + kBankAddrBits, kBankIdxBits, spec_.dst_id);
      }
    }
    d.cp_idle_i = state_ == St::kIdle;
    d.cp_busy_i = state_ != St::kIdle;
    d.cp_dep_wait_i = state_ == St::kAcq0 || state_ == St::kAcq1;
    d.cp_index_i = index_;
    d.cp_err_i = 0;
    d.cp_err_code_i = 0;
    d.cp_err_index_i = 0;
    d.cp_mac_active_i = 0;
    d.cp_macs_i = 0;
    d.cp_stall_out_i = 0;
  }

  void sample(Vtop& d, uint64_t cycle) {
    if (sched_fired_) {
      released_at.push_back(cycle);
      scheduled.pop_front();
      sched_fired_ = false;
    }
    if (d.abort_o) {
      state_ = St::kIdle;
      return;
    }
    switch (state_) {
      case St::kIdle:
        if (d.cp_instr_valid_o && d.cp_instr_ready_i) {
          Instr i;
          for (int w = 0; w < isa::kInstrWords; ++w) {
            i.w[w] = uint64_t(d.cp_instr_o[2 * w]) | (uint64_t(d.cp_instr_o[2 * w + 1]) << 32);
          }
          spec_ = decode_copy(i);
          acq0_ = static_cast<uint16_t>(i.get(isa::hdr::kAcq0));
          acq1_ = static_cast<uint16_t>(i.get(isa::hdr::kAcq1));
          rel0_ = static_cast<uint16_t>(i.get(isa::hdr::kRel0));
          rel1_ = static_cast<uint16_t>(i.get(isa::hdr::kRel1));
          index_ = d.cp_index_o;
          reads_ = written_ = 0;
          rsp_due_ = {-1, -1, -1};
          wq_.clear();
          delay_ = spec_.delay;
          state_ = acq1_ ? St::kAcq1 : acq0_ ? St::kAcq0 : next_after_acquire();
        }
        break;
      case St::kAcq1:
        if (d.cp_acq_grant_o & 2) state_ = acq0_ ? St::kAcq0 : next_after_acquire();
        break;
      case St::kAcq0:
        if (d.cp_acq_grant_o & 1) state_ = next_after_acquire();
        break;
      case St::kCopy: {
        // Read k's word arrives three cycles after its request (strata_banks:
        // request register, RAM, output register).
        const int due = rsp_due_[2];
        rsp_due_ = {-1, rsp_due_[0], rsp_due_[1]};
        EXPECT_EQ(bool(d.cr_rsp_valid_o), due >= 0)
            << "bank read response exactly three cycles after the request";
        if (due >= 0) {
          std::vector<uint8_t> v(kWordBytes);
          port_get_bytes(d.cr_rsp_o, v.data(), kWordBytes);
          for (auto& b : v) b ^= 0x5A;
          wq_.emplace_back(due, std::move(v));
        }
        if (d.cr_req_valid_i && d.cr_req_ready_o) rsp_due_[0] = reads_++;
      }
        if (d.cw_valid_i && d.cw_ready_o) {
          wq_.pop_front();
          if (++written_ == total()) state_ = St::kDelay;
        }
        break;
      case St::kDelay:
        if (delay_-- <= 0) state_ = St::kRelease;
        break;
      case St::kRelease:
        ++executed;
        state_ = St::kIdle;
        break;
    }
  }

 private:
  enum class St { kIdle, kAcq1, kAcq0, kCopy, kDelay, kRelease };
  St next_after_acquire() const { return total() > 0 ? St::kCopy : St::kDelay; }
  int total() const { return spec_.rows * spec_.words; }

  std::mt19937_64& rng_;
  St state_ = St::kIdle;
  CopySpec spec_;
  uint16_t acq0_ = 0, acq1_ = 0, rel0_ = 0, rel1_ = 0, index_ = 0;
  int reads_ = 0, written_ = 0, delay_ = 0;
  std::array<int, 3> rsp_due_{-1, -1, -1};  // read index requested 1 / 2 / 3 cycles ago, or -1
  std::deque<std::pair<int, std::vector<uint8_t>>> wq_;  // (word index, data) to write
  bool sched_fired_ = false;
};

// ---------------------------------------------------------------------------

// One beat of the cascade link: TDATA bytes, TLAST, TUSER.
struct CasBeat {
  std::vector<uint8_t> data;
  bool last = false;
  uint16_t user = 0;
};

struct RunResult {
  bool finished = false;  // IRQ seen before the timeout
  uint32_t status = 0;
  csr::ErrorCode code = csr::ErrorCode::kNone;
  uint16_t index = 0;
  uint64_t cycles = 0;  // end of the START write to the interrupt
  bool done() const {
    return finished && (status & csr::kStatusDone) && !(status & csr::kStatusError);
  }
};

class MemsysBench : public SimFixture<Vtop> {
 protected:
  static constexpr uint64_t kProgBase = 0x00F00000;  // programs live here

  void SetUp() override {
    SimFixture::SetUp();
    mem_.set_background(background_byte);
    axi_ = std::make_unique<AxiMemModel<BusView>>(bus_, mem_, rng());
    csr_ = std::make_unique<AxilDriver<BusView>>(
        bus_, [this] { step(); }, rng());
    cp_ = std::make_unique<ComputeStandIn>(rng());
    reset();
  }

  void TearDown() override {
    if (axi_ && !::testing::Test::HasFatalFailure()) axi_->check_idle();
    SimFixture::TearDown();
  }

  // One cycle of every agent.
  void step() {
    auto& d = dut();
    axi_->drive();
    csr_->drive();
    cp_->drive(d, cycle());
    d.cr1_req_valid_i = 0;  // the stand-in reads through the first port only
    d.cr1_req_i = 0;
    if (peek_) {  // bank_word(): the stand-in is idle and leaves the read ports alone
      auto& valid = peek_port_ ? d.cr1_req_valid_i : d.cr_req_valid_i;
      auto& req = peek_port_ ? d.cr1_req_i : d.cr_req_i;
      valid = 1;
      set_field(req, kBankAddrBits, kBankIdxBits, uint64_t(peek_->first));
      set_field(req, 0, kBankAddrBits, uint64_t(peek_->second));
    }
    drive_cascade(d);
    if (drive_) drive_();  // a test's own drive of the ports, last
    d.pe_ready_i = !pe_throttle_.stall(rng());
    d.param_ready_i = !param_throttle_.stall(rng());
    d.tab_ready_i = !param_throttle_.stall(rng());
    bus_.to_dut(d);
    settle();
    bus_.from_dut(d);
    axi_->sample();
    csr_->sample();
    cp_->sample(d, cycle());
    if (peek_due_ > 0 && --peek_due_ == 0) {
      EXPECT_TRUE(peek_port_ ? d.cr1_rsp_valid_o : d.cr_rsp_valid_o)
          << "bank word three cycles after its request";
      peek_word_.assign(kWordBytes, 0);
      if (peek_port_) {
        port_get_bytes(d.cr1_rsp_o, peek_word_.data(), kWordBytes);
      } else {
        port_get_bytes(d.cr_rsp_o, peek_word_.data(), kWordBytes);
      }
    }
    if (peek_ && (peek_port_ ? d.cr1_req_valid_i && d.cr1_req_ready_o
                             : d.cr_req_valid_i && d.cr_req_ready_o)) {
      peek_.reset();
      peek_due_ = 3;  // strata_banks: request register, RAM, output register
    }
    if (d.pe_valid_o && d.pe_ready_i) {
      std::vector<uint8_t> v(kWordBytes);
      port_get_bytes(d.pe_data_o, v.data(), kWordBytes);
      // pe_ctl_o: a LOAD CONTROL word (sparse builds; PE P is the schedule).
      (d.pe_ctl_o ? ctl_writes_ : pe_writes_)[{int(d.pe_o), int(d.pe_addr_o)}] = v;
      ++(d.pe_ctl_o ? ctl_write_count_ : pe_write_count_);
    }
    if (d.param_valid_o && d.param_ready_i) {
      std::vector<uint8_t> v(kParamBytes);
      port_get_bytes(d.param_data_o, v.data(), kParamBytes);
      param_writes_[int(d.param_channel_o)] = v;
      ++param_write_count_;
    }
    if (d.tab_valid_o && d.tab_ready_i) {
      std::vector<uint8_t> v(kWordBytes);
      port_get_bytes(d.tab_data_o, v.data(), kWordBytes);
      tab_writes_[int(d.tab_addr_o)] = v;
    }
    if (bus_.m_axi_awvalid && bus_.m_axi_awready) aw_cycles_.push_back(cycle());
    if (bus_.m_axi_bvalid && bus_.m_axi_bready) b_cycles_.push_back(cycle());
    if (bus_.m_axi_arvalid && bus_.m_axi_arready && bus_.m_axi_arid == 1) {
      load_ar_cycles_.push_back(cycle());
    }
    sample_cascade(d);
    if (monitor_) monitor_();
    tick();
  }

  void steps(int n) {
    for (int i = 0; i < n; ++i) step();
  }

  void write_program(const std::vector<Instr>& prog, uint64_t base) {
    for (std::size_t k = 0; k < prog.size(); ++k) {
      for (int w = 0; w < isa::kInstrWords; ++w) {
        for (int b = 0; b < 8; ++b) {
          mem_.write(base + k * kInstrBytes + 8 * w + b,
                     static_cast<uint8_t>(prog[k].w[w] >> (8 * b)));
        }
      }
    }
  }

  // Starts a program (base, limit) without waiting.
  void start(uint64_t base, uint32_t limit, bool fine = false) {
    csr_->write(csr::kInstrBaseLo, static_cast<uint32_t>(base));
    csr_->write(csr::kInstrBaseHi, static_cast<uint32_t>(base >> 32));
    csr_->write(csr::kInstrLimit, limit);
    csr_->write(csr::kIrqEnable, csr::kIrqEnableDone | csr::kIrqEnableError);
    csr_->write(csr::kCtrl, csr::kCtrlStart | (fine ? csr::kCtrlFineGrain : 0));
  }

  // Waits for the interrupt, reads the status, acknowledges the interrupt.
  RunResult wait_done(uint64_t timeout, uint64_t started) {
    RunResult r;
    for (uint64_t i = 0; i < timeout && !dut().irq_o; ++i) step();
    r.finished = dut().irq_o;
    r.cycles = cycle() - started;
    if (!r.finished) {
      ADD_FAILURE() << "no interrupt within " << timeout << " cycles (STRATA_SEED=" << seed()
                    << ")";
      return r;
    }
    r.status = csr_->read(csr::kStatus);
    const uint32_t ec = csr_->read(csr::kErrorCode);
    r.code = static_cast<csr::ErrorCode>(ec & csr::kErrorCodeCode);
    r.index = static_cast<uint16_t>(ec >> csr::kErrorCodeIndexLsb);
    csr_->write(csr::kIrqStatus, csr::kIrqStatusDone | csr::kIrqStatusError);
    step();
    EXPECT_FALSE(dut().irq_o) << "interrupt cleared by W1C";
    EXPECT_EQ(r.status & csr::kStatusBusy, 0u) << "not busy after the interrupt";
    return r;
  }

  // Writes the program at kProgBase (limit = its length unless given), runs it.
  RunResult run(const std::vector<Instr>& prog, bool fine = false, uint64_t timeout = 400000,
                std::optional<uint32_t> limit = {}) {
    write_program(prog, kProgBase);
    start(kProgBase, limit.value_or(static_cast<uint32_t>(prog.size())), fine);
    return wait_done(timeout, cycle());
  }

  // Executes the program on the reference (program order).
  void reference(const std::vector<Instr>& prog) {
    for (const auto& i : prog) ref_.execute(i);
  }

  // External memory, PE caches and parameter RAM equal the reference.
  void expect_matches_reference(const std::string& ctx) {
    auto pages = ref_.ext.pages();
    for (uint64_t p : mem_.pages()) pages.push_back(p);
    std::sort(pages.begin(), pages.end());
    pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
    int bad = 0;
    for (uint64_t p : pages) {
      for (uint64_t a = p * SparseMemory::kPage; a < (p + 1) * SparseMemory::kPage; ++a) {
        if (a >= kProgBase && a < kProgBase + 0x100000) continue;  // programs
        if (mem_.read(a) != ref_.ext.read(a) && ++bad <= 8) {
          ADD_FAILURE() << ctx << ": external byte 0x" << std::hex << a << " expected 0x"
                        << int(ref_.ext.read(a)) << " got 0x" << int(mem_.read(a)) << std::dec
                        << " (STRATA_SEED=" << seed() << ")";
        }
      }
    }
    EXPECT_EQ(bad, 0) << ctx << ": mismatching external bytes";
    EXPECT_EQ(pe_writes_.size(), ref_.pe_cache.size()) << ctx << ": PE cache words written";
    for (const auto& [key, v] : ref_.pe_cache) {
      const auto it = pe_writes_.find(key);
      if (it == pe_writes_.end()) {
        ADD_FAILURE() << ctx << ": PE " << key.first << " word " << key.second << " not written";
      } else if (it->second != v) {
        ADD_FAILURE() << ctx << ": PE " << key.first << " word " << key.second << " expected "
                      << hex_bytes(v) << " got " << hex_bytes(it->second)
                      << " (STRATA_SEED=" << seed() << ")";
      }
    }
    EXPECT_EQ(ctl_writes_.size(), ref_.control.size()) << ctx << ": control words written";
    for (const auto& [key, v] : ref_.control) {
      const auto it = ctl_writes_.find(key);
      if (it == ctl_writes_.end()) {
        ADD_FAILURE() << ctx << ": control word " << key.second << " of PE " << key.first
                      << " (P: the schedule) not written";
      } else if (it->second != v) {
        ADD_FAILURE() << ctx << ": control word " << key.second << " of PE " << key.first
                      << " expected " << hex_bytes(v) << " got " << hex_bytes(it->second)
                      << " (STRATA_SEED=" << seed() << ")";
      }
    }
    EXPECT_EQ(tab_writes_.size(), ref_.table.size()) << ctx << ": table words written";
    for (const auto& [w, v] : ref_.table) {
      const auto it = tab_writes_.find(w);
      if (it == tab_writes_.end()) {
        ADD_FAILURE() << ctx << ": table word " << w << " not written";
      } else if (it->second != v) {
        ADD_FAILURE() << ctx << ": table word " << w << " expected " << hex_bytes(v) << " got "
                      << hex_bytes(it->second) << " (STRATA_SEED=" << seed() << ")";
      }
    }
    EXPECT_EQ(param_writes_.size(), ref_.param.size()) << ctx << ": parameter entries written";
    for (const auto& [ch, v] : ref_.param) {
      const auto it = param_writes_.find(ch);
      if (it == param_writes_.end()) {
        ADD_FAILURE() << ctx << ": parameter channel " << ch << " not written";
      } else if (it->second != v) {
        ADD_FAILURE() << ctx << ": parameter channel " << ch << " expected " << hex_bytes(v)
                      << " got " << hex_bytes(it->second) << " (STRATA_SEED=" << seed() << ")";
      }
    }
  }

  static std::string hex_bytes(const std::vector<uint8_t>& v) {
    std::string s;
    for (auto it = v.rbegin(); it != v.rend(); ++it) s += fmt::format("{:02x}", *it);
    return s;
  }

  // Word `addr` of bank `bank`, read through compute read port `port` (0: cr,
  // 1: cr1, sparse builds) between runs (the stand-in idle).
  std::vector<uint8_t> bank_word(int bank, int addr, int port = 0) {
    peek_ = std::pair{bank, addr};
    peek_port_ = port;
    peek_word_.clear();
    for (int i = 0; i < 1000 && peek_word_.empty(); ++i) step();
    EXPECT_FALSE(peek_word_.empty()) << "bank " << bank << " word " << addr << " not read";
    peek_.reset();
    peek_due_ = 0;
    return peek_word_;
  }

  // The cascade link (see the header): the input offers cas_in_.front() (a
  // loopback moves every beat the output sends there), each side stalled
  // with probability cas_stall_.
  void drive_cascade(Vtop& d) {
    d.chain_stop_i = chain_stop_;
    d.cas_out_ready_i = !cas_stall(cas_ready_hold_);
    const bool offer = !cas_in_.empty() && (cas_in_offered_ || !cas_stall(cas_valid_hold_));
    d.cas_in_valid_i = offer;
    cas_in_offered_ = offer;
    if (offer) {
      const CasBeat& b = cas_in_.front();
      for (int i = 0; i < kBeatBytes; ++i) set_field(d.cas_in_data_i, 8 * i, 8, b.data[i]);
      d.cas_in_last_i = b.last;
      d.cas_in_user_i = b.user;
    } else {  // what the link shows between beats means nothing: noise
      for (int i = 0; i < kBeatBytes; ++i) set_field(d.cas_in_data_i, 8 * i, 8, rng()() & 0xFF);
      d.cas_in_last_i = rng()() & 1;
      d.cas_in_user_i = static_cast<uint16_t>(rng()());
    }
  }
  void sample_cascade(const Vtop& d) {
    if (d.cas_in_valid_i && d.cas_in_ready_o) {
      cas_in_.pop_front();
      cas_in_offered_ = false;
      ++cas_taken_;
    }
    if (d.cas_out_valid_o && d.cas_out_ready_i) {
      CasBeat b;
      b.data.resize(kBeatBytes);
      for (int i = 0; i < kBeatBytes; ++i) {
        b.data[i] = static_cast<uint8_t>(get_field(d.cas_out_data_o, 8 * i, 8));
      }
      b.last = d.cas_out_last_o;
      b.user = static_cast<uint16_t>(d.cas_out_user_o);
      if (cas_loopback_) {
        cas_in_.push_back(std::move(b));
      } else {
        cas_sent_.push_back(std::move(b));
      }
    }
  }
  bool cas_stall(bool& hold) {
    hold = cas_stall_ > 0 && std::bernoulli_distribution(cas_stall_)(rng());
    return hold;
  }

  // Semaphore count (L2C, C2S, C2L, S2C, S2L = 0..4) from the debug port
  // (SemWidth bits each; tb/unit/memsys.cmake sets both).
  uint64_t sem(int s) {
    return get_field(dut().sem_count_o, unsigned(s) * STRATA_BENCH_SEM_WIDTH,
                     STRATA_BENCH_SEM_WIDTH);
  }

  SparseMemory mem_;
  RefMachine ref_;
  BusView bus_;  // the agents' flat view of the bus struct ports
  std::unique_ptr<AxiMemModel<BusView>> axi_;
  std::unique_ptr<AxilDriver<BusView>> csr_;
  std::unique_ptr<ComputeStandIn> cp_;
  Throttle pe_throttle_, param_throttle_;
  std::map<std::pair<int, int>, std::vector<uint8_t>> pe_writes_;
  std::map<std::pair<int, int>, std::vector<uint8_t>> ctl_writes_;  // PE port with pe_ctl_o
  std::map<int, std::vector<uint8_t>> param_writes_;
  std::map<int, std::vector<uint8_t>> tab_writes_;  // activation-table word -> N bytes
  uint64_t pe_write_count_ = 0, ctl_write_count_ = 0, param_write_count_ = 0;
  std::vector<uint64_t> aw_cycles_, b_cycles_, load_ar_cycles_;
  std::function<void()> drive_;    // each cycle after the agents' drive, before the evaluation
  std::function<void()> monitor_;  // each cycle after the evaluation, before the clock edge
  std::optional<std::pair<int, int>> peek_;  // bank_word(): (bank, address) to request
  int peek_port_ = 0;                        // through cr (0) or cr1 (1)
  int peek_due_ = 0;                         // cycles until its word arrives
  std::vector<uint8_t> peek_word_;
  std::deque<CasBeat> cas_in_;     // beats offered on the cascade input, in order
  std::vector<CasBeat> cas_sent_;  // beats the output sent (without the loopback)
  bool cas_loopback_ = true;       // output beats go to cas_in_
  double cas_stall_ = 0.0;         // stall probability of each side per cycle
  bool cas_in_offered_ = false;    // the input's beat was offered and not taken yet
  bool cas_ready_hold_ = false, cas_valid_hold_ = false;
  uint64_t cas_taken_ = 0;   // beats the input took
  bool chain_stop_ = false;  // chain_stop_i
};

}  // namespace strata::tb
