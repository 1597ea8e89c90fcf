// PE multiplier: one int8 x int8 -> 16-bit signed product with its input and
// output registers, written so that an FPGA's DSP block holds all of them.
//
//   a_i, b_i -> [input registers] -> multiply -> [output register] -> p_o
//
// Latency: p_o = a_i * b_i two cycles after a_i and b_i are presented
// (RegA = 0: a_i is taken combinationally, one cycle after it, b_i still two).
// Throughput: one product per cycle. No reset, no enable: the caller's valid
// bits qualify the data (the registers always load).
//
// Two implementations of the same registers, selected by the `STRATA_ECP5`
// define that scripts/synth/flow.py passes for Lattice ECP5 synthesis only
// (a vendor primitive cannot be chosen by a parameter the flow could reach, so
// this is the one define that selects an implementation):
//   - ECP5: a MULT18X18D instance with REG_INPUTA/B and REG_OUTPUT clocked by
//     CLK0. Yosys maps `*` to a MULT18X18D but never uses its registers: the
//     multiplier then sits between fabric flip-flops, and the identical
//     broadcast operand registers of all PEs of an array merge into one. With
//     the registers inside the DSP, each PE's copy stays in its own DSP, the
//     multiply is register to register inside the block and nextpnr times it
//     as such (timing class MULT18X18D_REGS_ALL).
//   - everything else (Verilator, Xilinx, Gowin, ...): behavioural registers
//     around `*`, the pattern vendor tools absorb into their DSP's A/B and
//     product registers (Yosys' xilinx_dsp does).
// Operands are sign-extended to the DSP's 18 bits and multiplied as signed
// (SIGNEDA = SIGNEDB = 1), so the 36-bit product is exact; its low ProdWidth
// bits are the int8 x int8 product.
module strata_pe_mul
  import strata_cfg_pkg::DataWidth;
  import strata_pkg::*;
#(
  parameter bit RegA = 1'b1  // 1: register a_i here; 0: a_i is already a register output
) (
  input  logic                        clk_i,  // clock
  input  data_t                       a_i,    // operand a (registered here when RegA)
  input  data_t                       b_i,    // operand b (always registered here)
  output logic signed [ProdWidth-1:0] p_o     // registered product
);

  localparam int unsigned DspWidth = 18;  // MULT18X18D operand width

`ifdef STRATA_ECP5
  logic [DspWidth-1:0]   a, b;
  logic [2*DspWidth-1:0] p;

  assign a = {{(DspWidth - DataWidth){a_i[DataWidth-1]}}, a_i};
  assign b = {{(DspWidth - DataWidth){b_i[DataWidth-1]}}, b_i};

  MULT18X18D #(
    .REG_INPUTA_CLK (RegA ? "CLK0" : "NONE"),
    .REG_INPUTB_CLK ("CLK0"),
    .REG_OUTPUT_CLK ("CLK0"),
    .GSR            ("DISABLED"),
    .RESETMODE      ("SYNC")
  ) u_dsp (
    .CLK0 (clk_i), .CE0 (1'b1), .RST0 (1'b0),
    .SIGNEDA (1'b1), .SIGNEDB (1'b1), .SOURCEA (1'b0), .SOURCEB (1'b0),
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

  assign p_o = p[ProdWidth-1:0];
`else
  data_t a_q, b_q;
  logic signed [ProdWidth-1:0] p_d, p_q;

  if (RegA) begin : g_reg_a
    always_ff @(posedge clk_i) begin
      a_q <= a_i;
    end
  end else begin : g_comb_a
    assign a_q = a_i;
  end

  assign p_d = a_q * b_q;

  always_ff @(posedge clk_i) begin
    b_q <= b_i;
    p_q <= p_d;
  end

  assign p_o = p_q;
`endif

`ifndef SYNTHESIS
  initial begin
    assert (DataWidth <= DspWidth)
      else $fatal(1, "strata_pe_mul: DataWidth %0d exceeds the %0d-bit DSP operands",
                  DataWidth, DspWidth);
  end
`endif

endmodule : strata_pe_mul
