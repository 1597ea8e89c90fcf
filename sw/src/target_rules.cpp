// SPDX-License-Identifier: Apache-2.0
// The table of target rules (strata/target_rules.hpp): each rule's check and
// its boundary instructions, built from small valid base instructions.
#include "strata/target_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "strata/error.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

using isa::ComputeDst;
using isa::ComputeInstr;
using isa::ComputeMode;
using isa::LoadDst;
using isa::LoadInstr;
using isa::StoreInstr;

using Verdict = std::optional<std::string>;

const char* mode_name(ComputeMode m) {
  switch (m) {
    case ComputeMode::kConv:
      return "CONV";
    case ComputeMode::kFc:
      return "FC";
    case ComputeMode::kPool:
      return "POOL";
    case ComputeMode::kDepthwise:
      return "DEPTHWISE";
  }
  return "COMPUTE";
}

bool is_conv(const ComputeInstr& c) { return c.mode == ComputeMode::kConv; }
bool is_fc(const ComputeInstr& c) { return c.mode == ComputeMode::kFc; }
bool is_pool(const ComputeInstr& c) { return c.mode == ComputeMode::kPool; }
bool is_dw(const ComputeInstr& c) { return c.mode == ComputeMode::kDepthwise; }
// The input map streams through the pooling path's window generator (POOL, DEPTHWISE).
bool streams_window(const ComputeInstr& c) { return is_pool(c) || is_dw(c); }
// The window fields (pool_k, pool_s, pool_pad_*, pool_out_*) apply: CONV with
// pool_en, POOL, and DEPTHWISE (its kernel is the pooling window).
bool pools(const ComputeInstr& c) { return (is_conv(c) && c.pool_en) || streams_window(c); }

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1; }

// Output size along one dimension with padding a before and b after the input.
int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t a, int64_t b) {
  return (in + a + b - k) / s + 1;
}

// The pooling unit's input: the convolution's output (CONV) or the input (POOL, DEPTHWISE).
int64_t pool_in_h(const ComputeInstr& c) { return streams_window(c) ? c.in_h : c.out_h; }
int64_t pool_in_w(const ComputeInstr& c) { return streams_window(c) ? c.in_w : c.out_w; }

// The streamed operand's words in bank in_id: the map (CONV, POOL) or the
// weights of out_h neurons (FC).
int64_t in_words(const ComputeInstr& c) {
  return is_fc(c) ? c.out_h * c.in_groups : c.in_groups * c.in_h * c.in_w;
}
// The cached operand's words in every PE cache: weights (CONV; DEPTHWISE: the B
// words of max_pool_kernel^2 taps), features (FC).
int64_t cache_words(const ComputeInstr& c, const HwTarget& t) {
  if (is_dw(c)) return t.depthwise_weight_words();
  if (c.packed_rows != 0 && c.mode == ComputeMode::kConv) return c.packed_rows;  // its rows
  return is_fc(c) ? c.in_groups : c.kernel_h * c.kernel_w * c.in_groups;
}
// Partial sums (docs/isa.md, COMPUTE, "Partial sums"): acc_in and acc_out
// apply to a dense CONV and to an FC (rule compute.acc_mode refuses them elsewhere).
bool acc_applies(const ComputeInstr& c) { return is_fc(c) || (is_conv(c) && c.packed_rows == 0); }
bool reads_acc(const ComputeInstr& c) { return c.acc_in && acc_applies(c); }
// Raw accumulators to a bank (acc_out): 4 words per pixel (FC: neuron).
bool writes_acc(const ComputeInstr& c) {
  return c.acc_out && acc_applies(c) && c.dst_kind == ComputeDst::kBank;
}
// The output pixels of a CONV (out_h x out_w, raster order) or the neurons of an FC.
int64_t acc_pixels(const ComputeInstr& c) { return is_fc(c) ? c.out_h : c.out_h * c.out_w; }
// One past the last partial-sum word acc_in reads in bank acc_id.
int64_t acc_in_end(const ComputeInstr& c) { return c.acc_base + 4 * acc_pixels(c); }
// acc_in and acc_out on the same words, pixel by pixel (read and written in
// place): the same bank, acc_base = dst_base and (CONV) dst_row_stride = 4 out_w.
bool acc_in_place(const ComputeInstr& c) {
  return reads_acc(c) && writes_acc(c) && c.acc_id == c.dst_id && c.acc_base == c.dst_base &&
         (is_fc(c) || c.dst_row_stride == 4 * c.out_w);
}

// One past the last destination word.
int64_t dst_end(const ComputeInstr& c, int64_t lanes) {
  if (writes_acc(c)) {  // pixel (oy, ox) at dst_base + oy dst_row_stride + 4 ox .. + 3
    return is_fc(c) ? c.dst_base + 4 * c.out_h
                    : c.dst_base + (c.out_h - 1) * c.dst_row_stride + 4 * c.out_w;
  }
  if (is_fc(c)) {
    return c.dst_kind == ComputeDst::kPeTranspose
               ? c.dst_base + (c.dst_lane + c.out_h + lanes - 1) / lanes
               : c.dst_base + c.out_h;
  }
  const int64_t rows = pools(c) ? c.pool_out_h : c.out_h;
  const int64_t cols = pools(c) ? c.pool_out_w : c.out_w;
  const int64_t groups = is_pool(c) ? c.in_groups : 1;
  return c.dst_base + (groups - 1) * c.dst_group_stride + (rows - 1) * c.dst_row_stride + cols;
}

// ---- checks ----------------------------------------------------------------------------------

template <class T>
const T* as(const RuleSubject& s) {
  return std::get_if<T>(&s);
}

Verdict in_id(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || c->in_id < t.banks) return {};
  return fmt::format("COMPUTE reads bank {}, the configuration has {} banks", c->in_id, t.banks);
}

Verdict sizes(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr) return {};
  if (is_fc(*c)) {
    if (c->in_groups >= 1 && c->out_h >= 1) return {};
    return fmt::format("FC with {} groups and out_h {} (both must be >= 1)", c->in_groups,
                       c->out_h);
  }
  if (c->in_h >= 1 && c->in_w >= 1 && c->in_groups >= 1) return {};
  return fmt::format("{} input {}x{} with {} groups", mode_name(c->mode), c->in_h, c->in_w,
                     c->in_groups);
}

Verdict fc_out_w(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_fc(*c) || c->out_w == 1) return {};
  return fmt::format("FC with out_w {} (out_w must be 1)", c->out_w);
}

Verdict fc_no_pool(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_fc(*c) || !c->pool_en) return {};
  return std::string("FC cannot pool (pool_en = 1)");
}

Verdict pool_enable(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !streams_window(*c) || c->pool_en) return {};
  return fmt::format("{} with pool_en = 0", mode_name(c->mode));
}

Verdict pool_out_is_in(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !streams_window(*c) || (c->out_h == c->in_h && c->out_w == c->in_w)) {
    return {};
  }
  return fmt::format("{} out {}x{} must equal the input {}x{}", mode_name(c->mode), c->out_h,
                     c->out_w, c->in_h, c->in_w);
}

Verdict dw_groups(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_dw(*c) || c->in_groups <= 1) return {};
  return fmt::format("DEPTHWISE with {} groups (it reads one channel group)", c->in_groups);
}

Verdict dw_floor(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_dw(*c) || !c->pool_ceil) return {};
  return std::string("DEPTHWISE in ceil mode (pool_ceil = 1; its windows use floor mode)");
}

Verdict dw_pool_op(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_dw(*c) || c->pool_op == isa::PoolOp::kMax) return {};
  return std::string("DEPTHWISE with pool_op AVG (pool_op must be MAX, 0)");
}

Verdict conv_kernel(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_conv(*c)) return {};
  const auto ok = [&](int64_t k) { return k >= 1 && k <= t.max_kernel; };
  if (ok(c->kernel_h) && ok(c->kernel_w)) return {};
  return fmt::format("CONV kernel {}x{} outside 1..MaxKernel = {}", c->kernel_h, c->kernel_w,
                     t.max_kernel);
}

Verdict conv_stride(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_conv(*c) || (c->stride_h >= 1 && c->stride_w >= 1)) return {};
  return fmt::format("CONV stride {},{} (must be >= 1)", c->stride_h, c->stride_w);
}

// The padded input of a CONV: in + the padding before and after.
int64_t conv_padded_h(const ComputeInstr& c) { return c.in_h + c.pad_top + c.pad_bottom; }
int64_t conv_padded_w(const ComputeInstr& c) { return c.in_w + c.pad_left + c.pad_right; }

Verdict conv_pad(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_conv(*c) ||
      (c->pad_top < c->kernel_h && c->pad_bottom < c->kernel_h && c->pad_left < c->kernel_w &&
       c->pad_right < c->kernel_w)) {
    return {};
  }
  return fmt::format("CONV pad {},{},{},{} (top, left, bottom, right) not below the kernel {}x{}",
                     c->pad_top, c->pad_left, c->pad_bottom, c->pad_right, c->kernel_h,
                     c->kernel_w);
}

Verdict conv_fits(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_conv(*c)) return {};
  if (conv_padded_h(*c) >= c->kernel_h && conv_padded_w(*c) >= c->kernel_w) return {};
  return fmt::format("CONV kernel {}x{} larger than the padded {}x{} input (pad {},{},{},{})",
                     c->kernel_h, c->kernel_w, c->in_h, c->in_w, c->pad_top, c->pad_left,
                     c->pad_bottom, c->pad_right);
}

Verdict conv_out_size(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_conv(*c) || c->stride_h < 1 || c->stride_w < 1 ||
      conv_padded_h(*c) < c->kernel_h || conv_padded_w(*c) < c->kernel_w) {
    return {};
  }
  const int64_t oh = conv_out(c->in_h, c->kernel_h, c->stride_h, c->pad_top, c->pad_bottom);
  const int64_t ow = conv_out(c->in_w, c->kernel_w, c->stride_w, c->pad_left, c->pad_right);
  if (oh == c->out_h && ow == c->out_w) return {};
  return fmt::format("CONV out {}x{} does not follow from the input (expected {}x{})", c->out_h,
                     c->out_w, oh, ow);
}

Verdict in_range(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr) return {};
  const int64_t end = c->in_base + in_words(*c);
  if (end <= t.bank_depth) return {};
  return fmt::format("{} {} [{}, {}) past the bank depth {}", mode_name(c->mode),
                     is_fc(*c) ? "weights" : "input", c->in_base, end, t.bank_depth);
}

Verdict cache_range(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || is_pool(*c)) return {};
  const int64_t end = c->cache_base + cache_words(*c, t);
  if (end <= t.pe_cache_depth) return {};
  return fmt::format("{} {} [{}, {}) past the PE cache depth {}", mode_name(c->mode),
                     is_fc(*c) ? "features" : "weights", c->cache_base, end, t.pe_cache_depth);
}

Verdict param_range(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || is_pool(*c)) return {};
  const int64_t end = c->param_base + (is_fc(*c) ? c->out_h : int64_t{t.pes});
  if (end <= t.param_depth) return {};
  return fmt::format("{} channels [{}, {}) past the parameter RAM depth {}", mode_name(c->mode),
                     c->param_base, end, t.param_depth);
}

Verdict clamp_order(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || is_pool(*c) || c->clamp_lo <= c->clamp_hi) return {};
  return fmt::format("clamp [{}, {}] has lo > hi", c->clamp_lo, c->clamp_hi);
}

Verdict act_table(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !c->act_table_en) return {};
  if (c->mode == ComputeMode::kPool) {
    return std::string(
        "act_table_en on a POOL: only CONV, FC and DEPTHWISE look up an "
        "activation table");
  }
  if (c->act_table < t.act_tables) return {};
  if (t.act_tables == 0) {
    return std::string(
        "act_table_en = 1: this configuration has no activation tables "
        "(act_tables = 0)");
  }
  return fmt::format("act_table = {}, the configuration has act_tables = {}", c->act_table,
                     t.act_tables);
}

Verdict pool_kernel(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c) || (c->pool_k >= 1 && c->pool_k <= t.max_pool_kernel)) return {};
  return fmt::format("pooling window {} outside 1..MaxPoolKernel = {}", c->pool_k,
                     t.max_pool_kernel);
}

Verdict pool_stride(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c) || c->pool_s >= 1) return {};
  return std::string("pooling stride 0");
}

bool pool_pads_below(const ComputeInstr& c) {
  return c.pool_pad_top < c.pool_k && c.pool_pad_left < c.pool_k && c.pool_pad_bottom < c.pool_k &&
         c.pool_pad_right < c.pool_k;
}

Verdict pool_pad(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c) || pool_pads_below(*c)) return {};
  return fmt::format("pooling pad {},{},{},{} (top, left, bottom, right) not below the window {}",
                     c->pool_pad_top, c->pool_pad_left, c->pool_pad_bottom, c->pool_pad_right,
                     c->pool_k);
}

Verdict pool_width(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c) || pool_in_w(*c) <= t.max_image_width) return {};
  return fmt::format("pooling input width {} exceeds MaxImageWidth = {}", pool_in_w(*c),
                     t.max_image_width);
}

// The padded pooling input: its size + the padding before and after.
int64_t pool_padded_h(const ComputeInstr& c) {
  return pool_in_h(c) + c.pool_pad_top + c.pool_pad_bottom;
}
int64_t pool_padded_w(const ComputeInstr& c) {
  return pool_in_w(c) + c.pool_pad_left + c.pool_pad_right;
}

Verdict pool_fits(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c)) return {};
  if (pool_padded_h(*c) >= c->pool_k && pool_padded_w(*c) >= c->pool_k) return {};
  return fmt::format("pooling window {} larger than the padded {}x{} input (pad {},{},{},{})",
                     c->pool_k, pool_in_h(*c), pool_in_w(*c), c->pool_pad_top, c->pool_pad_left,
                     c->pool_pad_bottom, c->pool_pad_right);
}

Verdict post_clamp_order(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c) || is_dw(*c) || c->post_lo <= c->post_hi) return {};
  return fmt::format("post-pooling clamp [{}, {}] has lo > hi", c->post_lo, c->post_hi);
}

Verdict pool_out(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !pools(*c)) return {};
  const int64_t h = pool_in_h(*c), w = pool_in_w(*c);
  if (h < 1 || w < 1 || c->pool_k < 1 || c->pool_s < 1 || !pool_pads_below(*c) ||
      pool_padded_h(*c) < c->pool_k || pool_padded_w(*c) < c->pool_k) {
    return {};
  }
  const auto k = static_cast<int>(c->pool_k), st = static_cast<int>(c->pool_s);
  const int64_t ho = pool_out_size(static_cast<int>(h), k, st, static_cast<int>(c->pool_pad_top),
                                   static_cast<int>(c->pool_pad_bottom), c->pool_ceil);
  const int64_t wo = pool_out_size(static_cast<int>(w), k, st, static_cast<int>(c->pool_pad_left),
                                   static_cast<int>(c->pool_pad_right), c->pool_ceil);
  if (ho == c->pool_out_h && wo == c->pool_out_w) return {};
  return fmt::format("pool_out {}x{} does not follow from the {}x{} input (expected {}x{})",
                     c->pool_out_h, c->pool_out_w, h, w, ho, wo);
}

Verdict dst_kind(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr) return {};
  if (is_fc(*c) && c->dst_kind == ComputeDst::kPeCache) {
    return std::string("FC cannot write PE_CACHE (use BANK or PE_TRANSPOSE)");
  }
  if (!is_fc(*c) && c->dst_kind == ComputeDst::kPeTranspose) {
    return fmt::format("{} cannot write PE_TRANSPOSE (FC only)", mode_name(c->mode));
  }
  if (is_dw(*c) && c->dst_kind != ComputeDst::kBank) {
    return std::string("DEPTHWISE writes a bank only (dst_kind BANK)");
  }
  return {};
}

Verdict dst_bank(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || c->dst_kind != ComputeDst::kBank || c->dst_id < t.banks) return {};
  return fmt::format("{} writes bank {}, the configuration has {} banks", mode_name(c->mode),
                     c->dst_id, t.banks);
}

Verdict dst_bank_range(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || c->dst_kind != ComputeDst::kBank) return {};
  const int64_t end = dst_end(*c, t.lanes);
  if (end <= t.bank_depth) return {};
  return fmt::format("{} results up to word {} past the bank depth {}", mode_name(c->mode), end - 1,
                     t.bank_depth);
}

Verdict dst_bank_overlap(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || c->dst_kind != ComputeDst::kBank || c->dst_id != c->in_id) return {};
  if (!overlaps(c->dst_base, dst_end(*c, t.lanes), c->in_base, c->in_base + in_words(*c))) {
    return {};
  }
  return fmt::format("{} destination overlaps its {} in the same bank", mode_name(c->mode),
                     is_fc(*c) ? "weights" : "input");
}

Verdict dst_pe(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || is_fc(*c) || c->dst_kind != ComputeDst::kPeCache || c->dst_id < t.pes) {
    return {};
  }
  return fmt::format("{} writes PE {}, the configuration has {} PEs", mode_name(c->mode), c->dst_id,
                     t.pes);
}

Verdict transpose_lane(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !is_fc(*c) || c->dst_kind != ComputeDst::kPeTranspose || c->dst_lane == 0) {
    return {};
  }
  return fmt::format(
      "FC PE_TRANSPOSE with dst_lane {} (the PE caches are written in whole "
      "words; dst_lane must be 0)",
      c->dst_lane);
}

// A destination in the PE caches: PE_CACHE (CONV, POOL) or PE_TRANSPOSE (FC).
bool dst_in_cache(const ComputeInstr& c) {
  return is_fc(c) ? c.dst_kind == ComputeDst::kPeTranspose : c.dst_kind == ComputeDst::kPeCache;
}

Verdict dst_cache_range(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !dst_in_cache(*c)) return {};
  const int64_t end = dst_end(*c, t.lanes);
  if (end <= t.pe_cache_depth) return {};
  return fmt::format("{} {} up to word {} past the PE cache depth {}", mode_name(c->mode),
                     is_fc(*c) ? "transposed results" : "results", end - 1, t.pe_cache_depth);
}

Verdict dst_cache_overlap(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || is_pool(*c) || !dst_in_cache(*c)) return {};
  if (!overlaps(c->dst_base, dst_end(*c, t.lanes), c->cache_base,
                c->cache_base + cache_words(*c, t))) {
    return {};
  }
  return is_fc(*c) ? std::string("FC transposed results overlap its features")
                   : std::string("CONV destination overlaps its weights in the PE cache");
}

Verdict packed_rows(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || c->packed_rows == 0) return {};
  if (!t.sparse) {
    return fmt::format(
        "packed_rows = {}: a packed schedule needs a sparse build (this "
        "configuration is dense)",
        c->packed_rows);
  }
  if (c->mode == ComputeMode::kConv) return {};
  return fmt::format("packed_rows = {} with {}: only CONV runs a packed schedule", c->packed_rows,
                     mode_name(c->mode));
}

Verdict acc_mode(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || (!c->acc_in && !c->acc_out) || acc_applies(*c)) return {};
  const char* flags = c->acc_in && c->acc_out ? "acc_in and acc_out"
                      : c->acc_in             ? "acc_in"
                                              : "acc_out";
  if (is_conv(*c)) {
    return fmt::format(
        "{} on a packed CONV (packed_rows = {}): partial sums are a dense "
        "CONV's or an FC's",
        flags, c->packed_rows);
  }
  return fmt::format("{} on a {}: partial sums are a dense CONV's or an FC's", flags,
                     mode_name(c->mode));
}

Verdict acc_out(const RuleSubject& s, const HwTarget&) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !c->acc_out || !acc_applies(*c)) return {};
  if (c->pool_en) {
    return fmt::format("{} with acc_out and pool_en = 1 (raw accumulators are not pooled)",
                       mode_name(c->mode));
  }
  if (c->act_table_en) {
    return fmt::format(
        "{} with acc_out and act_table_en = 1 (raw accumulators are not looked "
        "up)",
        mode_name(c->mode));
  }
  if (c->dst_kind != ComputeDst::kBank) {
    return fmt::format("{} with acc_out writes {} (raw accumulators go to a bank: dst_kind BANK)",
                       mode_name(c->mode),
                       c->dst_kind == ComputeDst::kPeCache ? "PE_CACHE" : "PE_TRANSPOSE");
  }
  return {};
}

Verdict acc_bank(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !reads_acc(*c) || c->acc_id < t.banks) return {};
  return fmt::format("{} reads its partial sums from bank {}, the configuration has {} banks",
                     mode_name(c->mode), c->acc_id, t.banks);
}

Verdict acc_range(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !reads_acc(*c)) return {};
  const int64_t end = acc_in_end(*c);
  if (end <= t.bank_depth) return {};
  return fmt::format("{} partial sums [{}, {}) ({} {} x 4 words) past the bank depth {}",
                     mode_name(c->mode), c->acc_base, end, acc_pixels(*c),
                     is_fc(*c) ? "neurons" : "pixels", t.bank_depth);
}

Verdict acc_overlap(const RuleSubject& s, const HwTarget& t) {
  const auto* c = as<ComputeInstr>(s);
  if (c == nullptr || !reads_acc(*c) || c->dst_kind != ComputeDst::kBank ||
      c->acc_id != c->dst_id || acc_in_place(*c)) {
    return {};
  }
  const int64_t end = dst_end(*c, t.lanes);
  if (!overlaps(c->acc_base, acc_in_end(*c), c->dst_base, end)) return {};
  return fmt::format(
      "{} partial sums [{}, {}) overlap its results [{}, {}) in bank {} (only "
      "in place: acc_out, acc_base = dst_base{})",
      mode_name(c->mode), c->acc_base, acc_in_end(*c), c->dst_base, end, c->dst_id,
      is_fc(*c) ? "" : ", dst_row_stride = 4 x out_w");
}

Verdict load_control(const RuleSubject& s, const HwTarget& t) {
  const auto* l = as<LoadInstr>(s);
  if (l == nullptr || l->dst_kind != LoadDst::kControl) return {};
  if (l->dst_id < t.pes || (l->dst_id == t.pes && !l->dst_pe_step)) return {};
  return l->dst_id == t.pes
             ? std::string("LOAD CONTROL into the schedule (dst_id = P) with dst_pe_step")
             : fmt::format(
                   "LOAD CONTROL into PE {}, the configuration has {} PEs (and the "
                   "schedule at {})",
                   l->dst_id, t.pes, t.pes);
}

Verdict load_bank(const RuleSubject& s, const HwTarget& t) {
  const auto* l = as<LoadInstr>(s);
  if (l == nullptr || l->dst_kind != LoadDst::kBank || l->dst_id < t.banks) return {};
  return fmt::format("LOAD into bank {}, the configuration has {} banks", l->dst_id, t.banks);
}

Verdict load_pe(const RuleSubject& s, const HwTarget& t) {
  const auto* l = as<LoadInstr>(s);
  if (l == nullptr || l->dst_kind != LoadDst::kPeCache || l->dst_id < t.pes) return {};
  return fmt::format("LOAD into PE {}, the configuration has {} PEs", l->dst_id, t.pes);
}

Verdict load_dst_range(const RuleSubject& s, const HwTarget& t) {
  const auto* l = as<LoadInstr>(s);
  if (l == nullptr || l->rows < 1) return {};
  int64_t depth = 0, last_row = l->dst_addr + (l->rows - 1) * l->dst_row_stride;
  std::string what;
  switch (l->dst_kind) {
    case LoadDst::kBank:
      depth = t.bank_depth;
      what = fmt::format("bank {}", l->dst_id);
      break;
    case LoadDst::kPeCache:
    case LoadDst::kControl:  // the control planes and the schedule: PE-cache deep
      depth = t.pe_cache_depth;
      what = l->dst_kind == LoadDst::kPeCache ? "PE cache" : "PE control plane";
      if (l->dst_pe_step) last_row = l->dst_addr + ((l->rows - 1) / t.pes) * l->dst_row_stride;
      break;
    case LoadDst::kParam:
      depth = t.param_depth;
      what = "parameter RAM";
      break;
    default:
      return {};
  }
  if (last_row + l->row_words <= depth) return {};
  return fmt::format("LOAD writes {} up to word {}, past its depth {}", what,
                     last_row + l->row_words - 1, depth);
}

Verdict load_table(const RuleSubject& s, const HwTarget& t) {
  const auto* l = as<LoadInstr>(s);
  if (l == nullptr || l->dst_kind != LoadDst::kTable || l->rows < 1) return {};
  const int64_t end = l->dst_addr + (l->rows - 1) * l->dst_row_stride + l->row_words;
  if (end <= t.table_words()) return {};
  return fmt::format(
      "LOAD TABLE writes table word {}, the tables hold {} words of {} bytes "
      "(act_tables = {})",
      end - 1, t.table_words(), t.lanes, t.act_tables);
}

Verdict store_bank(const RuleSubject& s, const HwTarget& t) {
  const auto* st = as<StoreInstr>(s);
  if (st == nullptr || st->src_id < t.banks) return {};
  return fmt::format("STORE from bank {}, the configuration has {} banks", st->src_id, t.banks);
}

Verdict store_src_range(const RuleSubject& s, const HwTarget& t) {
  const auto* st = as<StoreInstr>(s);
  if (st == nullptr || st->rows < 1) return {};
  const int64_t last = st->src_addr + (st->rows - 1) * st->src_row_stride + st->row_words;
  if (last <= t.bank_depth) return {};
  return fmt::format("STORE reads bank {} up to word {}, past its depth {}", st->src_id, last - 1,
                     t.bank_depth);
}

// The external transfer of a LOAD or STORE: address, row stride, rows, bytes per row.
struct Transfer {
  const char* op;
  uint64_t addr, stride, rows, row_bytes;
};
std::optional<Transfer> transfer(const RuleSubject& s, const HwTarget& t) {
  if (const auto* l = as<LoadInstr>(s)) {
    const int64_t entry = l->dst_kind == LoadDst::kParam ? 8 : t.lanes;
    return Transfer{"LOAD", static_cast<uint64_t>(l->ext_addr),
                    static_cast<uint64_t>(l->ext_row_stride), static_cast<uint64_t>(l->rows),
                    static_cast<uint64_t>(l->row_words * entry)};
  }
  if (const auto* st = as<StoreInstr>(s)) {
    return Transfer{"STORE", static_cast<uint64_t>(st->ext_addr),
                    static_cast<uint64_t>(st->ext_row_stride), static_cast<uint64_t>(st->rows),
                    static_cast<uint64_t>(st->row_words * t.lanes)};
  }
  return {};
}

Verdict ext_align(const RuleSubject& s, const HwTarget& t) {
  const auto x = transfer(s, t);
  if (!x) return {};
  const auto beat = static_cast<uint64_t>(t.beat_bytes());
  if (x->addr % beat != 0) {
    return fmt::format("{} external address 0x{:x} is not a multiple of the {}-byte AXI beat",
                       x->op, x->addr, beat);
  }
  if (x->stride % beat != 0) {
    return fmt::format("{} external row stride {} is not a multiple of the {}-byte AXI beat", x->op,
                       x->stride, beat);
  }
  return {};
}

Verdict ext_range(const RuleSubject& s, const HwTarget& t) {
  const auto x = transfer(s, t);
  if (!x || x->rows < 1) return {};
  const uint64_t end = x->addr + (x->rows - 1) * x->stride + x->row_bytes;
  if (end <= (uint64_t{1} << t.axi_addr_width)) return {};
  return fmt::format("{} external range ends at 0x{:x}, beyond the {}-bit address space", x->op,
                     end, t.axi_addr_width);
}

Verdict param_shift(const RuleSubject& s, const HwTarget&) {
  const auto* e = as<ParamEntry>(s);
  if (e == nullptr || (e->shift <= kMaxShift && e->byte7 == 0)) return {};
  return fmt::format(
      "parameter entry for channel {} has shift {} and byte 7 = {} (shift must be "
      "<= {}, byte 7 zero)",
      e->channel, e->shift, e->byte7, kMaxShift);
}

// ---- boundary instructions -------------------------------------------------------------------

// A valid 6x6 x 2 groups, 3x3 pad 1 convolution: bank 0 -> bank 1.
ComputeInstr conv_base() {
  ComputeInstr c;
  c.mode = ComputeMode::kConv;
  c.in_id = 0;
  c.in_h = c.in_w = 6;
  c.in_groups = 2;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = 1;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
  c.out_h = c.out_w = 6;
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 1;
  c.dst_row_stride = 6;
  return c;
}
// The same with a 2x2 stride 2 max pool: 6x6 -> 3x3.
ComputeInstr conv_pool_base() {
  ComputeInstr c = conv_base();
  c.pool_en = true;
  c.pool_k = c.pool_s = 2;
  c.pool_out_h = c.pool_out_w = 3;
  c.dst_row_stride = 3;
  return c;
}
// 10 neurons of 4 words each: weights in bank 0, features at cache word 0, results to bank 1.
ComputeInstr fc_base() {
  ComputeInstr c;
  c.mode = ComputeMode::kFc;
  c.in_id = 0;
  c.in_groups = 4;
  c.out_h = 10;
  c.out_w = 1;
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 1;
  return c;
}
ComputeInstr fc_transpose_base(const HwTarget& t) {
  ComputeInstr c = fc_base();
  c.dst_kind = ComputeDst::kPeTranspose;
  c.dst_id = 0;
  c.dst_base = t.pe_cache_depth / 2;
  return c;
}
// The 6x6 CONV writing its raw accumulators to bank 1: rows of 4 x 6 words.
ComputeInstr conv_acc_out_base() {
  ComputeInstr c = conv_base();
  c.acc_out = true;
  c.dst_row_stride = 4 * c.out_w;
  return c;
}
ComputeInstr fc_acc_out_base() {
  ComputeInstr c = fc_base();
  c.acc_out = true;
  return c;
}
// A 2x2 stride 2 pool of a 6x6 map of 2 groups: bank 0 -> bank 1.
ComputeInstr pool_base() {
  ComputeInstr c;
  c.mode = ComputeMode::kPool;
  c.in_id = 0;
  c.in_h = c.in_w = 6;
  c.in_groups = 2;
  c.out_h = c.out_w = 6;
  c.pool_en = true;
  c.pool_k = c.pool_s = 2;
  c.pool_out_h = c.pool_out_w = 3;
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 1;
  c.dst_row_stride = 3;
  c.dst_group_stride = 9;
  return c;
}
// A 3x3 pad 1 depthwise convolution of a 6x6 map of one group: bank 0 -> bank 1.
ComputeInstr dw_base() {
  ComputeInstr c;
  c.mode = ComputeMode::kDepthwise;
  c.in_id = 0;
  c.in_h = c.in_w = 6;
  c.in_groups = 1;
  c.out_h = c.out_w = 6;
  c.pool_en = true;
  c.pool_k = 3;
  c.pool_s = 1;
  c.pool_pad_top = c.pool_pad_left = c.pool_pad_bottom = c.pool_pad_right = 1;
  c.pool_out_h = c.pool_out_w = 6;
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 1;
  c.dst_row_stride = 6;
  return c;
}
// External memory the boundary LOADs and STOREs use: 4 KB up (below it, the
// program that runs them).
constexpr int64_t kExtBase = 4096;

// 4 rows of 2 words from external memory into bank 0.
LoadInstr load_base() {
  LoadInstr l;
  l.ext_addr = kExtBase;
  l.rows = 4;
  l.row_words = 2;
  l.ext_row_stride = 64;
  l.dst_kind = LoadDst::kBank;
  l.dst_row_stride = 2;
  return l;
}
StoreInstr store_base() {
  StoreInstr s;
  s.ext_addr = kExtBase;
  s.rows = 4;
  s.row_words = 2;
  s.ext_row_stride = 64;
  s.src_row_stride = 2;
  return s;
}

// A pair from one base and an edit applied with illegal = false / true.
template <class T, class F>
RuleBoundary pair(T base, F edit) {
  T legal = base, illegal = base;
  edit(legal, false);
  edit(illegal, true);
  return RuleBoundary{legal, illegal};
}
int one(bool b) { return b ? 1 : 0; }

std::vector<RuleBoundary> b_in_id(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.in_id = t.banks - 1 + one(bad);
    c.dst_id = 0;
  };
  return {pair(conv_base(), edit), pair(dw_base(), edit)};
}
std::vector<RuleBoundary> b_sizes(const HwTarget&) {
  return {pair(conv_base(), [](ComputeInstr& c, bool bad) { c.in_groups = bad ? 0 : 1; }),
          pair(fc_base(), [](ComputeInstr& c, bool bad) { c.in_groups = bad ? 0 : 1; }),
          pair(pool_base(), [](ComputeInstr& c, bool bad) { c.in_groups = bad ? 0 : 1; }),
          pair(dw_base(), [](ComputeInstr& c, bool bad) {
            c.in_w = c.out_w = bad ? 0 : 1;  // 3 padded columns: one window
            c.pool_out_w = c.dst_row_stride = 1;
          })};
}
std::vector<RuleBoundary> b_fc_out_w(const HwTarget&) {
  return {pair(fc_base(), [](ComputeInstr& c, bool bad) { c.out_w = 1 + one(bad); })};
}
std::vector<RuleBoundary> b_fc_no_pool(const HwTarget&) {
  return {pair(fc_base(), [](ComputeInstr& c, bool bad) { c.pool_en = bad; })};
}
std::vector<RuleBoundary> b_pool_enable(const HwTarget&) {
  const auto edit = [](ComputeInstr& c, bool bad) { c.pool_en = !bad; };
  return {pair(pool_base(), edit), pair(dw_base(), edit)};
}
std::vector<RuleBoundary> b_pool_out_is_in(const HwTarget&) {
  return {pair(pool_base(), [](ComputeInstr& c, bool bad) { c.out_h = c.in_h + one(bad); }),
          pair(dw_base(), [](ComputeInstr& c, bool bad) { c.out_w = c.in_w - one(bad); })};
}
std::vector<RuleBoundary> b_dw_groups(const HwTarget&) {
  return {pair(dw_base(), [](ComputeInstr& c, bool bad) { c.in_groups = 1 + one(bad); })};
}
// A 2x2 stride 2 window over the 6x6 map: 3x3 in floor and in ceil mode, so
// only the mode is wrong.
std::vector<RuleBoundary> b_dw_floor(const HwTarget&) {
  return {pair(dw_base(), [](ComputeInstr& c, bool bad) {
    c.pool_k = c.pool_s = 2;
    c.pool_pad_top = c.pool_pad_left = c.pool_pad_bottom = c.pool_pad_right = 0;
    c.pool_out_h = c.pool_out_w = 3;
    c.dst_row_stride = 3;
    c.pool_ceil = bad;
  })};
}
std::vector<RuleBoundary> b_dw_pool_op(const HwTarget&) {
  return {pair(dw_base(), [](ComputeInstr& c, bool bad) {
    c.pool_op = bad ? isa::PoolOp::kAvg : isa::PoolOp::kMax;
  })};
}
std::vector<RuleBoundary> b_conv_kernel(const HwTarget& t) {
  return {pair(conv_base(), [&](ComputeInstr& c, bool bad) {
    c.in_h = t.max_kernel + 4;
    c.kernel_h = t.max_kernel + one(bad);
    c.pad_top = c.pad_bottom = 0;
    c.out_h = c.in_h - c.kernel_h + 1;
  })};
}
std::vector<RuleBoundary> b_conv_stride(const HwTarget&) {
  return {pair(conv_base(), [](ComputeInstr& c, bool bad) { c.stride_w = bad ? 0 : 1; })};
}
// One pair per padding field: that pad at kernel - 1 (legal) or kernel, the
// output size the pads give, so only the pad is wrong.
std::vector<RuleBoundary> b_conv_pad(const HwTarget&) {
  std::vector<RuleBoundary> out;
  for (int side = 0; side < 4; ++side) {
    out.push_back(pair(conv_base(), [side](ComputeInstr& c, bool bad) {
      const bool rows = side == 0 || side == 2;
      const int64_t p = (rows ? c.kernel_h : c.kernel_w) - 1 + one(bad);
      int64_t* pads[] = {&c.pad_top, &c.pad_left, &c.pad_bottom, &c.pad_right};
      *pads[side] = p;
      c.out_h = conv_out(c.in_h, c.kernel_h, c.stride_h, c.pad_top, c.pad_bottom);
      c.out_w = conv_out(c.in_w, c.kernel_w, c.stride_w, c.pad_left, c.pad_right);
      c.dst_row_stride = c.out_w;
    }));
  }
  return out;
}
// A 3-row (column) kernel over 3 - bad rows with the one padding row above
// (left of) or below (right of) the input, then none.
std::vector<RuleBoundary> b_conv_fits(const HwTarget&) {
  return {pair(conv_base(),
               [](ComputeInstr& c, bool bad) {
                 c.kernel_h = 3;
                 c.pad_top = 0;
                 c.pad_bottom = 0;
                 c.in_h = 3 - one(bad);
                 c.out_h = 1;
               }),
          pair(conv_base(),
               [](ComputeInstr& c, bool bad) {
                 c.kernel_h = 3;
                 c.pad_top = 1;
                 c.pad_bottom = 0;
                 c.in_h = 2 - one(bad);
                 c.out_h = 1;
               }),
          pair(conv_base(), [](ComputeInstr& c, bool bad) {
            c.kernel_w = 3;
            c.pad_left = 0;
            c.pad_right = 1;
            c.in_w = 2 - one(bad);
            c.out_w = 1;
            c.dst_row_stride = 1;
          })};
}
// Symmetric, then padding on one side only: the illegal size is the one the
// padding on the other side would give.
std::vector<RuleBoundary> b_conv_out_size(const HwTarget&) {
  return {pair(conv_base(), [](ComputeInstr& c, bool bad) { c.out_h += one(bad); }),
          pair(conv_base(),
               [](ComputeInstr& c, bool bad) {
                 c.pad_top = 0;  // rows: 6 + 0 + 1 - 3 + 1 = 5; 4 with no bottom row
                 c.out_h = bad ? 4 : 5;
               }),
          pair(conv_base(), [](ComputeInstr& c, bool bad) {
            c.kernel_w = 3;
            c.stride_w = 2;
            c.pad_left = 2;
            c.pad_right = 0;  // columns: (6 + 2 + 0 - 3) / 2 + 1 = 3; 4 with 2 on the right too
            c.out_w = bad ? 4 : 3;
            c.dst_row_stride = 4;
          })};
}
std::vector<RuleBoundary> b_in_range(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.in_base = t.bank_depth - in_words(c) + one(bad);
  };
  return {pair(conv_base(), edit), pair(fc_base(), edit), pair(pool_base(), edit),
          pair(dw_base(), edit)};
}
std::vector<RuleBoundary> b_cache_range(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.cache_base = t.pe_cache_depth - cache_words(c, t) + one(bad);
  };
  return {pair(conv_base(), edit), pair(fc_base(), edit), pair(dw_base(), edit)};
}
std::vector<RuleBoundary> b_param_range(const HwTarget& t) {
  return {pair(conv_base(),
               [&](ComputeInstr& c, bool bad) { c.param_base = t.param_depth - t.pes + one(bad); }),
          pair(fc_base(), [&](ComputeInstr& c,
                              bool bad) { c.param_base = t.param_depth - c.out_h + one(bad); }),
          pair(dw_base(), [&](ComputeInstr& c, bool bad) {
            c.param_base = t.param_depth - t.pes + one(bad);
          })};
}
std::vector<RuleBoundary> b_clamp(const HwTarget&) {
  const auto edit = [](ComputeInstr& c, bool bad) {
    c.clamp_lo = 5;
    c.clamp_hi = 5 - one(bad);
  };
  return {pair(conv_base(), edit), pair(fc_base(), edit), pair(dw_base(), edit)};
}
std::vector<RuleBoundary> b_act_table(const HwTarget& t) {
  // The last table, then one past it (on a build without tables: none, then table 0).
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.act_table_en = t.act_tables > 0 || bad;
    c.act_table = t.act_tables > 0 ? t.act_tables - 1 + one(bad) : 0;
  };
  return {pair(conv_base(), edit), pair(fc_base(), edit), pair(dw_base(), edit),
          pair(pool_base(), [](ComputeInstr& c, bool bad) { c.act_table_en = bad; })};
}
std::vector<RuleBoundary> b_pool_kernel(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.pool_k = t.max_pool_kernel + one(bad);
    c.pool_s = 1;
    c.pool_out_h = c.pool_out_w = 6 - c.pool_k + 1;
    c.dst_row_stride = c.pool_out_w;
    c.dst_group_stride = c.pool_out_h * c.pool_out_w;
  };
  ComputeInstr dw = dw_base();
  dw.pool_pad_top = dw.pool_pad_left = dw.pool_pad_bottom = dw.pool_pad_right = 0;
  return {pair(conv_pool_base(), edit), pair(pool_base(), edit), pair(dw, edit)};
}
std::vector<RuleBoundary> b_pool_stride(const HwTarget&) {
  return {pair(conv_pool_base(),
               [](ComputeInstr& c, bool bad) {
                 c.pool_s = bad ? 0 : 1;
                 c.pool_out_h = c.pool_out_w = bad ? 3 : 5;
                 c.dst_row_stride = c.pool_out_w;
               }),
          pair(dw_base(), [](ComputeInstr& c, bool bad) { c.pool_s = bad ? 0 : 1; })};
}
// One pair per padding field (that pad at pool_k - 1 or pool_k) with the
// size the pads give, so only the pad is wrong.
std::vector<RuleBoundary> b_pool_pad(const HwTarget&) {
  std::vector<RuleBoundary> out;
  for (const ComputeInstr& base : {conv_pool_base(), dw_base()}) {
    for (int side = 0; side < 4; ++side) {
      out.push_back(pair(base, [side](ComputeInstr& c, bool bad) {
        int64_t* pads[] = {&c.pool_pad_top, &c.pool_pad_left, &c.pool_pad_bottom,
                           &c.pool_pad_right};
        *pads[side] = c.pool_k - 1 + one(bad);
        c.pool_out_h = conv_out(6, c.pool_k, c.pool_s, c.pool_pad_top, c.pool_pad_bottom);
        c.pool_out_w = conv_out(6, c.pool_k, c.pool_s, c.pool_pad_left, c.pool_pad_right);
        c.dst_row_stride = c.pool_out_w;
      }));
    }
  }
  return out;
}
std::vector<RuleBoundary> b_pool_width(const HwTarget& t) {
  // A 1x1 convolution of a 2-row map max_image_width (+1) wide, pooled 1x1.
  return {pair(conv_pool_base(),
               [&](ComputeInstr& c, bool bad) {
                 c.in_groups = 1;
                 c.in_h = 2;
                 c.in_w = t.max_image_width + one(bad);
                 c.kernel_h = c.kernel_w = 1;
                 c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 0;
                 c.out_h = c.in_h;
                 c.out_w = c.in_w;
                 c.pool_k = c.pool_s = 1;
                 c.pool_out_h = c.out_h;
                 c.pool_out_w = c.out_w;
                 c.dst_row_stride = c.pool_out_w;
               }),
          pair(pool_base(),
               [&](ComputeInstr& c, bool bad) {
                 c.in_groups = 1;
                 c.in_h = c.out_h = 2;
                 c.in_w = c.out_w = t.max_image_width + one(bad);
                 c.pool_out_h = 1;
                 c.pool_out_w = c.in_w / 2;
                 c.dst_row_stride = c.pool_out_w;
               }),
          pair(dw_base(), [&](ComputeInstr& c, bool bad) {
            c.in_h = c.out_h = 2;
            c.in_w = c.out_w = t.max_image_width + one(bad);
            c.pool_out_h = 2;
            c.pool_out_w = c.in_w;
            c.dst_row_stride = c.pool_out_w;
          })};
}
std::vector<RuleBoundary> b_pool_fits(const HwTarget& t) {
  // A POOL of a (k-1) x (k-1) map with the largest window: pad 1 on every
  // side, or on one side of each dimension (bottom, left), makes it fit.
  const auto base = [&](ComputeInstr& c) {
    const int64_t k = t.max_pool_kernel;
    c.in_groups = 1;
    c.in_h = c.in_w = c.out_h = c.out_w = k - 1;
    c.pool_k = k;
    c.pool_s = 1;
  };
  return {pair(pool_base(),
               [&](ComputeInstr& c, bool bad) {
                 base(c);
                 const int64_t p = bad ? 0 : 1;
                 c.pool_pad_top = c.pool_pad_left = c.pool_pad_bottom = c.pool_pad_right = p;
                 c.pool_out_h = c.pool_out_w = bad ? 1 : 2;  // (k - 1 + 2 - k) / 1 + 1
                 c.dst_row_stride = c.pool_out_w;
                 c.dst_group_stride = c.pool_out_h * c.pool_out_w;
               }),
          pair(pool_base(),
               [&](ComputeInstr& c, bool bad) {
                 base(c);
                 c.pool_pad_bottom = bad ? 0 : 1;
                 c.pool_pad_left = 1;
                 c.pool_out_h = c.pool_out_w = 1;
                 c.dst_row_stride = 1;
                 c.dst_group_stride = 1;
               }),
          pair(dw_base(), [&](ComputeInstr& c, bool bad) {
            base(c);
            c.pool_pad_top = c.pool_pad_right = 0;
            c.pool_pad_bottom = bad ? 0 : 1;
            c.pool_pad_left = 1;
            c.pool_out_h = c.pool_out_w = 1;
            c.dst_row_stride = 1;
          })};
}
std::vector<RuleBoundary> b_post_clamp(const HwTarget&) {
  const auto edit = [](ComputeInstr& c, bool bad) {
    c.post_lo = 1;
    c.post_hi = 1 - one(bad);
  };
  return {pair(conv_pool_base(), edit), pair(pool_base(), edit)};
}
// Symmetric cases, then padding on one side only (the illegal size: the
// one without that padding, or in ceil mode with the last window starting
// past the input and the padding before it).
std::vector<RuleBoundary> b_pool_out(const HwTarget&) {
  return {pair(conv_pool_base(), [](ComputeInstr& c, bool bad) { c.pool_out_w += one(bad); }),
          pair(conv_pool_base(),
               [](ComputeInstr& c, bool bad) {
                 c.pool_k = 3;
                 c.pool_ceil = true;  // 6 -> 3 in ceil mode, 2 in floor mode
                 c.pool_out_h = c.pool_out_w = 3 - one(bad);
               }),
          pair(pool_base(), [](ComputeInstr& c, bool bad) { c.pool_out_h -= one(bad); }),
          pair(conv_pool_base(),
               [](ComputeInstr& c, bool bad) {
                 c.pool_k = 3;
                 c.pool_pad_bottom = 1;  // rows: (6 + 0 + 1 - 3) / 2 + 1 = 3; 2 without it
                 c.pool_out_h = 3 - one(bad);
                 c.pool_out_w = 2;
                 c.dst_row_stride = 2;
               }),
          pair(conv_pool_base(),
               [](ComputeInstr& c, bool bad) {
                 c.pool_ceil = true;
                 c.pool_pad_right = 1;  // columns: ceil((6 + 1 - 2) / 2) + 1 = 4, the last at 6: 3
                 c.pool_out_w = 3 + one(bad);
                 c.dst_row_stride = 4;
               }),
          pair(pool_base(),
               [](ComputeInstr& c, bool bad) {
                 c.pool_ceil = true;
                 c.pool_pad_top = 1;  // rows: ceil((6 + 1 - 2) / 2) + 1 = 4, the last at 5 < 6
                 c.pool_out_h = 4 - one(bad);
                 c.dst_group_stride = 12;
               }),
          pair(dw_base(), [](ComputeInstr& c, bool bad) { c.pool_out_w += one(bad); }),
          pair(dw_base(), [](ComputeInstr& c, bool bad) {
            c.pool_s = 2;
            c.pool_pad_top = c.pool_pad_left = 0;  // rows: (6 + 0 + 1 - 3) / 2 + 1 = 3; 2
            c.pool_out_h = 3 - one(bad);           // without the bottom row
            c.pool_out_w = 3;
            c.dst_row_stride = 3;
          })};
}
std::vector<RuleBoundary> b_dst_kind(const HwTarget& t) {
  return {pair(conv_base(),
               [&](ComputeInstr& c, bool bad) {
                 c.dst_kind = bad ? ComputeDst::kPeTranspose : ComputeDst::kPeCache;
                 c.dst_id = 0;
                 c.dst_base = t.pe_cache_depth / 2;
               }),
          pair(fc_base(),
               [&](ComputeInstr& c, bool bad) {
                 c.dst_kind = bad ? ComputeDst::kPeCache : ComputeDst::kPeTranspose;
                 c.dst_id = 0;
                 c.dst_base = t.pe_cache_depth / 2;
               }),
          pair(pool_base(),
               [&](ComputeInstr& c, bool bad) {
                 c.dst_kind = bad ? ComputeDst::kPeTranspose : ComputeDst::kPeCache;
                 c.dst_id = 0;
                 c.dst_base = t.pe_cache_depth / 2;
               }),
          pair(dw_base(), [&](ComputeInstr& c, bool bad) {
            c.dst_kind = bad ? ComputeDst::kPeCache : ComputeDst::kBank;
            c.dst_id = bad ? 0 : 1;
            c.dst_base = bad ? t.pe_cache_depth / 2 : 0;
          })};
}
std::vector<RuleBoundary> b_dst_bank(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) { c.dst_id = t.banks - 1 + one(bad); };
  return {pair(conv_base(), edit), pair(fc_base(), edit), pair(pool_base(), edit),
          pair(dw_base(), edit)};
}
std::vector<RuleBoundary> b_dst_bank_range(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.dst_base = 0;
    c.dst_base = t.bank_depth - dst_end(c, t.lanes) + one(bad);
  };
  // acc_out: rows of 4 x out_w words, also with a gap of 5 words between rows.
  ComputeInstr gaps = conv_acc_out_base();
  gaps.dst_row_stride += 5;
  return {pair(conv_base(), edit), pair(conv_pool_base(), edit), pair(fc_base(), edit),
          pair(pool_base(), edit), pair(dw_base(), edit),        pair(conv_acc_out_base(), edit),
          pair(gaps, edit),        pair(fc_acc_out_base(), edit)};
}
std::vector<RuleBoundary> b_dst_bank_overlap(const HwTarget&) {
  // The destination right after the input in the same bank, then one word into it.
  const auto edit = [](ComputeInstr& c, bool bad) {
    c.dst_id = c.in_id;
    c.dst_base = c.in_base + in_words(c) - one(bad);
  };
  // acc_out: the destination (4 words per pixel) right before the input, then
  // overlapping its first word (the requantised results would not reach it).
  const auto before = [](ComputeInstr& c, bool bad) {
    c.dst_id = c.in_id;
    c.dst_base = 0;
    c.in_base = dst_end(c, 0) - one(bad);
  };
  return {pair(conv_base(), edit),           pair(fc_base(), edit),
          pair(pool_base(), edit),           pair(dw_base(), edit),
          pair(conv_acc_out_base(), edit),   pair(fc_acc_out_base(), edit),
          pair(conv_acc_out_base(), before), pair(fc_acc_out_base(), before)};
}
std::vector<RuleBoundary> b_dst_pe(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.dst_kind = ComputeDst::kPeCache;
    c.dst_id = t.pes - 1 + one(bad);
    c.dst_base = t.pe_cache_depth / 2;
  };
  return {pair(conv_base(), edit), pair(pool_base(), edit)};
}
std::vector<RuleBoundary> b_transpose_lane(const HwTarget& t) {
  return {pair(fc_transpose_base(t), [](ComputeInstr& c, bool bad) { c.dst_lane = one(bad); })};
}
std::vector<RuleBoundary> b_dst_cache_range(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.dst_base = 0;
    c.dst_base = t.pe_cache_depth - dst_end(c, t.lanes) + one(bad);
  };
  ComputeInstr conv = conv_base(), pool = pool_base();
  conv.dst_kind = pool.dst_kind = ComputeDst::kPeCache;
  conv.dst_id = pool.dst_id = 0;
  return {pair(conv, edit), pair(pool, edit), pair(fc_transpose_base(t), edit)};
}
std::vector<RuleBoundary> b_dst_cache_overlap(const HwTarget& t) {
  // The destination right after the cached operand, then one word into it.
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.dst_base = c.cache_base + cache_words(c, t) - one(bad);
  };
  ComputeInstr conv = conv_base();
  conv.dst_kind = ComputeDst::kPeCache;
  conv.dst_id = 0;
  return {pair(conv, edit), pair(fc_transpose_base(t), edit)};
}
std::vector<RuleBoundary> b_packed_rows(const HwTarget& t) {
  // Dense builds: any packed CONV is refused; sparse builds: only CONV packs.
  if (!t.sparse) {
    return {pair(conv_base(), [&](ComputeInstr& c, bool bad) { c.packed_rows = one(bad); })};
  }
  return {pair(conv_base(), [&](ComputeInstr& c, bool bad) {
    c.packed_rows = 1;
    if (bad) {
      c = fc_base();
      c.packed_rows = 1;
    }
  })};
}
// One pair per flag (acc_in, acc_out) on a POOL and a DEPTHWISE, and on a
// sparse build a packed CONV: the flag off, then on.
std::vector<RuleBoundary> b_acc_mode(const HwTarget& t) {
  std::vector<ComputeInstr> bases = {pool_base(), dw_base()};
  if (t.sparse) {
    ComputeInstr packed = conv_base();
    packed.packed_rows = 1;
    bases.push_back(packed);
  }
  std::vector<RuleBoundary> out;
  for (const ComputeInstr& base : bases) {
    out.push_back(pair(base, [&](ComputeInstr& c, bool bad) {
      c.acc_in = bad;
      c.acc_id = t.banks - 1;
    }));
    out.push_back(pair(base, [](ComputeInstr& c, bool bad) { c.acc_out = bad; }));
  }
  return out;
}
// acc_out on a CONV without, then with, pooling; without, then with, a table
// lookup (CONV, FC; builds with tables); to a bank, then to the PE caches.
std::vector<RuleBoundary> b_acc_out(const HwTarget& t) {
  std::vector<RuleBoundary> out;
  ComputeInstr pooled = conv_pool_base();
  pooled.acc_out = true;
  pooled.dst_row_stride = 4 * pooled.out_w;
  out.push_back(RuleBoundary{conv_acc_out_base(), pooled});
  if (t.act_tables > 0) {
    const auto table = [&](ComputeInstr& c, bool bad) {
      c.act_table_en = bad;
      c.act_table = t.act_tables - 1;
    };
    out.push_back(pair(conv_acc_out_base(), table));
    out.push_back(pair(fc_acc_out_base(), table));
  }
  ComputeInstr to_cache = conv_base();
  to_cache.acc_out = true;
  to_cache.dst_kind = ComputeDst::kPeCache;
  to_cache.dst_id = 0;
  to_cache.dst_base = t.pe_cache_depth / 2;
  out.push_back(RuleBoundary{conv_acc_out_base(), to_cache});
  ComputeInstr transposed = fc_transpose_base(t);
  transposed.acc_out = true;
  out.push_back(RuleBoundary{fc_acc_out_base(), transposed});
  return out;
}
// acc_in from the last bank, then one past it; the partial sums above the
// results (bank 1) so that the last bank may be bank 1.
std::vector<RuleBoundary> b_acc_bank(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.acc_in = true;
    c.acc_id = t.banks - 1 + one(bad);
    c.acc_base = 64;
  };
  ComputeInstr cache = conv_base();
  cache.dst_kind = ComputeDst::kPeCache;
  cache.dst_id = 0;
  cache.dst_base = t.pe_cache_depth / 2;
  return {pair(conv_base(), edit), pair(conv_acc_out_base(), edit), pair(fc_base(), edit),
          pair(cache, edit), pair(fc_transpose_base(t), edit)};
}
// The partial sums ending at the last word of the last bank, then one word
// further (a 5 x 6 output: 30 pixels of 4 words).
std::vector<RuleBoundary> b_acc_range(const HwTarget& t) {
  const auto edit = [&](ComputeInstr& c, bool bad) {
    c.acc_in = true;
    c.acc_id = t.banks - 1;
    c.acc_base = t.bank_depth - 4 * acc_pixels(c) + one(bad);
  };
  ComputeInstr rect = conv_base();
  rect.pad_top = 0;
  rect.out_h = 5;
  ComputeInstr cache = conv_base();
  cache.dst_kind = ComputeDst::kPeCache;
  cache.dst_id = 0;
  cache.dst_base = t.pe_cache_depth / 2;
  return {pair(conv_base(), edit), pair(rect, edit),  pair(conv_acc_out_base(), edit),
          pair(fc_base(), edit),   pair(cache, edit), pair(fc_transpose_base(t), edit)};
}
// Partial sums in the results' bank: in place, then one word off it (or
// with a row stride other than 4 x out_w); right after the results, then
// one word into them; right before them, then overlapping their first word;
// in another bank, then in the results' bank.
std::vector<RuleBoundary> b_acc_overlap(const HwTarget&) {
  // A 4x4 output (16 pixels, 64 words of partial sums), results at word 80
  // of bank 1: room for the partial sums before and after them in 256 words.
  const auto acc = [](ComputeInstr c) {
    if (is_conv(c)) {
      c.in_h = c.in_w = c.out_h = c.out_w = 4;
      c.dst_row_stride = c.acc_out ? 16 : 4;
      if (c.pool_en) {
        c.pool_out_h = c.pool_out_w = 2;
        c.dst_row_stride = 2;
      }
    }
    c.acc_in = true;
    c.acc_id = c.dst_id;
    c.dst_base = 80;
    return c;
  };
  const ComputeInstr conv_io = acc(conv_acc_out_base()), fc_io = acc(fc_acc_out_base());
  const ComputeInstr conv_in = acc(conv_base()), fc_in = acc(fc_base());
  ComputeInstr pooled = acc(conv_pool_base());
  std::vector<RuleBoundary> out;
  for (const ComputeInstr& base : {conv_io, fc_io}) {
    out.push_back(
        pair(base, [](ComputeInstr& c, bool bad) { c.acc_base = c.dst_base + one(bad); }));
  }
  out.push_back(pair(conv_io, [](ComputeInstr& c, bool bad) {
    c.acc_base = c.dst_base;
    c.dst_row_stride = 4 * c.out_w + one(bad);
  }));
  for (const ComputeInstr& base : {conv_io, fc_io, conv_in, fc_in, pooled}) {
    out.push_back(pair(base, [](ComputeInstr& c, bool bad) {
      c.acc_base = dst_end(c, 0) - one(bad);  // dst_end's lanes: PE_TRANSPOSE only
    }));
    out.push_back(pair(base, [](ComputeInstr& c, bool bad) {
      c.acc_base = c.dst_base - 4 * acc_pixels(c) + one(bad);
    }));
  }
  out.push_back(pair(conv_io, [](ComputeInstr& c, bool bad) {
    c.acc_base = c.dst_base + 4;
    c.acc_id = bad ? c.dst_id : c.dst_id + 1;
  }));
  return out;
}
std::vector<RuleBoundary> b_load_control(const HwTarget& t) {
  if (!t.sparse) return {};  // LOAD CONTROL is undefined on a dense build (ILLEGAL_INSTR)
  return {pair(load_base(),
               [&](LoadInstr& l, bool bad) {
                 l.dst_kind = LoadDst::kControl;
                 l.dst_id = t.pes + one(bad);
               }),
          pair(load_base(), [&](LoadInstr& l, bool bad) {
            l.dst_kind = LoadDst::kControl;
            l.dst_id = bad ? t.pes : t.pes - 1;
            l.dst_pe_step = true;
          })};
}
std::vector<RuleBoundary> b_load_bank(const HwTarget& t) {
  return {pair(load_base(), [&](LoadInstr& l, bool bad) { l.dst_id = t.banks - 1 + one(bad); })};
}
std::vector<RuleBoundary> b_load_pe(const HwTarget& t) {
  return {pair(load_base(), [&](LoadInstr& l, bool bad) {
    l.dst_kind = LoadDst::kPeCache;
    l.dst_id = t.pes - 1 + one(bad);
  })};
}
std::vector<RuleBoundary> b_load_dst_range(const HwTarget& t) {
  return {pair(load_base(),
               [&](LoadInstr& l, bool bad) {
                 l.dst_addr =
                     t.bank_depth - (l.rows - 1) * l.dst_row_stride - l.row_words + one(bad);
               }),
          pair(load_base(),
               [&](LoadInstr& l, bool bad) {
                 l.dst_kind = LoadDst::kPeCache;
                 l.dst_pe_step = true;
                 l.rows = t.pes + 1;  // rows 0 and P go to PE 0: two rows deep
                 l.dst_addr = t.pe_cache_depth - l.dst_row_stride - l.row_words + one(bad);
               }),
          pair(load_base(), [&](LoadInstr& l, bool bad) {
            l.dst_kind = LoadDst::kParam;
            l.rows = 1;
            l.row_words = 8;
            l.dst_row_stride = 8;
            l.dst_addr = t.param_depth - l.row_words + one(bad);
          })};
}
std::vector<RuleBoundary> b_load_table(const HwTarget& t) {
  // Two rows of one word ending at the last table word, then one word further
  // (on a build without tables every LOAD TABLE is out of range: a BANK load
  // is the legal side).
  return {pair(load_base(), [&](LoadInstr& l, bool bad) {
    l.rows = 2;
    l.row_words = 1;
    l.dst_row_stride = 1;
    if (t.table_words() == 0 && !bad) return;
    l.dst_kind = LoadDst::kTable;
    l.dst_addr = std::max<int64_t>(0, t.table_words() - 2) + one(bad);
  })};
}
std::vector<RuleBoundary> b_store_bank(const HwTarget& t) {
  return {pair(store_base(), [&](StoreInstr& s, bool bad) { s.src_id = t.banks - 1 + one(bad); })};
}
std::vector<RuleBoundary> b_store_src_range(const HwTarget& t) {
  return {pair(store_base(), [&](StoreInstr& s, bool bad) {
    s.src_addr = t.bank_depth - (s.rows - 1) * s.src_row_stride - s.row_words + one(bad);
  })};
}
std::vector<RuleBoundary> b_ext_align(const HwTarget& t) {
  const int64_t beat = t.beat_bytes();
  return {pair(load_base(), [&](LoadInstr& l, bool bad) { l.ext_addr += bad ? beat / 2 : beat; }),
          pair(load_base(), [&](LoadInstr& l,
                                bool bad) { l.ext_row_stride = bad ? beat + beat / 2 : beat * 2; }),
          pair(store_base(), [&](StoreInstr& s, bool bad) { s.ext_addr += bad ? beat / 2 : beat; }),
          pair(store_base(), [&](StoreInstr& s, bool bad) {
            s.ext_row_stride = bad ? beat + beat / 2 : beat * 2;
          })};
}
std::vector<RuleBoundary> b_ext_range(const HwTarget& t) {
  // Two rows whose second ends at the top of the address space, then a beat past it.
  const int64_t top = int64_t{1} << t.axi_addr_width, beat = t.beat_bytes();
  const int64_t words = std::max<int64_t>(1, beat / t.lanes), stride = 64 * beat;
  const auto at = [&](bool bad) { return top - stride - words * t.lanes + (bad ? beat : 0); };
  return {pair(load_base(),
               [&](LoadInstr& l, bool bad) {
                 l.rows = 2;
                 l.row_words = words;
                 l.ext_row_stride = stride;
                 l.ext_addr = at(bad);
               }),
          pair(store_base(), [&](StoreInstr& s, bool bad) {
            s.rows = 2;
            s.row_words = words;
            s.ext_row_stride = stride;
            s.ext_addr = at(bad);
          })};
}
std::vector<RuleBoundary> b_param_shift(const HwTarget&) {
  return {RuleBoundary{ParamEntry{0, kMaxShift, 0}, ParamEntry{0, kMaxShift + 1, 0}},
          RuleBoundary{ParamEntry{0, 0, 0}, ParamEntry{0, 0, 1}}};
}

constexpr std::string_view kDecode = "strata_compute_decode";

const std::vector<TargetRule> kRules = {
    {"compute.in_id", "the streamed operand's bank exists", "COMPUTE: in_id", "banks", kDecode,
     in_id, b_in_id},
    {"compute.sizes", "the input has rows, columns and channel groups (FC: groups and neurons)",
     "COMPUTE: in_h, in_w, in_groups; FC: in_groups, out_h", "", kDecode, sizes, b_sizes},
    {"fc.out_w", "an FC computes one column", "COMPUTE FC: out_w", "", kDecode, fc_out_w,
     b_fc_out_w},
    {"fc.no_pool", "an FC does not pool", "COMPUTE FC: pool_en", "", kDecode, fc_no_pool,
     b_fc_no_pool},
    {"pool.enable", "a POOL or DEPTHWISE has pool_en set", "COMPUTE POOL, DEPTHWISE: pool_en", "",
     kDecode, pool_enable, b_pool_enable},
    {"pool.out_is_in", "a POOL's or DEPTHWISE's out_h, out_w repeat the input size",
     "COMPUTE POOL, DEPTHWISE: out_h, out_w", "", kDecode, pool_out_is_in, b_pool_out_is_in},
    {"depthwise.groups", "a DEPTHWISE reads one channel group", "COMPUTE DEPTHWISE: in_groups", "",
     kDecode, dw_groups, b_dw_groups},
    {"depthwise.floor", "a DEPTHWISE's windows use floor mode", "COMPUTE DEPTHWISE: pool_ceil", "",
     kDecode, dw_floor, b_dw_floor},
    {"depthwise.pool_op", "a DEPTHWISE has pool_op MAX (0)", "COMPUTE DEPTHWISE: pool_op", "",
     kDecode, dw_pool_op, b_dw_pool_op},
    {"conv.kernel", "the kernel fits the window generator", "COMPUTE CONV: kernel_h, kernel_w",
     "max_kernel", kDecode, conv_kernel, b_conv_kernel},
    {"conv.stride", "the stride is at least 1", "COMPUTE CONV: stride_h, stride_w", "", kDecode,
     conv_stride, b_conv_stride},
    {"conv.pad", "the padding is below the kernel",
     "COMPUTE CONV: pad_top, pad_left, pad_bottom, pad_right", "", kDecode, conv_pad, b_conv_pad},
    {"conv.fits", "the kernel fits the padded input", "COMPUTE CONV: in_h, in_w, kernel_*, pad_*",
     "", kDecode, conv_fits, b_conv_fits},
    {"conv.out_size", "out_h, out_w are floor((in + pad before + pad after - kernel) / stride) + 1",
     "COMPUTE CONV: out_h, out_w", "", kDecode, conv_out_size, b_conv_out_size},
    {"compute.in_range", "the streamed operand (map, or FC weights) lies inside its bank",
     "COMPUTE: in_base + words", "bank_depth", kDecode, in_range, b_in_range},
    {"compute.cache_range",
     "the cached operand (CONV weights, FC features, DEPTHWISE's B = "
     "ceil(max_pool_kernel^2 / N) weight words) lies inside the PE caches",
     "COMPUTE CONV, FC, DEPTHWISE: cache_base + words", "pe_cache_depth", kDecode, cache_range,
     b_cache_range},
    {"compute.param_range",
     "the output channels (CONV, DEPTHWISE: P; FC: out_h) lie inside the "
     "parameter RAM",
     "COMPUTE CONV, FC, DEPTHWISE: param_base", "param_depth", kDecode, param_range, b_param_range},
    {"compute.clamp", "the requantisation clamp has lo <= hi",
     "COMPUTE CONV, FC, DEPTHWISE: clamp_lo, clamp_hi", "", kDecode, clamp_order, b_clamp},
    {"compute.act_table",
     "a table lookup is on a CONV, FC or DEPTHWISE and names an existing "
     "activation table",
     "COMPUTE: act_table_en, act_table", "act_tables", kDecode, act_table, b_act_table},
    {"pool.kernel", "the pooling window (DEPTHWISE: the kernel) fits the pooling units",
     "COMPUTE CONV with pool_en, POOL, DEPTHWISE: pool_k", "max_pool_kernel", kDecode, pool_kernel,
     b_pool_kernel},
    {"pool.stride", "the pooling stride is at least 1",
     "COMPUTE CONV with pool_en, POOL, DEPTHWISE: pool_s", "", kDecode, pool_stride, b_pool_stride},
    {"pool.pad", "the pooling padding is below the window",
     "COMPUTE CONV with pool_en, POOL, "
     "DEPTHWISE: pool_pad_top, pool_pad_left, pool_pad_bottom, pool_pad_right",
     "", kDecode, pool_pad, b_pool_pad},
    {"pool.width", "a row of the pooling input fits the line buffer",
     "COMPUTE CONV with pool_en: out_w; POOL, DEPTHWISE: in_w", "max_image_width", kDecode,
     pool_width, b_pool_width},
    {"pool.fits", "the pooling window fits the padded input",
     "COMPUTE CONV with pool_en, POOL, "
     "DEPTHWISE: pool_k, pool_pad_*",
     "", kDecode, pool_fits, b_pool_fits},
    {"pool.post_clamp", "the post-pooling clamp has lo <= hi",
     "COMPUTE CONV with pool_en, POOL: post_lo, post_hi", "", kDecode, post_clamp_order,
     b_post_clamp},
    {"pool.out_size", "pool_out_h, pool_out_w follow from the input (floor or ceil mode)",
     "COMPUTE CONV with pool_en, POOL, DEPTHWISE: pool_out_h, pool_out_w", "", kDecode, pool_out,
     b_pool_out},
    {"compute.dst_kind",
     "the mode has the destination kind (PE_TRANSPOSE: FC only; PE_CACHE: "
     "CONV, POOL; DEPTHWISE: BANK only)",
     "COMPUTE: dst_kind", "", kDecode, dst_kind, b_dst_kind},
    {"compute.dst_bank", "the destination bank exists", "COMPUTE dst BANK: dst_id", "banks",
     kDecode, dst_bank, b_dst_bank},
    {"compute.dst_bank_range",
     "the results lie inside the destination bank (acc_out: CONV "
     "(out_h - 1) x dst_row_stride + 4 x out_w words, FC 4 x out_h words from dst_base)",
     "COMPUTE dst BANK: dst_base, dst_row_stride, dst_group_stride", "bank_depth", kDecode,
     dst_bank_range, b_dst_bank_range},
    {"compute.dst_bank_overlap",
     "results in the input's bank do not overlap the input (acc_out: "
     "the results' 4-word-per-pixel extent)",
     "COMPUTE dst BANK: dst_id, dst_base", "", kDecode, dst_bank_overlap, b_dst_bank_overlap},
    {"compute.dst_pe", "the destination PE exists", "COMPUTE CONV, POOL dst PE_CACHE: dst_id",
     "pes", kDecode, dst_pe, b_dst_pe},
    {"fc.transpose_lane", "transposed FC results start a PE-cache word (whole-word writes)",
     "COMPUTE FC dst PE_TRANSPOSE: dst_lane", "", kDecode, transpose_lane, b_transpose_lane},
    {"compute.dst_cache_range", "the results lie inside the PE caches",
     "COMPUTE dst PE_CACHE, PE_TRANSPOSE: dst_base, strides", "pe_cache_depth", kDecode,
     dst_cache_range, b_dst_cache_range},
    {"compute.dst_cache_overlap", "results in the PE caches do not overlap the cached operand",
     "COMPUTE CONV dst PE_CACHE, FC dst PE_TRANSPOSE: dst_base", "", kDecode, dst_cache_overlap,
     b_dst_cache_overlap},
    {"compute.packed_rows", "a packed schedule is a sparse build's CONV", "COMPUTE: packed_rows",
     "sparse", kDecode, packed_rows, b_packed_rows},
    {"compute.acc_mode",
     "partial sums (acc_in, acc_out) are a CONV's or an FC's, and not a "
     "packed CONV's (packed_rows = 0)",
     "COMPUTE: acc_in, acc_out", "", kDecode, acc_mode, b_acc_mode},
    {"compute.acc_out",
     "raw accumulators (acc_out) are neither pooled nor looked up, and go to "
     "a bank (pool_en = 0, act_table_en = 0, dst_kind BANK)",
     "COMPUTE CONV, FC with acc_out: pool_en, act_table_en, dst_kind", "", kDecode, acc_out,
     b_acc_out},
    {"compute.acc_bank", "the partial sums' bank exists", "COMPUTE CONV, FC with acc_in: acc_id",
     "banks", kDecode, acc_bank, b_acc_bank},
    {"compute.acc_range",
     "the partial sums (acc_base + 4 x out_h x out_w words; FC: out_w is 1) "
     "lie inside their bank",
     "COMPUTE CONV, FC with acc_in: acc_base", "bank_depth", kDecode, acc_range, b_acc_range},
    {"compute.acc_overlap",
     "partial sums in the results' bank do not overlap the results, "
     "unless read and written in place (acc_out, acc_base = dst_base, CONV: dst_row_stride = 4 "
     "x out_w)",
     "COMPUTE CONV, FC with acc_in, dst BANK: acc_id, acc_base, dst_id, dst_base, "
     "dst_row_stride",
     "", kDecode, acc_overlap, b_acc_overlap},
    {"load.control",
     "the control destination exists (PE < P, or the schedule at P without "
     "dst_pe_step)",
     "LOAD dst CONTROL: dst_id, dst_pe_step", "pes, sparse", "strata_load_engine", load_control,
     b_load_control},
    {"load.bank", "the destination bank exists", "LOAD dst BANK: dst_id", "banks",
     "strata_load_engine", load_bank, b_load_bank},
    {"load.pe", "the destination PE exists", "LOAD dst PE_CACHE: dst_id", "pes",
     "strata_load_engine", load_pe, b_load_pe},
    {"load.dst_range", "the rows lie inside the destination memory",
     "LOAD: dst_addr, dst_row_stride, rows, row_words", "bank_depth, pe_cache_depth, param_depth",
     "strata_load_engine", load_dst_range, b_load_dst_range},
    {"load.table",
     "the rows lie inside the activation-table memory (act_tables x 256 bytes "
     "in N-byte words)",
     "LOAD dst TABLE: dst_addr, dst_row_stride, rows, row_words", "act_tables",
     "strata_load_engine", load_table, b_load_table},
    {"store.bank", "the source bank exists", "STORE: src_id", "banks", "strata_store_engine",
     store_bank, b_store_bank},
    {"store.src_range", "the rows lie inside the source bank",
     "STORE: src_addr, src_row_stride, rows, row_words", "bank_depth", "strata_store_engine",
     store_src_range, b_store_src_range},
    {"ext.align", "external rows start on an AXI beat", "LOAD, STORE: ext_addr, ext_row_stride",
     "axi_data_width", "strata_load_engine, strata_store_engine", ext_align, b_ext_align},
    {"ext.range", "the external range fits the AXI address space",
     "LOAD, STORE: ext_addr, ext_row_stride, rows, row_words", "axi_addr_width",
     "strata_load_engine, strata_store_engine", ext_range, b_ext_range},
    {"param.shift", "a parameter entry's shift is at most max_shift and its byte 7 is zero",
     "LOAD PARAM: entry bytes 6, 7", "max_shift", "strata_load_engine", param_shift, b_param_shift},
};

}  // namespace

const std::vector<TargetRule>& target_rules() { return kRules; }

const TargetRule& target_rule(std::string_view id) {
  for (const TargetRule& r : kRules) {
    if (r.id == id) return r;
  }
  throw Error(fmt::format("no target rule '{}'", id));
}

std::string violation_message(const TargetRule& rule, const std::string& what) {
  if (rule.parameter.empty()) return fmt::format("{} [rule {}]", what, rule.id);
  return fmt::format("{}; bounded by {} in the hardware configuration [rule {}]", what,
                     rule.parameter, rule.id);
}

std::vector<RuleViolation> violations(const RuleSubject& s, const HwTarget& t) {
  std::vector<RuleViolation> out;
  for (const TargetRule& r : kRules) {
    if (auto what = r.check(s, t)) out.push_back({&r, violation_message(r, *what)});
  }
  return out;
}

std::optional<RuleViolation> first_violation(const RuleSubject& s, const HwTarget& t) {
  for (const TargetRule& r : kRules) {
    if (auto what = r.check(s, t)) return RuleViolation{&r, violation_message(r, *what)};
  }
  return std::nullopt;
}

std::string rules_markdown() {
  std::string s;
  s += "<!-- Generated from sw/src/target_rules.cpp by `strata rules --update docs/isa.md`; "
       "edit the table there. -->\n\n";
  s += "| Rule | Applies to | Requires | Bounded by | Refused by the RTL in |\n";
  s += "|---|---|---|---|---|\n";
  for (const TargetRule& r : kRules) {
    s +=
        fmt::format("| `{}` | {} | {} | {} | {} |\n", r.id, r.applies, r.description,
                    r.parameter.empty() ? std::string("— (ISA)") : fmt::format("`{}`", r.parameter),
                    r.rtl.empty() ? std::string("— (compiler and ISA simulator only)")
                                  : fmt::format("`{}`", r.rtl));
  }
  return s;
}

std::string with_rules_section(const std::string& doc) {
  const size_t b = doc.find(kRulesBegin);
  const size_t e = doc.find(kRulesEnd);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    throw Error(fmt::format("the document has no '{}' ... '{}' section", kRulesBegin, kRulesEnd));
  }
  const size_t from = b + kRulesBegin.size();
  return doc.substr(0, from) + "\n" + rules_markdown() + doc.substr(e);
}

}  // namespace strata
