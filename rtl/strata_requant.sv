// Requantisation of Channels accumulators per beat (the BRIEF's numerics):
//   y[c] = clamp(rshift_round(acc[c] * M[c], S[c]), lo, hi)
//   rshift_round(v, s) = (v + 2^(s-1)) >>> s for s > 0, v for s = 0
// with acc int32, M uint16, S 0..MaxShift, and the beat's clamp [lo, hi]
// (int8; [-128, 127] none, [0, 127] ReLU, any sub-range for ReLU6-style).
// Bit-exact with strata::requantize. Channels = Pes requantises one result beat
// of the PE array (one output position, Pes channels) per cycle.
//
// Pipeline (edges after the accepting edge E0):
//   E0 operands registered (multiplier inputs)
//   E1 partial products acc[31:16] * M (signed 16 x 17) and acc[15:0] * M
//      (unsigned 16 x 16): each fits one DSP multiplier (18x18, 18x25, 27x27)
//   E2 exact 49-bit sum: (hi << 16) + lo + rounding constant 2^(S-1)
//   E3 arithmetic shift right by S
//   E4 saturate to int8, clamp to [lo, hi], result pushed
// Latency: 5 cycles from the accepting edge to out_valid_o. Throughput: one
// beat (Channels results) per cycle while the output is drained.
// Back-pressure: credit based like strata_pe (result FIFO of 6 = pipeline
// depth + 2; in_ready_o depends on no input, no enable on the datapath).
// Errors (sticky err_o, cleared by reset; results still come out, one per beat):
//   S > MaxShift (the shift saturates at MaxShift) and lo > hi (the result is
//   hi when the value exceeds hi, otherwise lo).
`include "strata_assert.svh"

module strata_requant
  import strata_cfg_pkg::DataWidth, strata_cfg_pkg::AccWidth, strata_cfg_pkg::MultWidth;
  import strata_cfg_pkg::ShiftWidth, strata_cfg_pkg::MaxShift;
  import strata_pkg::*;
#(
  parameter int unsigned Channels = strata_cfg_pkg::Pes  // results per beat, >= 1
) (
  input  logic                   clk_i,       // clock
  input  logic                   rst_ni,      // synchronous reset, active low
  input  logic                   in_valid_i,  // beat valid
  output logic                   in_ready_o,  // beat accepted
  input  acc_t   [Channels-1:0]  in_acc_i,    // accumulators
  input  mult_t  [Channels-1:0]  in_mult_i,   // multipliers M (unsigned)
  input  shift_t [Channels-1:0]  in_shift_i,  // shifts S, 0..MaxShift
  input  data_t                  in_lo_i,     // clamp low bound for this beat
  input  data_t                  in_hi_i,     // clamp high bound for this beat
  output logic                   out_valid_o, // results valid
  input  logic                   out_ready_i, // results taken
  output data_t  [Channels-1:0]  out_data_o,  // requantised int8 values
  output logic                   err_o        // sticky parameter error
);

  localparam int unsigned LoWidth     = AccWidth / 2;          // unsigned low half of acc
  localparam int unsigned HiWidth     = AccWidth - LoWidth;    // signed high half
  localparam int unsigned PpHiWidth   = HiWidth + MultWidth + 1;
  localparam int unsigned PpLoWidth   = LoWidth + MultWidth;
  localparam int unsigned SumWidth    = AccWidth + MultWidth + 1;  // acc * M + 2^(S-1)
  localparam int unsigned ResultDepth = 6;

  // ---------------------------------------------------------------------------
  // Stage 0: accept and check the parameters.
  logic fire, credit;
  logic bad_shift, bad_clamp;
  logic err_d, err_q;

  assign in_ready_o = credit;
  assign fire       = in_valid_i && in_ready_o;
  assign bad_clamp  = (in_lo_i > in_hi_i);

  always_comb begin
    bad_shift = 1'b0;
    for (int unsigned c = 0; c < Channels; c++) begin
      if (32'(in_shift_i[c]) > MaxShift) bad_shift = 1'b1;
    end
  end

  assign err_d = err_q || (fire && (bad_shift || bad_clamp));

  always_ff @(posedge clk_i) begin
    if (!rst_ni) err_q <= 1'b0;
    else         err_q <= err_d;
  end

  assign err_o = err_q;

  // ---------------------------------------------------------------------------
  // Control pipeline shared by the channels: valid bits (reset) and the clamp.
  logic  valid_q1, valid_q2, valid_q3, valid_q4;
  data_t lo_q1, hi_q1, lo_q2, hi_q2, lo_q3, hi_q3, lo_q4, hi_q4;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      valid_q1 <= 1'b0;
      valid_q2 <= 1'b0;
      valid_q3 <= 1'b0;
      valid_q4 <= 1'b0;
    end else begin
      valid_q1 <= fire;
      valid_q2 <= valid_q1;
      valid_q3 <= valid_q2;
      valid_q4 <= valid_q3;
    end
  end
  always_ff @(posedge clk_i) begin
    lo_q1 <= in_lo_i;
    hi_q1 <= in_hi_i;
    lo_q2 <= lo_q1;
    hi_q2 <= hi_q1;
    lo_q3 <= lo_q2;
    hi_q3 <= hi_q2;
    lo_q4 <= lo_q3;
    hi_q4 <= hi_q3;
  end

  // ---------------------------------------------------------------------------
  // Datapath, one copy per channel.
  data_t [Channels-1:0] y_d;

  for (genvar c = 0; c < Channels; c++) begin : g_channel
    // Stage 1: multiplier inputs; the shift saturates at MaxShift.
    acc_t   acc_q1;
    mult_t  mult_q1;
    shift_t shift_d, shift_q1;

    assign shift_d = (32'(in_shift_i[c]) > MaxShift) ? ShiftWidth'(MaxShift) : in_shift_i[c];

    always_ff @(posedge clk_i) begin
      acc_q1   <= in_acc_i[c];
      mult_q1  <= in_mult_i[c];
      shift_q1 <= shift_d;
    end

    // Stage 2: partial products and the rounding constant.
    logic signed [HiWidth-1:0]    acc_hi;
    logic signed [MultWidth:0]    mult_s;      // M as a non-negative signed value
    logic signed [PpHiWidth-1:0]  pp_hi_d, pp_hi_q2;
    logic [PpLoWidth-1:0]         pp_lo_d, pp_lo_q2;
    logic [SumWidth-1:0]          round_d, round_q2;
    shift_t                       shift_q2;

    assign acc_hi  = acc_q1[AccWidth-1:LoWidth];
    assign mult_s  = {1'b0, mult_q1};
    assign pp_hi_d = acc_hi * mult_s;
    assign pp_lo_d = PpLoWidth'(acc_q1[LoWidth-1:0]) * PpLoWidth'(mult_q1);
    assign round_d = (shift_q1 == '0) ? '0 : (SumWidth'(1) << (shift_q1 - ShiftWidth'(1)));

    always_ff @(posedge clk_i) begin
      pp_hi_q2 <= pp_hi_d;
      pp_lo_q2 <= pp_lo_d;
      round_q2 <= round_d;
      shift_q2 <= shift_q1;
    end

    // Stage 3: acc * M + 2^(S-1), exact in SumWidth bits.
    logic signed [SumWidth-1:0] sum_d, sum_q3;
    shift_t                     shift_q3;

    assign sum_d = (SumWidth'(pp_hi_q2) <<< LoWidth) + $signed(SumWidth'(pp_lo_q2))
                 + $signed(round_q2);

    always_ff @(posedge clk_i) begin
      sum_q3   <= sum_d;
      shift_q3 <= shift_q2;
    end

    // Stage 4: arithmetic shift.
    logic signed [SumWidth-1:0] shifted_d, shifted_q4;

    assign shifted_d = sum_q3 >>> shift_q3;

    always_ff @(posedge clk_i) begin
      shifted_q4 <= shifted_d;
    end

    // Stage 5 (into the result FIFO): saturate to int8, then clamp to [lo, hi].
    logic  fits, sign;
    data_t sat;

    assign sign = shifted_q4[SumWidth-1];
    assign fits = (shifted_q4[SumWidth-1:DataWidth-1] == {(SumWidth - DataWidth + 1){sign}});

    always_comb begin
      if (fits)      sat = shifted_q4[DataWidth-1:0];
      else if (sign) sat = {1'b1, {(DataWidth - 1){1'b0}}};
      else           sat = {1'b0, {(DataWidth - 1){1'b1}}};
      if (sat > hi_q4)      y_d[c] = hi_q4;
      else if (sat < lo_q4) y_d[c] = lo_q4;
      else                  y_d[c] = sat;
    end
  end

  strata_credit_fifo #(
    .Width (Channels * DataWidth),
    .Depth (ResultDepth)
  ) u_result (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (credit),
    .reserve_i   (fire),
    .push_i      (valid_q4),
    .push_data_i (y_d),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data_o)
  );

  `STRATA_ASSERT_STREAM(requant_in, clk_i, rst_ni, in_valid_i, in_ready_o,
                        {in_acc_i, in_mult_i, in_shift_i, in_lo_i, in_hi_i})
  `STRATA_ASSERT_STREAM(requant_out, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)

`ifndef SYNTHESIS
  initial begin
    assert (Channels >= 1) else $fatal(1, "strata_requant: Channels must be >= 1");
    assert (MaxShift < SumWidth && MaxShift < (1 << ShiftWidth))
      else $fatal(1, "strata_requant: MaxShift %0d out of range", MaxShift);
  end
`endif

endmodule : strata_requant
