// SPDX-License-Identifier: Apache-2.0
// Transfer range check of the load and store engines: the field checks of a
// strided 2-D transfer between external memory (rows at ext_addr + r *
// ext_row_stride, row_beats beats each) and an on-chip memory (rows at
// mem_addr + r * mem_row_stride, row_units units each, mem_rows_m1 + 1 rows,
// depth mem_depth), with the engine's own field flags, as a registered
// verdict:
//   illegal_o:     rows = 0, row_units = 0, or the engine's illegal_i
//   unsupported_o: ext_addr or ext_row_stride not a multiple of the beat, the
//                  on-chip range past mem_depth_i, the external range past
//                  2^AxiAddrWidth, or the engine's unsup_i
// The engine keeps which fields it checks, which memory and depth, and the
// destination-specific flags (illegal_i, unsup_i).
//
// No divider and no wide adder in series with a comparator: the products
// (each at most 18 x 18 bits, the 24-bit stride in two halves:
// strata_stride_span) are strata_dsp_mul's, with both registers inside the
// DSP: the input registers load the offered instruction's fields while load_i
// (the engine is idle, so the take's edge loads the taken instruction's), the
// output registers hold the products from the first check cycle on (with `*`
// between fabric registers, the multiplier would be a route to the DSP and
// one back in a cycle). The first check cycle registers the row-end partial
// sums, the second the range ends, the third the range comparisons.
//
// The checks are free-running registers (the fields are stable from the first
// check cycle on, so the field flags hold from the second on and the range
// comparison from the fourth on; asserted when decide_i): the engine's error
// decision in the fourth check cycle starts at flip-flops only (illegal_o is
// one, unsupported_o an OR of two), not behind the three LUT levels of the
// 42- and 33-bit range-end comparisons and their route to the next-state
// logic. (Unregistered, Yosys may share the `row_units == 0` test with the
// burst generator's `row_beats - 1` borrow and put the error code's enable
// behind that carry chain.)
//
// Latency: with the fields taken at edge 0 (load_i high before it, the
// registered fields valid after it), illegal_o and unsupported_o hold the
// verdict after edge 3 (the engine's fourth check cycle) for as long as the
// fields stay. Throughput: one transfer per four cycles.
`include "strata_assert.svh"

module strata_xfer_check #(
  parameter int unsigned AxiAddrWidth = strata_cfg_pkg::AxiAddrWidth,  // byte address bits
  parameter int unsigned AxiDataWidth = strata_cfg_pkg::AxiDataWidth,  // beat bits
  parameter int unsigned BeatsWidth   = 24,                            // bits of row_beats_i
  // The engine's field widths (strata_isa_pkg): LOAD's by default, STORE's from the store engine.
  parameter int unsigned RowsWidth      = strata_isa_pkg::LoadRowsWidth,          // rows
  parameter int unsigned UnitsWidth     = strata_isa_pkg::LoadRowWordsWidth,      // row_words
  parameter int unsigned ExtAddrWidth   = strata_isa_pkg::LoadExtAddrWidth,       // ext_addr
  parameter int unsigned ExtStrideWidth = strata_isa_pkg::LoadExtRowStrideWidth,  // ext_row_stride
  parameter int unsigned MemAddrWidth   = strata_isa_pkg::LoadDstAddrWidth,       // on-chip address
  parameter int unsigned MemStrideWidth = strata_isa_pkg::LoadDstRowStrideWidth,  // on-chip stride
  localparam int unsigned MemDepthWidth = MemAddrWidth + 1  // a depth up to 2^MemAddrWidth
) (
  input  logic                      clk_i,               // clock
  input  logic                      rst_ni,              // synchronous reset (assertions only)
  // the instruction offered (the products' input registers)
  input  logic                      load_i,              // the input registers load (engine idle)
  input  logic [RowsWidth-1:0]      take_rows_m1_i,      // rows - 1
  input  logic [ExtStrideWidth-1:0] take_ext_stride_i,   // external row stride (bytes)
  input  logic [RowsWidth-1:0]      take_mem_rows_m1_i,  // on-chip rows - 1
  input  logic [MemStrideWidth-1:0] take_mem_stride_i,   // on-chip row stride (units)
  // the instruction taken (registered fields, stable through the check)
  input  logic [RowsWidth-1:0]      rows_i,              // rows
  input  logic [UnitsWidth-1:0]     row_units_i,         // on-chip units per row (row_words)
  input  logic [BeatsWidth-1:0]     row_beats_i,         // external beats per row
  input  logic [ExtAddrWidth-1:0]   ext_addr_i,          // external address (bytes)
  input  logic [ExtStrideWidth-1:0] ext_stride_i,        // external row stride (bytes)
  input  logic [MemAddrWidth-1:0]   mem_addr_i,          // on-chip start (units)
  input  logic [RowsWidth-1:0]      mem_rows_m1_i,       // on-chip rows - 1 (check only)
  input  logic [MemStrideWidth-1:0] mem_stride_i,        // on-chip row stride (check only)
  input  logic [MemDepthWidth-1:0]  mem_depth_i,         // on-chip memory depth (units)
  input  logic                      illegal_i,           // the engine's illegal fields
  input  logic                      unsup_i,             // the engine's unsupported fields
  // the engine's check cycles (check only)
  input  logic                      products_valid_i,    // from the second check cycle to the end
  input  logic                      decide_i,            // the fourth check cycle
  // verdict
  output logic                      illegal_o,           // ILLEGAL_INSTR (registered)
  output logic                      unsupported_o        // UNSUPPORTED (OR of two registers)
);

  localparam int unsigned BeatShift = $clog2(AxiDataWidth / 8);
  localparam int unsigned AW        = AxiAddrWidth;
  // The external span splits at bit SplitLsb of the stride (strata_stride_span).
  localparam int unsigned SplitLsb  = 12;
  localparam int unsigned ExtSpanWidth = RowsWidth + ExtStrideWidth;
  localparam int unsigned MemSpanWidth = RowsWidth + MemStrideWidth;
  // Range ends: a row end (start + one row) one bit wider than the wider of its
  // terms, the end (row end + span) one bit wider than the wider of those.
  localparam int unsigned ExtRowBytesWidth = BeatsWidth + BeatShift;
  localparam int unsigned ExtRowEndWidth   =
      ((ExtAddrWidth > ExtRowBytesWidth) ? ExtAddrWidth : ExtRowBytesWidth) + 1;
  localparam int unsigned ExtEndWidth      =
      ((ExtRowEndWidth > ExtSpanWidth) ? ExtRowEndWidth : ExtSpanWidth) + 1;
  localparam int unsigned MemRowEndWidth   =
      ((MemAddrWidth > UnitsWidth) ? MemAddrWidth : UnitsWidth) + 1;
  localparam int unsigned MemEndWidth      =
      ((MemRowEndWidth > MemSpanWidth) ? MemRowEndWidth : MemSpanWidth) + 1;
  localparam int unsigned EW  = ExtEndWidth;
  localparam int unsigned MW  = MemEndWidth;
  localparam int unsigned LoW = RowsWidth + SplitLsb;       // strata_stride_span's lo_o
  localparam int unsigned HiW = ExtSpanWidth - SplitLsb;    // and hi_o
  localparam int unsigned SW  = MemSpanWidth;

  logic [LoW-1:0] ext_span_lo;                  // (rows - 1) * ext_row_stride[11:0]
  logic [HiW-1:0] ext_span_hi;                  // (rows - 1) * ext_row_stride[23:12]
  logic [SW-1:0] mem_span;                      // (on-chip rows - 1) * mem_row_stride
  logic [EW-1:0] ext_row_end_d, ext_row_end_q;  // ext_addr + bytes per row
  logic [MW-1:0] mem_row_end_d, mem_row_end_q;  // mem_addr + units per row
  logic [EW-1:0] ext_end_d, ext_end_q;          // one past the last external byte
  logic [MW-1:0] mem_end_d, mem_end_q;          // one past the last on-chip unit
  logic        range_over_d, range_over_q;    // a range end past its memory
  logic        illegal_d, illegal_q, unsup_fields_d, unsup_fields_q;

  strata_stride_span #(
    .RowsWidth   (RowsWidth),
    .StrideWidth (ExtStrideWidth)
  ) u_ext_span (
    .clk_i     (clk_i),
    .load_i    (load_i),
    .rows_m1_i (take_rows_m1_i),
    .stride_i  (take_ext_stride_i),
    .lo_o      (ext_span_lo),
    .hi_o      (ext_span_hi)
  );
  strata_dsp_mul #(
    .AWidth  (RowsWidth),
    .BWidth  (MemStrideWidth),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_mem_span (
    .clk_i (clk_i), .ce_in_i (load_i), .ce_out_i (1'b1),
    .a_i (take_mem_rows_m1_i), .b_i (take_mem_stride_i), .p_o (mem_span)
  );

  assign ext_row_end_d = EW'(ext_addr_i) + (EW'(row_beats_i) << BeatShift);
  assign mem_row_end_d = MW'(mem_addr_i) + MW'(row_units_i);
  assign ext_end_d     = ext_row_end_q + EW'(ext_span_lo) + (EW'(ext_span_hi) << SplitLsb);
  assign mem_end_d     = mem_row_end_q + MW'(mem_span);
  assign range_over_d  = mem_end_q > MW'(mem_depth_i) || ext_end_q > (EW'(1) << AW);

  assign illegal_d      = rows_i == '0 || row_units_i == '0 || illegal_i;
  assign unsup_fields_d = ext_addr_i[BeatShift-1:0] != '0 || ext_stride_i[BeatShift-1:0] != '0 ||
                          unsup_i;

  always_ff @(posedge clk_i) begin
    ext_row_end_q  <= ext_row_end_d;
    mem_row_end_q  <= mem_row_end_d;
    ext_end_q      <= ext_end_d;
    mem_end_q      <= mem_end_d;
    range_over_q   <= range_over_d;
    illegal_q      <= illegal_d;
    unsup_fields_q <= unsup_fields_d;
  end

  assign illegal_o     = illegal_q;
  assign unsupported_o = unsup_fields_q || range_over_q;

  // ---------------------------------------------------------------- checks
  logic [RowsWidth-1:0] rows_m1;  // of the instruction taken
  assign rows_m1 = rows_i - RowsWidth'(1);
  `STRATA_ASSERT(xfer_check_products, clk_i, rst_ni,
                 !products_valid_i ||
                 (ext_span_lo == LoW'(rows_m1) * LoW'(ext_stride_i[SplitLsb-1:0]) &&
                  ext_span_hi == HiW'(rows_m1) * HiW'(ext_stride_i[ExtStrideWidth-1:SplitLsb]) &&
                  mem_span == SW'(mem_rows_m1_i) * SW'(mem_stride_i)))
  `STRATA_ASSERT(xfer_check_fields, clk_i, rst_ni,
                 !decide_i || (illegal_q == illegal_d && unsup_fields_q == unsup_fields_d &&
                               range_over_q == range_over_d))

`ifndef SYNTHESIS
  initial begin
    assert (AxiAddrWidth >= 12 && AxiAddrWidth <= ExtAddrWidth)
      else $fatal(1, "strata_xfer_check: AxiAddrWidth must be 12..%0d (ext_addr)", ExtAddrWidth);
    assert (AxiDataWidth >= 16 && 2 ** BeatShift * 8 == AxiDataWidth)
      else $fatal(1, "strata_xfer_check: AxiDataWidth must be a power of two >= 16");
  end
`endif

endmodule : strata_xfer_check
