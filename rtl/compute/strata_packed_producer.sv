// SPDX-License-Identifier: Apache-2.0
// Record producer of a packed CONV walk (strata_packed_walker's second stage).
//
// What: walks the output pixels (oy, ox) in raster order and, for each valid
//   kernel row ky of a pixel, emits one record: the range of packed rows the
//   pixel visits in that kernel row, read from the scan's tap table.
// Range of kernel row ky (M = MaxKernel, slots J = ky*M + kx):
//   [fk[ky*M + kx_lo] - ph[ky*M + kx_lo], fk[ky*M + kx_last + 1]),
//   less the one row it may share with the kernel row before.
// Records (packed_rec_e): PackedRange (rows [start, hi)), PackedEmpty (no
//   row), PackedDummy (the beat of a pixel none of whose rows is visited:
//   cache word cache_base).
// Interface: start_i loads the first pixel (the cycle after the scan is
//   done); walk_i low holds the pixel registers at the first pixel; rec_* is
//   a valid/ready stream of records, rec_walk_last_o marks the walk's last.
// Pipeline: stage 0 one kernel row per cycle (pixel, ky); 1 the table slots;
//   2 the table reads; 3 the range start; 4 the record; then a record FIFO
//   (strata_credit_fifo: stage 0 advances on its credit, nothing stalls).
// Latency: the first record is at rec_valid_o 7 cycles after start_i (6
//   after walk_i rises: start_i is the last cycle before it).
// Throughput: one record (kernel row) per cycle while the FIFO has credit.
// Invariants (asserted): the kernel-row flags and slot follow ky; the
//   pixel's room registers are exact; a range is non-empty and inside the
//   scanned rows.
`include "strata_assert.svh"

module strata_packed_producer
  import strata_compute_pkg::*;
#(
  parameter int unsigned CacheDepth = strata_cfg_pkg::PeCacheDepth,  // schedule words
  parameter int unsigned MaxKernel  = strata_cfg_pkg::MaxKernel,     // kernel side
  localparam int unsigned KW    = $clog2(CacheDepth + 1),  // cache word, end included
  localparam int unsigned Slots = MaxKernel * MaxKernel + 1  // tap table entries
) (
  input  logic                      clk_i,            // clock
  input  logic                      rst_ni,           // synchronous reset, active low
  input  logic                      walk_i,           // the walker is walking
  input  logic                      start_i,          // load the first pixel
  input  walk_cfg_t                 cfg_i,            // geometry, stable while busy
  input  logic [Slots-1:0][KW-1:0]  fk_i,             // tap table: first row at or after slot
  input  logic [Slots-1:0]          ph_i,             // tap table: the row before leads in
  input  logic [KW-1:0]             rows_end_i,       // cache_base + R (checked against)
  output logic                      rec_valid_o,      // a record is offered
  input  logic                      rec_ready_i,      // taken
  output packed_rec_e               rec_kind_o,       // range, empty or dummy
  output logic                      rec_first_o,      // its first beat is the pixel's first
  output logic                      rec_walk_last_o,  // the walk's last record
  output logic                      rec_single_o,     // start + 1 == hi
  output logic [KW-1:0]             rec_start_o,      // cache word of the first row
  output logic [KW-1:0]             rec_hi_o,         // cache word after the last row
  output packed_px_t                rec_px_o          // the pixel
);

  localparam int unsigned AW       = WalkAddrWidth;
  localparam int unsigned PW       = 18;               // signed image coordinates
  localparam int unsigned M        = MaxKernel;
  localparam int unsigned JW       = 8;                // slot arithmetic (M <= 15)
  localparam int unsigned JIW      = $clog2(Slots);    // table index
  localparam int unsigned RecDepth = 6;                // stage 0 to the push 4, + 2

  typedef logic signed [PW-1:0] pos_t;
  typedef logic [KW-1:0]        caddr_t;
  typedef logic [JW-1:0]        slot_t;
  typedef logic [JIW-1:0]       tidx_t;

  typedef struct packed {
    packed_rec_e kind;
    logic        first;
    logic        walk_last;
    logic        single;
    caddr_t      start;
    caddr_t      hi;
    packed_px_t  px;
  } rec_t;

  // ky * M, the tap table slot of kernel row ky, as a 16-entry constant table
  // (one LUT per bit) rather than a multiply that synthesis would give a DSP.
  function automatic slot_t row_slot(tap_t ky);
    slot_t s = '0;
    for (int k = 0; k < 16; k++) begin
      if (ky == WinWidth'(k)) s = slot_t'(k * M);
    end
    return s;
  endfunction

  // ---------------------------------------------------------------- next pixel
  // As strata_conv_walker's next window: the position of the pixel after the
  // producer's current one; follows the first pixel while not walking.
  logic [DimWidth:0] oy_n_d, oy_n_q;
  dim_t        ox_n_d, ox_n_q;
  pos_t        iy0_n_d, iy0_n_q, ix0_n_d, ix0_n_q;
  pos_t        ky_room_n_d, ky_room_n_q, kx_room_n_d, kx_room_n_q;  // img - i0
  walk_addr_t  vrow_n_d, vrow_n_q;      // base + iy0*img_w
  dim_t        ch_n_d, ch_n_q;
  logic        ox_first_n_d, ox_first_n_q, ox_last_n_d, ox_last_n_q;
  packed_px_t  px_n;                    // its context

  always_comb begin
    px_n.ky_lo   = (iy0_n_q < 0) ? WinWidth'(-iy0_n_q) : WinWidth'(0);
    px_n.kx_lo   = (ix0_n_q < 0) ? WinWidth'(-ix0_n_q) : WinWidth'(0);
    px_n.ky_last = (ky_room_n_q < pos_t'(cfg_i.kernel_h)) ? WinWidth'(ky_room_n_q - pos_t'(1))
                                                          : cfg_i.kernel_h - WinWidth'(1);
    px_n.kx_last = (kx_room_n_q < pos_t'(cfg_i.kernel_w)) ? WinWidth'(kx_room_n_q - pos_t'(1))
                                                          : cfg_i.kernel_w - WinWidth'(1);
    px_n.pbase     = vrow_n_q + AW'(ix0_n_q);
    px_n.ch        = ch_n_q;
    px_n.row_first = ox_first_n_q;
  end

  // ---------------------------------------------------------------- stage 0
  // The current pixel and kernel row (one per cycle).
  logic        p_prime_q;               // load the first pixel
  logic        pv_d, pv_q;              // a pixel is being itemised
  packed_px_t  px_d, px_q;
  tap_t        ky_d, ky_q;
  slot_t       jrow_d, jrow_q;          // ky*M
  logic        fky_d, fky_q;            // ky_q == ky_lo
  logic        lky_d, lky_q;            // ky_q == ky_last
  logic        pfin_d, pfin_q;          // the pixel is the walk's last
  logic        rcredit, p_adv, p_load;

  assign p_adv  = pv_q && rcredit;
  assign p_load = p_prime_q || (p_adv && lky_q && !pfin_q);

  always_comb begin
    oy_n_d       = oy_n_q;
    ox_n_d       = ox_n_q;
    iy0_n_d      = iy0_n_q;
    ix0_n_d      = ix0_n_q;
    ky_room_n_d  = ky_room_n_q;
    kx_room_n_d  = kx_room_n_q;
    vrow_n_d     = vrow_n_q;
    ch_n_d       = ch_n_q;
    ox_first_n_d = ox_first_n_q;
    ox_last_n_d  = ox_last_n_q;
    pv_d   = pv_q;
    px_d   = px_q;
    ky_d   = ky_q;
    jrow_d = jrow_q;
    fky_d  = fky_q;
    lky_d  = lky_q;
    pfin_d = pfin_q;

    if (p_adv) begin
      fky_d  = 1'b0;
      ky_d   = ky_q + WinWidth'(1);
      jrow_d = jrow_q + slot_t'(M);
      lky_d  = ky_q + WinWidth'(1) == px_q.ky_last;
      if (lky_q && pfin_q) pv_d = 1'b0;
    end

    if (p_load) begin
      pv_d   = 1'b1;
      px_d   = px_n;
      ky_d   = px_n.ky_lo;
      jrow_d = row_slot(px_n.ky_lo);
      fky_d  = 1'b1;
      lky_d  = px_n.ky_lo == px_n.ky_last;
      pfin_d = ox_last_n_q && oy_n_q == cfg_i.rows_m1;
      ox_first_n_d = ox_last_n_q;
      if (ox_last_n_q) begin
        ox_last_n_d = cfg_i.cols_m1 == '0;
        ox_n_d      = '0;
        ix0_n_d     = -pos_t'(cfg_i.pad_left);
        kx_room_n_d = pos_t'({2'b00, cfg_i.img_w}) + pos_t'(cfg_i.pad_left);
        oy_n_d      = oy_n_q + (DimWidth + 1)'(1);
        iy0_n_d     = iy0_n_q + pos_t'(cfg_i.stride_h);
        ky_room_n_d = ky_room_n_q - pos_t'(cfg_i.stride_h);
        vrow_n_d    = vrow_n_q + AW'(cfg_i.row_adv);
        ch_n_d      = ch_n_q + DimWidth'(1);
      end else begin
        ox_last_n_d = ox_n_q + DimWidth'(1) == cfg_i.cols_m1;
        ox_n_d      = ox_n_q + DimWidth'(1);
        ix0_n_d     = ix0_n_q + pos_t'(cfg_i.stride_w);
        kx_room_n_d = kx_room_n_q - pos_t'(cfg_i.stride_w);
      end
    end

    if (!walk_i) begin
      oy_n_d       = '0;
      ox_n_d       = '0;
      ox_first_n_d = 1'b1;
      ox_last_n_d  = cfg_i.cols_m1 == '0;
      iy0_n_d      = -pos_t'(cfg_i.pad_top);
      ix0_n_d      = -pos_t'(cfg_i.pad_left);
      ky_room_n_d  = pos_t'({1'b0, cfg_i.img_h}) + pos_t'(cfg_i.pad_top);
      kx_room_n_d  = pos_t'({2'b00, cfg_i.img_w}) + pos_t'(cfg_i.pad_left);
      vrow_n_d     = AW'(cfg_i.base) - AW'(cfg_i.pad_off);
      ch_n_d       = cfg_i.param_base;
      pv_d         = 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    oy_n_q       <= oy_n_d;
    ox_n_q       <= ox_n_d;
    iy0_n_q      <= iy0_n_d;
    ix0_n_q      <= ix0_n_d;
    ky_room_n_q  <= ky_room_n_d;
    kx_room_n_q  <= kx_room_n_d;
    vrow_n_q     <= vrow_n_d;
    ch_n_q       <= ch_n_d;
    ox_first_n_q <= ox_first_n_d;
    ox_last_n_q  <= ox_last_n_d;
    px_q         <= px_d;
    ky_q         <= ky_d;
    jrow_q       <= jrow_d;
    fky_q        <= fky_d;
    lky_q        <= lky_d;
    pfin_q       <= pfin_d;
  end

  // ---------------------------------------------------------------- stages 1..4
  // Table slots, table reads, range start, empty test, record.
  logic   q1_v_q, q2_v_q, q3_v_q, q4_v_q;
  packed_px_t q1_px_q, q2_px_q, q3_px_q, q4_px_q;
  logic   q1_f_q, q2_f_q, q3_f_q;       // first kernel row of the pixel
  logic   q1_l_q, q2_l_q, q3_l_q;       // last kernel row of the pixel
  logic   q1_fin_q, q2_fin_q, q3_fin_q, q4_fin_q;
  tidx_t  q1_jlo_q, q1_jhi_q;           // table slots of [kx_lo, kx_last + 1)
  caddr_t q2_fklo_q, q2_hi_q;
  logic   q2_ph_q;
  caddr_t q3_lo_q, q3_hi_q;
  caddr_t prev_end_q;                   // stage 3: hi of the kernel row before
  logic   seen_q;                       // stage 3: the pixel had a non-empty range
  packed_rec_e q4_kind_q;
  logic   q4_first_q;
  caddr_t q4_start_q, q4_hi_q;

  logic   q3_seen_before, q3_nonempty, q3_seen, q3_first;
  caddr_t q3_start;
  packed_rec_e q3_kind;
  rec_t   rec_push, rec_head;
  logic   q1_fin_d, q2_ph_d;
  tidx_t  q1_jlo_d, q1_jhi_d;
  caddr_t q2_fklo_d, q2_hi_d, q3_lo_d;

  always_comb begin
    // Stage 0 -> 1: the table slots of the kernel row's valid columns.
    q1_fin_d  = lky_q && pfin_q;
    q1_jlo_d  = tidx_t'(jrow_q + slot_t'(px_q.kx_lo));
    q1_jhi_d  = tidx_t'(jrow_q + slot_t'(px_q.kx_last) + slot_t'(1));
    // Stage 1 -> 2: the table reads.
    q2_fklo_d = fk_i[q1_jlo_q];
    q2_ph_d   = ph_i[q1_jlo_q];
    q2_hi_d   = fk_i[q1_jhi_q];
    // Stage 2 -> 3: the range's first row (the row before counts when it
    // reads the range's first word as its next).
    q3_lo_d   = q2_fklo_q - caddr_t'(q2_ph_q);
    // Stage 3 -> 4: less the row shared with the kernel row before; empty?
    q3_seen_before = !q3_f_q && seen_q;
    // start = max(lo, prev_end) < hi, as two comparisons side by side.
    q3_nonempty = q3_lo_q < q3_hi_q && (q3_f_q || prev_end_q < q3_hi_q);
    q3_seen     = q3_seen_before || q3_nonempty;
    if (q3_nonempty)                       q3_kind = PackedRange;
    else if (q3_l_q && !q3_seen_before)    q3_kind = PackedDummy;
    else                                   q3_kind = PackedEmpty;
    q3_first = q3_kind != PackedEmpty && !q3_seen_before;
    if (q3_kind == PackedDummy)                 q3_start = caddr_t'(cfg_i.cache_base);
    else if (q3_f_q || q3_lo_q >= prev_end_q)   q3_start = q3_lo_q;
    else                                        q3_start = prev_end_q;
    rec_push.kind      = q4_kind_q;
    rec_push.first     = q4_first_q;
    rec_push.walk_last = q4_fin_q;
    rec_push.single    = q4_start_q + caddr_t'(1) == q4_hi_q;
    rec_push.start     = q4_start_q;
    rec_push.hi        = q4_hi_q;
    rec_push.px        = q4_px_q;
  end

  always_ff @(posedge clk_i) begin
    q1_px_q  <= px_q;
    q1_f_q   <= fky_q;
    q1_l_q   <= lky_q;
    q1_fin_q <= q1_fin_d;
    q1_jlo_q <= q1_jlo_d;
    q1_jhi_q <= q1_jhi_d;
    q2_px_q  <= q1_px_q;
    q2_f_q   <= q1_f_q;
    q2_l_q   <= q1_l_q;
    q2_fin_q <= q1_fin_q;
    q2_fklo_q <= q2_fklo_d;
    q2_ph_q  <= q2_ph_d;
    q2_hi_q  <= q2_hi_d;
    q3_px_q  <= q2_px_q;
    q3_f_q   <= q2_f_q;
    q3_l_q   <= q2_l_q;
    q3_fin_q <= q2_fin_q;
    q3_lo_q  <= q3_lo_d;
    q3_hi_q  <= q2_hi_q;
    if (q3_v_q) begin
      prev_end_q <= q3_hi_q;
      seen_q     <= q3_seen;
    end
    q4_px_q    <= q3_px_q;
    q4_fin_q   <= q3_fin_q;
    q4_kind_q  <= q3_kind;
    q4_first_q <= q3_first;
    q4_start_q <= q3_start;
    q4_hi_q    <= q3_hi_q;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p_prime_q <= 1'b0;
      pv_q      <= 1'b0;
      q1_v_q    <= 1'b0;
      q2_v_q    <= 1'b0;
      q3_v_q    <= 1'b0;
      q4_v_q    <= 1'b0;
    end else begin
      p_prime_q <= start_i;
      pv_q      <= pv_d;
      q1_v_q    <= p_adv;
      q2_v_q    <= q1_v_q;
      q3_v_q    <= q2_v_q;
      q4_v_q    <= q3_v_q;
    end
  end

  strata_credit_fifo #(
    .T     (rec_t),
    .Depth (RecDepth)
  ) u_rec_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (rcredit),
    .reserve_i   (p_adv),
    .push_i      (q4_v_q),
    .push_data_i (rec_push),
    .out_valid_o (rec_valid_o),
    .out_ready_i (rec_ready_i),
    .out_data_o  (rec_head)
  );

  assign rec_kind_o      = rec_head.kind;
  assign rec_first_o     = rec_head.first;
  assign rec_walk_last_o = rec_head.walk_last;
  assign rec_single_o    = rec_head.single;
  assign rec_start_o     = rec_head.start;
  assign rec_hi_o        = rec_head.hi;
  assign rec_px_o        = rec_head.px;

  // The schedule fields the producer does not use.
  logic [146:0] unused_cfg;
  assign unused_cfg = {cfg_i.groups_m1, cfg_i.group_step, cfg_i.kw_groups, cfg_i.row_off0,
                       cfg_i.row_off_step, cfg_i.col_off0, cfg_i.col_off_step, cfg_i.fill,
                       cfg_i.fill_base};

  // ---------------------------------------------------------------- assertions
  `STRATA_ASSERT(pw_ky_flags, clk_i, rst_ni, !pv_q ||
                 (lky_q == (ky_q == px_q.ky_last) && fky_q == (ky_q == px_q.ky_lo) &&
                  jrow_q == slot_t'(32'(ky_q) * M) && ky_q <= px_q.ky_last))
  `STRATA_ASSERT(pw_rooms, clk_i, rst_ni, !walk_i ||
                 (kx_room_n_q == pos_t'({2'b00, cfg_i.img_w}) - ix0_n_q &&
                  ky_room_n_q == pos_t'({1'b0, cfg_i.img_h}) - iy0_n_q))
  `STRATA_ASSERT(pw_record_range, clk_i, rst_ni, !q4_v_q || q4_kind_q != PackedRange ||
                 (q4_start_q < q4_hi_q && q4_hi_q <= rows_end_i))

`ifndef SYNTHESIS
  initial begin
    assert (MaxKernel >= 1 && MaxKernel <= 15)
      else $fatal(1, "strata_packed_producer: MaxKernel must be 1..15 (4-bit tap fields)");
  end
`endif

endmodule : strata_packed_producer
