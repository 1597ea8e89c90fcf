// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the PE benches (strata_pe, strata_pe_array, with or
// without the activation stager):
//   - ComputeBench<Model>: a SimFixture with a cache loader and a stream driver
//     for the PE / PE-array compute and result streams (random input gaps,
//     random result back-pressure, cycle timeout, throughput statistics).
// The bench configuration comes from compile definitions set by
// tb/unit/compute.cmake (STRATA_BENCH_PES, _LANES, _DEPTH, _SPARSE), so the
// same source checks every configuration it is built for.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "port_fields.hpp"
#include "sim_fixture.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {

// ---------------------------------------------------------------------------
// Bench configuration (compile definitions from tb/unit/compute.cmake).

#if !defined(STRATA_BENCH_PES) || !defined(STRATA_BENCH_LANES) || !defined(STRATA_BENCH_DEPTH)
#error "compute benches need STRATA_BENCH_PES, STRATA_BENCH_LANES and STRATA_BENCH_DEPTH"
#endif
#ifndef STRATA_BENCH_SPARSE
#define STRATA_BENCH_SPARSE 0
#endif

constexpr int clog2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

struct ComputeConfig {
  static constexpr int kPes = STRATA_BENCH_PES;
  static constexpr int kLanes = STRATA_BENCH_LANES;
  static constexpr int kDepth = STRATA_BENCH_DEPTH;
  static constexpr bool kSparse = STRATA_BENCH_SPARSE != 0;
  static constexpr int kOpVectors = kSparse ? 2 : 1;
  static constexpr int kDataBits = 8;
  static constexpr int kSelBits = 2;
  static constexpr int kAccBits = 32;

  static constexpr int kAddrBits = clog2(kDepth);
  // The RTL's documented figures (strata_pe header): adder-tree register stages,
  // the sparse PE's stage that adds the neighbours' sums, latency from the
  // accepting edge to res_valid_o, result FIFO slots.
  static constexpr int kTreeStages = (clog2(kLanes) + 1) / 2;
  static constexpr int kSumStages = kSparse ? 1 : 0;
  static constexpr int kLatency = 5 + kTreeStages + kSumStages;
  static constexpr int kResultDepth = 6 + kTreeStages + kSumStages;
};

// One compute beat. op holds kOpVectors * kLanes values (vector 0 first);
// bias holds one value per PE; packed (sparse PEs): the beat uses the control
// plane (select codes, destination), else every lane its current word.
struct ComputeBeat {
  std::vector<int8_t> op;
  uint32_t addr = 0;
  bool first = false;
  bool last = false;
  std::vector<int32_t> bias;
  bool packed = true;
};

// One cache word: kLanes operands and (sparse) kLanes select codes and the
// destination of the word's sum (0 own, 1 PE p - 1, 2 PE p + 1).
struct CacheWord {
  std::vector<int8_t> value;
  std::vector<uint8_t> sel;
  uint8_t dest = 0;
};

// One cache write: the PEs it goes to (bit p = PE p), address and word. On a
// sparse PE, load() writes the word's control plane in a second cycle.
struct CacheWrite {
  uint64_t pe_mask = 1;
  uint32_t addr = 0;
  CacheWord word;
  bool ctl = false;  // this cycle writes the control plane (sparse)
};

struct RunStats {
  uint64_t start_cycle = 0;             // cycle of the run's first drive point
  uint64_t cycles = 0;                  // cycles until the last expected result was taken
  std::vector<uint64_t> accept_cycles;  // per beat, cycle of its handshake
  std::vector<uint64_t> result_cycles;  // per result, cycle of its handshake
  uint64_t max_results_in_flight = 0;   // accepted `last` beats not yet read
};

struct RunOptions {
  double gap = 0.0;           // probability of holding in_valid low in a cycle
  double stall = 0.0;         // probability of holding res_ready low in a cycle
  uint64_t timeout = 200000;  // cycles before the run is declared hung
  // Optional ready pattern (cycle index from start -> ready); overrides stall.
  std::function<bool(uint64_t)> ready_pattern;
  // Cache writes issued one per cycle while the beats stream.
  std::vector<CacheWrite> writes_during_run;
};

// Fixture for strata_pe (kPes == 1) and strata_pe_array.
template <class Model>
class ComputeBench : public SimFixture<Model> {
 protected:
  using Cfg = ComputeConfig;
  using Result = std::vector<int32_t>;  // one accumulator per PE

  void SetUp() override {
    SimFixture<Model>::SetUp();
    idle_inputs();
    this->reset();
  }

  Model& m() { return this->dut(); }

  // Drives all inputs to their idle values (valid/enables low, payload random).
  void idle_inputs() {
    // A lone strata_pe has no neighbours: nothing arrives from them.
    if constexpr (requires { m().nb_prev_i; }) {
      m().nb_prev_i = 0;
      m().nb_next_i = 0;
    }
    m().cache_we_i = 0;
    m().in_valid_i = 0;
    m().res_ready_i = 0;
    randomise_payload();
  }

  // Writes cache words, one per cycle, with nothing streaming; on a sparse
  // PE, each word's control plane in the cycle after its weights.
  void load(const std::vector<CacheWrite>& writes) {
    for (const auto& w : writes) {
      drive_write(w);
      this->settle();
      this->tick();
      if (Cfg::kSparse && !w.ctl) {
        CacheWrite c = w;
        c.ctl = true;
        drive_write(c);
        this->settle();
        this->tick();
      }
    }
    m().cache_we_i = 0;
    this->settle();
  }

  // Streams `beats`, collects `n_results` results, then checks that no extra
  // result appears. Fails the test (and returns what it has) on a timeout.
  std::vector<Result> run(const std::vector<ComputeBeat>& beats, size_t n_results,
                          const RunOptions& opt = {}, RunStats* stats = nullptr) {
    Throttle gap(opt.gap), stall(opt.stall);
    std::vector<Result> results;
    RunStats local;
    RunStats& st = stats != nullptr ? *stats : local;
    st = RunStats{};
    st.start_cycle = this->cycle();
    size_t next = 0, next_write = 0;
    bool valid = false;
    uint64_t in_flight = 0;
    while (next < beats.size() || results.size() < n_results) {
      const uint64_t t = this->cycle() - st.start_cycle;
      if (t > opt.timeout) {
        ADD_FAILURE() << fmt::format(
            "timeout after {} cycles: {}/{} beats accepted, {}/{} results (STRATA_SEED={})", t,
            next, beats.size(), results.size(), n_results, this->seed());
        break;
      }
      // Drive point.
      if (!valid) {
        if (next < beats.size() && !gap.stall(this->rng())) {
          drive_beat(beats[next]);
          valid = true;
        } else {
          randomise_payload();
        }
      }
      m().in_valid_i = valid;
      m().res_ready_i = opt.ready_pattern ? opt.ready_pattern(t) : !stall.stall(this->rng());
      if (next_write < opt.writes_during_run.size()) {
        drive_write(opt.writes_during_run[next_write++]);
      } else {
        m().cache_we_i = 0;
      }
      this->settle();
      // Sample point.
      const bool in_fire = valid && m().in_ready_o;
      const bool out_fire = m().res_valid_o && m().res_ready_i;
      if (out_fire) {
        results.push_back(read_result());
        st.result_cycles.push_back(this->cycle());
        --in_flight;
      }
      if (in_fire) {
        st.accept_cycles.push_back(this->cycle());
        if (beats[next].last) ++in_flight;
        st.max_results_in_flight = std::max(st.max_results_in_flight, in_flight);
      }
      this->tick();
      if (in_fire) {
        valid = false;
        ++next;
      }
    }
    st.cycles = this->cycle() - st.start_cycle;
    m().in_valid_i = 0;
    m().cache_we_i = 0;
    // No result beyond the expected ones.
    m().res_ready_i = 1;
    for (int i = 0; i < 2 * Cfg::kLatency; ++i) {
      this->settle();
      EXPECT_FALSE(m().res_valid_o) << fmt::format(
          "unexpected extra result {} cycles after the last expected one (STRATA_SEED={})", i,
          this->seed());
      if (m().res_valid_o) break;
      this->tick();
    }
    m().res_ready_i = 0;
    this->settle();
    return results;
  }

  // Compares results with expectations; `where(i, p)` names result i, PE p.
  // Stops after a few mismatches so a broken block does not flood the log.
  void expect_results(const std::vector<Result>& got, const std::vector<Result>& want,
                      const std::function<std::string(size_t, int)>& where) {
    ASSERT_EQ(got.size(), want.size()) << "result count (STRATA_SEED=" << this->seed() << ")";
    int mismatches = 0;
    for (size_t i = 0; i < want.size() && mismatches < 10; ++i) {
      for (int p = 0; p < Cfg::kPes; ++p) {
        if (got[i][p] != want[i][p]) {
          ++mismatches;
          ADD_FAILURE() << fmt::format("{}: expected {}, got {} (STRATA_SEED={})", where(i, p),
                                       want[i][p], got[i][p], this->seed());
        }
      }
    }
  }

  int8_t rand_i8() { return static_cast<int8_t>(this->rand_int(-128, 127)); }

  // A convolution's random operands (input [cin][h][wd], weights
  // [cout][cin][k][k], biases within +-100000) and its accumulators from
  // strata::conv2d_acc, [cout][ho][wo].
  struct ConvOperands {
    Tensor<int8_t> in, w;
    Tensor<int32_t> bias, want_acc;
    int ho = 0, wo = 0;
  };
  ConvOperands random_conv(int cin, int h, int wd, int cout, const ConvGeometry& g) {
    ConvOperands c;
    c.in = Tensor<int8_t>({cin, h, wd});
    c.w = Tensor<int8_t>({cout, cin, g.kernel, g.kernel});
    c.bias = Tensor<int32_t>({cout});
    for (auto& v : c.in.values()) v = rand_i8();
    for (auto& v : c.w.values()) v = rand_i8();
    for (auto& v : c.bias.values()) v = static_cast<int32_t>(this->rand_int(-100000, 100000));
    c.want_acc = conv2d_acc(c.in, c.w, c.bias, g);
    c.ho = int(conv_out_size(h, g));
    c.wo = int(conv_out_size(wd, g));
    return c;
  }

  // An FC layer's weight stream, w [neurons][features]: neuron j in
  // ceil(features / N) beats of N lanes (zero past the last feature) against
  // the cache words from `base`, each beat carrying bias(j) for `pes` PEs.
  static std::vector<ComputeBeat> fc_beats(const Tensor<int8_t>& w, const Tensor<int32_t>& bias,
                                           uint32_t base, int pes) {
    constexpr int kN = Cfg::kLanes;
    const int neurons = int(w.dim(0)), features = int(w.dim(1));
    const int chunks = (features + kN - 1) / kN;
    std::vector<ComputeBeat> beats;
    for (int j = 0; j < neurons; ++j) {
      for (int ch = 0; ch < chunks; ++ch) {
        ComputeBeat beat;
        beat.op.assign(kN, 0);
        for (int n = 0; n < kN && ch * kN + n < features; ++n) beat.op[n] = w(j, ch * kN + n);
        beat.addr = base + static_cast<uint32_t>(ch);
        beat.first = ch == 0;
        beat.last = ch == chunks - 1;
        beat.bias.assign(pes, bias(j));
        beats.push_back(beat);
      }
    }
    return beats;
  }

  // A dense weight schedule [t_dense][kLanes] for the activation stagers: each
  // weight zero with probability `sparsity`, else a random nonzero int8.
  std::vector<std::vector<int8_t>> random_schedule(int t_dense, double sparsity) {
    std::vector<std::vector<int8_t>> s(t_dense, std::vector<int8_t>(Cfg::kLanes, 0));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& row : s) {
      for (auto& v : row) {
        if (u(this->rng()) >= sparsity) {
          do v = rand_i8();
          while (v == 0);
        }
      }
    }
    return s;
  }

  std::vector<int8_t> rand_vec(size_t n) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = rand_i8();
    return v;
  }

  CacheWord dense_word(std::vector<int8_t> value) {
    return CacheWord{std::move(value), std::vector<uint8_t>(Cfg::kLanes, 0)};
  }

  uint64_t all_pes() const {
    return Cfg::kPes >= 64 ? ~uint64_t{0} : (uint64_t{1} << Cfg::kPes) - 1;
  }

 private:
  void drive_write(const CacheWrite& w) {
    m().cache_we_i = 1;
    if constexpr (requires { m().cache_pe_mask_i; }) {
      set_field(m().cache_pe_mask_i, 0, Cfg::kPes, w.pe_mask);
    }
    m().cache_waddr_i = w.addr;
    m().cache_ctl_i = w.ctl;
    for (int n = 0; n < Cfg::kLanes; ++n) {
      // The control word of docs/isa.md (LOAD CONTROL): lane n's select code
      // in bits 1:0 of byte n, the destination in bits 3:2 of byte 0.
      const uint8_t byte =
          w.ctl ? static_cast<uint8_t>(w.word.sel.at(n) | (n == 0 ? w.word.dest << 2 : 0))
                : static_cast<uint8_t>(w.word.value.at(n));
      set_field(m().cache_wdata_i, n * Cfg::kDataBits, Cfg::kDataBits, byte);
    }
  }

  void drive_beat(const ComputeBeat& b) {
    for (int i = 0; i < Cfg::kOpVectors * Cfg::kLanes; ++i) {
      set_field(m().in_op_i, i * Cfg::kDataBits, Cfg::kDataBits, static_cast<uint8_t>(b.op.at(i)));
    }
    m().in_addr_i = b.addr;
    m().in_first_i = b.first;
    m().in_last_i = b.last;
    m().in_packed_i = Cfg::kSparse && b.packed;
    for (int p = 0; p < Cfg::kPes; ++p) {
      set_field(m().in_bias_i, p * Cfg::kAccBits, Cfg::kAccBits,
                static_cast<uint32_t>(b.bias.at(p)));
    }
  }

  // Payload while in_valid_i is low: random, so the DUT must ignore it.
  void randomise_payload() {
    ComputeBeat junk;
    junk.op = rand_vec(Cfg::kOpVectors * Cfg::kLanes);
    junk.addr = static_cast<uint32_t>(this->rand_int(0, Cfg::kDepth - 1));
    junk.first = this->rand_int(0, 1) != 0;
    junk.last = this->rand_int(0, 1) != 0;
    for (int p = 0; p < Cfg::kPes; ++p) {
      junk.bias.push_back(static_cast<int32_t>(this->rand_int(INT32_MIN, INT32_MAX)));
    }
    drive_beat(junk);
  }

  Result read_result() {
    Result r(Cfg::kPes);
    for (int p = 0; p < Cfg::kPes; ++p) {
      r[p] = static_cast<int32_t>(get_signed(m().res_acc_o, p * Cfg::kAccBits, Cfg::kAccBits));
    }
    return r;
  }
};

}  // namespace strata::tb
