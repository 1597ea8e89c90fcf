// SPDX-License-Identifier: Apache-2.0
// strata_act_stager bench, run inside the sparse PE (strata_pe, Sparse = 1)
// where it sits in front of the multipliers. Dense weight schedules with zeros
// are packed by the compiler's packer (stager_packer.hpp: lookahead/lookaside of
// background item 3); the packed weights and select codes go into the PE cache, the
// activation windows stream through, and every output must equal the DENSE dot
// product from the golden model, in fewer cycles.
#include <Vstrata_pe.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <vector>

#include "pe_bench_util.hpp"
#include "stager_packer.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {
namespace {

using Cfg = ComputeConfig;
static_assert(Cfg::kPes == 1 && Cfg::kSparse, "this bench is for strata_pe with Sparse = 1");
constexpr int N = Cfg::kLanes;

class StrataActStager : public ComputeBench<Vstrata_pe> {
 protected:
  // Writes the packed schedule of tile 0 at cache addresses 0..T'-1.
  void load_packed(const Packed& pk) {
    std::vector<CacheWrite> writes;
    for (int k = 0; k < pk.cycles(); ++k) {
      writes.push_back({1, static_cast<uint32_t>(k), CacheWord{pk.value[0][k], pk.sel[0][k]}});
    }
    load(writes);
  }

  // Beats of one output: the packed cycles with their activation windows.
  static void append_output(std::vector<ComputeBeat>& beats, const Packed& pk, const Schedule& act,
                            int32_t bias) {
    const int t_dense = static_cast<int>(act.size());
    for (int k = 0; k < pk.cycles(); ++k) {
      const int b = pk.base[k];
      ComputeBeat beat;
      beat.op = act[b];
      const std::vector<int8_t> zeros(N, 0);
      const auto& next = b + 1 < t_dense ? act[b + 1] : zeros;
      beat.op.insert(beat.op.end(), next.begin(), next.end());
      beat.addr = static_cast<uint32_t>(k);
      beat.first = k == 0;
      beat.last = k == pk.cycles() - 1;
      beat.bias = {bias};
      beats.push_back(beat);
    }
  }

  // Dense reference: bias + sum over t, n of w[t][n] * act[t][n] (strata::fc_acc).
  static int32_t dense_dot(const Schedule& w, const Schedule& act, int32_t bias) {
    const int64_t len = static_cast<int64_t>(w.size()) * N;
    Tensor<int8_t> in({len}), wt({1, len});
    for (size_t t = 0; t < w.size(); ++t) {
      for (int n = 0; n < N; ++n) {
        in[static_cast<int64_t>(t) * N + n] = act[t][n];
        wt[static_cast<int64_t>(t) * N + n] = w[t][n];
      }
    }
    return fc_acc(in, wt, Tensor<int32_t>({1}, {bias}))[0];
  }

  // Packs a random schedule at `sparsity`, runs `outputs` dot products with
  // random activations, compares each with the dense result; returns T'.
  int sparsity_test(double sparsity, int t_dense, int outputs, double gap, double stall) {
    const Schedule w = random_schedule(t_dense, sparsity);
    const Packed pk = pack_schedules({w}, N);
    EXPECT_EQ(unpack_schedule(pk, 0, t_dense, N), w) << "packer lost or moved a weight";
    load_packed(pk);
    std::vector<ComputeBeat> beats;
    std::vector<Result> want;
    for (int o = 0; o < outputs; ++o) {
      Schedule act(t_dense);
      for (auto& row : act) row = rand_vec(N);
      const auto bias = static_cast<int32_t>(rand_int(-(1 << 24), 1 << 24));
      append_output(beats, pk, act, bias);
      want.push_back({dense_dot(w, act, bias)});
    }
    RunOptions opt;
    opt.gap = gap;
    opt.stall = stall;
    RunStats st;
    const auto got = run(beats, want.size(), opt, &st);
    expect_results(got, want, [&](size_t i, int) {
      return fmt::format("sparsity {:.0f}%, output {}", sparsity * 100, i);
    });
    EXPECT_FALSE(m().err_o);
    if (gap == 0.0 && stall == 0.0) {
      // Real cycles, not just beats: T' per output, back to back.
      EXPECT_EQ(st.cycles, static_cast<uint64_t>(outputs) * pk.cycles() + Cfg::kLatency);
    }
    const int saved = 100 * (t_dense - pk.cycles()) / t_dense;
    std::cout << fmt::format(
        "[ STAGER   ] sparsity {:3.0f}%: {} dense cycles -> {} packed ({}% "
        "fewer), {} outputs in {} cycles\n",
        sparsity * 100, t_dense, pk.cycles(), saved, outputs, st.cycles);
    RecordProperty(fmt::format("packed_cycles_{:.0f}", sparsity * 100), pk.cycles());
    return pk.cycles();
  }
};

// --- Packed schedules equal the dense dot product at every sparsity. --------

TEST_F(StrataActStager, Sparsity0IsDense) {
  const int t = 64;
  EXPECT_EQ(sparsity_test(0.0, t, 300, 0.0, 0.0), t) << "no zero weights: nothing to skip";
}

TEST_F(StrataActStager, Sparsity50) {
  const int t = 64;
  EXPECT_LE(sparsity_test(0.5, t, 300, 0.3, 0.3), t);
}

TEST_F(StrataActStager, Sparsity75SavesCycles) {
  const int t = 64;
  EXPECT_LT(sparsity_test(0.75, t, 300, 0.0, 0.0), t * 8 / 10) << "expected >= 20% fewer cycles";
}

TEST_F(StrataActStager, Sparsity90SavesCycles) {
  const int t = 64;
  EXPECT_LE(sparsity_test(0.9, t, 300, 0.2, 0.5), t * 6 / 10) << "expected >= 40% fewer cycles";
}

// A pruned conv layer (one output channel, 3x3, 16 input channels, 80% zero
// weights), dense schedule = taps x channel chunks, activations of padded taps
// are zero: every output equals strata::conv2d_acc.
TEST_F(StrataActStager, PrunedConvMatchesGolden) {
  const int cin = 16, h = 7, wd = 6, k = 3, chunks = (cin + N - 1) / N;
  const ConvGeometry g{k, 1, 1};
  Tensor<int8_t> in({cin, h, wd}), w({1, cin, k, k});
  Tensor<int32_t> bias({1}, {static_cast<int32_t>(rand_int(-5000, 5000))});
  for (auto& v : in.values()) v = rand_i8();
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& v : w.values()) v = u(rng()) < 0.8 ? int8_t{0} : rand_i8();
  const Tensor<int32_t> want_acc = conv2d_acc(in, w, bias, g);

  const int t_dense = k * k * chunks;
  Schedule sched(t_dense, std::vector<int8_t>(N, 0));
  for (int tap = 0; tap < k * k; ++tap) {
    for (int c = 0; c < chunks; ++c) {
      for (int n = 0; n < N && c * N + n < cin; ++n) {
        sched[tap * chunks + c][n] = w(0, c * N + n, tap / k, tap % k);
      }
    }
  }
  const Packed pk = pack_schedules({sched}, N);
  load_packed(pk);
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  const int ho = conv_out_size(h, g), wo = conv_out_size(wd, g);
  for (int y = 0; y < ho; ++y) {
    for (int x = 0; x < wo; ++x) {
      Schedule act(t_dense, std::vector<int8_t>(N, 0));
      for (int tap = 0; tap < k * k; ++tap) {
        const int iy = y - 1 + tap / k, ix = x - 1 + tap % k;
        if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
        for (int c = 0; c < chunks; ++c) {
          for (int n = 0; n < N && c * N + n < cin; ++n) {
            act[tap * chunks + c][n] = in(c * N + n, iy, ix);
          }
        }
      }
      append_output(beats, pk, act, bias(0));
      want.push_back({want_acc(0, y, x)});
    }
  }
  RunOptions opt;
  opt.gap = 0.15;
  opt.stall = 0.15;
  const auto got = run(beats, want.size(), opt);
  expect_results(got, want, [&](size_t i, int) {
    return fmt::format("pruned conv: row {}, column {}", i / wo, i % wo);
  });
  std::cout << fmt::format("[ STAGER   ] pruned conv: {} dense cycles -> {} packed per output\n",
                           t_dense, pk.cycles());
  EXPECT_LT(pk.cycles(), t_dense);
}

// --- The multiplexer itself: every select code in every lane. ---------------

// Random weights, random select codes (all four, wrap-around lanes included),
// random windows; one-beat accumulations checked against the documented mux.
TEST_F(StrataActStager, RandomSelectCodesMatchTheMux) {
  const int words = 64;
  std::vector<CacheWord> cache;
  std::vector<CacheWrite> writes;
  for (int a = 0; a < words; ++a) {
    CacheWord wd{rand_vec(N), std::vector<uint8_t>(N)};
    for (auto& s : wd.sel) s = static_cast<uint8_t>(rand_int(0, 3));
    cache.push_back(wd);
    writes.push_back({1, static_cast<uint32_t>(a), wd});
  }
  load(writes);
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  for (int i = 0; i < 1500; ++i) {
    ComputeBeat beat;
    beat.op = rand_vec(2 * N);
    beat.addr = static_cast<uint32_t>(rand_int(0, words - 1));
    beat.first = beat.last = true;
    beat.bias = {static_cast<int32_t>(rand_int(-1000, 1000))};
    const std::vector<int8_t> cur(beat.op.begin(), beat.op.begin() + N);
    const std::vector<int8_t> next(beat.op.begin() + N, beat.op.end());
    int64_t acc = beat.bias[0];
    for (int m = 0; m < N; ++m) {
      acc += int64_t{cache[beat.addr].value[m]} * stage(cur, next, cache[beat.addr].sel[m], m, N);
    }
    beats.push_back(beat);
    want.push_back({static_cast<int32_t>(acc)});
  }
  RunOptions opt;
  opt.gap = 0.3;
  opt.stall = 0.3;
  const auto got = run(beats, want.size(), opt);
  expect_results(got, want, [&](size_t i, int) {
    std::string codes;
    for (uint8_t s : cache[beats[i].addr].sel) codes += static_cast<char>('0' + s);
    return fmt::format("beat {} (cache word {}, select codes lane 0.. {})", i, beats[i].addr,
                       codes);
  });
}

// One weight of 1 in lane m with code c, distinct activations everywhere: the
// result names exactly which activation the stager picked.
TEST_F(StrataActStager, EachLaneAndCodePicksTheDocumentedActivation) {
  std::vector<CacheWrite> writes;
  for (int m = 0; m < N; ++m) {
    for (uint8_t c = 0; c < 4; ++c) {
      CacheWord wd{std::vector<int8_t>(N, 0), std::vector<uint8_t>(N, 0)};
      wd.value[m] = 1;
      wd.sel[m] = c;
      for (int o = 0; o < N; ++o) {
        if (o != m) wd.sel[o] = static_cast<uint8_t>((o + c) % 4);  // zero weights, any code
      }
      writes.push_back({1, static_cast<uint32_t>(m * 4 + c), wd});
    }
  }
  load(writes);
  std::vector<int8_t> window(2 * N);
  for (int i = 0; i < 2 * N; ++i)
    window[i] = static_cast<int8_t>(i + 1);  // cur: 1..N, next: N+1..2N
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  for (int m = 0; m < N; ++m) {
    const int expect[4] = {m + 1, N + m + 1, N + (m + 1) % N + 1, N + (m + N - 1) % N + 1};
    for (int c = 0; c < 4; ++c) {
      ComputeBeat beat;
      beat.op = window;
      beat.addr = static_cast<uint32_t>(m * 4 + c);
      beat.first = beat.last = true;
      beat.bias = {0};
      beats.push_back(beat);
      want.push_back({expect[c]});
    }
  }
  const auto got = run(beats, want.size());
  const char* names[4] = {"current", "next", "next lane+1", "next lane-1"};
  expect_results(got, want, [&](size_t i, int) {
    return fmt::format("lane {}, code {} ({})", i / 4, i % 4, names[i % 4]);
  });
}

// Select codes 0 everywhere: the sparse PE is a dense PE on window[0] (the FC
// batch flow uses it so); the next vector must not leak in.
TEST_F(StrataActStager, ZeroCodesAreDense) {
  std::vector<CacheWord> cache;
  std::vector<CacheWrite> writes;
  for (int a = 0; a < 32; ++a) {
    cache.push_back(dense_word(rand_vec(N)));
    writes.push_back({1, static_cast<uint32_t>(a), cache.back()});
  }
  load(writes);
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  for (int k = 0; k < 1000; ++k) {
    const int len = static_cast<int>(rand_int(1, 4));
    int64_t acc = rand_int(-100000, 100000);
    for (int j = 0; j < len; ++j) {
      ComputeBeat beat;
      beat.op = rand_vec(2 * N);
      beat.addr = static_cast<uint32_t>(rand_int(0, 31));
      beat.first = j == 0;
      beat.last = j == len - 1;
      beat.bias = {static_cast<int32_t>(acc)};
      for (int n = 0; n < N; ++n) acc += int64_t{beat.op[n]} * cache[beat.addr].value[n];
      beats.push_back(beat);
    }
    want.push_back({static_cast<int32_t>(acc)});
  }
  RunStats st;
  const auto got = run(beats, want.size(), {}, &st);
  expect_results(got, want, [](size_t i, int) { return fmt::format("accumulation {}", i); });
  EXPECT_EQ(st.cycles, beats.size() + Cfg::kLatency) << "one beat per cycle";
}

}  // namespace
}  // namespace strata::tb
