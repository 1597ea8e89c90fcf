// SPDX-License-Identifier: Apache-2.0
// LOAD engine (docs/isa.md, LOAD): copies rows x row_words units from
// external memory, or from the cascade input (src_kind CASCADE), into a bank, the PE caches, the parameter RAM or the
// activation tables (TABLE; on sparse builds, Sparse = 1, also the control planes and the packed-row schedule).
//
// Per instruction: accept from the load queue, check the fields (four cycles,
// strata_xfer_check), start the dependency sequencer (strata_engine_shell:
// S2L up front, C2L per step), then run two decoupled processes until every
// unit is written:
//   read requests: row by row (row r at ext_addr + r * ext_row_stride), each
//     row split into INCR bursts of at most MaxBurst beats that never cross a
//     4 KB boundary. A burst is issued only when the beat buffer has room for
//     MaxBurst beats (credits), so R beats are always accepted; BufDepth beats
//     may be in flight (128 by default: a 60-cycle memory latency is covered
//     at one beat per cycle). Before the first burst of row r the row is
//     acquired as step r (completion mode: everything at step 0).
//   writes: beats leave the buffer in order and become units: an N-byte word
//     (WordWidth / AxiDataWidth beats gathered) for BANK / PE_CACHE, an 8-byte
//     parameter entry for PARAM (AxiDataWidth / 64 entries per beat, the tail
//     of a row's last beat dropped; on a 32-bit bus two beats gathered). Unit w of row r goes to
//       BANK:     bank dst_id, word dst_addr + r * dst_row_stride + w
//       PE_CACHE: PE dst_id, same address; with dst_pe_step PE
//                 (dst_id + r) mod P at dst_addr + (r div P) * dst_row_stride + w
//       PARAM:    channel dst_addr + r * dst_row_stride + w
//       TABLE:    activation-table word dst_addr + r * dst_row_stride + w,
//                 through the compute engine's table port (ActTables x 256
//                 bytes in N-byte words; none when ActTables = 0, so every
//                 TABLE row is past the depth)
//       CONTROL:  (sparse builds) as PE_CACHE, through the PE port with
//                 pe_ctl_o = 1: PE p's control word (p < P), or with PE
//                 index P (dst_id = P, no dst_pe_step) a schedule word; the
//                 compute engine holds both, beside its PE caches, so the
//                 load engine has no port of its own for them
//     one unit per cycle while the destination is ready. In fine-grained
//     mode each written row releases one L2C unit; the rest at the end.
//   cascade (src_kind CASCADE, docs/cascade.md): the same bursts are counted
//     but not issued, and each one lets its beats in from the cascade input
//     (AXI4-Stream) instead of R: the input is ready only for beats an
//     issued burst counts and the buffer has room for, so the stream is
//     back-pressured, never dropped. Every beat must carry TUSER = link_id,
//     and TLAST on the instruction's last beat only.
// Checks (error held until abort_i; nothing is read or written):
//   rows = 0, row_words = 0, dst_kind undefined (CONTROL on a
//   dense build), dst_pe_step without PE_CACHE or CONTROL,
//   dst_id != 0 with PARAM or TABLE                         -> ILLEGAL_INSTR
//   ext_addr / ext_row_stride not multiples of the beat, bank >= Banks,
//   PE >= P, CONTROL dst_id > P or = P with dst_pe_step, a destination
//   range past its depth, an external range past
//   2^AxiAddrWidth                                          -> UNSUPPORTED
//   a PARAM entry with shift (byte 6) > MaxShift or byte 7
//   not zero, a control word with a bit set outside bits 1:0
//   of each byte and 3:2 of byte 0 or a destination of 3, a
//   schedule word with a bit set above byte 2: not written,
//   the run stops there (the units before it are written)   -> UNSUPPORTED
//   RRESP != OKAY on a beat                                 -> AXI_READ
//   src_kind undefined, CASCADE with ext_addr or
//   ext_row_stride not zero                                 -> ILLEGAL_INSTR
//   a cascade beat with TUSER != link_id, TLAST before the
//   last beat or missing on it                              -> CASCADE
// On an error or abort_i no further burst is issued; beats still to come are
// absorbed and dropped; idle_o returns when none is outstanding.
// Throughput: one beat per cycle from the bus and one unit per cycle to the
// destination (a word of WordWidth / AxiDataWidth beats every that many
// cycles). A row's first burst waits for the registered grant of its step
// (one AR cycle per row). Units reach the destination through a write slice
// (strata_fifo with a head register); the start is a flip-flop copy per group
// of blocks (strata_engine_shell), asserted equal to the state decode.
// Restrictions (elaboration checks): WordWidth is a multiple of
// AxiDataWidth, AxiDataWidth >= 32, P a power of two (<= 32 when Sparse,
// so that P itself, the schedule, is a PE index of the port).
`include "strata_assert.svh"
`include "strata_bank_types.svh"

module strata_load_engine
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
  import strata_cfg_pkg::MaxShift;
#(
  parameter int unsigned AxiDataWidth = strata_cfg_pkg::AxiDataWidth,  // R beat bits
  parameter int unsigned AxiAddrWidth = strata_cfg_pkg::AxiAddrWidth,  // byte address bits
  parameter int unsigned Lanes        = strata_cfg_pkg::Lanes,         // N: bytes per word
  parameter int unsigned Pes          = strata_cfg_pkg::Pes,           // P
  parameter int unsigned Banks        = strata_cfg_pkg::Banks,         // banks
  parameter int unsigned BankDepth    = strata_cfg_pkg::BankDepth,     // words per bank
  parameter int unsigned PeCacheDepth = strata_cfg_pkg::PeCacheDepth,  // words per PE cache
  parameter int unsigned ParamDepth   = strata_cfg_pkg::ParamDepth,    // parameter channels
  parameter bit          Sparse       = strata_cfg_pkg::Sparse,        // LOAD CONTROL exists
  parameter int unsigned ActTables    = strata_cfg_pkg::ActTables,     // activation tables
  parameter int unsigned MaxBurst     = 16,   // beats per burst, a power of two, 2..256
  parameter int unsigned BufDepth     = 128,  // beat buffer (beats in flight), >= MaxBurst
  localparam int unsigned WordWidth      = Lanes * 8,
  localparam int unsigned BankIdxWidth   = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned BankAddrWidth  = $clog2(BankDepth),
  localparam int unsigned PeIdxWidth     = (Pes > 1) ? $clog2(Pes) : 1,
  // The PE port's index: PE 0..P-1, and on sparse builds also P (the schedule).
  localparam int unsigned PeSelWidth     = Sparse ? $clog2(Pes + 1) : PeIdxWidth,
  localparam int unsigned CacheAddrWidth = $clog2(PeCacheDepth),
  localparam int unsigned ParamIdxWidth  = $clog2(ParamDepth),
  // Activation-table words (N bytes each) and their address bits.
  localparam int unsigned TableWords     = (ActTables * 256 + Lanes - 1) / Lanes,
  localparam int unsigned TableAddrWidth = (TableWords > 1) ? $clog2(TableWords) : 1,
  localparam type bank_wr_t = `STRATA_BANK_WR_T(BankIdxWidth, BankAddrWidth, WordWidth)
) (
  input  logic                      clk_i,              // clock
  input  logic                      rst_ni,             // synchronous reset, active low
  input  logic                      abort_i,            // stop, drain, go idle
  input  logic                      fine_i,             // fine-grained dependency mode
  // instruction queue
  input  logic                      instr_valid_i,      // a LOAD is waiting
  output logic                      instr_ready_o,      // taken
  input  instr_t                    instr_i,            // the instruction
  input  csr_error_code_index_t     instr_index_i,      // its fetch index
  // semaphores (edge 0: C2L / L2C, edge 1: S2L / unused)
  output logic [1:0]                acq_req_o,          // acquire request
  output dep_count_t [1:0]          acq_amount_o,       // units
  input  logic [1:0]                acq_grant_i,        // granted
  output logic [1:0]                rel_valid_o,        // release
  output dep_count_t [1:0]          rel_amount_o,       // units
  // AXI read (ID assigned by strata_axi_rd_arbiter)
  output logic                      arvalid_o,          // burst request
  input  logic                      arready_i,          // taken
  output logic [AxiAddrWidth-1:0]   araddr_o,           // first byte
  output logic [7:0]                arlen_o,            // beats - 1
  input  logic                      rvalid_i,           // read beat
  output logic                      rready_o,           // always 1 in practice (credits)
  input  logic [AxiDataWidth-1:0]   rdata_i,            // beat data
  input  logic [1:0]                rresp_i,            // beat response
  input  logic                      rlast_i,            // last beat of a burst
  // cascade input (AXI4-Stream; strata_memsys drops beats while it flushes)
  input  logic                      cas_valid_i,        // beat
  output logic                      cas_ready_o,        // taken
  input  logic [AxiDataWidth-1:0]   cas_data_i,         // TDATA
  input  logic                      cas_last_i,         // TLAST: the transfer's last beat
  input  load_link_id_t             cas_user_i,         // TUSER: the transfer's link id
  // bank write port (strata_banks)
  output logic                      bank_valid_o,       // word to write
  input  logic                      bank_ready_i,       // written
  output bank_wr_t                 bank_req_o,         // bank, word address, word
  // PE cache write port (compute engine)
  output logic                      pe_valid_o,         // word to write
  input  logic                      pe_ready_i,         // written
  output logic [PeSelWidth-1:0]     pe_o,               // PE (P: the schedule, pe_ctl_o only)
  output logic                      pe_ctl_o,           // CONTROL word (0 on dense builds)
  output logic [CacheAddrWidth-1:0] pe_addr_o,          // word address
  output logic [WordWidth-1:0]      pe_data_o,          // word
  // parameter RAM write port (compute engine)
  output logic                      param_valid_o,      // entry to write
  input  logic                      param_ready_i,      // written
  output logic [ParamIdxWidth-1:0]  param_channel_o,    // channel
  output logic [63:0]               param_data_o,       // bias (0-3), M (4-5), S (6), 0 (7)
  // activation-table write port (compute engine)
  output logic                      tab_valid_o,        // word to write
  input  logic                      tab_ready_i,        // written
  output logic [TableAddrWidth-1:0] tab_addr_o,         // word address
  output logic [WordWidth-1:0]      tab_data_o,         // word (entries t * 256 + i)
  // status
  output logic                      idle_o,             // no instruction, nothing outstanding
  output logic                      busy_o,             // executing an instruction
  output logic                      dep_wait_o,         // waiting on a semaphore
  output logic                      mem_wait_o,         // running, no data to write
  output logic                      retire_o,           // an instruction finished (pulse)
  output csr_error_code_index_t     index_o,            // index of the current instruction
  output logic                      err_o,              // error (held until abort)
  output err_code_e                 err_code_o,         // its code
  output csr_error_code_index_t     err_index_o         // its instruction index
);

  localparam int unsigned BeatBytes  = AxiDataWidth / 8;
  localparam int unsigned WordBeats  = WordWidth / AxiDataWidth;      // beats per word
  // A parameter entry is 64 bits: several per beat on a wide bus (ParamSlots),
  // two beats gathered into one on a 32-bit bus (ParamBeats).
  localparam int unsigned ParamSlots = (AxiDataWidth >= 64) ? AxiDataWidth / 64 : 1;
  localparam int unsigned ParamBeats = (AxiDataWidth >= 64) ? 1 : 64 / AxiDataWidth;
  // A unit carries a word or an entry: N bytes, at least 64 bits.
  localparam int unsigned UnitWidth  = (WordWidth >= 64) ? WordWidth : 64;
  localparam int unsigned UnitBeats  = UnitWidth / AxiDataWidth;      // beats gathered at most
  localparam int unsigned SlotWidth  = (ParamSlots > 1) ? $clog2(ParamSlots) : 1;
  localparam int unsigned GbeatWidth = (UnitBeats > 1) ? $clog2(UnitBeats) : 1;
  localparam int unsigned CredWidth  = $clog2(BufDepth + 1);
  localparam int unsigned LgPes      = $clog2(Pes);
  // Beats per row: row_words * WordBeats, WordBeats <= 2^8 (asserted).
  localparam int unsigned BeatsWidth = LoadRowWordsWidth + 8;
  localparam int unsigned AW         = AxiAddrWidth;
  // Destination index and address bits of a unit (bank / PE / parameter channel).
  localparam int unsigned WrIdWidth   = (BankIdxWidth > PeSelWidth) ? BankIdxWidth : PeSelWidth;
  localparam int unsigned WrAddrWidth0 = (BankAddrWidth > CacheAddrWidth) ?
      ((BankAddrWidth > ParamIdxWidth) ? BankAddrWidth : ParamIdxWidth) :
      ((CacheAddrWidth > ParamIdxWidth) ? CacheAddrWidth : ParamIdxWidth);
  localparam int unsigned WrAddrWidth  = (WrAddrWidth0 > TableAddrWidth) ? WrAddrWidth0
                                                                          : TableAddrWidth;
  // A destination depth (up to 2^dst_addr bits) and a row's first address
  // (dst_addr + r * dst_row_stride, at most the depth after the range check).
  localparam int unsigned DepthWidth   = LoadDstAddrWidth + 1;
  localparam int unsigned RowAddrWidth = LoadDstAddrWidth + 1;

  typedef enum logic [3:0] {
    StIdle,
    StCheck,    // products and partial sums of the range checks
    StCheck2,   // range ends
    StCheck3,   // range comparisons
    StCheck4,   // decision
    StStart,    // dependency sequencer start
    StRun,
    StFinish,   // remaining acquisitions and the releases
    StError,    // error reported, waiting for abort
    StDrain     // absorbing outstanding beats
  } state_e;

  state_e state_d, state_q;

  // ---------------------------------------------------------------- instruction fields
  load_ext_addr_t        ext_addr_q;
  load_ext_row_stride_t  ext_stride_q;
  load_rows_t            rows_q;
  load_row_words_t       row_words_q;
  load_dst_addr_t        dst_addr_q;
  load_dst_row_stride_t  dst_stride_q;
  csr_error_code_index_t index_q;
  load_dst_kind_t        kind_q;
  load_dst_id_t          dst_id_q;
  logic                  pe_step_q;
  load_src_kind_t        src_kind_q;
  load_link_id_t         link_id_q;
  dep_hdr_t              deps_q;  // the dependency fields
  logic                  fine_q;
  logic                  take;

  assign instr_ready_o = state_q == StIdle && !abort_i;
  assign take          = instr_valid_i && instr_ready_o;

  always_ff @(posedge clk_i) begin
    if (take) begin
      ext_addr_q   <= load_ext_addr(instr_i);
      ext_stride_q <= load_ext_row_stride(instr_i);
      rows_q       <= load_rows(instr_i);
      row_words_q  <= load_row_words(instr_i);
      kind_q       <= instr_i[LoadDstKindLsb +: LoadDstKindWidth];
      dst_id_q     <= load_dst_id(instr_i);
      pe_step_q    <= load_dst_pe_step(instr_i);
      src_kind_q   <= instr_i[LoadSrcKindLsb +: LoadSrcKindWidth];
      link_id_q    <= load_link_id(instr_i);
      dst_addr_q   <= load_dst_addr(instr_i);
      dst_stride_q <= load_dst_row_stride(instr_i);
      deps_q       <= hdr_deps(instr_i);
      index_q      <= instr_index_i;
      fine_q       <= fine_i;
    end
  end

  // is_ctl, and everything it enables, is a constant 0 on dense builds.
  // is_table holds on a build without tables too: its depth is then 0, so the
  // range check refuses the LOAD (UNSUPPORTED), as the target rule says.
  logic is_bank, is_pe, is_param, is_ctl, is_sched, pe_like, is_table;
  assign is_bank  = kind_q == LoadDstBank;
  assign is_pe    = kind_q == LoadDstPeCache;
  assign is_param = kind_q == LoadDstParam;
  assign is_ctl   = Sparse && kind_q == LoadDstControl;
  assign is_table = kind_q == LoadDstTable;
  assign is_sched = is_ctl && 32'(dst_id_q) == Pes && !pe_step_q;  // the schedule, PE index P
  assign pe_like  = is_pe || is_ctl;  // addressed as PE_CACHE (dst_pe_step)

  // A cascade LOAD: beats from the cascade input (its external fields are 0).
  logic is_cas;
  assign is_cas = src_kind_q == LoadSrcCascade;

  // Beats per row: whole words, or ceil(row_words * 8 / BeatBytes) entries.
  logic [BeatsWidth-1:0] row_beats;
  always_comb begin
    if (is_param && ParamBeats > 1) begin
      row_beats = BeatsWidth'(32'(row_words_q) * ParamBeats);
    end else if (is_param) begin
      row_beats = BeatsWidth'((32'(row_words_q) + ParamSlots - 1) >> $clog2(ParamSlots));
    end else begin
      row_beats = BeatsWidth'(32'(row_words_q) * WordBeats);
    end
  end

  // ---------------------------------------------------------------- checks
  // strata_xfer_check: the range checks (products in DSP registers loaded
  // while idle, row-end sums, range ends, comparisons) and the registered
  // field flags, so StCheck4 decides from flip-flops alone. The engine gives
  // the destination: its rows (rows / P with dst_pe_step), its depth, and the
  // destination-specific field flags.
  load_rows_t take_rows_m1;      // rows - 1 of the instruction offered
  load_rows_t take_dst_rows_m1;  // destination rows - 1 of the instruction offered
  load_rows_t rows_m1, dst_rows_m1;  // of the instruction taken (for the assertion)
  logic [DepthWidth-1:0] dst_depth;
  logic        illegal_dst, unsup_dst;  // the destination's field flags
  logic        illegal, unsupported;    // the verdict, from flip-flops (StCheck4 on)

  assign take_rows_m1     = load_rows(instr_i) - LoadRowsWidth'(1);
  assign take_dst_rows_m1 = ((instr_i[LoadDstKindLsb +: LoadDstKindWidth] == LoadDstPeCache ||
                              (Sparse && instr_i[LoadDstKindLsb +: LoadDstKindWidth] ==
                                         LoadDstControl)) &&
                             load_dst_pe_step(instr_i)) ? (take_rows_m1 >> LgPes) : take_rows_m1;
  assign rows_m1          = rows_q - LoadRowsWidth'(1);
  assign dst_rows_m1      = (pe_like && pe_step_q) ? rows_m1 >> LgPes : rows_m1;

  always_comb begin
    unique case (kind_q)
      LoadDstBank:    dst_depth = DepthWidth'(BankDepth);
      LoadDstPeCache: dst_depth = DepthWidth'(PeCacheDepth);
      LoadDstTable:   dst_depth = DepthWidth'(TableWords);
      default:            dst_depth = is_ctl ? DepthWidth'(PeCacheDepth) : DepthWidth'(ParamDepth);
    endcase
  end

  assign illegal_dst = !(is_bank || is_pe || is_param || is_ctl || is_table) ||
                       (pe_step_q && !pe_like) || ((is_param || is_table) && dst_id_q != '0) ||
                       !(is_cas || src_kind_q == LoadSrcExt) ||
                       (is_cas && (ext_addr_q != '0 || ext_stride_q != '0));
  // CONTROL: PEs 0..P-1, and P (the schedule) without dst_pe_step.
  assign unsup_dst   = (is_bank && 32'(dst_id_q) >= Banks) || (is_pe && 32'(dst_id_q) >= Pes) ||
                       (is_ctl && (32'(dst_id_q) > Pes || (32'(dst_id_q) == Pes && pe_step_q)));

  strata_xfer_check #(
    .AxiAddrWidth   (AxiAddrWidth),
    .AxiDataWidth   (AxiDataWidth),
    .BeatsWidth     (BeatsWidth),
    .RowsWidth      (LoadRowsWidth),
    .UnitsWidth     (LoadRowWordsWidth),
    .ExtAddrWidth   (LoadExtAddrWidth),
    .ExtStrideWidth (LoadExtRowStrideWidth),
    .MemAddrWidth   (LoadDstAddrWidth),
    .MemStrideWidth (LoadDstRowStrideWidth)
  ) u_check (
    .clk_i              (clk_i),
    .rst_ni             (rst_ni),
    .load_i             (state_q == StIdle),
    .take_rows_m1_i     (take_rows_m1),
    .take_ext_stride_i  (load_ext_row_stride(instr_i)),
    .take_mem_rows_m1_i (take_dst_rows_m1),
    .take_mem_stride_i  (load_dst_row_stride(instr_i)),
    .rows_i             (rows_q),
    .row_units_i        (row_words_q),
    .row_beats_i        (row_beats),
    .ext_addr_i         (ext_addr_q),
    .ext_stride_i       (ext_stride_q),
    .mem_addr_i         (dst_addr_q),
    .mem_rows_m1_i      (dst_rows_m1),
    .mem_stride_i       (dst_stride_q),
    .mem_depth_i        (dst_depth),
    .illegal_i          (illegal_dst),
    .unsup_i            (unsup_dst),
    .products_valid_i   (state_q inside {StCheck2, StCheck3, StCheck4, StStart, StRun, StFinish}),
    .decide_i           (state_q == StCheck4),
    .illegal_o          (illegal),
    .unsupported_o      (unsupported)
  );

  // ---------------------------------------------------------------- start, run, dependencies
  // strata_engine_shell: the start flags (a copy per block group: burst
  // generator and row flag, unit counters) and the run flag, loaded from the
  // transitions into StStart and StRun written out below (start_d, run_d;
  // asserted equal to the next-state decodes, so run_d does not wait for
  // the field checks' comparisons), and the dependency sequencer (S2L up
  // front, C2L per row).
  localparam int unsigned StartFront = 0, StartBack = 1, StartCopies = 2;
  logic [StartCopies-1:0] start_q;
  logic                   start_d, run_d, run_q;
  logic step_valid, step_ready, step_done, finish_valid, finish_ready, sync_waiting;
  logic finish_q, error_q;  // state_q == StFinish / StError (registered, below)

  strata_engine_shell #(
    .StartCopies (StartCopies),
    .RunCopies   (1)
  ) u_shell (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i || error_q),
    .start_d_i      (start_d),
    .in_start_i     (state_q == StStart),
    .run_d_i        (run_d),
    .in_run_i       (state_q == StRun),
    .start_o        (start_q),
    .run_o          (run_q),
    .fine_i         (fine_q),
    .deps_i         (deps_q),
    .step_valid_i   (step_valid),
    .step_ready_o   (step_ready),
    .step_done_i    (step_done),
    .finish_valid_i (finish_valid),
    .finish_ready_o (finish_ready),
    .acq_req_o      (acq_req_o),
    .acq_amount_o   (acq_amount_o),
    .acq_grant_i    (acq_grant_i),
    .rel_valid_o    (rel_valid_o),
    .rel_amount_o   (rel_amount_o),
    .waiting_o      (sync_waiting)
  );

  // ---------------------------------------------------------------- read requests
  localparam int unsigned BurstWidth = $clog2(MaxBurst + 1);

  logic                  ar_valid;                    // the AR queue holds a burst
  logic                  row_acq_d, row_acq_q;        // step acquired for the current row
  logic [CredWidth-1:0]  room_d, room_q;              // buffer beats not reserved
  logic [CredWidth-1:0]  outst_d, outst_q;            // beats requested, not yet received
  // outst_q != 0, registered: the cascade's ready and the beat buffer's write
  // follow a flip-flop, not the compare of outst_q's bits.
  logic                  outst_any_d, outst_any_q;
  logic                  gen_done, gen_valid, gen_row_last;
  logic [AW-1:0]         gen_addr;
  logic [BurstWidth-1:0] gen_beats;                   // beats of the next burst
  logic [7:0]            gen_len;                     // its AXLEN
  load_rows_t            unused_gen_row;
  logic                  ar_issue, ar_slot, ar_done, running, pop, r_fire;

  assign running  = run_q;
  assign ar_done  = gen_done;

  // Bursts of each row (registered, one per cycle): the issue decision below
  // only selects the generator's next precomputed burst.
  strata_burst_gen #(
    .AddrWidth   (AW),
    .BeatBytes   (BeatBytes),
    .MaxBurst    (MaxBurst),
    .BeatsWidth  (BeatsWidth),
    .RowsWidth   (LoadRowsWidth),
    .StrideWidth (LoadExtRowStrideWidth)
  ) u_bursts (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (start_q[StartFront]),
    .base_i      (AW'(ext_addr_q)),
    .stride_i    (ext_stride_q),
    .rows_i      (rows_q),
    .row_beats_i (row_beats),
    .next_i      (ar_issue),
    .done_o      (gen_done),
    .valid_o     (gen_valid),
    .addr_o      (gen_addr),
    .beats_o     (gen_beats),
    .len_o       (gen_len),
    .row_o       (unused_gen_row),
    .row_last_o  (gen_row_last)
  );

  // Step r is requested before row r's first burst, which waits for the
  // registered grant (row_acq_q): the semaphore's grant path never reaches the
  // AR logic, at the cost of one cycle between the last burst of a row and the
  // first of the next.
  assign step_valid = running && !ar_done && !row_acq_q;
  // The buffer's free beats (room_q, BufDepth minus the reserved ones) are
  // counted down, and a burst is issued once MaxBurst of them are free
  // (room_ok, an OR of room_q's high bits: MaxBurst is a power of two), not
  // as soon as its own beats are: no comparator in front of the issue and
  // its ~80 enables. The buffer then holds at least BufDepth - MaxBurst beats
  // for the writes when a burst waits, so only the issue time of a burst
  // moves, never the rate (BufDepth >= MaxBurst: an empty buffer always has
  // room).
  localparam int unsigned RoomOkLsb = $clog2(MaxBurst);

  logic room_ok;

  assign room_ok    = |room_q[CredWidth-1:RoomOkLsb];
  assign ar_issue   = running && gen_valid && row_acq_q && ar_slot && room_ok;
  // A cascade LOAD's bursts stay inside: they only count the beats let in.
  assign r_fire     = is_cas ? cas_valid_i && cas_ready_o : rvalid_i && rready_o;

  always_comb begin
    row_acq_d = row_acq_q || (step_valid && step_ready);
    if (ar_issue && gen_row_last) row_acq_d = 1'b0;  // next row
    if (start_q[StartFront]) row_acq_d = 1'b0;
  end

  always_comb begin
    room_d  = room_q - (ar_issue ? CredWidth'(gen_beats) : '0) + CredWidth'(pop);
    outst_d = outst_q + (ar_issue ? CredWidth'(gen_beats) : '0) - CredWidth'(r_fire);
    if (state_q == StDrain || state_q == StError) room_d = CredWidth'(BufDepth);
    // A cascade transfer is not waited for once the instruction stops.
    if ((state_q == StDrain || state_q == StError) && is_cas) outst_d = '0;
  end

  // outst_d != 0 without its adder: an issued burst brings at least one beat
  // and a beat only arrives while one is outstanding, so the count is nonzero
  // after an issue and reaches zero only when the last outstanding beat
  // arrives. This keeps the adder's carry chain off the flag's input.
  always_comb begin
    outst_any_d = outst_any_q;
    if (r_fire) outst_any_d = outst_q != CredWidth'(1);
    if (ar_issue) outst_any_d = 1'b1;
    if ((state_q == StDrain || state_q == StError) && is_cas) outst_any_d = 1'b0;
  end

  // Issued bursts wait in a two-entry queue (the AR output register): its
  // not-full flag (ar_slot) is a flip-flop, so ARREADY reaches neither the
  // issue decision nor the burst generator's enables. Full rate.
  typedef struct packed {
    logic [AW-1:0] addr;  // first byte
    logic [7:0]    len;   // beats - 1
  } ar_t;
  ar_t        ar_head;
  logic [1:0] unused_ar_count;

  strata_fifo #(
    .T     (ar_t),
    .Depth (2)
  ) u_ar (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (ar_issue && !is_cas),
    .in_ready_o  (ar_slot),
    .in_data_i   (ar_t'{addr: gen_addr, len: gen_len}),
    .out_valid_o (ar_valid),
    .out_ready_i (arready_i),
    .out_data_o  (ar_head),
    .count_o     (unused_ar_count)
  );

  assign araddr_o = ar_head.addr;
  assign arlen_o  = ar_head.len;

  assign arvalid_o = ar_valid;

  // ---------------------------------------------------------------- beat buffer
  logic                    buf_in_ready, buf_out_valid, buf_flush, dropping, r_error;
  logic                    cas_error, cas_last_expected;
  logic [AxiDataWidth-1:0] beat;
  logic [CredWidth-1:0]    unused_buf_count;
  logic                    unused_rlast;

  // Beats are dropped unless an instruction is running without error. A
  // cascade LOAD takes only the beats its counted bursts let in (the
  // stream's next transfer waits in the link), and R carries none of its.
  assign dropping     = !running;
  assign buf_flush    = dropping;
  assign rready_o     = dropping || (buf_in_ready && !is_cas);
  assign cas_ready_o  = running && is_cas && outst_any_q && buf_in_ready;
  assign r_error      = r_fire && rresp_i != 2'b00 && running && !is_cas;
  assign unused_rlast = rlast_i;  // bursts are counted in beats
  // The instruction's last beat: every burst counted and this one outstanding.
  assign cas_last_expected = ar_done && outst_q == CredWidth'(1);
  assign cas_error    = r_fire && is_cas && running &&
                        (cas_user_i != link_id_q || cas_last_i != cas_last_expected);

  strata_fifo_ram #(
    .Width (AxiDataWidth),
    .Depth (BufDepth)
  ) u_beats (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (buf_flush),
    .in_valid_i  (is_cas ? cas_valid_i && cas_ready_o : rvalid_i && !dropping),
    .in_ready_o  (buf_in_ready),
    .in_data_i   (is_cas ? cas_data_i : rdata_i),
    .out_valid_o (buf_out_valid),
    .out_ready_i (pop),
    .out_data_o  (beat),
    .count_o     (unused_buf_count)
  );

  // ---------------------------------------------------------------- beats -> units
  // A unit on its way to its destination.
  typedef struct packed {
    load_dst_kind_t         kind;      // destination kind (LoadDst*)
    logic [WrIdWidth-1:0]   id;        // bank / PE
    logic [WrAddrWidth-1:0] addr;      // word address / parameter channel
    logic [UnitWidth-1:0]   data;      // the word (PARAM: the entry in bits 63:0)
    logic                   row_last;  // last unit of its row
    logic                   bad_entry; // PARAM: shift > MaxShift or byte 7 not zero;
                                       // CONTROL: a bit outside the word's format
  } unit_t;
  logic  wr_valid, wr_fire, wr_free;  // output slice head
  logic  bad_entry;                   // the head is a refused parameter entry or CONTROL word
  unit_t wr;                          // the unit at the head
  load_rows_t               d_row_d, d_row_q;              // row of the next unit
  load_row_words_t          d_unit_d, d_unit_q;            // unit of the row
  logic [RowAddrWidth-1:0]  d_row_addr_d, d_row_addr_q;    // destination address of unit 0
  load_dst_id_t             d_pe_d, d_pe_q;                // PE of the row (pe_step)
  logic [PeIdxWidth-1:0]    d_pe_cnt_d, d_pe_cnt_q;        // rows since the address stepped
  // The destination address steps at the end of this row: every row, or with
  // pe_step every P-th. A flag kept with the PE count, so the address's enable
  // is the produce decision and two flip-flops, not a compare of the count.
  logic                     addr_step_d, addr_step_q;
  logic [GbeatWidth-1:0]    gbeat_d, gbeat_q;              // beat of the word being gathered
  logic [SlotWidth-1:0]     slot_d, slot_q;                // entry of the beat (PARAM)
  logic [UnitWidth-1:0]     gather_d, gather_q;            // beats gathered so far
  logic                     produce, unit_row_last, unit_last, split_mode;
  logic                     gathering;                     // the beat is not the unit's last
  logic [UnitWidth-1:0]     unit_data;
  logic                     unit_bad_entry;               // a PARAM entry the requantiser refuses,
                                                           // or a malformed CONTROL word
  logic                     d_done_d, d_done_q;            // every unit produced

  // d_unit_q == row_words - 1 and d_row_q == rows - 1 as registered flags
  // (exact, asserted), loaded with comparisons against row_words - 2 and
  // rows - 2 (free-running registers of the fields, captured at least three
  // cycles before StStart): the enables of the unit and row counters wait
  // for no 16-bit subtraction and comparison.
  logic        row_end_d, row_end_q, rows_end_d, rows_end_q;
  load_row_words_t row_words_m2_q;
  load_rows_t      rows_m2_q;
  logic        one_word_q, one_row_q;

  always_ff @(posedge clk_i) begin
    row_words_m2_q <= row_words_q - LoadRowWordsWidth'(2);
    rows_m2_q      <= rows_q - LoadRowsWidth'(2);
    one_word_q     <= row_words_q == LoadRowWordsWidth'(1);
    one_row_q      <= rows_q == LoadRowsWidth'(1);
  end

  assign split_mode    = is_param && ParamSlots > 1;
  assign unit_row_last = row_end_q;
  assign unit_last     = row_end_q && rows_end_q;

  // A unit is produced when its last beat (or its slot) is available and the
  // output slice has room; beats before a word's (or a 32-bit bus's entry's)
  // last are popped into the gather register without waiting.
  assign gathering = 32'(gbeat_q) != (is_param ? ParamBeats : WordBeats) - 1;

  always_comb begin
    produce = 1'b0;
    pop     = 1'b0;
    if (running && !d_done_q && buf_out_valid) begin
      if (split_mode) begin
        produce = wr_free;
        pop     = produce && (32'(slot_q) == ParamSlots - 1 || unit_row_last);
      end else if (gathering) begin
        pop = 1'b1;
      end else begin
        produce = wr_free;
        pop     = produce;
      end
    end
  end

  // The unit's data: the gathered beats below the current one (words, and
  // parameter entries on a 32-bit bus), or the current beat's slot (parameter
  // entries on a wider bus).
  logic [ParamSlots*64-1:0] beat_slots;  // the beat's entries (wide buses only)
  assign beat_slots = (ParamSlots * 64)'(beat);

  always_comb begin
    unit_data = '0;
    if (is_param && ParamBeats == 1) begin
      unit_data[63:0] = beat_slots[32'(slot_q) * 64 +: 64];
    end else if (is_param) begin
      unit_data[63:0] = gather_q[63:0];
      unit_data[(ParamBeats - 1) * AxiDataWidth +: AxiDataWidth] = beat;
    end else begin
      unit_data = gather_q;
      unit_data[(WordBeats - 1) * AxiDataWidth +: AxiDataWidth] = beat;
    end
  end

  // Checked on the way into the slice, so the write handshake and the error
  // decision read a flag from the slice's head register.
  // A control word uses bits 1:0 of every byte (select codes) and bits 3:2 of
  // byte 0 (destination, 3 undefined); a schedule word bytes 0..2 (group, tap).
  localparam logic [WordWidth-1:0] CtlBits   = {Lanes{8'h03}} | WordWidth'(8'h0C);
  localparam logic [WordWidth-1:0] SchedBits = WordWidth'(24'hFFFFFF);
  logic ctl_bad;
  assign ctl_bad = is_sched ? |(unit_data[WordWidth-1:0] & ~SchedBits)
                            : (|(unit_data[WordWidth-1:0] & ~CtlBits) || unit_data[3:2] == 2'd3);
  assign unit_bad_entry = (is_param &&
                           (unit_data[55:48] > 8'(MaxShift) || unit_data[63:56] != '0)) ||
                          (is_ctl && ctl_bad);

  always_comb begin
    gather_d = gather_q;
    gbeat_d  = gbeat_q;
    slot_d   = slot_q;
    if (pop && (!is_param || ParamBeats > 1)) begin
      gather_d[32'(gbeat_q) * AxiDataWidth +: AxiDataWidth] = beat;
      gbeat_d = gathering ? gbeat_q + GbeatWidth'(1) : '0;
    end
    if (produce && split_mode) slot_d = pop ? '0 : slot_q + SlotWidth'(1);
    if (start_q[StartBack]) begin
      gbeat_d = '0;
      slot_d  = '0;
    end
  end

  always_comb begin
    d_row_d      = d_row_q;
    d_unit_d     = d_unit_q;
    d_row_addr_d = d_row_addr_q;
    d_pe_d       = d_pe_q;
    d_pe_cnt_d   = d_pe_cnt_q;
    d_done_d     = d_done_q;
    row_end_d    = row_end_q;
    rows_end_d   = rows_end_q;
    if (produce) begin
      if (unit_row_last) begin
        d_unit_d   = '0;
        row_end_d  = one_word_q;
        d_row_d    = d_row_q + LoadRowsWidth'(1);
        rows_end_d = d_row_q == rows_m2_q;
        d_done_d   = unit_last;
        if (pe_like && pe_step_q) begin
          d_pe_d     = (32'(d_pe_q) == Pes - 1) ? '0 : d_pe_q + LoadDstIdWidth'(1);
          d_pe_cnt_d = (32'(d_pe_cnt_q) == Pes - 1) ? '0 : d_pe_cnt_q + PeIdxWidth'(1);
        end
        if (addr_step_q) d_row_addr_d = d_row_addr_q + RowAddrWidth'(dst_stride_q);
      end else begin
        d_unit_d  = d_unit_q + LoadRowWordsWidth'(1);
        row_end_d = d_unit_q == row_words_m2_q;
      end
    end
    if (start_q[StartBack]) begin
      d_row_d      = '0;
      d_unit_d     = '0;
      row_end_d    = one_word_q;
      rows_end_d   = one_row_q;
      d_row_addr_d = RowAddrWidth'(dst_addr_q);
      d_pe_d       = dst_id_q;
      d_pe_cnt_d   = '0;
      d_done_d     = 1'b0;
    end
    addr_step_d = !(pe_like && pe_step_q) || 32'(d_pe_cnt_d) == Pes - 1;
  end

  // Units leave through a two-entry register slice (full rate): a
  // destination's ready reaches only the slice's fill level, never the beat
  // buffer or the unit counters. Emptied when the instruction stops running.
  // The head is a register (OutReg): the destination kind and the row-end
  // flag reach the write handshake and the row release from flip-flops, not
  // from a LUT-RAM read and the LUT levels behind it, in front of the route
  // to the semaphores.
  logic [1:0] unused_slice_count;

  strata_fifo #(
    .T      (unit_t),
    .Depth  (2),
    .OutReg (1'b1)
  ) u_wr_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni && running),
    .in_valid_i  (produce),
    .in_ready_o  (wr_free),
    .in_data_i   (unit_t'{kind: kind_q, id: WrIdWidth'(d_pe_q),
                          addr: WrAddrWidth'(d_row_addr_q + RowAddrWidth'(d_unit_q)),
                          data: unit_data, row_last: unit_row_last,
                          bad_entry: unit_bad_entry}),
    .out_valid_o (wr_valid),
    .out_ready_i (wr_fire),
    .out_data_o  (wr),
    .count_o     (unused_slice_count)
  );

  // A CONTROL unit at the head (constant 0 on dense builds).
  logic wr_ctl;
  assign wr_ctl = Sparse && wr.kind == LoadDstControl;

  always_comb begin
    unique case (wr.kind)
      LoadDstBank:    wr_fire = wr_valid && bank_ready_i;
      LoadDstPeCache: wr_fire = wr_valid && pe_ready_i;
      LoadDstTable:   wr_fire = wr_valid && tab_ready_i;
      default:            wr_fire = wr_valid && (wr_ctl ? pe_ready_i : param_ready_i) &&
                                    !wr.bad_entry;
    endcase
  end
  assign bad_entry = wr_valid && wr.bad_entry;

  assign bank_valid_o    = wr_valid && wr.kind == LoadDstBank;
  assign bank_req_o.bank = BankIdxWidth'(wr.id);
  assign bank_req_o.addr = BankAddrWidth'(wr.addr);
  assign bank_req_o.data = wr.data[WordWidth-1:0];
  assign pe_valid_o      = wr_valid &&
                           (wr.kind == LoadDstPeCache || (wr_ctl && !wr.bad_entry));
  assign pe_ctl_o        = wr_ctl;
  assign pe_o            = PeSelWidth'(wr.id);
  assign pe_addr_o       = CacheAddrWidth'(wr.addr);
  assign pe_data_o       = wr.data[WordWidth-1:0];
  assign param_valid_o   = wr_valid && wr.kind == LoadDstParam && !wr.bad_entry;
  assign param_channel_o = ParamIdxWidth'(wr.addr);
  assign param_data_o    = wr.data[63:0];
  assign tab_valid_o     = wr_valid && wr.kind == LoadDstTable;
  assign tab_addr_o      = TableAddrWidth'(wr.addr);
  assign tab_data_o      = wr.data[WordWidth-1:0];

  // A row is done when its last unit is written; the release follows one
  // cycle later from a flip-flop, so the route from the write ports' readies
  // (the table port's is in the compute engine) ends here, not in the
  // dependency semaphores. The finish comes two cycles after the last write
  // at the earliest (all_written waits for the slice to empty), so the
  // delayed release always precedes it (asserted below); an abort, which
  // sends the sequencer idle at once, drops it.
  logic step_done_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) step_done_q <= 1'b0;
    else         step_done_q <= running && wr_fire && wr.row_last && !(abort_i || error_q);
  end

  assign step_done = step_done_q;

  // ---------------------------------------------------------------- control
  logic      err_d, err_q;
  err_code_e err_code_d, err_code_q;
  logic      all_written;

  assign all_written  = d_done_q && !wr_valid;
  // The dependency sequencer's finish request and the error half of its
  // abort are flip-flops loaded from state_d (finish_q, error_q, with the
  // state register; asserted equal to the state decodes): the sequencer,
  // placed beside the semaphores, reads them from a register, not from a
  // decode of state_q in front of the route to the sequencer.
  assign finish_valid = finish_q;

  always_comb begin
    state_d    = state_q;
    err_d      = err_q;
    err_code_d = err_code_q;
    unique case (state_q)
      StIdle:   if (take) state_d = StCheck;
      StCheck:  state_d = StCheck2;
      StCheck2: state_d = StCheck3;
      StCheck3: state_d = StCheck4;
      StCheck4: begin
        if (illegal || unsupported) begin
          state_d    = StError;
          err_d      = 1'b1;
          err_code_d = illegal ? ErrIllegalInstr : ErrUnsupported;
        end else begin
          state_d = StStart;
        end
      end
      StStart:  state_d = StRun;  // the dependency sequencer is idle (asserted)
      StRun: begin
        if (r_error) begin
          state_d    = StError;
          err_d      = 1'b1;
          err_code_d = ErrAxiRead;
        end else if (cas_error) begin
          state_d    = StError;
          err_d      = 1'b1;
          err_code_d = ErrCascade;
        end else if (bad_entry) begin
          state_d    = StError;
          err_d      = 1'b1;
          err_code_d = ErrUnsupported;
        end else if (all_written && ar_done) begin
          state_d = StFinish;
        end
      end
      StFinish: if (finish_ready) state_d = StIdle;
      StError:  ;
      StDrain:  if (!ar_valid && outst_q == '0) state_d = StIdle;
      default:  state_d = StIdle;
    endcase
    // Abort (held by the controller until every client is idle): drain once.
    if (abort_i && state_q != StIdle && state_q != StDrain) state_d = StDrain;
    if (abort_i) err_d = 1'b0;
  end

  // The transitions into StStart and StRun (asserted equal to the decodes of
  // state_d): an abort wins over both.
  assign start_d = state_q == StCheck4 && !illegal && !unsupported && !abort_i;
  assign run_d   = (state_q == StStart ||
                    (state_q == StRun && !r_error && !cas_error && !bad_entry &&
                     !(all_written && ar_done))) &&
                   !abort_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      finish_q   <= 1'b0;
      error_q    <= 1'b0;
      err_q      <= 1'b0;
      err_code_q <= ErrNone;
      room_q     <= CredWidth'(BufDepth);
      outst_q    <= '0;
      outst_any_q <= 1'b0;
    end else begin
      state_q    <= state_d;
      finish_q   <= state_d == StFinish;
      error_q    <= state_d == StError;
      err_q      <= err_d;
      err_code_q <= err_code_d;
      room_q     <= room_d;
      outst_q    <= outst_d;
      outst_any_q <= outst_any_d;
    end
  end

  // Datapath and counters: qualified by the state.
  always_ff @(posedge clk_i) begin
    row_acq_q     <= row_acq_d;
    d_row_q       <= d_row_d;
    d_unit_q      <= d_unit_d;
    d_row_addr_q  <= d_row_addr_d;
    d_pe_q        <= d_pe_d;
    d_pe_cnt_q    <= d_pe_cnt_d;
    addr_step_q   <= addr_step_d;
    d_done_q      <= d_done_d;
    row_end_q     <= row_end_d;
    rows_end_q    <= rows_end_d;
    gbeat_q       <= gbeat_d;
    slot_q        <= slot_d;
    gather_q      <= gather_d;
  end

  assign idle_o      = state_q == StIdle;
  assign busy_o      = state_q != StIdle && state_q != StDrain && state_q != StError;
  assign dep_wait_o  = sync_waiting;
  assign mem_wait_o  = running && !sync_waiting && !wr_valid && !d_done_q && !buf_out_valid;
  assign retire_o    = state_q == StFinish && finish_ready;
  assign index_o     = index_q;
  assign err_o       = err_q;
  assign err_code_o  = err_code_q;
  assign err_index_o = index_q;

  // ---------------------------------------------------------------- checks
  `STRATA_ASSERT_STREAM(load_ar, clk_i, rst_ni, arvalid_o, arready_i, {araddr_o, arlen_o})
  `STRATA_ASSERT_STREAM(load_bank, clk_i, rst_ni, bank_valid_o, bank_ready_i,
                        bank_req_o)
  `STRATA_ASSERT_STREAM(load_pe, clk_i, rst_ni, pe_valid_o, pe_ready_i,
                        {pe_o, pe_ctl_o, pe_addr_o, pe_data_o})
  `STRATA_ASSERT_STREAM(load_param, clk_i, rst_ni, param_valid_o, param_ready_i,
                        {param_channel_o, param_data_o})
  `STRATA_ASSERT_STREAM(load_table, clk_i, rst_ni, tab_valid_o, tab_ready_i,
                        {tab_addr_o, tab_data_o})
  `STRATA_ASSERT(load_release_before_finish, clk_i, rst_ni, !(step_done_q && finish_valid))
  `STRATA_ASSERT(load_sync_flags, clk_i, rst_ni,
                 finish_q == (state_q == StFinish) && error_q == (state_q == StError))
  `STRATA_ASSERT(load_start_run_d, clk_i, rst_ni,
                 start_d == (state_d == StStart) && run_d == (state_d == StRun))
  `STRATA_ASSERT(load_r_expected, clk_i, rst_ni, !rvalid_i || (outst_q != '0 && !is_cas))
  `STRATA_ASSERT(load_row_flags, clk_i, rst_ni, state_q != StRun ||
                 (row_end_q == (d_unit_q == row_words_q - LoadRowWordsWidth'(1)) &&
                  rows_end_q == (d_row_q == rows_q - LoadRowsWidth'(1))))
  `STRATA_ASSERT(load_addr_step, clk_i, rst_ni, state_q != StRun ||
                 addr_step_q == (!(pe_like && pe_step_q) || 32'(d_pe_cnt_q) == Pes - 1))
  // The PE port names an existing PE, or the schedule with the CONTROL bit.
  `STRATA_ASSERT(load_pe_index, clk_i, rst_ni, !pe_valid_o || 32'(pe_o) < Pes ||
                 (pe_ctl_o && 32'(pe_o) == Pes))
  `STRATA_ASSERT(load_r_room, clk_i, rst_ni, !rvalid_i || rready_o)
  `STRATA_ASSERT(load_cas_room, clk_i, rst_ni, !cas_ready_o || buf_in_ready)
  `STRATA_ASSERT(load_outst_any, clk_i, rst_ni, outst_any_q == (outst_q != '0))
  `STRATA_ASSERT(load_r_counted, clk_i, rst_ni, !r_fire || outst_q != '0)
  `STRATA_ASSERT(load_room_range, clk_i, rst_ni, 32'(room_q) <= BufDepth)
  `STRATA_ASSERT(load_room_ok, clk_i, rst_ni, room_ok == (32'(room_q) >= MaxBurst))
  `STRATA_ASSERT(load_credit, clk_i, rst_ni, !ar_issue || 32'(gen_beats) <= 32'(room_q))
  // A burst never crosses a 4 KB boundary.
  `STRATA_ASSERT(load_4k, clk_i, rst_ni,
                 !arvalid_o || 32'(araddr_o[11:0]) + (32'(arlen_o) + 1) * BeatBytes <= 4096)

`ifndef SYNTHESIS
  initial begin
    assert (AxiDataWidth >= 32 && AxiDataWidth <= 1024 && 2 ** $clog2(AxiDataWidth) == AxiDataWidth)
      else $fatal(1, "strata_load_engine: AxiDataWidth must be a power of two >= 32");
    assert (WordWidth % AxiDataWidth == 0 && WordBeats <= 256)
      else $fatal(1, "strata_load_engine: N * 8 must be 1..256 times AxiDataWidth");
    assert (2 ** LgPes == Pes && Pes <= 2 ** LoadDstIdWidth &&
            (!Sparse || Pes < 2 ** LoadDstIdWidth))
      else $fatal(1, "strata_load_engine: P must be a power of two <= 64 (<= 63 when Sparse)");
    assert (MaxBurst >= 2 && MaxBurst <= 256 && 2 ** $clog2(MaxBurst) == MaxBurst &&
            BufDepth >= MaxBurst && BufDepth >= 4)
      else $fatal(1, "strata_load_engine: MaxBurst a power of two 2..256, BufDepth >= MaxBurst");
    assert (Banks <= 2 ** LoadDstIdWidth && BankDepth <= 2 ** LoadDstAddrWidth &&
            PeCacheDepth <= 2 ** LoadDstAddrWidth && ParamDepth <= 2 ** LoadDstAddrWidth &&
            AxiAddrWidth >= 12 && AxiAddrWidth <= LoadExtAddrWidth)
      else $fatal(1, "strata_load_engine: memory sizes exceed the instruction fields");
  end
`endif

endmodule : strata_load_engine
