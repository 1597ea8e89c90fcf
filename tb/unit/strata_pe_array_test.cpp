// SPDX-License-Identifier: Apache-2.0
// strata_pe_array bench: the P PEs on one broadcast stream, in both data flows
// of background item 1, every accumulator compared with the golden model
// (strata::conv2d_acc / strata::fc_acc) element by element, under random
// input gaps and random result back-pressure, plus throughput (P * N MACs per
// cycle), masked/broadcast cache writes, int32 limits and error reporting.
// Built once per configuration (tb/unit/compute.cmake); STRATA_ARRAY_SUITE
// names the suite after the configuration.
#include <Vstrata_pe_array.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <iostream>
#include <vector>

#include "pe_bench_util.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

#ifndef STRATA_ARRAY_SUITE
#define STRATA_ARRAY_SUITE StrataPeArray
#endif

namespace strata::tb {
namespace {

using Cfg = ComputeConfig;
static_assert(!Cfg::kSparse, "this bench drives dense beats");
constexpr int N = Cfg::kLanes;
constexpr int P = Cfg::kPes;

class STRATA_ARRAY_SUITE : public ComputeBench<Vstrata_pe_array> {
 protected:
  using Cache = std::vector<std::vector<std::vector<int8_t>>>;  // [pe][addr][lane]

  // Random words at addresses 0..words-1 of every PE (a different word per PE).
  Cache fill_random(int words) {
    Cache cache(P, std::vector<std::vector<int8_t>>(words));
    std::vector<CacheWrite> writes;
    for (int p = 0; p < P; ++p) {
      for (int a = 0; a < words; ++a) {
        cache[p][a] = rand_vec(N);
        writes.push_back({uint64_t{1} << p, static_cast<uint32_t>(a), dense_word(cache[p][a])});
      }
    }
    load(writes);
    return cache;
  }

  struct Batch {
    std::vector<ComputeBeat> beats;
    std::vector<Result> want;
    std::vector<size_t> last_beat;
  };

  // Random accumulations; expected values from strata::fc_acc per PE.
  Batch random_batch(const Cache& cache, int count, int max_len) {
    const int words = static_cast<int>(cache[0].size());
    Batch b;
    for (int k = 0; k < count; ++k) {
      const int len = static_cast<int>(rand_int(1, max_len));
      std::vector<int32_t> bias(P);
      for (auto& v : bias) v = static_cast<int32_t>(rand_int(-(1 << 30), 1 << 30));
      std::vector<Tensor<int8_t>> w(P, Tensor<int8_t>({1, int64_t{len} * N}));
      Tensor<int8_t> in({int64_t{len} * N});
      for (int j = 0; j < len; ++j) {
        ComputeBeat beat;
        beat.op = rand_vec(N);
        beat.addr = static_cast<uint32_t>(rand_int(0, words - 1));
        beat.first = j == 0;
        beat.last = j == len - 1;
        beat.bias = bias;
        if (j != 0) {
          for (auto& v : beat.bias) v = static_cast<int32_t>(rand_int(INT32_MIN, INT32_MAX));
        }
        for (int n = 0; n < N; ++n) {
          in[j * N + n] = beat.op[n];
          for (int p = 0; p < P; ++p) w[p][j * N + n] = cache[p][beat.addr][n];
        }
        b.beats.push_back(beat);
      }
      Result r(P);
      for (int p = 0; p < P; ++p) r[p] = fc_acc(in, w[p], Tensor<int32_t>({1}, {bias[p]}))[0];
      b.want.push_back(r);
      b.last_beat.push_back(b.beats.size() - 1);
    }
    return b;
  }

  void random_test(int count, double gap, double stall) {
    const auto cache = fill_random(64);
    const Batch b = random_batch(cache, count, 10);
    RunOptions opt;
    opt.gap = gap;
    opt.stall = stall;
    const auto got = run(b.beats, b.want.size(), opt);
    expect_results(got, b.want,
                   [](size_t i, int p) { return fmt::format("accumulation {}, PE {}", i, p); });
    EXPECT_FALSE(m().err_o);
  }
};

// --- Random accumulations (>= 1000 per test), three traffic patterns. ------

TEST_F(STRATA_ARRAY_SUITE, RandomAccumulationsFullThroughput) {
  const auto cache = fill_random(64);
  const Batch b = random_batch(cache, 1000, 10);
  RunStats st;
  const auto got = run(b.beats, b.want.size(), {}, &st);
  expect_results(got, b.want,
                 [](size_t i, int p) { return fmt::format("accumulation {}, PE {}", i, p); });
  // One beat per cycle = P * N MACs per cycle; each result kLatency cycles
  // after its last beat.
  ASSERT_EQ(st.accept_cycles.size(), b.beats.size());
  EXPECT_EQ(st.accept_cycles.back() - st.accept_cycles.front() + 1, b.beats.size())
      << "beats not accepted back to back";
  ASSERT_EQ(st.result_cycles.size(), b.want.size());
  for (size_t k = 0; k < b.want.size(); ++k) {
    ASSERT_EQ(st.result_cycles[k], st.accept_cycles[b.last_beat[k]] + Cfg::kLatency)
        << "latency of result " << k;
  }
  const double macs = static_cast<double>(b.beats.size()) * P * N;
  const double per_cycle = macs / static_cast<double>(st.cycles);
  std::cout << fmt::format(
      "[ ARRAY    ] P={} N={}: {} beats, {} MACs in {} cycles = {:.2f} "
      "MACs/cycle (peak {}, pipeline fill/drain {} cycles)\n",
      P, N, b.beats.size(), macs, st.cycles, per_cycle, P * N, Cfg::kLatency);
  RecordProperty("macs_per_cycle", fmt::format("{:.2f}", per_cycle));
}

TEST_F(STRATA_ARRAY_SUITE, RandomAccumulationsGapsAndStalls) { random_test(1000, 0.3, 0.3); }

TEST_F(STRATA_ARRAY_SUITE, RandomAccumulationsHeavyBackPressure) { random_test(1000, 0.05, 0.75); }

// --- Conv flow: each PE caches one output channel's weights. ----------------

// Cout = 2P + 3 channels in three groups (the last one partial: its unused PEs
// hold zero weights and bias and must return 0). Group g's weights sit at
// cache base g * words; group 0 is loaded first, the others are written while
// group 0 computes (cache double buffering).
TEST_F(STRATA_ARRAY_SUITE, ConvLayerMatchesGolden) {
  const int cin = N + 3, h = 7, wd = 6, k = 3, stride = 1, pad = 1;
  const int cout = 2 * P + 3, groups = (cout + P - 1) / P;
  const ConvGeometry g{k, stride, pad};
  const int chunks = (cin + N - 1) / N, words = k * k * chunks;
  ASSERT_LE(groups * words, Cfg::kDepth);
  const auto [in, w, bias, want_acc, ho, wo] = random_conv(cin, h, wd, cout, g);

  auto addr = [&](int grp, int tap, int c) {
    return static_cast<uint32_t>(grp * words + tap * chunks + c);
  };
  std::vector<std::vector<CacheWrite>> loads(groups);
  for (int grp = 0; grp < groups; ++grp) {
    for (int p = 0; p < P; ++p) {
      const int co = grp * P + p;
      for (int tap = 0; tap < k * k; ++tap) {
        for (int c = 0; c < chunks; ++c) {
          std::vector<int8_t> v(N, 0);
          for (int n = 0; n < N && c * N + n < cin && co < cout; ++n) {
            v[n] = w(co, c * N + n, tap / k, tap % k);
          }
          loads[grp].push_back({uint64_t{1} << p, addr(grp, tap, c), dense_word(v)});
        }
      }
    }
  }
  load(loads[0]);
  std::vector<CacheWrite> later;
  for (int grp = 1; grp < groups; ++grp)
    later.insert(later.end(), loads[grp].begin(), loads[grp].end());

  for (int grp = 0; grp < groups; ++grp) {
    std::vector<ComputeBeat> beats;
    std::vector<Result> want;
    std::vector<int32_t> gbias(P, 0);
    for (int p = 0; p < P; ++p) {
      if (grp * P + p < cout) gbias[p] = bias(grp * P + p);
    }
    for (int y = 0; y < ho; ++y) {
      for (int x = 0; x < wo; ++x) {
        std::vector<ComputeBeat> pos;
        for (int tap = 0; tap < k * k; ++tap) {
          const int iy = y * stride - pad + tap / k, ix = x * stride - pad + tap % k;
          if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;  // padding: skipped
          for (int c = 0; c < chunks; ++c) {
            ComputeBeat beat;
            beat.op.assign(N, 0);
            for (int n = 0; n < N && c * N + n < cin; ++n) beat.op[n] = in(c * N + n, iy, ix);
            beat.addr = addr(grp, tap, c);
            beat.bias = gbias;
            pos.push_back(beat);
          }
        }
        pos.front().first = true;
        pos.back().last = true;
        beats.insert(beats.end(), pos.begin(), pos.end());
        Result r(P, 0);
        for (int p = 0; p < P; ++p) {
          if (grp * P + p < cout) r[p] = want_acc(grp * P + p, y, x);
        }
        want.push_back(r);
      }
    }
    RunOptions opt;
    opt.gap = 0.2;
    opt.stall = 0.3;
    if (grp == 0) {
      opt.writes_during_run = later;
      ASSERT_GE(beats.size(), later.size()) << "group 0 too short to overlap the loads";
    }
    const auto got = run(beats, want.size(), opt);
    expect_results(got, want, [&](size_t i, int p) {
      return fmt::format("conv channel {} (group {}, PE {}), row {}, column {}", grp * P + p, grp,
                         p, i / wo, i % wo);
    });
  }
  EXPECT_FALSE(m().err_o);
}

// --- FC batch flow: each PE caches one image, the weights are broadcast. ----

TEST_F(STRATA_ARRAY_SUITE, FullyConnectedBatchMatchesGolden) {
  const int c = 5, h = 3, wd = 3, features = c * h * wd, cout = 37;
  const int chunks = (features + N - 1) / N;
  std::vector<Tensor<int8_t>> images(P, Tensor<int8_t>({c, h, wd}));
  Tensor<int8_t> w({cout, features});
  Tensor<int32_t> bias({cout});
  for (auto& img : images) {
    for (auto& v : img.values()) v = rand_i8();
  }
  for (auto& v : w.values()) v = rand_i8();
  for (auto& v : bias.values()) v = static_cast<int32_t>(rand_int(-1000000, 1000000));
  std::vector<Tensor<int32_t>> want_acc;
  for (const auto& img : images) want_acc.push_back(fc_acc(img, w, bias));

  std::vector<CacheWrite> writes;
  for (int p = 0; p < P; ++p) {
    for (int ch = 0; ch < chunks; ++ch) {
      std::vector<int8_t> v(N, 0);
      for (int n = 0; n < N && ch * N + n < features; ++n) v[n] = images[p][ch * N + n];
      writes.push_back({uint64_t{1} << p, static_cast<uint32_t>(ch), dense_word(v)});
    }
  }
  load(writes);
  const std::vector<ComputeBeat> beats = fc_beats(w, bias, 0, P);  // FC: one bias in every PE
  std::vector<Result> want;
  for (int j = 0; j < cout; ++j) {
    Result r(P);
    for (int p = 0; p < P; ++p) r[p] = want_acc[p](j, 0, 0);
    want.push_back(r);
  }
  RunOptions opt;
  opt.gap = 0.25;
  opt.stall = 0.25;
  const auto got = run(beats, want.size(), opt);
  expect_results(got, want, [](size_t i, int p) {
    return fmt::format("fc output {}, image {} (PE {})", i, p, p);
  });
}

// --- Cache write port. ------------------------------------------------------

// Broadcast writes (all mask bits), then random subset masks over them; every
// PE must hold exactly what its mask bits wrote (shadow model), read back
// through one-beat dot products with unit operands per lane.
TEST_F(STRATA_ARRAY_SUITE, MaskedAndBroadcastWrites) {
  const int words = 16;
  Cache shadow(P, std::vector<std::vector<int8_t>>(words));
  std::vector<CacheWrite> writes;
  for (int a = 0; a < words; ++a) {
    const auto v = rand_vec(N);
    writes.push_back({all_pes(), static_cast<uint32_t>(a), dense_word(v)});
    for (int p = 0; p < P; ++p) shadow[p][a] = v;
  }
  for (int i = 0; i < 4 * words; ++i) {
    const auto v = rand_vec(N);
    const uint64_t mask = static_cast<uint64_t>(rand_int(0, static_cast<int64_t>(all_pes())));
    const auto a = static_cast<uint32_t>(rand_int(0, words - 1));
    writes.push_back({mask, a, dense_word(v)});
    for (int p = 0; p < P; ++p) {
      if ((mask >> p) & 1) shadow[p][a] = v;
    }
  }
  load(writes);
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  for (int a = 0; a < words; ++a) {
    for (int lane = 0; lane < N; ++lane) {
      ComputeBeat beat;
      beat.op.assign(N, 0);
      beat.op[lane] = 1;  // reads back lane `lane` of word a in every PE
      beat.addr = static_cast<uint32_t>(a);
      beat.first = beat.last = true;
      beat.bias.assign(P, 0);
      beats.push_back(beat);
      Result r(P);
      for (int p = 0; p < P; ++p) r[p] = shadow[p][a][lane];
      want.push_back(r);
    }
  }
  const auto got = run(beats, want.size());
  expect_results(got, want, [&](size_t i, int p) {
    return fmt::format("cache word {}, lane {}, PE {}", i / N, i % N, p);
  });
}

// --- Edge cases. ------------------------------------------------------------

// Even PEs accumulate -128 x -128 up to exactly INT32_MAX, odd PEs -128 x 127
// down towards INT32_MIN, in the same longest beat sequence.
TEST_F(STRATA_ARRAY_SUITE, AccumulatorsReachInt32Limits) {
  std::vector<CacheWrite> writes;
  for (int p = 0; p < P; ++p) {
    writes.push_back({uint64_t{1} << p, 0, dense_word(std::vector<int8_t>(N, p % 2 ? 127 : -128))});
  }
  load(writes);
  const int64_t n_beats = int64_t{INT32_MAX} / (int64_t{N} * 16384);
  std::vector<int32_t> bias(P);
  Result r(P);
  for (int p = 0; p < P; ++p) {
    const int64_t product = p % 2 ? -16256 : 16384;
    const int64_t target = p % 2 ? int64_t{INT32_MIN} : int64_t{INT32_MAX};
    bias[p] = static_cast<int32_t>(target - n_beats * N * product);
    r[p] = static_cast<int32_t>(target);
  }
  std::vector<ComputeBeat> beats;
  for (int64_t j = 0; j < n_beats; ++j) {
    ComputeBeat beat;
    beat.op.assign(N, -128);
    beat.addr = 0;
    beat.first = j == 0;
    beat.last = j == n_beats - 1;
    beat.bias = bias;
    beats.push_back(beat);
  }
  const auto got = run(beats, 1);
  expect_results(got, {r}, [](size_t, int p) {
    return fmt::format("PE {} long accumulation towards {}", p, p % 2 ? "INT32_MIN" : "INT32_MAX");
  });
}

// Result stream blocked: exactly kResultDepth results are taken in, then the
// array holds in_ready low; all results come out in order once it drains.
TEST_F(STRATA_ARRAY_SUITE, BlockedResultStreamLosesNothing) {
  const auto cache = fill_random(16);
  const Batch b = random_batch(cache, 150, 2);
  RunOptions opt;
  opt.ready_pattern = [](uint64_t t) { return t >= 200 && (t % 5) != 0; };
  RunStats st;
  const auto got = run(b.beats, b.want.size(), opt, &st);
  expect_results(got, b.want,
                 [](size_t i, int p) { return fmt::format("accumulation {}, PE {}", i, p); });
  EXPECT_EQ(st.max_results_in_flight, static_cast<uint64_t>(Cfg::kResultDepth));
}

TEST_F(STRATA_ARRAY_SUITE, FramingErrorIsReported) {
  const auto cache = fill_random(4);
  ComputeBeat beat;
  beat.op = rand_vec(N);
  beat.addr = 2;
  beat.first = false;  // no accumulation open: error, treated as a first beat
  beat.last = true;
  beat.bias.assign(P, 5);
  Result r(P);
  for (int p = 0; p < P; ++p) {
    int64_t acc = 5;
    for (int n = 0; n < N; ++n) acc += int64_t{beat.op[n]} * cache[p][2][n];
    r[p] = static_cast<int32_t>(acc);
  }
  EXPECT_FALSE(m().err_o);
  const auto got = run({beat}, 1);
  expect_results(got, {r}, [](size_t, int p) { return fmt::format("PE {}", p); });
  EXPECT_TRUE(m().err_o) << "beat without `first` not reported";
}

#if (STRATA_BENCH_DEPTH & (STRATA_BENCH_DEPTH - 1)) != 0
// Cache depth not a power of two: addresses >= depth exist on the ports. A
// read there raises err_o and contributes zero; a write there raises err_o and
// changes nothing.
TEST_F(STRATA_ARRAY_SUITE, CacheAddressOutOfRangeIsReported) {
  const int last = Cfg::kDepth - 1;
  const auto word = rand_vec(N);
  load({{all_pes(), static_cast<uint32_t>(last), dense_word(word)}});
  EXPECT_FALSE(m().err_o);
  const auto ones = std::vector<int8_t>(N, 1);
  int64_t sum = 0;
  for (int8_t v : word) sum += v;
  auto beat = [&](uint32_t a, bool first, bool last_beat) {
    ComputeBeat b;
    b.op = ones;
    b.addr = a;
    b.first = first;
    b.last = last_beat;
    b.bias.assign(P, 100);
    return b;
  };
  // In range, then out of range inside the same accumulation.
  auto got = run({beat(last, true, false), beat(Cfg::kDepth, false, true)}, 1);
  expect_results(got, {Result(P, static_cast<int32_t>(100 + sum))},
                 [](size_t, int p) { return fmt::format("PE {}, out-of-range read", p); });
  EXPECT_TRUE(m().err_o) << "out-of-range read not reported";

  this->reset();
  EXPECT_FALSE(m().err_o);
  const uint32_t top = (1u << Cfg::kAddrBits) - 1;
  load({{all_pes(), top, dense_word(rand_vec(N))}});
  EXPECT_TRUE(m().err_o) << "out-of-range write not reported";
  got = run({beat(last, true, true)}, 1);
  expect_results(got, {Result(P, static_cast<int32_t>(100 + sum))},
                 [](size_t, int p) { return fmt::format("PE {}, word after a bad write", p); });
}
#endif

}  // namespace
}  // namespace strata::tb
