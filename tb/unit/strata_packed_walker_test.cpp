// SPDX-License-Identifier: Apache-2.0
// strata_packed_walker bench: the beat stream of a packed CONV walk (both
// bank addresses, inside flags, cache word, first / last, parameter channel)
// and its dependency steps compared element by element with a reference
// written from the semantics of strata::IsaSim's execute_packed_conv
// (docs/isa.md, "Packed CONV"), not from the walker's tap table. Kernels 1x1,
// 3x3, 5x5 and MaxKernel with pads and strides 1..3, G = 1..4, dense and
// sparse schedules (empty taps and kernel rows, R = 1, all-skipped pixels),
// random beat and step back-pressure, the schedule errors (err_o, no beat), and
// the cycle count with no back-pressure against the documented bubbles.
#include <Vstrata_packed_walker.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "port_fields.hpp"
#include "sim_fixture.hpp"
#include "strata/hw_config.hpp"

#ifndef STRATA_BENCH_CACHE_DEPTH
#error "STRATA_BENCH_CACHE_DEPTH (the walker's CacheDepth) must be defined"
#endif

namespace strata::tb {
namespace {

constexpr int kCacheDepth = STRATA_BENCH_CACHE_DEPTH;
constexpr int kMaxKernel = hw::kMaxKernel;
constexpr int kBankDepth = hw::kBankDepth;
constexpr int kParamDepth = hw::kParamDepth;
constexpr int kBankBits = 12;  // $clog2(BankDepth)
constexpr int kParamBits = 9;  // $clog2(ParamDepth)
static_assert(kBankDepth == 1 << kBankBits && kParamDepth == 1 << kParamBits,
              "the bench's port widths follow the default configuration");

// A packed CONV's geometry (the instruction's view).
struct Conv {
  int in_h = 1, in_w = 1, kh = 1, kw = 1, sh = 1, sw = 1;
  int pt = 0, pl = 0, pb = 0, pr = 0;  // pads: top, left, bottom, right
  int groups = 1;
  int base = 0, cache_base = 0, param_base = 0;
  int out_h() const { return (in_h + pt + pb - kh) / sh + 1; }
  int out_w() const { return (in_w + pl + pr - kw) / sw + 1; }
};

struct Entry {
  int ky = 0, kx = 0, g = 0;
};

struct Beat {
  int a_cur = 0, a_nxt = 0;
  bool in_cur = false, in_nxt = false;
  int cache = 0;
  bool first = false, last = false;
  int param = 0;
  bool operator==(const Beat&) const = default;
};

std::string show(const Beat& b) {
  return fmt::format("addr ({}, {}) in ({:d}, {:d}) cache {} first {:d} last {:d} param {}",
                     b.a_cur, b.a_nxt, b.in_cur, b.in_nxt, b.cache, b.first, b.last, b.param);
}

// The expected walk: beats, the beat index at which each output row's step is
// due, and the issue slots (docs in the RTL header: one per visited row, one
// per empty kernel-row range, the all-skipped pixel's beat taking its last).
struct Walk {
  std::vector<Beat> beats;
  std::vector<int> row_first_beat;
  std::vector<char> slot_is_beat;  // issue slots in order (1 beat, 0 bubble)
};

// Reference from the semantics (IsaSim's execute_packed_conv).
Walk reference(const Conv& c, const std::vector<Entry>& sched) {
  Walk w;
  const int G = c.groups;
  const int gs = c.in_h * c.in_w;
  const int rows = static_cast<int>(sched.size());
  for (int oy = 0; oy < c.out_h(); ++oy) {
    const int y0 = oy * c.sh - c.pt;
    w.row_first_beat.push_back(static_cast<int>(w.beats.size()));
    for (int ox = 0; ox < c.out_w(); ++ox) {
      const int x0 = ox * c.sw - c.pl;
      const auto inside = [&](int ky, int kx) {
        const int y = y0 + ky, x = x0 + kx;
        return y >= 0 && y < c.in_h && x >= 0 && x < c.in_w;
      };
      const auto addr = [&](int ky, int kx, int g) {
        return inside(ky, kx) ? c.base + g * gs + (y0 + ky) * c.in_w + x0 + kx : c.base;
      };
      const size_t start = w.beats.size();
      for (int k = 0; k < rows; ++k) {
        const Entry& e = sched[k];
        Beat b;
        b.in_cur = inside(e.ky, e.kx);
        b.a_cur = addr(e.ky, e.kx, e.g);
        b.a_nxt = c.base;
        if (e.g + 1 < G) {
          b.in_nxt = inside(e.ky, e.kx);
          b.a_nxt = addr(e.ky, e.kx, e.g + 1);
        } else if (e.kx + 1 < c.kw) {
          b.in_nxt = inside(e.ky, e.kx + 1);
          b.a_nxt = addr(e.ky, e.kx + 1, 0);
        } else if (e.ky + 1 < c.kh) {
          b.in_nxt = inside(e.ky + 1, 0);
          b.a_nxt = addr(e.ky + 1, 0, 0);
        }
        if (!b.in_cur && !b.in_nxt) continue;
        b.cache = c.cache_base + k;
        b.param = c.param_base + oy;
        w.beats.push_back(b);
      }
      if (w.beats.size() == start) {
        Beat b;
        b.a_cur = b.a_nxt = c.base;
        b.cache = c.cache_base;
        b.param = c.param_base + oy;
        w.beats.push_back(b);
      }
      w.beats[start].first = true;
      w.beats.back().last = true;

      // Issue slots: the kernel rows the pixel has inside the image, each the
      // rows whose dense row t lies in [(ky*kw + kx_lo)*G - 1, (ky*kw + kx_last + 1)*G)
      // (the row before the range reads the range's first word as its next),
      // a row counted once; an empty range is one bubble.
      const int ky_lo = std::max(0, -y0), ky_last = std::min(c.kh, c.in_h - y0) - 1;
      const int kx_lo = std::max(0, -x0), kx_last = std::min(c.kw, c.in_w - x0) - 1;
      std::set<int> seen;
      std::vector<char> slots;
      for (int ky = ky_lo; ky <= ky_last; ++ky) {
        const int lo = (ky * c.kw + kx_lo) * G - 1, hi = (ky * c.kw + kx_last + 1) * G;
        int n = 0;
        for (int k = 0; k < rows; ++k) {
          const int t = (sched[k].ky * c.kw + sched[k].kx) * G + sched[k].g;
          if (t >= lo && t < hi && seen.insert(k).second) ++n;
        }
        if (n == 0) slots.push_back(0);
        for (int i = 0; i < n; ++i) slots.push_back(1);
      }
      if (seen.empty()) slots.back() = 1;  // the all-skipped pixel's beat
      const size_t got = w.beats.size() - start;
      const size_t want = seen.empty() ? 1 : seen.size();
      if (got != want) {
        ADD_FAILURE() << fmt::format(
            "reference: pixel ({}, {}) has {} beats but {} rows in its "
            "kernel-row ranges",
            oy, ox, got, want);
      }
      w.slot_is_beat.insert(w.slot_is_beat.end(), slots.begin(), slots.end());
    }
  }
  return w;
}

// Expected cycles from the first beat's handshake to the last's (inclusive)
// with no back-pressure: each beat leaves the issue stage when the next one is
// issued (its last flag is the next beat's first), and the last one at the
// end slot after every record, so the count is the issue slots from the
// walk's second beat to the end slot: the beats plus the bubbles (empty
// kernel-row ranges) issued after the second beat.
int expected_cycles(const Walk& w, int* bubbles) {
  const int n = static_cast<int>(w.beats.size());
  *bubbles = 0;
  if (n == 1) return 1;
  int beat = 0;
  size_t i = 0;
  for (; i < w.slot_is_beat.size(); ++i) {
    if (w.slot_is_beat[i] && ++beat == 2) break;
  }
  for (size_t j = i; j < w.slot_is_beat.size(); ++j) *bubbles += w.slot_is_beat[j] ? 0 : 1;
  return n + *bubbles;
}

// walk_cfg_t field offsets (strata_compute_pkg, MSB first).
struct Field {
  const char* name;
  unsigned width;
};
constexpr Field kWalkFields[] = {
    {"rows_m1", 17},      {"cols_m1", 16},    {"img_h", 17},        {"img_w", 16},
    {"kernel_h", 4},      {"kernel_w", 4},    {"stride_h", 4},      {"stride_w", 4},
    {"pad_top", 4},       {"pad_left", 4},    {"groups_m1", 16},    {"group_step", 17},
    {"row_adv", 20},      {"pad_off", 20},    {"base", 16},         {"cache_base", 16},
    {"kw_groups", 17},    {"row_off0", 20},   {"row_off_step", 20}, {"col_off0", 20},
    {"col_off_step", 20}, {"param_base", 16}, {"fill", 1},          {"fill_base", 16}};

unsigned field_lsb(const std::string& name, unsigned* width) {
  unsigned lsb = 0;
  for (int i = static_cast<int>(std::size(kWalkFields)) - 1; i >= 0; --i) {
    if (name == kWalkFields[i].name) {
      *width = kWalkFields[i].width;
      return lsb;
    }
    lsb += kWalkFields[i].width;
  }
  ADD_FAILURE() << "no walk_cfg_t field " << name;
  return 0;
}

struct RunResult {
  std::vector<Beat> beats;
  std::vector<int> steps;  // beats received when each step was taken
  std::vector<uint64_t> beat_cycles;
  uint64_t start_cycle = 0;  // the cycle start_i was high
  bool err = false;
  bool timeout = false;
  int beats_while_err = 0;
};

class StrataPackedWalker : public SimFixture<Vstrata_packed_walker> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    auto& d = dut();
    d.start_i = 0;
    d.sched_we_i = 0;
    d.beat_ready_i = 0;
    d.step_ready_i = 0;
    d.rows_i = 0;
    reset();
  }

  void set_cfg(const std::string& name, uint64_t value) {
    unsigned width = 0;
    const unsigned lsb = field_lsb(name, &width);
    set_field(dut().cfg_i, lsb, width, value);
  }

  void drive_cfg(const Conv& c, int rows) {
    const int G = c.groups;
    set_cfg("rows_m1", c.out_h() - 1);
    set_cfg("cols_m1", c.out_w() - 1);
    set_cfg("img_h", c.in_h);
    set_cfg("img_w", c.in_w);
    set_cfg("kernel_h", c.kh);
    set_cfg("kernel_w", c.kw);
    set_cfg("stride_h", c.sh);
    set_cfg("stride_w", c.sw);
    set_cfg("pad_top", c.pt);
    set_cfg("pad_left", c.pl);
    set_cfg("groups_m1", G - 1);
    set_cfg("group_step", c.in_h * c.in_w);
    set_cfg("row_adv", c.sh * c.in_w);
    set_cfg("pad_off", c.pt * c.in_w);
    set_cfg("base", c.base);
    set_cfg("cache_base", c.cache_base);
    set_cfg("kw_groups", c.kw * G);
    set_cfg("row_off0", c.pt * c.kw * G);
    set_cfg("row_off_step", c.sh * c.kw * G);
    set_cfg("col_off0", c.pl * G);
    set_cfg("col_off_step", c.sw * G);
    set_cfg("param_base", c.param_base);
    dut().rows_i = static_cast<uint16_t>(rows);
  }

  // Writes raw schedule words (one per cycle, while idle).
  void write_sched(int at, const std::vector<uint32_t>& words) {
    auto& d = dut();
    for (size_t k = 0; k < words.size(); ++k) {
      d.sched_we_i = 1;
      d.sched_waddr_i = static_cast<uint32_t>(at + k);
      d.sched_wdata_i = words[k];
      settle();
      tick();
    }
    d.sched_we_i = 0;
    settle();
  }

  static uint32_t word(const Entry& e) {
    return static_cast<uint32_t>(e.g) | static_cast<uint32_t>(e.ky) << 16 |
           static_cast<uint32_t>(e.kx) << 20;
  }

  // Starts one walk and collects its beats until busy_o falls.
  RunResult run(const Conv& c, int rows, double beat_stall, double step_stall,
                uint64_t max_cycles) {
    auto& d = dut();
    Throttle beat_gap(beat_stall), step_gap(step_stall);
    drive_cfg(c, rows);
    RunResult r;
    r.start_cycle = cycle();
    d.start_i = 1;
    settle();
    tick();
    d.start_i = 0;
    for (uint64_t n = 0; n < max_cycles; ++n) {
      d.beat_ready_i = !beat_gap.stall(rng());
      d.step_ready_i = !step_gap.stall(rng());
      settle();
      if (!d.busy_o) {
        r.err = d.err_o;
        return r;
      }
      if (d.step_valid_o && d.step_ready_i) r.steps.push_back(static_cast<int>(r.beats.size()));
      if (d.beat_valid_o && d.beat_ready_i) {
        Beat b;
        b.a_cur = static_cast<int>(get_field(d.beat_addr_o, 0, kBankBits));
        b.a_nxt = static_cast<int>(get_field(d.beat_addr_o, kBankBits, kBankBits));
        b.in_cur = d.beat_in_o & 1;
        b.in_nxt = (d.beat_in_o >> 1) & 1;
        b.cache = d.beat_cache_o;
        b.first = d.beat_first_o;
        b.last = d.beat_last_o;
        b.param = d.beat_param_o;
        r.beats.push_back(b);
        r.beat_cycles.push_back(cycle());
      }
      tick();
    }
    r.timeout = true;
    return r;
  }

  // One walk: schedule written, run, every beat and step compared.
  void check_walk(const Conv& c, const std::vector<Entry>& sched, double beat_stall,
                  double step_stall, const std::string& what) {
    std::vector<uint32_t> words;
    for (const Entry& e : sched) words.push_back(word(e));
    write_sched(c.cache_base, words);
    const Walk want = reference(c, sched);
    const uint64_t limit = 64 * (want.slot_is_beat.size() + sched.size() + 64);
    const RunResult got = run(c, static_cast<int>(sched.size()), beat_stall, step_stall, limit);
    const std::string where = fmt::format(
        "{}: in {}x{} k {}x{} s {},{} pad t{} l{} b{} r{} G {} R {} (STRATA_SEED={})", what, c.in_h,
        c.in_w, c.kh, c.kw, c.sh, c.sw, c.pt, c.pl, c.pb, c.pr, c.groups, sched.size(), seed());
    ASSERT_FALSE(got.timeout) << where << ": busy_o still high after " << limit << " cycles";
    ASSERT_FALSE(got.err) << where << ": err_o on a legal schedule";
    for (size_t i = 0; i < std::min(got.beats.size(), want.beats.size()); ++i) {
      ASSERT_EQ(got.beats[i], want.beats[i])
          << where << ": beat " << i << "\n  expected " << show(want.beats[i]) << "\n  got      "
          << show(got.beats[i]);
    }
    ASSERT_EQ(got.beats.size(), want.beats.size()) << where << ": beat count";
    ASSERT_EQ(got.steps, want.row_first_beat) << where << ": steps (beats before each)";
  }

  // Error case: err_o, busy_o falls, no beat; the only step is the first
  // row's, taken before the schedule is read.
  void check_error(const Conv& c, const std::vector<uint32_t>& words, const std::string& what) {
    write_sched(c.cache_base, words);
    const RunResult got = run(c, static_cast<int>(words.size()), 0.0, 0.0, 4 * words.size() + 64);
    ASSERT_FALSE(got.timeout) << what << ": busy_o stays high";
    EXPECT_TRUE(got.err) << what << ": err_o not raised (STRATA_SEED=" << seed() << ")";
    EXPECT_TRUE(got.beats.empty()) << what << ": " << got.beats.size() << " beats";
    EXPECT_EQ(got.steps, std::vector<int>{0}) << what << ": steps other than the first row's";
  }

  // A random legal geometry with the given kernel; addresses fit the memories.
  Conv random_conv(int kh, int kw, int max_img = 9) {
    Conv c;
    c.kh = kh;
    c.kw = kw;
    c.sh = static_cast<int>(rand_int(1, 3));
    c.sw = static_cast<int>(rand_int(1, 3));
    c.pt = static_cast<int>(rand_int(0, kh - 1));
    c.pb = static_cast<int>(rand_int(0, kh - 1));
    c.pl = static_cast<int>(rand_int(0, kw - 1));
    c.pr = static_cast<int>(rand_int(0, kw - 1));
    c.in_h = static_cast<int>(rand_int(std::max(1, kh - c.pt - c.pb), std::max(kh, max_img)));
    c.in_w = static_cast<int>(rand_int(std::max(1, kw - c.pl - c.pr), std::max(kw, max_img)));
    c.groups = static_cast<int>(rand_int(1, 4));
    const int words = c.groups * c.in_h * c.in_w;
    c.base = static_cast<int>(rand_int(0, kBankDepth - words));
    c.param_base = static_cast<int>(rand_int(0, kParamDepth - c.out_h()));
    return c;
  }

  // Dense rows in increasing order: each kept with probability keep.
  std::vector<Entry> random_sched(const Conv& c, double keep) {
    std::vector<Entry> s;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int ky = 0; ky < c.kh; ++ky) {
      for (int kx = 0; kx < c.kw; ++kx) {
        for (int g = 0; g < c.groups; ++g) {
          if (u(rng()) < keep) s.push_back({ky, kx, g});
        }
      }
    }
    if (s.empty()) {
      s.push_back({static_cast<int>(rand_int(0, c.kh - 1)), static_cast<int>(rand_int(0, c.kw - 1)),
                   static_cast<int>(rand_int(0, c.groups - 1))});
    }
    return s;
  }

  // Drops every row of some taps and some kernel rows.
  std::vector<Entry> drop_taps(const Conv& c, std::vector<Entry> s) {
    std::vector<char> row_gone(c.kh), tap_gone(c.kh * c.kw);
    for (auto& r : row_gone) r = rand_int(0, 2) == 0;
    for (auto& t : tap_gone) t = rand_int(0, 2) == 0;
    std::vector<Entry> out;
    for (const Entry& e : s) {
      if (!row_gone[e.ky] && !tap_gone[e.ky * c.kw + e.kx]) out.push_back(e);
    }
    if (out.empty()) out.push_back(s.front());
    return out;
  }

  void place(Conv& c, size_t rows) {
    c.cache_base = static_cast<int>(rand_int(0, kCacheDepth - static_cast<int>(rows)));
  }

  // Random walks of one kernel shape: dense, sparse, tap-dropped and one-row
  // schedules, with and without back-pressure.
  void random_walks(int kh, int kw, int walks) {
    for (int i = 0; i < walks; ++i) {
      Conv c = random_conv(kh, kw);
      std::vector<Entry> s;
      switch (i % 4) {
        case 0:
          s = random_sched(c, 1.0);
          break;
        case 1:
          s = random_sched(c, 0.3);
          break;
        case 2:
          s = drop_taps(c, random_sched(c, 0.6));
          break;
        default:
          s = random_sched(c, 0.0);
          break;  // R = 1
      }
      place(c, s.size());
      const double stall = (i % 3 == 0) ? 0.0 : 0.4;
      check_walk(c, s, stall, stall, fmt::format("kernel {}x{} walk {}", kh, kw, i));
      if (HasFatalFailure()) return;
    }
  }
};

TEST_F(StrataPackedWalker, Kernel1x1) { random_walks(1, 1, 16); }
TEST_F(StrataPackedWalker, Kernel3x3) { random_walks(3, 3, 24); }
TEST_F(StrataPackedWalker, Kernel5x5) { random_walks(5, 5, 16); }
TEST_F(StrataPackedWalker, KernelMax) { random_walks(kMaxKernel, kMaxKernel, 12); }
TEST_F(StrataPackedWalker, KernelNonSquare) {
  random_walks(3, 5, 8);
  if (HasFatalFailure()) return;
  random_walks(kMaxKernel, 2, 8);
  for (int i = 0; i < 8 && !HasFatalFailure(); ++i) {
    random_walks(static_cast<int>(rand_int(1, kMaxKernel)),
                 static_cast<int>(rand_int(1, kMaxKernel)), 4);
  }
}

// Many groups (G up to 16) and larger images: sparse schedules of at most
// the memory's rows, addresses up to the bank's end.
TEST_F(StrataPackedWalker, ManyGroups) {
  for (int i = 0; i < 12; ++i) {
    const int k = static_cast<int>(rand_int(1, 5));
    Conv c = random_conv(k, k, 16);
    c.groups = static_cast<int>(rand_int(5, 16));
    c.base = static_cast<int>(rand_int(0, kBankDepth - c.groups * c.in_h * c.in_w));
    if (i % 4 == 0) c.base = kBankDepth - c.groups * c.in_h * c.in_w;
    std::vector<Entry> s = random_sched(c, std::min(1.0, 200.0 / (k * k * c.groups)) * 0.7);
    place(c, s.size());
    check_walk(c, s, 0.2, 0.2, fmt::format("many groups {}", i));
    if (HasFatalFailure()) return;
  }
}

// Schedules of padding taps only: the corner pixel (0, 0) skips every row and
// takes one beat (both words outside, cache_base).
TEST_F(StrataPackedWalker, AllSkippedPixels) {
  for (int i = 0; i < 12; ++i) {
    const int k = (i % 2 == 0) ? 3 : 5;
    Conv c = random_conv(k, k, 7);
    c.pt = std::max(c.pt, 1);
    c.pl = std::max(c.pl, 1);
    c.in_h = std::max(c.in_h, k);
    c.in_w = std::max(c.in_w, k);
    c.base = 0;
    c.param_base = 0;
    // Rows of kernel row 0, which lies in the top padding for pixel (0, 0).
    std::vector<Entry> s = {{0, 0, 0}};
    if (i % 3 == 1 && c.groups > 1) s.push_back({0, 0, c.groups - 1});
    if (i % 3 == 2) s = {{0, 0, 0}, {0, 1, 0}};
    place(c, s.size());
    const Walk w = reference(c, s);
    ASSERT_FALSE(w.beats[0].in_cur || w.beats[0].in_nxt) << "the corner pixel is not all-skipped";
    check_walk(c, s, i % 2 ? 0.3 : 0.0, 0.3, fmt::format("all-skipped {}", i));
    if (HasFatalFailure()) return;
  }
}

// Back-to-back walks of different geometries (state left by one walk does not
// leak into the next).
TEST_F(StrataPackedWalker, BackToBack) {
  const int sizes[] = {1, 3, 5, kMaxKernel};
  for (int i = 0; i < 12; ++i) {
    const int k = sizes[rand_int(0, 3)];
    Conv c = random_conv(k, sizes[rand_int(0, 3)]);
    std::vector<Entry> s = random_sched(c, rand_int(0, 1) ? 0.5 : 1.0);
    place(c, s.size());
    check_walk(c, s, 0.2, 0.5, fmt::format("back-to-back {}", i));
    if (HasFatalFailure()) return;
  }
}

TEST_F(StrataPackedWalker, Errors) {
  Conv c = random_conv(3, 3);
  c.groups = 2;
  c.base = std::min(c.base, kBankDepth - c.groups * c.in_h * c.in_w);
  c.cache_base = 10;
  const auto w = [](int ky, int kx, int g) { return StrataPackedWalker::word({ky, kx, g}); };
  check_error(c, {w(0, 0, 0), w(3, 0, 0)}, "ky = kernel_h");
  check_error(c, {w(0, 3, 1)}, "kx = kernel_w");
  check_error(c, {w(0, 0, 0), w(1, 1, 2)}, "g > groups_m1");
  check_error(c, {w(0, 0, 1), w(0, 0, 1)}, "t repeated");
  check_error(c, {w(0, 1, 0), w(0, 0, 1), w(2, 2, 1)}, "t decreasing");
  check_error(c, {w(1, 0, 0), w(0, 2, 1)}, "t decreasing across kernel rows");
  check_error(c, {w(15, 15, 0xffff)}, "every field past its range");
  check_error(c, {w(0, 0, 0), w(0, 0, 1), w(2, 2, 0), w(2, 2, 2)}, "last entry's g > groups_m1");
  // The rows must lie inside the schedule memory.
  Conv end = c;
  end.cache_base = kCacheDepth - 1;
  check_error(end, {w(0, 0, 0), w(0, 0, 1)}, "rows past the memory's end");
  // A legal walk afterwards: err_o cleared by the start.
  std::vector<Entry> s = random_sched(c, 0.5);
  place(c, s.size());
  check_walk(c, s, 0.0, 0.0, "after errors");
}

// R = 0 (the dense walk's value: the engine never starts this walker with it)
// is refused like a bad schedule.
TEST_F(StrataPackedWalker, NoRows) {
  Conv c = random_conv(3, 3);
  const RunResult got = run(c, 0, 0.0, 0.0, 64);
  ASSERT_FALSE(got.timeout);
  EXPECT_TRUE(got.err);
  EXPECT_TRUE(got.beats.empty());
}

// A schedule that ends at the memory's last word (cache_base + R = CacheDepth):
// the end value needs the table's extra bit.
TEST_F(StrataPackedWalker, ScheduleAtMemoryEnd) {
  for (int i = 0; i < 4; ++i) {
    const int k = i < 2 ? 3 : kMaxKernel;
    Conv c = random_conv(k, k);
    std::vector<Entry> s = random_sched(c, i % 2 ? 0.4 : 1.0);
    c.cache_base = kCacheDepth - static_cast<int>(s.size());
    check_walk(c, s, 0.3, 0.3, fmt::format("at the memory's end {}", i));
    if (HasFatalFailure()) return;
  }
}

// No back-pressure: the cycles from the first beat to the last are the beats
// plus the documented bubbles (empty kernel-row ranges).
TEST_F(StrataPackedWalker, Throughput) {
  const int sizes[] = {1, 3, 5, kMaxKernel};
  uint64_t beats = 0, cycles = 0, bubbles = 0;
  for (int i = 0; i < 24; ++i) {
    const int k = sizes[i % 4];
    Conv c = random_conv(k, k, 12);
    std::vector<Entry> s = random_sched(c, (i / 4) % 3 == 0 ? 1.0 : (i / 4) % 3 == 1 ? 0.5 : 0.15);
    if (i % 5 == 4) s = drop_taps(c, s);
    place(c, s.size());
    std::vector<uint32_t> words;
    for (const Entry& e : s) words.push_back(word(e));
    write_sched(c.cache_base, words);
    const Walk want = reference(c, s);
    const RunResult got = run(c, static_cast<int>(s.size()), 0.0, 0.0,
                              8 * (want.slot_is_beat.size() + s.size() + 64));
    ASSERT_FALSE(got.timeout || got.err);
    ASSERT_EQ(got.beats, want.beats) << "walk " << i << " (STRATA_SEED=" << seed() << ")";
    int b = 0;
    const int want_cycles = expected_cycles(want, &b);
    const auto span = static_cast<int>(got.beat_cycles.back() - got.beat_cycles.front() + 1);
    EXPECT_EQ(span, want_cycles) << "walk " << i << ": " << want.beats.size() << " beats, " << b
                                 << " bubbles (STRATA_SEED=" << seed() << ")";
    beats += want.beats.size();
    cycles += static_cast<uint64_t>(span);
    bubbles += static_cast<uint64_t>(b);
  }
  std::cout << fmt::format("[ PERF     ] {} beats in {} cycles ({} bubbles): {:.3f} cycles/beat",
                           beats, cycles, bubbles, static_cast<double>(cycles) / beats)
            << std::endl;
  RecordProperty("cycles_per_beat", fmt::format("{:.3f}", static_cast<double>(cycles) / beats));
}

// Layer-sized walks (32x32, 3x3 pad 1 and 5x5 pad 2, G = 1 and 4) with
// schedules keeping 75 %, 50 % and 30 % of the dense rows: the same exact
// count, and the cycles per beat printed for each.
TEST_F(StrataPackedWalker, ThroughputLayers) {
  for (const int k : {3, 5}) {
    for (const int groups : {1, 4}) {
      for (const double keep : {0.75, 0.5, 0.3}) {
        Conv c;
        c.kh = c.kw = k;
        c.pt = c.pl = c.pb = c.pr = k / 2;
        c.in_h = c.in_w = 32;
        c.groups = groups;
        std::vector<Entry> s = random_sched(c, keep);
        place(c, s.size());
        std::vector<uint32_t> words;
        for (const Entry& e : s) words.push_back(word(e));
        write_sched(c.cache_base, words);
        const Walk want = reference(c, s);
        const RunResult got = run(c, static_cast<int>(s.size()), 0.0, 0.0, 1000000);
        ASSERT_FALSE(got.timeout || got.err);
        ASSERT_EQ(got.beats, want.beats) << "(STRATA_SEED=" << seed() << ")";
        int b = 0;
        const int want_cycles = expected_cycles(want, &b);
        const auto span = static_cast<int>(got.beat_cycles.back() - got.beat_cycles.front() + 1);
        EXPECT_EQ(span, want_cycles) << "(STRATA_SEED=" << seed() << ")";
        std::cout << fmt::format(
                         "[ PERF     ] 32x32 k{} G{} R {} of {}: {} beats, {} cycles, "
                         "{} bubbles: {:.3f} cycles/beat",
                         k, groups, s.size(), k * k * groups, want.beats.size(), span, b,
                         static_cast<double>(span) / want.beats.size())
                  << std::endl;
      }
    }
  }
}

// Dense schedules of full windows (no padding, stride 1): no bubble at all,
// one beat per cycle from the first beat to the last.
TEST_F(StrataPackedWalker, ThroughputDense) {
  Conv c;
  c.kh = c.kw = 3;
  c.in_h = 8;
  c.in_w = 8;
  c.groups = 2;
  std::vector<Entry> s = random_sched(c, 1.0);
  place(c, s.size());
  std::vector<uint32_t> words;
  for (const Entry& e : s) words.push_back(word(e));
  write_sched(c.cache_base, words);
  const Walk want = reference(c, s);
  const RunResult got = run(c, static_cast<int>(s.size()), 0.0, 0.0, 100000);
  ASSERT_EQ(got.beats, want.beats);
  EXPECT_EQ(got.beat_cycles.back() - got.beat_cycles.front() + 1, want.beats.size());
}

// Latency (documented in the RTL header): start_i to the first beat is
// R + kStartLatency cycles when the walk's first two beats are issued back to
// back (a dense 1x1 schedule of two groups: every pixel has two beats).
TEST_F(StrataPackedWalker, Latency) {
  constexpr uint64_t kStartLatency = 20;
  for (int i = 0; i < 4; ++i) {
    Conv c;
    c.in_h = 2 + i;
    c.in_w = 3;
    c.groups = 2;
    std::vector<Entry> s = random_sched(c, 1.0);
    place(c, s.size());
    std::vector<uint32_t> words;
    for (const Entry& e : s) words.push_back(word(e));
    write_sched(c.cache_base, words);
    const RunResult got = run(c, static_cast<int>(s.size()), 0.0, 0.0, 1000);
    ASSERT_FALSE(got.beats.empty());
    EXPECT_EQ(got.beat_cycles.front() - got.start_cycle, s.size() + kStartLatency);
  }
}

}  // namespace
}  // namespace strata::tb
