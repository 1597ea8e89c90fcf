// SPDX-License-Identifier: Apache-2.0
// Decoder and checker of one COMPUTE instruction (CONV, FC, POOL, DEPTHWISE;
// docs/isa.md, COMPUTE and Errors): captures the instruction, checks every
// field against the configuration and derives the effective walk / write /
// pooling geometry of strata_compute_pkg::ce_cfg_t.
//
// Checks (code_o when done_o pulses; held until the next start):
//   ILLEGAL_INSTR: opcode not COMPUTE, a reserved bit set, mode or dst_kind
//     undefined, acq0_first > acq0.
//   UNSUPPORTED (per mode, as strata::IsaSim): in_id >= Banks; zero sizes;
//     kernel 0 or > MaxKernel, stride 0, pad >= kernel, kernel larger than the
//     padded input; out_h / out_w that do not follow from the input; input,
//     weight / feature, parameter and destination ranges past their memories;
//     clamp lo > hi; pooling window 0 or > MaxPoolKernel, pool stride 0, pool
//     pad >= window, pooling input wider than MaxImageWidth, pool_out_h /
//     pool_out_w that do not follow; a destination kind the mode does not
//     have; a destination that overlaps the streamed input (same bank) or the
//     cached operand;
//     DEPTHWISE: POOL's checks, and in_groups != 1, ceil mode, AVG, a
//     destination other than a bank;
//     packed_rows != 0 outside a sparse build's CONV (docs/sparsity.md);
//     partial sums (acc_in, acc_out) outside a dense CONV or FC; acc_out with
//     pooling, a table or a destination other than a bank; acc_in from a bank
//     that does not exist, past its bank's end, or overlapping the results
//     other than in place (docs/isa.md, "Partial sums");
//     act_table_en on a POOL, or act_table >= ActTables (rule
//     compute.act_table; the lookup travels to the requantiser in ce_cfg_t);
//     PE_TRANSPOSE with dst_lane != 0 (this implementation writes whole
//     PE-cache words; strata::IsaSim models the byte-masked write, the
//     compiler emits it only when fewer than N neurons fit a bank).
// No division anywhere: an output size m + 1 is checked as the pair of
// inequalities that define it (floor: m*s + k <= D < m*s + s + k with
// D = dim + pad_a + pad_b, the padding before and after; ceil: the window
// generator's "another window" rule).
// FC, POOL and DEPTHWISE leave as 1x1 convolutions (FC: an out_h x 1 image
// whose rows are in_groups words apart; POOL: in_groups x in_h rows of in_w
// words), so one walker serves every mode.
//
// Resources: ONE registered 17 x 17 multiplier (one DSP) computes the 17
// products of the checks and of the walk geometry in sequence, then a stage
// of sums (registered, so no adder chain feeds a compare chain in one
// cycle) and two compare stages. The multiplier's operands that need
// arithmetic (small products, "minus one", the mode's choices) are registers
// computed from the captured fields, and its operand multiplexer is an AND-OR
// with a one-hot step register.
// Latency: start_i to done_o = 17 + 2 + 3 + 1 = 23 cycles; negligible against
// the thousands of cycles of a layer.
`include "strata_assert.svh"

module strata_compute_decode
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
  import strata_compute_pkg::*;
#(
  parameter int unsigned Pes           = strata_cfg_pkg::Pes,            // P
  parameter int unsigned Lanes         = strata_cfg_pkg::Lanes,          // N
  parameter int unsigned Banks         = strata_cfg_pkg::Banks,          // banks
  parameter int unsigned BankDepth     = strata_cfg_pkg::BankDepth,      // words per bank
  parameter int unsigned PeCacheDepth  = strata_cfg_pkg::PeCacheDepth,   // words per PE cache
  parameter int unsigned ParamDepth    = strata_cfg_pkg::ParamDepth,     // parameter channels
  parameter int unsigned MaxKernel     = strata_cfg_pkg::MaxKernel,      // conv kernel side
  parameter int unsigned MaxPoolKernel = strata_cfg_pkg::MaxPoolKernel,  // pooling window side
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth,  // pooling input width
  parameter bit          Sparse        = strata_cfg_pkg::Sparse,         // packed CONV schedules
  parameter int unsigned ActTables     = strata_cfg_pkg::ActTables       // activation tables
) (
  input  logic      clk_i,    // clock
  input  logic      rst_ni,   // synchronous reset, active low
  input  logic      start_i,  // capture instr_i and check it (while idle)
  input  instr_t    instr_i,  // the instruction
  output logic      busy_o,   // checking
  output logic      done_o,   // pulse: code_o and cfg_o are valid (held until the next start)
  output err_code_e code_o,   // ErrNone, ErrIllegalInstr or ErrUnsupported
  output ce_cfg_t   cfg_o     // derived geometry (meaningful when code_o == ErrNone)
);

  localparam int unsigned NumSteps = 17;
  localparam int unsigned CntWidth = 5;
  localparam int unsigned OpWidth  = DimWidth + 1;  // product operands
  localparam int unsigned SumWidth  = WinWidth + 1;  // a sum of two window fields
  localparam int unsigned Sum3Width = WinWidth + 2;  // of three
  localparam int unsigned PWidth   = 2 * OpWidth;
  localparam int unsigned W        = PWidth + 2;    // comparison arithmetic
  localparam int unsigned LgLanes  = $clog2(Lanes);
  // DEPTHWISE: cache words of a channel's weights (the window's taps, N per word).
  localparam int unsigned DwBeats  = (MaxPoolKernel * MaxPoolKernel + Lanes - 1) / Lanes;

  typedef logic [W-1:0] wide_t;

  // Product slots.
  localparam int unsigned SPlane   = 0;   // in_h * in_w
  localparam int unsigned SVRows   = 1;   // POOL: G * in_h
  localparam int unsigned SKwg     = 2;   // kernel_w * G (effective)
  localparam int unsigned SRowOff0 = 3;   // pad_top * kernel_w * G
  localparam int unsigned SRowStep = 4;   // stride_h * kernel_w * G
  localparam int unsigned SColOff0 = 5;   // pad_left * G
  localparam int unsigned SColStep = 6;   // stride_w * G
  localparam int unsigned SRowAdv  = 7;   // stride_h * image row words
  localparam int unsigned SPadOff  = 8;   // pad_top * image row words
  localparam int unsigned SConvMh  = 9;   // (out_h - 1) * stride_h
  localparam int unsigned SConvMw  = 10;  // (out_w - 1) * stride_w
  localparam int unsigned SPoolMh  = 11;  // (pool_out_h - 1) * pool_s
  localparam int unsigned SPoolMw  = 12;  // (pool_out_w - 1) * pool_s
  localparam int unsigned SDstRows = 13;  // (result rows - 1) * dst_row_stride
  localparam int unsigned SDstGrps = 14;  // POOL: (G - 1) * dst_group_stride; else out_h * out_w
  localparam int unsigned STaps    = 15;  // kernel_h * kernel_w * G (FC: G)
  localparam int unsigned SInWords = 16;  // G * in_h * in_w (FC: out_h * G); after SPlane

  typedef enum logic [2:0] {
    StIdle,
    StMul,    // products in sequence
    StSum,    // end addresses and padded sizes
    StCmp1,   // individual checks
    StCmp2,   // combined code and geometry
    StDone    // done_o
  } state_e;

  state_e state_d, state_q;
  logic [CntWidth-1:0] cnt_d, cnt_q;

  // ---------------------------------------------------------------- captured fields
  // Opcode, reserved bits, mode, destination kind (follows illegal_part_q).
  logic        illegal_q;
  hdr_acq0_t   acq0_q;
  hdr_acq0_first_t acq0_first_q;
  logic        acq_order_q;         // acq0_first_q > acq0_q, from the cycle after the capture
  compute_mode_t     mode_q;
  compute_dst_kind_t dst_kind_q;
  compute_in_id_t    in_id_q;
  compute_dst_id_t   dst_id_q;
  compute_in_base_t  in_base_q;
  compute_in_h_t     in_h_q;
  compute_in_w_t     in_w_q;
  compute_in_groups_t groups_q;
  compute_out_h_t    out_h_q;
  compute_out_w_t    out_w_q;
  compute_cache_base_t cache_base_q;
  compute_param_base_t param_base_q;
  compute_pool_out_h_t pool_out_h_q;
  compute_pool_out_w_t pool_out_w_q;
  compute_dst_base_t   dst_base_q;
  compute_dst_row_stride_t dst_row_stride_q;
  compute_dst_group_stride_t dst_group_stride_q;
  compute_dst_lane_t dst_lane_q;
  compute_kernel_h_t kh_q;
  compute_kernel_w_t kw_q;
  compute_stride_h_t sh_q;
  compute_stride_w_t sw_q;
  compute_pool_k_t   pk_q;
  compute_pool_s_t   ps_q;
  compute_pad_top_t  pt_q;                  // CONV padding: top, left, bottom, right
  compute_pad_left_t pl_q;
  compute_pad_bottom_t pb_q;
  compute_pad_right_t pr_q;
  compute_pool_pad_top_t  ppt_q;            // pooling padding: top, left, bottom, right
  compute_pool_pad_left_t ppl_q;
  compute_pool_pad_bottom_t ppb_q;
  compute_pool_pad_right_t ppr_q;
  compute_clamp_lo_t clamp_lo_q;
  compute_clamp_hi_t clamp_hi_q;
  compute_post_lo_t  post_lo_q;
  compute_post_hi_t  post_hi_q;
  logic        pool_en_q, pool_avg_q, pool_ceil_q;
  logic        packed_q;            // packed_rows != 0
  logic        act_en_q;            // act_table_en
  compute_act_table_t act_table_q;  // act_table
  logic        u_act_q;             // a lookup on a POOL, or of a table the build lacks
  compute_packed_rows_t packed_rows_q;  // packed rows per output pixel (sparse builds)
  logic        acc_in_q, acc_out_q; // partial sums in, raw accumulators out
  compute_acc_id_t acc_id_q;        // bank of the partial sums
  compute_acc_base_t acc_base_q;    // their first word
  logic        u_acc_f_q;           // partial sums with a mode, pooling, table,
                                    // destination or bank that does not allow them

  // The fields are captured in every idle cycle, so also in the cycle of the
  // start, and held from then on: their enables (some 300 flip-flops) are a
  // flip-flop of their own (idle_q, asserted equal to the state decode), not
  // the start, which comes from the engine's instruction handshake: the
  // handshake LUT would be placed among these enables, a route there and one
  // back to the engine's ready in the same cycle.
  // Nothing reads them while idle: code_o and cfg_o are registers of their own.
  logic take, idle_q;
  assign take = start_i && state_q == StIdle;

  // The reserved bits are those of COMPUTE (any other opcode is illegal
  // anyway). They are captured as one OR per 64-bit instruction word plus one
  // for the opcode, mode and destination kind (illegal_part_q), and ORed into
  // illegal_q by a free-running register, read only in StCmp2 (asserted to
  // follow from the third StMul cycle): the instruction queue's read feeds at
  // most three LUT levels, not the 95-bit OR behind the read of the
  // fetcher's queue. acq0_first > acq0 is compared from the captured fields
  // (acq_order_q), not from instr_i: the queue's read feeds no comparator's
  // carry chain.
  localparam int unsigned InstrWords = InstrBits / 64;
  logic [InstrWords:0] illegal_part_d, illegal_part_q;

  always_comb begin
    for (int w = 0; w < InstrWords; w++) begin
      illegal_part_d[w] = (instr_i[64*w +: 64] & ~ComputeUsedMask[64*w +: 64]) != '0;
    end
    illegal_part_d[InstrWords] =
        hdr_opcode(instr_i) != OpCompute ||
        instr_i[ComputeModeLsb +: ComputeModeWidth] > ComputeModeDepthwise ||
        instr_i[ComputeDstKindLsb +: ComputeDstKindWidth] > ComputeDstPeTranspose;
  end

  always_ff @(posedge clk_i) begin
    illegal_q   <= |illegal_part_q;
    acq_order_q <= acq0_first_q > acq0_q;
  end

  always_ff @(posedge clk_i) begin
    if (idle_q) begin
      illegal_part_q     <= illegal_part_d;
      acq0_q             <= hdr_acq0(instr_i);
      acq0_first_q       <= hdr_acq0_first(instr_i);
      mode_q             <= instr_i[ComputeModeLsb +: ComputeModeWidth];
      dst_kind_q         <= instr_i[ComputeDstKindLsb +: ComputeDstKindWidth];
      in_id_q            <= compute_in_id(instr_i);
      in_base_q          <= compute_in_base(instr_i);
      in_h_q             <= compute_in_h(instr_i);
      in_w_q             <= compute_in_w(instr_i);
      groups_q           <= compute_in_groups(instr_i);
      kh_q               <= compute_kernel_h(instr_i);
      kw_q               <= compute_kernel_w(instr_i);
      sh_q               <= compute_stride_h(instr_i);
      sw_q               <= compute_stride_w(instr_i);
      pt_q               <= compute_pad_top(instr_i);
      pl_q               <= compute_pad_left(instr_i);
      pb_q               <= compute_pad_bottom(instr_i);
      pr_q               <= compute_pad_right(instr_i);
      out_h_q            <= compute_out_h(instr_i);
      out_w_q            <= compute_out_w(instr_i);
      cache_base_q       <= compute_cache_base(instr_i);
      param_base_q       <= compute_param_base(instr_i);
      clamp_lo_q         <= compute_clamp_lo(instr_i);
      clamp_hi_q         <= compute_clamp_hi(instr_i);
      pool_en_q          <= compute_pool_en(instr_i);
      pool_avg_q         <= compute_pool_op(instr_i) == PoolOpAvg;
      pool_ceil_q        <= compute_pool_ceil(instr_i);
      pk_q               <= compute_pool_k(instr_i);
      ps_q               <= compute_pool_s(instr_i);
      ppt_q              <= compute_pool_pad_top(instr_i);
      ppl_q              <= compute_pool_pad_left(instr_i);
      ppb_q              <= compute_pool_pad_bottom(instr_i);
      ppr_q              <= compute_pool_pad_right(instr_i);
      pool_out_h_q       <= compute_pool_out_h(instr_i);
      pool_out_w_q       <= compute_pool_out_w(instr_i);
      dst_id_q           <= compute_dst_id(instr_i);
      dst_base_q         <= compute_dst_base(instr_i);
      dst_row_stride_q   <= compute_dst_row_stride(instr_i);
      dst_group_stride_q <= compute_dst_group_stride(instr_i);
      dst_lane_q         <= compute_dst_lane(instr_i);
      packed_q           <= compute_packed_rows(instr_i) != '0;
      act_en_q           <= compute_act_table_en(instr_i);
      act_table_q        <= compute_act_table(instr_i);
      // Rule compute.act_table: only CONV, FC and DEPTHWISE look up a table,
      // and only one of the ActTables the build has (none when 0).
      u_act_q            <= compute_act_table_en(instr_i) &&
                            (compute_mode(instr_i) == ComputeModePool ||
                             32'(compute_act_table(instr_i)) >= ActTables);
      packed_rows_q      <= compute_packed_rows(instr_i);
      acc_in_q           <= compute_acc_in(instr_i);
      acc_out_q          <= compute_acc_out(instr_i);
      acc_id_q           <= compute_acc_id(instr_i);
      acc_base_q         <= compute_acc_base(instr_i);
      // Rules compute.acc_mode, compute.acc_out, compute.acc_bank.
      u_acc_f_q          <= ((compute_acc_in(instr_i) || compute_acc_out(instr_i)) &&
                             (compute_mode(instr_i) == ComputeModePool ||
                              compute_mode(instr_i) == ComputeModeDepthwise ||
                              compute_packed_rows(instr_i) != '0)) ||
                            (compute_acc_out(instr_i) &&
                             (compute_pool_en(instr_i) || compute_act_table_en(instr_i) ||
                              compute_dst_kind(instr_i) != ComputeDstBank)) ||
                            (compute_acc_in(instr_i) && 32'(compute_acc_id(instr_i)) >= Banks);
      post_lo_q          <= compute_post_lo(instr_i);
      post_hi_q          <= compute_post_hi(instr_i);
    end
  end

  // DEPTHWISE walks and windows its input as POOL does (one group), so
  // pool_walk stands for both wherever the geometry is POOL's.
  logic is_conv, is_fc, is_pool, is_dw, pool_walk, pooled;
  assign is_conv   = mode_q == ComputeModeConv;
  assign is_fc     = mode_q == ComputeModeFc;
  assign is_pool   = mode_q == ComputeModePool;
  assign is_dw     = mode_q == ComputeModeDepthwise;
  assign pool_walk = is_pool || is_dw;
  assign pooled    = pool_walk || (is_conv && pool_en_q);

  // Effective walk geometry (FC, POOL and DEPTHWISE are 1x1 convolutions). The walk
  // needs the top and left padding only: its taps end at the image's last
  // row and column, and out_h, out_w (checked) give the bottom and right.
  logic [WinWidth-1:0] kh_e, kw_e, sh_e, sw_e, pt_e, pl_e;
  logic [DimWidth-1:0] gw_e, inw_e, res_rows, res_cols;
  assign kh_e  = is_conv ? kh_q : WinWidth'(1);
  assign kw_e  = is_conv ? kw_q : WinWidth'(1);
  assign sh_e  = is_conv ? sh_q : WinWidth'(1);
  assign sw_e  = is_conv ? sw_q : WinWidth'(1);
  assign pt_e  = is_conv ? pt_q : WinWidth'(0);
  assign pl_e  = is_conv ? pl_q : WinWidth'(0);
  assign gw_e  = pool_walk ? DimWidth'(1) : groups_q;
  assign inw_e = is_fc ? groups_q : in_w_q;
  // Result rows / columns per group.
  assign res_rows = pooled ? pool_out_h_q : out_h_q;
  assign res_cols = pooled ? pool_out_w_q : out_w_q;

  // ---------------------------------------------------------------- shared multiplier
  logic [PWidth-1:0]  res_q [NumSteps];
  logic [OpWidth-1:0] op_a, op_b, op_a_q, op_b_q, plane_sat;
  logic [PWidth-1:0]  prod_q;

  assign plane_sat = (res_q[SPlane][PWidth-1:OpWidth] != '0) ? '1 : res_q[SPlane][OpWidth-1:0];

  // Operands that need arithmetic (small products, "minus one", the mode's
  // choices) are registered from the captured fields, so the operand
  // multiplexer only selects registers; the small products (kernel_h,
  // pad_top, stride_h times kernel_w) are DSP multipliers whose input and
  // output registers are the two register stages after the mode's choices.
  // They are valid from the third StMul cycle (cnt_q = 2); steps 0 and 1 use
  // captured fields only (asserted).
  logic [OpWidth-1:0] taps_k_q, row_off_k_q, row_step_k_q, kw_g_q, gw_e_q, inw_e_q, sh_e_q;
  logic [OpWidth-1:0] pt_e_q, pl_e_q, sw_e_q, conv_mh_a_q, conv_mw_a_q, pool_mh_a_q;
  logic [OpWidth-1:0] pool_mw_a_q, dst_rows_a_q, dst_grps_a_q, dst_grps_b_q, in_words_a_q;
  logic        derived1_q;    // the first stage follows the captured fields
  logic        derived_ok_q;  // every register above follows them

  always_ff @(posedge clk_i) begin
    kw_g_q          <= OpWidth'(kw_e);
    gw_e_q          <= OpWidth'(gw_e);
    inw_e_q         <= OpWidth'(inw_e);
    sh_e_q          <= OpWidth'(sh_e);
    pt_e_q          <= OpWidth'(pt_e);
    pl_e_q          <= OpWidth'(pl_e);
    sw_e_q          <= OpWidth'(sw_e);
    conv_mh_a_q     <= OpWidth'(out_h_q - DimWidth'(1));
    conv_mw_a_q     <= OpWidth'(out_w_q - DimWidth'(1));
    pool_mh_a_q     <= OpWidth'(pool_out_h_q - DimWidth'(1));
    pool_mw_a_q     <= OpWidth'(pool_out_w_q - DimWidth'(1));
    dst_rows_a_q    <= is_fc ? '0 : OpWidth'(res_rows - DimWidth'(1));
    // POOL: (G - 1) * dst_group_stride; CONV, FC: out_h * out_w, the pixels
    // whose partial sums acc_in reads (the result groups are POOL's only).
    dst_grps_a_q    <= pool_walk ? OpWidth'(groups_q - DimWidth'(1)) : OpWidth'(out_h_q);
    dst_grps_b_q    <= pool_walk ? OpWidth'(dst_group_stride_q) : OpWidth'(out_w_q);
    in_words_a_q    <= is_fc ? OpWidth'(out_h_q) : OpWidth'(groups_q);
  end

  // The small products are DSP multipliers with their input and output
  // registers (strata_dsp_mul) fed from the mode's choices: two register
  // stages (a register of the choice, then of the product), and a DSP placed
  // far from the decoder is reached and left register to register, never a
  // route to the DSP and one back in the same cycle.
  // Product k: small_a[k] * kw_e; 0 taps (kernel_h, 0 for POOL), 1 row
  // offset (pad_top), 2 row step (stride_h).
  logic [2:0][WinWidth-1:0]   small_a;
  logic [2:0][2*WinWidth-1:0] small_p;
  assign small_a = {sh_e, pt_e, pool_walk ? WinWidth'(0) : kh_e};

  for (genvar k = 0; k < 3; k++) begin : g_small_mul
    strata_dsp_mul #(
      .AWidth (4), .BWidth (4), .ASigned (1'b0), .BSigned (1'b0)
    ) u_mul (
      .clk_i    (clk_i),
      .ce_in_i  (1'b1),
      .ce_out_i (1'b1),
      .a_i      (small_a[k]),
      .b_i      (kw_e),
      .p_o      (small_p[k])
    );
  end

  assign taps_k_q     = OpWidth'(small_p[0]);
  assign row_off_k_q  = OpWidth'(small_p[1]);
  assign row_step_k_q = OpWidth'(small_p[2]);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      derived1_q   <= 1'b0;
      derived_ok_q <= 1'b0;
    end else begin
      derived1_q   <= !idle_q;
      derived_ok_q <= derived1_q && !idle_q;
    end
  end

  // The operand multiplexer is an AND-OR of the captured and registered
  // sources with a one-hot step register (step_q, asserted to decode cnt_q),
  // loaded from the next count: no decoder of cnt_q is in series with the
  // choice (a decoder of cnt_q in front would make it several LUT levels deep).
  // The SInWords operand (the saturated plane product or, for FC, the groups)
  // is a register of its own: the plane product is ready from the fourth
  // StMul cycle, so in_words_b_q follows it from the sixth (asserted).
  logic [NumSteps-1:0] step_d, step_q;
  logic [OpWidth-1:0]  src_a [NumSteps];
  logic [OpWidth-1:0]  src_b [NumSteps];
  logic [OpWidth-1:0]  plane_sat_q, in_words_b_q;

  always_ff @(posedge clk_i) begin
    plane_sat_q  <= plane_sat;
    in_words_b_q <= is_fc ? OpWidth'(groups_q) : plane_sat_q;
  end

  always_comb begin
    src_a[SPlane]   = OpWidth'(in_h_q);   src_b[SPlane]   = OpWidth'(in_w_q);
    src_a[STaps]    = taps_k_q;      src_b[STaps]    = OpWidth'(groups_q);
    src_a[SKwg]     = kw_g_q;        src_b[SKwg]     = gw_e_q;
    src_a[SRowOff0] = row_off_k_q;   src_b[SRowOff0] = gw_e_q;
    src_a[SRowStep] = row_step_k_q;  src_b[SRowStep] = gw_e_q;
    src_a[SColOff0] = pl_e_q;        src_b[SColOff0] = gw_e_q;
    src_a[SColStep] = sw_e_q;        src_b[SColStep] = gw_e_q;
    src_a[SRowAdv]  = sh_e_q;        src_b[SRowAdv]  = inw_e_q;
    src_a[SPadOff]  = pt_e_q;        src_b[SPadOff]  = inw_e_q;
    src_a[SConvMh]  = conv_mh_a_q;   src_b[SConvMh]  = OpWidth'(sh_q);
    src_a[SConvMw]  = conv_mw_a_q;   src_b[SConvMw]  = OpWidth'(sw_q);
    src_a[SPoolMh]  = pool_mh_a_q;   src_b[SPoolMh]  = OpWidth'(ps_q);
    src_a[SPoolMw]  = pool_mw_a_q;   src_b[SPoolMw]  = OpWidth'(ps_q);
    src_a[SDstRows] = dst_rows_a_q;  src_b[SDstRows] = OpWidth'(dst_row_stride_q);
    src_a[SDstGrps] = dst_grps_a_q;  src_b[SDstGrps] = dst_grps_b_q;
    src_a[SVRows]   = OpWidth'(groups_q); src_b[SVRows]   = OpWidth'(in_h_q);
    src_a[SInWords] = in_words_a_q;  src_b[SInWords] = in_words_b_q;
  end

  always_comb begin
    op_a = '0;
    op_b = '0;
    for (int k = 0; k < NumSteps; k++) begin
      op_a |= step_q[k] ? src_a[k] : '0;
      op_b |= step_q[k] ? src_b[k] : '0;
    end
  end

  // Registered operands and product (the DSP's input and output registers).
  always_ff @(posedge clk_i) begin
    op_a_q <= op_a;
    op_b_q <= op_b;
    prod_q <= op_a_q * op_b_q;
  end

  // The product of step k is in prod_q two cycles after cnt_q == k.
  always_ff @(posedge clk_i) begin
    if (state_q == StMul && cnt_q >= CntWidth'(2)) res_q[cnt_q - CntWidth'(2)] <= prod_q;
  end

  // ---------------------------------------------------------------- checks (stage 1)
  function automatic wide_t wd(logic [PWidth-1:0] v);
    return W'(v);
  endfunction

  logic [OpWidth-1:0] plane;
  wide_t taps, conv_mh, conv_mw, pool_mh, pool_mw, dst_rows, dst_grps, in_words;
  wide_t in_end, dst_end, fc_words, cache_end, acc_end;
  wide_t dh2, dw2, ph_dim, pw_dim, pool_h2, pool_w2;
  logic [DimWidth-1:0] pool_dim_h, pool_dim_w;

  assign plane    = res_q[SPlane][OpWidth-1:0];  // walk: only used when it fits (checked)
  assign taps     = wd(res_q[STaps]);
  assign conv_mh  = wd(res_q[SConvMh]);
  assign conv_mw  = wd(res_q[SConvMw]);
  assign pool_mh  = wd(res_q[SPoolMh]);
  assign pool_mw  = wd(res_q[SPoolMw]);
  assign dst_rows = wd(res_q[SDstRows]);
  assign dst_grps = wd(res_q[SDstGrps]);
  assign in_words = wd(res_q[SInWords]);
  assign in_end   = W'(in_base_q) + in_words;
  assign acc_end  = W'(acc_base_q) + (dst_grps << 2);  // acc_in: 4 words per pixel
  assign fc_words = (W'(out_h_q) + W'(Lanes) - W'(1)) >> LgLanes;
  // A packed CONV caches its packed rows, not the dense taps x groups.
  assign cache_end = W'(cache_base_q) + (is_fc ? W'(groups_q) : is_dw ? W'(DwBeats) :
                                         (Sparse && packed_q) ? W'(packed_rows_q) : taps);
  // dst_end = dst_base + (FC: the words written; else the products + the
  // result columns). The part that needs only captured fields is a register
  // (like the operands above), so the mode's choices and the first addition
  // are not in series with the products' sum in StSum.
  wide_t dst_head, dst_head_q;
  // acc_out: 4 words per result.
  assign dst_head = W'(dst_base_q) +
                    (!is_fc ? (acc_out_q ? W'(res_cols) << 2 : W'(res_cols)) :
                     (dst_kind_q == ComputeDstPeTranspose) ? fc_words :
                     acc_out_q ? W'(out_h_q) << 2 : W'(out_h_q));
  always_ff @(posedge clk_i) begin
    dst_head_q <= dst_head;
  end
  assign dst_end = is_fc ? dst_head_q : dst_head_q + (pool_walk ? dst_grps : '0) + dst_rows;

  // Padded sizes and the other sums of captured fields only: free-running
  // registers like dst_head_q (the fields are stable for the 20 cycles before
  // StSum), so no adder of them is in series with a later stage. The pooling
  // unit's sizes take two stages, like the operands above (valid with
  // derived_ok_q): the mode's choice of the pooled size and the sum of the
  // padding and stride are registered first, so each sum below is one carry
  // chain between registers, never the mode's choice and two carry chains in
  // series. A padded size adds the padding before and after (top and bottom,
  // left and right); the pooling pads' sums are first-stage registers of
  // their own (pp_tb_q, pp_lr_q), so the second stage still adds two operands.
  wide_t dh2_q, dw2_q, ph_dim_q, pw_dim_q, pool_h2_q, pool_w2_q, pool_h2_s_q, pool_w2_s_q;
  wide_t param_end_q;
  logic [SumWidth-1:0] conv_skh_q, conv_skw_q, pool_sk_q;  // stride + kernel
  logic [DimWidth-1:0] pool_dim_h_q, pool_dim_w_q;
  logic [SumWidth-1:0]  pp_tb_q, pp_lr_q;      // pooling pads: top + bottom, left + right
  logic [Sum3Width-1:0] pp_tb_s_q, pp_lr_s_q;  // the same + the pooling stride
  assign pool_dim_h = is_conv ? out_h_q : in_h_q;
  assign pool_dim_w = is_conv ? out_w_q : in_w_q;
  assign dh2     = W'(in_h_q) + W'(pt_q) + W'(pb_q);
  assign dw2     = W'(in_w_q) + W'(pl_q) + W'(pr_q);
  // ph_dim .. pool_w2: the pooled sizes' definitions from the captured fields,
  // which decode_derived_exact checks the two-stage registers against (no
  // logic reads them, so synthesis removes them). ph_dim, pw_dim: the input
  // and the padding before it, where the last window must start (ceil mode).
  assign ph_dim  = W'(pool_dim_h) + W'(ppt_q);
  assign pw_dim  = W'(pool_dim_w) + W'(ppl_q);
  assign pool_h2 = W'(pool_dim_h) + W'(ppt_q) + W'(ppb_q);
  assign pool_w2 = W'(pool_dim_w) + W'(ppl_q) + W'(ppr_q);

  always_ff @(posedge clk_i) begin
    pool_dim_h_q <= pool_dim_h;
    pool_dim_w_q <= pool_dim_w;
    pp_tb_q      <= SumWidth'(ppt_q) + SumWidth'(ppb_q);
    pp_lr_q      <= SumWidth'(ppl_q) + SumWidth'(ppr_q);
    pp_tb_s_q    <= Sum3Width'(ppt_q) + Sum3Width'(ppb_q) + Sum3Width'(ps_q);
    pp_lr_s_q    <= Sum3Width'(ppl_q) + Sum3Width'(ppr_q) + Sum3Width'(ps_q);
    dh2_q        <= dh2;
    dw2_q        <= dw2;
    ph_dim_q     <= W'(pool_dim_h_q) + W'(ppt_q);
    pw_dim_q     <= W'(pool_dim_w_q) + W'(ppl_q);
    pool_h2_q    <= W'(pool_dim_h_q) + W'(pp_tb_q);
    pool_w2_q    <= W'(pool_dim_w_q) + W'(pp_lr_q);
    pool_h2_s_q  <= W'(pool_dim_h_q) + W'(pp_tb_s_q);
    pool_w2_s_q  <= W'(pool_dim_w_q) + W'(pp_lr_s_q);
    param_end_q  <= W'(param_base_q) + (is_fc ? W'(out_h_q) : W'(Pes));
    conv_skh_q   <= SumWidth'(sh_q) + SumWidth'(kh_q);
    conv_skw_q   <= SumWidth'(sw_q) + SumWidth'(kw_q);
    pool_sk_q    <= SumWidth'(ps_q) + SumWidth'(pk_q);
  end

  // Output size m + 1 of a floor-mode window walk over a padded size d2, from
  // ms_k = m*s + k and ms_sk = m*s + s + k.
  // (The count m + 1 is not 0: checked with the fields, uf_*_q below.)
  function automatic logic floor_ok(wide_t ms_k, wide_t ms_sk, wide_t d2);
    return ms_k <= d2 && ms_sk > d2;
  endfunction

  // Ceil mode (strata_window_gen's rule: window m exists, window m + 1 not),
  // from ms = m*s, ms_k = m*s + k, ms_s = m*s + s, d1 = dim + the padding
  // before (a window starts below it), d2 = dim + both paddings and d2_s =
  // d2 + s; one: the count m + 1 is 1.
  function automatic logic ceil_ok(logic one, wide_t ms, wide_t ms_k, wide_t ms_s,
                                   wide_t d1, wide_t d2, wide_t d2_s);
    logic exists, next;
    exists = one || (ms_k < d2_s && ms < d1);
    next   = ms_k < d2 && ms_s < d1;
    return exists && !next;
  endfunction

  // The checks of captured fields alone, as free-running registers like
  // dh2_q: the checks of StCmp1 OR them with comparisons of registers, so no
  // captured field (some reach 40 sinks across the decoder) is in series
  // with a comparison's carry chain. Two stages (two groups of terms each,
  // then their OR), like the small products: valid with derived_ok_q.
  logic [2:0] uf_conv, uf_pool;
  logic [1:0] uf_fc, uf_pool_mode, uf_dw;
  logic [2:0] uf_conv_t_q, uf_pool_t_q;
  logic [1:0] uf_fc_t_q, uf_pool_mode_t_q, uf_dw_t_q;
  logic uf_conv_q, uf_fc_q, uf_pool_mode_q, uf_pool_q, uf_dw_q, pool_h_one_q, pool_w_one_q;

  always_comb begin
    uf_conv[0] = in_h_q == '0 || in_w_q == '0 || groups_q == '0 || out_h_q == '0 ||
                 out_w_q == '0;
    uf_conv[1] = kh_q == '0 || 32'(kh_q) > MaxKernel || kw_q == '0 || 32'(kw_q) > MaxKernel ||
                 sh_q == '0 || sw_q == '0 || clamp_lo_q > clamp_hi_q;
    uf_conv[2] = pt_q >= kh_q || pb_q >= kh_q || pl_q >= kw_q || pr_q >= kw_q;
    uf_fc[0] = groups_q == '0 || out_h_q == '0 || out_w_q != DimWidth'(1);
    uf_fc[1] = pool_en_q || clamp_lo_q > clamp_hi_q;
    uf_pool_mode[0] = in_h_q == '0 || in_w_q == '0 || groups_q == '0 || !pool_en_q;
    uf_pool_mode[1] = out_h_q != in_h_q || out_w_q != in_w_q;
    uf_pool[0] = pk_q == '0 || 32'(pk_q) > MaxPoolKernel || ps_q == '0 ||
                 post_lo_q > post_hi_q;
    uf_pool[1] = 32'(pool_dim_w) > MaxImageWidth || pool_out_h_q == '0 || pool_out_w_q == '0;
    uf_pool[2] = ppt_q >= pk_q || ppb_q >= pk_q || ppl_q >= pk_q || ppr_q >= pk_q;
    // DEPTHWISE beyond POOL's fields: one group, floor mode, the MAX code,
    // the requantisation clamp, results to a bank.
    uf_dw[0] = groups_q != DimWidth'(1) || pool_ceil_q || pool_avg_q;
    uf_dw[1] = clamp_lo_q > clamp_hi_q || dst_kind_q != ComputeDstBank;
  end

  always_ff @(posedge clk_i) begin
    uf_conv_t_q      <= uf_conv;
    uf_fc_t_q        <= uf_fc;
    uf_pool_mode_t_q <= uf_pool_mode;
    uf_pool_t_q      <= uf_pool;
    uf_dw_t_q        <= uf_dw;
    uf_conv_q        <= |uf_conv_t_q;
    uf_fc_q          <= |uf_fc_t_q;
    uf_pool_mode_q   <= |uf_pool_mode_t_q;
    uf_pool_q        <= |uf_pool_t_q;
    uf_dw_q          <= |uf_dw_t_q;
    pool_h_one_q     <= pool_out_h_q == DimWidth'(1);
    pool_w_one_q     <= pool_out_w_q == DimWidth'(1);
  end

  function automatic logic overlap(wide_t a0, wide_t a1, wide_t b0, wide_t b1);
    return a0 < b1 && b0 < a1;
  endfunction

  // The sums with a product, registered in StSum: the checks of StCmp1
  // compare registers.
  wide_t in_end_q, dst_end_q, cache_end_q, acc_end_q;
  wide_t conv_mh_k_q, conv_mh_sk_q, conv_mw_k_q, conv_mw_sk_q;
  wide_t pool_mh_q, pool_mh_k_q, pool_mh_s_q, pool_mh_sk_q;
  wide_t pool_mw_q, pool_mw_k_q, pool_mw_s_q, pool_mw_sk_q;

  always_ff @(posedge clk_i) begin
    if (state_q == StSum) begin
      in_end_q     <= in_end;
      dst_end_q    <= dst_end;
      cache_end_q  <= cache_end;
      acc_end_q    <= acc_end;
      conv_mh_k_q  <= conv_mh + W'(kh_q);
      conv_mh_sk_q <= conv_mh + W'(conv_skh_q);
      conv_mw_k_q  <= conv_mw + W'(kw_q);
      conv_mw_sk_q <= conv_mw + W'(conv_skw_q);
      pool_mh_q    <= pool_mh;
      pool_mh_k_q  <= pool_mh + W'(pk_q);
      pool_mh_s_q  <= pool_mh + W'(ps_q);
      pool_mh_sk_q <= pool_mh + W'(pool_sk_q);
      pool_mw_q    <= pool_mw;
      pool_mw_k_q  <= pool_mw + W'(pk_q);
      pool_mw_s_q  <= pool_mw + W'(ps_q);
      pool_mw_sk_q <= pool_mw + W'(pool_sk_q);
    end
  end

  logic u_in_id, u_conv, u_fc, u_pool_mode, u_pool, u_dw, u_dst, u_acc;
  logic u_in_id_q, u_conv_q, u_fc_q, u_pool_mode_q, u_pool_q, u_dw_q, u_dst_q, u_acc_q;

  // acc_in reading the results' own range in place (acc_out, same start,
  // CONV rows 4 * out_w words apart: pixel i's words are read before they
  // are written, and no later pixel's are written first); a free-running
  // register of captured fields, like dh2_q.
  logic acc_in_place_q;
  always_ff @(posedge clk_i) begin
    acc_in_place_q <= acc_out_q && acc_base_q == dst_base_q &&
                      (is_fc || (DimWidth + 2)'(dst_row_stride_q) == {out_w_q, 2'b00});
  end

  always_comb begin
    u_in_id = 32'(in_id_q) >= Banks;

    // CONV geometry and operand ranges.
    u_conv = uf_conv_q || W'(kh_q) > dh2_q || W'(kw_q) > dw2_q ||
             !floor_ok(conv_mh_k_q, conv_mh_sk_q, dh2_q) ||
             !floor_ok(conv_mw_k_q, conv_mw_sk_q, dw2_q) ||
             in_end_q > W'(BankDepth) || cache_end_q > W'(PeCacheDepth) ||
             param_end_q > W'(ParamDepth);

    // FC.
    u_fc = uf_fc_q || in_end_q > W'(BankDepth) || cache_end_q > W'(PeCacheDepth) ||
           param_end_q > W'(ParamDepth);

    // POOL's own fields (DEPTHWISE's too).
    u_pool_mode = uf_pool_mode_q || in_end_q > W'(BankDepth);

    // DEPTHWISE's weights and parameters.
    u_dw = uf_dw_q || cache_end_q > W'(PeCacheDepth) || param_end_q > W'(ParamDepth);

    // The pooling unit (CONV with pool_en, POOL).
    u_pool = uf_pool_q || W'(pk_q) > pool_h2_q || W'(pk_q) > pool_w2_q;
    if (pool_ceil_q) begin
      u_pool = u_pool || !ceil_ok(pool_h_one_q, pool_mh_q, pool_mh_k_q, pool_mh_s_q, ph_dim_q,
                                  pool_h2_q, pool_h2_s_q) ||
                         !ceil_ok(pool_w_one_q, pool_mw_q, pool_mw_k_q, pool_mw_s_q, pw_dim_q,
                                  pool_w2_q, pool_w2_s_q);
    end else begin
      u_pool = u_pool || !floor_ok(pool_mh_k_q, pool_mh_sk_q, pool_h2_q) ||
                         !floor_ok(pool_mw_k_q, pool_mw_sk_q, pool_w2_q);
    end

    // Destination: kind allowed for the mode, index, range, no overlap.
    u_dst = 1'b0;
    unique case (dst_kind_q)
      ComputeDstBank: begin
        u_dst = 32'(dst_id_q) >= Banks || dst_end_q > W'(BankDepth) ||
                (dst_id_q == in_id_q &&
                 overlap(W'(dst_base_q), dst_end_q, W'(in_base_q), in_end_q));
      end
      ComputeDstPeCache: begin
        u_dst = is_fc || 32'(dst_id_q) >= Pes || dst_end_q > W'(PeCacheDepth) ||
                (is_conv && overlap(W'(dst_base_q), dst_end_q, W'(cache_base_q), cache_end_q));
      end
      ComputeDstPeTranspose: begin
        // dst_lane != 0 (a tile continuing a word mid-way) needs byte-masked
        // PE-cache writes, which this implementation does not have.
        u_dst = !is_fc || dst_lane_q != '0 || dst_end_q > W'(PeCacheDepth) ||
                overlap(W'(dst_base_q), dst_end_q, W'(cache_base_q), cache_end_q);
      end
      default: u_dst = 1'b1;
    endcase

    // Partial sums: rules compute.acc_range and compute.acc_overlap (the
    // others are field checks, u_acc_f_q).
    u_acc = u_acc_f_q ||
            (acc_in_q && (acc_end_q > W'(BankDepth) ||
                          (dst_kind_q == ComputeDstBank && acc_id_q == dst_id_q &&
                           !acc_in_place_q &&
                           overlap(W'(acc_base_q), acc_end_q, W'(dst_base_q), dst_end_q))));
  end

  always_ff @(posedge clk_i) begin
    if (state_q == StCmp1) begin
      u_in_id_q     <= u_in_id;
      u_conv_q      <= u_conv;
      u_fc_q        <= u_fc;
      u_pool_mode_q <= u_pool_mode;
      u_pool_q      <= u_pool;
      u_dw_q        <= u_dw;
      u_dst_q       <= u_dst;
      u_acc_q       <= u_acc;
    end
  end

  // ---------------------------------------------------------------- result (stage 2)
  logic      unsupported;
  err_code_e code_d, code_q;
  ce_cfg_t   cfg_d, cfg_q;

  always_comb begin
    unique case (mode_q)
      ComputeModeConv:      unsupported = u_conv_q || (pool_en_q && u_pool_q);
      ComputeModeFc:        unsupported = u_fc_q;
      ComputeModeDepthwise: unsupported = u_pool_mode_q || u_pool_q || u_dw_q;
      default:                  unsupported = u_pool_mode_q || u_pool_q;
    endcase
    unsupported = unsupported || u_in_id_q || u_dst_q ||
                  (packed_q && !(Sparse && mode_q == ComputeModeConv)) || u_act_q || u_acc_q;
    code_d = (illegal_q || acq_order_q) ? ErrIllegalInstr :
             unsupported                ? ErrUnsupported  : ErrNone;
  end

  always_comb begin
    cfg_d = '0;
    cfg_d.fc        = is_fc;
    cfg_d.pool_only = is_pool;
    cfg_d.dw        = is_dw;
    // acc_out: the requantiser passes each accumulator byte through (M 1,
    // S 0), so the clamp is the whole int8 range and there is no table.
    cfg_d.clamp_lo  = acc_out_q ? 8'h80 : clamp_lo_q;
    cfg_d.clamp_hi  = acc_out_q ? 8'h7f : clamp_hi_q;
    cfg_d.act_en    = act_en_q && !is_pool && !acc_out_q;
    cfg_d.act_table = act_table_q;
    cfg_d.in_id     = in_id_q;
    cfg_d.acc_out   = acc_out_q;
    cfg_d.acc_in    = acc_in_q;
    cfg_d.acc_id    = acc_id_q;
    cfg_d.packed_rows = (Sparse && is_conv) ? packed_rows_q : DimWidth'(0);

    cfg_d.walk.rows_m1      = pool_walk ? OpWidth'(res_q[SVRows]) - OpWidth'(1)
                                        : OpWidth'(out_h_q) - OpWidth'(1);
    cfg_d.walk.cols_m1      = is_fc ? DimWidth'(0) : (pool_walk ? in_w_q : out_w_q) - DimWidth'(1);
    cfg_d.walk.img_h        = pool_walk ? OpWidth'(res_q[SVRows])
                                        : (is_fc ? OpWidth'(out_h_q) : OpWidth'(in_h_q));
    cfg_d.walk.img_w        = is_fc ? DimWidth'(1) : in_w_q;
    cfg_d.walk.kernel_h     = kh_e;
    cfg_d.walk.kernel_w     = kw_e;
    cfg_d.walk.stride_h     = sh_e;
    cfg_d.walk.stride_w     = sw_e;
    cfg_d.walk.pad_top      = pt_e;
    cfg_d.walk.pad_left     = pl_e;
    cfg_d.walk.groups_m1    = gw_e - DimWidth'(1);
    cfg_d.walk.group_step   = is_fc ? OpWidth'(1) : plane;
    cfg_d.walk.row_adv      = 20'(res_q[SRowAdv]);
    cfg_d.walk.pad_off      = 20'(res_q[SPadOff]);
    cfg_d.walk.base         = in_base_q;
    cfg_d.walk.cache_base   = cache_base_q;
    cfg_d.walk.kw_groups    = OpWidth'(res_q[SKwg]);
    cfg_d.walk.row_off0     = 20'(res_q[SRowOff0]);
    cfg_d.walk.row_off_step = 20'(res_q[SRowStep]);
    cfg_d.walk.col_off0     = 20'(res_q[SColOff0]);
    cfg_d.walk.col_off_step = 20'(res_q[SColStep]);
    cfg_d.walk.param_base   = param_base_q;
    cfg_d.walk.fill         = acc_in_q;
    cfg_d.walk.fill_base    = acc_base_q;

    cfg_d.wr.kind         = wr_kind_e'(dst_kind_q);
    cfg_d.wr.dst_id       = dst_id_q;
    cfg_d.wr.base         = dst_base_q;
    cfg_d.wr.row_stride   = is_fc ? (acc_out_q ? DimWidth'(4) : DimWidth'(1)) : dst_row_stride_q;
    cfg_d.wr.group_stride = dst_group_stride_q;
    cfg_d.wr.rows_m1      = (is_fc ? out_h_q : res_rows) - DimWidth'(1);
    cfg_d.wr.cols_m1      = acc_out_q ? (is_fc ? DimWidth'(3)
                                               : {res_cols[DimWidth-3:0], 2'b00} - DimWidth'(1)) :
                            is_fc ? DimWidth'(0) : res_cols - DimWidth'(1);
    cfg_d.wr.groups_m1    = pool_walk ? groups_q - DimWidth'(1) : DimWidth'(0);
    cfg_d.wr.neurons_m1   = out_h_q - DimWidth'(1);

    cfg_d.pool.enable     = pooled;
    cfg_d.pool.from_bank  = pool_walk;
    cfg_d.pool.frames_m1  = pool_walk ? groups_q - DimWidth'(1) : DimWidth'(0);
    cfg_d.pool.height     = pool_dim_h;
    cfg_d.pool.width      = pool_dim_w;
    cfg_d.pool.kernel     = pk_q;
    cfg_d.pool.stride     = ps_q;
    cfg_d.pool.pad_top    = ppt_q;
    cfg_d.pool.pad_left   = ppl_q;
    cfg_d.pool.pad_bottom = ppb_q;
    cfg_d.pool.pad_right  = ppr_q;
    cfg_d.pool.ceil_mode  = pool_ceil_q;
    cfg_d.pool.op_avg     = pool_avg_q;
    cfg_d.pool.post_lo    = post_lo_q;
    cfg_d.pool.post_hi    = post_hi_q;
  end

  always_ff @(posedge clk_i) begin
    if (state_q == StCmp2) begin
      code_q <= code_d;
      cfg_q  <= cfg_d;
    end
  end

  // ---------------------------------------------------------------- sequence
  always_comb begin
    state_d = state_q;
    cnt_d   = cnt_q;
    unique case (state_q)
      StIdle: begin
        if (take) begin
          state_d = StMul;
          cnt_d   = '0;
        end
      end
      StMul: begin
        cnt_d = cnt_q + CntWidth'(1);
        if (32'(cnt_q) == NumSteps + 1) state_d = StSum;
      end
      StSum:  state_d = StCmp1;
      StCmp1: state_d = StCmp2;
      StCmp2: state_d = StDone;
      StDone: state_d = StIdle;
      default: state_d = StIdle;
    endcase
    for (int k = 0; k < NumSteps; k++) begin
      step_d[k] = state_d == StMul && 32'(cnt_d) == k;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      idle_q  <= 1'b1;
      cnt_q   <= '0;
      step_q  <= '0;
    end else begin
      state_q <= state_d;
      idle_q  <= state_d == StIdle;
      cnt_q   <= cnt_d;
      step_q  <= step_d;
    end
  end

  assign busy_o = state_q != StIdle;
  assign done_o = state_q == StDone;
  assign code_o = code_q;
  assign cfg_o  = cfg_q;

  // The SInWords step reads the plane product through plane_sat_q and
  // in_words_b_q: it must come five steps later.
  `STRATA_ASSERT(decode_start_idle, clk_i, rst_ni, !start_i || state_q == StIdle)
  `STRATA_ASSERT(decode_idle_copy, clk_i, rst_ni, idle_q == (state_q == StIdle))
  // The registered operands are used only once they follow the captured fields.
  `STRATA_ASSERT(decode_derived_ready, clk_i, rst_ni,
                 !(state_q == StMul && cnt_q >= CntWidth'(2)) || derived_ok_q)
  `STRATA_ASSERT(decode_step_onehot, clk_i, rst_ni,
                 step_q == ((state_q == StMul && 32'(cnt_q) < NumSteps) ?
                            NumSteps'(1) << cnt_q : '0))
  `STRATA_ASSERT(decode_in_words_b, clk_i, rst_ni, !step_q[SInWords] ||
                 in_words_b_q == (is_fc ? OpWidth'(groups_q) : plane_sat))
  `STRATA_ASSERT(decode_illegal_follows, clk_i, rst_ni,
                 !derived_ok_q || illegal_q == |illegal_part_q)
  `STRATA_ASSERT(decode_derived_exact, clk_i, rst_ni, !derived_ok_q ||
                 (taps_k_q == (pool_walk ? '0 : OpWidth'(kh_e * kw_e)) &&
                  row_off_k_q == OpWidth'(pt_e * kw_e) && row_step_k_q == OpWidth'(sh_e * kw_e) &&
                  kw_g_q == OpWidth'(kw_e) && gw_e_q == OpWidth'(gw_e) &&
                  inw_e_q == OpWidth'(inw_e) && sh_e_q == OpWidth'(sh_e) &&
                  pt_e_q == OpWidth'(pt_e) && pl_e_q == OpWidth'(pl_e) &&
                  sw_e_q == OpWidth'(sw_e) && conv_mh_a_q == OpWidth'(out_h_q - DimWidth'(1)) &&
                  conv_mw_a_q == OpWidth'(out_w_q - DimWidth'(1)) &&
                  pool_mh_a_q == OpWidth'(pool_out_h_q - DimWidth'(1)) &&
                  pool_mw_a_q == OpWidth'(pool_out_w_q - DimWidth'(1)) &&
                  dst_rows_a_q == (is_fc ? '0 : OpWidth'(res_rows - DimWidth'(1))) &&
                  dst_grps_a_q == (pool_walk ? OpWidth'(groups_q - DimWidth'(1))
                                             : OpWidth'(out_h_q)) &&
                  dst_grps_b_q == (pool_walk ? OpWidth'(dst_group_stride_q) : OpWidth'(out_w_q)) &&
                  in_words_a_q == (is_fc ? OpWidth'(out_h_q) : OpWidth'(groups_q)) &&
                  dst_head_q == dst_head && dh2_q == dh2 && dw2_q == dw2 &&
                  ph_dim_q == ph_dim && pw_dim_q == pw_dim && pool_h2_q == pool_h2 &&
                  pool_w2_q == pool_w2 && pool_h2_s_q == pool_h2 + W'(ps_q) &&
                  pp_tb_q == SumWidth'(ppt_q) + SumWidth'(ppb_q) &&
                  pp_lr_q == SumWidth'(ppl_q) + SumWidth'(ppr_q) &&
                  pool_w2_s_q == pool_w2 + W'(ps_q) &&
                  param_end_q == W'(param_base_q) + (is_fc ? W'(out_h_q) : W'(Pes)) &&
                  conv_skh_q == SumWidth'(sh_q) + SumWidth'(kh_q) &&
                  conv_skw_q == SumWidth'(sw_q) + SumWidth'(kw_q) &&
                  pool_sk_q == SumWidth'(ps_q) + SumWidth'(pk_q) && uf_conv_q == |uf_conv &&
                  uf_fc_q == |uf_fc && uf_pool_mode_q == |uf_pool_mode && uf_pool_q == |uf_pool &&
                  uf_dw_q == |uf_dw &&
                  pool_h_one_q == (pool_out_h_q == DimWidth'(1)) &&
                  pool_w_one_q == (pool_out_w_q == DimWidth'(1))))

`ifndef SYNTHESIS
  initial begin
    assert (SInWords >= SPlane + 5 && NumSteps + 2 < 2 ** CntWidth)
      else $fatal(1, "strata_compute_decode: product schedule");
    assert (Lanes == 2 ** LgLanes) else $fatal(1, "strata_compute_decode: Lanes must be 2^k");
    assert (BankDepth <= 2 ** ComputeDstBaseWidth && PeCacheDepth <= 2 ** ComputeCacheBaseWidth &&
            ParamDepth <= 2 ** ComputeParamBaseWidth && Banks <= 2 ** ComputeInIdWidth)
      else $fatal(1, "strata_compute_decode: memories exceed the instruction fields");
  end

  // The geometry, address and window arithmetic above, the configuration
  // (strata_compute_pkg) and the walkers are sized for the field widths of
  // strata_compute_pkg: an encoding with a wider field does not build.
  localparam bit DimTooWide =
      $bits(compute_in_base_t) > DimWidth || $bits(compute_in_h_t) > DimWidth ||
      $bits(compute_in_w_t) > DimWidth || $bits(compute_in_groups_t) > DimWidth ||
      $bits(compute_out_h_t) > DimWidth || $bits(compute_out_w_t) > DimWidth ||
      $bits(compute_cache_base_t) > DimWidth || $bits(compute_param_base_t) > DimWidth ||
      $bits(compute_pool_out_h_t) > DimWidth || $bits(compute_pool_out_w_t) > DimWidth ||
      $bits(compute_dst_base_t) > DimWidth || $bits(compute_dst_row_stride_t) > DimWidth ||
      $bits(compute_dst_group_stride_t) > DimWidth || $bits(compute_packed_rows_t) > DimWidth ||
      $bits(compute_acc_base_t) > DimWidth;
  localparam bit WinTooWide =
      $bits(compute_kernel_h_t) > WinWidth || $bits(compute_kernel_w_t) > WinWidth ||
      $bits(compute_stride_h_t) > WinWidth || $bits(compute_stride_w_t) > WinWidth ||
      $bits(compute_pad_top_t) > WinWidth || $bits(compute_pad_left_t) > WinWidth ||
      $bits(compute_pad_bottom_t) > WinWidth || $bits(compute_pad_right_t) > WinWidth ||
      $bits(compute_pool_k_t) > WinWidth || $bits(compute_pool_s_t) > WinWidth ||
      $bits(compute_pool_pad_top_t) > WinWidth || $bits(compute_pool_pad_left_t) > WinWidth ||
      $bits(compute_pool_pad_bottom_t) > WinWidth || $bits(compute_pool_pad_right_t) > WinWidth;
  localparam bit IdTooWide =
      $bits(compute_in_id_t) > IdWidth || $bits(compute_dst_id_t) > IdWidth ||
      $bits(compute_acc_id_t) > IdWidth;
  localparam bit ActTooWide =
      $bits(compute_act_table_t) > ActIdxWidth;
  localparam bit ClampTooWide =
      $bits(compute_clamp_lo_t) > ClampWidth || $bits(compute_clamp_hi_t) > ClampWidth ||
      $bits(compute_post_lo_t) > ClampWidth || $bits(compute_post_hi_t) > ClampWidth;
  if (DimTooWide) begin : g_dim_too_wide
    $error("strata_compute_decode: a geometry or address field of COMPUTE exceeds DimWidth = %0d",
           DimWidth);
  end
  if (WinTooWide) begin : g_win_too_wide
    $error("strata_compute_decode: a window field of COMPUTE exceeds WinWidth = %0d", WinWidth);
  end
  if (IdTooWide) begin : g_id_too_wide
    $error("strata_compute_decode: a bank or PE index field of COMPUTE exceeds IdWidth = %0d",
           IdWidth);
  end
  if (ActTooWide) begin : g_act_too_wide
    $error("strata_compute_decode: act_table of COMPUTE exceeds ActIdxWidth = %0d", ActIdxWidth);
  end
  if (ClampTooWide) begin : g_clamp_too_wide
    $error("strata_compute_decode: a clamp field of COMPUTE exceeds ClampWidth = %0d", ClampWidth);
  end
`endif

endmodule : strata_compute_decode
