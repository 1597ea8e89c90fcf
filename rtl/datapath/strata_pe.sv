// SPDX-License-Identifier: Apache-2.0
// Processing element: an operand cache, a Lanes-wide int8 dot product per
// cycle and an int32 accumulator (background item 1: cache for the reused data, N-wide
// dot-product unit, accumulator).
//
// Data flows (the PE is the same in both; only what is cached changes):
//   conv:     cache = this PE's output-channel weights, stream = activations
//   FC batch: cache = this PE's image features,        stream = weights
// The cache is filled through its write port (cache_*), by a loader, before or
// while computing (writes to addresses not being read are safe at any time;
// writing the word a beat reads in the same cycle is not allowed, asserted in
// simulation by the cache RAM).
// Each compute beat brings the streamed operand vector, the cache address of
// the operand it meets, and `first` / `last`: `first` starts a new accumulation
// at the beat's bias (in_bias_i, sampled with the first beat); `last` emits the
// accumulator on the result stream. A beat with both is a one-beat accumulation.
// The bias travels in the beat: conv wants a different bias per PE, fixed for a
// layer, FC the same bias in every PE, changing with every output; a beat field
// serves both and cannot race with the accumulations in the pipeline.
//
// Sparse = 1 (docs/sparsity.md, "The sparse build"): the activation stager
// in front of the multipliers, a control plane beside the cache and the
// neighbour exchange of sums. The streamed operand is the 2-vector activation
// window {current, next}; the control plane holds, per cache word, the Lanes
// 2-bit select codes (see strata_act_stager) and the destination of the
// word's sum: this PE's accumulator, PE p - 1's or PE p + 1's (a product
// moved into another tile's earlier row goes back to the accumulator it
// belongs to). It is written through the cache write port with cache_ctl_i
// in the ISA's control-word format (docs/isa.md, LOAD CONTROL: byte m bits
// 1:0 lane m's code, byte 0 bits 3:2 the destination) and stored as
// 2 Lanes + 2 bits, in a RAM of its own beside the cache: LOAD PE_CACHE and
// LOAD CONTROL write the two planes in different instructions, and whole-word
// writes need no byte enables. A beat with in_packed_i = 0 ignores the control plane
// (every lane its current word, the sum to this PE: the dense beats of FC,
// POOL, DEPTHWISE and dense CONVs). The sum of each beat leaves on
// fwd_prev_o / fwd_next_o when addressed to a neighbour, and the accumulator
// adds its own kept sum and the two neighbours' forwarded ones
// (nb_next_i: PE p - 1's sum addressed to p + 1 = this PE; nb_prev_i: PE
// p + 1's addressed to p - 1), registered once (SumStages) before the
// accumulate, so the three-input addition and the route between PEs are a
// cycle of their own. Dense (Sparse = 0): the cache write port writes the
// cache only (cache_ctl_i, in_packed_i and nb_*_i are ignored, fwd_*_o are 0).
//
// Pipeline (edges after the accepting edge E0):
//   E0 cache read issued, beat registered   E1 cache output register (BRAM
//   output register on FPGAs with one: it hides the BRAM clock-to-out)
//   E2 multiplier inputs (+ stager)         E3 products
//   E4.. adder tree (TreeStages)            [Sparse: E(4+TreeStages) the
//   three sums added]                       then accumulate, result pushed on
//   `last`
// Timing (FPGA): the multiplier input and product registers (E2, E3) are those
// of strata_pe_mul, i.e. the DSP block's own registers (on ECP5 an explicit
// MULT18X18D with REG_INPUTA/B and REG_OUTPUT; each PE of an array keeps its
// copy of the broadcast operand inside its DSPs). Lanes n >= Lanes -
// FabricLanes multiply in LUTs instead (strata_fabric_mul: its E2 register
// holds partial sums, same latency), for devices with fewer DSP blocks than
// the build has products (docs/fpga.md, "The cascade"). The adder tree's first
// register follows its first level (RegisterFirst), so the long routes out of
// the DSPs carry one adder. The cache is a ReadFirst = 0 RAM (no bypass logic
// between the block RAM and the cache output register).
// Latency: a last beat accepted at E0 shows on res_valid_o 5 + TreeStages +
// SumStages cycles later (SumStages = 1 when Sparse, else 0). Throughput: one beat per cycle (Lanes MACs per cycle) while the
// result stream is drained.
// Back-pressure: credit based. The pipeline never stalls; every `last` beat
// reserves a slot of the result FIFO (depth 6 + TreeStages + SumStages, the
// pipeline depth plus two) and beats are accepted only while a slot is free (`last` or not,
// so ready does not look at the payload): in_ready_o depends on no input and
// res_ready_i has no combinational path to in_ready_o.
// Errors (sticky err_o, cleared by reset; the PE keeps running):
//   - a beat without `first` while no accumulation is open (it is treated as a
//     first beat), or with `first` while one is open (the open one is dropped);
//   - a cache address >= CacheDepth (reads contribute zero, writes are
//     dropped; only possible when CacheDepth is not a power of two).
`include "strata_assert.svh"

module strata_pe
  import strata_cfg_pkg::DataWidth, strata_cfg_pkg::AccWidth;
  import strata_pkg::*;
#(
  parameter int unsigned Lanes       = strata_cfg_pkg::Lanes,         // N: MACs per beat
  parameter int unsigned CacheDepth  = strata_cfg_pkg::PeCacheDepth,  // cache words, >= 2
  parameter bit          Sparse      = 1'b0,  // 1: activation stager, packed weights
  parameter int unsigned FabricLanes = 0,   // the top FabricLanes lanes multiply in LUTs
  parameter int unsigned TreeStages  = ($clog2(Lanes) + 1) / 2,  // adder-tree registers
  localparam int unsigned CacheAddrWidth = $clog2(CacheDepth),
  localparam int unsigned OpVectors      = Sparse ? 2 : 1, // streamed vectors per beat
  localparam int unsigned CacheWidth     = Lanes * DataWidth,
  localparam int unsigned SumWidth       = ProdWidth + ((Lanes > 1) ? $clog2(Lanes) : 0)
) (
  input  logic                                         clk_i,         // clock
  input  logic                                         rst_ni,        // sync reset, active low
  // Cache write port (loader). Word: Lanes operands, lane 0 in the low byte;
  // with cache_ctl_i (Sparse) a control word for the control plane instead.
  input  logic                                         cache_we_i,    // write enable
  input  logic                                         cache_ctl_i,   // Sparse: control plane
  input  logic [CacheAddrWidth-1:0]                    cache_waddr_i, // write address
  input  logic [CacheWidth-1:0]                        cache_wdata_i, // write data
  // Compute stream.
  input  logic                                         in_valid_i,    // beat valid
  output logic                                         in_ready_o,    // beat accepted
  input  logic [OpVectors-1:0][Lanes-1:0][DataWidth-1:0] in_op_i,     // streamed operand(s)
  input  logic [CacheAddrWidth-1:0]                    in_addr_i,     // cache word to use
  input  logic                                         in_first_i,    // start accumulation
  input  logic                                         in_last_i,     // emit the result
  input  acc_t                                         in_bias_i,     // start value (first)
  input  logic                                         in_packed_i,   // Sparse: use the controls
  // Sums exchanged with the neighbouring PEs (Sparse).
  output logic signed [SumWidth-1:0]                   fwd_prev_o,    // to PE p - 1 (else 0)
  output logic signed [SumWidth-1:0]                   fwd_next_o,    // to PE p + 1 (else 0)
  input  logic signed [SumWidth-1:0]                   nb_prev_i,     // PE p + 1's fwd_prev_o
  input  logic signed [SumWidth-1:0]                   nb_next_i,     // PE p - 1's fwd_next_o
  // Result stream.
  output logic                                         res_valid_o,   // result valid
  input  logic                                         res_ready_i,   // result taken
  output acc_t                                         res_acc_o,     // accumulator
  // Status.
  output logic                                         err_o          // sticky input error
);

  localparam int unsigned TreeLevels  = (Lanes > 1) ? $clog2(Lanes) : 0;
  localparam int unsigned SumStages   = Sparse ? 1 : 0;
  localparam int unsigned ResultDepth = 6 + TreeStages + SumStages;
  localparam int unsigned SelWidth    = 2;                      // stager select code bits
  localparam int unsigned CtlWidth    = Lanes * SelWidth + 2;   // control plane word

  // Destinations of a beat's sum (docs/isa.md, LOAD CONTROL).
  typedef enum logic [1:0] {
    DestOwn  = 2'd0,
    DestPrev = 2'd1,
    DestNext = 2'd2
  } dest_e;

  typedef struct packed {
    logic first;
    logic last;
    acc_t bias;
    logic packed_beat;  // the beat uses its controls (Sparse)
    dest_e dest;        // the accumulator its sum goes to (from the control plane)
  } ctl_t;

  // ---------------------------------------------------------------------------
  // Stage 0: accept, framing check, cache read.
  logic fire, credit;
  logic open_d, open_q;        // an accumulation is open (first seen, last not yet)
  logic first_eff;             // the beat starts an accumulation
  logic frame_err;
  logic raddr_ok, waddr_ok;
  logic err_d, err_q;
  logic [CacheWidth-1:0] cache_rdata;

  assign in_ready_o = credit;
  assign fire       = in_valid_i && in_ready_o;
  assign first_eff  = in_first_i || !open_q;
  assign frame_err  = (in_first_i == open_q);

  if ((1 << CacheAddrWidth) == CacheDepth) begin : g_addr_pow2
    assign raddr_ok = 1'b1;
    assign waddr_ok = 1'b1;
  end else begin : g_addr_check
    assign raddr_ok = (32'(in_addr_i) < CacheDepth);
    assign waddr_ok = (32'(cache_waddr_i) < CacheDepth);
  end

  always_comb begin
    open_d = open_q;
    err_d  = err_q;
    if (fire) begin
      open_d = !in_last_i;
      err_d  = err_d || frame_err || !raddr_ok;
    end
    if (cache_we_i && !waddr_ok) err_d = 1'b1;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      open_q <= 1'b0;
      err_q  <= 1'b0;
    end else begin
      open_q <= open_d;
      err_q  <= err_d;
    end
  end

  assign err_o = err_q;

  // ReadFirst = 0: the loader never writes the word a beat reads in the same
  // cycle (the contract above; asserted in the RAM), so the block RAM's output
  // needs no read-first bypass logic before the cache output register.
  strata_ram_1r1w #(
    .Width     (CacheWidth),
    .Depth     (CacheDepth),
    .ReadFirst (1'b0)
  ) u_cache (
    .clk_i   (clk_i),
    .we_i    (cache_we_i && !(Sparse && cache_ctl_i) && waddr_ok),
    .waddr_i (cache_waddr_i),
    .wdata_i (cache_wdata_i),
    .re_i    (fire && raddr_ok),
    .raddr_i (in_addr_i),
    .rdata_o (cache_rdata)
  );

  // ---------------------------------------------------------------------------
  // The control plane (Sparse): the control word packed to 2 bits per lane
  // (lanes from the low bits) and the destination on top, read with the
  // cache word and registered at the same edges.
  logic [CtlWidth-1:0] plane_rdata, plane_q2;

  if (Sparse) begin : g_ctl_plane
    logic [CtlWidth-1:0] ctl_wdata;

    for (genvar m = 0; m < Lanes; m++) begin : g_sel
      assign ctl_wdata[m*SelWidth +: SelWidth] = cache_wdata_i[m*DataWidth +: SelWidth];
    end
    assign ctl_wdata[CtlWidth-1 -: 2] = cache_wdata_i[3:2];

    strata_ram_1r1w #(
      .Width     (CtlWidth),
      .Depth     (CacheDepth),
      .ReadFirst (1'b0)
    ) u_ctl (
      .clk_i   (clk_i),
      .we_i    (cache_we_i && cache_ctl_i && waddr_ok),
      .waddr_i (cache_waddr_i),
      .wdata_i (ctl_wdata),
      .re_i    (fire && raddr_ok),
      .raddr_i (in_addr_i),
      .rdata_o (plane_rdata)
    );
  end else begin : g_no_ctl_plane
    logic unused_ctl;  // dense: the control-plane inputs have no use
    assign unused_ctl = cache_ctl_i ^ in_packed_i;
    assign plane_rdata = '0;
  end

  // ---------------------------------------------------------------------------
  // Stage 1: beat registered, aligned with the cache read data.
  logic valid_q1;
  logic [OpVectors-1:0][Lanes-1:0][DataWidth-1:0] op_q1;
  ctl_t ctl_q1;
  logic raddr_ok_q1;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) valid_q1 <= 1'b0;
    else         valid_q1 <= fire;
  end
  always_ff @(posedge clk_i) begin
    op_q1       <= in_op_i;
    ctl_q1      <= '{first: first_eff, last: in_last_i, bias: in_bias_i,
                     packed_beat: Sparse && in_packed_i, dest: DestOwn};
    raddr_ok_q1 <= raddr_ok;
  end

  // ---------------------------------------------------------------------------
  // Stage 2: cache output register, beat delayed alongside.
  logic valid_q2;
  logic [OpVectors-1:0][Lanes-1:0][DataWidth-1:0] op_q2;
  ctl_t ctl_q2;
  logic [CacheWidth-1:0] cache_q2;
  logic raddr_ok_q2;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) valid_q2 <= 1'b0;
    else         valid_q2 <= valid_q1;
  end
  always_ff @(posedge clk_i) begin
    op_q2       <= op_q1;
    ctl_q2      <= ctl_q1;
    cache_q2    <= cache_rdata;
    plane_q2    <= plane_rdata;
    raddr_ok_q2 <= raddr_ok_q1;
  end

  // ---------------------------------------------------------------------------
  // Stages 3 and 4: multiplier input registers and products (int8 x int8 ->
  // 16-bit signed), both inside strata_pe_mul (in the DSP block on FPGAs).
  // a = streamed side (through the stager when Sparse), b = cached side (zero
  // for an out-of-range address).
  logic valid_q3, valid_q4;
  ctl_t ctl_q3, ctl_q4;
  logic [Lanes-1:0][DataWidth-1:0] a_d, b_d;
  logic [Lanes-1:0][SelWidth-1:0]  sel_d;
  logic [Lanes-1:0][ProdWidth-1:0] prod_q4;

  assign b_d   = raddr_ok_q2 ? cache_q2 : '0;
  assign sel_d = ctl_q2.packed_beat ? plane_q2[Lanes*SelWidth-1:0] : '0;

  if (Sparse) begin : g_sparse
    // The stager's multiplexer feeds the multiplier's a-side input register
    // directly, so that register stays inside the DSP block with the b side's
    // (a fabric register on one side only is a mix the ECP5 timing model does
    // not support: it would time the multiply as unregistered).
    strata_act_stager #(
      .Lanes (Lanes)
    ) u_stager (
      .window_i (op_q2),
      .sel_i    (sel_d),
      .act_o    (a_d)
    );
  end else begin : g_dense
    logic unused_sel;  // no stager: the select codes are all zero
    assign unused_sel = ^sel_d;
    assign a_d = op_q2[0];
  end

  for (genvar n = 0; n < Lanes; n++) begin : g_mul
    strata_pe_mul #(
      .Fabric (n >= Lanes - FabricLanes)
    ) u_mul (
      .clk_i (clk_i),
      .a_i   (a_d[n]),
      .b_i   (b_d[n]),
      .p_o   (prod_q4[n])
    );
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      valid_q3 <= 1'b0;
      valid_q4 <= 1'b0;
    end else begin
      valid_q3 <= valid_q2;
      valid_q4 <= valid_q3;
    end
  end
  always_ff @(posedge clk_i) begin
    ctl_q3      <= ctl_q2;
    ctl_q3.dest <= ctl_q2.packed_beat ? dest_e'(plane_q2[CtlWidth-1 -: 2]) : DestOwn;
    ctl_q4      <= ctl_q3;
  end

  // ---------------------------------------------------------------------------
  // Adder tree: the dot product, exact in SumWidth bits.
  logic                        valid_t;
  ctl_t                        ctl_sum;
  logic signed [SumWidth-1:0]  sum_t;

  strata_adder_tree #(
    .Inputs        (Lanes),
    .InWidth       (ProdWidth),
    .Stages        (TreeStages),
    .SbWidth       ($bits(ctl_t)),
    .RegisterFirst (1'b1)  // the addends come from DSP output registers
  ) u_tree (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (valid_q4),
    .sb_i    (ctl_q4),
    .data_i  (prod_q4),
    .valid_o (valid_t),
    .sb_o    (ctl_sum),
    .sum_o   (sum_t)
  );

  // ---------------------------------------------------------------------------
  // Sparse: the sums addressed to this PE's accumulator (its own, kept, and
  // the neighbours' forwarded ones), added in a register stage of their own.
  logic                          valid_a;  // accumulate
  ctl_t                          ctl_a;
  logic signed [SumWidth+1:0]    sum_a;

  if (Sparse) begin : g_exchange
    logic                        valid_s;
    ctl_t                        ctl_s;
    logic signed [SumWidth+1:0]  sum_s;
    logic signed [SumWidth-1:0]  own;

    assign own        = (ctl_sum.dest == DestOwn) ? sum_t : '0;
    assign fwd_prev_o = (ctl_sum.dest == DestPrev) ? sum_t : '0;
    assign fwd_next_o = (ctl_sum.dest == DestNext) ? sum_t : '0;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) valid_s <= 1'b0;
      else         valid_s <= valid_t;
    end
    always_ff @(posedge clk_i) begin
      ctl_s <= ctl_sum;
      sum_s <= (SumWidth+2)'(own) + (SumWidth+2)'(nb_prev_i) + (SumWidth+2)'(nb_next_i);
    end

    assign valid_a = valid_s;
    assign ctl_a   = ctl_s;
    assign sum_a   = sum_s;
  end else begin : g_no_exchange
    logic unused_nb;  // dense: no neighbour sums
    assign unused_nb  = ^{nb_prev_i, nb_next_i};
    assign fwd_prev_o = '0;
    assign fwd_next_o = '0;
    assign valid_a    = valid_t;
    assign ctl_a      = ctl_sum;
    assign sum_a      = (SumWidth+2)'(sum_t);
  end

  // ---------------------------------------------------------------------------
  // Accumulator: starts at the bias on `first`, pushes the total on `last`.
  acc_t acc_d, acc_q;
  logic unused_ctl_a;  // the control fields have served by now

  assign unused_ctl_a = ^{ctl_a.packed_beat, ctl_a.dest};
  assign acc_d = (ctl_a.first ? ctl_a.bias : acc_q) + AccWidth'(sum_a);

  always_ff @(posedge clk_i) begin
    if (valid_a) acc_q <= acc_d;
  end

  strata_credit_fifo #(
    .Width ($bits(acc_t)),
    .Depth (ResultDepth)
  ) u_result (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (credit),
    .reserve_i   (fire && in_last_i),
    .push_i      (valid_a && ctl_a.last),
    .push_data_i (acc_d),
    .out_valid_o (res_valid_o),
    .out_ready_i (res_ready_i),
    .out_data_o  (res_acc_o)
  );

  // ---------------------------------------------------------------------------
  `STRATA_ASSERT_STREAM(pe_in, clk_i, rst_ni, in_valid_i, in_ready_o,
                        {in_op_i, in_addr_i, in_first_i, in_last_i, in_bias_i, in_packed_i})
  `STRATA_ASSERT_STREAM(pe_res, clk_i, rst_ni, res_valid_o, res_ready_i, res_acc_o)

`ifndef SYNTHESIS
  initial begin
    assert (Lanes >= 1) else $fatal(1, "strata_pe: Lanes must be >= 1");
    assert (CacheDepth >= 2) else $fatal(1, "strata_pe: CacheDepth must be >= 2");
    assert (TreeStages <= TreeLevels)
      else $fatal(1, "strata_pe: TreeStages %0d exceeds the %0d adder levels of %0d lanes",
                  TreeStages, TreeLevels, Lanes);
    assert (SumWidth + 2 <= AccWidth)
      else $fatal(1, "strata_pe: dot product wider than the accumulator");
  end
`endif

endmodule : strata_pe
