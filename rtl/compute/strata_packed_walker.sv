// SPDX-License-Identifier: Apache-2.0
// Address walker of a packed CONV (sparse builds; docs/isa.md, "Packed CONV").
//
// What: one instruction's geometry (walk_cfg_t) and its packed-row schedule
//   in, the beats of the packed walk out, as strata::IsaSim's
//   execute_packed_conv:
//   for each output pixel (oy, ox) in raster order, each packed row k < R
//   (R = rows_i) whose entry names the tap and group (ky, kx, g) of its first
//   dense row reads two bank words, "cur" (ky, kx, g) and "next" (the next
//   dense row), each inside when its tap is inside the image.
//   A row with both words outside is skipped (no beat); a pixel whose rows
//   are all skipped takes one beat with both words outside at cache_base.
//   A beat: both addresses (base when outside), the inside flags, the cache
//   word cache_base + k, first / last of the pixel, channel param_base + oy.
// Schedule memory: CacheDepth words {kx 23:20, ky 19:16, g 15:0}, row k at
//   cache_base + k; written through sched_we_i at any time except to the rows
//   of a running walk (the next pass's schedule loads while this one runs).
// Steps: as strata_conv_walker, step_valid_o before the first beat of each
//   output row, which waits for it; the first row's step is acquired right
//   after start_i, before the schedule is read (the loads it waits for
//   include the schedule's).
// Stages (each module's header has its details):
//   strata_packed_scan      reads the schedule once, checks it, builds the
//                           tap table;
//   strata_packed_producer  one record per (pixel, valid kernel row): the
//                           range of packed rows it visits;
//   strata_packed_issue     one beat per row of a record, holds each beat
//                           until its last flag is known;
//   strata_packed_beats     the two bank addresses and inside flags, into
//                           the beat FIFO whose head drives the beat ports.
//   This module: the state machine (idle, step, scan, walk), the schedule
//   memory and its read port (scan, then the beats), the step handshake.
// Latency: start_i to the first beat R + 20 cycles when the first step is
//   granted at once and the walk's second beat follows its first (step 1,
//   scan R + 5, producer 6, issue stage 2, beat pipeline 6).
// Throughput: one beat per cycle while beat_ready_i; skipped rows cost
//   nothing; an empty range (a valid kernel row of a pixel with none of its
//   rows visited) costs one cycle unless it carries an all-skipped pixel's
//   beat.
// Errors: err_o rises (busy_o falls, no beat) for an entry outside the
//   kernel or the groups, dense rows that do not strictly increase, R = 0,
//   rows past the end of the memory, or a kernel over MaxKernel; it stays
//   until the next start_i.
// Timing: every stage ends at a register; beat_ready_i reaches no pipeline
//   register (the beat FIFO's credit); the handshake starts at the beat
//   FIFO's head register (its step flag and valid).
// Invariants (asserted here): the beat and step streams follow the
//   handshake rules; a beat with no word inside is its pixel's only beat; no
//   beat unless walking; a running walk's schedule rows are not rewritten.
`include "strata_assert.svh"

module strata_packed_walker
  import strata_compute_pkg::*;
#(
  parameter int unsigned BankAddrWidth  = $clog2(strata_cfg_pkg::BankDepth),     // bank word bits
  parameter int unsigned CacheAddrWidth = $clog2(strata_cfg_pkg::PeCacheDepth),  // cache word bits
  parameter int unsigned ParamIdxWidth  = $clog2(strata_cfg_pkg::ParamDepth),    // channel bits
  parameter int unsigned CacheDepth     = strata_cfg_pkg::PeCacheDepth,          // schedule words
  parameter int unsigned MaxKernel      = strata_cfg_pkg::MaxKernel,             // kernel side
  localparam int unsigned SchedAddrWidth = (CacheDepth > 1) ? $clog2(CacheDepth) : 1
) (
  input  logic                       clk_i,          // clock
  input  logic                       rst_ni,         // synchronous reset, active low
  input  logic                       start_i,        // begin a walk (while idle)
  input  walk_cfg_t                  cfg_i,          // geometry, stable while busy
  input  dim_t                       rows_i,         // packed rows R, stable while busy
  output logic                       busy_o,         // scanning or beats remain
  output logic                       err_o,          // bad schedule: no beat (until start_i)
  // schedule memory write port (any time; not the rows of a running walk)
  input  logic                       sched_we_i,     // write one entry
  input  logic [SchedAddrWidth-1:0]  sched_waddr_i,  // entry address (cache_base + k)
  input  logic [23:0]                sched_wdata_i,  // {kx 23:20, ky 19:16, g 15:0}
  // dependency steps: one per output row, before its first beat
  output logic                       step_valid_o,   // the next row needs its step
  input  logic                       step_ready_i,   // its units are held
  // beats
  output logic                       beat_valid_o,   // a beat is offered
  input  logic                       beat_ready_i,   // taken
  output logic [1:0][BankAddrWidth-1:0] beat_addr_o, // bank words: [0] cur, [1] next
  output logic [1:0]                 beat_in_o,      // the word is inside the image: [0], [1]
  output logic [CacheAddrWidth-1:0]  beat_cache_o,   // cache word of the row
  output logic                       beat_first_o,   // first beat of an output pixel
  output logic                       beat_last_o,    // last beat of an output pixel
  output logic [ParamIdxWidth-1:0]   beat_param_o    // parameter channel of the output row
);

  localparam int unsigned KW    = $clog2(CacheDepth + 1);  // cache word, end included
  localparam int unsigned Slots = MaxKernel * MaxKernel + 1;  // tap table entries

  typedef enum logic [1:0] {
    StIdle,
    StStep,   // acquiring the first output row's step: the schedule is read after it
    StScan,   // reading the schedule (and draining the scan pipeline)
    StWalk
  } state_e;

  state_e state_d, state_q;
  logic   err_d, err_q;
  logic   idle, walking;

  assign idle    = state_q == StIdle;
  assign walking = state_q == StWalk;

  // ---------------------------------------------------------------- schedule memory
  // Read by the scan, then by the beats (the address is a register either way).
  logic                      sched_re;
  logic [SchedAddrWidth-1:0] sched_raddr;
  logic [23:0]               sched_rdata;
  logic                      scan_own, scan_re;
  logic [SchedAddrWidth-1:0] scan_raddr;
  logic                      send, send_dummy;
  logic [KW-1:0]             send_c;

  assign sched_re    = scan_own ? scan_re : send && !send_dummy;
  assign sched_raddr = scan_own ? scan_raddr : SchedAddrWidth'(send_c);

  strata_ram_1r1w #(
    .Width     (24),
    .Depth     (CacheDepth),
    .ReadFirst (1'b0)   // a walk's rows are not written while it reads them
  ) u_sched (
    .clk_i   (clk_i),
    .we_i    (sched_we_i),
    .waddr_i (sched_waddr_i),
    .wdata_i (sched_wdata_i),
    .re_i    (sched_re),
    .raddr_i (sched_raddr),
    .rdata_o (sched_rdata)
  );

  // ---------------------------------------------------------------- scan
  logic                     cfg_bad, scan_done, scan_bad;
  logic [KW-1:0]            rows_end;
  logic [Slots-1:0][KW-1:0] fk;
  logic [Slots-1:0]         ph;

  strata_packed_scan #(
    .CacheDepth (CacheDepth),
    .MaxKernel  (MaxKernel)
  ) u_scan (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .idle_i        (idle),
    .scan_i        (state_q == StScan),
    .cfg_i         (cfg_i),
    .rows_i        (rows_i),
    .sched_own_o   (scan_own),
    .sched_re_o    (scan_re),
    .sched_raddr_o (scan_raddr),
    .sched_rdata_i (sched_rdata),
    .cfg_bad_o     (cfg_bad),
    .rows_end_o    (rows_end),
    .done_o        (scan_done),
    .bad_o         (scan_bad),
    .fk_o          (fk),
    .ph_o          (ph)
  );

  // ---------------------------------------------------------------- producer
  logic          rec_valid, rec_ready, rec_first, rec_walk_last, rec_single;
  packed_rec_e   rec_kind;
  logic [KW-1:0] rec_start, rec_hi;
  packed_px_t    rec_px;

  strata_packed_producer #(
    .CacheDepth (CacheDepth),
    .MaxKernel  (MaxKernel)
  ) u_producer (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .walk_i          (walking),
    .start_i         (state_q == StScan && state_d == StWalk),
    .cfg_i           (cfg_i),
    .fk_i            (fk),
    .ph_i            (ph),
    .rows_end_i      (rows_end),
    .rec_valid_o     (rec_valid),
    .rec_ready_i     (rec_ready),
    .rec_kind_o      (rec_kind),
    .rec_first_o     (rec_first),
    .rec_walk_last_o (rec_walk_last),
    .rec_single_o    (rec_single),
    .rec_start_o     (rec_start),
    .rec_hi_o        (rec_hi),
    .rec_px_o        (rec_px)
  );

  // ---------------------------------------------------------------- issue
  logic       send_credit, send_first, send_last, send_step, send_walk_last;
  packed_px_t send_px;

  strata_packed_issue #(
    .CacheDepth (CacheDepth)
  ) u_issue (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .walk_i           (walking),
    .rec_valid_i      (rec_valid),
    .rec_ready_o      (rec_ready),
    .rec_kind_i       (rec_kind),
    .rec_first_i      (rec_first),
    .rec_walk_last_i  (rec_walk_last),
    .rec_single_i     (rec_single),
    .rec_start_i      (rec_start),
    .rec_hi_i         (rec_hi),
    .rec_px_i         (rec_px),
    .send_credit_i    (send_credit),
    .send_o           (send),
    .send_c_o         (send_c),
    .send_dummy_o     (send_dummy),
    .send_first_o     (send_first),
    .send_last_o      (send_last),
    .send_step_o      (send_step),
    .send_walk_last_o (send_walk_last),
    .send_px_o        (send_px)
  );

  // ---------------------------------------------------------------- beat pipeline
  logic beat_valid, out_ready, beat_step, beat_walk_last;

  strata_packed_beats #(
    .BankAddrWidth  (BankAddrWidth),
    .CacheAddrWidth (CacheAddrWidth),
    .ParamIdxWidth  (ParamIdxWidth),
    .CacheDepth     (CacheDepth)
  ) u_beats (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .cfg_i            (cfg_i),
    .credit_o         (send_credit),
    .send_i           (send),
    .send_c_i         (send_c),
    .send_dummy_i     (send_dummy),
    .send_first_i     (send_first),
    .send_last_i      (send_last),
    .send_step_i      (send_step),
    .send_walk_last_i (send_walk_last),
    .send_px_i        (send_px),
    .sched_rdata_i    (sched_rdata),
    .beat_valid_o     (beat_valid),
    .out_ready_i      (out_ready),
    .beat_addr_o      (beat_addr_o),
    .beat_in_o        (beat_in_o),
    .beat_cache_o     (beat_cache_o),
    .beat_first_o     (beat_first_o),
    .beat_last_o      (beat_last_o),
    .beat_param_o     (beat_param_o),
    .beat_step_o      (beat_step),
    .beat_walk_last_o (beat_walk_last)
  );

  // ---------------------------------------------------------------- output
  logic fire, step_fire, acq_d, acq_q;

  // The first row's step is acquired before the scan (StStep): the units it
  // waits for include the LOAD CONTROL that writes the schedule. Its first
  // beat then finds acq_q set.
  assign step_valid_o = state_q == StStep || (beat_valid && beat_step && !acq_q);
  assign step_fire    = step_valid_o && step_ready_i;
  assign beat_valid_o = beat_valid && (!beat_step || acq_q || step_ready_i);
  assign out_ready    = beat_ready_i && (!beat_step || acq_q || step_ready_i);
  assign fire         = beat_valid_o && beat_ready_i;
  assign acq_d        = (acq_q || step_fire) && !(fire && beat_step);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) acq_q <= 1'b0;
    else         acq_q <= acq_d;
  end

  // ---------------------------------------------------------------- state
  always_comb begin
    state_d = state_q;
    err_d   = err_q;
    unique case (state_q)
      StIdle: begin
        if (start_i) begin
          state_d = StStep;
          err_d   = 1'b0;
        end
      end
      StStep: begin
        if (step_ready_i) state_d = StScan;
      end
      StScan: begin
        if (cfg_bad) begin
          state_d = StIdle;
          err_d   = 1'b1;
        end else if (scan_done) begin
          state_d = scan_bad ? StIdle : StWalk;
          err_d   = scan_bad;
        end
      end
      StWalk: begin
        if (fire && beat_walk_last) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      err_q   <= 1'b0;
    end else begin
      state_q <= state_d;
      err_q   <= err_d;
    end
  end

  assign busy_o = !idle;
  assign err_o  = err_q;

  // ---------------------------------------------------------------- assertions
  `STRATA_ASSERT_STREAM(pw_beat, clk_i, rst_ni, beat_valid_o, beat_ready_i,
                        {beat_addr_o, beat_in_o, beat_cache_o, beat_first_o, beat_last_o,
                         beat_param_o})
  // A step carries no data of its own: the first row's (StStep) has none, and
  // the head register follows the beat pipeline while the FIFO is empty; a
  // beat's step holds that beat's channel (the head, stable once valid).
  logic [ParamIdxWidth-1:0] step_payload;
  assign step_payload = (state_q == StStep) ? '0 : beat_param_o;
  `STRATA_ASSERT_STREAM(pw_step, clk_i, rst_ni, step_valid_o, step_ready_i, step_payload)
  `STRATA_ASSERT(pw_start_idle, clk_i, rst_ni, !start_i || idle)
  // A walk's rows are not rewritten once it reads them (from the scan on: the
  // dependency rules order its LOAD CONTROL before the first row's step, and
  // the next LOAD CONTROL of these rows after the COMPUTE).
  `STRATA_ASSERT(pw_sched_write_rows, clk_i, rst_ni, !sched_we_i ||
                 idle || state_q == StStep ||
                 32'(sched_waddr_i) < 32'(cfg_i.cache_base) ||
                 32'(sched_waddr_i) >= 32'(cfg_i.cache_base) + 32'(rows_i))
  // A beat with no word inside is its pixel's only beat.
  `STRATA_ASSERT(pw_dummy_alone, clk_i, rst_ni,
                 !beat_valid_o || beat_in_o != 2'b00 || (beat_first_o && beat_last_o))
  `STRATA_ASSERT(pw_no_beat_unless_walking, clk_i, rst_ni, !beat_valid || walking)

`ifndef SYNTHESIS
  initial begin
    assert (BankAddrWidth <= 16 && CacheAddrWidth <= 16 && ParamIdxWidth <= 16)
      else $fatal(1, "strata_packed_walker: address widths exceed the instruction fields");
    assert (MaxKernel >= 1 && MaxKernel <= 15)
      else $fatal(1, "strata_packed_walker: MaxKernel must be 1..15 (4-bit tap fields)");
    assert (CacheDepth >= 2 && CacheDepth <= 65536 && $clog2(CacheDepth) <= CacheAddrWidth)
      else $fatal(1, "strata_packed_walker: CacheDepth must fit CacheAddrWidth");
  end
`endif

endmodule : strata_packed_walker
