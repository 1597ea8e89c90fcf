// SPDX-License-Identifier: Apache-2.0
// Bench top of the pooling path: image stream -> strata_window_gen (windows
// of at most Kernel x Kernel) -> strata_pool -> pooled pixel vectors with
// their position and frame flags. Bench only (not in rtl/): the accelerator
// top makes the same connection. The operation is taken with the frame
// configuration and applies to every window of the frame.
`include "strata_assert.svh"

module strata_pool_e2e_tb_top #(
  parameter int unsigned Lanes         = strata_cfg_pkg::Lanes,          // channels per pixel
  parameter int unsigned DataWidth     = strata_cfg_pkg::DataWidth,      // bits per channel
  parameter int unsigned Kernel        = strata_cfg_pkg::MaxPoolKernel,  // largest pool window
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth,  // line-buffer row length
  parameter int unsigned DimWidth      = 16,                             // H, W, oy, ox bits
  parameter int unsigned StrideWidth   = 4,                              // stride bits
  localparam int unsigned PixelWidth  = Lanes * DataWidth,
  localparam int unsigned KernelWidth = $clog2(Kernel + 1)
) (
  input  logic                   clk_i,             // clock
  input  logic                   rst_ni,            // synchronous reset, active low
  input  logic                   cfg_valid_i,       // frame configuration offered
  output logic                   cfg_ready_o,       // configuration taken
  input  logic [DimWidth-1:0]    cfg_height_i,      // H
  input  logic [DimWidth-1:0]    cfg_width_i,       // W
  input  logic [KernelWidth-1:0] cfg_kernel_i,      // k
  input  logic [StrideWidth-1:0] cfg_stride_i,      // s
  input  logic [KernelWidth-1:0] cfg_pad_top_i,     // padding rows above
  input  logic [KernelWidth-1:0] cfg_pad_left_i,    // padding columns left
  input  logic [KernelWidth-1:0] cfg_pad_bottom_i,  // padding rows below
  input  logic [KernelWidth-1:0] cfg_pad_right_i,   // padding columns right
  input  logic                   cfg_ceil_i,        // ceil mode
  input  strata_pkg::pool_op_e   cfg_op_i,          // max or avg for this frame
  output logic                   cfg_error_o,       // illegal configuration (frame dropped)
  output logic                   busy_o,            // window generator busy
  input  logic                   in_valid_i,        // pixel vector offered
  output logic                   in_ready_o,        // pixel vector taken
  input  logic [PixelWidth-1:0]  in_data_i,         // pixel vector, row-major
  output logic                   out_valid_o,       // pooled pixel vector offered
  input  logic                   out_ready_i,       // pooled pixel vector taken
  output logic [PixelWidth-1:0]  out_data_o,        // pooled pixel vector
  output logic [DimWidth-1:0]    out_oy_o,          // output row
  output logic [DimWidth-1:0]    out_ox_o,          // output column
  output logic                   out_first_o,       // first output of the frame
  output logic                   out_last_o         // last output of the frame
);

  localparam int unsigned Taps        = Kernel * Kernel;
  localparam int unsigned TapIdxWidth = (Kernel > 1) ? $clog2(Kernel) : 1;
  localparam int unsigned CountWidth  = $clog2(Taps + 1);
  localparam int unsigned UserWidth   = 2 * DimWidth + 2;

  strata_pkg::pool_op_e op_d, op_q;

  logic                      win_valid, win_ready, win_first, win_last;
  logic [Taps*PixelWidth-1:0] win_data;
  logic [Taps-1:0]           win_mask;
  logic [DimWidth-1:0]       win_oy, win_ox;
  logic [CountWidth-1:0]     unused_count;
  logic [TapIdxWidth-1:0]    unused_ky_lo, unused_ky_hi, unused_kx_lo, unused_kx_hi;
  logic [UserWidth-1:0]      out_user;

  assign op_d = (cfg_valid_i && cfg_ready_o) ? cfg_op_i : op_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) op_q <= strata_pkg::PoolMax;
    else         op_q <= op_d;
  end

  strata_window_gen #(
    .Lanes         (Lanes),
    .DataWidth     (DataWidth),
    .MaxKernel     (Kernel),
    .MaxImageWidth (MaxImageWidth),
    .DimWidth      (DimWidth),
    .StrideWidth   (StrideWidth)
  ) u_window_gen (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .cfg_valid_i      (cfg_valid_i),
    .cfg_ready_o      (cfg_ready_o),
    .cfg_height_i     (cfg_height_i),
    .cfg_width_i      (cfg_width_i),
    .cfg_kernel_i     (cfg_kernel_i),
    .cfg_stride_i     (cfg_stride_i),
    .cfg_pad_top_i    (cfg_pad_top_i),
    .cfg_pad_left_i   (cfg_pad_left_i),
    .cfg_pad_bottom_i (cfg_pad_bottom_i),
    .cfg_pad_right_i  (cfg_pad_right_i),
    .cfg_ceil_i       (cfg_ceil_i),
    .cfg_error_o      (cfg_error_o),
    .busy_o           (busy_o),
    .in_valid_i       (in_valid_i),
    .in_ready_o       (in_ready_o),
    .in_data_i        (in_data_i),
    .win_valid_o      (win_valid),
    .win_ready_i      (win_ready),
    .win_data_o       (win_data),
    .win_mask_o       (win_mask),
    .win_count_o      (unused_count),
    .win_ky_lo_o      (unused_ky_lo),
    .win_ky_hi_o      (unused_ky_hi),
    .win_kx_lo_o      (unused_kx_lo),
    .win_kx_hi_o      (unused_kx_hi),
    .win_oy_o         (win_oy),
    .win_ox_o         (win_ox),
    .win_first_o      (win_first),
    .win_last_o       (win_last)
  );

  strata_pool #(
    .Lanes     (Lanes),
    .DataWidth (DataWidth),
    .Kernel    (Kernel),
    .UserWidth (UserWidth)
  ) u_pool (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (win_valid),
    .in_ready_o  (win_ready),
    .in_op_i     (op_q),
    .in_taps_i   (win_data),
    .in_mask_i   (win_mask),
    .in_user_i   ({win_first, win_last, win_oy, win_ox}),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data_o),
    .out_user_o  (out_user),
    .clamp_lo_i  ('0),  // OutClamp off: no clamp after pooling here
    .clamp_hi_i  ('0)
  );

  assign {out_first_o, out_last_o, out_oy_o, out_ox_o} = out_user;

  `STRATA_ASSERT_STREAM(e2e_out, clk_i, rst_ni, out_valid_o, out_ready_i,
                        {out_data_o, out_user})

endmodule : strata_pool_e2e_tb_top
