// SPDX-License-Identifier: Apache-2.0
// Simple dual-port RAM: one write port, one read port, one clock.
// Synchronous read with one cycle of latency (rdata_o is valid the cycle after
// re_i), so it maps onto block RAM (DP16KD, RAMB18/36, M10K) without a
// read-side register. ReadFirst = 1: reading an address in the same cycle it
// is written returns the OLD data; callers must not rely on bypass. Block RAMs
// whose two ports do not guarantee that (ECP5 DP16KD) get emulation logic on
// the read data for it (Yosys: a bypass multiplexer and registers).
// ReadFirst = 0: the caller never reads the address it writes in the same
// cycle (asserted in simulation); the array carries Yosys's no_rw_check
// attribute, so the block RAM's output reaches rdata_o with no logic.
// CheckReads = 0: the caller enables reads whose data it does not use (so
// their addresses may collide with a write or be out of range) and checks
// the reads it uses itself; this block then checks its writes only.
// No reset on the array; contents are undefined until written.
module strata_ram_1r1w #(
  parameter int unsigned Width = 64,   // bits per word
  parameter int unsigned Depth = 1024, // words
  parameter bit          ReadFirst = 1'b1,  // same-address read and write: old data
  parameter bit          CheckReads = 1'b1, // simulation checks of the reads (above)
  localparam int unsigned AddrWidth = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                 clk_i,    // clock
  input  logic                 we_i,     // write enable
  input  logic [AddrWidth-1:0] waddr_i,  // write address
  input  logic [Width-1:0]     wdata_i,  // write data
  input  logic                 re_i,     // read enable
  input  logic [AddrWidth-1:0] raddr_i,  // read address
  output logic [Width-1:0]     rdata_o   // read data, one cycle after re_i
);

  logic [Width-1:0] rdata_q;

  if (ReadFirst) begin : g_read_first
    logic [Width-1:0] mem_q [Depth];

    always_ff @(posedge clk_i) begin
      if (we_i) mem_q[waddr_i] <= wdata_i;
    end

    always_ff @(posedge clk_i) begin
      if (re_i) rdata_q <= mem_q[raddr_i];
    end
  end else begin : g_no_rw_check
    (* no_rw_check *) logic [Width-1:0] mem_q [Depth];

    always_ff @(posedge clk_i) begin
      if (we_i) mem_q[waddr_i] <= wdata_i;
    end

    always_ff @(posedge clk_i) begin
      if (re_i) rdata_q <= mem_q[raddr_i];
    end
  end

  assign rdata_o = rdata_q;

`ifndef SYNTHESIS
  initial begin
    assert (Width > 0 && Depth > 1) else $fatal(1, "strata_ram_1r1w: Width/Depth out of range");
  end
  // Out-of-range addresses are design bugs (Depth need not be a power of two).
  // The first clock edge is not checked: callers drive the ports from
  // registers that a synchronous reset clears only at that edge, so they
  // still hold the simulator's random initial values (a write then is
  // harmless: the contents are undefined until written).
  bit checked_q = 1'b0;
  always_ff @(posedge clk_i) checked_q <= 1'b1;
  always_ff @(posedge clk_i) begin
    if (checked_q) begin
      if (we_i) begin
        assert (32'(waddr_i) < Depth)
          else $error("%m: write address %0d >= %0d", waddr_i, Depth);
      end
      if (CheckReads && re_i) begin
        assert (32'(raddr_i) < Depth)
          else $error("%m: read address %0d >= %0d", raddr_i, Depth);
      end
      if (CheckReads && !ReadFirst && we_i && re_i) begin
        assert (waddr_i != raddr_i)
          else $error("%m: address %0d read and written in one cycle (ReadFirst = 0)", raddr_i);
      end
    end
  end
`endif

endmodule : strata_ram_1r1w
