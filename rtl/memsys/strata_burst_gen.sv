// SPDX-License-Identifier: Apache-2.0
// AXI burst generator of the load and store engines: splits a transfer of
// rows_i rows of row_beats_i beats (row r at base_i + r * stride_i) into INCR
// bursts of at most MaxBurst beats that never cross a 4 KB boundary.
//
// The current burst (valid_o, addr_o, beats_o, row_o, row_last_o) sits in
// registers. The next one is computed in parallel for both cases (the row
// goes on, or the next row starts) from registers only, so the consumer's
// decision next_i just selects between finished values: the engine's issue
// logic (credits, dependencies, AR/AW handshake) and the burst arithmetic
// (remaining beats, room to the 4 KB boundary) are never in series.
// Latency: start_i latches the transfer, the first burst is computed the
// cycle after (from registers, like the next row's) and valid_o rises the
// cycle after that.
// Throughput: one burst per cycle (next_i in consecutive cycles).
// Invariants: rows_i >= 1 and row_beats_i >= 1 at start_i (the engines check
// their fields first); addresses are beat aligned; a burst ends at its row's
// end or at a 4 KB boundary or after MaxBurst beats, whichever comes first.
`include "strata_assert.svh"

module strata_burst_gen #(
  parameter int unsigned AddrWidth   = strata_cfg_pkg::AxiAddrWidth,      // byte address bits
  parameter int unsigned BeatBytes   = strata_cfg_pkg::AxiDataWidth / 8,  // bytes per beat
  parameter int unsigned MaxBurst    = 16,  // beats per burst, a power of two, 2..256
  parameter int unsigned BeatsWidth  = 24,  // beats per row
  parameter int unsigned RowsWidth   = 16,  // rows
  parameter int unsigned StrideWidth = 24,  // row stride bytes
  localparam int unsigned BurstWidth = $clog2(MaxBurst + 1)
) (
  input  logic                   clk_i,        // clock
  input  logic                   rst_ni,       // synchronous reset, active low
  input  logic                   start_i,      // load a new transfer (wins over next_i)
  input  logic [AddrWidth-1:0]   base_i,       // first byte of row 0
  input  logic [StrideWidth-1:0] stride_i,     // bytes from one row to the next
  input  logic [RowsWidth-1:0]   rows_i,       // rows, >= 1
  input  logic [BeatsWidth-1:0]  row_beats_i,  // beats per row, >= 1
  input  logic                   next_i,       // the current burst is taken (only with valid_o)
  output logic                   done_o,       // every burst of the transfer was taken
  output logic                   valid_o,      // a burst is left (valid_o = 0 and done_o = 0:
                                               // the first one is being computed)
  output logic [AddrWidth-1:0]   addr_o,       // its first byte
  output logic [BurstWidth-1:0]  beats_o,      // its beats, 1..MaxBurst
  output logic [7:0]             len_o,        // its beats - 1 (AXLEN)
  output logic [RowsWidth-1:0]   row_o,        // its row
  output logic                   row_last_o    // it ends its row
);

  localparam int unsigned BeatShift = $clog2(BeatBytes);
  localparam int unsigned PageBeats = 4096 / BeatBytes;    // beats in a 4 KB page
  localparam int unsigned PageWidth = $clog2(PageBeats);   // beat index in the page
  localparam int unsigned LenWidth  = $clog2(MaxBurst);    // AXLEN bits used

  localparam int unsigned L         = LenWidth;

  // Counts are kept minus one, so "more than MaxBurst" is an OR of high bits
  // (MaxBurst is a power of two), and the room to the 4 KB boundary minus one
  // (room_m1) counts down with the bursts modulo the page (a burst that ends
  // on the boundary leaves PageBeats - 1). The burst of a state:
  // len = min(left, room, MaxBurst) - 1, and whether it ends the row
  // (left <= MaxBurst and left <= room), from a "big" flag (count > MaxBurst)
  // and the low bits of each count. The beats (len + 1) are the minimum of
  // the counts themselves, taken beside the minimum of the counts minus one
  // from low bits plus one the callers form in parallel (left_lo1 =
  // left_lo + 1, meaningful when not big), so no adder follows the
  // comparison (the continuation's subtraction -> comparison -> + 1 would be
  // three carry chains in series in front of beats_o). The comparison of the
  // two counts (lt: left < room, le: left <= room, meaningful when neither is
  // big) comes from the caller: the continuation compares the counts before
  // the burst, since both lose the same beats, so it runs beside the
  // subtractions instead of after them (no subtraction -> comparison chain
  // in front of beats_o).
  typedef struct packed {
    logic [L-1:0]          len;
    logic [BurstWidth-1:0] beats;  // len + 1, before the selection (no adder after it)
    logic                  row_last;
  } plan_t;

  function automatic plan_t plan(logic left_big, logic [L-1:0] left_lo,
                                 logic [BurstWidth-1:0] left_lo1, logic room_big,
                                 logic [L-1:0] room_lo, logic [BurstWidth-1:0] room_lo1,
                                 logic lt, logic le);
    logic  take_left;  // the minimum is the row's count (or both are MaxBurst)
    plan_t p;
    take_left  = room_big || (!left_big && lt);
    p.len      = !take_left ? room_lo : left_big ? L'(MaxBurst - 1) : left_lo;
    p.beats    = !take_left ? room_lo1 : left_big ? BurstWidth'(MaxBurst) : left_lo1;
    p.row_last = !left_big && (room_big || le);
    return p;
  endfunction

  // Count - 1 > MaxBurst - 1, and count - 1 >= 2 MaxBurst ("huge": stays
  // above MaxBurst - 1 after any burst).
  function automatic logic left_big(logic [BeatsWidth-1:0] m1);
    return |(m1 >> L);
  endfunction
  function automatic logic left_huge(logic [BeatsWidth-1:0] m1);
    return |(m1 >> (L + 1));
  endfunction
  function automatic logic room_big(logic [PageWidth-1:0] m1);
    return |(m1 >> L);
  endfunction
  function automatic logic room_huge(logic [PageWidth-1:0] m1);
    return |(m1 >> (L + 1));
  endfunction

  logic                   prime_d, prime_q;        // the first burst is computed
  logic                   valid_d, valid_q;
  logic [AddrWidth-1:0]   addr_d, addr_q;          // current burst
  logic [L-1:0]           len_d, len_q;            // its beats - 1
  logic [BurstWidth-1:0]  beats_d, beats_q;        // its beats
  logic                   row_last_d, row_last_q;
  logic [BeatsWidth-1:0]  left_m1_d, left_m1_q;    // beats of the row from addr_q on, - 1
  logic                   left_huge_d, left_huge_q;  // left_huge(left_m1_q)
  logic [PageWidth-1:0]   room_m1_d, room_m1_q;    // beats from addr_q to the 4 KB boundary, - 1
  logic                   room_huge_d, room_huge_q;  // room_huge(room_m1_q)
  logic [RowsWidth-1:0]   row_d, row_q;
  logic [RowsWidth-1:0]   rows_left_d, rows_left_q;  // rows after row_q
  logic                   last_row_d, last_row_q;    // rows_left_q == 0
  logic [AddrWidth-1:0]   next_row_d, next_row_q;    // first byte of row_q + 1
  logic [StrideWidth-1:0] stride_d, stride_q;
  logic [BeatsWidth-1:0]  row_m1_d, row_m1_q;        // beats per row - 1
  logic                   row_big_d, row_big_q;      // left_big(row_m1_q)
  logic                   row_huge_d, row_huge_q;    // left_huge(row_m1_q)

  // Candidates, each from registers (or the start inputs) only.
  // The row goes on: the new low bits are a few-bit subtraction, the big
  // flags come from the registered "huge" flags (a count at least 2 MaxBurst - 1
  // stays above MaxBurst - 1 after a burst), so no wide carry chain or OR
  // tree is in front of the plan; the full counts go to registers only.
  logic [L+1:0]          cont_dl, cont_dr;     // low bits - beats (sign in bit L + 1)
  logic [L:0]            cont_dl1, cont_dr1;   // the same + 1 (low bits - len, mod 2^(L+1))
  logic [AddrWidth-1:0]  cont_addr;
  logic [BeatsWidth-1:0] cont_left_m1;
  logic [PageWidth-1:0]  cont_room_m1;
  plan_t                 cont_plan, nrow_plan;
  logic [PageWidth-1:0]  nrow_room_m1;
  logic [BeatsWidth-1:0] start_m1;

  always_comb begin
    cont_dl       = (L + 2)'(left_m1_q[L:0]) - (L + 2)'(beats_q);
    cont_dr       = (L + 2)'((L + 1)'(room_m1_q)) - (L + 2)'(beats_q);
    cont_dl1      = left_m1_q[L:0] - (L + 1)'(len_q);
    cont_dr1      = (L + 1)'(room_m1_q) - (L + 1)'(len_q);
    cont_plan     = plan(left_huge_q || cont_dl[L], cont_dl[L-1:0], cont_dl1,
                         room_huge_q || cont_dr[L+1] || cont_dr[L], cont_dr[L-1:0],
                         cont_dr1, left_m1_q[L:0] < (L + 1)'(room_m1_q),
                         left_m1_q[L:0] <= (L + 1)'(room_m1_q));
    cont_addr     = addr_q + (AddrWidth'(beats_q) << BeatShift);
    cont_left_m1  = left_m1_q - BeatsWidth'(beats_q);
    cont_room_m1  = room_m1_q - PageWidth'(beats_q);
    nrow_room_m1  = ~next_row_q[11:BeatShift];
    nrow_plan     = plan(row_big_q, row_m1_q[L-1:0],
                         BurstWidth'(row_m1_q[L-1:0]) + BurstWidth'(1),
                         room_big(nrow_room_m1), nrow_room_m1[L-1:0],
                         BurstWidth'(nrow_room_m1[L-1:0]) + BurstWidth'(1),
                         row_m1_q[L-1:0] < nrow_room_m1[L-1:0],
                         row_m1_q[L-1:0] <= nrow_room_m1[L-1:0]);
    start_m1      = row_beats_i - BeatsWidth'(1);
  end

  always_comb begin
    valid_d     = valid_q;
    addr_d      = addr_q;
    len_d       = len_q;
    beats_d     = beats_q;
    row_last_d  = row_last_q;
    left_m1_d   = left_m1_q;
    left_huge_d = left_huge_q;
    room_m1_d   = room_m1_q;
    room_huge_d = room_huge_q;
    row_d       = row_q;
    rows_left_d = rows_left_q;
    last_row_d  = last_row_q;
    next_row_d  = next_row_q;
    stride_d    = stride_q;
    row_m1_d    = row_m1_q;
    row_big_d   = row_big_q;
    row_huge_d  = row_huge_q;
    if (next_i) begin  // only with valid_q (asserted): the enables need not look at it
      if (row_last_q) begin
        valid_d     = !last_row_q;
        addr_d      = next_row_q;
        {len_d, beats_d, row_last_d} = nrow_plan;
        left_m1_d   = row_m1_q;
        left_huge_d = row_huge_q;
        room_m1_d   = nrow_room_m1;
        room_huge_d = room_huge(nrow_room_m1);
        row_d       = row_q + RowsWidth'(1);
        rows_left_d = rows_left_q - RowsWidth'(1);
        last_row_d  = rows_left_q == RowsWidth'(1);
        next_row_d  = next_row_q + AddrWidth'(stride_q);
      end else begin
        addr_d      = cont_addr;
        {len_d, beats_d, row_last_d} = cont_plan;
        left_m1_d   = cont_left_m1;
        left_huge_d = left_huge(cont_left_m1);
        room_m1_d   = cont_room_m1;
        room_huge_d = room_huge(cont_room_m1);
      end
    end
    // The first burst: row 0 is entered like a next row, one cycle after the
    // start (prime_q), from registers.
    if (prime_q) begin
      valid_d     = 1'b1;
      addr_d      = next_row_q;
      {len_d, beats_d, row_last_d} = nrow_plan;
      left_m1_d   = row_m1_q;
      left_huge_d = row_huge_q;
      room_m1_d   = nrow_room_m1;
      room_huge_d = room_huge(nrow_room_m1);
      next_row_d  = next_row_q + AddrWidth'(stride_q);
    end
    prime_d = start_i;
    if (start_i) begin
      valid_d     = 1'b0;
      row_d       = '0;
      rows_left_d = rows_i - RowsWidth'(1);
      last_row_d  = rows_i == RowsWidth'(1);
      next_row_d  = base_i;
      stride_d    = stride_i;
      row_m1_d    = start_m1;
      row_big_d   = left_big(start_m1);
      row_huge_d  = left_huge(start_m1);
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      prime_q <= 1'b0;
      valid_q <= 1'b0;
    end else begin
      prime_q <= prime_d;
      valid_q <= valid_d;
    end
  end

  // Datapath: meaningful while valid_q.
  always_ff @(posedge clk_i) begin
    addr_q      <= addr_d;
    len_q       <= len_d;
    beats_q     <= beats_d;
    row_last_q  <= row_last_d;
    left_m1_q   <= left_m1_d;
    left_huge_q <= left_huge_d;
    room_m1_q   <= room_m1_d;
    room_huge_q <= room_huge_d;
    row_q       <= row_d;
    rows_left_q <= rows_left_d;
    last_row_q  <= last_row_d;
    next_row_q  <= next_row_d;
    stride_q    <= stride_d;
    row_m1_q    <= row_m1_d;
    row_big_q   <= row_big_d;
    row_huge_q  <= row_huge_d;
  end

  assign valid_o    = valid_q;
  assign done_o     = !valid_q && !prime_q && !start_i;
  assign addr_o     = addr_q;
  assign beats_o    = beats_q;
  assign len_o      = 8'(len_q);
  assign row_o      = row_q;
  assign row_last_o = row_last_q;

  // A burst is taken only while one is valid.
  `STRATA_ASSERT(burst_gen_next, clk_i, rst_ni, !next_i || valid_q)
  // A burst never crosses a 4 KB boundary and never passes its row's end.
  `STRATA_ASSERT(burst_gen_4k, clk_i, rst_ni,
                 !valid_q || 32'(addr_q[11:0]) + 32'(beats_q) * BeatBytes <= 4096)
  `STRATA_ASSERT(burst_gen_len, clk_i, rst_ni,
                 !valid_q || (32'(len_q) + 32'd1 == 32'(beats_q) && 32'(len_q) <= 32'(left_m1_q)))
  // The burst is as long as it may be: min(left, room, MaxBurst) beats, and
  // it ends its row when the row's beats fit.
  `STRATA_ASSERT(burst_gen_longest, clk_i, rst_ni,
                 !valid_q || (32'(len_q) == ((32'(left_m1_q) < 32'(room_m1_q)) ?
                                             ((32'(left_m1_q) < MaxBurst - 1) ? 32'(left_m1_q)
                                                                              : MaxBurst - 1) :
                                             ((32'(room_m1_q) < MaxBurst - 1) ? 32'(room_m1_q)
                                                                              : MaxBurst - 1)) &&
                              row_last_q == (32'(left_m1_q) <= 32'(room_m1_q) &&
                                             32'(left_m1_q) < MaxBurst)))
  // The registered flags and counts agree with what they stand for.
  `STRATA_ASSERT(burst_gen_flags, clk_i, rst_ni,
                 !valid_q || (room_m1_q == ~addr_q[11:BeatShift] &&
                              left_huge_q == left_huge(left_m1_q) &&
                              room_huge_q == room_huge(room_m1_q) &&
                              row_big_q == left_big(row_m1_q) && row_huge_q == left_huge(row_m1_q)))

`ifndef SYNTHESIS
  initial begin
    assert (MaxBurst >= 2 && MaxBurst <= 256 && 2 ** $clog2(MaxBurst) == MaxBurst &&
            MaxBurst <= PageBeats && BeatBytes >= 1 && BeatBytes <= 128 &&
            2 ** BeatShift == BeatBytes && AddrWidth >= 12 && AddrWidth <= 64 &&
            BeatsWidth > $clog2(MaxBurst) && RowsWidth >= 1 && StrideWidth <= AddrWidth)
      else $fatal(1, "strata_burst_gen: parameters out of range");
  end
`endif

endmodule : strata_burst_gen
