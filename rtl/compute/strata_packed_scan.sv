// SPDX-License-Identifier: Apache-2.0
// Schedule scan of a packed CONV walk (strata_packed_walker's first stage).
//
// What: reads the R schedule entries (rows cache_base .. cache_base + R - 1)
//   once, checks them and builds the tap table the producer reads.
// Entry check: ky < kernel_h, kx < kernel_w, g <= groups_m1, and the dense
//   rows strictly increase ({ky, kx, g} as one number grows).
// Tap table: one entry per slot J = ky*MaxKernel + kx (slot MaxKernel^2 ends
//   the grid):
//   fk_o[J] = cache_base + the first row whose tap is at or after slot J
//             (cache_base + R when none);
//   ph_o[J] = the row before fk_o[J] is the last group of the dense tap just
//             before J (its next word is J's group 0).
// Interface:
//   idle_i / scan_i: the walker's state; the scan reads while scan_i.
//   sched_*: the read port it drives while sched_own_o, and the read data.
//   done_o: one cycle, the tables are complete; bad_o: an entry failed.
//   cfg_bad_o: R = 0, the rows pass the memory's end, or the kernel exceeds
//   MaxKernel (no entry is read).
// Latency: R + 3 cycles from the first read to done_o (read, RAM output,
//   entry registered, table write; done_o the cycle after the last write).
// Throughput: one entry per cycle.
// Invariants: cfg_i and rows_i are stable from idle_i's last cycle on; the
//   configuration registers and the tables load while idle_i (the tables to
//   "no row").
`include "strata_assert.svh"

module strata_packed_scan
  import strata_compute_pkg::*;
#(
  parameter int unsigned CacheDepth = strata_cfg_pkg::PeCacheDepth,  // schedule words
  parameter int unsigned MaxKernel  = strata_cfg_pkg::MaxKernel,     // kernel side
  localparam int unsigned SchedAddrWidth = (CacheDepth > 1) ? $clog2(CacheDepth) : 1,
  localparam int unsigned KW    = $clog2(CacheDepth + 1),  // cache word, end included
  localparam int unsigned Slots = MaxKernel * MaxKernel + 1  // tap table entries
) (
  input  logic                       clk_i,          // clock
  input  logic                       rst_ni,         // synchronous reset, active low
  input  logic                       idle_i,         // the walker is idle: load cfg_i, rows_i
  input  logic                       scan_i,         // the walker is scanning
  input  walk_cfg_t                  cfg_i,          // geometry, stable while busy
  input  dim_t                       rows_i,         // packed rows R, stable while busy
  output logic                       sched_own_o,    // the scan drives the schedule read port
  output logic                       sched_re_o,     // read an entry (while sched_own_o)
  output logic [SchedAddrWidth-1:0]  sched_raddr_o,  // its address
  input  logic [23:0]                sched_rdata_i,  // {kx 23:20, ky 19:16, g 15:0}, a cycle later
  output logic                       cfg_bad_o,      // the configuration cannot be walked
  output logic [KW-1:0]              rows_end_o,     // cache_base + R
  output logic                       done_o,         // the tables are complete (one cycle)
  output logic                       bad_o,          // an entry failed its check (at done_o)
  output logic [Slots-1:0][KW-1:0]   fk_o,           // tap table: first row at or after slot
  output logic [Slots-1:0]           ph_o            // tap table: the row before leads in
);

  localparam int unsigned M  = MaxKernel;
  localparam int unsigned JW = 8;  // slot arithmetic (M <= 15)

  typedef logic [KW-1:0] caddr_t;
  typedef logic [JW-1:0] slot_t;

  // ky * M, the tap table slot of kernel row ky, as a 16-entry constant table
  // (one LUT per bit) rather than a multiply that synthesis would give a DSP.
  function automatic slot_t row_slot(tap_t ky);
    slot_t s = '0;
    for (int k = 0; k < 16; k++) begin
      if (ky == WinWidth'(k)) s = slot_t'(k * M);
    end
    return s;
  endfunction

  // ---------------------------------------------------------------- configuration
  // Loaded while idle (cfg_i and rows_i are stable from the start on), so the
  // scan and walk compare registers.
  logic   cfg_bad_d, cfg_bad_q;
  caddr_t rows_end_d, rows_end_q;
  logic [DimWidth:0] end_now;

  always_comb begin
    end_now    = (DimWidth + 1)'(cfg_i.cache_base) + (DimWidth + 1)'(rows_i);
    rows_end_d = KW'(end_now);
    cfg_bad_d  = rows_i == '0 || 32'(end_now) > CacheDepth ||
                 cfg_i.kernel_h == '0 || 32'(cfg_i.kernel_h) > M ||
                 cfg_i.kernel_w == '0 || 32'(cfg_i.kernel_w) > M;
  end

  always_ff @(posedge clk_i) begin
    if (idle_i) begin
      cfg_bad_q  <= cfg_bad_d;
      rows_end_q <= rows_end_d;
    end
  end

  // ---------------------------------------------------------------- scan
  // Read side: one entry per cycle at sa_q; then three stages:
  //   1 the RAM's output, 2 the entry registered (checks, slots), 3 the table update.
  dim_t        rem_d, rem_q;          // entries left to read
  logic        rem1_d, rem1_q;        // rem_q == 1
  caddr_t      sa_d, sa_q;            // cache word being read
  logic        reading_d, reading_q;  // reads remain
  logic        sc1_v_q, sc1_last_q;
  caddr_t      sc1_a_q;
  logic        sc2_v_q, sc2_last_q;
  caddr_t      sc2_a_q;
  tap_t        sc2_ky_q, sc2_kx_q;
  dim_t        sc2_g_q;
  logic        sc3_v_q, sc3_last_q;
  caddr_t      sc3_a_q;
  slot_t       sc3_j_q, sc3_nj_q;     // the entry's slot, and its next tap's
  logic        sc3_glast_q;           // the entry is its tap's last group
  logic        bad_acc_d, bad_acc_q;  // a checked entry was bad
  logic [23:0] prev_key_q;            // {ky, kx, g} of the entry before (stage 2)
  logic        has_prev2_q;           // stage 2 saw an entry before
  slot_t       prev_j_q, prev_nj_q;   // stage 3: the entry before
  logic        prev_glast_q, has_prev3_q;
  logic        tail_q;                // the cycle after stage 3's last entry

  logic        scan_read;
  logic        sc2_bad, sc2_glast;
  slot_t       sc2_j, sc2_nj;
  logic [23:0] sc2_key;
  logic        sc1_v_d, has_prev2_d, has_prev3_d, tail_d;

  assign scan_read = scan_i && reading_q;

  always_comb begin
    sc1_v_d     = scan_read && !cfg_bad_q;
    tail_d      = sc3_v_q && sc3_last_q;
    has_prev2_d = !idle_i && (has_prev2_q || sc2_v_q);
    has_prev3_d = !idle_i && (has_prev3_q || sc3_v_q);
    sc2_key   = {sc2_ky_q, sc2_kx_q, sc2_g_q};
    sc2_glast = sc2_g_q == cfg_i.groups_m1;
    sc2_bad = 32'(sc2_ky_q) >= 32'(cfg_i.kernel_h) || 32'(sc2_kx_q) >= 32'(cfg_i.kernel_w) ||
              sc2_g_q > cfg_i.groups_m1 ||
              (has_prev2_q && sc2_key <= prev_key_q);
    sc2_j   = row_slot(sc2_ky_q) + slot_t'(sc2_kx_q);
    // The next dense tap: (ky, kx + 1), else (ky + 1, 0).
    sc2_nj  = (sc2_kx_q + WinWidth'(1) == cfg_i.kernel_w) ? row_slot(sc2_ky_q + WinWidth'(1))
                                                  : sc2_j + slot_t'(1);
  end

  always_comb begin
    rem_d     = rem_q;
    rem1_d    = rem1_q;
    sa_d      = sa_q;
    reading_d = reading_q;
    bad_acc_d = bad_acc_q || (sc2_v_q && sc2_bad);
    if (idle_i) begin
      rem_d     = rows_i;
      rem1_d    = rows_i == DimWidth'(1);
      sa_d      = caddr_t'(cfg_i.cache_base);
      reading_d = 1'b1;
      bad_acc_d = 1'b0;
    end else if (scan_read) begin
      rem_d     = rem_q - DimWidth'(1);
      rem1_d    = rem_q == DimWidth'(2);
      sa_d      = sa_q + caddr_t'(1);
      reading_d = !rem1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    rem_q     <= rem_d;
    rem1_q    <= rem1_d;
    sa_q      <= sa_d;
    reading_q <= reading_d;
    bad_acc_q <= bad_acc_d;
    sc1_a_q   <= sa_q;
    sc1_last_q <= rem1_q;
    sc2_a_q   <= sc1_a_q;
    sc2_last_q <= sc1_last_q;
    {sc2_kx_q, sc2_ky_q, sc2_g_q} <= sched_rdata_i;
    sc3_a_q   <= sc2_a_q;
    sc3_last_q <= sc2_last_q;
    sc3_j_q   <= sc2_j;
    sc3_nj_q  <= sc2_nj;
    sc3_glast_q <= sc2_glast;
    if (sc2_v_q) prev_key_q <= sc2_key;
    if (sc3_v_q) begin
      prev_j_q     <= sc3_j_q;
      prev_nj_q    <= sc3_nj_q;
      prev_glast_q <= sc3_glast_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sc1_v_q     <= 1'b0;
      sc2_v_q     <= 1'b0;
      sc3_v_q     <= 1'b0;
      has_prev2_q <= 1'b0;
      has_prev3_q <= 1'b0;
      tail_q      <= 1'b0;
    end else begin
      tail_q      <= tail_d;
      sc1_v_q     <= sc1_v_d;
      sc2_v_q     <= sc1_v_q;
      sc3_v_q     <= sc2_v_q;
      has_prev2_q <= has_prev2_d;
      has_prev3_q <= has_prev3_d;
    end
  end

  // ---------------------------------------------------------------- tap table
  // Follows "no row" (cache_base + R) while idle; stage 3 writes every slot in
  // (the entry before's slot, the entry's slot], and the tail cycle after the
  // last entry the ph flags of the slots after it (the last row's next word
  // may be their tap's).
  for (genvar j = 0; j < Slots; j++) begin : g_slot
    logic   upd, upd_tail, fk_en, ph_en, ph_d, ph_q;
    caddr_t fk_d, fk_q;
    if (j == 0) begin : g_first
      assign upd      = sc3_v_q && !has_prev3_q;
      assign upd_tail = 1'b0;
    end else begin : g_other
      assign upd      = sc3_v_q && (!has_prev3_q || prev_j_q < slot_t'(j)) &&
                        slot_t'(j) <= sc3_j_q;
      assign upd_tail = tail_q && prev_j_q < slot_t'(j);
    end
    always_comb begin
      fk_en = idle_i || upd;
      ph_en = idle_i || upd || upd_tail;
      fk_d  = idle_i ? rows_end_d : sc3_a_q;
      ph_d  = !idle_i && (upd ? has_prev3_q : 1'b1) && prev_glast_q &&
              prev_nj_q == slot_t'(j);
    end
    always_ff @(posedge clk_i) begin
      if (fk_en) fk_q <= fk_d;
      if (ph_en) ph_q <= ph_d;
    end
    assign fk_o[j] = fk_q;
    assign ph_o[j] = ph_q;
  end

  // The schedule fields the scan does not use.
  logic [284:0] unused_cfg;
  assign unused_cfg = {cfg_i.rows_m1, cfg_i.cols_m1, cfg_i.img_h, cfg_i.img_w, cfg_i.stride_h,
                       cfg_i.stride_w, cfg_i.pad_top, cfg_i.pad_left, cfg_i.group_step,
                       cfg_i.row_adv, cfg_i.pad_off, cfg_i.base, cfg_i.kw_groups,
                       cfg_i.row_off0, cfg_i.row_off_step, cfg_i.col_off0, cfg_i.col_off_step,
                       cfg_i.param_base, cfg_i.fill, cfg_i.fill_base};

  assign sched_own_o   = scan_read;
  assign sched_re_o    = sc1_v_d;
  assign sched_raddr_o = SchedAddrWidth'(sa_q);
  assign cfg_bad_o     = cfg_bad_q;
  assign rows_end_o    = rows_end_q;
  assign done_o        = tail_q;
  assign bad_o         = bad_acc_q;

  // An entry is read only while scanning, and the table is complete before
  // the walk reads it.
  `STRATA_ASSERT(ps_read_scanning, clk_i, rst_ni, !sc1_v_q || !idle_i)
  `STRATA_ASSERT(ps_done_once, clk_i, rst_ni, !tail_q || !sc3_v_q)

`ifndef SYNTHESIS
  initial begin
    assert (MaxKernel >= 1 && MaxKernel <= 15)
      else $fatal(1, "strata_packed_scan: MaxKernel must be 1..15 (4-bit tap fields)");
  end
`endif

endmodule : strata_packed_scan
