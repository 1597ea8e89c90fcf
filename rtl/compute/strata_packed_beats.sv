// SPDX-License-Identifier: Apache-2.0
// Beat pipeline of a packed CONV walk (strata_packed_walker's last stage).
//
// What: turns an issued beat (packed row k of a pixel, its schedule entry
//   {ky, kx, g} read at send time) into the two bank words it reads:
//   cur  = pbase + g*group_step + ky*img_w + kx, the row's first dense row;
//   next = the next dense row: group g + 1, else tap (ky, kx + 1), else
//          (ky + 1, 0); none past the last dense row.
//   A word is inside when its tap is inside the pixel's valid rectangle;
//   a word outside reads base. A dummy beat has both words outside.
// Stages (no stall):
//   1 the schedule word arrives; the DSPs take g and ky;
//   2 the inside-flag parts and the pixel sums;
//   3 the products; the flags; g*group_step + pbase + kx;
//   4 + ky*img_w (cur, and next when it is another tap);
//   5 next = cur + group_step when it is the next group; push.
//   A credit FIFO (strata_credit_fifo, OutReg) holds a slot for every beat in
//   flight, so out_ready_i reaches no pipeline register.
// Interface: send_i takes a beat only while credit_o; the beat_* outputs are
//   the FIFO head (flip-flops), a valid/ready stream with out_ready_i.
// Latency: send_i to beat_valid_o 6 cycles. Throughput: one beat per cycle.
// Invariants: the schedule read of a beat is issued in send_i's cycle.
`include "strata_assert.svh"

module strata_packed_beats
  import strata_compute_pkg::*;
#(
  parameter int unsigned BankAddrWidth  = $clog2(strata_cfg_pkg::BankDepth),     // bank word bits
  parameter int unsigned CacheAddrWidth = $clog2(strata_cfg_pkg::PeCacheDepth),  // cache word bits
  parameter int unsigned ParamIdxWidth  = $clog2(strata_cfg_pkg::ParamDepth),    // channel bits
  parameter int unsigned CacheDepth     = strata_cfg_pkg::PeCacheDepth,          // schedule words
  localparam int unsigned KW = $clog2(CacheDepth + 1)  // cache word, end included
) (
  input  logic                          clk_i,             // clock
  input  logic                          rst_ni,            // synchronous reset, active low
  input  walk_cfg_t                     cfg_i,             // geometry, stable while busy
  output logic                          credit_o,          // a beat may be sent
  input  logic                          send_i,            // a beat enters (only while credit_o)
  input  logic [KW-1:0]                 send_c_i,          // its cache word
  input  logic                          send_dummy_i,      // all-skipped pixel: no word inside
  input  logic                          send_first_i,      // first beat of the pixel
  input  logic                          send_last_i,       // last beat of the pixel
  input  logic                          send_step_i,       // first beat of an output row
  input  logic                          send_walk_last_i,  // the walk's last beat
  input  packed_px_t                    send_px_i,         // the pixel
  input  logic [23:0]                   sched_rdata_i,     // its entry, a cycle after send_i
  output logic                          beat_valid_o,      // a beat is stored
  input  logic                          out_ready_i,       // the head beat is taken
  output logic [1:0][BankAddrWidth-1:0] beat_addr_o,       // bank words: [0] cur, [1] next
  output logic [1:0]                    beat_in_o,         // the word is inside: [0], [1]
  output logic [CacheAddrWidth-1:0]     beat_cache_o,      // cache word of the row
  output logic                          beat_first_o,      // first beat of an output pixel
  output logic                          beat_last_o,       // last beat of an output pixel
  output logic [ParamIdxWidth-1:0]      beat_param_o,      // parameter channel of the output row
  output logic                          beat_step_o,       // waits for the output row's step
  output logic                          beat_walk_last_o   // the walk's last beat
);

  localparam int unsigned AW        = WalkAddrWidth;
  localparam int unsigned BeatDepth = 7;  // send to push 5, + 2

  // A beat as it enters.
  typedef struct packed {
    logic [KW-1:0] c;
    logic          dummy;
    logic          first;
    logic          last;
    logic          step;
    logic          walk_last;
    packed_px_t    px;
  } send_t;

  // A beat as it leaves.
  typedef struct packed {
    logic [BankAddrWidth-1:0]  a_nxt;
    logic [BankAddrWidth-1:0]  a_cur;
    logic [1:0]                in;         // {next, cur} inside the image
    logic [CacheAddrWidth-1:0] cache;
    logic                      first;
    logic                      last;
    logic                      step;
    logic                      walk_last;
    logic [ParamIdxWidth-1:0]  param;
  } beat_t;

  send_t       send_data;
  logic        s1_v_q, s2_v_q, s3_v_q, s4_v_q, s5_v_q;
  send_t       s1_q, s2_q, s3_q, s4_q, s5_q;
  tap_t        s2_ky_q, s2_kx_q;
  dim_t        s2_g_q;
  logic        s3_ky_in_q, s3_kx_in_q, s3_ky1_in_q, s3_kx1_in_q;
  logic        s3_ng_q, s3_nkx_q, s3_nky_q;
  walk_addr_t  s3_pbk_q, s3_pbk1_q, s3_pbw_q;
  logic        s4_in_cur_q, s4_in_nxt_q, s4_ng_q;
  walk_addr_t  s4_t1_q, s4_t2_q, s4_u_q;
  logic        s5_in_cur_q, s5_in_nxt_q, s5_ng_q;
  walk_addr_t  s5_cur_q, s5_nb_q;
  logic [32:0] prod_g;   // g * group_step
  logic [19:0] prod_ky;  // ky * img_w

  assign send_data = '{c: send_c_i, dummy: send_dummy_i, first: send_first_i,
                       last: send_last_i, step: send_step_i, walk_last: send_walk_last_i,
                       px: send_px_i};

  strata_dsp_mul #(
    .AWidth  (16),
    .BWidth  (17),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_mul_g (
    .clk_i    (clk_i),
    .ce_in_i  (1'b1),
    .ce_out_i (1'b1),
    .a_i      (sched_rdata_i[15:0]),
    .b_i      (cfg_i.group_step),
    .p_o      (prod_g)
  );

  strata_dsp_mul #(
    .AWidth  (4),
    .BWidth  (16),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_mul_ky (
    .clk_i    (clk_i),
    .ce_in_i  (1'b1),
    .ce_out_i (1'b1),
    .a_i      (sched_rdata_i[19:16]),
    .b_i      (cfg_i.img_w),
    .p_o      (prod_ky)
  );

  logic [4:0] s2_ky1, s2_kx1;
  logic       s3_ky_in_d, s3_kx_in_d, s3_ky1_in_d, s3_kx1_in_d, s3_ng_d, s3_nkx_d, s3_nky_d;
  walk_addr_t s3_pbk_d, s3_pbk1_d, s3_pbw_d, s4_t1_d, s4_t2_d, s4_u_d, s5_cur_d, s5_nb_d;
  logic       s4_in_cur_d, s4_in_nxt_d;
  walk_addr_t s5_nxt;
  beat_t      beat_push, beat_head;

  always_comb begin
    // Stage 2: parts of the inside flags of the entry's tap (ky, kx) and of
    // the next word's (ky, kx + 1) or (ky + 1, 0); which next word; the pixel sums.
    s2_ky1      = {1'b0, s2_ky_q} + 5'd1;
    s2_kx1      = {1'b0, s2_kx_q} + 5'd1;
    s3_ky_in_d  = s2_ky_q >= s2_q.px.ky_lo && s2_ky_q <= s2_q.px.ky_last;
    s3_kx_in_d  = s2_kx_q >= s2_q.px.kx_lo && s2_kx_q <= s2_q.px.kx_last;
    s3_ky1_in_d = s2_ky1 >= {1'b0, s2_q.px.ky_lo} && s2_ky1 <= {1'b0, s2_q.px.ky_last};
    s3_kx1_in_d = s2_kx1 >= {1'b0, s2_q.px.kx_lo} && s2_kx1 <= {1'b0, s2_q.px.kx_last};
    s3_ng_d     = s2_g_q != cfg_i.groups_m1;
    s3_nkx_d    = s2_kx1 != {1'b0, cfg_i.kernel_w};
    s3_nky_d    = s2_ky1 != {1'b0, cfg_i.kernel_h};
    s3_pbk_d    = s2_q.px.pbase + AW'(s2_kx_q);
    s3_pbk1_d   = s2_q.px.pbase + AW'(s2_kx1);
    s3_pbw_d    = s2_q.px.pbase + AW'(cfg_i.img_w);
    // Stage 3: the products arrive.
    s4_t1_d     = s3_pbk_q + AW'(prod_g);
    s4_t2_d     = AW'(prod_ky);
    s4_u_d      = s3_nkx_q ? s3_pbk1_q : s3_pbw_q;
    // Stage 4: + ky*img_w.
    s5_cur_d    = s4_t1_q + s4_t2_q;
    s5_nb_d     = s4_u_q + s4_t2_q;
    // Stage 3 flags (dummy beats have no word inside).
    s4_in_cur_d = !s3_q.dummy && s3_ky_in_q && s3_kx_in_q;
    s4_in_nxt_d = !s3_q.dummy && (s3_ng_q  ? s3_ky_in_q && s3_kx_in_q :
                                s3_nkx_q ? s3_ky_in_q && s3_kx1_in_q :
                                s3_nky_q ? s3_ky1_in_q && s3_q.px.kx_lo == WinWidth'(0) : 1'b0);
    s5_nxt = s5_ng_q ? s5_cur_q + AW'(cfg_i.group_step) : s5_nb_q;
    beat_push.a_cur     = s5_in_cur_q ? BankAddrWidth'(s5_cur_q) : BankAddrWidth'(cfg_i.base);
    beat_push.a_nxt     = s5_in_nxt_q ? BankAddrWidth'(s5_nxt) : BankAddrWidth'(cfg_i.base);
    beat_push.in        = {s5_in_nxt_q, s5_in_cur_q};
    beat_push.cache     = CacheAddrWidth'(s5_q.c);
    beat_push.first     = s5_q.first;
    beat_push.last      = s5_q.last;
    beat_push.step      = s5_q.step;
    beat_push.walk_last = s5_q.walk_last;
    beat_push.param     = ParamIdxWidth'(s5_q.px.ch);
  end

  always_ff @(posedge clk_i) begin
    s1_q <= send_data;
    s2_q <= s1_q;
    {s2_kx_q, s2_ky_q, s2_g_q} <= sched_rdata_i;
    s3_q <= s2_q;
    s3_ky_in_q  <= s3_ky_in_d;
    s3_kx_in_q  <= s3_kx_in_d;
    s3_ky1_in_q <= s3_ky1_in_d;
    s3_kx1_in_q <= s3_kx1_in_d;
    s3_ng_q     <= s3_ng_d;
    s3_nkx_q    <= s3_nkx_d;
    s3_nky_q    <= s3_nky_d;
    s3_pbk_q    <= s3_pbk_d;
    s3_pbk1_q   <= s3_pbk1_d;
    s3_pbw_q    <= s3_pbw_d;
    s4_q <= s3_q;
    s4_in_cur_q <= s4_in_cur_d;
    s4_in_nxt_q <= s4_in_nxt_d;
    s4_ng_q     <= s3_ng_q;
    s4_t1_q     <= s4_t1_d;
    s4_t2_q     <= s4_t2_d;
    s4_u_q      <= s4_u_d;
    s5_q <= s4_q;
    s5_in_cur_q <= s4_in_cur_q;
    s5_in_nxt_q <= s4_in_nxt_q;
    s5_ng_q     <= s4_ng_q;
    s5_cur_q    <= s5_cur_d;
    s5_nb_q     <= s5_nb_d;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      s1_v_q <= 1'b0;
      s2_v_q <= 1'b0;
      s3_v_q <= 1'b0;
      s4_v_q <= 1'b0;
      s5_v_q <= 1'b0;
    end else begin
      s1_v_q <= send_i;
      s2_v_q <= s1_v_q;
      s3_v_q <= s2_v_q;
      s4_v_q <= s3_v_q;
      s5_v_q <= s4_v_q;
    end
  end

  // OutReg: every beat output and the handshake's step flag leave flip-flops.
  strata_credit_fifo #(
    .T      (beat_t),
    .Depth  (BeatDepth),
    .OutReg (1'b1)
  ) u_beat_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (credit_o),
    .reserve_i   (send_i),
    .push_i      (s5_v_q),
    .push_data_i (beat_push),
    .out_valid_o (beat_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (beat_head)
  );

  assign beat_addr_o      = {beat_head.a_nxt, beat_head.a_cur};
  assign beat_in_o        = beat_head.in;
  assign beat_cache_o     = beat_head.cache;
  assign beat_first_o     = beat_head.first;
  assign beat_last_o      = beat_head.last;
  assign beat_param_o     = beat_head.param;
  assign beat_step_o      = beat_head.step;
  assign beat_walk_last_o = beat_head.walk_last;

  // The schedule fields the beats do not use, the high product bits (zero
  // for a legal instruction) and a flag used before the last stage.
  logic [251:0] unused_cfg;
  logic [8:0]   unused_prod;
  logic [AW-BankAddrWidth-1:0] unused_nxt;
  logic         unused_dummy;
  assign unused_cfg   = {cfg_i.rows_m1, cfg_i.cols_m1, cfg_i.img_h, cfg_i.stride_h,
                         cfg_i.stride_w, cfg_i.pad_top, cfg_i.pad_left, cfg_i.row_adv,
                         cfg_i.pad_off, cfg_i.cache_base, cfg_i.kw_groups, cfg_i.row_off0,
                         cfg_i.row_off_step, cfg_i.col_off0, cfg_i.col_off_step,
                         cfg_i.param_base, cfg_i.fill, cfg_i.fill_base};
  assign unused_prod  = prod_g[32:24];
  assign unused_nxt   = s5_nxt[AW-1:BankAddrWidth];
  assign unused_dummy = s5_q.dummy;

  // A dummy beat reads no schedule word and has no word inside.
  `STRATA_ASSERT(pb_dummy_outside, clk_i, rst_ni,
                 !s5_v_q || !s5_q.dummy || (!s5_in_cur_q && !s5_in_nxt_q))

`ifndef SYNTHESIS
  initial begin
    assert (CacheAddrWidth <= 16 && ParamIdxWidth <= 16 && BankAddrWidth <= AW)
      else $fatal(1, "strata_packed_beats: address widths exceed the instruction fields");
  end
`endif

endmodule : strata_packed_beats
