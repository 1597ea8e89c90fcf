// SPDX-License-Identifier: Apache-2.0
// Partial sums on the ISA simulator (docs/isa.md, COMPUTE, "Partial sums"):
// a CONV or an FC split over its input groups into passes (the first with
// acc_out from the bias, the middle ones with acc_in and acc_out, the last
// with acc_in and the normal requantisation) gives the unsplit instruction's
// result bit for bit, in place or through other words and banks, to every
// destination; acc_out's raw accumulator layout against a direct int32
// computation; the trace (races) and the cycles acc_in and acc_out add.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "strata/cycle_model.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/isa_sim.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

using namespace isa;

// A program built instruction by instruction, its operands in external
// memory: CONFIG, the instructions, END; run in program order.
struct Rig {
  static constexpr uint64_t kData = 128 * 1024;  // external data from here (instructions below)
  HwTarget t;
  int64_t n;
  std::vector<uint8_t> mem = std::vector<uint8_t>(1 << 20, 0);
  std::vector<Instruction> prog;
  uint64_t next = kData;
  bool tables = false;

  explicit Rig(HwTarget target = HwTarget::defaults()) : t(std::move(target)), n(t.lanes) {}

  // Copies `bytes` to a fresh 64-byte aligned external address.
  uint64_t put(const std::vector<uint8_t>& bytes) {
    const uint64_t at = next;
    std::copy(bytes.begin(), bytes.end(), mem.begin() + static_cast<std::ptrdiff_t>(at));
    next += (bytes.size() + 63) / 64 * 64 + 64;
    return at;
  }
  uint64_t reserve(size_t bytes) { return put(std::vector<uint8_t>(bytes, 0)); }

  void load(LoadDst kind, int64_t id, int64_t addr, const std::vector<uint8_t>& bytes,
            int64_t entry) {
    LoadInstr l;
    l.ext_addr = static_cast<int64_t>(put(bytes));
    l.rows = 1;
    l.row_words = static_cast<int64_t>(bytes.size()) / entry;
    l.dst_kind = kind;
    l.dst_id = id;
    l.dst_addr = addr;
    l.dst_row_stride = l.row_words;
    prog.push_back(encode(l));
  }
  void load_bank(int64_t bank, int64_t addr, const std::vector<int8_t>& words) {
    load(LoadDst::kBank, bank, addr, std::vector<uint8_t>(words.begin(), words.end()), n);
  }
  void load_cache(int64_t pe, int64_t addr, const std::vector<int8_t>& words) {
    load(LoadDst::kPeCache, pe, addr, std::vector<uint8_t>(words.begin(), words.end()), n);
  }
  // Parameter entries from channel `base`: bias, M, S.
  void load_params(int64_t base, const std::vector<int32_t>& bias,
                   const std::vector<uint16_t>& mult, const std::vector<uint8_t>& shift) {
    std::vector<uint8_t> e(bias.size() * 8, 0);
    for (size_t i = 0; i < bias.size(); ++i) {
      const auto b = static_cast<uint32_t>(bias[i]);
      for (int k = 0; k < 4; ++k) e[i * 8 + k] = static_cast<uint8_t>(b >> (8 * k));
      e[i * 8 + 4] = static_cast<uint8_t>(mult[i]);
      e[i * 8 + 5] = static_cast<uint8_t>(mult[i] >> 8);
      e[i * 8 + 6] = shift[i];
    }
    load(LoadDst::kParam, 0, base, e, 8);
  }
  // Activation table 0.
  void load_table(const std::vector<int8_t>& table) {
    load(LoadDst::kTable, 0, 0, std::vector<uint8_t>(table.begin(), table.end()), n);
    tables = true;
  }
  void compute(const ComputeInstr& c) { prog.push_back(encode(c)); }
  // STOREs `rows` rows of `words` words of bank `bank` (rows `stride` apart);
  // the external address they go to.
  uint64_t store(int64_t bank, int64_t addr, int64_t rows, int64_t words, int64_t stride) {
    StoreInstr s;
    s.src_id = bank;
    s.src_addr = addr;
    s.rows = rows;
    s.row_words = words;
    s.src_row_stride = stride;
    s.ext_row_stride = words * n;
    s.ext_addr = static_cast<int64_t>(reserve(static_cast<size_t>(rows * words * n)));
    prog.push_back(encode(s));
    return static_cast<uint64_t>(s.ext_addr);
  }
  // The words [addr, addr + words) of every PE cache, read out through FCs
  // into bank `bank` from word `at` and stored: byte l of word w of PE p is
  // byte (w * N + l) * N + p of the result. Needs `identity_at` (N words of
  // bank `bank`, word o = 1 in lane o) and parameter channels
  // [param_at, param_at + N) holding bias 0, M 1, S 0.
  uint64_t read_caches(int64_t addr, int64_t words, int64_t bank, int64_t identity_at, int64_t at,
                       int64_t param_at) {
    for (int64_t w = 0; w < words; ++w) {
      ComputeInstr f;
      f.mode = ComputeMode::kFc;
      f.in_id = bank;
      f.in_base = identity_at;
      f.in_groups = 1;
      f.out_h = n;
      f.out_w = 1;
      f.cache_base = addr + w;
      f.param_base = param_at;
      f.clamp_lo = -128;
      f.clamp_hi = 127;
      f.dst_kind = ComputeDst::kBank;
      f.dst_id = bank;
      f.dst_base = at + w * n;
      compute(f);
    }
    return store(bank, at, 1, words * n, words * n);
  }
  void add_readout_operands(int64_t bank, int64_t identity_at, int64_t param_at) {
    std::vector<int8_t> id(static_cast<size_t>(n * n), 0);
    for (int64_t o = 0; o < n; ++o) id[static_cast<size_t>(o * n + o)] = 1;
    load_bank(bank, identity_at, id);
    load_params(param_at, std::vector<int32_t>(static_cast<size_t>(n), 0),
                std::vector<uint16_t>(static_cast<size_t>(n), 1),
                std::vector<uint8_t>(static_cast<size_t>(n), 0));
  }

  SimResult run(bool check_dependencies = false) {
    ConfigInstr cfg;
    cfg.version = t.version;
    cfg.pes = t.pes;
    cfg.lanes = t.lanes;
    cfg.banks = t.banks;
    cfg.bank_depth = t.bank_depth;
    cfg.pe_cache_depth = t.pe_cache_depth;
    cfg.param_depth = t.param_depth;
    cfg.sparse = t.sparse;
    cfg.act_tables = tables ? 1 : 0;
    std::vector<Instruction> all = {encode(cfg)};
    all.insert(all.end(), prog.begin(), prog.end());
    all.push_back(encode(EndInstr{}));
    EXPECT_LE(all.size() * kInstrBytes, kData);
    for (size_t i = 0; i < all.size(); ++i) all[i].to_bytes(&mem[i * kInstrBytes]);
    SimOptions o;
    o.check_dependencies = check_dependencies;
    return IsaSim(t).run(mem, o);
  }
  std::vector<int8_t> ext(uint64_t at, size_t bytes) const {
    return std::vector<int8_t>(mem.begin() + static_cast<std::ptrdiff_t>(at),
                               mem.begin() + static_cast<std::ptrdiff_t>(at + bytes));
  }
};

std::vector<int8_t> random_bytes(std::mt19937_64& rng, size_t count) {
  std::vector<int8_t> v(count);
  for (int8_t& b : v) b = static_cast<int8_t>(rng());
  return v;
}
int64_t uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
// A bias anywhere in int32 (a quarter of them near the ends, so that passes wrap).
int32_t random_bias(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return static_cast<int32_t>(INT32_MAX - static_cast<int32_t>(rng() % 200000));
    case 1:
      return static_cast<int32_t>(INT32_MIN + static_cast<int32_t>(rng() % 200000));
    case 2:
      return static_cast<int32_t>(static_cast<int64_t>(rng() % 4001) - 2000);
    default:
      return static_cast<int32_t>(static_cast<uint32_t>(rng()));
  }
}
// Parameter entries 0 .. count - 1: a random bias (above), M and S.
void load_random_params(Rig& rig, std::mt19937_64& rng, int64_t count) {
  std::vector<int32_t> bias(static_cast<size_t>(count));
  std::vector<uint16_t> mult(static_cast<size_t>(count));
  std::vector<uint8_t> shift(static_cast<size_t>(count));
  for (int64_t c = 0; c < count; ++c) {
    bias[c] = random_bias(rng);
    mult[c] = static_cast<uint16_t>(rng());
    shift[c] = static_cast<uint8_t>(uniform(rng, 8, 24));
  }
  rig.load_params(0, bias, mult, shift);
}
// The split points of g groups into k chunks of at least one: 0 < ... < g.
std::vector<int64_t> split_points(std::mt19937_64& rng, int64_t g, int64_t k) {
  std::vector<int64_t> inner;
  for (int64_t i = 1; i < g; ++i) inner.push_back(i);
  std::shuffle(inner.begin(), inner.end(), rng);
  inner.resize(static_cast<size_t>(k - 1));
  std::sort(inner.begin(), inner.end());
  std::vector<int64_t> at = {0};
  at.insert(at.end(), inner.begin(), inner.end());
  at.push_back(g);
  return at;
}

// Where the passes keep their partial sums: in place (one range), through two
// ranges of one bank, or through two banks.
enum class Route { kInPlace, kSameBank, kTwoBanks };
const char* route_name(Route r) {
  return r == Route::kInPlace ? "in place" : r == Route::kSameBank ? "two ranges" : "two banks";
}
// Partial-sum range of pass j (its acc_out destination; pass j + 1's acc_in): bank, word.
std::pair<int64_t, int64_t> acc_range_of(Route r, size_t j) {
  if (r == Route::kInPlace || j % 2 == 0) return {2, 0};
  return r == Route::kSameBank ? std::pair<int64_t, int64_t>{2, 2048}
                               : std::pair<int64_t, int64_t>{3, 1024};
}

// The passes of `whole` over the groups [at[j], at[j + 1]): pass j reads its
// operands at in_base[j], cache_base[j]; `final` is the last pass's result
// fields (destination, pooling, table), `whole`'s already.
std::vector<ComputeInstr> passes(const ComputeInstr& whole, const std::vector<int64_t>& at,
                                 const std::vector<int64_t>& in_base,
                                 const std::vector<int64_t>& cache_base, Route route) {
  std::vector<ComputeInstr> out;
  const size_t k = at.size() - 1;
  const int64_t row = whole.mode == ComputeMode::kFc ? 0 : 4 * whole.out_w;
  for (size_t j = 0; j < k; ++j) {
    ComputeInstr c = whole;
    c.in_groups = at[j + 1] - at[j];
    c.in_base = in_base[j];
    c.cache_base = cache_base[j];
    if (j > 0) {
      c.acc_in = true;
      std::tie(c.acc_id, c.acc_base) = acc_range_of(route, j - 1);
    }
    if (j + 1 < k) {
      c.acc_out = true;
      c.pool_en = false;
      c.act_table_en = false;
      c.dst_kind = ComputeDst::kBank;
      std::tie(c.dst_id, c.dst_base) = acc_range_of(route, j);
      c.dst_row_stride = row;
    }
    out.push_back(c);
  }
  return out;
}

// Readout operands: bank 3, identity at word 3000, results from 3100; parameter
// channels from 500 (above every layer's).
constexpr int64_t kReadBank = 3, kIdentityAt = 3000, kReadAt = 3100, kReadParams = 500;

struct ConvCase {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, in_h, in_w, groups, chunks;
  bool pool = false, table = false, to_cache = false;
};

std::string describe(const ConvCase& cc) {
  return fmt::format("CONV {}x{} g{} k{}x{} s{},{} p{},{},{},{} in {} chunks{}{}{}", cc.in_h,
                     cc.in_w, cc.groups, cc.kh, cc.kw, cc.sh, cc.sw, cc.pt, cc.pl, cc.pb, cc.pr,
                     cc.chunks, cc.pool ? " pool" : "", cc.table ? " table" : "",
                     cc.to_cache ? " to PE_CACHE" : "");
}

// Runs `cc` unsplit and split (route) on one rig and compares the results.
void expect_conv_split(const ConvCase& cc, Route route, uint64_t seed) {
  SCOPED_TRACE(fmt::format("{}, {}, seed {}", describe(cc), route_name(route), seed));
  std::mt19937_64 rng(seed);
  Rig rig;
  const int64_t n = rig.n, p = rig.t.pes;
  const int64_t taps = cc.kh * cc.kw, g = cc.groups;
  ComputeInstr whole;
  whole.mode = ComputeMode::kConv;
  whole.in_id = 0;
  whole.in_h = cc.in_h;
  whole.in_w = cc.in_w;
  whole.in_groups = g;
  whole.kernel_h = cc.kh;
  whole.kernel_w = cc.kw;
  whole.stride_h = cc.sh;
  whole.stride_w = cc.sw;
  whole.pad_top = cc.pt;
  whole.pad_left = cc.pl;
  whole.pad_bottom = cc.pb;
  whole.pad_right = cc.pr;
  whole.out_h =
      conv_out_size(static_cast<int>(cc.in_h), static_cast<int>(cc.kh), static_cast<int>(cc.sh),
                    static_cast<int>(cc.pt), static_cast<int>(cc.pb));
  whole.out_w =
      conv_out_size(static_cast<int>(cc.in_w), static_cast<int>(cc.kw), static_cast<int>(cc.sw),
                    static_cast<int>(cc.pl), static_cast<int>(cc.pr));
  whole.clamp_lo = uniform(rng, -128, 0);
  whole.clamp_hi = uniform(rng, whole.clamp_lo, 127);
  int64_t rows = whole.out_h, cols = whole.out_w;
  if (cc.pool) {
    whole.pool_en = true;
    whole.pool_op = rng() % 2 ? PoolOp::kAvg : PoolOp::kMax;
    whole.pool_k = whole.pool_s = 2;
    whole.pool_out_h = rows = (whole.out_h - 2) / 2 + 1;
    whole.pool_out_w = cols = (whole.out_w - 2) / 2 + 1;
    whole.post_lo = -128;
    whole.post_hi = 127;
  }
  if (cc.table) {
    rig.load_table(random_bytes(rng, 256));
    whole.act_table_en = true;
    whole.act_table = 0;
  }

  // Operands: the map in bank 0; per PE the whole weights at cache word 0 and
  // each chunk's (its groups only, tap-major as a CONV reads them) after them.
  const std::vector<int8_t> map = random_bytes(rng, static_cast<size_t>(g * cc.in_h * cc.in_w * n));
  rig.load_bank(0, 0, map);
  const std::vector<int64_t> at = split_points(rng, g, cc.chunks);
  std::vector<int64_t> in_base, cache_base;
  int64_t cache_next = taps * g;
  for (size_t j = 0; j + 1 < at.size(); ++j) {
    in_base.push_back(at[j] * cc.in_h * cc.in_w);
    cache_base.push_back(cache_next);
    cache_next += taps * (at[j + 1] - at[j]);
  }
  for (int64_t pe = 0; pe < p; ++pe) {
    const std::vector<int8_t> w = random_bytes(rng, static_cast<size_t>(taps * g * n));
    std::vector<int8_t> all = w;
    for (size_t j = 0; j + 1 < at.size(); ++j) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        for (int64_t gg = at[j]; gg < at[j + 1]; ++gg) {
          const auto from = w.begin() + (tap * g + gg) * n;
          all.insert(all.end(), from, from + n);
        }
      }
    }
    rig.load_cache(pe, 0, all);
  }
  load_random_params(rig, rng, p);

  // Unsplit: bank 1 word 2048 (or PE 1's cache word 768); split: bank 1 word 0
  // (or PE (P - 1)'s cache word 512).
  ComputeInstr one = whole;
  one.dst_kind = cc.to_cache ? ComputeDst::kPeCache : ComputeDst::kBank;
  one.dst_id = 1;
  one.dst_base = cc.to_cache ? 768 : 2048;
  one.dst_row_stride = cols + 1;
  rig.compute(one);
  ComputeInstr last = one;
  last.dst_id = cc.to_cache ? p - 1 : 1;
  last.dst_base = cc.to_cache ? 512 : 0;
  const std::vector<ComputeInstr> split = passes(last, at, in_base, cache_base, route);
  for (const ComputeInstr& c : split) rig.compute(c);

  // The result rows (not the gap word between them): stored, or read out of
  // the PE caches row by row.
  std::vector<std::pair<uint64_t, uint64_t>> row_at;  // (unsplit, split) external address
  if (cc.to_cache) rig.add_readout_operands(kReadBank, kIdentityAt, kReadParams);
  for (int64_t y = 0; y < rows; ++y) {
    const int64_t a = one.dst_base + y * one.dst_row_stride,
                  b = last.dst_base + y * one.dst_row_stride;
    if (cc.to_cache) {
      const uint64_t want_at =
          rig.read_caches(a, cols, kReadBank, kIdentityAt, kReadAt, kReadParams);
      row_at.push_back(
          {want_at, rig.read_caches(b, cols, kReadBank, kIdentityAt, kReadAt, kReadParams)});
    } else {
      row_at.push_back({rig.store(1, a, 1, cols, cols), rig.store(1, b, 1, cols, cols)});
    }
  }
  const SimResult r = rig.run();
  ASSERT_TRUE(r.ok()) << describe_problems(r);
  // Only the readouts read words nothing wrote: those of the other P - 1 PEs.
  EXPECT_EQ(r.uninitialized_reads, cc.to_cache ? 2 * rows * cols * (p - 1) : 0);
  const size_t bytes = static_cast<size_t>(cols * n * (cc.to_cache ? n : 1));
  int64_t checked = 0;
  for (int64_t y = 0; y < rows; ++y) {
    const std::vector<int8_t> want = rig.ext(row_at[y].first, bytes);
    const std::vector<int8_t> got = rig.ext(row_at[y].second, bytes);
    for (int64_t x = 0; x < cols; ++x) {
      for (int64_t ch = 0; ch < n; ++ch) {
        // PE_CACHE: the readout's byte for lane ch of word x of the destination PE.
        const size_t i_want =
            static_cast<size_t>(cc.to_cache ? (x * n + ch) * n + one.dst_id : x * n + ch);
        const size_t i_got =
            static_cast<size_t>(cc.to_cache ? (x * n + ch) * n + last.dst_id : x * n + ch);
        ASSERT_EQ(got[i_got], want[i_want]) << "channel " << ch << " at (" << y << ", " << x << ")";
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, rows * cols * n);
}

ConvCase random_conv_case(std::mt19937_64& rng) {
  ConvCase cc;
  cc.kh = uniform(rng, 1, 4);
  cc.kw = uniform(rng, 1, 4);
  cc.sh = uniform(rng, 1, 2);
  cc.sw = uniform(rng, 1, 2);
  cc.pt = uniform(rng, 0, cc.kh - 1);
  cc.pb = uniform(rng, 0, cc.kh - 1);
  cc.pl = uniform(rng, 0, cc.kw - 1);
  cc.pr = uniform(rng, 0, cc.kw - 1);
  cc.in_h = uniform(rng, std::max<int64_t>(1, cc.kh - cc.pt - cc.pb), 9);
  cc.in_w = uniform(rng, std::max<int64_t>(1, cc.kw - cc.pl - cc.pr), 9);
  cc.groups = uniform(rng, 2, 6);
  cc.chunks = uniform(rng, 2, std::min<int64_t>(4, cc.groups));
  const int64_t oh = (cc.in_h + cc.pt + cc.pb - cc.kh) / cc.sh + 1;
  const int64_t ow = (cc.in_w + cc.pl + cc.pr - cc.kw) / cc.sw + 1;
  cc.pool = oh >= 2 && ow >= 2 && rng() % 3 == 0;
  cc.table = rng() % 4 == 0;
  cc.to_cache = rng() % 4 == 0;
  return cc;
}

TEST(PartialSums, SplitConvolutionEqualsTheUnsplitOne) {
  std::mt19937_64 rng(20261207);
  for (int i = 0; i < 40; ++i) {
    const ConvCase cc = random_conv_case(rng);
    const uint64_t seed = rng();
    for (Route route : {Route::kInPlace, Route::kSameBank, Route::kTwoBanks}) {
      expect_conv_split(cc, route, seed);
      if (HasFatalFailure()) return;
    }
  }
}

// Fixed cases: every destination and final-pass option, the largest split.
TEST(PartialSums, SplitConvolutionEveryDestination) {
  const ConvCase base{3, 3, 1, 1, 1, 1, 1, 1, 6, 7, 4, 4};
  for (int v = 0; v < 4; ++v) {
    ConvCase cc = base;
    cc.pool = v == 1;
    cc.table = v == 2;
    cc.to_cache = v == 3;
    expect_conv_split(cc, Route::kInPlace, 100 + v);
    expect_conv_split(cc, Route::kTwoBanks, 200 + v);
  }
  // Stride 2 with padding on one side only, 1x1 and 5x2 kernels, two groups.
  expect_conv_split({3, 3, 2, 2, 0, 2, 1, 0, 7, 8, 3, 2}, Route::kInPlace, 7);
  expect_conv_split({1, 1, 1, 1, 0, 0, 0, 0, 4, 5, 2, 2}, Route::kInPlace, 8);
  expect_conv_split({5, 2, 1, 2, 2, 0, 4, 1, 3, 6, 5, 3}, Route::kSameBank, 9);
}

struct FcCase {
  int64_t groups, neurons, chunks;
  bool table = false, transpose = false;
};

void expect_fc_split(const FcCase& fc, Route route, uint64_t seed) {
  SCOPED_TRACE(fmt::format("FC g{} x {} neurons in {} chunks{}{}, {}, seed {}", fc.groups,
                           fc.neurons, fc.chunks, fc.table ? " table" : "",
                           fc.transpose ? " to PE_TRANSPOSE" : "", route_name(route), seed));
  std::mt19937_64 rng(seed);
  Rig rig;
  const int64_t n = rig.n, p = rig.t.pes, g = fc.groups, o = fc.neurons;
  ComputeInstr whole;
  whole.mode = ComputeMode::kFc;
  whole.in_id = 0;
  whole.in_groups = g;
  whole.out_h = o;
  whole.out_w = 1;
  whole.clamp_lo = uniform(rng, -128, 0);
  whole.clamp_hi = uniform(rng, whole.clamp_lo, 127);
  if (fc.table) {
    rig.load_table(random_bytes(rng, 256));
    whole.act_table_en = true;
  }
  // Weights: the whole [o][g] at bank 0 word 0, each chunk's [o][its groups] after;
  // features: PE p's image at cache word 0 (chunk j reads it from its first group).
  const std::vector<int8_t> w = random_bytes(rng, static_cast<size_t>(o * g * n));
  std::vector<int8_t> all = w;
  const std::vector<int64_t> at = split_points(rng, g, fc.chunks);
  std::vector<int64_t> in_base, cache_base;
  for (size_t j = 0; j + 1 < at.size(); ++j) {
    in_base.push_back(static_cast<int64_t>(all.size()) / n);
    cache_base.push_back(at[j]);
    for (int64_t k = 0; k < o; ++k) {
      const auto from = w.begin() + (k * g + at[j]) * n;
      all.insert(all.end(), from, from + (at[j + 1] - at[j]) * n);
    }
  }
  rig.load_bank(0, 0, all);
  for (int64_t pe = 0; pe < p; ++pe)
    rig.load_cache(pe, 0, random_bytes(rng, static_cast<size_t>(g * n)));
  load_random_params(rig, rng, o);

  ComputeInstr one = whole;
  one.dst_kind = fc.transpose ? ComputeDst::kPeTranspose : ComputeDst::kBank;
  one.dst_id = fc.transpose ? 0 : 1;
  one.dst_base = fc.transpose ? 768 : 2048;
  rig.compute(one);
  ComputeInstr last = one;
  last.dst_base = fc.transpose ? 512 : 0;
  const std::vector<ComputeInstr> split = passes(last, at, in_base, cache_base, route);
  for (const ComputeInstr& c : split) rig.compute(c);

  const int64_t words = fc.transpose ? (o + n - 1) / n : o;
  uint64_t want_at = 0, got_at = 0;
  if (fc.transpose) {
    rig.add_readout_operands(kReadBank, kIdentityAt, kReadParams);
    want_at = rig.read_caches(one.dst_base, words, kReadBank, kIdentityAt, kReadAt, kReadParams);
    got_at = rig.read_caches(last.dst_base, words, kReadBank, kIdentityAt, kReadAt, kReadParams);
  } else {
    want_at = rig.store(1, one.dst_base, 1, words, words);
    got_at = rig.store(1, last.dst_base, 1, words, words);
  }
  const SimResult r = rig.run();
  ASSERT_TRUE(r.ok()) << describe_problems(r);
  EXPECT_EQ(r.uninitialized_reads, 0);
  const size_t bytes = static_cast<size_t>(words * n * (fc.transpose ? n : 1));
  const std::vector<int8_t> want = rig.ext(want_at, bytes), got = rig.ext(got_at, bytes);
  // Neuron k of image pe: BANK byte pe of word k; PE_TRANSPOSE byte k % N of
  // PE pe's word k / N (in the readout: byte ((k / N) * N + k % N) * N + pe).
  for (int64_t k = 0; k < o; ++k) {
    for (int64_t pe = 0; pe < p; ++pe) {
      const size_t i = static_cast<size_t>(fc.transpose ? k * n + pe : k * n + pe);
      ASSERT_EQ(got[i], want[i]) << "neuron " << k << " image " << pe;
    }
  }
}

TEST(PartialSums, SplitFullyConnectedEqualsTheUnsplitOne) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; ++i) {
    FcCase fc;
    fc.groups = uniform(rng, 2, 9);
    fc.neurons = uniform(rng, 1, 40);
    fc.chunks = uniform(rng, 2, std::min<int64_t>(4, fc.groups));
    fc.table = rng() % 4 == 0;
    fc.transpose = rng() % 3 == 0;
    const uint64_t seed = rng();
    for (Route route : {Route::kInPlace, Route::kSameBank, Route::kTwoBanks}) {
      expect_fc_split(fc, route, seed);
      if (HasFatalFailure()) return;
    }
  }
  expect_fc_split({8, 20, 4, false, true}, Route::kInPlace, 1);
  expect_fc_split({3, 9, 3, true, false}, Route::kInPlace, 2);
}

// ---- the raw accumulator layout ------------------------------------------------------------

int32_t wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// The int32 of PE p at word `at` .. at + 3 of `bytes` (N-byte words from word 0).
int32_t acc_at(const std::vector<int8_t>& bytes, int64_t n, int64_t at, int64_t p) {
  uint32_t v = 0;
  for (int64_t k = 0; k < 4; ++k) {
    v |= uint32_t{static_cast<uint8_t>(bytes[static_cast<size_t>((at + k) * n + p)])} << (8 * k);
  }
  return static_cast<int32_t>(v);
}
// Partial sums in the acc_out layout: 4 words per pixel, byte p of word k = byte k of v[i][p].
std::vector<int8_t> acc_words(const std::vector<std::vector<int32_t>>& v, int64_t n) {
  std::vector<int8_t> out;
  for (const auto& px : v) {
    for (int64_t k = 0; k < 4; ++k) {
      for (int64_t p = 0; p < n; ++p) {
        const uint32_t u = p < static_cast<int64_t>(px.size()) ? static_cast<uint32_t>(px[p]) : 0;
        out.push_back(static_cast<int8_t>(static_cast<uint8_t>(u >> (8 * k))));
      }
    }
  }
  return out;
}
// Start values that need every byte, negative ones, and the ends of int32.
int32_t start_value(std::mt19937_64& rng, int64_t i) {
  switch (i % 5) {
    case 0:
      return INT32_MAX - static_cast<int32_t>(rng() % 1000);
    case 1:
      return INT32_MIN + static_cast<int32_t>(rng() % 1000);
    case 2:
      return -static_cast<int32_t>(rng() % 100000) - 1;
    case 3:
      return static_cast<int32_t>(0x01020304 + (rng() % 0x10000));
    default:
      return static_cast<int32_t>(static_cast<uint32_t>(rng()));
  }
}

// A 3x3 pad-1 stride-1 CONV of 2 groups over a 5x4 map, to acc_out rows 4 x 4
// + 3 words apart from word 5 of bank 1: from the bias, then from partial
// sums held in bank 2; each word checked against the direct int32 sums.
TEST(PartialSums, ConvAccOutLayoutIsTheRawInt32Accumulators) {
  std::mt19937_64 rng(11);
  Rig rig;
  const int64_t n = rig.n, p = rig.t.pes;
  const int64_t h = 5, w = 4, g = 2, k = 3;
  std::vector<int8_t> map = random_bytes(rng, static_cast<size_t>(g * h * w * n));
  std::vector<std::vector<int8_t>> weights;
  for (int64_t pe = 0; pe < p; ++pe)
    weights.push_back(random_bytes(rng, static_cast<size_t>(k * k * g * n)));
  // PE 0 sums positive products only: from INT32_MAX - 999 it wraps.
  for (int8_t& b : map) b = static_cast<int8_t>(std::abs(int{b}) % 128);
  for (int8_t& b : weights[0]) b = static_cast<int8_t>(1 + std::abs(int{b}) % 127);
  rig.load_bank(0, 0, map);
  for (int64_t pe = 0; pe < p; ++pe) rig.load_cache(pe, 0, weights[static_cast<size_t>(pe)]);
  std::vector<int32_t> bias(static_cast<size_t>(p));
  for (int64_t pe = 0; pe < p; ++pe) bias[pe] = start_value(rng, pe);
  rig.load_params(0, bias, std::vector<uint16_t>(static_cast<size_t>(p), 1),
                  std::vector<uint8_t>(static_cast<size_t>(p), 0));
  std::vector<std::vector<int32_t>> start(static_cast<size_t>(h * w),
                                          std::vector<int32_t>(static_cast<size_t>(p)));
  for (int64_t i = 0; i < h * w; ++i) {
    for (int64_t pe = 0; pe < p; ++pe) start[i][pe] = start_value(rng, i + pe);
  }
  rig.load_bank(2, 100, acc_words(start, n));

  ComputeInstr c;
  c.mode = ComputeMode::kConv;
  c.in_h = h;
  c.in_w = w;
  c.in_groups = g;
  c.kernel_h = c.kernel_w = k;
  c.stride_h = c.stride_w = 1;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
  c.out_h = h;
  c.out_w = w;
  c.acc_out = true;
  c.dst_id = 1;
  c.dst_base = 5;
  c.dst_row_stride = 4 * w + 3;
  rig.compute(c);
  ComputeInstr c2 = c;  // from the partial sums at bank 2 word 100
  c2.acc_in = true;
  c2.acc_id = 2;
  c2.acc_base = 100;
  c2.dst_base = 200;
  rig.compute(c2);
  const int64_t words = (h - 1) * c.dst_row_stride + 4 * w;
  const uint64_t at1 = rig.store(1, 0, 1, 200 + words, 200 + words);
  const SimResult r = rig.run();
  ASSERT_TRUE(r.ok()) << describe_problems(r);
  EXPECT_EQ(r.stats[r.stats.size() - 3].words, 4 * h * w);
  const std::vector<int8_t> got = rig.ext(at1, static_cast<size_t>((200 + words) * n));
  int64_t wraps = 0;
  for (int64_t oy = 0; oy < h; ++oy) {
    for (int64_t ox = 0; ox < w; ++ox) {
      for (int64_t pe = 0; pe < p; ++pe) {
        int64_t sum = 0;
        for (int64_t ky = 0; ky < k; ++ky) {
          for (int64_t kx = 0; kx < k; ++kx) {
            const int64_t y = oy + ky - 1, x = ox + kx - 1;
            if (y < 0 || y >= h || x < 0 || x >= w) continue;
            for (int64_t gg = 0; gg < g; ++gg) {
              for (int64_t l = 0; l < n; ++l) {
                sum += int64_t{weights[pe][((ky * k + kx) * g + gg) * n + l]} *
                       map[((gg * h + y) * w + x) * n + l];
              }
            }
          }
        }
        const int64_t i = oy * w + ox;
        const int64_t from_bias = bias[pe] + sum, from_start = start[i][pe] + sum;
        wraps += (from_bias != wrap(from_bias)) + (from_start != wrap(from_start));
        const int64_t a = c.dst_base + oy * c.dst_row_stride + 4 * ox;
        ASSERT_EQ(acc_at(got, n, a, pe), wrap(from_bias))
            << "bias start, pixel " << i << " PE " << pe;
        ASSERT_EQ(acc_at(got, n, 200 + a - c.dst_base, pe), wrap(from_start))
            << "acc_in start, pixel " << i << " PE " << pe;
      }
    }
  }
  EXPECT_GT(wraps, 0);
  EXPECT_EQ(r.acc_wraps, wraps);
  // The gap words between the rows are not written.
  for (int64_t oy = 0; oy + 1 < h; ++oy) {
    for (int64_t x = 4 * w; x < c.dst_row_stride; ++x) {
      for (int64_t l = 0; l < n; ++l) {
        EXPECT_EQ(got[static_cast<size_t>((c.dst_base + oy * c.dst_row_stride + x) * n + l)], 0);
      }
    }
  }
}

// An FC of 3 groups x 5 neurons to acc_out at bank 1 word 3 (neuron o at 3 + 4 o),
// from the bias and from partial sums in bank 2.
TEST(PartialSums, FcAccOutLayoutIsTheRawInt32Accumulators) {
  std::mt19937_64 rng(12);
  Rig rig;
  const int64_t n = rig.n, p = rig.t.pes, g = 3, o = 5;
  const std::vector<int8_t> w = random_bytes(rng, static_cast<size_t>(o * g * n));
  std::vector<std::vector<int8_t>> x;
  for (int64_t pe = 0; pe < p; ++pe) x.push_back(random_bytes(rng, static_cast<size_t>(g * n)));
  rig.load_bank(0, 0, w);
  for (int64_t pe = 0; pe < p; ++pe) rig.load_cache(pe, 0, x[static_cast<size_t>(pe)]);
  std::vector<int32_t> bias(static_cast<size_t>(o));
  for (int64_t k = 0; k < o; ++k) bias[k] = start_value(rng, k);
  rig.load_params(0, bias, std::vector<uint16_t>(static_cast<size_t>(o), 1),
                  std::vector<uint8_t>(static_cast<size_t>(o), 0));
  std::vector<std::vector<int32_t>> start(static_cast<size_t>(o),
                                          std::vector<int32_t>(static_cast<size_t>(p)));
  for (int64_t k = 0; k < o; ++k) {
    for (int64_t pe = 0; pe < p; ++pe) start[k][pe] = start_value(rng, k * 3 + pe);
  }
  rig.load_bank(2, 40, acc_words(start, n));
  ComputeInstr f;
  f.mode = ComputeMode::kFc;
  f.in_groups = g;
  f.out_h = o;
  f.out_w = 1;
  f.acc_out = true;
  f.dst_id = 1;
  f.dst_base = 3;
  rig.compute(f);
  ComputeInstr f2 = f;
  f2.acc_in = true;
  f2.acc_id = 2;
  f2.acc_base = 40;
  f2.dst_base = 30;
  rig.compute(f2);
  const uint64_t at = rig.store(1, 0, 1, 30 + 4 * o, 30 + 4 * o);
  const SimResult r = rig.run();
  ASSERT_TRUE(r.ok()) << describe_problems(r);
  const std::vector<int8_t> got = rig.ext(at, static_cast<size_t>((30 + 4 * o) * n));
  for (int64_t k = 0; k < o; ++k) {
    for (int64_t pe = 0; pe < p; ++pe) {
      int64_t sum = 0;
      for (int64_t t = 0; t < g; ++t) {
        for (int64_t l = 0; l < n; ++l) {
          sum += int64_t{w[static_cast<size_t>((k * g + t) * n + l)]} * x[pe][t * n + l];
        }
      }
      ASSERT_EQ(acc_at(got, n, 3 + 4 * k, pe), wrap(bias[k] + sum))
          << "neuron " << k << " PE " << pe;
      ASSERT_EQ(acc_at(got, n, 30 + 4 * k, pe), wrap(start[k][pe] + sum))
          << "neuron " << k << " PE " << pe;
    }
  }
}

// ---- trace and cycles ----------------------------------------------------------------------

// The partial sums a LOAD writes and a COMPUTE reads with acc_in, and the raw
// accumulators it writes and a STORE reads, are accesses the dependency
// model sees: unordered, races on those words; ordered by L2C and C2S, clean.
TEST(PartialSums, PartialSumAccessesAreRaceChecked) {
  for (bool ordered : {false, true}) {
    SCOPED_TRACE(ordered ? "ordered" : "no semaphores");
    Rig rig;
    const int64_t n = rig.n;
    LoadInstr l;
    l.rows = 1;
    l.row_words = 4 * 2;
    l.dst_id = 2;
    l.dst_addr = 64;
    l.dst_row_stride = l.row_words;
    l.ext_addr = static_cast<int64_t>(rig.put(std::vector<uint8_t>(static_cast<size_t>(8 * n), 1)));
    l.hdr.rel0 = ordered ? 1 : 0;
    rig.prog.push_back(encode(l));
    ComputeInstr f;  // 2 neurons from partial sums only (features, weights: whatever is there)
    f.mode = ComputeMode::kFc;
    f.in_groups = 1;
    f.out_h = 2;
    f.out_w = 1;
    f.acc_in = f.acc_out = true;
    f.acc_id = 2;
    f.acc_base = 64;
    f.dst_id = 2;
    f.dst_base = 64;  // in place
    f.hdr.acq0 = f.hdr.acq0_first = ordered ? 1 : 0;
    f.hdr.rel0 = ordered ? 2 : 0;  // one unit a neuron (fine-grained steps)
    rig.prog.push_back(encode(f));
    StoreInstr s;
    s.src_id = 2;
    s.src_addr = 64;
    s.rows = 1;
    s.row_words = 8;
    s.ext_addr = static_cast<int64_t>(rig.reserve(static_cast<size_t>(8 * n)));
    s.hdr.acq0 = s.hdr.acq0_first = ordered ? 2 : 0;
    rig.prog.push_back(encode(s));
    const SimResult r = rig.run(true);
    ASSERT_TRUE(r.ok()) << describe_problems(r);
    if (ordered) {
      EXPECT_TRUE(r.completion.clean()) << describe_problems(r);
      EXPECT_TRUE(r.fine.clean()) << describe_problems(r);
    } else {
      bool load_compute = false, compute_store = false;
      for (const Race& race : r.completion.races) {
        if (race.memory != "bank 2") continue;
        load_compute |= race.kind == "RAW" && race.first == 1 && race.second == 2;
        compute_store |= race.kind == "RAW" && race.first == 2 && race.second == 3;
      }
      EXPECT_TRUE(load_compute) << describe_problems(r);
      EXPECT_TRUE(compute_store) << describe_problems(r);
    }
  }
}

// acc_in reads 4 words per pixel before its first tap (4 cycles); with acc_out
// a pixel of fewer than 4 cycles waits for its 4 result words. `beats` (the
// PE array's MAC beats) does not change.
TEST(PartialSums, AccInAndAccOutCycles) {
  const auto stats = [](ComputeInstr c) {
    Rig rig;
    rig.compute(c);
    const SimResult r = rig.run();
    EXPECT_TRUE(r.ok()) << r.message;
    return r.ok() ? r.stats[1] : InstrStats{};
  };
  ComputeInstr conv;  // 1x1 kernel, one group, 3x4 pixels: one beat a pixel
  conv.mode = ComputeMode::kConv;
  conv.in_h = conv.out_h = 3;
  conv.in_w = conv.out_w = 4;
  conv.in_groups = 1;
  conv.kernel_h = conv.kernel_w = conv.stride_h = conv.stride_w = 1;
  conv.dst_id = 1;
  conv.dst_row_stride = 16;
  const int64_t px = 12;
  EXPECT_EQ(stats(conv).acc_cycles, 0);
  EXPECT_EQ(stats(conv).beats, px);
  ComputeInstr c = conv;
  c.acc_out = true;
  EXPECT_EQ(stats(c).acc_cycles, 3 * px);  // 4 cycles a pixel for its 4 words
  EXPECT_EQ(stats(c).beats, px);
  c.acc_in = true;
  c.acc_id = 2;
  EXPECT_EQ(stats(c).acc_cycles, 4 * px);  // 4 reads + 1 beat >= 4 result words
  c.acc_out = false;
  EXPECT_EQ(stats(c).acc_cycles, 4 * px);
  EXPECT_EQ(stats(c).beats, px);
  // 3x3 pad 1 over 3x4, 2 groups: corner pixels 8 beats, edges 12, inside 18:
  // acc_out adds nothing, acc_in 4 a pixel.
  ComputeInstr big = conv;
  big.in_groups = 2;
  big.kernel_h = big.kernel_w = 3;
  big.pad_top = big.pad_left = big.pad_bottom = big.pad_right = 1;
  big.acc_out = true;
  EXPECT_EQ(stats(big).acc_cycles, 0);
  big.acc_in = true;
  big.acc_id = 2;
  EXPECT_EQ(stats(big).acc_cycles, 4 * px);
  // FC: per neuron; 2 groups (acc_out: 2 more cycles a neuron), 6 groups (none).
  ComputeInstr fc;
  fc.mode = ComputeMode::kFc;
  fc.in_groups = 2;
  fc.out_h = 5;
  fc.out_w = 1;
  fc.dst_id = 1;
  fc.acc_out = true;
  EXPECT_EQ(stats(fc).acc_cycles, 2 * 5);
  EXPECT_EQ(stats(fc).beats, 2 * 5);
  fc.in_groups = 6;
  EXPECT_EQ(stats(fc).acc_cycles, 0);
  fc.acc_in = true;
  fc.acc_id = 2;
  EXPECT_EQ(stats(fc).acc_cycles, 4 * 5);
}

// The cycle model times a COMPUTE with partial sums by beats + acc_cycles.
TEST(PartialSums, CycleModelCountsAccCycles) {
  const auto cycles = [](const ComputeInstr& c, bool fine) {
    Rig rig;
    rig.compute(c);
    EXPECT_TRUE(rig.run().ok());
    Program prog;
    prog.target = rig.t;
    prog.image = rig.mem;
    for (size_t i = 0; i < rig.prog.size() + 2; ++i) {
      prog.instructions.push_back(Instruction::from_bytes(&rig.mem[i * kInstrBytes]));
    }
    CycleModelOptions o;
    o.fine_grained = fine;
    const CyclePrediction p = predict_cycles(prog, o);
    return p.end[1] - p.start[1];
  };
  ComputeInstr conv;  // 1x1 kernel, one group, 3x4 pixels: one beat a pixel
  conv.mode = ComputeMode::kConv;
  conv.in_h = conv.out_h = 3;
  conv.in_w = conv.out_w = 4;
  conv.in_groups = 1;
  conv.kernel_h = conv.kernel_w = conv.stride_h = conv.stride_w = 1;
  conv.dst_id = 1;
  conv.dst_row_stride = 16;
  for (bool fine : {false, true}) {
    const int64_t plain = cycles(conv, fine);
    ComputeInstr c = conv;
    c.acc_out = true;
    EXPECT_EQ(cycles(c, fine) - plain, 3 * 12);
    c.acc_in = true;
    c.acc_id = 2;
    EXPECT_EQ(cycles(c, fine) - plain, 4 * 12);
  }
}

}  // namespace
}  // namespace strata
