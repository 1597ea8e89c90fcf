// SPDX-License-Identifier: Apache-2.0
// Address walker of a packed CONV (sparse builds; docs/isa.md, "Packed CONV",
// docs/sparsity.md): turns one instruction's geometry (walk_cfg_t) and its
// packed-row schedule into the stream of beats of the packed walk, exactly as
// strata::IsaSim's execute_packed_conv. For each output pixel (oy, ox) in
// raster order, each packed row k < R (R = rows_i) whose schedule entry names
// the tap and group (ky, kx, g) of its first dense row t = (ky*kernel_w +
// kx)*G + g reads two bank words, "cur" (ky, kx, g) and "next" (dense row
// t + 1: the next group, else the next tap; none past the last dense row),
// each at base + g*group_step + (iy0 + ky)*img_w + ix0 + kx and inside when its
// tap is inside the image. A row whose two words are both outside is skipped
// (no beat); a pixel whose rows are all skipped takes one beat with both words
// outside at cache_base. A beat carries both addresses (base for a word
// outside), the two inside flags, the cache word cache_base + k, first / last
// (of the pixel) and the parameter channel param_base + oy. Dependency steps
// as strata_conv_walker: step_valid_o before the first beat of each output
// row, and that beat waits for the step; the first row's step is acquired
// right after start_i, before the schedule is read, since the loads it waits
// for include the schedule's.
//
// The schedule memory (CacheDepth words of {kx, ky, g}: g bits 15:0, ky
// 19:16, kx 23:20, row k at cache_base + k) is written through sched_we_i at
// any time except to the rows of a running walk (the next pass's schedule
// loads while this one runs; the dependency rules keep it off these rows).
//
// Structure:
//   scan: the R entries are read once (R + 5 cycles). Each is checked (inside
//     the kernel and groups, dense rows strictly increasing: {ky, kx, g} as one
//     number grows) and builds the tap table, indexed by the tap's slot
//     J = ky*MaxKernel + kx on a MaxKernel-wide grid (slot MaxKernel^2 ends it):
//     fk[J] = cache_base + the first row whose tap is at or after slot J, and
//     ph[J] = the row before it is the last group of the dense tap just before
//     J (its next word is J's group 0). Since the rows are in dense order,
//     the rows a pixel visits are, for each valid kernel row ky (bounds as
//     the dense walker's), the range [fk[ky*M + kx_lo] - ph[..], fk[ky*M +
//     kx_last + 1]), less the one row it may share with the range before.
//   producer: one kernel row of one pixel per cycle through a 4-stage
//     pipeline (two table reads, the range start, empty test) into a record
//     FIFO: a range of rows, an empty range, or the beat of an all-skipped
//     pixel.
//   issue: one row of the current record per cycle (an empty record takes
//     one cycle: the bubble). A beat's last flag is the next beat's first
//     flag, so each beat leaves the issue stage when the next one is issued
//     (or at the end of the walk).
//   beat pipeline (5 stages, no stall): the schedule read, the entry's inside
//     flags, g*group_step and ky*img_w on two registered DSP multipliers,
//     then two adder stages; a credit FIFO (strata_credit_fifo) at its end
//     holds a slot for every beat in flight, so beat_ready_i reaches no
//     pipeline register.
// Latency: start_i to the first beat R + 20 cycles (the first step 1 when it
// is granted at once, scan R + 5, producer 6, issue stage 2, pipeline 6) when the
// walk's second beat follows its first.
// Throughput: one beat per cycle while beat_ready_i; skipped rows cost
// nothing; a valid kernel row of a pixel none of whose packed rows is visited
// (an empty range) costs one cycle, except the one that carries an
// all-skipped pixel's beat. So with no back-pressure the cycles from the
// first beat to the last are the beats plus the empty ranges issued after the
// walk's second beat (the bench checks this count).
// Errors: err_o rises (and busy_o falls, no beat) when an entry lies outside
// the kernel or the groups, the dense rows do not strictly increase, R = 0,
// the rows pass the end of the memory, or the kernel exceeds MaxKernel; it
// stays until the next start_i.
// Timing: every stage ends at a register; the table reads are multiplexers
// of registers; the issue stage advances on an AND of flip-flops (the beat
// FIFO's credit, a record held) and the producer on its record FIFO's credit;
// the beat handshake starts at the beat FIFO's head register (its step flag
// and valid) as in strata_conv_walker.
// Invariants (asserted): every beat has a word inside unless it is its
// pixel's only beat; the producer is never behind the issue stage (only the
// walk's first record is waited for); the range, flag and pixel registers
// are exact.
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

  localparam int unsigned AW    = WalkAddrWidth;
  localparam int unsigned PW    = 18;                           // signed image coordinates
  localparam int unsigned M     = MaxKernel;
  localparam int unsigned Slots = M * M + 1;                    // tap table entries
  localparam int unsigned JW    = 8;                            // slot arithmetic (M <= 15)
  localparam int unsigned JIW   = $clog2(Slots);                // table index
  localparam int unsigned KW    = $clog2(CacheDepth + 1);       // cache word, end included
  localparam int unsigned RecDepth  = 6;                        // producer latency 4 + 2
  localparam int unsigned BeatDepth = 7;                        // beat pipeline latency 5 + 2

  typedef logic signed [PW-1:0] pos_t;
  typedef logic [KW-1:0]        caddr_t;
  typedef logic [JW-1:0]        slot_t;
  typedef logic [JIW-1:0]       tidx_t;

  // ky * M, the tap table slot of kernel row ky, as a 16-entry constant table
  // (one LUT per bit) rather than a multiply that synthesis would give a DSP.
  function automatic slot_t row_slot(tap_t ky);
    slot_t s = '0;
    for (int k = 0; k < 16; k++) begin
      if (ky == WinWidth'(k)) s = slot_t'(k * M);
    end
    return s;
  endfunction

  // Pixel context, carried with every kernel row, record and beat.
  typedef struct packed {
    walk_addr_t  pbase;      // base + iy0*img_w + ix0 (virtual: tap (0, 0), group 0)
    tap_t        ky_lo;      // valid kernel rows [ky_lo, ky_last]
    tap_t        ky_last;
    tap_t        kx_lo;      // valid kernel columns [kx_lo, kx_last]
    tap_t        kx_last;
    dim_t        ch;         // parameter channel
    logic        row_first;  // the pixel starts an output row
  } px_t;

  typedef enum logic [1:0] {
    RecRange,  // rows [start, hi)
    RecEmpty,  // no row: one cycle
    RecDummy   // the beat of an all-skipped pixel
  } rec_kind_e;

  typedef struct packed {
    rec_kind_e kind;
    logic      first;    // the record's first beat is the pixel's first
    logic      walk_last;   // the walk's last record
    logic      single;   // start + 1 == hi
    caddr_t    start;    // cache word of the first row (RecDummy: cache_base)
    caddr_t    hi;       // cache word after the last row
    px_t       px;
  } rec_t;

  // A beat as the issue stage sends it into the beat pipeline.
  typedef struct packed {
    caddr_t c;           // cache word
    logic   dummy;       // all-skipped pixel: no schedule read, both words outside
    logic   first;
    logic   last;
    logic   step;        // first beat of an output row: waits for the step
    logic   walk_last;      // the walk's last beat
    px_t    px;
  } send_t;

  // A beat as it leaves (the output ports, and two flags of its own).
  typedef struct packed {
    logic [BankAddrWidth-1:0]  a_nxt;      // bank word of the next dense row (base: outside)
    logic [BankAddrWidth-1:0]  a_cur;      // bank word of the row's first dense row
    logic [1:0]                in;         // {next, cur} inside the image
    logic [CacheAddrWidth-1:0] cache;
    logic                      first;
    logic                      last;
    logic                      step;       // waits for the output row's step
    logic                      walk_last;  // the walk's last beat: the walker goes idle
    logic [ParamIdxWidth-1:0]  param;
  } beat_t;

  typedef enum logic [1:0] {
    StIdle,
    StStep,   // acquiring the first output row's step: the schedule is read after it
    StScan,   // reading the schedule (and draining the scan pipeline)
    StWalk
  } state_e;

  state_e state_d, state_q;
  logic   err_d, err_q;

  // ---------------------------------------------------------------- schedule memory
  logic                      sched_re;
  logic [SchedAddrWidth-1:0] sched_raddr;
  logic [23:0]               sched_rdata;

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

  // ---------------------------------------------------------------- configuration
  // Registers of the configuration, loaded while idle (cfg_i and rows_i are
  // stable from the start on), so the scan and walk compare registers.
  logic   cfg_bad_d, cfg_bad_q;    // R = 0, rows past the memory, or a kernel the table
                                   // cannot hold
  caddr_t rows_end_d, rows_end_q;  // cache_base + R
  logic [DimWidth:0] end_now;

  always_comb begin
    end_now    = (DimWidth + 1)'(cfg_i.cache_base) + (DimWidth + 1)'(rows_i);
    rows_end_d = KW'(end_now);
    cfg_bad_d  = rows_i == '0 || 32'(end_now) > CacheDepth ||
                 cfg_i.kernel_h == '0 || 32'(cfg_i.kernel_h) > M ||
                 cfg_i.kernel_w == '0 || 32'(cfg_i.kernel_w) > M;
  end

  always_ff @(posedge clk_i) begin
    if (state_q == StIdle) begin
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

  assign scan_read = state_q == StScan && reading_q;

  always_comb begin
    sc1_v_d     = scan_read && !cfg_bad_q;
    tail_d      = sc3_v_q && sc3_last_q;
    has_prev2_d = state_q != StIdle && (has_prev2_q || sc2_v_q);
    has_prev3_d = state_q != StIdle && (has_prev3_q || sc3_v_q);
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
    if (state_q == StIdle) begin
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
    {sc2_kx_q, sc2_ky_q, sc2_g_q} <= sched_rdata;
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

  // Tap table: follows "no row" (cache_base + R) while idle; stage 3 writes
  // every slot in (the entry before's slot, the entry's slot], and the tail
  // cycle after the last entry the ph flags of the slots after it (the last
  // row's next word may be their tap's).
  caddr_t fk_q [Slots];
  logic   ph_q [Slots];

  for (genvar j = 0; j < Slots; j++) begin : g_slot
    logic   upd, upd_tail, fk_en, ph_en, ph_d;
    caddr_t fk_d;
    if (j == 0) begin : g_first
      assign upd      = sc3_v_q && !has_prev3_q;
      assign upd_tail = 1'b0;
    end else begin : g_other
      assign upd      = sc3_v_q && (!has_prev3_q || prev_j_q < slot_t'(j)) &&
                        slot_t'(j) <= sc3_j_q;
      assign upd_tail = tail_q && prev_j_q < slot_t'(j);
    end
    always_comb begin
      fk_en = state_q == StIdle || upd;
      ph_en = state_q == StIdle || upd || upd_tail;
      fk_d  = (state_q == StIdle) ? rows_end_d : sc3_a_q;
      ph_d  = state_q != StIdle && (upd ? has_prev3_q : 1'b1) && prev_glast_q &&
              prev_nj_q == slot_t'(j);
    end
    always_ff @(posedge clk_i) begin
      if (fk_en) fk_q[j] <= fk_d;
      if (ph_en) ph_q[j] <= ph_d;
    end
  end

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
  logic        more_n_d, more_n_q;      // the next pixel exists
  px_t         px_n;                    // its context

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

  // ---------------------------------------------------------------- producer
  // Stage 0: the current pixel and kernel row (one per cycle).
  logic        p_prime_q;               // load the first pixel
  logic        pv_d, pv_q;              // a pixel is being itemised
  px_t         px_d, px_q;
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
    more_n_d     = more_n_q;
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
        more_n_d    = oy_n_q != cfg_i.rows_m1;
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

    if (state_q != StWalk) begin
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
      more_n_d     = 1'b1;
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
    more_n_q     <= more_n_d;
    px_q         <= px_d;
    ky_q         <= ky_d;
    jrow_q       <= jrow_d;
    fky_q        <= fky_d;
    lky_q        <= lky_d;
    pfin_q       <= pfin_d;
  end

  // Stages 1..4: table reads, range start, empty test, record.
  logic   q1_v_q, q2_v_q, q3_v_q, q4_v_q;
  px_t    q1_px_q, q2_px_q, q3_px_q, q4_px_q;
  logic   q1_f_q, q2_f_q, q3_f_q;       // first kernel row of the pixel
  logic   q1_l_q, q2_l_q, q3_l_q;       // last kernel row of the pixel
  logic   q1_fin_q, q2_fin_q, q3_fin_q, q4_fin_q;
  tidx_t  q1_jlo_q, q1_jhi_q;           // table slots of [kx_lo, kx_last + 1)
  caddr_t q2_fklo_q, q2_hi_q;
  logic   q2_ph_q;
  caddr_t q3_lo_q, q3_hi_q;
  caddr_t prev_end_q;                   // stage 3: hi of the kernel row before
  logic   seen_q;                       // stage 3: the pixel had a non-empty range
  rec_kind_e q4_kind_q;
  logic   q4_first_q;
  caddr_t q4_start_q, q4_hi_q;

  logic   q3_seen_before, q3_nonempty, q3_seen, q3_first;
  caddr_t q3_start;
  rec_kind_e q3_kind;
  rec_t   rec_push, rec_head;
  logic   rec_valid, rec_pop;
  logic   q1_fin_d, q2_ph_d, p_prime_d;
  tidx_t  q1_jlo_d, q1_jhi_d;
  caddr_t q2_fklo_d, q2_hi_d, q3_lo_d;

  always_comb begin
    p_prime_d = state_q == StScan && state_d == StWalk;
    // Stage 0 -> 1: the table slots of the kernel row's valid columns.
    q1_fin_d  = lky_q && pfin_q;
    q1_jlo_d  = tidx_t'(jrow_q + slot_t'(px_q.kx_lo));
    q1_jhi_d  = tidx_t'(jrow_q + slot_t'(px_q.kx_last) + slot_t'(1));
    // Stage 1 -> 2: the table reads.
    q2_fklo_d = fk_q[q1_jlo_q];
    q2_ph_d   = ph_q[q1_jlo_q];
    q2_hi_d   = fk_q[q1_jhi_q];
    // Stage 2 -> 3: the range's first row (the row before counts when it
    // reads the range's first word as its next).
    q3_lo_d   = q2_fklo_q - caddr_t'(q2_ph_q);
    // Stage 3 -> 4: less the row shared with the kernel row before; empty?
    q3_seen_before = !q3_f_q && seen_q;
    // start = max(lo, prev_end) < hi, as two comparisons side by side.
    q3_nonempty = q3_lo_q < q3_hi_q && (q3_f_q || prev_end_q < q3_hi_q);
    q3_seen     = q3_seen_before || q3_nonempty;
    if (q3_nonempty)                       q3_kind = RecRange;
    else if (q3_l_q && !q3_seen_before)    q3_kind = RecDummy;
    else                                   q3_kind = RecEmpty;
    q3_first = q3_kind != RecEmpty && !q3_seen_before;
    if (q3_kind == RecDummy)                    q3_start = caddr_t'(cfg_i.cache_base);
    else if (q3_f_q || q3_lo_q >= prev_end_q)   q3_start = q3_lo_q;
    else                                        q3_start = prev_end_q;
    rec_push.kind   = q4_kind_q;
    rec_push.first  = q4_first_q;
    rec_push.walk_last = q4_fin_q;
    rec_push.single = q4_start_q + caddr_t'(1) == q4_hi_q;
    rec_push.start  = q4_start_q;
    rec_push.hi     = q4_hi_q;
    rec_push.px     = q4_px_q;
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
      state_q   <= StIdle;
      err_q     <= 1'b0;
      p_prime_q <= 1'b0;
      pv_q      <= 1'b0;
      q1_v_q    <= 1'b0;
      q2_v_q    <= 1'b0;
      q3_v_q    <= 1'b0;
      q4_v_q    <= 1'b0;
    end else begin
      state_q   <= state_d;
      err_q     <= err_d;
      p_prime_q <= p_prime_d;
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
    .out_valid_o (rec_valid),
    .out_ready_i (rec_pop),
    .out_data_o  (rec_head)
  );

  // ---------------------------------------------------------------- issue
  logic      cur_v_d, cur_v_q;      // a record is being issued
  rec_kind_e kind_d, kind_q;
  caddr_t    c_d, c_q;              // its row's cache word
  caddr_t    hi_d, hi_q;
  logic      end_d, end_q;          // c_q + 1 == hi_q: the record's last row
  logic      first_d, first_q;      // the next beat is the pixel's first
  logic      fin_d, fin_q;          // the record is the walk's last
  px_t       ipx_d, ipx_q;
  logic      endp_d, endp_q;        // the walk's records are done: send the held beat
  logic      hold_v_d, hold_v_q;    // a beat is held until its successor is issued
  send_t     hold_d, hold_q;
  logic      bcredit, adv, new_beat, rec_done, send;
  send_t     send_data;

  always_comb begin
    adv      = bcredit && (cur_v_q || endp_q);
    new_beat = adv && cur_v_q && kind_q != RecEmpty;
    rec_done = adv && cur_v_q && (kind_q != RecRange || end_q);
    send     = adv && hold_v_q && (new_beat || endp_q);
    send_data        = hold_q;
    send_data.last   = endp_q || first_q;
    send_data.walk_last = endp_q;

    cur_v_d  = cur_v_q;
    kind_d   = kind_q;
    c_d      = c_q;
    hi_d     = hi_q;
    end_d    = end_q;
    first_d  = first_q;
    fin_d    = fin_q;
    ipx_d    = ipx_q;
    endp_d   = endp_q;
    hold_v_d = hold_v_q;
    hold_d   = hold_q;
    rec_pop  = 1'b0;

    if (new_beat) begin
      hold_v_d     = 1'b1;
      hold_d.c     = c_q;
      hold_d.dummy = kind_q == RecDummy;
      hold_d.first = first_q;
      hold_d.last  = 1'b0;
      hold_d.step  = first_q && ipx_q.row_first;
      hold_d.walk_last = 1'b0;
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
    if (((!cur_v_q && !endp_q) || (rec_done && !fin_q)) && rec_valid && state_q == StWalk) begin
      rec_pop = 1'b1;
      cur_v_d = 1'b1;
      kind_d  = rec_head.kind;
      c_d     = rec_head.start;
      hi_d    = rec_head.hi;
      end_d   = rec_head.single;
      first_d = rec_head.first;
      fin_d   = rec_head.walk_last;
      ipx_d   = rec_head.px;
    end
    if (state_q != StWalk) begin
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

  // ---------------------------------------------------------------- beat pipeline
  // Stage 1: the schedule word of the row arrives; the DSPs take g and ky.
  // Stage 2: the entry's inside flags (parts) and the pixel sums.
  // Stage 3: the products; the flags; g*group_step + pbase + kx.
  // Stage 4: + ky*img_w (cur, and next when the next word is another tap).
  // Stage 5: next = cur + group_step when it is the next group; push.
  logic       s1_v_q, s2_v_q, s3_v_q, s4_v_q, s5_v_q;
  send_t      s1_q, s2_q, s3_q, s4_q, s5_q;
  tap_t       s2_ky_q, s2_kx_q;
  dim_t        s2_g_q;
  logic       s3_ky_in_q, s3_kx_in_q, s3_ky1_in_q, s3_kx1_in_q;
  logic       s3_ng_q, s3_nkx_q, s3_nky_q;
  walk_addr_t s3_pbk_q, s3_pbk1_q, s3_pbw_q;
  logic       s4_in_cur_q, s4_in_nxt_q, s4_ng_q;
  walk_addr_t s4_t1_q, s4_t2_q, s4_u_q;
  logic       s5_in_cur_q, s5_in_nxt_q, s5_ng_q;
  walk_addr_t s5_cur_q, s5_nb_q;
  logic [32:0] prod_g;   // g * group_step
  logic [19:0] prod_ky;  // ky * img_w

  strata_dsp_mul #(
    .AWidth  (16),
    .BWidth  (17),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_mul_g (
    .clk_i    (clk_i),
    .ce_in_i  (1'b1),
    .ce_out_i (1'b1),
    .a_i      (sched_rdata[15:0]),
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
    .a_i      (sched_rdata[19:16]),
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
    beat_push.a_cur  = s5_in_cur_q ? BankAddrWidth'(s5_cur_q) : BankAddrWidth'(cfg_i.base);
    beat_push.a_nxt  = s5_in_nxt_q ? BankAddrWidth'(s5_nxt) : BankAddrWidth'(cfg_i.base);
    beat_push.in     = {s5_in_nxt_q, s5_in_cur_q};
    beat_push.cache  = CacheAddrWidth'(s5_q.c);
    beat_push.first  = s5_q.first;
    beat_push.last   = s5_q.last;
    beat_push.step   = s5_q.step;
    beat_push.walk_last = s5_q.walk_last;
    beat_push.param  = ParamIdxWidth'(s5_q.px.ch);
  end

  always_ff @(posedge clk_i) begin
    s1_q <= send_data;
    s2_q <= s1_q;
    {s2_kx_q, s2_ky_q, s2_g_q} <= sched_rdata;
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
      s1_v_q <= send;
      s2_v_q <= s1_v_q;
      s3_v_q <= s2_v_q;
      s4_v_q <= s3_v_q;
      s5_v_q <= s4_v_q;
    end
  end

  // The schedule is read by the scan, then by the beats (the address is a
  // register either way).
  assign sched_re    = scan_read ? !cfg_bad_q : send && !hold_q.dummy;
  assign sched_raddr = scan_read ? SchedAddrWidth'(sa_q) : SchedAddrWidth'(hold_q.c);

  // ---------------------------------------------------------------- output
  logic beat_valid, out_ready, fire, step_fire, acq_d, acq_q;

  // OutReg: every beat output and the handshake's step flag leave flip-flops.
  strata_credit_fifo #(
    .T      (beat_t),
    .Depth  (BeatDepth),
    .OutReg (1'b1)
  ) u_beat_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (bcredit),
    .reserve_i   (send),
    .push_i      (s5_v_q),
    .push_data_i (beat_push),
    .out_valid_o (beat_valid),
    .out_ready_i (out_ready),
    .out_data_o  (beat_head)
  );

  // The first row's step is acquired before the scan (StStep): the units it
  // waits for include the LOAD CONTROL that writes the schedule. Its first
  // beat then finds acq_q set.
  assign step_valid_o = state_q == StStep || (beat_valid && beat_head.step && !acq_q);
  assign step_fire    = step_valid_o && step_ready_i;
  assign beat_valid_o = beat_valid && (!beat_head.step || acq_q || step_ready_i);
  assign out_ready    = beat_ready_i && (!beat_head.step || acq_q || step_ready_i);
  assign fire         = beat_valid_o && beat_ready_i;
  assign acq_d        = (acq_q || step_fire) && !(fire && beat_head.step);

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
        if (cfg_bad_q) begin
          state_d = StIdle;
          err_d   = 1'b1;
        end else if (tail_q) begin
          state_d = bad_acc_q ? StIdle : StWalk;
          err_d   = bad_acc_q;
        end
      end
      StWalk: begin
        if (fire && beat_head.walk_last) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  // Fields a packed walk does not use (the dense walk's cache skips and
  // partial-sum beats: the decoder refuses acc_in on a packed CONV), the
  // high product bits (zero for a legal instruction) and a flag used before
  // the last stage.
  logic [113:0] unused_cfg;
  logic [8:0]  unused_prod;
  logic [AW-BankAddrWidth-1:0] unused_nxt;
  logic        unused_dummy;
  assign unused_cfg   = {cfg_i.kw_groups, cfg_i.row_off0, cfg_i.row_off_step, cfg_i.col_off0,
                         cfg_i.col_off_step, cfg_i.fill, cfg_i.fill_base};
  assign unused_prod  = prod_g[32:24];
  assign unused_nxt   = s5_nxt[AW-1:BankAddrWidth];
  assign unused_dummy = s5_q.dummy;

  assign busy_o       = state_q != StIdle;
  assign err_o        = err_q;
  assign beat_addr_o  = {beat_head.a_nxt, beat_head.a_cur};
  assign beat_in_o    = beat_head.in;
  assign beat_cache_o = beat_head.cache;
  assign beat_first_o = beat_head.first;
  assign beat_last_o  = beat_head.last;
  assign beat_param_o = beat_head.param;

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
  `STRATA_ASSERT(pw_start_idle, clk_i, rst_ni, !start_i || state_q == StIdle)
  // A walk's rows are not rewritten once it reads them (from the scan on: the
  // dependency rules order its LOAD CONTROL before the first row's step, and
  // the next LOAD CONTROL of these rows after the COMPUTE).
  `STRATA_ASSERT(pw_sched_write_rows, clk_i, rst_ni, !sched_we_i ||
                 state_q == StIdle || state_q == StStep ||
                 32'(sched_waddr_i) < 32'(cfg_i.cache_base) ||
                 32'(sched_waddr_i) >= 32'(cfg_i.cache_base) + 32'(rows_i))
  // A beat with no word inside is its pixel's only beat.
  `STRATA_ASSERT(pw_dummy_alone, clk_i, rst_ni,
                 !beat_valid_o || beat_in_o != 2'b00 || (beat_first_o && beat_last_o))
  `STRATA_ASSERT(pw_no_beat_unless_walking, clk_i, rst_ni, !beat_valid || state_q == StWalk)
  `STRATA_ASSERT(pw_ky_flags, clk_i, rst_ni, !pv_q ||
                 (lky_q == (ky_q == px_q.ky_last) && fky_q == (ky_q == px_q.ky_lo) &&
                  jrow_q == slot_t'(32'(ky_q) * M) && ky_q <= px_q.ky_last))
  `STRATA_ASSERT(pw_rooms, clk_i, rst_ni, state_q != StWalk ||
                 (kx_room_n_q == pos_t'({2'b00, cfg_i.img_w}) - ix0_n_q &&
                  ky_room_n_q == pos_t'({1'b0, cfg_i.img_h}) - iy0_n_q))
  `STRATA_ASSERT(pw_range_end, clk_i, rst_ni, !cur_v_q || kind_q != RecRange ||
                 (end_q == (c_q + caddr_t'(1) == hi_q) && c_q < hi_q))
  `STRATA_ASSERT(pw_record_range, clk_i, rst_ni, !q4_v_q || q4_kind_q != RecRange ||
                 (q4_start_q < q4_hi_q && q4_hi_q <= rows_end_q))
  // Every issue slot finds a record once the walk runs (the producer is
  // never behind): only the first record is waited for.
  `STRATA_ASSERT(pw_issue_fed, clk_i, rst_ni, !rec_done || fin_q || rec_valid)

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
