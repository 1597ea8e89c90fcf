// SPDX-License-Identifier: Apache-2.0
// Max-pool unit (background item 2 "max-pool unit: comparator array"): the largest
// valid tap of a window, per lane. A window arrives complete (all k x k taps
// in one beat, from strata_window_gen), so the unit is a pipelined comparator
// tree (strata_pool_tree, Op = PoolMax); padded taps (mask 0) enter as -2^7
// and can never win because every window holds at least one valid tap (a
// window with an empty mask gives -128 in every lane and fails an assertion).
// The pooling unit of background item 2 keeps partial maxima in an
// intermediate-result queue while a window's elements arrive one per cycle;
// none is needed here: the window generator's line buffer and window register
// already assemble the window.
//
// Latency: max(1, ceil(log2(Kernel^2))) cycles (4 for 3x3), one register per
// tree level. Throughput: one window per cycle. User is carried alongside
// (position, frame flags).
`include "strata_assert.svh"

module strata_maxpool #(
  parameter int unsigned Lanes     = strata_cfg_pkg::Lanes,          // channels in parallel
  parameter int unsigned DataWidth = strata_cfg_pkg::DataWidth,      // signed element bits
  parameter int unsigned Kernel    = strata_cfg_pkg::MaxPoolKernel,  // window side (taps k x k)
  parameter int unsigned UserWidth = 1,                              // sideband bits
  localparam int unsigned Taps = Kernel * Kernel
) (
  input  logic                           clk_i,        // clock
  input  logic                           rst_ni,       // synchronous reset, active low
  input  logic                           in_valid_i,   // window offered
  output logic                           in_ready_o,   // window taken
  input  logic [Taps*Lanes*DataWidth-1:0] in_taps_i,   // tap t = ky*Kernel + kx, lane l at
                                                       // (t*Lanes + l)*DataWidth
  input  logic [Taps-1:0]                in_mask_i,    // bit t: tap inside the image (one at least)
  input  logic [UserWidth-1:0]           in_user_i,    // sideband, carried along
  output logic                           out_valid_o,  // pooled pixel vector offered
  input  logic                           out_ready_i,  // pooled pixel vector taken
  output logic [Lanes*DataWidth-1:0]     out_data_o,   // lane l at l*DataWidth
  output logic [UserWidth-1:0]           out_user_o    // sideband of this window
);

  strata_pool_tree #(
    .Op        (strata_pkg::PoolMax),
    .Lanes     (Lanes),
    .InWidth   (DataWidth),
    .Taps      (Taps),
    .OutWidth  (DataWidth),
    .UserWidth (UserWidth)
  ) u_comparators (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (in_valid_i),
    .in_ready_o  (in_ready_o),
    .in_taps_i   (in_taps_i),
    .in_mask_i   (in_mask_i),
    .in_user_i   (in_user_i),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data_o),
    .out_user_o  (out_user_o)
  );

  // An empty window has no maximum; the window generator never sends one.
  `STRATA_ASSERT(maxpool_nonempty, clk_i, rst_ni, !in_valid_i || (in_mask_i != '0))

`ifndef SYNTHESIS
  initial begin
    assert (Kernel >= 1 && Lanes >= 1 && DataWidth >= 2)
      else $fatal(1, "strata_maxpool: Kernel, Lanes >= 1 and DataWidth >= 2 required");
  end
`endif

endmodule : strata_maxpool
