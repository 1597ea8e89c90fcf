// SPDX-License-Identifier: Apache-2.0
// Parameter RAM of the COMPUTE engine (docs/isa.md, machine model):
// ParamDepth channels of {bias int32, M uint16, S}, written one channel per
// cycle by the load engine, read P consecutive channels per cycle.
//
// Organisation: Pes banks (strata_ram_1r1w), channel c in bank c mod Pes at
// word c div Pes, so any Pes consecutive channels base .. base + Pes - 1 sit
// in Pes different banks and are read in one cycle (CONV: the Pes output
// channels of a pass, whatever param_base). A read of one channel (FC: the
// channel of one neuron) enables only its bank. Output lane p is channel
// base + p of the last read: each bank's output is registered beside its
// block RAM (the block RAM's long clock-to-out and the route to the rest of
// the engine are then in different cycles), rotated by base mod Pes, and
// registered again (the outputs, away from the requantiser and the PE bias
// inputs). The outputs hold until the next read, so a CONV pass reads its
// channels once. Lane 0 of the rotation is also an output of its own
// (lane0_o), valid one cycle before the outputs load: the FC parameter queue
// takes it there.
// The read request (rd_i, rd_all_i, rd_base_i) is registered first: the
// block RAMs' clock enables and addresses start from flip-flops, never from
// the engine's grant logic or the walker (on an FPGA the banks sit far from
// both). A read never meets a write of the same channel (the dependency
// semaphores order the parameter LOAD before the COMPUTE that reads it), so
// the banks are ReadFirst = 0: no read-first emulation logic on ECP5 (a
// collision is an assertion failure in simulation).
// Write data is the load engine's 8-byte entry: bias in bytes 0-3, M in 4-5,
// S in byte 6 (the low ShiftWidth bits are kept; the load engine rejects
// S > 47 and a non-zero byte 7). Stored: 32 + 16 + ShiftWidth bits a channel.
// Latency: bias_o / mult_o / shift_o four cycles after rd_i, lane0_o three
// cycles after it (for one cycle); a write lands in its bank the cycle after
// wr_valid_i. Throughput: one write and one
// read per cycle, always ready (the write port never waits).
`include "strata_assert.svh"

module strata_param_ram
  import strata_cfg_pkg::AccWidth, strata_cfg_pkg::MultWidth, strata_cfg_pkg::ShiftWidth;
  import strata_pkg::*;
#(
  parameter int unsigned Pes        = strata_cfg_pkg::Pes,         // banks = channels per read
  parameter int unsigned ParamDepth = strata_cfg_pkg::ParamDepth,  // channels
  localparam int unsigned ChWidth   = $clog2(ParamDepth),
  localparam int unsigned LgPes     = $clog2(Pes)
) (
  input  logic                clk_i,      // clock
  input  logic                rst_ni,     // synchronous reset, active low
  // write port (load engine)
  input  logic                wr_valid_i, // entry to write
  output logic                wr_ready_o, // always 1
  input  logic [ChWidth-1:0]  wr_ch_i,    // channel
  input  logic [63:0]         wr_data_i,  // bias (bytes 0-3), M (4-5), S (6)
  // read port
  input  logic                rd_i,       // read channels rd_base_i .. (+ Pes - 1 if rd_all_i)
  input  logic                rd_all_i,   // all Pes lanes (else lane 0 only)
  input  logic [ChWidth-1:0]  rd_base_i,  // first channel
  output acc_t   [Pes-1:0]    bias_o,     // lane p: channel rd_base + p of the last read
  output mult_t  [Pes-1:0]    mult_o,     // lane p: its M
  output shift_t [Pes-1:0]    shift_o,    // lane p: its S
  // lane 0 of the read three cycles after rd_i (the outputs' next value):
  // {shift, mult, bias}
  output logic [AccWidth+MultWidth+ShiftWidth-1:0] lane0_o  // lane 0, a cycle early (above)
);

  localparam int unsigned Width     = AccWidth + MultWidth + ShiftWidth;
  localparam int unsigned ParamBits = 48 + ShiftWidth;  // entry bits that are stored
  localparam int unsigned BankDepth = (ParamDepth + Pes - 1) / Pes;
  localparam int unsigned BankAw    = (BankDepth > 1) ? $clog2(BankDepth) : 1;
  localparam int unsigned RotWidth  = (Pes > 1) ? LgPes : 1;

  typedef struct packed {
    shift_t shift;
    mult_t  mult;
    acc_t   bias;
  } entry_t;

  entry_t                wr_entry;
  logic [RotWidth-1:0]   wr_bank, rd_rot, rd_rot_q, rd_rot_q2;
  logic                  req_q, req_all_q;     // registered read request
  logic [ChWidth-1:0]    req_base_q;
  entry_t [Pes-1:0]      rdata, rdata_q, out_d, out_q;
  logic                  rd_q, rd_q2;          // RAM data / registered RAM data valid

  assign wr_ready_o = 1'b1;
  assign wr_entry   = '{shift: wr_data_i[48 +: ShiftWidth], mult: wr_data_i[32 +: MultWidth],
                        bias: wr_data_i[0 +: AccWidth]};

  if (Pes > 1) begin : g_rot
    assign wr_bank = wr_ch_i[LgPes-1:0];
    assign rd_rot  = req_base_q[LgPes-1:0];
  end else begin : g_single
    assign wr_bank = 1'b0;
    assign rd_rot  = 1'b0;
  end

  // Writes are registered (bank decoded before the register): the load
  // engine's write port ends at flip-flops here, and each bank's write enable,
  // address and data pins start from them. A write lands the cycle after the
  // handshake; the semaphores release the reading COMPUTE later than that.
  logic [Pes-1:0]     wr_hit_q;
  logic [ChWidth-1:0] wr_ch_q;
  entry_t             wr_entry_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) wr_hit_q <= '0;
    else         wr_hit_q <= wr_valid_i ? Pes'(1) << wr_bank : '0;
  end

  always_ff @(posedge clk_i) begin
    wr_ch_q    <= wr_ch_i;
    wr_entry_q <= wr_entry;
  end

  for (genvar b = 0; b < Pes; b++) begin : g_bank
    logic [RotWidth-1:0] lane;       // lane of the read this bank serves
    logic [ChWidth:0]    ch;         // channel it reads
    logic                re;

    assign lane = RotWidth'(b) - rd_rot;
    assign ch   = (ChWidth + 1)'(req_base_q) + (ChWidth + 1)'(lane);
    assign re   = req_q && (req_all_q || lane == '0);

    strata_ram_1r1w #(
      .Width     ($bits(entry_t)),
      .Depth     (BankDepth),
      .ReadFirst (1'b0)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (wr_hit_q[b]),
      .waddr_i (BankAw'(wr_ch_q >> LgPes)),
      .wdata_i (wr_entry_q),
      .re_i    (re),
      .raddr_i (BankAw'(ch >> LgPes)),
      .rdata_o (rdata[b])
    );
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) req_q <= 1'b0;
    else         req_q <= rd_i;
  end

  always_ff @(posedge clk_i) begin
    req_all_q  <= rd_all_i;
    req_base_q <= rd_base_i;
  end

  always_ff @(posedge clk_i) begin
    if (req_q) rd_rot_q <= rd_rot;
    if (rd_q) rd_rot_q2 <= rd_rot_q;
    rdata_q <= rdata;
  end

  for (genvar p = 0; p < Pes; p++) begin : g_lane
    logic [RotWidth-1:0] bank;
    assign bank       = RotWidth'(p) + rd_rot_q2;
    assign out_d[p]   = rdata_q[bank];
    assign bias_o[p]  = out_q[p].bias;
    assign mult_o[p]  = out_q[p].mult;
    assign shift_o[p] = out_q[p].shift;
  end

  assign lane0_o = out_d[0];

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rd_q  <= 1'b0;
      rd_q2 <= 1'b0;
    end else begin
      rd_q  <= req_q;
      rd_q2 <= rd_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rd_q2) out_q <= out_d;
  end

  // Byte 7 and the top bits of byte 6 are zero in a legal entry (the load
  // engine checks them); they are not stored.
  logic [63-ParamBits:0] unused_wr_bits;
  assign unused_wr_bits = wr_data_i[63:ParamBits];

  `STRATA_ASSERT(param_wr_range, clk_i, rst_ni, !wr_valid_i || 32'(wr_ch_i) < ParamDepth)

`ifndef SYNTHESIS
  initial begin
    assert (Pes >= 1 && Pes == 2 ** LgPes) else $fatal(1, "strata_param_ram: Pes must be 2^k");
    assert (ParamDepth >= 2 * Pes)
      else $fatal(1, "strata_param_ram: ParamDepth must be >= 2 * Pes");
    assert (Width <= 64) else $fatal(1, "strata_param_ram: entry wider than 64 bits");
  end
`endif

endmodule : strata_param_ram
