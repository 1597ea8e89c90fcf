// Simple dual-port RAM: one write port, one read port, one clock.
// Synchronous read with one cycle of latency (rdata_o is valid the cycle after
// re_i), so it maps onto block RAM (DP16KD, RAMB18/36, M10K) without a
// read-side register. Reading an address in the same cycle it is written
// returns the OLD data (read-first); callers must not rely on bypass.
// No reset on the array; contents are undefined until written.
module strata_ram_1r1w #(
  parameter int unsigned Width = 64,   // bits per word
  parameter int unsigned Depth = 1024, // words
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

  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] rdata_q;

  always_ff @(posedge clk_i) begin
    if (we_i) mem_q[waddr_i] <= wdata_i;
  end

  always_ff @(posedge clk_i) begin
    if (re_i) rdata_q <= mem_q[raddr_i];
  end

  assign rdata_o = rdata_q;

`ifndef SYNTHESIS
  initial begin
    assert (Width > 0 && Depth > 1) else $fatal(1, "strata_ram_1r1w: Width/Depth out of range");
  end
  // Out-of-range addresses are design bugs (Depth need not be a power of two).
  always_ff @(posedge clk_i) begin
    if (we_i) assert (32'(waddr_i) < Depth) else $error("%m: write address %0d >= %0d", waddr_i, Depth);
    if (re_i) assert (32'(raddr_i) < Depth) else $error("%m: read address %0d >= %0d", raddr_i, Depth);
  end
`endif

endmodule : strata_ram_1r1w
