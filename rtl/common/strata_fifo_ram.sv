// SPDX-License-Identifier: Apache-2.0
// Valid/ready FIFO in block RAM (first word fall-through), for bulk buffers.
//
// Storage: a strata_ram_1r1w of Depth words plus a 3-entry strata_fifo output
// stage that hides the RAM's one-cycle read latency. The total capacity is
// exactly Depth words (in_ready_o = count_o < Depth, payload independent), so a
// client may reserve space ahead of time by counting (credits).
// Throughput: one push and one pop per cycle. Latency: a word pushed into an
// empty FIFO reaches the output three cycles later (RAM write, RAM read,
// output stage).
// flush_i empties the FIFO in one cycle (words in flight are dropped).
// "The output stage and the reads in flight leave a free entry" is a register
// of its own (stage_room_q), so the RAM read starts at flip-flops. The RAM is
// ReadFirst = 0: a read needs a stored word and a push needs room, so the
// pointers never meet.
`include "strata_assert.svh"

module strata_fifo_ram #(
  parameter int unsigned Width = 64,   // payload bits of an untyped word (when T is not given)
  parameter type         T = logic [Width-1:0],  // payload type (packed)
  parameter int unsigned Depth = 128,  // capacity in words, >= 4
  localparam int unsigned Bits = $bits(T),
  localparam int unsigned CountWidth = $clog2(Depth + 1)
) (
  input  logic                  clk_i,       // clock
  input  logic                  rst_ni,      // synchronous reset, active low
  input  logic                  flush_i,     // drop every stored word
  input  logic                  in_valid_i,  // upstream has a word
  output logic                  in_ready_o,  // fewer than Depth words stored
  input  T                      in_data_i,   // word pushed when valid && ready
  output logic                  out_valid_o, // a word is available
  input  logic                  out_ready_i, // downstream takes it
  output T                      out_data_o,  // oldest word
  output logic [CountWidth-1:0] count_o      // words stored (RAM, in flight, output stage)
);

  localparam int unsigned AddrWidth = $clog2(Depth);
  localparam int unsigned OutDepth  = 3;  // covers the read latency at full rate

  logic [AddrWidth-1:0]  wptr_d, wptr_q, rptr_d, rptr_q;
  logic [CountWidth-1:0] ram_count_d, ram_count_q, count_d, count_q;
  logic                  rd_inflight_d, rd_inflight_q;
  logic                  push, pop, ram_rd;
  logic [1:0]            out_count;
  logic [Bits-1:0]       ram_rdata;
  logic                  out_in_ready;
  logic                  live;  // not in reset and not flushing
  // count_q < Depth and ram_count_q != 0 as flip-flops of their own, loaded
  // from the next counts: the push and RAM-read handshakes start at them.
  // Their next values are selected by the handshakes from comparisons of the
  // present counts (as in strata_fifo), not computed from the adders' sums.
  logic                  in_ready_d, in_ready_q, ram_any_d, ram_any_q;
  // Words in the output stage or on their way into it (out_count +
  // rd_inflight_q), and "fewer than OutDepth" as a flip-flop of its own: the
  // RAM read starts at registers, not at an adder and a comparison.
  logic [1:0]            stage_used_d, stage_used_q;
  logic                  stage_room_d, stage_room_q;

  assign live = rst_ni && !flush_i;

  function automatic logic [AddrWidth-1:0] next_ptr(logic [AddrWidth-1:0] p);
    return (32'(p) == Depth - 1) ? '0 : p + AddrWidth'(1);
  endfunction

  assign in_ready_o = in_ready_q;
  // Nothing moves in reset (the counters are not yet valid, so a read and a
  // write of one RAM word could otherwise coincide) or in a flush.
  assign push       = in_valid_i && in_ready_o && live;
  assign pop        = out_valid_o && out_ready_i && live;
  // Read the RAM when the output stage can take the word the cycle after.
  assign ram_rd     = live && ram_any_q && stage_room_q;

  always_comb begin
    wptr_d        = push ? next_ptr(wptr_q) : wptr_q;
    rptr_d        = ram_rd ? next_ptr(rptr_q) : rptr_q;
    ram_count_d   = ram_count_q + CountWidth'(push) - CountWidth'(ram_rd);
    count_d       = count_q + CountWidth'(push) - CountWidth'(pop);
    rd_inflight_d = ram_rd;
    in_ready_d    = in_ready_q;
    ram_any_d     = ram_any_q;
    if (push && !pop) in_ready_d = count_q != CountWidth'(Depth - 1);
    if (pop && !push) in_ready_d = 1'b1;
    if (push && !ram_rd) ram_any_d = 1'b1;
    if (ram_rd && !push) ram_any_d = ram_count_q != CountWidth'(1);
    stage_used_d = stage_used_q + 2'(ram_rd) - 2'(pop);
    stage_room_d = stage_room_q;
    if (ram_rd && !pop) stage_room_d = stage_used_q != 2'(OutDepth - 1);
    if (pop && !ram_rd) stage_room_d = 1'b1;
    if (flush_i) begin
      wptr_d        = '0;
      rptr_d        = '0;
      ram_count_d   = '0;
      count_d       = '0;
      rd_inflight_d = 1'b0;
      in_ready_d    = 1'b1;
      ram_any_d     = 1'b0;
      stage_used_d  = '0;
      stage_room_d  = 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wptr_q        <= '0;
      rptr_q        <= '0;
      ram_count_q   <= '0;
      count_q       <= '0;
      rd_inflight_q <= 1'b0;
      in_ready_q    <= 1'b1;
      ram_any_q     <= 1'b0;
      stage_used_q  <= '0;
      stage_room_q  <= 1'b1;
    end else begin
      wptr_q        <= wptr_d;
      rptr_q        <= rptr_d;
      ram_count_q   <= ram_count_d;
      count_q       <= count_d;
      rd_inflight_q <= rd_inflight_d;
      in_ready_q    <= in_ready_d;
      ram_any_q     <= ram_any_d;
      stage_used_q  <= stage_used_d;
      stage_room_q  <= stage_room_d;
    end
  end

  // The RAM never reads the word it writes: a read needs a word in the RAM
  // (ram_count_q != 0, so rptr_q != wptr_q unless it is full) and a push needs
  // room (a full RAM takes no push).
  strata_ram_1r1w #(
    .Width     (Bits),
    .Depth     (Depth),
    .ReadFirst (1'b0)
  ) u_ram (
    .clk_i   (clk_i),
    .we_i    (push),
    .waddr_i (wptr_q),
    .wdata_i (in_data_i),
    .re_i    (ram_rd),
    .raddr_i (rptr_q),
    .rdata_o (ram_rdata)
  );

  // The output stage is reset by a flush too (its words are dropped).
  strata_fifo #(
    .T      (T),
    .Depth  (OutDepth),
    .OutReg (1'b1)  // out_data_o is a flip-flop (the clients sit far away)
  ) u_out (
    .clk_i       (clk_i),
    .rst_ni      (live),
    .in_valid_i  (rd_inflight_q),
    .in_ready_o  (out_in_ready),
    .in_data_i   (T'(ram_rdata)),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data_o),
    .count_o     (out_count)
  );

  assign count_o = count_q;

  `STRATA_ASSERT_STREAM(fifo_ram_in, clk_i, live, in_valid_i, in_ready_o, in_data_i)
  `STRATA_ASSERT(fifo_ram_flags, clk_i, rst_ni,
                 in_ready_q == (count_q < CountWidth'(Depth)) && ram_any_q == (ram_count_q != '0))
  `STRATA_ASSERT(fifo_ram_out_room, clk_i, live, !rd_inflight_q || out_in_ready)
  `STRATA_ASSERT(fifo_ram_stage_room, clk_i, live,
                 32'(stage_used_q) == 32'(out_count) + 32'(rd_inflight_q) &&
                 stage_room_q == (32'(stage_used_q) < OutDepth))

`ifndef SYNTHESIS
  initial begin
    assert (Depth >= 4 && Bits >= 1) else $fatal(1, "strata_fifo_ram: Depth must be >= 4");
  end
`endif

endmodule : strata_fifo_ram
