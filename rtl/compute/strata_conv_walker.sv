// SPDX-License-Identifier: Apache-2.0
// Address walker (AGU) of the COMPUTE engine: turns one instruction's
// geometry (strata_compute_pkg::walk_cfg_t) into the stream of beats of a
// convolution, one per cycle: for each output pixel (oy, ox) in raster order,
// only the taps inside the image (docs/isa.md, COMPUTE),
//   ky in [max(0, pad_top - oy*stride_h), min(kernel_h, img_h + pad_top - oy*stride_h))
//   kx likewise, and every group g (innermost),
// the bank word base + g*group_step + iy*img_w + ix and the cache word
// cache_base + (ky*kernel_w + kx)*groups + g, with first (the window's first
// beat) and last (its last). FC and POOL arrive as 1x1 convolutions (see
// strata_compute_pkg), so the walker has no mode.
//
// Padding filter (background item 2): padded taps cost no cycle. A window starts at
// its first valid tap (the kernel-address jump: the cache address starts at
// cache_base + ky_lo*kernel_w*groups + kx_lo*groups) and ends at its last
// valid tap (the early window end). No multiplier: every address is a running
// sum; the skipped-tap offsets of the first rows and columns are running
// values (pad - o*stride) * step that are only used while they are positive.
//
// Structure: "next window" registers hold the position of the window after
// the current one (image row / column of its tap (0, 0), the virtual bank
// address of that row, the cache skips); when the current window's last beat
// is taken, the next window's bounds and start addresses are computed from
// them in that cycle and loaded, so consecutive windows follow without a gap.
// Dependencies: before the first beat of each output row, the walker requests
// a step (step_valid_o) from strata_dep_sync; the beat stream waits for it.
// While idle, the next-window registers follow cfg_i (the first window), so
// start_i reaches only the state register.
// Partial sums (cfg_i.fill, the instruction's acc_in): each window begins
// with four fill beats (beat_fill_o) at fill_base, fill_base + 1, ... (one
// running address over the whole walk: the partial sums of pixel i are
// words 4i .. 4i + 3), before its first tap; they carry neither first nor
// last, and the engine reads them from the partial-sum bank. While fill
// beats remain, no advance flag is set, so the window's own walk starts
// unchanged after them.
// Latency: start_i to the first beat_valid_o: 2 cycles. Throughput: one beat
// per cycle while beat_ready_i, including across windows and rows.
// Invariant: for a configuration the decoder accepted, every beat address is
// inside [base, base + groups*img_h*img_w) and every cache address inside the
// instruction's weight range (asserted by the bench, not re-checked here).
`include "strata_assert.svh"

module strata_conv_walker
  import strata_compute_pkg::*;
#(
  parameter int unsigned BankAddrWidth  = $clog2(strata_cfg_pkg::BankDepth),     // bank word bits
  parameter int unsigned CacheAddrWidth = $clog2(strata_cfg_pkg::PeCacheDepth),  // cache word bits
  parameter int unsigned ParamIdxWidth  = $clog2(strata_cfg_pkg::ParamDepth)     // channel bits
) (
  input  logic                      clk_i,          // clock
  input  logic                      rst_ni,         // synchronous reset, active low
  input  logic                      start_i,        // begin a walk (while idle)
  input  walk_cfg_t                 cfg_i,          // geometry, stable while busy
  output logic                      busy_o,         // beats remain
  // dependency steps: one per output row, before its first beat
  output logic                      step_valid_o,   // the next row needs its step
  input  logic                      step_ready_i,   // its units are held
  // beats
  output logic                      beat_valid_o,   // a beat is offered
  input  logic                      beat_ready_i,   // taken
  output logic [BankAddrWidth-1:0]  beat_addr_o,    // bank word
  output logic [CacheAddrWidth-1:0] beat_cache_o,   // cache word
  output logic                      beat_first_o,   // first beat of an output pixel
  output logic                      beat_last_o,    // last beat of an output pixel
  output logic                      beat_fill_o,    // partial-sum beat: 4 per window (acc_in)
  output logic [ParamIdxWidth-1:0]  beat_param_o    // parameter channel of the output row
);

  localparam int unsigned AW = WalkAddrWidth;
  localparam int unsigned PW = 18;  // signed image coordinates (-15 .. 65536)

  typedef logic signed [PW-1:0] pos_t;

  typedef enum logic [1:0] {
    StIdle,
    StPrime,  // load the first window
    StWalk
  } state_e;

  state_e state_d, state_q;
  logic   walking_q;  // state_q == StWalk, a flip-flop of its own (the beat handshake
                      // and its ~200-sink advance enables start at it)

  // ---------------------------------------------------------------- next window
  logic [DimWidth:0] oy_n_d, oy_n_q;        // output row of the next window
  dim_t        ox_n_d, ox_n_q;        // output column
  pos_t        iy0_n_d, iy0_n_q;      // image row of its tap row 0 (oy*stride_h - pad_top)
  pos_t        ix0_n_d, ix0_n_q;      // image column of tap column 0
  walk_addr_t  vrow_n_d, vrow_n_q;    // base + iy0 * img_w (virtual, may be < 0)
  walk_addr_t  nro_n_d, nro_n_q;      // -iy0 * kernel_w * groups (used while iy0 < 0)
  walk_addr_t  nco_n_d, nco_n_q;      // -ix0 * groups (used while ix0 < 0)
  dim_t        ch_n_d, ch_n_q;        // parameter channel of row oy
  // Taps left of the right / bottom edge (img_w - ix0, img_h - iy0), running
  // values beside ix0 and iy0 (asserted equal), so the window bounds compare
  // registers with the kernel size instead of subtracting first.
  pos_t        kx_room_n_d, kx_room_n_q, ky_room_n_d, ky_room_n_q;
  logic        more_n_d, more_n_q;    // the next window exists

  // Bounds and start addresses of the next window (from its registers).
  tap_t        kx_lo_n, ky_lo_n, kx_last_n, ky_last_n;
  walk_addr_t  a_start_n, c_start_n;
  pos_t        kx_room, ky_room;

  always_comb begin
    kx_lo_n = (ix0_n_q < 0) ? WinWidth'(-ix0_n_q) : WinWidth'(0);
    ky_lo_n = (iy0_n_q < 0) ? WinWidth'(-iy0_n_q) : WinWidth'(0);
    kx_room = kx_room_n_q;
    ky_room = ky_room_n_q;
    kx_last_n = (kx_room < pos_t'(cfg_i.kernel_w)) ? WinWidth'(kx_room - pos_t'(1))
                                                   : cfg_i.kernel_w - WinWidth'(1);
    ky_last_n = (ky_room < pos_t'(cfg_i.kernel_h)) ? WinWidth'(ky_room - pos_t'(1))
                                                   : cfg_i.kernel_h - WinWidth'(1);
    a_start_n = ((iy0_n_q < 0) ? AW'(cfg_i.base) : vrow_n_q) +
                ((ix0_n_q < 0) ? '0 : AW'(ix0_n_q));
    c_start_n = AW'(cfg_i.cache_base) + ((iy0_n_q < 0) ? nro_n_q : '0) +
                ((ix0_n_q < 0) ? nco_n_q : '0);
  end

  // ---------------------------------------------------------------- current window
  tap_t        ky_d, ky_q, kx_d, kx_q, kx_lo_d, kx_lo_q, ky_last_d, ky_last_q;
  tap_t        kx_last_d, kx_last_q;
  dim_t        g_d, g_q;
  walk_addr_t  a_row_d, a_row_q;    // bank word of (ky, kx_lo, g = 0)
  walk_addr_t  a_tap_d, a_tap_q;    // bank word of (ky, kx, g = 0)
  walk_addr_t  a_beat_d, a_beat_q;  // bank word of the beat
  walk_addr_t  c_row_d, c_row_q;    // cache word of (ky, kx_lo, g = 0)
  walk_addr_t  c_beat_d, c_beat_q;  // cache word of the beat
  dim_t        ch_d, ch_q;
  logic        first_d, first_q;    // the next beat is the window's first
  logic        row_first_d, row_first_q;  // the window starts an output row
  logic        acq_d, acq_q;        // the row's step has been acquired
  logic        fill_d, fill_q;      // the next beat is a fill beat (acc_in)
  logic [1:0]  fill_k_d, fill_k_q;  // its index in the window's four
  dim_t        fill_addr_d, fill_addr_q;  // its bank word

  logic g_end, kx_end, ky_end, beat_last, fire, load, step_fire;
  // g_q == groups_m1 as a registered flag (exact, asserted): the window's
  // last beat, which loads the next window into some 200 flip-flops, then
  // waits for no 16-bit comparison. Its next value compares g_q with
  // groups_m1 - 1, a register of the configuration (stable during a walk).
  logic        g_end_d, g_end_q;
  dim_t        groups_m2_q;   // groups_m1 - 1
  logic        one_group_q;   // groups_m1 == 0

  // Likewise ox_n_q == cols_m1 (the next window ends its output row) and
  // ox_n_q == 0 (it starts one) are registered flags, so the row-advance
  // enables of the next-window registers wait for no 16-bit comparison.
  logic        ox_last_n_d, ox_last_n_q, ox_first_n_d, ox_first_n_q;
  dim_t        cols_m2_q;     // cols_m1 - 1
  logic        one_col_q;     // cols_m1 == 0

  // img_w + pad_left: the room of a row's first window (a register of the
  // configuration, stable during a walk).
  pos_t kx_room0_q;

  always_ff @(posedge clk_i) begin
    kx_room0_q  <= pos_t'({2'b00, cfg_i.img_w}) + pos_t'(cfg_i.pad_left);
    groups_m2_q <= cfg_i.groups_m1 - DimWidth'(1);
    one_group_q <= cfg_i.groups_m1 == '0;
    cols_m2_q   <= cfg_i.cols_m1 - DimWidth'(1);
    one_col_q   <= cfg_i.cols_m1 == '0;
  end

  // kx_q == kx_last_q and ky_q == ky_last_q likewise (exact while walking,
  // asserted), each loaded with a comparison of the values its tap counter
  // is loaded with: the window's last beat is an AND of three flip-flops.
  logic        kx_end_d, kx_end_q, ky_end_d, ky_end_q;

  assign g_end     = g_end_q;
  assign kx_end    = kx_end_q;
  assign ky_end    = ky_end_q;
  assign beat_last = g_end && kx_end && ky_end;

  // Flags of the next beat as flip-flops loaded from the next values
  // (asserted equal), so that the handshake and the ~200 advance enables
  // after it are one LUT each: free_q, a beat needs no step (walking, and not
  // a row's first window or its step acquired); adv_*_q, what the beat
  // advances (group, tap column, tap row, window: then the next one exists).
  logic free_q, adv_g_q, adv_kx_q, adv_ky_q, adv_win_q, prime_q;
  logic free_d, adv_g_d, adv_kx_d, adv_ky_d, adv_win_d;

  assign step_valid_o = walking_q && row_first_q && !acq_q;
  assign step_fire    = step_valid_o && step_ready_i;
  assign beat_valid_o = free_q || (walking_q && step_ready_i);
  assign fire         = beat_valid_o && beat_ready_i;
  // A window is loaded after the previous one's last beat (or to begin).
  assign load         = prime_q || (fire && adv_win_q);

  always_comb begin
    state_d     = state_q;
    oy_n_d      = oy_n_q;
    ox_n_d      = ox_n_q;
    iy0_n_d     = iy0_n_q;
    ix0_n_d     = ix0_n_q;
    vrow_n_d    = vrow_n_q;
    nro_n_d     = nro_n_q;
    nco_n_d     = nco_n_q;
    ch_n_d      = ch_n_q;
    kx_room_n_d = kx_room_n_q;
    ky_room_n_d = ky_room_n_q;
    more_n_d    = more_n_q;
    ox_first_n_d = ox_first_n_q;
    ox_last_n_d  = ox_last_n_q;
    ky_d        = ky_q;
    kx_d        = kx_q;
    kx_lo_d     = kx_lo_q;
    ky_last_d   = ky_last_q;
    kx_last_d   = kx_last_q;
    g_d         = g_q;
    a_row_d     = a_row_q;
    a_tap_d     = a_tap_q;
    a_beat_d    = a_beat_q;
    c_row_d     = c_row_q;
    c_beat_d    = c_beat_q;
    ch_d        = ch_q;
    first_d     = first_q;
    row_first_d = row_first_q;
    acq_d       = acq_q || step_fire;
    fill_d      = fill_q;
    fill_k_d    = fill_k_q;
    fill_addr_d = fill_addr_q;
    g_end_d     = g_end_q;
    kx_end_d    = kx_end_q;
    ky_end_d    = ky_end_q;

    // A fill beat advances only the fill counters; the window's beats
    // follow the fourth.
    if (fire && fill_q) begin
      fill_k_d    = fill_k_q + 2'd1;
      fill_addr_d = fill_addr_q + DimWidth'(1);
      if (fill_k_q == 2'd3) fill_d = 1'b0;
    end

    // Beat advance within the window: g innermost, then kx, then ky.
    if (fire && !fill_q) begin
      first_d = 1'b0;
      if (adv_g_q) begin
        g_d      = g_q + DimWidth'(1);
        g_end_d  = g_q == groups_m2_q;
        a_beat_d = a_beat_q + AW'(cfg_i.group_step);
        c_beat_d = c_beat_q + AW'(1);
      end else if (adv_kx_q) begin
        g_d      = '0;
        g_end_d  = one_group_q;
        kx_d     = kx_q + WinWidth'(1);
        kx_end_d = kx_q + WinWidth'(1) == kx_last_q;
        a_tap_d  = a_tap_q + AW'(1);
        a_beat_d = a_tap_q + AW'(1);
        c_beat_d = c_beat_q + AW'(1);   // taps of a row are contiguous in the cache
      end else if (adv_ky_q) begin
        g_d      = '0;
        g_end_d  = one_group_q;
        kx_d     = kx_lo_q;
        kx_end_d = kx_lo_q == kx_last_q;
        ky_d     = ky_q + WinWidth'(1);
        ky_end_d = ky_q + WinWidth'(1) == ky_last_q;
        a_row_d  = a_row_q + AW'(cfg_i.img_w);
        a_tap_d  = a_row_q + AW'(cfg_i.img_w);
        a_beat_d = a_row_q + AW'(cfg_i.img_w);
        c_row_d  = c_row_q + AW'(cfg_i.kw_groups);
        c_beat_d = c_row_q + AW'(cfg_i.kw_groups);
      end else if (!more_n_q) begin
        state_d = StIdle;
      end
    end

    // Load the next window and advance the next-window position.
    if (load) begin
      state_d     = StWalk;
      ky_d        = ky_lo_n;
      kx_d        = kx_lo_n;
      kx_lo_d     = kx_lo_n;
      ky_last_d   = ky_last_n;
      kx_last_d   = kx_last_n;
      kx_end_d    = kx_lo_n == kx_last_n;
      ky_end_d    = ky_lo_n == ky_last_n;
      g_d         = '0;
      g_end_d     = one_group_q;
      a_row_d     = a_start_n;
      a_tap_d     = a_start_n;
      a_beat_d    = a_start_n;
      c_row_d     = c_start_n;
      c_beat_d    = c_start_n;
      ch_d        = ch_n_q;
      first_d     = 1'b1;
      fill_d      = cfg_i.fill;
      fill_k_d    = '0;
      row_first_d = ox_first_n_q;
      if (ox_first_n_q) acq_d = 1'b0;
      ox_first_n_d = ox_last_n_q;
      if (ox_last_n_q) begin
        more_n_d    = oy_n_q != cfg_i.rows_m1;
        ox_last_n_d = one_col_q;
        ox_n_d      = '0;
        ix0_n_d     = -pos_t'(cfg_i.pad_left);
        kx_room_n_d = kx_room0_q;
        nco_n_d     = AW'(cfg_i.col_off0);
        oy_n_d      = oy_n_q + (DimWidth + 1)'(1);
        iy0_n_d     = iy0_n_q + pos_t'(cfg_i.stride_h);
        ky_room_n_d = ky_room_n_q - pos_t'(cfg_i.stride_h);
        vrow_n_d    = vrow_n_q + AW'(cfg_i.row_adv);
        nro_n_d     = nro_n_q - AW'(cfg_i.row_off_step);
        ch_n_d      = ch_n_q + DimWidth'(1);
      end else begin
        ox_last_n_d = ox_n_q == cols_m2_q;
        ox_n_d      = ox_n_q + DimWidth'(1);
        ix0_n_d     = ix0_n_q + pos_t'(cfg_i.stride_w);
        kx_room_n_d = kx_room_n_q - pos_t'(cfg_i.stride_w);
        nco_n_d     = nco_n_q - AW'(cfg_i.col_off_step);
      end
    end

    // While idle, the next-window registers load the first window of the
    // configuration every cycle (on the start's edge too, as a load at the
    // start would), so a start only moves the state: it reaches no register
    // but the state's, and the flags below do not depend on it.
    if (state_q == StIdle) begin
      oy_n_d   = '0;
      ox_n_d   = '0;
      ox_first_n_d = 1'b1;
      ox_last_n_d  = cfg_i.cols_m1 == '0;
      iy0_n_d  = -pos_t'(cfg_i.pad_top);
      ix0_n_d  = -pos_t'(cfg_i.pad_left);
      ky_room_n_d = pos_t'({1'b0, cfg_i.img_h}) + pos_t'(cfg_i.pad_top);
      kx_room_n_d = pos_t'({2'b00, cfg_i.img_w}) + pos_t'(cfg_i.pad_left);
      vrow_n_d = AW'(cfg_i.base) - AW'(cfg_i.pad_off);
      nro_n_d  = AW'(cfg_i.row_off0);
      nco_n_d  = AW'(cfg_i.col_off0);
      ch_n_d   = cfg_i.param_base;
      more_n_d = 1'b1;
      fill_addr_d = cfg_i.fill_base;
    end

    free_d    = state_d == StWalk && (!row_first_d || acq_d);
    adv_g_d   = !fill_d && !g_end_d;
    adv_kx_d  = !fill_d && g_end_d && !kx_end_d;
    adv_ky_d  = !fill_d && g_end_d && kx_end_d && !ky_end_d;
    adv_win_d = !fill_d && g_end_d && kx_end_d && ky_end_d && more_n_d;

    if (start_i && state_q == StIdle) state_d = StPrime;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q   <= StIdle;
      walking_q <= 1'b0;
      acq_q     <= 1'b0;
      free_q    <= 1'b0;
      prime_q   <= 1'b0;
      fill_q    <= 1'b0;
    end else begin
      state_q   <= state_d;
      walking_q <= state_d == StWalk;
      acq_q     <= acq_d;
      free_q    <= free_d;
      prime_q   <= state_d == StPrime;
      fill_q    <= fill_d;
    end
  end

  // Counters and addresses: qualified by the state.
  always_ff @(posedge clk_i) begin
    oy_n_q      <= oy_n_d;
    ox_n_q      <= ox_n_d;
    iy0_n_q     <= iy0_n_d;
    ix0_n_q     <= ix0_n_d;
    vrow_n_q    <= vrow_n_d;
    nro_n_q     <= nro_n_d;
    nco_n_q     <= nco_n_d;
    ch_n_q      <= ch_n_d;
    kx_room_n_q <= kx_room_n_d;
    ky_room_n_q <= ky_room_n_d;
    more_n_q    <= more_n_d;
    ox_first_n_q <= ox_first_n_d;
    ox_last_n_q  <= ox_last_n_d;
    ky_q        <= ky_d;
    kx_q        <= kx_d;
    kx_lo_q     <= kx_lo_d;
    ky_last_q   <= ky_last_d;
    kx_last_q   <= kx_last_d;
    g_q         <= g_d;
    g_end_q     <= g_end_d;
    adv_g_q     <= adv_g_d;
    adv_kx_q    <= adv_kx_d;
    adv_ky_q    <= adv_ky_d;
    adv_win_q   <= adv_win_d;
    kx_end_q    <= kx_end_d;
    ky_end_q    <= ky_end_d;
    a_row_q     <= a_row_d;
    a_tap_q     <= a_tap_d;
    a_beat_q    <= a_beat_d;
    c_row_q     <= c_row_d;
    c_beat_q    <= c_beat_d;
    ch_q        <= ch_d;
    first_q     <= first_d;
    row_first_q <= row_first_d;
    fill_k_q    <= fill_k_d;
    fill_addr_q <= fill_addr_d;
  end

  assign busy_o       = state_q != StIdle;
  assign beat_addr_o  = fill_q ? BankAddrWidth'(fill_addr_q) : BankAddrWidth'(a_beat_q);
  assign beat_cache_o = CacheAddrWidth'(c_beat_q);
  assign beat_first_o = first_q && !fill_q;
  assign beat_last_o  = beat_last && !fill_q;
  assign beat_fill_o  = fill_q;
  assign beat_param_o = ParamIdxWidth'(ch_q);

  `STRATA_ASSERT(walker_walking, clk_i, rst_ni, walking_q == (state_q == StWalk))
  `STRATA_ASSERT(walker_flags, clk_i, rst_ni,
                 free_q == (walking_q && (!row_first_q || acq_q)) &&
                 prime_q == (state_q == StPrime) &&
                 (!walking_q || (adv_g_q == (!fill_q && !g_end) &&
                                 adv_kx_q == (!fill_q && g_end && !kx_end) &&
                                 adv_ky_q == (!fill_q && g_end && kx_end && !ky_end) &&
                                 adv_win_q == (!fill_q && beat_last && more_n_q))))
  `STRATA_ASSERT(walker_fill_only_acc_in, clk_i, rst_ni, !fill_q || cfg_i.fill)
  `STRATA_ASSERT(walker_rooms, clk_i, rst_ni, state_q == StIdle ||
                 (kx_room_n_q == pos_t'({2'b00, cfg_i.img_w}) - ix0_n_q &&
                  ky_room_n_q == pos_t'({1'b0, cfg_i.img_h}) - iy0_n_q))
  `STRATA_ASSERT(walker_tap_ends, clk_i, rst_ni, !walking_q ||
                 (kx_end_q == (kx_q == kx_last_q) && ky_end_q == (ky_q == ky_last_q)))
  `STRATA_ASSERT_STREAM(walker_beat, clk_i, rst_ni, beat_valid_o, beat_ready_i,
                        {beat_addr_o, beat_cache_o, beat_first_o, beat_last_o, beat_fill_o,
                         beat_param_o})
  // A walked tap is inside the image: the bank address is not negative.
  `STRATA_ASSERT(walker_addr_positive, clk_i, rst_ni, !beat_valid_o || fill_q || a_beat_q >= 0)
  `STRATA_ASSERT(walker_start_idle, clk_i, rst_ni, !start_i || state_q == StIdle)
  // The next-window registers hold the first window when it is loaded.
  `STRATA_ASSERT(walker_first_window, clk_i, rst_ni, !prime_q ||
                 (oy_n_q == '0 && ox_n_q == '0 && ox_first_n_q && more_n_q &&
                  ox_last_n_q == (cfg_i.cols_m1 == '0) &&
                  iy0_n_q == -pos_t'(cfg_i.pad_top) && ix0_n_q == -pos_t'(cfg_i.pad_left) &&
                  ky_room_n_q == pos_t'({1'b0, cfg_i.img_h}) + pos_t'(cfg_i.pad_top) &&
                  kx_room_n_q == pos_t'({2'b00, cfg_i.img_w}) + pos_t'(cfg_i.pad_left) &&
                  vrow_n_q == AW'(cfg_i.base) - AW'(cfg_i.pad_off) &&
                  nro_n_q == AW'(cfg_i.row_off0) && nco_n_q == AW'(cfg_i.col_off0) &&
                  ch_n_q == cfg_i.param_base))
  // The registered group-end flag and its configuration registers are exact
  // whenever a beat can be taken (cfg_i is stable from before start_i).
  `STRATA_ASSERT(walker_g_end, clk_i, rst_ni,
                 state_q != StWalk || g_end_q == (g_q == cfg_i.groups_m1))
  `STRATA_ASSERT(walker_groups_regs, clk_i, rst_ni, state_q == StIdle ||
                 (groups_m2_q == cfg_i.groups_m1 - DimWidth'(1) &&
                  one_group_q == (cfg_i.groups_m1 == '0) &&
                  cols_m2_q == cfg_i.cols_m1 - DimWidth'(1) && one_col_q == (cfg_i.cols_m1 == '0)))
  `STRATA_ASSERT(walker_ox_flags, clk_i, rst_ni, state_q == StIdle ||
                 (ox_last_n_q == (ox_n_q == cfg_i.cols_m1) && ox_first_n_q == (ox_n_q == '0)))

`ifndef SYNTHESIS
  initial begin
    assert (BankAddrWidth <= 16 && CacheAddrWidth <= 16 && ParamIdxWidth <= 16)
      else $fatal(1, "strata_conv_walker: address widths exceed the instruction fields");
  end
`endif

endmodule : strata_conv_walker
