// SPDX-License-Identifier: Apache-2.0
// Pooling unit (background item 2 "dispatcher + max-pool unit + avg-pool unit +
// selector"): reduces each window to one pooled pixel vector with the
// operation carried by the window (in_op_i, strata_pkg::pool_op_e; set per
// layer at run time, it may change between any two windows).
//
// Dispatcher: sends a window to the unit of its operation. Results leave in
// window order: a window whose operation differs from that of the windows
// still inside the units waits until they have left (a pipeline drain of at
// most the avg unit's latency, once per change of operation). Selector: the
// output of the unit that has a result, registered (select stage) before
// the clamp and the output buffer.
//
// Back-pressure is credit based (strata_credit_fifo): the units never stall,
// a window is taken only while a slot of the output buffer is free, and its
// result waits there. The buffer has OutDepth slots (9 for 3x3 windows), so
// with the output stalled the unit takes exactly OutDepth windows.
// out_ready_i has no combinational path to in_ready_o (which reads
// flip-flops and in_op_i only: the output buffer's credit and the units'
// empty flag): the ready chain through the units' register stages does not
// reach back into the window generator.
//
// Select stage: the selected result is registered before the clamp, so
// neither a unit's last register (the avg unit's is inside a DSP block, in a
// column away from the fabric) nor the operation register starts a path
// that ends at the output buffer's write port.
//
// Output clamp (OutClamp = 1): each pooled element is clamped to
// [clamp_lo_i, clamp_hi_i] (signed) between the select stage and the output
// buffer, so a client that clamps after pooling reads the buffer without
// comparators behind its read port. The bounds are registered where they
// are used (a client's configuration register may sit across the die, and
// its route would otherwise meet the clamp in front of the buffer's write
// data), so a change takes effect one cycle later: the bounds must
// be stable while windows are inside and from one cycle before a window
// enters (a result is at least two cycles behind its window; asserted).
// Latency: 6 cycles (max) or 8 cycles (avg) for 3x3 windows (the unit, the
// select stage, then the output buffer). Throughput: one window per cycle
// while the operation stays the same.
`include "strata_assert.svh"

module strata_pool #(
  parameter int unsigned Lanes     = strata_cfg_pkg::Lanes,          // channels in parallel
  parameter int unsigned DataWidth = strata_cfg_pkg::DataWidth,      // signed element bits
  parameter int unsigned Kernel    = strata_cfg_pkg::MaxPoolKernel,  // window side (taps k x k)
  parameter int unsigned UserWidth = 1,                              // sideband bits
  parameter bit          OutClamp  = 1'b0,                           // clamp the results
  localparam int unsigned Taps = Kernel * Kernel
) (
  input  logic                           clk_i,        // clock
  input  logic                           rst_ni,       // synchronous reset, active low
  input  logic                           in_valid_i,   // window offered
  output logic                           in_ready_o,   // window taken
  input  strata_pkg::pool_op_e           in_op_i,      // PoolMax or PoolAvg for this window
  input  logic [Taps*Lanes*DataWidth-1:0] in_taps_i,   // tap t = ky*Kernel + kx, lane l at
                                                       // (t*Lanes + l)*DataWidth
  input  logic [Taps-1:0]                in_mask_i,    // bit t: tap inside the image (one at least)
  input  logic [UserWidth-1:0]           in_user_i,    // sideband, carried along
  output logic                           out_valid_o,  // pooled pixel vector offered
  input  logic                           out_ready_i,  // pooled pixel vector taken
  output logic [Lanes*DataWidth-1:0]     out_data_o,   // lane l at l*DataWidth
  output logic [UserWidth-1:0]           out_user_o,   // sideband of this window
  input  logic [DataWidth-1:0]           clamp_lo_i,   // OutClamp: lower bound (signed)
  input  logic [DataWidth-1:0]           clamp_hi_i    // OutClamp: upper bound (signed)
);

  import strata_pkg::*;

  // Windows inside the units are bounded by the avg unit's register stages
  // (tree stages + 2, its latency); count with room to spare. A window
  // reserved at edge 0 leaves its unit at edge MaxInFlight at the latest and
  // is pushed one edge later (select stage), so MaxInFlight + 3 output slots
  // keep the full rate (strata_credit_fifo).
  localparam int unsigned MaxInFlight   = ((Taps > 1) ? $clog2(Taps) : 1) + 2;
  localparam int unsigned InFlightWidth = $clog2(MaxInFlight + 2);
  localparam int unsigned OutDepth      = MaxInFlight + 3;
  localparam int unsigned OutWidth      = Lanes * DataWidth + UserWidth;

  pool_op_e                 cur_op_d, cur_op_q;
  logic [InFlightWidth-1:0] in_flight_d, in_flight_q;
  logic                     empty_q;   // in_flight_q == 0, a flip-flop of its own
  logic                     may_enter, in_fire, credit, unit_done;
  logic [Lanes*DataWidth-1:0] clamped;  // the select stage's result, clamped if OutClamp

  // Select stage (data and sideband registers run free: sel_valid_q
  // qualifies them).
  logic                       sel_valid_q;
  logic [Lanes*DataWidth-1:0] sel_data_q;
  logic [UserWidth-1:0]       sel_user_q;

  logic                         max_in_valid, max_in_ready, max_out_valid, max_out_ready;
  logic                         avg_in_valid, avg_in_ready, avg_out_valid, avg_out_ready;
  logic [Lanes*DataWidth-1:0]   max_data, avg_data;
  logic [UserWidth-1:0]         max_user, avg_user;

  // Dispatcher.
  assign may_enter    = (in_op_i == cur_op_q) || empty_q;
  assign max_in_valid = in_valid_i && may_enter && credit && (in_op_i == PoolMax);
  assign avg_in_valid = in_valid_i && may_enter && credit && (in_op_i == PoolAvg);
  assign in_ready_o   = may_enter && credit;
  assign in_fire      = in_valid_i && in_ready_o;

  // Selector: the unit with a result (only the unit of cur_op_q can hold
  // windows, so at most one; asserted). The units never stall (their
  // results have reserved room in the output buffer).
  assign unit_done = max_out_valid || avg_out_valid;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) sel_valid_q <= 1'b0;
    else         sel_valid_q <= unit_done;
  end

  always_ff @(posedge clk_i) begin
    sel_data_q <= max_out_valid ? max_data : avg_data;
    sel_user_q <= max_out_valid ? max_user : avg_user;
  end

  if (OutClamp) begin : g_clamp
    typedef logic signed [DataWidth-1:0] elem_t;
    logic [DataWidth-1:0] lo_q, hi_q;  // the bounds, one cycle late

    always_ff @(posedge clk_i) begin
      lo_q <= clamp_lo_i;
      hi_q <= clamp_hi_i;
    end

    for (genvar l = 0; l < Lanes; l++) begin : g_lane
      elem_t v;
      assign v = elem_t'(sel_data_q[l*DataWidth +: DataWidth]);
      assign clamped[l*DataWidth +: DataWidth] =
          (v < elem_t'(lo_q)) ? lo_q : (v > elem_t'(hi_q)) ? hi_q : v;
    end

    `STRATA_ASSERT(pool_clamp_bounds, clk_i, rst_ni,
                   !sel_valid_q || (lo_q == clamp_lo_i && hi_q == clamp_hi_i))
  end else begin : g_no_clamp
    logic [2*DataWidth-1:0] unused_bounds;
    assign unused_bounds = {clamp_lo_i, clamp_hi_i};
    assign clamped = sel_data_q;
  end

  assign max_out_ready = 1'b1;
  assign avg_out_ready = 1'b1;

  always_comb begin
    cur_op_d    = in_fire ? in_op_i : cur_op_q;
    in_flight_d = in_flight_q + InFlightWidth'(in_fire) - InFlightWidth'(unit_done);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cur_op_q    <= PoolMax;
      in_flight_q <= '0;
      empty_q     <= 1'b1;
    end else begin
      cur_op_q    <= cur_op_d;
      in_flight_q <= in_flight_d;
      empty_q     <= in_flight_d == '0;
    end
  end

  strata_maxpool #(
    .Lanes     (Lanes),
    .DataWidth (DataWidth),
    .Kernel    (Kernel),
    .UserWidth (UserWidth)
  ) u_max (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (max_in_valid),
    .in_ready_o  (max_in_ready),
    .in_taps_i   (in_taps_i),
    .in_mask_i   (in_mask_i),
    .in_user_i   (in_user_i),
    .out_valid_o (max_out_valid),
    .out_ready_i (max_out_ready),
    .out_data_o  (max_data),
    .out_user_o  (max_user)
  );

  strata_avgpool #(
    .Lanes     (Lanes),
    .DataWidth (DataWidth),
    .Kernel    (Kernel),
    .UserWidth (UserWidth)
  ) u_avg (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (avg_in_valid),
    .in_ready_o  (avg_in_ready),
    .in_taps_i   (in_taps_i),
    .in_mask_i   (in_mask_i),
    .in_user_i   (in_user_i),
    .out_valid_o (avg_out_valid),
    .out_ready_i (avg_out_ready),
    .out_data_o  (avg_data),
    .out_user_o  (avg_user)
  );

  // Output buffer: one slot reserved per window taken (held from the
  // window's entry until its result leaves, through the select stage).
  strata_credit_fifo #(
    .Width (OutWidth),
    .Depth (OutDepth)
  ) u_out (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (credit),
    .reserve_i   (in_fire),
    .push_i      (sel_valid_q),
    .push_data_i ({sel_user_q, clamped}),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  ({out_user_o, out_data_o})
  );

  `STRATA_ASSERT_STREAM(pool_in, clk_i, rst_ni, in_valid_i, in_ready_o,
                        {in_op_i, in_taps_i, in_mask_i, in_user_i})
  `STRATA_ASSERT_STREAM(pool_out, clk_i, rst_ni, out_valid_o, out_ready_i,
                        {out_data_o, out_user_o})
  // The unit not selected is empty, so the order of results is the order of
  // windows.
  `STRATA_ASSERT(pool_one_unit_busy, clk_i, rst_ni,
                 (cur_op_q == PoolMax) ? !avg_out_valid : !max_out_valid)
  // With their outputs never stalled, both units take a window every cycle.
  `STRATA_ASSERT(pool_units_ready, clk_i, rst_ni, max_in_ready && avg_in_ready)
  `STRATA_ASSERT(pool_empty_flag, clk_i, rst_ni, empty_q == (in_flight_q == '0))
  `STRATA_ASSERT(pool_in_flight_bound, clk_i, rst_ni, 32'(in_flight_q) <= MaxInFlight)

`ifndef SYNTHESIS
  initial begin
    assert (Kernel >= 1 && Lanes >= 1) else $fatal(1, "strata_pool: Kernel and Lanes >= 1");
  end
`endif

endmodule : strata_pool
