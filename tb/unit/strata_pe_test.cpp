// SPDX-License-Identifier: Apache-2.0
// strata_pe bench (dense configuration): every accumulator is compared with
// the golden model (strata::fc_acc / strata::conv2d_acc) element by element,
// under random input gaps and random result back-pressure, plus the exact
// latency and throughput the RTL documents.
#include <Vstrata_pe.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <vector>

#include "pe_bench_util.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {
namespace {

using Cfg = ComputeConfig;
static_assert(Cfg::kPes == 1 && !Cfg::kSparse, "this bench is for the dense strata_pe");
constexpr int N = Cfg::kLanes;

class StrataPe : public ComputeBench<Vstrata_pe> {
 protected:
  // A batch of random accumulations over a random cache, with the expected
  // values from strata::fc_acc (one output = bias + the flattened dot product).
  struct Batch {
    std::vector<ComputeBeat> beats;
    std::vector<Result> want;
    std::vector<size_t> last_beat;  // index of each accumulation's last beat
  };

  std::vector<std::vector<int8_t>> fill_random_cache() {
    std::vector<std::vector<int8_t>> cache(Cfg::kDepth);
    std::vector<CacheWrite> writes;
    for (int a = 0; a < Cfg::kDepth; ++a) {
      cache[a] = rand_vec(N);
      writes.push_back({1, static_cast<uint32_t>(a), dense_word(cache[a])});
    }
    load(writes);
    return cache;
  }

  Batch random_batch(const std::vector<std::vector<int8_t>>& cache, int count, int max_len) {
    Batch b;
    for (int k = 0; k < count; ++k) {
      const int len = static_cast<int>(rand_int(1, max_len));
      const auto bias = static_cast<int32_t>(rand_int(-(1 << 30), 1 << 30));
      Tensor<int8_t> in({int64_t{len} * N}), w({1, int64_t{len} * N});
      for (int j = 0; j < len; ++j) {
        ComputeBeat beat;
        beat.op = rand_vec(N);
        beat.addr = static_cast<uint32_t>(rand_int(0, Cfg::kDepth - 1));
        beat.first = j == 0;
        beat.last = j == len - 1;
        beat.bias = {j == 0 ? bias : static_cast<int32_t>(rand_int(INT32_MIN, INT32_MAX))};
        for (int n = 0; n < N; ++n) {
          in[j * N + n] = beat.op[n];
          w[j * N + n] = cache[beat.addr][n];
        }
        b.beats.push_back(beat);
      }
      b.last_beat.push_back(b.beats.size() - 1);
      b.want.push_back({fc_acc(in, w, Tensor<int32_t>({1}, {bias}))[0]});
    }
    return b;
  }

  void random_test(int count, double gap, double stall) {
    const auto cache = fill_random_cache();
    const Batch b = random_batch(cache, count, 12);
    RunOptions opt;
    opt.gap = gap;
    opt.stall = stall;
    const auto got = run(b.beats, b.want.size(), opt);
    expect_results(got, b.want, [&](size_t i, int) {
      return fmt::format("accumulation {} (last beat {})", i, b.last_beat[i]);
    });
    EXPECT_FALSE(m().err_o) << "err_o raised by well-formed input";
  }

  // Conv layer of `cout` output channels computed one channel at a time on the
  // PE: the cache holds every channel's weights (channel co at co * words),
  // the activations of each output position stream tap by tap, N input
  // channels per beat; taps in the padding are skipped, as the sequencer does.
  void conv_test(int cin, int h, int wd, int k, int stride, int pad, int cout, double gap,
                 double stall) {
    const ConvGeometry g{k, stride, pad};
    const int chunks = (cin + N - 1) / N;
    const int words = k * k * chunks;
    ASSERT_LE(cout * words, Cfg::kDepth);
    const auto [in, w, bias, want_acc, ho, wo] = random_conv(cin, h, wd, cout, g);

    auto word_addr = [&](int co, int ky, int kx, int c) {
      return static_cast<uint32_t>(co * words + (ky * k + kx) * chunks + c);
    };
    std::vector<CacheWrite> writes;
    for (int co = 0; co < cout; ++co) {
      for (int ky = 0; ky < k; ++ky) {
        for (int kx = 0; kx < k; ++kx) {
          for (int c = 0; c < chunks; ++c) {
            std::vector<int8_t> v(N, 0);
            for (int n = 0; n < N && c * N + n < cin; ++n) v[n] = w(co, c * N + n, ky, kx);
            writes.push_back({1, word_addr(co, ky, kx, c), dense_word(v)});
          }
        }
      }
    }
    // Channel 0's weights first; the others are written while channel 0 computes.
    const std::vector<CacheWrite> first(writes.begin(), writes.begin() + words);
    const std::vector<CacheWrite> rest(writes.begin() + words, writes.end());
    load(first);

    struct Where {
      int co, y, x;
    };
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<ComputeBeat> beats;
      std::vector<Result> want;
      std::vector<Where> where;
      for (int co = pass == 0 ? 0 : 1; co < (pass == 0 ? 1 : cout); ++co) {
        for (int y = 0; y < ho; ++y) {
          for (int x = 0; x < wo; ++x) {
            std::vector<ComputeBeat> pos;
            for (int ky = 0; ky < k; ++ky) {
              const int iy = y * stride - pad + ky;
              if (iy < 0 || iy >= h) continue;
              for (int kx = 0; kx < k; ++kx) {
                const int ix = x * stride - pad + kx;
                if (ix < 0 || ix >= wd) continue;
                for (int c = 0; c < chunks; ++c) {
                  ComputeBeat beat;
                  beat.op.assign(N, 0);
                  for (int n = 0; n < N && c * N + n < cin; ++n) beat.op[n] = in(c * N + n, iy, ix);
                  beat.addr = word_addr(co, ky, kx, c);
                  beat.bias = {bias(co)};
                  pos.push_back(beat);
                }
              }
            }
            pos.front().first = true;
            pos.back().last = true;
            beats.insert(beats.end(), pos.begin(), pos.end());
            want.push_back({want_acc(co, y, x)});
            where.push_back({co, y, x});
          }
        }
      }
      RunOptions opt;
      opt.gap = gap;
      opt.stall = stall;
      if (pass == 0) {
        opt.writes_during_run = rest;
        ASSERT_GE(beats.size(), rest.size()) << "layer too small to overlap the loads";
      }
      const auto got = run(beats, want.size(), opt);
      expect_results(got, want, [&](size_t i, int) {
        return fmt::format("conv cin={} {}x{} k={} s={} p={}: channel {}, row {}, column {}", cin,
                           h, wd, k, stride, pad, where[i].co, where[i].y, where[i].x);
      });
    }
    EXPECT_FALSE(m().err_o);
  }
};

// --- Random accumulations (>= 1000 per test), three traffic patterns. ------

TEST_F(StrataPe, RandomAccumulationsFullThroughput) {
  const auto cache = fill_random_cache();
  const Batch b = random_batch(cache, 1200, 12);
  RunStats st;
  const auto got = run(b.beats, b.want.size(), {}, &st);
  expect_results(got, b.want, [&](size_t i, int) { return fmt::format("accumulation {}", i); });
  // No gaps, no stalls: one beat per cycle and every result exactly kLatency
  // cycles after its last beat.
  ASSERT_EQ(st.accept_cycles.size(), b.beats.size());
  for (size_t i = 1; i < st.accept_cycles.size(); ++i) {
    ASSERT_EQ(st.accept_cycles[i], st.accept_cycles[0] + i) << "beat " << i << " not back to back";
  }
  ASSERT_EQ(st.result_cycles.size(), b.want.size());
  for (size_t k = 0; k < b.want.size(); ++k) {
    ASSERT_EQ(st.result_cycles[k], st.accept_cycles[b.last_beat[k]] + Cfg::kLatency)
        << "latency of result " << k;
  }
  EXPECT_FALSE(m().err_o);
}

TEST_F(StrataPe, RandomAccumulationsGapsAndStalls) { random_test(1200, 0.3, 0.3); }

TEST_F(StrataPe, RandomAccumulationsHeavyBackPressure) { random_test(1000, 0.1, 0.8); }

// --- The two data flows against the golden model. --------------------------

TEST_F(StrataPe, ConvLayerMatchesGolden) {
  conv_test(/*cin=*/13, /*h=*/7, /*w=*/9, /*k=*/3, /*stride=*/1, /*pad=*/1, /*cout=*/4, 0.0, 0.0);
}

TEST_F(StrataPe, ConvLayerStridedPaddedMatchesGolden) {
  conv_test(/*cin=*/5, /*h=*/9, /*w=*/8, /*k=*/5, /*stride=*/2, /*pad=*/2, /*cout=*/3, 0.25, 0.4);
}

// FC batch flow on one PE: the cache holds one image's features, the weights
// of each output stream through.
TEST_F(StrataPe, FullyConnectedMatchesGolden) {
  const int c = 6, h = 3, wd = 3, features = c * h * wd, cout = 40;
  const int chunks = (features + N - 1) / N;
  Tensor<int8_t> in({c, h, wd}), w({cout, features});
  Tensor<int32_t> bias({cout});
  for (auto& v : in.values()) v = rand_i8();
  for (auto& v : w.values()) v = rand_i8();
  for (auto& v : bias.values()) v = static_cast<int32_t>(rand_int(-1000000, 1000000));
  const Tensor<int32_t> want_acc = fc_acc(in, w, bias);

  std::vector<CacheWrite> writes;
  for (int ch = 0; ch < chunks; ++ch) {
    std::vector<int8_t> v(N, 0);
    for (int n = 0; n < N && ch * N + n < features; ++n) v[n] = in[ch * N + n];
    writes.push_back({1, static_cast<uint32_t>(100 + ch), dense_word(v)});
  }
  load(writes);
  const std::vector<ComputeBeat> beats = fc_beats(w, bias, 100, 1);
  std::vector<Result> want;
  for (int j = 0; j < cout; ++j) want.push_back({want_acc(j, 0, 0)});
  RunOptions opt;
  opt.gap = 0.2;
  opt.stall = 0.2;
  const auto got = run(beats, want.size(), opt);
  expect_results(got, want, [](size_t i, int) { return fmt::format("fc output {}", i); });
}

// --- Edge cases. ------------------------------------------------------------

// The longest accumulation of all -128 x -128 products that fits int32, with a
// bias that lands exactly on INT32_MAX: a narrower accumulator or a wrapped
// partial sum shows up here. The same towards INT32_MIN with -128 x 127.
TEST_F(StrataPe, AccumulatorReachesInt32Limits) {
  load({{1, 0, dense_word(std::vector<int8_t>(N, -128))},
        {1, 1, dense_word(std::vector<int8_t>(N, 127))}});
  struct Case {
    int8_t op;
    uint32_t addr;
    int64_t product;
    int64_t target;
  };
  const Case cases[] = {{-128, 0, 16384, INT32_MAX}, {-128, 1, -16256, INT32_MIN}};
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  for (const auto& c : cases) {
    const int64_t per_beat = c.product * N;
    const int64_t n_beats = std::abs(c.target) / std::abs(per_beat);
    const int64_t bias = c.target - n_beats * per_beat;
    ASSERT_GE(bias, INT32_MIN);
    ASSERT_LE(bias, INT32_MAX);
    for (int64_t j = 0; j < n_beats; ++j) {
      ComputeBeat beat;
      beat.op.assign(N, c.op);
      beat.addr = c.addr;
      beat.first = j == 0;
      beat.last = j == n_beats - 1;
      beat.bias = {static_cast<int32_t>(bias)};
      beats.push_back(beat);
    }
    want.push_back({static_cast<int32_t>(c.target)});
  }
  const auto got = run(beats, want.size());
  expect_results(got, want, [](size_t i, int) {
    return fmt::format("long accumulation towards {}", i == 0 ? "INT32_MAX" : "INT32_MIN");
  });
}

// One-beat accumulations (first && last) back to back with extreme operands
// and biases: one result per cycle, each exact.
TEST_F(StrataPe, SingleBeatAccumulationsBackToBack) {
  const int8_t extremes[] = {-128, -127, -1, 0, 1, 126, 127};
  std::vector<std::vector<int8_t>> cache(8);
  std::vector<CacheWrite> writes;
  for (int a = 0; a < 8; ++a) {
    for (int n = 0; n < N; ++n) cache[a].push_back(extremes[(a + n) % 7]);
    writes.push_back({1, static_cast<uint32_t>(a), dense_word(cache[a])});
  }
  load(writes);
  const int32_t biases[] = {0, INT32_MAX / 2, INT32_MIN / 2, 1, -1, 1 << 28, -(1 << 28)};
  std::vector<ComputeBeat> beats;
  std::vector<Result> want;
  for (int k = 0; k < 1000; ++k) {
    ComputeBeat beat;
    for (int n = 0; n < N; ++n) beat.op.push_back(extremes[rand_int(0, 6)]);
    beat.addr = static_cast<uint32_t>(rand_int(0, 7));
    beat.first = beat.last = true;
    beat.bias = {biases[rand_int(0, 6)]};
    int64_t acc = beat.bias[0];
    for (int n = 0; n < N; ++n) acc += int64_t{beat.op[n]} * cache[beat.addr][n];
    beats.push_back(beat);
    want.push_back({static_cast<int32_t>(acc)});
  }
  // Zero operands leave the bias untouched at both int32 extremes.
  for (int32_t bias : {INT32_MAX, INT32_MIN}) {
    ComputeBeat beat;
    beat.op.assign(N, 0);
    beat.addr = 0;
    beat.first = beat.last = true;
    beat.bias = {bias};
    beats.push_back(beat);
    want.push_back({bias});
  }
  RunStats st;
  const auto got = run(beats, want.size(), {}, &st);
  expect_results(got, want, [](size_t i, int) { return fmt::format("single-beat result {}", i); });
  ASSERT_EQ(st.result_cycles.size(), want.size());
  for (size_t k = 1; k < st.result_cycles.size(); ++k) {
    ASSERT_EQ(st.result_cycles[k], st.result_cycles[k - 1] + 1)
        << "result " << k << " not back to back";
  }
  EXPECT_EQ(st.cycles, beats.size() + Cfg::kLatency) << "one result per cycle after the latency";
}

// Result stream blocked: the PE accepts exactly as many `last` beats as it has
// result slots, then holds in_ready low; nothing is lost once it drains.
TEST_F(StrataPe, BlockedResultStreamLosesNothing) {
  const auto cache = fill_random_cache();
  const Batch b = random_batch(cache, 200, 3);
  RunOptions opt;
  opt.ready_pattern = [](uint64_t t) { return t >= 300 && (t % 7) != 0; };
  RunStats st;
  const auto got = run(b.beats, b.want.size(), opt, &st);
  expect_results(got, b.want, [](size_t i, int) { return fmt::format("accumulation {}", i); });
  EXPECT_EQ(st.max_results_in_flight, static_cast<uint64_t>(Cfg::kResultDepth))
      << "results accepted while the result stream was blocked";
}

// Framing errors raise err_o and have the documented effect; the PE goes on.
TEST_F(StrataPe, FramingErrorsAreReported) {
  load({{1, 5, dense_word(std::vector<int8_t>(N, 3))}});
  auto beat = [&](bool first, bool last, int32_t bias) {
    ComputeBeat b;
    b.op.assign(N, 2);
    b.addr = 5;
    b.first = first;
    b.last = last;
    b.bias = {bias};
    return b;
  };
  const int32_t dot = 2 * 3 * N;
  EXPECT_FALSE(m().err_o);
  // A well-formed accumulation leaves err_o low.
  auto got = run({beat(true, false, 10), beat(false, true, 0)}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][0], 10 + 2 * dot);
  EXPECT_FALSE(m().err_o);
  // A beat without `first` and no accumulation open starts one at its bias.
  got = run({beat(false, true, 7)}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][0], 7 + dot);
  EXPECT_TRUE(m().err_o) << "missing `first` not reported";

  this->reset();
  EXPECT_FALSE(m().err_o) << "reset clears err_o";
  // `first` while an accumulation is open drops the open one.
  got = run({beat(true, false, 1000), beat(true, true, 20)}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][0], 20 + dot);
  EXPECT_TRUE(m().err_o) << "`first` inside an accumulation not reported";
}

// Reset with beats in flight and results waiting: nothing stale comes out.
TEST_F(StrataPe, ResetFlushesThePipeline) {
  const auto cache = fill_random_cache();
  const Batch stale = random_batch(cache, 50, 2);
  // Stream part of it with the result stream blocked, then reset mid-way.
  size_t sent = 0;
  m().res_ready_i = 0;
  for (int t = 0; t < 40 && sent < stale.beats.size(); ++t) {
    const auto& b = stale.beats[sent];
    for (int i = 0; i < N; ++i) set_field(m().in_op_i, i * 8, 8, static_cast<uint8_t>(b.op[i]));
    m().in_addr_i = b.addr;
    m().in_first_i = b.first;
    m().in_last_i = b.last;
    m().in_bias_i = static_cast<uint32_t>(b.bias[0]);
    m().in_valid_i = 1;
    settle();
    const bool fire = m().in_ready_o;
    tick();
    if (fire) ++sent;
  }
  m().in_valid_i = 0;
  settle();
  EXPECT_TRUE(m().res_valid_o) << "results should be waiting before the reset";
  this->reset();
  EXPECT_FALSE(m().res_valid_o);
  EXPECT_TRUE(m().in_ready_o);
  const Batch fresh = random_batch(cache, 300, 4);
  RunOptions opt;
  opt.gap = 0.2;
  opt.stall = 0.2;
  const auto got = run(fresh.beats, fresh.want.size(), opt);
  expect_results(got, fresh.want, [](size_t i, int) { return fmt::format("accumulation {}", i); });
}

}  // namespace
}  // namespace strata::tb
