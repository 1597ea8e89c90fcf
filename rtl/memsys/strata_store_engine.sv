// SPDX-License-Identifier: Apache-2.0
// STORE engine (docs/isa.md, STORE): copies rows x row_words N-byte words
// from a bank to external memory with AXI4 write bursts, or to the cascade
// output (dst_kind CASCADE, docs/cascade.md).
//
// Per instruction: accept from the store queue, check the fields (four
// cycles, strata_xfer_check), start the dependency sequencer
// (strata_engine_shell: C2S per step), then run three decoupled processes:
//   bank reads: word w of row r from bank src_id at src_addr +
//     r * src_row_stride + w, one per cycle while the data FIFO has room for
//     the word and the reads in flight; row r is acquired as step r before its
//     first read, one row ahead of the reads (completion mode: everything at
//     step 0); in fine-grained mode
//     a row whose words have all been read releases one S2C unit.
//   AW: row r goes to ext_addr + r * ext_row_stride as INCR bursts of at most
//     MaxBurst beats that never cross a 4 KB boundary, once row r is acquired
//     (so W data follows without waiting for a dependency) and while fewer
//     than MaxOutstanding bursts wait for their response. Bursts leave through
//     a 2-entry register slice, so AWREADY reaches no engine logic.
//   W: the words leave the FIFO as WordWidth / AxiDataWidth beats each (low
//     beat first), WSTRB all ones, WLAST on each burst's last beat, bursts in
//     AW order.
//   cascade (dst_kind CASCADE): no AW and no response; the beats leave on
//     the cascade output (AXI4-Stream) instead of W, TUSER = link_id on
//     every beat, TLAST on the instruction's last (from a flip-flop). S2L is
//     released at the finish (no write to wait for).
// The instruction finishes when every word has been read and every W beat
// sent: the data has left for the bus, so the rest of S2C is released then
// (background item 5), and the next STORE may start while write responses are still
// outstanding. Each response is matched to the instruction of its burst
// (index FIFO): BRESP != OKAY is error AXI_WRITE with that instruction's
// index. S2L (rel1) is released only once every response of the instruction
// has arrived (docs/isa.md: a LOAD that acquires it reads the stored bytes;
// AXI orders a read after a write only once the write's response is in):
// the finish's release waits in a queue of pending releases, in order,
// several STOREs deep, and leaves a register one cycle after the registered
// response count reaches the instruction's last burst (two cycles after its
// BVALID, or after the finish if that is later). An instruction with no S2L
// units queues nothing. idle_o needs every response back and no release
// pending, so END completes only with all writes acknowledged and released.
// The release queue has MaxOutstanding + 1 entries (amount and mark: bursts
// issued so far); a cascade STORE's S2L leaves in program order behind
// earlier STOREs' S2L, and a finish waits while the queue is full. The
// word count for the W beat total is a strata_dsp_mul product loaded while
// idle. The start and "quiesce" are flip-flop copies per group of blocks.
// Checks (error held until abort_i; nothing is read or written):
//   rows = 0, row_words = 0, dst_kind undefined, CASCADE with
//   ext_addr or ext_row_stride not zero                      -> ILLEGAL_INSTR
//   ext_addr / ext_row_stride not multiples of the beat, src_id >= Banks, a
//   source range past BankDepth, an external range past 2^AxiAddrWidth
//                                                            -> UNSUPPORTED
// On an error or abort_i no new burst or bank read starts; bursts whose AW
// was issued are completed with WSTRB = 0 beats (memory is left unchanged by
// them), pending S2L releases are dropped (the run stops), the data FIFO is
// emptied (which ends a cascade stream), and idle_o returns when every
// response is back.
// Throughput: one W beat per cycle (one word per WordWidth / AxiDataWidth
// cycles). Restriction: WordWidth is a multiple of AxiDataWidth.
`include "strata_assert.svh"
`include "strata_bank_types.svh"

module strata_store_engine
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
#(
  parameter int unsigned AxiDataWidth   = strata_cfg_pkg::AxiDataWidth,  // W beat bits
  parameter int unsigned AxiAddrWidth   = strata_cfg_pkg::AxiAddrWidth,  // byte address bits
  parameter int unsigned Lanes          = strata_cfg_pkg::Lanes,         // N: bytes per word
  parameter int unsigned Banks          = strata_cfg_pkg::Banks,         // banks
  parameter int unsigned BankDepth      = strata_cfg_pkg::BankDepth,     // words per bank
  parameter int unsigned MaxBurst       = 16,  // beats per burst, a power of two, 2..256
  parameter int unsigned MaxOutstanding = 16,  // bursts waiting for BRESP, >= 1
  parameter int unsigned DataDepth      = 4,   // words buffered between bank and W, >= 4
  localparam int unsigned WordWidth     = Lanes * 8,
  localparam int unsigned BankIdxWidth  = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned BankAddrWidth = $clog2(BankDepth),
  localparam type bank_rd_t  = `STRATA_BANK_RD_T(BankIdxWidth, BankAddrWidth),
  localparam type bank_rsp_t = `STRATA_BANK_RSP_T(WordWidth)
) (
  input  logic                       clk_i,           // clock
  input  logic                       rst_ni,          // synchronous reset, active low
  input  logic                       abort_i,         // stop, complete issued bursts, go idle
  input  logic                       fine_i,          // fine-grained dependency mode
  // instruction queue
  input  logic                       instr_valid_i,   // a STORE is waiting
  output logic                       instr_ready_o,   // taken
  input  instr_t                     instr_i,         // the instruction
  input  csr_error_code_index_t      instr_index_i,   // its fetch index
  // semaphores (edge 0: C2S / S2C, edge 1: unused / S2L)
  output logic [1:0]                 acq_req_o,       // acquire request
  output dep_count_t [1:0]           acq_amount_o,    // units
  input  logic [1:0]                 acq_grant_i,     // granted
  output logic [1:0]                 rel_valid_o,     // release
  output dep_count_t [1:0]           rel_amount_o,    // units
  // bank read port (strata_banks)
  output logic                       bank_active_o,    // bank_req_o.bank is read from the
                                                       // next cycle on (strata_banks' read
                                                       // enables)
  output logic                       bank_req_valid_o, // read request
  input  logic                       bank_req_ready_i, // taken
  output bank_rd_t                   bank_req_o,       // bank, word address
  input  logic                       bank_rsp_valid_i, // word of the request two cycles earlier
  input  bank_rsp_t                  bank_rsp_i,       // word
  // AXI write channels (ID fixed by the top)
  output logic                       awvalid_o,       // burst address
  input  logic                       awready_i,       // taken
  output logic [AxiAddrWidth-1:0]    awaddr_o,        // first byte
  output logic [7:0]                 awlen_o,         // beats - 1
  output logic                       wvalid_o,        // write beat
  input  logic                       wready_i,        // taken
  output logic [AxiDataWidth-1:0]    wdata_o,         // beat data
  output logic [AxiDataWidth/8-1:0]  wstrb_o,         // all ones (all zeros after an abort)
  output logic                       wlast_o,         // last beat of the burst
  input  logic                       bvalid_i,        // write response
  output logic                       bready_o,        // always 1
  input  logic [1:0]                 bresp_i,         // response
  // cascade output (AXI4-Stream)
  output logic                       cas_valid_o,     // beat
  input  logic                       cas_ready_i,     // taken
  output logic [AxiDataWidth-1:0]    cas_data_o,      // TDATA
  output logic                       cas_last_o,      // TLAST: the instruction's last beat
  output store_link_id_t             cas_user_o,      // TUSER: its link id
  // status
  output logic                       idle_o,          // no instruction, no write outstanding
  output logic                       busy_o,          // executing an instruction
  output logic                       dep_wait_o,      // waiting on a semaphore
  output logic                       mem_wait_o,      // AW or W waits for the bus
  output logic                       retire_o,        // an instruction finished (pulse)
  output csr_error_code_index_t      index_o,         // index of the current instruction
  output logic                       err_o,           // error (held until abort)
  output err_code_e                  err_code_o,      // its code
  output csr_error_code_index_t      err_index_o      // its instruction index (with err_o)
);

  localparam int unsigned BeatBytes  = AxiDataWidth / 8;
  localparam int unsigned WordBeats  = WordWidth / AxiDataWidth;
  localparam int unsigned WbeatWidth = (WordBeats > 1) ? $clog2(WordBeats) : 1;
  localparam int unsigned BeatsWidth = StoreRowWordsWidth + 8;  // row_words * WordBeats
  localparam int unsigned OutWidth   = $clog2(MaxOutstanding + 1);
  localparam int unsigned DataCntW   = $clog2(DataDepth + 1);
  localparam int unsigned AW         = AxiAddrWidth;

  typedef enum logic [3:0] {
    StIdle,
    StCheck,   // products and partial sums of the range checks
    StCheck2,  // range ends
    StCheck3,  // range comparisons
    StCheck4,  // decision
    StStart,
    StRun,
    StFinish,
    StError,  // error reported: complete issued bursts, wait for abort
    StDrain   // abort: complete issued bursts and responses, then idle
  } state_e;

  state_e state_d, state_q;

  // ---------------------------------------------------------------- instruction fields
  store_ext_addr_t       ext_addr_q;
  store_ext_row_stride_t ext_stride_q;
  store_rows_t           rows_q;
  store_row_words_t      row_words_q;
  store_src_addr_t       src_addr_q;
  store_src_row_stride_t src_stride_q;
  csr_error_code_index_t index_q;
  store_src_id_t         src_id_q;
  store_dst_kind_t       dst_kind_q;
  store_link_id_t        link_id_q;
  dep_hdr_t              deps_q;  // the dependency fields
  logic                  fine_q;
  logic                  take;

  assign instr_ready_o = state_q == StIdle && !abort_i;
  assign take          = instr_valid_i && instr_ready_o;

  always_ff @(posedge clk_i) begin
    if (take) begin
      ext_addr_q   <= store_ext_addr(instr_i);
      ext_stride_q <= store_ext_row_stride(instr_i);
      rows_q       <= store_rows(instr_i);
      row_words_q  <= store_row_words(instr_i);
      src_id_q     <= store_src_id(instr_i);
      dst_kind_q   <= instr_i[StoreDstKindLsb +: StoreDstKindWidth];
      link_id_q    <= store_link_id(instr_i);
      src_addr_q   <= store_src_addr(instr_i);
      src_stride_q <= store_src_row_stride(instr_i);
      deps_q       <= hdr_deps(instr_i);
      index_q      <= instr_index_i;
      fine_q       <= fine_i;
    end
  end

  logic [BeatsWidth-1:0] row_beats;
  assign row_beats = BeatsWidth'(32'(row_words_q) * WordBeats);

  // A cascade STORE: beats to the cascade output (its external fields are 0).
  logic is_cas, illegal_dst;
  assign is_cas      = dst_kind_q == StoreDstCascade;
  assign illegal_dst = !(is_cas || dst_kind_q == StoreDstExt) ||
                       (is_cas && (ext_addr_q != '0 || ext_stride_q != '0));

  // ---------------------------------------------------------------- checks
  // strata_xfer_check: the range checks (products in DSP registers loaded
  // while idle, row-end sums, range ends, comparisons) and the registered
  // field flags, so StCheck4 decides from flip-flops alone. The engine gives
  // the source bank's depth and the source field flag. The word count
  // (rows x row_words, for the W beat total) is a product of the same kind:
  // its DSP input registers load while idle, its output register holds it
  // from StCheck on.
  localparam int unsigned TotalWidth = BeatsWidth + StoreRowsWidth;
  localparam int unsigned WordsWidth = StoreRowsWidth + StoreRowWordsWidth;
  store_rows_t rows_m1_q;               // rows - 1
  store_rows_t take_rows_m1;            // of the instruction offered
  logic        dsp_load;                // the products' input registers load
  logic [WordsWidth-1:0] words;         // rows * row_words
  logic [TotalWidth-1:0] w_total;       // beats of the instruction
  logic        illegal, unsupported;    // the verdict, from flip-flops (StCheck4 on)

  assign take_rows_m1 = store_rows(instr_i) - StoreRowsWidth'(1);
  assign dsp_load     = state_q == StIdle;

  always_ff @(posedge clk_i) begin
    if (take) rows_m1_q <= take_rows_m1;
  end

  strata_xfer_check #(
    .AxiAddrWidth   (AxiAddrWidth),
    .AxiDataWidth   (AxiDataWidth),
    .BeatsWidth     (BeatsWidth),
    .RowsWidth      (StoreRowsWidth),
    .UnitsWidth     (StoreRowWordsWidth),
    .ExtAddrWidth   (StoreExtAddrWidth),
    .ExtStrideWidth (StoreExtRowStrideWidth),
    .MemAddrWidth   (StoreSrcAddrWidth),
    .MemStrideWidth (StoreSrcRowStrideWidth)
  ) u_check (
    .clk_i              (clk_i),
    .rst_ni             (rst_ni),
    .load_i             (dsp_load),
    .take_rows_m1_i     (take_rows_m1),
    .take_ext_stride_i  (store_ext_row_stride(instr_i)),
    .take_mem_rows_m1_i (take_rows_m1),
    .take_mem_stride_i  (store_src_row_stride(instr_i)),
    .rows_i             (rows_q),
    .row_units_i        (row_words_q),
    .row_beats_i        (row_beats),
    .ext_addr_i         (ext_addr_q),
    .ext_stride_i       (ext_stride_q),
    .mem_addr_i         (src_addr_q),
    .mem_rows_m1_i      (rows_m1_q),
    .mem_stride_i       (src_stride_q),
    .mem_depth_i        ((StoreSrcAddrWidth + 1)'(BankDepth)),
    .illegal_i          (illegal_dst),
    .unsup_i            (32'(src_id_q) >= Banks),
    .products_valid_i   (state_q inside {StCheck2, StCheck3, StCheck4, StStart, StRun, StFinish}),
    .decide_i           (state_q == StCheck4),
    .illegal_o          (illegal),
    .unsupported_o      (unsupported)
  );
  strata_dsp_mul #(
    .AWidth  (StoreRowsWidth),
    .BWidth  (StoreRowWordsWidth),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_words (
    .clk_i (clk_i), .ce_in_i (dsp_load), .ce_out_i (1'b1),
    .a_i (store_rows(instr_i)), .b_i (store_row_words(instr_i)), .p_o (words)
  );

  assign w_total = TotalWidth'(words) << $clog2(WordBeats);
  `STRATA_ASSERT(store_check_words, clk_i, rst_ni,
                 !(state_q inside {StCheck2, StCheck3, StCheck4, StStart, StRun, StFinish}) ||
                 words == WordsWidth'(rows_q) * WordsWidth'(row_words_q))
  // ---------------------------------------------------------------- start, run, dependencies
  // strata_engine_shell: the start flags (a copy per block group: bank read
  // counters, burst generator and AW row count, W counters) and the run
  // flag, loaded from the transitions into StStart and StRun written out
  // below (start_d, run_d; asserted equal to the next-state decodes, so
  // run_d does not wait for the field checks' comparisons in front of the
  // route to the run copies), and the dependency sequencer (C2S per row).
  // quiesce_q: state_q is StError or StDrain, replicated the same way: one
  // copy for the control (read room, data FIFO, W valid and counters) and
  // one for the W payload's AxiDataWidth + strobe multiplexers, so one net
  // does not reach both the control and the wide payload.
  localparam int unsigned StartRead = 0, StartAw = 1, StartW = 2, StartCopies = 3;
  localparam int unsigned QuiesceCtl = 0, QuiesceW = 1, QuiesceCopies = 2;
  logic [StartCopies-1:0]   start_q;
  logic [QuiesceCopies-1:0] quiesce_q;
  logic                     start_d, run_d, run_q;
  logic step_valid, step_ready, step_done, finish_valid, finish_ready, sync_waiting;
  logic finish_q, error_q;  // state_q == StFinish / StError (registered, below)
  logic [1:0]       shell_rel_valid;   // the sequencer's releases: S2C out at once, S2L held
  dep_count_t [1:0] shell_rel_amount;  // (below, after the write responses)

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
    .rel_valid_o    (shell_rel_valid),
    .rel_amount_o   (shell_rel_amount),
    .waiting_o      (sync_waiting)
  );

  logic quiesce_d;  // state_d is StError or StDrain, written out (control, below)

  strata_reg_copies #(.Copies (QuiesceCopies)) u_quiesce_copies (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (quiesce_d),
    .mirror_i (state_q == StError || state_q == StDrain),
    .q_o      (quiesce_q)
  );

  logic running, quiesce;
  assign running = run_q;
  assign quiesce = quiesce_q[QuiesceCtl];  // StError or StDrain: complete issued bursts only

  // ---------------------------------------------------------------- bank reads
  // Rows are acquired one ahead of the reads (at most two rows held: the one
  // being read and the next), so a row change costs no read cycle although
  // a read waits for the registered grant: the semaphore's grant path never
  // reaches the bank port. Counters run down to registered zero tests and the
  // read address is a register (no adder or comparator before the port).
  // A read address: src_addr + r * src_row_stride + w, at most the depth (checked).
  localparam int unsigned RdAddrWidth = StoreSrcAddrWidth + 1;
  store_rows_t         rd_rows_left_d, rd_rows_left_q;  // rows after rd_row_q
  store_rows_t         rd_row_d, rd_row_q;          // row being read
  store_row_words_t    rd_left_d, rd_left_q;        // words of the row after the next one
  logic [RdAddrWidth-1:0] rd_row_addr_d, rd_row_addr_q;  // first word of the row
  logic [RdAddrWidth-1:0] rd_addr_d, rd_addr_q;     // next word to read
  logic [1:0]          acq_cnt_d, acq_cnt_q;        // rows acquired, not completely read
  store_rows_t         acq_rows_d, acq_rows_q;      // rows not acquired yet
  logic                acq_more_d, acq_more_q;      // acq_rows_q != 0
  logic                rd_done_d, rd_done_q;        // every word requested
  logic [1:0]          rd_inflight_q;               // reads 1 / 2 cycles ago (bit 1: the
                                                    // response arrives this cycle)
  logic [1:0]          rd_row_end_q;                // ... and it is a row's last word
  logic                rd_row_end, rd_acq, step_fire;
  logic                rd_fire, rd_room, rd_last_word;
  logic [DataCntW-1:0] data_count;
  logic                data_push, data_pop, data_valid, unused_data_ready;
  logic [WordWidth-1:0] data_word;

  // rd_room: data_count + reads in flight < DataDepth, as a flip-flop loaded
  // from the next values (the data FIFO's next count: cleared by quiesce, +1
  // for the response arriving now, -1 for a pop; plus the reads of this
  // cycle and the last), so the bank read request starts at registers. The
  // occupancy is data_count + last cycle's read, from registers; this
  // cycle's response, W pop and read change it by -1 .. +2 and only select
  // one of four comparisons of it (rd_room_k[k]: occupancy + k - 1 <
  // DataDepth): no handshake reaches an adder, so the W handshake's route
  // is not followed by carry chains into rd_room_q.
  logic rd_room_q, rd_room_d;
  logic [DataCntW:0] rd_occ;  // data_count + last cycle's read
  logic [3:0]        rd_room_k;
  assign rd_occ = (DataCntW + 1)'(data_count) + (DataCntW + 1)'(rd_inflight_q[0]);
  for (genvar k = 0; k < 4; k++) begin : g_rd_room_k
    assign rd_room_k[k] = 32'(rd_occ) + k < DataDepth + 1;
  end
  always_comb begin
    unique case ({data_push, data_pop, rd_fire})
      3'b010:                 rd_room_d = rd_room_k[0];  // -1
      3'b000, 3'b011, 3'b110: rd_room_d = rd_room_k[1];  //  0
      3'b001, 3'b100, 3'b111: rd_room_d = rd_room_k[2];  // +1
      default:                rd_room_d = rd_room_k[3];  // +2 (3'b101)
    endcase
    // quiesce clears the data FIFO: the reads of this cycle and the last only
    if (quiesce) rd_room_d = 32'(rd_inflight_q[0]) + 32'(rd_fire) < DataDepth;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) rd_room_q <= 1'b1;
    else         rd_room_q <= rd_room_d;
  end
  assign rd_room      = rd_room_q;
  assign rd_last_word = rd_left_q == '0;
  assign rd_acq       = acq_cnt_q != 2'd0;  // rd_row_q is acquired
  assign step_valid   = running && acq_more_q && acq_cnt_q != 2'd2;
  assign step_fire    = step_valid && step_ready;
  // The source bank is announced for the whole read phase (registers only):
  // a request needs rd_acq, which a step acquired in an earlier cycle of the
  // run, so the announcement always precedes it by a cycle.
  assign bank_active_o    = running && !rd_done_q;
  assign bank_req_valid_o = bank_active_o && rd_acq && rd_room;
  assign bank_req_o.bank = BankIdxWidth'(src_id_q);
  assign bank_req_o.addr = BankAddrWidth'(rd_addr_q);
  assign rd_fire      = bank_req_valid_o && bank_req_ready_i;
  assign rd_row_end   = rd_fire && rd_last_word;

  always_comb begin
    rd_rows_left_d = rd_rows_left_q;
    rd_row_d       = rd_row_q;
    rd_left_d      = rd_left_q;
    rd_row_addr_d  = rd_row_addr_q;
    rd_addr_d      = rd_addr_q;
    rd_done_d      = rd_done_q;
    acq_cnt_d      = acq_cnt_q + 2'(step_fire) - 2'(rd_row_end);
    acq_rows_d     = acq_rows_q;
    acq_more_d     = acq_more_q;
    if (step_fire) begin
      acq_rows_d = acq_rows_q - StoreRowsWidth'(1);
      acq_more_d = acq_rows_q != StoreRowsWidth'(1);
    end
    if (rd_fire) begin
      if (rd_last_word) begin
        rd_rows_left_d = rd_rows_left_q - StoreRowsWidth'(1);
        rd_row_d       = rd_row_q + StoreRowsWidth'(1);
        rd_left_d      = row_words_q - StoreRowWordsWidth'(1);
        rd_row_addr_d  = rd_row_addr_q + RdAddrWidth'(src_stride_q);
        rd_addr_d      = rd_row_addr_q + RdAddrWidth'(src_stride_q);
        rd_done_d      = rd_rows_left_q == '0;
      end else begin
        rd_left_d = rd_left_q - StoreRowWordsWidth'(1);
        rd_addr_d = rd_addr_q + RdAddrWidth'(1);
      end
    end
    if (start_q[StartRead]) begin
      rd_rows_left_d = rows_m1_q;
      rd_row_d       = '0;
      rd_left_d      = row_words_q - StoreRowWordsWidth'(1);
      rd_row_addr_d  = RdAddrWidth'(src_addr_q);
      rd_addr_d      = RdAddrWidth'(src_addr_q);
      rd_done_d      = 1'b0;
      acq_cnt_d      = '0;
      acq_rows_d     = rows_q;
      acq_more_d     = 1'b1;  // rows >= 1 (checked)
    end
  end

  // A row is read once its last word's response is in.
  assign step_done = running && rd_inflight_q[1] && rd_row_end_q[1];
  assign data_push = bank_rsp_valid_i && running;

  strata_fifo #(
    .Width (WordWidth),
    .Depth (DataDepth)
  ) u_data (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni && !quiesce),
    .in_valid_i  (data_push),
    .in_ready_o  (unused_data_ready),
    .in_data_i   (bank_rsp_i.data),
    .out_valid_o (data_valid),
    .out_ready_i (data_pop),
    .out_data_o  (data_word),
    .count_o     (data_count)
  );

  // ---------------------------------------------------------------- AW
  localparam int unsigned BurstWidth = $clog2(MaxBurst + 1);
  // Rows acquired but not yet fully announced on AW: at most the two rows
  // the reads hold plus the rows read ahead of AW (each at least one word in
  // the data FIFO or in flight, so fewer than DataDepth + 2).
  localparam int unsigned AwRowsWidth = $clog2(DataDepth + 5);

  logic                   aw_done;                       // every burst issued
  logic [OutWidth-1:0]    pend_d, pend_q;                // bursts waiting for BRESP
  logic                   gen_done, gen_valid, gen_row_last;
  logic [AW-1:0]          gen_addr;
  logic [BurstWidth-1:0]  unused_gen_beats;
  store_rows_t            aw_row;                        // row of the next burst
  logic [7:0]             burst_len;                     // AWLEN of the next burst
  logic [AwRowsWidth-1:0] aw_rows_d, aw_rows_q;          // acquired rows ahead of AW
  logic                   aw_row_ok_d, aw_row_ok_q;      // aw_rows_q != 0
  logic                   aw_issue, aw_slice_ready, b_fire, lens_ready, idx_ready;
  logic [1:0]             unused_aw_count;

  // Bursts of each row (registered, one per cycle): the issue decision below
  // only selects the generator's next precomputed burst.
  strata_burst_gen #(
    .AddrWidth   (AW),
    .BeatBytes   (BeatBytes),
    .MaxBurst    (MaxBurst),
    .BeatsWidth  (BeatsWidth),
    .RowsWidth   (StoreRowsWidth),
    .StrideWidth (StoreExtRowStrideWidth)
  ) u_bursts (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (start_q[StartAw]),
    .base_i      (AW'(ext_addr_q)),
    .stride_i    (ext_stride_q),
    .rows_i      (rows_q),
    .row_beats_i (row_beats),
    .next_i      (aw_issue),
    .done_o      (gen_done),
    .valid_o     (gen_valid),
    .addr_o      (gen_addr),
    .beats_o     (unused_gen_beats),
    .len_o       (burst_len),
    .row_o       (aw_row),
    .row_last_o  (gen_row_last)
  );

  assign aw_done   = gen_done || is_cas;

  // A row's bursts are announced only once the row is acquired (its data can
  // follow at once): an AW whose W beats wait for a dependency would hold the
  // write channel of the interconnect. Rows are acquired and announced in
  // order, so a count of acquired rows not yet announced, with a registered
  // "not zero", stands for the row comparison (no 16-bit comparator before
  // the issue decision, which enables every register of the generator).
  always_comb begin
    // A cascade STORE announces no bursts: its rows are not counted.
    aw_rows_d = aw_rows_q + AwRowsWidth'(step_fire && !is_cas) -
                AwRowsWidth'(aw_issue && gen_row_last);
    if (start_q[StartAw]) aw_rows_d = '0;
    aw_row_ok_d = aw_rows_d != '0;
  end

  // Fewer than MaxOutstanding bursts wait for BRESP exactly when the index
  // queue has room (it holds one entry per such burst; asserted), so the
  // issue reads that queue's ready flip-flop, not a compare of pend_q.
  assign aw_issue = running && !is_cas && gen_valid && aw_row_ok_q && aw_slice_ready &&
                    lens_ready && idx_ready;
  assign b_fire   = bvalid_i && bready_o;
  assign pend_d   = pend_q + OutWidth'(aw_issue) - OutWidth'(b_fire);

  typedef struct packed {
    logic [AW-1:0] addr;  // first byte
    logic [7:0]    len;   // beats - 1
  } aw_t;
  aw_t aw_head;

  strata_fifo #(
    .T     (aw_t),
    .Depth (2)
  ) u_aw_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (aw_issue),
    .in_ready_o  (aw_slice_ready),
    .in_data_i   (aw_t'{addr: gen_addr, len: burst_len}),
    .out_valid_o (awvalid_o),
    .out_ready_i (awready_i),
    .out_data_o  (aw_head),
    .count_o     (unused_aw_count)
  );

  assign awaddr_o = aw_head.addr;
  assign awlen_o  = aw_head.len;

  // Burst lengths for WLAST, instruction indices for BRESP, in AW order.
  logic       lens_valid, w_fire, cas_fire, beat_fire, w_burst_end, idx_valid;
  logic [7:0] lens_len;
  csr_error_code_index_t b_index;
  logic [OutWidth-1:0] unused_lens_count, idx_count;

  strata_fifo #(
    .Width (8),
    .Depth (MaxOutstanding)
  ) u_lens (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (aw_issue),
    .in_ready_o  (lens_ready),
    .in_data_i   (burst_len),
    .out_valid_o (lens_valid),
    .out_ready_i (w_fire && w_burst_end),
    .out_data_o  (lens_len),
    .count_o     (unused_lens_count)
  );

  strata_fifo #(
    .Width (CSR_ERROR_CODE_INDEX_WIDTH),
    .Depth (MaxOutstanding)
  ) u_index (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (aw_issue),
    .in_ready_o  (idx_ready),
    .in_data_i   (index_q),
    .out_valid_o (idx_valid),
    .out_ready_i (b_fire),
    .out_data_o  (b_index),
    .count_o     (idx_count)
  );

  // ---------------------------------------------------------------- W
  logic [7:0]            w_beat_d, w_beat_q;   // beat within the burst
  logic [WbeatWidth-1:0] w_wbeat_d, w_wbeat_q; // beat within the word
  logic [TotalWidth-1:0]    w_sent_d, w_sent_q;  // beats of this instruction sent
  assign w_burst_end = w_beat_q == lens_len;
  // Normal beats need data; after an error or abort, issued bursts complete
  // with empty beats.
  assign wvalid_o    = lens_valid && (quiesce || data_valid);
  assign w_fire      = wvalid_o && wready_i;
  assign wdata_o     = quiesce_q[QuiesceW]
                       ? '0 : data_word[32'(w_wbeat_q) * AxiDataWidth +: AxiDataWidth];
  assign wstrb_o     = quiesce_q[QuiesceW] ? '0 : '1;
  assign wlast_o     = w_burst_end;
  // Cascade beats: the data FIFO's words, no burst bookkeeping. An error or
  // an abort empties the FIFO, which ends the stream mid-transfer: the
  // receiving stage is stopped with this one (docs/cascade.md).
  logic cas_last_d, cas_last_q;  // the next beat is the instruction's last
  // TLAST is registered from two compares of registers only, made beside the
  // beat handshake (is beat w_sent_q or w_sent_q + 1 the last?); the
  // handshake then only selects one, so it never runs into the compare.
  logic last_if_held, last_if_sent;
  assign last_if_held = TotalWidth'(w_sent_q) + TotalWidth'(1) == w_total;
  assign last_if_sent = TotalWidth'(w_sent_q) + TotalWidth'(2) == w_total;
  assign cas_valid_o = is_cas && data_valid && !quiesce;
  assign cas_fire    = cas_valid_o && cas_ready_i;
  assign cas_data_o  = data_word[32'(w_wbeat_q) * AxiDataWidth +: AxiDataWidth];
  assign cas_last_o  = cas_last_q;
  assign cas_user_o  = link_id_q;
  assign beat_fire   = w_fire || cas_fire;
  assign data_pop    = beat_fire && !quiesce && 32'(w_wbeat_q) == WordBeats - 1;

  always_comb begin
    w_beat_d  = w_beat_q;
    w_wbeat_d = w_wbeat_q;
    w_sent_d  = w_sent_q;
    if (w_fire) w_beat_d = w_burst_end ? 8'd0 : w_beat_q + 8'd1;
    if (beat_fire) begin
      w_wbeat_d = (32'(w_wbeat_q) == WordBeats - 1) ? '0 : w_wbeat_q + WbeatWidth'(1);
      w_sent_d  = w_sent_q + 1'b1;
    end
    if (start_q[StartW]) w_sent_d = '0;
    if (quiesce) w_wbeat_d = '0;
    if (start_q[StartW])  cas_last_d = w_total == TotalWidth'(1);
    else if (beat_fire)   cas_last_d = last_if_sent;
    else                  cas_last_d = last_if_held;
  end

  // ---------------------------------------------------------------- B
  logic      err_d, err_q, b_error;
  err_code_e err_code_d, err_code_q;
  csr_error_code_index_t err_index_d, err_index_q;

  assign bready_o = 1'b1;
  assign b_error  = b_fire && bresp_i != 2'b00;
  logic  new_b_error;  // a write error while none is recorded: it stops the engine
  assign new_b_error = b_error && !err_q;

  // ---------------------------------------------------------------- S2L after the responses
  // S2L orders a LOAD after this STORE's external writes (docs/isa.md), and
  // AXI orders a read only after a write whose response has arrived, so the
  // sequencer's rel1 release (at the finish) waits in a queue until every
  // response of the instruction is in; S2C leaves at once. An entry holds the
  // amount and the mark: the bursts issued so far, counted modulo
  // 2^MarkWidth as responses counted + responses pending (b_count_q +
  // pend_q: both registers, and every burst of the instruction was issued
  // before its finish). Responses come in AW order, so the head is due when
  // b_count_q has reached its mark. Several finished STOREs may wait (the
  // next one starts with responses outstanding); they leave in order, one
  // per cycle. A head's mark is at most pend_q ahead of the count (asserted);
  // a cascade STORE issues no burst, so its mark may equal the one before it
  // and the count may pass it while it waits behind that one (by one per
  // cycle, at most the queue's depth): the head is due when the mark is not
  // ahead, which one more bit than the counts need keeps unambiguous. A
  // finish waits while the queue is full (only cascade STOREs, which have no
  // burst outstanding, can fill it).
  // The decision reads registers only (the response count, pend_q, the head
  // register) and the release leaves a flip-flop: BVALID reaches the count's
  // adder, not the semaphores. An error or an abort drops the queue (the run
  // stops; nothing more is released).
  localparam int unsigned MarkWidth = OutWidth + 1;
  typedef struct packed {
    dep_count_t          amount;  // S2L units
    logic [MarkWidth-1:0] mark;   // bursts issued up to the instruction's last, mod 2^MarkWidth
  } rel1_t;
  rel1_t               rel1_head;
  logic                rel1_ready, rel1_wait, rel1_go, rel1_valid_q;
  dep_count_t          rel1_amount_q;
  logic [MarkWidth-1:0] b_count_q;         // responses received, mod 2^MarkWidth
  logic [MarkWidth-1:0] rel1_mark;         // bursts issued so far, mod 2^MarkWidth
  logic [MarkWidth-1:0] rel1_ahead;        // the head's mark ahead of the count (mod)
  logic                 rel1_due;          // the count has reached the head's mark
  logic [$clog2(MaxOutstanding + 2)-1:0] unused_rel1_count;

  assign rel1_mark = b_count_q + MarkWidth'(pend_q);

  strata_fifo #(
    .T      (rel1_t),
    .Depth  (MaxOutstanding + 1),
    .OutReg (1'b1)
  ) u_rel1 (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni && !abort_i),
    .in_valid_i  (shell_rel_valid[1]),
    .in_ready_o  (rel1_ready),
    .in_data_i   (rel1_t'{amount: shell_rel_amount[1], mark: rel1_mark}),
    .out_valid_o (rel1_wait),
    .out_ready_i (rel1_go),
    .out_data_o  (rel1_head),
    .count_o     (unused_rel1_count)
  );

  assign rel1_ahead = rel1_head.mark - b_count_q;
  assign rel1_due   = rel1_ahead == '0 || rel1_ahead > MarkWidth'(pend_q);
  assign rel1_go    = rel1_wait && rel1_due && !quiesce && !abort_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      b_count_q    <= '0;
      rel1_valid_q <= 1'b0;
    end else begin
      b_count_q    <= b_count_q + MarkWidth'(b_fire);
      rel1_valid_q <= rel1_go;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rel1_go) rel1_amount_q <= rel1_head.amount;
  end

  assign rel_valid_o  = {rel1_valid_q, shell_rel_valid[0]};
  assign rel_amount_o = {rel1_amount_q, shell_rel_amount[0]};

  // ---------------------------------------------------------------- control
  // All sent: registered (all_sent_q: sent in the previous cycle of StRun;
  // nothing more is sent then, so it stays sent), so the 40-bit beat compare
  // reaches a flip-flop, not the state register. One cycle per STORE.
  logic all_sent, all_sent_q;
  assign all_sent     = rd_done_q && aw_done && w_sent_q == w_total;
  // The sequencer's finish request and the error half of its abort leave
  // flip-flops loaded from state_d (below), as in strata_load_engine.
  assign finish_valid = finish_q && rel1_ready;

  // The two transitions every state can take: a write error (of this or an
  // earlier instruction) stops the engine; an abort (held by the controller
  // until every client is idle) drains once, and an idle engine with
  // responses outstanding drains them too.
  logic b_stop, abort_drain, drained;
  assign b_stop      = new_b_error && state_q != StDrain;
  assign abort_drain = abort_i && state_q != StDrain &&
                       !(state_q == StIdle && pend_q == '0 && !lens_valid);
  assign drained     = !awvalid_o && !lens_valid && pend_q == '0;

  always_comb begin
    state_d     = state_q;
    err_d       = err_q;
    err_code_d  = err_code_q;
    err_index_d = err_index_q;
    unique case (state_q)
      StIdle:   if (take) state_d = StCheck;
      StCheck:  state_d = StCheck2;
      StCheck2: state_d = StCheck3;
      StCheck3: state_d = StCheck4;
      StCheck4: begin
        // The index is loaded whether the checks fail or not (it only counts
        // with err_q): its 16 enables do not wait for the range comparisons.
        err_index_d = index_q;
        if (illegal || unsupported) begin
          state_d     = StError;
          err_d       = 1'b1;
          err_code_d  = illegal ? ErrIllegalInstr : ErrUnsupported;
        end else begin
          state_d = StStart;
        end
      end
      StStart:  state_d = StRun;  // the dependency sequencer is idle (asserted)
      StRun:    if (all_sent_q) state_d = StFinish;
      StFinish: if (finish_ready) state_d = StIdle;
      StError:  ;
      StDrain:  if (drained) state_d = StIdle;
      default:  state_d = StIdle;
    endcase
    if (b_stop) begin
      state_d     = StError;
      err_d       = 1'b1;
      err_code_d  = ErrAxiWrite;
      err_index_d = b_index;
    end
    if (abort_drain) state_d = StDrain;
    if (abort_i) err_d = 1'b0;
  end

  // The transitions into StStart and StRun, and the next values of the
  // registered decodes (finish, error, quiesce), written out from the
  // transitions (asserted equal to the decodes of state_d): a write error
  // or an abort wins over the first four. The instruction queue's valid
  // only moves StIdle to StCheck, in none of them, so the fetcher's valid
  // is not five LUT levels (the decodes of state_d) in front of the quiesce
  // copies and error_q.
  logic error_d, finish_d;
  assign start_d   = state_q == StCheck4 && !illegal && !unsupported && !new_b_error && !abort_i;
  assign run_d     = (state_q == StStart || (state_q == StRun && !all_sent_q)) && !new_b_error &&
                     !abort_i;
  assign finish_d  = ((state_q == StRun && all_sent_q) || (state_q == StFinish && !finish_ready)) &&
                     !b_stop && !abort_drain;
  assign error_d   = (state_q == StError || (state_q == StCheck4 && (illegal || unsupported)) ||
                      b_stop) && !abort_drain;
  assign quiesce_d = error_d || abort_drain || (state_q == StDrain && !drained);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q       <= StIdle;
      finish_q      <= 1'b0;
      error_q       <= 1'b0;
      all_sent_q    <= 1'b0;
      err_q         <= 1'b0;
      err_code_q    <= ErrNone;
      aw_rows_q     <= '0;
      aw_row_ok_q   <= 1'b0;
      pend_q        <= '0;
      rd_inflight_q <= '0;
      w_beat_q      <= 8'd0;
      w_wbeat_q     <= '0;
      cas_last_q    <= 1'b0;
    end else begin
      state_q       <= state_d;
      finish_q      <= finish_d;
      error_q       <= error_d;
      all_sent_q    <= state_q == StRun && all_sent;
      err_q         <= err_d;
      err_code_q    <= err_code_d;
      aw_rows_q     <= aw_rows_d;
      aw_row_ok_q   <= aw_row_ok_d;
      pend_q        <= pend_d;
      rd_inflight_q <= {rd_inflight_q[0], rd_fire};
      w_beat_q      <= w_beat_d;
      w_wbeat_q     <= w_wbeat_d;
      cas_last_q    <= cas_last_d;
    end
  end

  always_ff @(posedge clk_i) begin
    err_index_q   <= err_index_d;
    rd_rows_left_q <= rd_rows_left_d;
    rd_row_q      <= rd_row_d;
    rd_left_q     <= rd_left_d;
    rd_row_addr_q <= rd_row_addr_d;
    rd_addr_q     <= rd_addr_d;
    acq_cnt_q     <= acq_cnt_d;
    acq_rows_q    <= acq_rows_d;
    acq_more_q    <= acq_more_d;
    rd_done_q     <= rd_done_d;
    rd_row_end_q  <= {rd_row_end_q[0], rd_row_end};
    w_sent_q      <= w_sent_d;
  end

  assign idle_o      = state_q == StIdle && pend_q == '0 && !lens_valid && !awvalid_o &&
                       !rel1_wait && !rel1_valid_q;
  assign busy_o      = state_q inside {StCheck, StCheck2, StCheck3, StCheck4, StStart, StRun,
                                        StFinish};
  assign dep_wait_o  = sync_waiting;
  assign mem_wait_o  = (awvalid_o && !awready_i) || (wvalid_o && !wready_i) ||
                       (cas_valid_o && !cas_ready_i);
  assign retire_o    = state_q == StFinish && finish_ready;
  assign index_o     = index_q;
  assign err_o       = err_q;
  assign err_code_o  = err_code_q;
  assign err_index_o = err_index_q;

  // ---------------------------------------------------------------- checks
  logic unused_idx_valid;
  assign unused_idx_valid = idx_valid;

  `STRATA_ASSERT(store_sent_stays, clk_i, rst_ni,
                 !(state_q == StRun && all_sent_q) || all_sent)
  `STRATA_ASSERT(store_rd_room, clk_i, rst_ni, rd_room_q ==
                 (32'(data_count) + 32'(rd_inflight_q[0]) + 32'(rd_inflight_q[1]) < DataDepth))
  `STRATA_ASSERT_STREAM(store_aw, clk_i, rst_ni, awvalid_o, awready_i, {awaddr_o, awlen_o})
  `STRATA_ASSERT_STREAM(store_w, clk_i, rst_ni, wvalid_o, wready_i, {wdata_o, wstrb_o, wlast_o})
  // The cascade output holds its beat until taken, except when an error or
  // an abort stops the engine (the chain stops with it).
  `STRATA_ASSERT(store_cas_stable, clk_i, rst_ni,
                 !($past(cas_valid_o && !cas_ready_i) && !quiesce) ||
                 (cas_valid_o && $stable({cas_data_o, cas_last_o, cas_user_o})))
  `STRATA_ASSERT(store_cas_last, clk_i, rst_ni, !cas_valid_o ||
                 cas_last_o == (TotalWidth'(w_sent_q) + TotalWidth'(1) == w_total))
  `STRATA_ASSERT(store_one_channel, clk_i, rst_ni, !(cas_valid_o && wvalid_o))
  `STRATA_ASSERT_STREAM(store_rd, clk_i, rst_ni, bank_req_valid_o, bank_req_ready_i,
                        bank_req_o)
  // The acquired-row count stands for "the burst's row is acquired": every
  // row before the one being read, that row once acquired, and the next one
  // when it is acquired too (two rows held).
  `STRATA_ASSERT(store_aw_acquired, clk_i, rst_ni,
                 !aw_issue || aw_row < rd_row_q || (aw_row == rd_row_q && rd_acq) ||
                 (32'(aw_row) == 32'(rd_row_q) + 1 && acq_cnt_q == 2'd2))
  `STRATA_ASSERT(store_aw_rows, clk_i, rst_ni, !(step_fire && aw_rows_q == '1))
  `STRATA_ASSERT(store_next_decodes, clk_i, rst_ni,
                 start_d == (state_d == StStart) && run_d == (state_d == StRun) &&
                 finish_d == (state_d == StFinish) && error_d == (state_d == StError) &&
                 quiesce_d == (state_d == StError || state_d == StDrain))
  `STRATA_ASSERT(store_pend_index, clk_i, rst_ni, pend_q == idx_count)
  // Every burst of a finishing STORE was issued before its finish (the mark
  // counts them all), the queue has room, and the head's mark is never
  // behind the response count (no more than pend_q responses ahead of it;
  // after an error the queue waits for the abort and is not looked at).
  `STRATA_ASSERT(store_rel1_no_issue, clk_i, rst_ni, !(shell_rel_valid[1] && aw_issue))
  `STRATA_ASSERT(store_rel1_room, clk_i, rst_ni, !shell_rel_valid[1] || rel1_ready)
  `STRATA_ASSERT(store_rel1_mark, clk_i, rst_ni,
                 !rel1_wait || quiesce || abort_i || rel1_ahead <= MarkWidth'(pend_q) ||
                 MarkWidth'(b_count_q - rel1_head.mark) <= MarkWidth'(MaxOutstanding + 1))
  `STRATA_ASSERT(store_sync_flags, clk_i, rst_ni,
                 finish_q == (state_q == StFinish) && error_q == (state_q == StError))
  `STRATA_ASSERT(store_b_expected, clk_i, rst_ni, !bvalid_i || (pend_q != '0 && idx_valid))
  `STRATA_ASSERT(store_data_room, clk_i, rst_ni, !data_push || unused_data_ready)
  `STRATA_ASSERT(store_4k, clk_i, rst_ni,
                 !awvalid_o || 32'(awaddr_o[11:0]) + (32'(awlen_o) + 1) * BeatBytes <= 4096)

`ifndef SYNTHESIS
  initial begin
    assert (AxiDataWidth >= 8 && AxiDataWidth <= 1024 && 2 ** $clog2(AxiDataWidth) == AxiDataWidth)
      else $fatal(1, "strata_store_engine: AxiDataWidth must be a power of two");
    assert (WordWidth % AxiDataWidth == 0)
      else $fatal(1, "strata_store_engine: N * 8 must be a multiple of AxiDataWidth");
    assert (MaxBurst >= 2 && MaxBurst <= 256 && 2 ** $clog2(MaxBurst) == MaxBurst &&
            MaxOutstanding >= 1 && DataDepth >= 4)
      else $fatal(1, "strata_store_engine: MaxBurst, MaxOutstanding or DataDepth out of range");
    assert (Banks <= 2 ** StoreSrcIdWidth && BankDepth <= 2 ** StoreSrcAddrWidth &&
            AxiAddrWidth >= 12 && AxiAddrWidth <= StoreExtAddrWidth)
      else $fatal(1, "strata_store_engine: memory sizes exceed the instruction fields");
  end
`endif

endmodule : strata_store_engine
