// SPDX-License-Identifier: Apache-2.0
// Line buffer of the window generator: the last Rows image rows, one pixel
// vector (Lanes x DataWidth) per word, read one full kernel column per cycle.
//
// Organisation: Rows = 2^ceil(log2(MaxKernel + 1)) banks, each a
// strata_ram_1r1w of 2^ceil(log2(MaxImageWidth)) words (a power of two, so
// that every column address is in range: the walker may read a padding
// column whose data it then ignores). Image row y lives in bank
// (y mod Rows) at address x, so a row is written with the bank index shifted
// by one per row (a ring). A read presents one column address to every bank
// and the slot of the window's top row; the banks' outputs are rotated so that
// tap row ky comes out at position ky whatever bank it sits in. A window whose
// rows wrap around the ring (e.g. slots 6, 7, 0) is therefore read in one
// cycle, like any other. Only real pixels are stored: padding never occupies a
// word (the window generator masks it).
//
// Latency: two cycles. re_i reads the column into the RAMs' read registers;
// load_i (in the next cycle or later, before the next re_i) copies them into
// the output register, and rcol_o shows that column, rotated, from the cycle
// after load_i until the next load_i. The output register keeps the block
// RAMs' slow clock-to-out away from the rotation multiplexers. Throughput:
// one write and one column read per cycle, independent.
// Invariant (caller): a read must not target a (bank, address) written in the
// same cycle; the RAM returns the old word then (read-first).
module strata_line_buffer #(
  parameter int unsigned Lanes         = strata_cfg_pkg::Lanes,          // channels per pixel
  parameter int unsigned DataWidth     = strata_cfg_pkg::DataWidth,      // bits per channel
  parameter int unsigned MaxKernel     = strata_cfg_pkg::MaxKernel,      // rows read per column
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth,  // longest row (pixels)
  localparam int unsigned PixelWidth = Lanes * DataWidth,
  localparam int unsigned SlotWidth  = $clog2(MaxKernel + 1),
  localparam int unsigned Rows       = 2 ** SlotWidth,
  localparam int unsigned AddrWidth  = (MaxImageWidth > 1) ? $clog2(MaxImageWidth) : 1
) (
  input  logic                            clk_i,    // clock
  input  logic                            we_i,     // write one pixel vector
  input  logic [SlotWidth-1:0]            wslot_i,  // bank = image row mod Rows
  input  logic [AddrWidth-1:0]            waddr_i,  // image column
  input  logic [PixelWidth-1:0]           wdata_i,  // pixel vector
  input  logic                            re_i,     // read one column of every bank
  input  logic                            load_i,   // capture the column read into rcol_o
  input  logic [AddrWidth-1:0]            raddr_i,  // image column to read
  input  logic [SlotWidth-1:0]            rtop_i,   // bank of tap row 0 (top row mod Rows)
  output logic [MaxKernel*PixelWidth-1:0] rcol_o    // tap row ky at ky*PixelWidth (2 cycles)
);

  logic [PixelWidth-1:0] bank_rdata [Rows];
  logic [PixelWidth-1:0] bank_q [Rows];
  logic [SlotWidth-1:0]  rtop_q, rtop_q2;

  for (genvar b = 0; b < Rows; b++) begin : g_bank
    strata_ram_1r1w #(
      .Width (PixelWidth),
      .Depth (2 ** AddrWidth)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (we_i && (wslot_i == SlotWidth'(b))),
      .waddr_i (waddr_i),
      .wdata_i (wdata_i),
      .re_i    (re_i),
      .raddr_i (raddr_i),
      .rdata_o (bank_rdata[b])
    );
  end

  // The rotation amount travels with the read (datapath registers: no
  // reset, enabled like the data they qualify).
  always_ff @(posedge clk_i) begin
    if (re_i) rtop_q <= rtop_i;
  end

  always_ff @(posedge clk_i) begin
    if (load_i) begin
      bank_q  <= bank_rdata;
      rtop_q2 <= rtop_q;
    end
  end

  // Barrel rotation: tap row ky reads bank (top + ky) mod Rows.
  always_comb begin
    for (int unsigned ky = 0; ky < MaxKernel; ky++) begin
      rcol_o[ky*PixelWidth +: PixelWidth] = bank_q[rtop_q2 + SlotWidth'(ky)];
    end
  end

`ifndef SYNTHESIS
  initial begin
    assert (Lanes >= 1 && DataWidth >= 1) else $fatal(1, "strata_line_buffer: empty pixel");
    assert (MaxKernel >= 1 && MaxKernel < Rows)
      else $fatal(1, "strata_line_buffer: MaxKernel %0d needs fewer than %0d rows", MaxKernel,
                  Rows);
    assert (MaxImageWidth >= 2) else $fatal(1, "strata_line_buffer: MaxImageWidth must be >= 2");
  end
`endif

endmodule : strata_line_buffer
