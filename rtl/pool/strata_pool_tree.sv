// SPDX-License-Identifier: Apache-2.0
// Pipelined reduction tree over the valid taps of a window, Lanes lanes in
// parallel: the comparator array (Op = PoolMax) of the max-pool unit and the
// adder array (Op = PoolAvg: sum) of the avg-pool unit (background item 2).
//
// Taps whose mask bit is 0 enter the tree as the identity of the operation
// (the most negative OutWidth value for max, 0 for sum), so they never change
// the result; the max tree applies the masks in its first level instead: the
// compare reads the raw taps and the masks steer only the select after it
// (no multiplexer in front of the carry chain). The tree is binary,
// ceil(log2(Taps)) levels; a pipeline register follows every LevelsPerStage
// levels and the last level (one register if Taps = 1). The default, a
// register after every level, leaves one compare-and-select or one add
// between flip-flops. Each register stage is a
// valid/ready slot that fills bubbles, so the tree takes one window per cycle
// when the output is not stalled; its data registers load whenever the slot
// is ready, valid or not (valid_q qualifies them), so the input valid drives
// no data register's enable (none at all when the output never stalls).
// User is carried alongside unchanged.
//
// Latency: Stages = max(1, ceil(Levels / LevelsPerStage)) cycles.
// Throughput: one window per cycle.
`include "strata_assert.svh"

module strata_pool_tree #(
  parameter strata_pkg::pool_op_e Op         = strata_pkg::PoolMax,     // max or sum
  parameter int unsigned          Lanes      = strata_cfg_pkg::Lanes,   // parallel lanes
  parameter int unsigned          InWidth    = strata_cfg_pkg::DataWidth,  // signed input bits
  parameter int unsigned          Taps       = strata_cfg_pkg::MaxPoolKernel ** 2,  // window taps
  parameter int unsigned          OutWidth   = InWidth,  // signed result bits (sum: grow)
  parameter int unsigned          UserWidth  = 1,        // sideband bits
  parameter int unsigned          LevelsPerStage = 1,    // tree levels between registers
  localparam int unsigned Levels = (Taps > 1) ? $clog2(Taps) : 0
) (
  input  logic                        clk_i,       // clock
  input  logic                        rst_ni,      // synchronous reset, active low
  input  logic                        in_valid_i,  // window offered
  output logic                        in_ready_o,  // window taken
  input  logic [Taps*Lanes*InWidth-1:0] in_taps_i, // tap t lane l at (t*Lanes + l)*InWidth
  input  logic [Taps-1:0]             in_mask_i,   // bit t: tap t takes part
  input  logic [UserWidth-1:0]        in_user_i,   // sideband, carried along
  output logic                        out_valid_o, // result offered
  input  logic                        out_ready_i, // result taken
  output logic [Lanes*OutWidth-1:0]   out_data_o,  // lane l at l*OutWidth
  output logic [UserWidth-1:0]        out_user_o   // sideband of this window
);

  typedef logic signed [OutWidth-1:0] val_t;

  localparam val_t Identity = (Op == strata_pkg::PoolMax)
                              ? val_t'({1'b1, {(OutWidth - 1){1'b0}}}) : val_t'(0);

  function automatic int unsigned nodes_at(int unsigned level);
    return (Taps + (2 ** level) - 1) / (2 ** level);
  endfunction

  function automatic bit registered(int unsigned level);
    if (Levels == 0) return 1'b1;
    return (level != 0) && ((level % LevelsPerStage == 0) || (level == Levels));
  endfunction

  function automatic val_t combine(val_t a, val_t b);
    if (Op == strata_pkg::PoolMax) return (a > b) ? a : b;
    return a + b;
  endfunction

  // First max level: the larger of the taps whose mask bit is set (Identity
  // if neither is). The compare reads the raw taps, so no mask multiplexer
  // precedes its carry chain; the masks only steer the select after it.
  function automatic val_t max_masked(val_t a, logic a_ok, val_t b, logic b_ok);
    if (a_ok && (!b_ok || (a > b))) return a;
    if (b_ok) return b;
    return Identity;
  endfunction

  // The max tree applies the masks in its first level (above) when it has
  // one; the leaves then carry the raw taps.
  localparam bit MaskInLevel1 = (Op == strata_pkg::PoolMax) && (Levels >= 1);

  // Per level: the values after the level's (optional) register, with their
  // valid bit and sideband; ready: level l can take new values; ready_next:
  // the level after it can.
  for (genvar l = 0; l <= Levels; l++) begin : g_level
    localparam int unsigned N = nodes_at(l);
    val_t                 v_d [N][Lanes];
    val_t                 v [N][Lanes];
    logic                 valid_d, valid, ready, ready_next;
    logic [UserWidth-1:0] user_d, user;

    if (l == Levels) begin : g_last
      assign ready_next = out_ready_i;
    end else begin : g_inner
      assign ready_next = g_level[l+1].ready;
    end

    if (l == 0) begin : g_leaves
      always_comb begin
        for (int unsigned t = 0; t < N; t++) begin
          for (int unsigned ln = 0; ln < Lanes; ln++) begin
            v_d[t][ln] = (in_mask_i[t] || MaskInLevel1)
                         ? val_t'($signed(in_taps_i[(t*Lanes + ln)*InWidth +: InWidth]))
                         : Identity;
          end
        end
      end
      assign valid_d = in_valid_i;
      assign user_d  = in_user_i;
    end else begin : g_nodes
      localparam int unsigned M = nodes_at(l - 1);
      always_comb begin
        for (int unsigned i = 0; i < N; i++) begin
          for (int unsigned ln = 0; ln < Lanes; ln++) begin
            if (MaskInLevel1 && (l == 1)) begin
              if (2 * i + 1 < M) begin
                v_d[i][ln] = max_masked(g_level[0].v[2*i][ln], in_mask_i[2*i],
                                        g_level[0].v[2*i+1][ln], in_mask_i[2*i+1]);
              end else begin
                v_d[i][ln] = in_mask_i[2*i] ? g_level[0].v[2*i][ln] : Identity;
              end
            end else if (2 * i + 1 < M) begin
              v_d[i][ln] = combine(g_level[l-1].v[2*i][ln], g_level[l-1].v[2*i+1][ln]);
            end else begin
              v_d[i][ln] = g_level[l-1].v[2*i][ln];
            end
          end
        end
      end
      assign valid_d = g_level[l-1].valid;
      assign user_d  = g_level[l-1].user;
    end

    if (registered(l)) begin : g_reg
      logic valid_q;
      assign ready = !valid_q || ready_next;
      always_ff @(posedge clk_i) begin
        if (!rst_ni) valid_q <= 1'b0;
        else if (ready) valid_q <= valid_d;
      end
      always_ff @(posedge clk_i) begin
        if (ready) begin  // valid_q qualifies the data: no valid in the enable
          v    <= v_d;
          user <= user_d;
        end
      end
      assign valid = valid_q;
    end else begin : g_wire
      assign ready = ready_next;
      assign v     = v_d;
      assign valid = valid_d;
      assign user  = user_d;
    end
  end

  assign in_ready_o  = g_level[0].ready;
  assign out_valid_o = g_level[Levels].valid;
  assign out_user_o  = g_level[Levels].user;
  for (genvar ln = 0; ln < Lanes; ln++) begin : g_out
    assign out_data_o[ln*OutWidth +: OutWidth] = g_level[Levels].v[0][ln];
  end

  `STRATA_ASSERT_STREAM(tree_in, clk_i, rst_ni, in_valid_i, in_ready_o,
                        {in_taps_i, in_mask_i, in_user_i})
  `STRATA_ASSERT_STREAM(tree_out, clk_i, rst_ni, out_valid_o, out_ready_i,
                        {out_data_o, out_user_o})

`ifndef SYNTHESIS
  initial begin
    assert (Taps >= 1 && Lanes >= 1 && InWidth >= 2)
      else $fatal(1, "strata_pool_tree: Taps, Lanes >= 1 and InWidth >= 2 required");
    assert (LevelsPerStage >= 1) else $fatal(1, "strata_pool_tree: LevelsPerStage must be >= 1");
    // A sum of Taps InWidth-bit values must fit OutWidth; max needs no growth.
    assert ((Op == strata_pkg::PoolMax) ? (OutWidth >= InWidth)
                                        : (OutWidth >= InWidth + Levels))
      else $fatal(1, "strata_pool_tree: OutWidth %0d too small", OutWidth);
  end
`endif

endmodule : strata_pool_tree
