// SPDX-License-Identifier: Apache-2.0
// DSP multiplier: the exact AWidth x BWidth product of two operands, each
// signed or unsigned, with its input and output registers written so that an
// FPGA's DSP block holds all of them.
//
//   a_i, b_i -> [input registers, ce_in_i] -> multiply -> [output register, ce_out_i] -> p_o
//
// Latency: p_o = a_i * b_i two cycles after a_i and b_i are presented with
// ce_in_i and ce_out_i high. No reset: the caller's valid bits qualify the
// data. p_o is the full product, two's complement when either
// operand is signed (AWidth + BWidth bits always hold it).
//
// Two implementations of the same registers, selected by the `STRATA_ECP5`
// define that scripts/synth/flow.py passes for Lattice ECP5 synthesis only:
//   - ECP5, operands that fit 18 bits: a MULT18X18D instance with REG_INPUTA/B
//     (enable CE0 = ce_in_i) and REG_OUTPUT (enable CE1 = ce_out_i) clocked
//     by CLK0; both operands signed (SIGNEDA = SIGNEDB = 1; an unsigned one of
//     a mixed pair takes 17 bits at most) or both unsigned. Yosys maps `*`
//     to a MULT18X18D but never moves flip-flops into it: the multiplier then
//     sits between fabric flip-flops that the placer may put far from the DSP
//     column (a route there and a route back in one cycle), and identical
//     operand registers of several multipliers merge into one. Inside the DSP
//     the multiply is register to register and nextpnr times it as such
//     (timing class MULT18X18D_REGS_ALL).
//   - everything else (Verilator, Xilinx, Gowin, wider operands on ECP5):
//     behavioural registers around `*`, the pattern vendor tools absorb into
//     their DSP's A/B and product registers (Yosys' xilinx_dsp does).
module strata_dsp_mul #(
  parameter int unsigned AWidth  = 18,    // operand a bits
  parameter int unsigned BWidth  = 18,    // operand b bits
  parameter bit          ASigned = 1'b1,  // a is two's complement
  parameter bit          BSigned = 1'b1,  // b is two's complement
  localparam int unsigned PWidth = AWidth + BWidth
) (
  input  logic              clk_i,     // clock
  input  logic              ce_in_i,   // the input registers load
  input  logic              ce_out_i,  // the output register loads
  input  logic [AWidth-1:0] a_i,       // operand a
  input  logic [BWidth-1:0] b_i,       // operand b
  output logic [PWidth-1:0] p_o        // registered product
);

  // Operands extended by one bit as signed values: exact for either kind.
  function automatic logic signed [AWidth:0] ext_a(logic [AWidth-1:0] v);
    return ASigned ? {v[AWidth-1], v} : {1'b0, v};
  endfunction
  function automatic logic signed [BWidth:0] ext_b(logic [BWidth-1:0] v);
    return BSigned ? {v[BWidth-1], v} : {1'b0, v};
  endfunction

`ifdef STRATA_ECP5
  localparam int unsigned DspWidth = 18;  // MULT18X18D operand width
  // The DSP multiplies both operands signed (SIGNEDA = SIGNEDB = 1, an
  // unsigned operand of a mixed pair then needs a zero bit above it) or both
  // unsigned (0, as Yosys's own mapping of an unsigned `*`).
  localparam bit DspSigned = ASigned || BSigned;
  localparam int unsigned ADspBits = AWidth + ((DspSigned && !ASigned) ? 1 : 0);
  localparam int unsigned BDspBits = BWidth + ((DspSigned && !BSigned) ? 1 : 0);
  localparam bit UseDsp = ADspBits <= DspWidth && BDspBits <= DspWidth;
`else
  localparam bit UseDsp = 1'b0;
`endif

`ifdef STRATA_ECP5
  if (UseDsp) begin : g_ecp5
    logic [DspWidth-1:0]   a, b;
    logic [2*DspWidth-1:0] p;

    // Extension to the DSP's 18 bits (zero above an unsigned operand).
    assign a = DspWidth'(ext_a(a_i));
    assign b = DspWidth'(ext_b(b_i));

    MULT18X18D #(
      .REG_INPUTA_CLK ("CLK0"),
      .REG_INPUTA_CE  ("CE0"),
      .REG_INPUTB_CLK ("CLK0"),
      .REG_INPUTB_CE  ("CE0"),
      .REG_OUTPUT_CLK ("CLK0"),
      .REG_OUTPUT_CE  ("CE1"),
      .GSR            ("DISABLED"),
      .RESETMODE      ("SYNC")
    ) u_dsp (
      .CLK0 (clk_i), .CE0 (ce_in_i), .CE1 (ce_out_i), .RST0 (1'b0),
      .SIGNEDA (DspSigned), .SIGNEDB (DspSigned), .SOURCEA (1'b0), .SOURCEB (1'b0),
      .A0  (a[0]),  .A1  (a[1]),  .A2  (a[2]),  .A3  (a[3]),  .A4  (a[4]),  .A5  (a[5]),
      .A6  (a[6]),  .A7  (a[7]),  .A8  (a[8]),  .A9  (a[9]),  .A10 (a[10]), .A11 (a[11]),
      .A12 (a[12]), .A13 (a[13]), .A14 (a[14]), .A15 (a[15]), .A16 (a[16]), .A17 (a[17]),
      .B0  (b[0]),  .B1  (b[1]),  .B2  (b[2]),  .B3  (b[3]),  .B4  (b[4]),  .B5  (b[5]),
      .B6  (b[6]),  .B7  (b[7]),  .B8  (b[8]),  .B9  (b[9]),  .B10 (b[10]), .B11 (b[11]),
      .B12 (b[12]), .B13 (b[13]), .B14 (b[14]), .B15 (b[15]), .B16 (b[16]), .B17 (b[17]),
      .C0  (1'b0),  .C1  (1'b0),  .C2  (1'b0),  .C3  (1'b0),  .C4  (1'b0),  .C5  (1'b0),
      .C6  (1'b0),  .C7  (1'b0),  .C8  (1'b0),  .C9  (1'b0),  .C10 (1'b0),  .C11 (1'b0),
      .C12 (1'b0),  .C13 (1'b0),  .C14 (1'b0),  .C15 (1'b0),  .C16 (1'b0),  .C17 (1'b0),
      .P0  (p[0]),  .P1  (p[1]),  .P2  (p[2]),  .P3  (p[3]),  .P4  (p[4]),  .P5  (p[5]),
      .P6  (p[6]),  .P7  (p[7]),  .P8  (p[8]),  .P9  (p[9]),  .P10 (p[10]), .P11 (p[11]),
      .P12 (p[12]), .P13 (p[13]), .P14 (p[14]), .P15 (p[15]), .P16 (p[16]), .P17 (p[17]),
      .P18 (p[18]), .P19 (p[19]), .P20 (p[20]), .P21 (p[21]), .P22 (p[22]), .P23 (p[23]),
      .P24 (p[24]), .P25 (p[25]), .P26 (p[26]), .P27 (p[27]), .P28 (p[28]), .P29 (p[29]),
      .P30 (p[30]), .P31 (p[31]), .P32 (p[32]), .P33 (p[33]), .P34 (p[34]), .P35 (p[35])
    );

    assign p_o = p[PWidth-1:0];
  end
`endif

  if (!UseDsp) begin : g_behavioural
    logic [AWidth-1:0] a_q;
    logic [BWidth-1:0] b_q;
    logic [PWidth-1:0] p_q;

    always_ff @(posedge clk_i) begin
      if (ce_in_i) a_q <= a_i;
      if (ce_in_i) b_q <= b_i;
      if (ce_out_i) p_q <= PWidth'(ext_a(a_q) * ext_b(b_q));
    end

    assign p_o = p_q;
  end

`ifndef SYNTHESIS
  initial begin
    assert (AWidth >= 1 && BWidth >= 1)
      else $fatal(1, "strata_dsp_mul: operand widths must be >= 1");
  end
`endif

endmodule : strata_dsp_mul
