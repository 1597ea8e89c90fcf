// SPDX-License-Identifier: Apache-2.0
// Pipelined signed adder tree: sum_o = sum of the Inputs signed InWidth-bit
// elements of data_i, exact (the output is InWidth + ceil(log2(Inputs)) bits,
// so it never wraps).
//
// Structure: ceil(log2(Inputs)) levels of two-input adders; level l adds pairs
// of level l-1 (an odd element passes through) and is InWidth + l bits wide, so
// each adder is only as wide as its operands need. Stages register stages are
// spread evenly over the levels, the last one after the final level.
// RegisterFirst = 1 (with Stages >= 2): the first register follows level 1 and
// the other Stages - 1 are spread over levels 2..Levels; for addends that come
// straight from DSP output registers, whose routes to the fabric are long, so
// only one adder sits on those routes.
// Latency: Stages cycles (0 = purely combinational). Throughput: one vector
// per cycle. No enable and no stall: the tree always advances; valid_i and the
// user sideband sb_i travel with the data and leave with sum_o (valid is reset,
// data and sideband are not).
`include "strata_assert.svh"

module strata_adder_tree #(
  parameter int unsigned Inputs  = 8,   // number of addends, >= 1
  parameter int unsigned InWidth = 16,  // bits per addend (signed)
  parameter int unsigned Stages  = 2,   // register stages, 0..Levels
  parameter int unsigned SbWidth = 1,   // sideband bits carried with the sum
  parameter bit          RegisterFirst = 1'b0,  // 1: a register right after level 1
  localparam int unsigned Levels   = (Inputs > 1) ? $clog2(Inputs) : 0,
  localparam int unsigned OutWidth = InWidth + Levels
) (
  input  logic                             clk_i,   // clock
  input  logic                             rst_ni,  // synchronous reset, active low
  input  logic                             valid_i, // data_i and sb_i are valid
  input  logic [SbWidth-1:0]               sb_i,    // sideband, delayed like the sum
  input  logic [Inputs-1:0][InWidth-1:0]   data_i,  // addends (each signed)
  output logic                             valid_o, // sum_o and sb_o are valid
  output logic [SbWidth-1:0]               sb_o,    // sideband, Stages cycles later
  output logic signed [OutWidth-1:0]       sum_o    // exact sum, Stages cycles later
);

  // Elements left after `level` levels of pairwise addition.
  function automatic int unsigned count_at(int unsigned level);
    int unsigned n = Inputs;
    for (int unsigned i = 0; i < level; i++) n = (n + 1) / 2;
    return n;
  endfunction

  // A register follows level l when the stage index floor(l * Stages / Levels)
  // steps up there; this places exactly Stages registers, the last at l = Levels.
  // RegisterFirst: level 1 is registered and the same rule spreads Stages - 1
  // registers over the Levels - 1 levels after it.
  function automatic bit registered_at(int unsigned level);
    if (RegisterFirst && Stages >= 2) begin
      return (level == 1) || ((level > 1) &&
             (((level - 1) * (Stages - 1)) / (Levels - 1) !=
              ((level - 2) * (Stages - 1)) / (Levels - 1)));
    end
    return (Levels > 0) && (level > 0) &&
           ((level * Stages) / Levels != ((level - 1) * Stages) / Levels);
  endfunction

  // Level 0 is the input vector; level l (1..Levels) holds count_at(l) partial
  // sums of InWidth + l bits, registered or not as registered_at(l) says.
  for (genvar l = 0; l <= Levels; l++) begin : g_level
    localparam int unsigned Count = count_at(l);
    localparam int unsigned Width = InWidth + l;
    logic signed [Width-1:0] node [Count];
    logic                    valid;
    logic [SbWidth-1:0]      sb;

    if (l == 0) begin : g_inputs
      for (genvar i = 0; i < Count; i++) begin : g_node
        assign node[i] = data_i[i];
      end
      assign valid = valid_i;
      assign sb    = sb_i;
    end else begin : g_adders
      localparam int unsigned PrevCount = count_at(l - 1);
      logic signed [Width-1:0] node_d [Count];

      for (genvar i = 0; i < Count; i++) begin : g_node
        if (2 * i + 1 < PrevCount) begin : g_pair
          assign node_d[i] = Width'(g_level[l-1].node[2*i]) + Width'(g_level[l-1].node[2*i+1]);
        end else begin : g_single
          assign node_d[i] = Width'(g_level[l-1].node[2*i]);
        end
      end

      if (registered_at(l)) begin : g_reg
        logic signed [Width-1:0] node_q [Count];
        logic                    valid_q;
        logic [SbWidth-1:0]      sb_q;

        always_ff @(posedge clk_i) begin
          if (!rst_ni) valid_q <= 1'b0;
          else         valid_q <= g_level[l-1].valid;
        end
        always_ff @(posedge clk_i) begin
          node_q <= node_d;
          sb_q   <= g_level[l-1].sb;
        end
        assign node  = node_q;
        assign valid = valid_q;
        assign sb    = sb_q;
      end else begin : g_comb
        assign node  = node_d;
        assign valid = g_level[l-1].valid;
        assign sb    = g_level[l-1].sb;
      end
    end
  end

  assign sum_o   = g_level[Levels].node[0];
  assign valid_o = g_level[Levels].valid;
  assign sb_o    = g_level[Levels].sb;

  // Out of reset the valid bit of every stage is known (keeps X out of the
  // control path that qualifies the reset-free data registers).
  `STRATA_ASSERT(tree_valid_known, clk_i, rst_ni, !$isunknown(valid_o))

`ifndef SYNTHESIS
  initial begin
    assert (Inputs >= 1 && InWidth >= 1 && SbWidth >= 1)
      else $fatal(1, "strata_adder_tree: Inputs, InWidth and SbWidth must be >= 1");
    assert (Stages <= Levels)
      else $fatal(1, "strata_adder_tree: Stages %0d exceeds the %0d adder levels", Stages, Levels);
  end
`endif

endmodule : strata_adder_tree
