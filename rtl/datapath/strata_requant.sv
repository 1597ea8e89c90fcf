// SPDX-License-Identifier: Apache-2.0
// Requantisation of Channels accumulators per beat (docs/numerics.md):
//   y[c] = clamp(rshift_round(acc[c] * M[c], S[c]), lo, hi)
// and, for a beat with in_tab_en_i, the table activation after the clamp:
//   y[c] = T[in_tab_i][clamp(...) + 128]   (docs/numerics.md, "Table activations")
//   rshift_round(v, s) = (v + 2^(s-1)) >>> s for s > 0, v for s = 0
// with acc int32, M uint16, S 0..MaxShift, and the beat's clamp [lo, hi]
// (int8; [-128, 127] none, [0, 127] ReLU, any sub-range for ReLU6-style).
// Bit-exact with strata::requantize. Channels = Pes requantises one result beat
// of the PE array (one output position, Pes channels) per cycle.
//
// Pipeline (edges after the accepting edge E0):
//   E0 operands registered (multiplier inputs)
//   E1 partial products acc[31:16] * M (signed 16 x unsigned 16) and
//      acc[15:0] * M (unsigned 16 x 16): each fits one DSP multiplier (18x18,
//      18x25, 27x27); strata_dsp_mul keeps the E0 and E1 registers inside it
//   E2 exact 48-bit product acc * M = (hi << 16) + lo
//   E3 narrowing shift of u = 2 * acc * M by the shift bits of weight 32, 16, 8
//   E4 ... by the bits of weight 4, 2, 1: the 9 low bits of u >>> S and
//      whether u >>> S fits 9 bits (see below)
//   E5 round and saturate to int8
//   E6 clamp to [lo, hi]
//   E7 result pushed into the result FIFO (no logic in front of its write port);
//      with tables (ActTables > 0) instead registered, and the clamped value
//      registered as the table's block-RAM read address as well
//   E8 (tables) the table entry registered beside the result, and either
//      pushed into the result FIFO
// Activation tables (ActTables > 0): ActTables x 256 int8 entries, one copy
// per channel (strata_ram_1r1w, 256 x ActTables bytes: one DP16KD for 8
// tables on ECP5), so every channel of a beat looks up in parallel. The
// load engine writes N-byte words (tab_*: word w holds entries w*N ..
// w*N + N - 1); a word is written one byte per cycle into every copy, and
// tab_ready_o acknowledges it with its last byte, so a LOAD TABLE finishes
// (and releases the COMPUTE that reads the table) only once every byte is in.
// The dependency semaphores keep a LOAD TABLE and the COMPUTEs reading that
// table apart, so a read never meets a write of its address. ActTables = 0:
// no table RAM; the load engine refuses every LOAD TABLE and the decoder every
// lookup, so the tab_* ports are idle.
// Rounding after the shift: for s >= 1, (v + 2^(s-1)) >> s equals
// ((v >> (s-1)) + 1) >> 1, i.e. ((u >> s) + 1) >> 1 with u = 2v; for s = 0 it
// is (u >> 0) >> 1. So only a 9-bit add remains and no 2^(s-1) decoder.
// Narrowing shifter: the result is int8, so after the shift bits of weight 32,
// 16, ..., 1 are applied (in that order) a value that no longer fits 8 + 2^k
// bits (k = remaining shift bits) can never reach the 9-bit range: it is
// flagged as overflow and only 8 + 2^k bits are kept (49 -> 40 -> 24 -> 16 ->
// 12 -> 10 -> 9 bits), a fraction of a full-width barrel shifter.
// Latency: 8 cycles from the accepting edge to out_valid_o (9 with tables).
// Throughput: one beat (Channels results) per cycle while the output is
// drained. Back-pressure: credit based like strata_pe (result FIFO of the
// pipeline depth + 2: 9, or 10 with tables; in_ready_o depends on no input,
// no enable on the datapath).
// Errors (sticky err_o, cleared by reset; results still come out, one per beat):
//   S > MaxShift (the shift saturates at MaxShift) and lo > hi (the result is
//   hi when the value exceeds hi, otherwise lo).
`include "strata_assert.svh"

module strata_requant
  import strata_cfg_pkg::DataWidth, strata_cfg_pkg::AccWidth, strata_cfg_pkg::MultWidth;
  import strata_cfg_pkg::ShiftWidth, strata_cfg_pkg::MaxShift;
  import strata_pkg::*;
#(
  parameter int unsigned Channels  = strata_cfg_pkg::Pes,        // results per beat, >= 1
  parameter int unsigned Lanes     = strata_cfg_pkg::Lanes,      // bytes per table write word
  parameter int unsigned ActTables = strata_cfg_pkg::ActTables,  // activation tables (0: none)
  localparam int unsigned TableBytes     = ActTables * 256,
  localparam int unsigned TableWords     = (TableBytes + Lanes - 1) / Lanes,
  localparam int unsigned TableAddrWidth = (TableWords > 1) ? $clog2(TableWords) : 1
) (
  input  logic                   clk_i,       // clock
  input  logic                   rst_ni,      // synchronous reset, active low
  input  logic                   in_valid_i,  // beat valid
  output logic                   in_ready_o,  // beat accepted
  input  acc_t   [Channels-1:0]  in_acc_i,    // accumulators
  input  mult_t  [Channels-1:0]  in_mult_i,   // multipliers M (unsigned)
  input  shift_t [Channels-1:0]  in_shift_i,  // shifts S, 0..MaxShift
  input  data_t                  in_lo_i,     // clamp low bound (int8) for this beat
  input  data_t                  in_hi_i,     // clamp high bound (int8) for this beat
  input  logic                   in_tab_en_i, // look this beat's results up in a table
  input  logic [7:0]             in_tab_i,    // the table (< ActTables)
  input  logic                   tab_valid_i, // table word to write
  output logic                   tab_ready_o, // written (with its last byte)
  input  logic [TableAddrWidth-1:0] tab_addr_i, // word address
  input  logic [Lanes*8-1:0]     tab_data_i,  // the word: entries tab_addr_i * Lanes + j
  output logic                   out_valid_o, // results valid
  input  logic                   out_ready_i, // results taken
  output data_t  [Channels-1:0]  out_data_o,  // requantised int8 values
  output logic                   err_o        // sticky: S > MaxShift or lo > hi seen
);

  localparam int unsigned LoWidth     = AccWidth / 2;          // unsigned low half of acc
  localparam int unsigned HiWidth     = AccWidth - LoWidth;    // signed high half
  localparam int unsigned PpHiWidth   = HiWidth + MultWidth;
  localparam int unsigned PpLoWidth   = LoWidth + MultWidth;
  localparam int unsigned ScaledWidth = AccWidth + MultWidth;  // acc * M, signed
  localparam int unsigned RoundWidth  = DataWidth + 1;         // u >>> S before rounding
  localparam int unsigned ShiftSplit  = 3;   // shift bits >= 3 in stage 4, the rest in 5
  localparam int unsigned ClampStage  = 6;   // stage of sat_q6, which the clamp reads
  localparam int unsigned YStage      = 7;   // stage of y_q, the clamped results
  localparam int unsigned PushStage   = (ActTables > 0) ? 8 : 7;  // valid_q[PushStage] pushes
  localparam int unsigned ResultDepth = PushStage + 2;
  localparam data_t DATA_MAX = {1'b0, {(DataWidth - 1){1'b1}}};
  localparam data_t DATA_MIN = {1'b1, {(DataWidth - 1){1'b0}}};
  localparam logic signed [RoundWidth-1:0] ROUND_MAX = RoundWidth'(DATA_MAX);

  // Bits kept once shift bits k-1..0 are all that remain to be applied: the
  // result must fit RoundWidth bits after at most 2^k - 1 more positions.
  function automatic int unsigned width_after(int unsigned k);
    int unsigned limit = (k >= ShiftWidth) ? ScaledWidth + 1 : RoundWidth + (1 << k) - 1;
    return (limit < ScaledWidth + 1) ? limit : ScaledWidth + 1;
  endfunction

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
  // Control pipeline shared by the channels: valid bits (reset) for stages
  // 1..PushStage and the beat's clamp bounds up to the clamp stage.
  logic [PushStage:1] valid_q;
  data_t [ClampStage:1] lo_q, hi_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) valid_q <= '0;
    else         valid_q <= {valid_q[PushStage-1:1], fire};
  end
  always_ff @(posedge clk_i) begin
    lo_q <= {lo_q[ClampStage-1:1], in_lo_i};
    hi_q <= {hi_q[ClampStage-1:1], in_hi_i};
  end

  // ---------------------------------------------------------------------------
  // Datapath, one copy per channel.
  data_t [Channels-1:0] y_d, y_q;

  for (genvar c = 0; c < Channels; c++) begin : g_channel
    // Stages 1 and 2: the partial products, each in one DSP block with its
    // operand (stage 1) and product (stage 2) registers; the shift, which
    // saturates at MaxShift, beside them.
    shift_t                       shift_d, shift_q1, shift_q2;
    logic signed [PpHiWidth-1:0]  pp_hi_q2;
    logic [PpLoWidth-1:0]         pp_lo_q2;

    assign shift_d = (32'(in_shift_i[c]) > MaxShift) ? ShiftWidth'(MaxShift) : in_shift_i[c];

    always_ff @(posedge clk_i) begin
      shift_q1 <= shift_d;
      shift_q2 <= shift_q1;
    end

    strata_dsp_mul #(
      .AWidth  (HiWidth),
      .BWidth  (MultWidth),
      .ASigned (1'b1),
      .BSigned (1'b0)
    ) u_mul_hi (
      .clk_i    (clk_i),
      .ce_in_i  (1'b1),
      .ce_out_i (1'b1),
      .a_i      (in_acc_i[c][AccWidth-1:LoWidth]),
      .b_i      (in_mult_i[c]),
      .p_o      (pp_hi_q2)
    );

    strata_dsp_mul #(
      .AWidth  (LoWidth),
      .BWidth  (MultWidth),
      .ASigned (1'b0),
      .BSigned (1'b0)
    ) u_mul_lo (
      .clk_i    (clk_i),
      .ce_in_i  (1'b1),
      .ce_out_i (1'b1),
      .a_i      (in_acc_i[c][LoWidth-1:0]),
      .b_i      (in_mult_i[c]),
      .p_o      (pp_lo_q2)
    );

    // Stage 3: the exact product acc * M.
    logic signed [ScaledWidth-1:0] prod_d, prod_q3;
    shift_t                        shift_q3;

    assign prod_d = (ScaledWidth'(pp_hi_q2) <<< LoWidth) + $signed(ScaledWidth'(pp_lo_q2));

    always_ff @(posedge clk_i) begin
      prod_q3  <= prod_d;
      shift_q3 <= shift_q2;
    end

    // Stages 4 and 5: narrowing shift of u = 2 * prod by S, most significant
    // shift bit first. g_shift[k] applies shift bit k and keeps
    // width_after(k) bits; a register follows g_shift[ShiftSplit].
    shift_t shift_q4;
    logic   sign_q4, sign_q5, round_q4, round_q5;

    always_ff @(posedge clk_i) begin
      shift_q4 <= shift_q3;
      sign_q4  <= prod_q3[ScaledWidth-1];
      sign_q5  <= sign_q4;
      round_q4 <= (shift_q3 != '0);
      round_q5 <= round_q4;
    end

    for (genvar k = ShiftWidth; k >= 0; k--) begin : g_shift
      localparam int unsigned WOut = width_after(k);
      logic signed [WOut-1:0] w_d, w;  // w: what the next (lower) bit sees
      logic                   ovf_d, ovf;

      if (k == ShiftWidth) begin : g_input
        assign w_d   = {prod_q3, 1'b0};
        assign ovf_d = 1'b0;
      end else begin : g_stage
        localparam int unsigned WIn = width_after(k + 1);
        logic                  bit_k;
        logic signed [WIn-1:0] shifted;
        logic                  fits;

        assign bit_k   = (k >= ShiftSplit) ? shift_q3[k] : shift_q4[k];
        assign shifted = bit_k ? (g_shift[k+1].w >>> (1 << k)) : g_shift[k+1].w;
        // With the bit set the value always fits (it lost 2^k bits); without,
        // the bits above WOut-1 must all repeat the sign.
        assign fits  = (shifted[WIn-1:WOut-1] == {(WIn - WOut + 1){shifted[WIn-1]}});
        assign w_d   = shifted[WOut-1:0];
        assign ovf_d = g_shift[k+1].ovf || !fits;
      end

      if (k == ShiftSplit) begin : g_reg
        logic signed [WOut-1:0] w_q;
        logic                   ovf_q;

        always_ff @(posedge clk_i) begin
          w_q   <= w_d;
          ovf_q <= ovf_d;
        end
        assign w   = w_q;
        assign ovf = ovf_q;
      end else begin : g_wire
        assign w   = w_d;
        assign ovf = ovf_d;
      end
    end

    logic signed [RoundWidth-1:0] t_q5;
    logic                         ovf_q5;

    always_ff @(posedge clk_i) begin
      t_q5   <= g_shift[0].w;
      ovf_q5 <= g_shift[0].ovf;
    end

    // Stage 6: round and saturate to int8, and compare the result with the
    // clamp bounds. The comparisons are made on each candidate in parallel
    // (the rounded value, DATA_MAX, DATA_MIN) and selected as the result is,
    // so the clamp of stage 7 is a multiplexer driven by flip-flops: the
    // activation table's block-RAM address follows no comparator.
    logic signed [RoundWidth-1:0] rounded;  // (t + round) >> 1: -128 .. 128 if no overflow
    data_t                        sat_d, sat_q6;
    data_t                        lo5, hi5;  // the beat's bounds, one stage before the clamp
    logic                         r_above, r_below;  // rounded[7:0] > hi5, < lo5
    logic                         above_d, above_q6, below_d, below_q6;  // sat_d > hi5, < lo5

    assign rounded = (t_q5 >>> 1) + $signed(RoundWidth'(t_q5[0] && round_q5));
    assign lo5     = lo_q[ClampStage-1];
    assign hi5     = hi_q[ClampStage-1];
    assign r_above = $signed(rounded[DataWidth-1:0]) > hi5;
    assign r_below = $signed(rounded[DataWidth-1:0]) < lo5;

    always_comb begin
      if (ovf_q5) begin
        sat_d   = sign_q5 ? DATA_MIN : DATA_MAX;
        above_d = !sign_q5 && hi5 != DATA_MAX;
        below_d = sign_q5 && lo5 != DATA_MIN;
      end else if (rounded > ROUND_MAX) begin
        sat_d   = DATA_MAX;
        above_d = hi5 != DATA_MAX;
        below_d = 1'b0;
      end else begin
        sat_d   = rounded[DataWidth-1:0];
        above_d = r_above;
        below_d = r_below;
      end
    end

    always_ff @(posedge clk_i) begin
      sat_q6   <= sat_d;
      above_q6 <= above_d;
      below_q6 <= below_d;
    end

    // Stage 7: clamp to [lo, hi].
    always_comb begin
      if (above_q6)      y_d[c] = hi_q[ClampStage];
      else if (below_q6) y_d[c] = lo_q[ClampStage];
      else               y_d[c] = sat_q6;
    end

    `STRATA_ASSERT(requant_clamp_flags, clk_i, rst_ni,
                   !valid_q[ClampStage] || (above_q6 == (sat_q6 > hi_q[ClampStage]) &&
                                            below_q6 == (sat_q6 < lo_q[ClampStage])))
  end

  // Registered results: without tables the FIFO's write port sees no logic in
  // front of it; with tables they address the table copies.
  always_ff @(posedge clk_i) begin
    y_q <= y_d;
  end

  data_t [Channels-1:0] push_data;

  if (ActTables > 0) begin : g_tables
    localparam int unsigned ByteAddrWidth = $clog2(TableBytes);
    localparam int unsigned LaneWidth     = (Lanes > 1) ? $clog2(Lanes) : 1;

    // The beat's table and enable, beside the clamp bounds, up to the stage
    // of y_q (the read address) and the push (the select).
    logic [YStage:1][7:0] tab_q;
    logic [PushStage:1]   tab_en_q;

    always_ff @(posedge clk_i) begin
      tab_q    <= {tab_q[YStage-1:1], in_tab_i};
      tab_en_q <= {tab_en_q[PushStage-1:1], in_tab_en_i};
    end

    // Writes: byte wbyte_q of the word at the port, into every copy; the word
    // is acknowledged with its last byte (the port holds it until then).
    // tab_ready_o is a flip-flop (wlast_q, loaded with wbyte_d's last-byte
    // compare), not a function of tab_valid_i: the load engine's write slice
    // sits across the die, and its pop (and the row release behind it) then
    // starts from a register here instead of a round trip through this port.
    // Ready without valid is allowed by the handshake.
    logic [LaneWidth-1:0]     wbyte_d, wbyte_q;
    logic                     wlast_q;
    logic [ByteAddrWidth-1:0] waddr;
    data_t                    wdata;

    assign tab_ready_o = wlast_q;
    assign waddr       = ByteAddrWidth'(32'(tab_addr_i) * Lanes + 32'(wbyte_q));
    assign wdata       = tab_data_i[32'(wbyte_q) * DataWidth +: DataWidth];
    assign wbyte_d     = (!tab_valid_i || wlast_q) ? '0 : wbyte_q + LaneWidth'(1);

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        wbyte_q <= '0;
        wlast_q <= Lanes == 1;
      end else begin
        wbyte_q <= wbyte_d;
        wlast_q <= 32'(wbyte_d) == Lanes - 1;
      end
    end

    // Reads: entry y + 128 of table tab (the sign bit inverted) for every
    // channel of a beat that looks up. The block RAM's address register
    // takes the clamped value beside y_q (E7, from the clamp's output y_d),
    // and its word is registered in the fabric (entry_q, E8), so the push
    // into the result FIFO starts at a flip-flop, not at the block RAM's
    // output, at the same latency.
    logic [ByteAddrWidth-1:0] raddr [Channels];
    data_t [Channels-1:0]     entry, entry_q;
    data_t [Channels-1:0]     y_q8;

    for (genvar c = 0; c < Channels; c++) begin : g_copy
      assign raddr[c] = ByteAddrWidth'(32'(tab_q[ClampStage]) * 256 +
                                       32'({~y_d[c][DataWidth-1], y_d[c][DataWidth-2:0]}));

      strata_ram_1r1w #(
        .Width     (DataWidth),
        .Depth     (TableBytes),
        .ReadFirst (1'b0)
      ) u_table (
        .clk_i   (clk_i),
        .we_i    (tab_valid_i),
        .waddr_i (waddr),
        .wdata_i (wdata),
        .re_i    (valid_q[ClampStage] && tab_en_q[ClampStage]),
        .raddr_i (raddr[c]),
        .rdata_o (entry[c])
      );
    end

    always_ff @(posedge clk_i) begin
      y_q8    <= y_q;
      entry_q <= entry;
    end

    assign push_data = tab_en_q[PushStage] ? entry_q : y_q8;
  end else begin : g_no_tables
    // No table unit: the load engine refuses every LOAD TABLE (depth 0) and
    // the decoder every lookup, so the ports are idle.
    assign push_data   = y_q;
    assign tab_ready_o = 1'b1;

    logic unused_tab;
    assign unused_tab = ^{in_tab_en_i, in_tab_i, tab_valid_i, tab_addr_i, tab_data_i};
  end

  strata_credit_fifo #(
    .Width (Channels * DataWidth),
    .Depth (ResultDepth)
  ) u_result (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (credit),
    .reserve_i   (fire),
    .push_i      (valid_q[PushStage]),
    .push_data_i (push_data),
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
    assert (MaxShift <= ScaledWidth && MaxShift < (1 << ShiftWidth))
      else $fatal(1, "strata_requant: MaxShift %0d out of range", MaxShift);
  end
`endif

endmodule : strata_requant
