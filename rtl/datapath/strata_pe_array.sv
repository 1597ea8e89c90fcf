// SPDX-License-Identifier: Apache-2.0
// PE array: Pes processing elements (strata_pe) in lockstep on ONE compute
// stream (its operand broadcast, or one per PE: OpCopies below), each with
// its own operand cache, and one result stream that carries the Pes
// accumulators of an output position together.
//
// background item 1 data flows: conv (each PE caches a different output channel's
// weights, the activations are broadcast, so one beat advances Pes output
// channels of the same position) and FC batch (each PE caches a different
// image's features, the weights are broadcast, so one beat advances the same
// output feature of Pes images). Only what the loader writes differs.
// Cache loading: cache_pe_mask_i selects the PEs a write goes to (one bit for a
// PE, several or all for a broadcast write); writes may overlap computation on
// other addresses. Bias: one value per PE in the beat (in_bias_i[p]), sampled
// with a `first` beat (conv: bias of PE p's channel; FC: the same value in
// every lane).
// Sparse = 1: PEs with activation stagers and control planes (strata_pe);
// cache_ctl_i writes the control planes, in_packed_i marks a packed CONV's
// beats, and each PE's sum addressed to a neighbour (PE p - 1 or p + 1, modulo
// Pes) is wired to that neighbour's accumulator: the demultiplexer that
// returns a product moved into another tile to the accumulator it belongs to
// (docs/sparsity.md, "Inter-tile moves").
// Latency: that of strata_pe (5 + TreeStages + SumStages cycles from accepting
// a `last` beat to res_valid_o; SumStages = 1 when Sparse, else 0). Throughput: one beat per cycle, Pes * Lanes MACs per
// cycle, while the result stream is drained. Back-pressure: credit based (see
// strata_pe); every PE sees the same handshakes, so all PEs hold the same
// control state and PE 0's ready/valid/error stand for all (asserted in
// simulation; synthesis merges the identical control registers).
// Errors: err_o as in strata_pe (framing, cache address range).
// AddrCopies > 1: in_addr_i carries that many copies of the cache address
// (equal, asserted), PE p reading copy p % AddrCopies, so a driver with one
// register copy per PE (strata_compute_engine) gives each PE's cache RAMs a
// net of their own.
// OpCopies > 1: in_op_i carries that many operands, PE p reading operand
// p % OpCopies: with OpCopies = Pes every PE gets an operand of its own
// (strata_compute_engine's DEPTHWISE beats, where PE p receives its channel's
// taps); with 1 the operand is broadcast.
`include "strata_assert.svh"

module strata_pe_array
  import strata_cfg_pkg::DataWidth;
  import strata_pkg::*;
#(
  parameter int unsigned Pes         = strata_cfg_pkg::Pes,           // P: processing elements
  parameter int unsigned Lanes       = strata_cfg_pkg::Lanes,         // N: MACs per PE per beat
  parameter int unsigned CacheDepth  = strata_cfg_pkg::PeCacheDepth,  // words per PE cache
  parameter bit          Sparse      = 1'b0,  // PEs with activation stagers
  parameter int unsigned FabricLanes = 0,   // lanes of each PE multiplying in LUTs (strata_pe)
  parameter int unsigned TreeStages  = ($clog2(Lanes) + 1) / 2,  // adder-tree registers
  parameter int unsigned AddrCopies  = 1,  // copies of the cache address in in_addr_i
  parameter int unsigned OpCopies    = 1,  // operands in in_op_i (1: broadcast, Pes: one per PE)
  localparam int unsigned CacheAddrWidth = $clog2(CacheDepth),
  localparam int unsigned OpVectors      = Sparse ? 2 : 1,
  localparam int unsigned CacheWidth     = Lanes * DataWidth,
  localparam int unsigned SumWidth       = ProdWidth + ((Lanes > 1) ? $clog2(Lanes) : 0)
) (
  input  logic                                           clk_i,           // clock
  input  logic                                           rst_ni,          // sync reset, active low
  // Cache write port (loader), word layout as in strata_pe.
  input  logic                                           cache_we_i,      // write enable
  input  logic                                           cache_ctl_i,     // Sparse: control planes
  input  logic [Pes-1:0]                                 cache_pe_mask_i, // PEs written
  input  logic [CacheAddrWidth-1:0]                      cache_waddr_i,   // write address
  input  logic [CacheWidth-1:0]                          cache_wdata_i,   // write data
  // Broadcast compute stream.
  input  logic                                           in_valid_i,      // beat valid
  output logic                                           in_ready_o,      // beat accepted
  input  logic [OpCopies-1:0][OpVectors-1:0][Lanes-1:0][DataWidth-1:0]
                                                         in_op_i,         // streamed operand(s)
  input  logic [AddrCopies-1:0][CacheAddrWidth-1:0]      in_addr_i,       // cache word (all PEs)
  input  logic                                           in_first_i,      // start accumulation
  input  logic                                           in_last_i,       // emit the results
  input  acc_t [Pes-1:0]                                 in_bias_i,       // start value per PE
  input  logic                                           in_packed_i,     // packed CONV beat
  // Result stream: one accumulator per PE.
  output logic                                           res_valid_o,     // results valid
  input  logic                                           res_ready_i,     // results taken
  output acc_t [Pes-1:0]                                 res_acc_o,       // accumulators
  // Status.
  output logic                                           err_o            // sticky input error
);

  logic [Pes-1:0] in_ready, res_valid, err;
  logic signed [SumWidth-1:0] fwd_prev [Pes];  // PE p's sum for PE p - 1
  logic signed [SumWidth-1:0] fwd_next [Pes];  // PE p's sum for PE p + 1

  for (genvar p = 0; p < Pes; p++) begin : g_pe
    localparam int unsigned Prev = (p + Pes - 1) % Pes;
    localparam int unsigned Next = (p + 1) % Pes;

    strata_pe #(
      .Lanes       (Lanes),
      .CacheDepth  (CacheDepth),
      .Sparse      (Sparse),
      .FabricLanes (FabricLanes),
      .TreeStages  (TreeStages)
    ) u_pe (
      .clk_i         (clk_i),
      .rst_ni        (rst_ni),
      .cache_we_i    (cache_we_i && cache_pe_mask_i[p]),
      .cache_ctl_i   (cache_ctl_i),
      .cache_waddr_i (cache_waddr_i),
      .cache_wdata_i (cache_wdata_i),
      .in_valid_i    (in_valid_i),
      .in_ready_o    (in_ready[p]),
      .in_op_i       (in_op_i[p % OpCopies]),
      .in_addr_i     (in_addr_i[p % AddrCopies]),
      .in_first_i    (in_first_i),
      .in_last_i     (in_last_i),
      .in_bias_i     (in_bias_i[p]),
      .in_packed_i   (in_packed_i),
      .fwd_prev_o    (fwd_prev[p]),
      .fwd_next_o    (fwd_next[p]),
      .nb_prev_i     (fwd_prev[Next]),
      .nb_next_i     (fwd_next[Prev]),
      .res_valid_o   (res_valid[p]),
      .res_ready_i   (res_ready_i),
      .res_acc_o     (res_acc_o[p]),
      .err_o         (err[p])
    );
  end

  assign in_ready_o  = in_ready[0];
  assign res_valid_o = res_valid[0];
  assign err_o       = err[0];

  // Lockstep: every PE takes the same handshakes, so their control agrees.
  `STRATA_ASSERT(array_ready_lockstep, clk_i, rst_ni, in_ready == {Pes{in_ready[0]}})
  `STRATA_ASSERT(array_valid_lockstep, clk_i, rst_ni, res_valid == {Pes{res_valid[0]}})
  `STRATA_ASSERT(array_err_lockstep, clk_i, rst_ni, err == {Pes{err[0]}})
  `STRATA_ASSERT(array_addr_copies, clk_i, rst_ni,
                 !in_valid_i || in_addr_i == {AddrCopies{in_addr_i[0]}})
  `STRATA_ASSERT_STREAM(array_in, clk_i, rst_ni, in_valid_i, in_ready_o,
                        {in_op_i, in_addr_i, in_first_i, in_last_i, in_bias_i, in_packed_i})
  `STRATA_ASSERT_STREAM(array_res, clk_i, rst_ni, res_valid_o, res_ready_i, res_acc_o)

`ifndef SYNTHESIS
  initial begin
    assert (Pes >= 1) else $fatal(1, "strata_pe_array: Pes must be >= 1");
    assert (AddrCopies >= 1 && AddrCopies <= Pes)
      else $fatal(1, "strata_pe_array: AddrCopies must be in 1 .. Pes");
    assert (OpCopies >= 1 && OpCopies <= Pes)
      else $fatal(1, "strata_pe_array: OpCopies must be in 1 .. Pes");
  end
`endif

endmodule : strata_pe_array
