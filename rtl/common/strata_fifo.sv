// SPDX-License-Identifier: Apache-2.0
// Synchronous valid/ready FIFO (first word fall-through).
// Throughput: one push and one pop per cycle while not full. in_ready_o
// depends only on the fill level (no combinational ready path), so Depth = 2
// is a full-throughput register slice that cuts every path, valid and ready.
// in_ready_o ("not full") and out_valid_o ("not empty") are flip-flops of
// their own, loaded from the next fill level: a handshake that depends on
// them starts at a register, not at a comparison of the count. Their next
// values are selected by push and pop from comparisons of the present count
// (one LUT after the handshakes), not computed from the next count (an adder
// carry chain after them).
// Payload: any packed type T (a struct names its fields at both ends), or an
// untyped Width-bit word.
// Latency: a pushed word is visible at the output the cycle after the push.
// Storage is a register array: for shallow queues, not for bulk buffers.
// OutReg = 0 (default): the oldest word is read from the storage (LUT RAM
// after Yosys, asynchronous read) at the read pointer.
// OutReg = 1: the oldest word leaves a head register (out_data_o is a
// flip-flop, so a consumer across the die sees no memory read before its
// route) in front of Depth - 1 stored words. The storage is read at its own
// read pointer; the head's enable is the consumer's side alone, and the
// producer's push reaches only the head's data input. The head loads the
// storage's oldest word, or the word being pushed when the storage is empty:
// same latency, flags and capacity as OutReg = 0 (asserted). It costs a word of
// flip-flops and a multiplexer, and the head's enable is a net to every head
// flip-flop, so it is set only where a LUT-RAM read would feed a far consumer.
// HeadCopies > 1 (OutReg = 1 only): the head register is that many
// flip-flop copies (kept, asserted equal), side by side in out_data_o (copy c
// is out_data_o[c]), so a word broadcast to consumers across the die
// leaves one copy per consumer instead of one net to all of them.
// WeCopies > 1: the storage's write enable (the not-full flag, below) comes
// from that many flip-flop copies of the flag, each enabling one slice of the
// word, so no single net reaches every storage flip-flop of a wide FIFO.
`include "strata_assert.svh"

module strata_fifo #(
  parameter int unsigned Width = 8,  // payload bits of an untyped word (when T is not given)
  parameter type         T = logic [Width-1:0],  // payload type (packed: a struct, a vector)
  parameter int unsigned Depth = 2,  // entries, >= 1
  parameter bit          OutReg = 1'b0,  // oldest word from a flip-flop (above)
  parameter int unsigned WeCopies = 1,  // copies of the storage write enable, <= payload bits
  parameter int unsigned HeadCopies = 1,  // copies of the head register (OutReg = 1)
  localparam int unsigned Bits = $bits(T),
  localparam int unsigned CountWidth = $clog2(Depth + 1)
) (
  input  logic                  clk_i,      // clock
  input  logic                  rst_ni,     // synchronous reset, active low
  input  logic                  in_valid_i, // upstream has a word
  output logic                  in_ready_o, // FIFO not full
  input  T                      in_data_i,  // word pushed when valid && ready
  output logic                  out_valid_o,// FIFO not empty
  input  logic                  out_ready_i,// downstream takes the word
  output T [HeadCopies-1:0]     out_data_o, // oldest word (HeadCopies copies)
  output logic [CountWidth-1:0] count_o     // words stored
);

  logic [Bits-1:0] in_word;  // the payload as bits (the storage is sliced by bit)
  assign in_word = in_data_i;

  logic [CountWidth-1:0] count_d, count_q;
  logic push, pop;
  logic in_ready_q, out_valid_q;  // count_q < Depth, count_q != 0

  assign in_ready_o  = in_ready_q;
  assign out_valid_o = out_valid_q;
  assign count_o     = count_q;
  assign push = in_valid_i && in_ready_o;
  assign pop  = out_valid_o && out_ready_i;

  // Flags of the next count: unchanged when push == pop; a push makes the
  // FIFO non-empty and full if one entry was free; a pop makes it not full
  // and empty if it held one word.
  logic in_ready_d, out_valid_d;

  always_comb begin
    count_d = count_q + CountWidth'(push) - CountWidth'(pop);
    in_ready_d  = in_ready_q;
    out_valid_d = out_valid_q;
    if (push && !pop) begin
      in_ready_d  = count_q != CountWidth'(Depth - 1);
      out_valid_d = 1'b1;
    end else if (pop && !push) begin
      in_ready_d  = 1'b1;
      out_valid_d = count_q != CountWidth'(1);
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      count_q     <= '0;
      in_ready_q  <= 1'b1;
      out_valid_q <= 1'b0;
    end else begin
      count_q     <= count_d;
      in_ready_q  <= in_ready_d;
      out_valid_q <= out_valid_d;
    end
  end

  // Storage: StDepth words in a register array (LUT RAM after Yosys), read
  // at its own read pointer. The entry at the write pointer is free whenever
  // the FIFO is not full (count < Depth, so the storage holds fewer than
  // StDepth words), so it is written with the input on every cycle the FIFO
  // is not full: the write enable is the flip-flop in_ready_q (or WeCopies
  // copies of it), and the producer's valid reaches only st_push / st_pop,
  // which move the pointers.
  // A write without a push leaves the pointer where it is; the next write
  // replaces that word, and no reader looks at a free entry.
  localparam int unsigned StDepth = OutReg ? Depth - 1 : Depth;  // 0: no storage
  localparam int unsigned StPtrWidth = (StDepth > 1) ? $clog2(StDepth) : 1;

  logic             st_push, st_pop;
  logic [Bits-1:0] st_head;  // the storage's oldest word

  if (StDepth > 0) begin : g_store
    // The word is stored in WeCopies slices of (nearly) equal width, each
    // written under its own copy of the enable.
    logic [StPtrWidth-1:0] wptr_q, rptr_q;
    logic [WeCopies-1:0]   we;  // the write enable of each slice, = in_ready_q

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        wptr_q <= '0;
        rptr_q <= '0;
      end else begin
        if (st_push) wptr_q <= (32'(wptr_q) == StDepth - 1) ? '0 : wptr_q + StPtrWidth'(1);
        if (st_pop)  rptr_q <= (32'(rptr_q) == StDepth - 1) ? '0 : rptr_q + StPtrWidth'(1);
      end
    end

    if (WeCopies == 1) begin : g_we_flag
      assign we = in_ready_q;
    end else begin : g_we_copies
      // Copies of "full" (reset 0, as strata_reg_copies resets), so each
      // enable is a copy's inverse: an inverted clock enable of the
      // flip-flops it drives on ECP5, not a LUT.
      logic [WeCopies-1:0] full_copy_q;

      strata_reg_copies #(
        .Copies (WeCopies)
      ) u_full_copies (
        .clk_i    (clk_i),
        .rst_ni   (rst_ni),
        .d_i      (!in_ready_d),
        .mirror_i (!in_ready_q),
        .q_o      (full_copy_q)
      );

      assign we = ~full_copy_q;
    end

    for (genvar c = 0; c < WeCopies; c++) begin : g_slice
      localparam int unsigned Lo   = c * Bits / WeCopies;
      localparam int unsigned SliceBits = (c + 1) * Bits / WeCopies - Lo;
      logic [SliceBits-1:0] mem_q [StDepth];

      assign st_head[Lo +: SliceBits] = mem_q[rptr_q];

      always_ff @(posedge clk_i) begin
        if (we[c]) mem_q[wptr_q] <= in_word[Lo +: SliceBits];
      end
    end
  end else begin : g_no_store
    logic unused_st_handshakes;  // no storage: nothing moves
    assign unused_st_handshakes = st_push ^ st_pop;
    assign st_head = in_word;
  end

  if (!OutReg) begin : g_plain
    // The oldest word is read from the storage at the read pointer.
    assign out_data_o = st_head;
    assign st_push    = push;
    assign st_pop     = pop;
  end else begin : g_out_reg
    // Head register (valid = out_valid_q) in front of Depth - 1 stored words.
    // Invariants: stored words only behind a valid head; head + stored = count.
    // So the storage holds a word exactly when count_q >= 2.
    logic [HeadCopies-1:0][Bits-1:0] head_q;
    logic [Bits-1:0] head_d;
    logic             head_load;  // the head is empty or leaves this cycle
    logic             st_any_q;   // count_q >= 2, a flip-flop of its own

    assign out_data_o = head_q;
    assign head_load  = !out_valid_q || pop;
    // The storage gives the head its oldest word; a push goes to the head
    // only when the storage is empty and the head is free. A stored word
    // means a valid head (asserted below), so the storage pops exactly when
    // the consumer takes the head (head_load && st_any_q, asserted): the
    // read pointer's next value is one LUT of out_ready_i and its own bits,
    // not behind the head enable, a net to every head flip-flop.
    assign st_pop  = out_ready_i && st_any_q;
    assign st_push = push && !(head_load && !st_any_q);

    // The storage's "not empty" flag, selected like the FIFO's own flags by
    // the FIFO's handshakes from a comparison of the present count: a push
    // alone reaches two words from one, a pop alone leaves fewer than two
    // from two.
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        st_any_q <= 1'b0;
      end else begin
        if (push && !pop)      st_any_q <= count_q != '0;
        else if (pop && !push) st_any_q <= st_any_q && 32'(count_q) != 2;
      end
    end

    // The head's enable is the consumer's side alone (a head that stays
    // empty loads a word nobody reads): the producer's push reaches only the
    // head's data input, never the enable of Bits flip-flops.
    assign head_d = st_any_q ? st_head : in_word;

    if (HeadCopies == 1) begin : g_head
      always_ff @(posedge clk_i) begin
        if (head_load) head_q[0] <= head_d;
      end
    end else begin : g_head_copies
      for (genvar c = 0; c < HeadCopies; c++) begin : g_copy
        (* keep *) logic [Bits-1:0] copy_q;  // kept: Yosys would merge the copies
        always_ff @(posedge clk_i) begin
          if (head_load) copy_q <= head_d;
        end
        assign head_q[c] = copy_q;
      end
      `STRATA_ASSERT(fifo_head_copies, clk_i, rst_ni,
                     !out_valid_q || head_q == {HeadCopies{head_q[0]}})
    end

    `STRATA_ASSERT(fifo_head_count, clk_i, rst_ni,
                   st_any_q == (32'(count_q) >= 2) && (!st_any_q || out_valid_q))
    `STRATA_ASSERT(fifo_st_pop, clk_i, rst_ni, st_pop == (head_load && st_any_q))
  end

  `STRATA_ASSERT(fifo_flags, clk_i, rst_ni,
                 in_ready_q == (count_q < CountWidth'(Depth)) && out_valid_q == (count_q != '0))
  `STRATA_ASSERT_STREAM(fifo_in, clk_i, rst_ni, in_valid_i, in_ready_o, in_data_i)
  `STRATA_ASSERT_STREAM(fifo_out, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)

`ifndef SYNTHESIS
  initial begin
    assert (Depth >= 1 && Bits >= 1)
      else $fatal(1, "strata_fifo: Depth and the payload width must be >= 1");
    assert (HeadCopies >= 1 && (OutReg || HeadCopies == 1))
      else $fatal(1, "strata_fifo: HeadCopies > 1 needs OutReg");
    assert (WeCopies >= 1 && WeCopies <= Bits)
      else $fatal(1, "strata_fifo: WeCopies must be in 1 .. payload bits");
  end
`endif

endmodule : strata_fifo
