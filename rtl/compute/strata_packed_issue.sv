// SPDX-License-Identifier: Apache-2.0
// Issue stage of a packed CONV walk (strata_packed_walker's third stage).
//
// What: turns the producer's records into beats, one packed row of the
//   current record per cycle; an empty record takes one cycle (the bubble).
// Last flag: a beat is the pixel's last when the next beat is the next
//   pixel's first, so each beat is held until the next one is issued (or the
//   walk's records are done) and leaves then with its last flag.
// Interface: rec_* is the producer's record stream (taken only while walk_i);
//   send_o hands one beat to the beat pipeline and needs send_credit_i (the
//   beat FIFO has a slot); send_c_o / send_dummy_o also address the
//   schedule read of the beat.
// Latency: a record at rec_valid_i to its first beat at send_o 2 cycles
//   when the beat after it is issued at once.
// Throughput: one record row (or bubble) per cycle while send_credit_i.
// Invariants (asserted): end_q flags the record's last row; every record
//   after the first is in the FIFO when the one before is done (the producer
//   is never behind).
`include "strata_assert.svh"

module strata_packed_issue
  import strata_compute_pkg::*;
#(
  parameter int unsigned CacheDepth = strata_cfg_pkg::PeCacheDepth,  // schedule words
  localparam int unsigned KW = $clog2(CacheDepth + 1)  // cache word, end included
) (
  input  logic             clk_i,             // clock
  input  logic             rst_ni,            // synchronous reset, active low
  input  logic             walk_i,            // the walker is walking (else: clear)
  input  logic             rec_valid_i,       // a record is offered
  output logic             rec_ready_o,       // taken
  input  packed_rec_e      rec_kind_i,        // range, empty or dummy
  input  logic             rec_first_i,       // its first beat is the pixel's first
  input  logic             rec_walk_last_i,   // the walk's last record
  input  logic             rec_single_i,      // start + 1 == hi
  input  logic [KW-1:0]    rec_start_i,       // cache word of the first row
  input  logic [KW-1:0]    rec_hi_i,          // cache word after the last row
  input  packed_px_t       rec_px_i,          // the pixel
  input  logic             send_credit_i,     // the beat pipeline has a slot
  output logic             send_o,            // a beat enters the beat pipeline
  output logic [KW-1:0]    send_c_o,          // its cache word (schedule address)
  output logic             send_dummy_o,      // all-skipped pixel: no schedule read
  output logic             send_first_o,      // first beat of the pixel
  output logic             send_last_o,       // last beat of the pixel
  output logic             send_step_o,       // first beat of an output row
  output logic             send_walk_last_o,  // the walk's last beat
  output packed_px_t       send_px_o          // the pixel
);

  typedef logic [KW-1:0] caddr_t;

  // The held beat.
  typedef struct packed {
    caddr_t     c;
    logic       dummy;
    logic       first;
    logic       step;
    packed_px_t px;
  } hold_t;

  logic        cur_v_d, cur_v_q;      // a record is being issued
  packed_rec_e kind_d, kind_q;
  caddr_t      c_d, c_q;              // its row's cache word
  caddr_t      hi_d, hi_q;
  logic        end_d, end_q;          // c_q + 1 == hi_q: the record's last row
  logic        first_d, first_q;      // the next beat is the pixel's first
  logic        fin_d, fin_q;          // the record is the walk's last
  packed_px_t  ipx_d, ipx_q;
  logic        endp_d, endp_q;        // the walk's records are done: send the held beat
  logic        hold_v_d, hold_v_q;    // a beat is held until its successor is issued
  hold_t       hold_d, hold_q;
  logic        adv, new_beat, rec_done;

  always_comb begin
    adv      = send_credit_i && (cur_v_q || endp_q);
    new_beat = adv && cur_v_q && kind_q != PackedEmpty;
    rec_done = adv && cur_v_q && (kind_q != PackedRange || end_q);

    cur_v_d     = cur_v_q;
    kind_d      = kind_q;
    c_d         = c_q;
    hi_d        = hi_q;
    end_d       = end_q;
    first_d     = first_q;
    fin_d       = fin_q;
    ipx_d       = ipx_q;
    endp_d      = endp_q;
    hold_v_d    = hold_v_q;
    hold_d      = hold_q;
    rec_ready_o = 1'b0;

    if (new_beat) begin
      hold_v_d     = 1'b1;
      hold_d.c     = c_q;
      hold_d.dummy = kind_q == PackedDummy;
      hold_d.first = first_q;
      hold_d.step  = first_q && ipx_q.row_first;
      hold_d.px    = ipx_q;
    end
    if (adv && endp_q) begin
      endp_d   = 1'b0;
      hold_v_d = 1'b0;
    end
    if (adv && cur_v_q) begin
      first_d = 1'b0;
      c_d     = c_q + caddr_t'(1);
      end_d   = c_q + caddr_t'(2) == hi_q;
    end
    if (rec_done) begin
      cur_v_d = 1'b0;
      if (fin_q) endp_d = 1'b1;
    end
    // Load a record when none is held or the held one is done.
    if (((!cur_v_q && !endp_q) || (rec_done && !fin_q)) && rec_valid_i && walk_i) begin
      rec_ready_o = 1'b1;
      cur_v_d     = 1'b1;
      kind_d      = rec_kind_i;
      c_d         = rec_start_i;
      hi_d        = rec_hi_i;
      end_d       = rec_single_i;
      first_d     = rec_first_i;
      fin_d       = rec_walk_last_i;
      ipx_d       = rec_px_i;
    end
    if (!walk_i) begin
      cur_v_d  = 1'b0;
      endp_d   = 1'b0;
      hold_v_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cur_v_q  <= 1'b0;
      endp_q   <= 1'b0;
      hold_v_q <= 1'b0;
    end else begin
      cur_v_q  <= cur_v_d;
      endp_q   <= endp_d;
      hold_v_q <= hold_v_d;
    end
  end

  always_ff @(posedge clk_i) begin
    kind_q  <= kind_d;
    c_q     <= c_d;
    hi_q    <= hi_d;
    end_q   <= end_d;
    first_q <= first_d;
    fin_q   <= fin_d;
    ipx_q   <= ipx_d;
    hold_q  <= hold_d;
  end

  assign send_o           = adv && hold_v_q && (new_beat || endp_q);
  assign send_c_o         = hold_q.c;
  assign send_dummy_o     = hold_q.dummy;
  assign send_first_o     = hold_q.first;
  assign send_last_o      = endp_q || first_q;
  assign send_step_o      = hold_q.step;
  assign send_walk_last_o = endp_q;
  assign send_px_o        = hold_q.px;

  `STRATA_ASSERT(pw_range_end, clk_i, rst_ni, !cur_v_q || kind_q != PackedRange ||
                 (end_q == (c_q + caddr_t'(1) == hi_q) && c_q < hi_q))
  // Every issue slot finds a record once the walk runs (the producer is
  // never behind): only the first record is waited for.
  `STRATA_ASSERT(pw_issue_fed, clk_i, rst_ni, !rec_done || fin_q || rec_valid_i)

endmodule : strata_packed_issue
