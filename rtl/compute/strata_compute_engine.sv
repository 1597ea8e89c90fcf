// SPDX-License-Identifier: Apache-2.0
// COMPUTE engine (docs/isa.md, COMPUTE; docs/architecture.md, RTL structure):
// executes CONV, FC (batch), POOL and DEPTHWISE instructions from the compute
// queue.
//
//   instr -> strata_compute_decode (checks, geometry; ILLEGAL_INSTR /
//            UNSUPPORTED held until abort_i)
//         -> strata_engine_shell (start and run flags; strata_dep_sync: L2C / S2C
//            acquired, C2S / C2L released; steps:
//            output rows, FC neurons, POOL input rows of each group)
//   strata_conv_walker (padding-skip address walk, one beat per cycle)
//     -> bank read request (issued ahead: up to ReadDepth beats in flight or
//        buffered, so the bank latency is hidden and responses are always
//        absorbed) -> operand FIFO
//     -> strata_pe_array (P PEs, operand broadcast, caches written by the load
//        engine and by this engine's PE_CACHE / PE_TRANSPOSE results)
//     -> strata_requant (P lanes: M, S of channel param_base + p; FC: of the
//        neuron's channel in every lane) -> [input slice ->
//        strata_window_gen -> window slice -> strata_pool, post clamp] ->
//        result register slice -> strata_dst_writer (bank, PE cache,
//        transpose)
//   POOL: operand FIFO -> input slice -> strata_window_gen -> window slice ->
//   strata_pool (no PE array).
//   DEPTHWISE: operand FIFO -> input slice -> strata_window_gen -> window
//   slice -> depthwise beats (each window transposed into B = ceil(taps / N)
//   beats, PE p receiving channel p's taps N at a time; the array's operand is
//   one per PE) -> strata_pe_array -> strata_requant (the P channels'
//   parameters, as CONV) -> result register slice -> strata_dst_writer.
//   Depthwise beat b: PE p's lane l holds channel p of tap b * N + l, cache
//   address cache_base + b; a copy of the mode flag per PE selects its operand.
//   Every slice (input, window, post clamp, result, cache) is a 2-entry
//   strata_fifo.
//   Partial sums (acc_in, acc_out; docs/isa.md, "Partial sums"): with
//   acc_in the walker's four fill beats before each window read the pixel's
//   partial sums from bank acc_id; at the operand FIFO's head they go to the
//   fill register (byte k of word k: lane p's int32 start value) instead of
//   the PE array, which takes that register in place of the bias with the
//   window's first beat. With acc_out each result of the PE array enters the
//   requantiser four times, as byte 0, 1, 2, 3 of every lane's accumulator
//   (sign-extended), with M = 1, S = 0 and the full clamp: the bytes pass
//   unchanged and the writer stores 4 words per result.
//   strata_param_ram: bias / M / S, P banks by channel mod P; CONV reads the P
//   channels once per instruction, FC one channel per neuron (with the first
//   beat; bias and M/S then travel in small FIFOs beside the beats).
//
// Throughput: one beat (P x N MACs) per cycle sustained, across windows and
// rows (no bubble between output pixels); the result path takes one result
// per cycle, so only a stalled destination can slow the array. Per
// instruction: 23 cycles of checks (one shared multiplier), one start cycle,
// then the walk; the pipeline drains before the next instruction. The checks
// of the next instruction run while the current one executes (decode slot),
// so a queued instruction starts one idle cycle after the previous retires.
// Latency (no stall, units held): first beat into the array 30 cycles after
// the instruction is taken (when the engine was empty); retirement 21 cycles
// after the last beat.
// Timing: no ready chain crosses two blocks. The writer's ready (it follows
// the bank write port) stops at the result slice, the pooling unit's
// internal readies at its credit-based output buffer, its input ready at
// the window slice; the window generator and the requantiser see registered
// readies.
// Done: every result is written and, with pooling, the window generator has
// taken every pixel; the dependency side then acquires what is left and
// releases the rest, retire_o pulses, and the datapath is empty.
// Errors: a decode error is reported before anything is acquired, read or
// written, and held until abort_i; one of the queued instruction only after
// the current one has retired (program order).
// Abort (abort_i, from the controller): every state returns to idle after the
// bank reads in flight have answered; the datapath blocks are then cleared
// by a one-cycle local reset (PE caches and parameter RAM keep their contents),
// one flip-flop per group of blocks (seven: front end, FC parameters, PE array,
// requantiser, window generator, pooling, back end).
// Sparse builds (Sparse = 1; docs/sparsity.md, "The sparse build"): a packed
// CONV (cfg.packed_rows != 0) walks with strata_packed_walker instead of
// strata_conv_walker. Each of its beats reads two bank words, the row's
// current and next dense rows, on the two compute read ports (the second
// reads the banks' replica); a word outside the image is replaced by zeros as
// it arrives (its inside flag travels the bank latency in a delay line), and
// the beat enters the PE array as the window {current, next} with
// strata_pe_array.in_packed_i, so each PE's control plane picks the lanes and
// the accumulator. Every other beat of a sparse build reads the second port too
// (its word is dropped), so the two response streams stay in step. LOAD
// CONTROL words arrive on the PE write port with pe_ctl_i: PE pe_i's control
// plane, or with pe_i = P the packed walker's schedule. A schedule the walker
// refuses (outside the kernel, not in dense order) stops the instruction with
// UNSUPPORTED. Dense builds (Sparse = 0) have none of this; their second read
// port is idle and pe_ctl_i is 0.
// Streams follow strata_pkg's rules; the bank read response has no ready (a
// request is only issued with room for its answer).
`include "strata_assert.svh"
`include "strata_bank_types.svh"

module strata_compute_engine
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
  import strata_compute_pkg::*;
  import strata_cfg_pkg::AccWidth, strata_cfg_pkg::MultWidth, strata_cfg_pkg::ShiftWidth;
  import strata_pkg::*;
#(
  parameter int unsigned Pes           = strata_cfg_pkg::Pes,            // P (= N)
  parameter int unsigned Lanes         = strata_cfg_pkg::Lanes,          // N
  parameter int unsigned Banks         = strata_cfg_pkg::Banks,          // banks
  parameter int unsigned BankDepth     = strata_cfg_pkg::BankDepth,      // words per bank
  parameter int unsigned PeCacheDepth  = strata_cfg_pkg::PeCacheDepth,   // words per PE cache
  parameter int unsigned ParamDepth    = strata_cfg_pkg::ParamDepth,     // parameter channels
  parameter int unsigned MaxKernel     = strata_cfg_pkg::MaxKernel,      // conv kernel side
  parameter int unsigned MaxPoolKernel = strata_cfg_pkg::MaxPoolKernel,  // pooling window side
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth,  // pooling row length
  parameter bit          Sparse        = strata_cfg_pkg::Sparse,         // packed CONVs (decoder)
  parameter int unsigned PeFabricLanes = strata_cfg_pkg::PeFabricLanes,  // lanes with LUT products
  parameter int unsigned ActTables     = strata_cfg_pkg::ActTables,      // activation tables
  parameter int unsigned ReadDepth     = 5,   // bank reads in flight + buffered, >= 3
  parameter int unsigned IncWidth      = 16,  // macs_o bits
  localparam int unsigned WordWidth      = Lanes * 8,
  localparam int unsigned BankIdxWidth   = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned BankAddrWidth  = $clog2(BankDepth),
  localparam int unsigned PeIdxWidth     = (Pes > 1) ? $clog2(Pes) : 1,
  localparam int unsigned PeSelWidth     = Sparse ? $clog2(Pes + 1) : PeIdxWidth,  // + schedule
  localparam int unsigned CacheAddrWidth = $clog2(PeCacheDepth),
  localparam int unsigned ParamIdxWidth  = $clog2(ParamDepth),
  localparam int unsigned TableWords     = (ActTables * 256 + Lanes - 1) / Lanes,
  localparam int unsigned TableAddrWidth = (TableWords > 1) ? $clog2(TableWords) : 1,
  // Bank port payloads (strata_bank_types.svh).
  localparam type bank_wr_t  = `STRATA_BANK_WR_T(BankIdxWidth, BankAddrWidth, WordWidth),
  localparam type bank_rd_t  = `STRATA_BANK_RD_T(BankIdxWidth, BankAddrWidth),
  localparam type bank_rsp_t = `STRATA_BANK_RSP_T(WordWidth)
) (
  input  logic                      clk_i,            // clock
  input  logic                      rst_ni,           // synchronous reset, active low
  input  logic                      abort_i,          // controller abort: stop, drain, go idle
  input  logic                      fine_i,           // fine-grained dependency mode (CSR)
  // instruction queue
  input  logic                      instr_valid_i,    // a COMPUTE is waiting
  output logic                      instr_ready_o,    // taken
  input  instr_t                    instr_i,          // the instruction
  input  csr_error_code_index_t     instr_index_i,    // its fetch index
  // semaphores (edge 0: L2C in / C2S out, edge 1: S2C in / C2L out)
  output logic [1:0]                acq_req_o,        // acquire request
  output dep_count_t [1:0]          acq_amount_o,     // units
  input  logic [1:0]                acq_grant_i,      // granted (pulse)
  output logic [1:0]                rel_valid_o,      // release (pulse)
  output dep_count_t [1:0]          rel_amount_o,     // units
  // bank read port (strata_banks compute read)
  output logic                      rd_req_valid_o,   // read request
  input  logic                      rd_req_ready_i,   // taken
  output bank_rd_t                  rd_req_o,         // bank, word address
  input  logic                      rd_rsp_valid_i,   // word of an earlier request (in order)
  input  bank_rsp_t                 rd_rsp_i,         // word
  // second bank read port (strata_banks cr1, sparse builds: the packed beat's next word)
  output logic                      rd1_req_valid_o,  // read request (with every rd_req)
  input  logic                      rd1_req_ready_i,  // taken (always 1)
  output bank_rd_t                  rd1_req_o,        // bank, word address
  input  logic                      rd1_rsp_valid_i,  // word, with rd_rsp_valid_i
  input  bank_rsp_t                 rd1_rsp_i,        // word
  // bank write port (strata_banks compute write)
  output logic                      wr_valid_o,       // write request
  input  logic                      wr_ready_i,       // written
  output bank_wr_t                  wr_req_o,         // bank, word address, word
  // PE cache write port (load engine)
  input  logic                      pe_valid_i,       // word to write
  output logic                      pe_ready_o,       // written
  input  logic [PeSelWidth-1:0]     pe_i,             // PE (P: the schedule, with pe_ctl_i)
  input  logic                      pe_ctl_i,         // a LOAD CONTROL word (sparse builds)
  input  logic [CacheAddrWidth-1:0] pe_addr_i,        // cache word address
  input  logic [WordWidth-1:0]      pe_data_i,        // word
  // parameter RAM write port (load engine)
  input  logic                      param_valid_i,    // entry to write
  output logic                      param_ready_o,    // written (always 1)
  input  logic [ParamIdxWidth-1:0]  param_channel_i,  // channel
  input  logic [63:0]               param_data_i,     // bias (bytes 0-3), M (4-5), S (6)
  // activation-table write port (load engine, LOAD TABLE)
  input  logic                      tab_valid_i,      // word to write
  output logic                      tab_ready_o,      // written
  input  logic [TableAddrWidth-1:0] tab_addr_i,       // word address
  input  logic [WordWidth-1:0]      tab_data_i,       // word: entries addr * N .. addr * N + N - 1
  // status
  output logic                      idle_o,           // no instruction, nothing outstanding
  output logic                      busy_o,           // executing an instruction
  output logic                      dep_wait_o,       // waiting on a semaphore
  output logic                      retire_o,         // an instruction finished (pulse)
  output csr_error_code_index_t     index_o,          // index of the current instruction
  output logic                      err_o,            // error (held until abort)
  output err_code_e                 err_code_o,       // its code: ILLEGAL_INSTR or UNSUPPORTED
  output csr_error_code_index_t     err_index_o,      // its instruction index (with err_o)
  output logic                      mac_active_o,     // a beat entered the PE array
  output logic [IncWidth-1:0]       macs_o,           // MACs this cycle (lanes with data x P)
  output logic                      stall_out_o       // an operand waits for the result path
);

  localparam int unsigned CntWidth  = $clog2(ReadDepth + 1);
  localparam int unsigned ParWidth  = AccWidth + MultWidth + ShiftWidth;
  localparam int unsigned MsWidth   = MultWidth + ShiftWidth;
  localparam int unsigned UnitWidth = $clog2(Lanes + 1);
  localparam int unsigned MsDepth   = 16;   // FC neurons between array input and requant
  localparam int unsigned PendWidth = 8;    // row releases waiting for a step_done cycle

  typedef enum logic [2:0] {
    StIdle,    // no instruction launched (the decode slot may hold or check one)
    StStart,   // dependency sequencer, walker, writer, parameters
    StRun,     // walk and results
    StFinish,  // remaining acquisitions, releases
    StError,   // error reported, waiting for abort
    StAbort    // abort: bank reads in flight answer, then the datapath is cleared
  } state_e;

  state_e state_d, state_q;

  // ---------------------------------------------------------------- instruction
  // Decode slot: the next instruction is taken from the queue and checked
  // while the current one runs (the checks take 23 cycles), so back-to-back
  // instructions lose no time to decoding. It launches when the engine is
  // idle (the current-instruction registers copy the slot's header fields
  // and decoded configuration in every idle cycle, so they hold the launched
  // instruction's from the launch on); a decode error is reported only then,
  // in program order.
  typedef enum logic [1:0] {
    SlotEmpty,
    SlotDecode,  // strata_compute_decode checks
    SlotReady    // checked: dec_code / dec_cfg valid
  } slot_e;

  slot_e       slot_d, slot_q;
  logic        take, launch;
  logic        flush_d, flush_q;   // local reset of the datapath at the end of an abort
  csr_error_code_index_t nx_index_q;
  dep_hdr_t    nx_deps_q;
  logic        nx_fine_q;
  csr_error_code_index_t index_q;
  dep_hdr_t    deps_q;
  logic        fine_q;

  // Not in the cycle of the local reset that ends an abort (it would clear
  // the decoder as it takes the instruction), nor while an error is held.
  // The slot / state / flush part is a flip-flop loaded from their next
  // values (instr_ok_q, asserted equal), so the fetcher's compute queue sees
  // a register and the abort input, not the state decode.
  logic instr_ok_q;
  localparam int unsigned BusyMisc = 0, BusyWalk = 1, BusyWr = 2, BusyPool = 3, BusyCopies = 4;
  logic [BusyCopies-1:0] busy_q;
  assign instr_ready_o = instr_ok_q && !abort_i;
  assign take          = instr_valid_i && instr_ready_o;

  always_ff @(posedge clk_i) begin
    if (take) begin
      nx_index_q      <= instr_index_i;
      nx_deps_q       <= hdr_deps(instr_i);
      nx_fine_q       <= fine_i;
    end
    // Copied in every idle cycle, so also in the launch cycle: the enable of
    // these and of cfg (some 500 flip-flops across the engine) is "idle"
    // alone, not the launch decision; it comes from flip-flops (busy_q
    // below), a copy per group of these registers.
    if (!busy_q[BusyMisc]) begin
      index_q      <= nx_index_q;
      deps_q       <= nx_deps_q;
      fine_q       <= nx_fine_q;
    end
  end

  // Datapath blocks are cleared by reset and at the end of an abort (in the
  // cycle of flush_q). The datapath reset is a flip-flop per group of blocks
  // placed together (strata_reg_copies), 0 in reset and loaded with !flush_d
  // otherwise: each group's reset net starts at its own flip-flop,
  // with no LUT and no net shared with another group. It follows rst_ni one
  // cycle late, which the reset's length covers (nothing reaches the
  // datapath in the first cycle after reset: the queues are empty).
  // Simulation starts it at 0, the power-up value of an FPGA flip-flop, so
  // the first clock edge (before rst_ni has been sampled) finds the datapath
  // in reset as on the FPGA, not in a random state.
  localparam int unsigned DpRstFront   = 0;  // decode, walker, operand FIFOs, CONV params
  localparam int unsigned DpRstFc      = 1;  // FC parameter path
  localparam int unsigned DpRstPe      = 2;  // PE array
  localparam int unsigned DpRstRequant = 3;  // requantiser
  localparam int unsigned DpRstWindow  = 4;  // window generator
  localparam int unsigned DpRstPool    = 5;  // pooling unit, clamp slice, frame counter
  localparam int unsigned DpRstBack    = 6;  // result slice, writer, cache slice, pending count
  localparam int unsigned DpRstCopies  = 7;
  logic [DpRstCopies-1:0] dp_rst_n;

  strata_reg_copies #(.Copies (DpRstCopies)) u_dp_rst (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (!flush_d),
    .mirror_i (!flush_q),
    .q_o      (dp_rst_n)
  );

  // ---------------------------------------------------------------- decode
  logic      dec_busy, dec_done;
  err_code_e dec_code;
  ce_cfg_t   dec_cfg;  // of the instruction in the decode slot
  ce_cfg_t   cfg;      // of the launched instruction (stable until the engine is idle)

  strata_compute_decode #(
    .Pes           (Pes),
    .Lanes         (Lanes),
    .Banks         (Banks),
    .BankDepth     (BankDepth),
    .PeCacheDepth  (PeCacheDepth),
    .ParamDepth    (ParamDepth),
    .MaxKernel     (MaxKernel),
    .MaxPoolKernel (MaxPoolKernel),
    .MaxImageWidth (MaxImageWidth),
    .Sparse        (Sparse),
    .ActTables     (ActTables)
  ) u_decode (
    .clk_i   (clk_i),
    .rst_ni  (dp_rst_n[DpRstFront]),
    .start_i (take),
    .instr_i (instr_i),
    .busy_o  (dec_busy),
    .done_o  (dec_done),
    .code_o  (dec_code),
    .cfg_o   (dec_cfg)
  );

  // Checked: in the decoder's done cycle or any later one.
  logic checked;
  assign checked = slot_q == SlotReady || (slot_q == SlotDecode && dec_done);
  assign launch  = state_q == StIdle && checked && dec_code == ErrNone && !abort_i;

  always_comb begin
    slot_d = slot_q;
    unique case (slot_q)
      SlotEmpty:  if (take) slot_d = SlotDecode;
      SlotDecode: if (launch) slot_d = SlotEmpty; else if (dec_done) slot_d = SlotReady;
      SlotReady:  if (launch) slot_d = SlotEmpty;
      default:    slot_d = SlotEmpty;
    endcase
    if (abort_i) slot_d = SlotEmpty;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      slot_q     <= SlotEmpty;
      instr_ok_q <= 1'b1;
    end else begin
      slot_q     <= slot_d;
      instr_ok_q <= slot_d == SlotEmpty && !(state_d inside {StError, StAbort}) && !flush_d;
    end
  end

  always_ff @(posedge clk_i) begin  // like the header fields above
    if (!busy_q[BusyMisc]) begin
      cfg.fc        <= dec_cfg.fc;
      cfg.pool_only <= dec_cfg.pool_only;
      cfg.dw        <= dec_cfg.dw;
      cfg.clamp_lo  <= dec_cfg.clamp_lo;
      cfg.clamp_hi  <= dec_cfg.clamp_hi;
      cfg.act_en    <= dec_cfg.act_en;
      cfg.act_table <= dec_cfg.act_table;
      cfg.in_id     <= dec_cfg.in_id;
      cfg.acc_out   <= dec_cfg.acc_out;
      cfg.acc_in    <= dec_cfg.acc_in;
      cfg.acc_id    <= dec_cfg.acc_id;
    end
    if (!busy_q[BusyWalk]) cfg.walk <= dec_cfg.walk;
    if (!busy_q[BusyWalk]) cfg.packed_rows <= dec_cfg.packed_rows;
    if (!busy_q[BusyWr])   cfg.wr   <= dec_cfg.wr;
    if (!busy_q[BusyPool]) cfg.pool <= dec_cfg.pool;
  end

  // ---------------------------------------------------------------- start, run, dependencies
  // strata_engine_shell: the start flags (a copy per block group: walker and
  // CONV parameters, pooling frames, writer), loaded from launch; the run
  // flags (a copy per block group far apart: walker and step requests,
  // pooling input and requantiser, result path and releases; the PE array
  // input has pe_go_q, below), loaded from run_d; and the dependency
  // sequencer (L2C and S2C acquired, C2S and C2L released).
  // running: state_q == StRun as a flip-flop of its own (loaded from
  // state_d) for the logic near the state register.
  localparam int unsigned StartFront = 0, StartPool = 1, StartBack = 2, StartCopies = 3;
  localparam int unsigned RunFront = 0, RunPool = 1, RunBack = 2, RunCopies = 3;
  logic [StartCopies-1:0] start_q;
  logic [RunCopies-1:0]   run_q;
  logic running, running_q, run_d;  // run_d: next state is StRun (below)
  logic step_valid, step_ready, step_done, finish_valid, finish_ready, sync_waiting;
  assign running = running_q;

  strata_engine_shell #(
    .StartCopies (StartCopies),
    .RunCopies   (RunCopies)
  ) u_shell (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .start_d_i      (launch),
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

  // ---------------------------------------------------------------- address walk
  logic                      walk_busy, walk_step_valid, beat_valid, beat_ready;
  logic [BankAddrWidth-1:0]  beat_addr;
  logic [CacheAddrWidth-1:0] beat_cache;
  logic                      beat_first, beat_last, beat_fill;
  logic [ParamIdxWidth-1:0]  beat_param;
  // The dense walker's outputs (the beat's unless a packed CONV runs).
  logic                      cw_busy, cw_step_valid, cw_beat_valid;
  logic [BankAddrWidth-1:0]  cw_beat_addr;
  logic [CacheAddrWidth-1:0] cw_beat_cache;
  logic                      cw_beat_first, cw_beat_last, cw_beat_fill;
  logic [ParamIdxWidth-1:0]  cw_beat_param;
  // Sparse builds: the beat's second word, the words' inside flags (dense
  // beats: {0, 1}), whether it is a packed CONV's, and a refused schedule.
  logic [BankAddrWidth-1:0]  beat_addr1;
  logic [1:0]                beat_in;
  logic                      beat_packed, walk_err;
  // The PE write port, registered (below): the schedule's write comes from it.
  logic                      sched_we_q;
  logic [CacheAddrWidth-1:0] cache_waddr_q;
  logic [WordWidth-1:0]      cache_wdata_q;
  logic                      walk_start;

  assign walk_start = start_q[StartFront];

  strata_conv_walker #(
    .BankAddrWidth  (BankAddrWidth),
    .CacheAddrWidth (CacheAddrWidth),
    .ParamIdxWidth  (ParamIdxWidth)
  ) u_walker (
    .clk_i        (clk_i),
    .rst_ni       (dp_rst_n[DpRstFront]),
    .start_i      (walk_start && !beat_packed),
    .cfg_i        (cfg.walk),
    .busy_o       (cw_busy),
    .step_valid_o (cw_step_valid),
    .step_ready_i (step_ready && run_q[RunFront]),
    .beat_valid_o (cw_beat_valid),
    .beat_ready_i (beat_ready),
    .beat_addr_o  (cw_beat_addr),
    .beat_cache_o (cw_beat_cache),
    .beat_first_o (cw_beat_first),
    .beat_last_o  (cw_beat_last),
    .beat_fill_o  (cw_beat_fill),
    .beat_param_o (cw_beat_param)
  );

  if (Sparse) begin : g_packed_walk
    logic                      pw_busy, pw_step_valid, pw_beat_valid, pw_err;
    logic [1:0][BankAddrWidth-1:0] pw_beat_addr;
    logic [1:0]                pw_beat_in;
    logic [CacheAddrWidth-1:0] pw_beat_cache;
    logic                      pw_beat_first, pw_beat_last;
    logic [ParamIdxWidth-1:0]  pw_beat_param;
    logic                      packed_q;  // the launched CONV is packed (cfg, a flag of its own)

    always_ff @(posedge clk_i) begin
      if (!busy_q[BusyWalk]) packed_q <= dec_cfg.packed_rows != '0;
    end

    strata_packed_walker #(
      .BankAddrWidth  (BankAddrWidth),
      .CacheAddrWidth (CacheAddrWidth),
      .ParamIdxWidth  (ParamIdxWidth),
      .CacheDepth     (PeCacheDepth),
      .MaxKernel      (MaxKernel)
    ) u_packed_walker (
      .clk_i         (clk_i),
      .rst_ni        (dp_rst_n[DpRstFront]),
      .start_i       (walk_start && packed_q),
      .cfg_i         (cfg.walk),
      .rows_i        (cfg.packed_rows),
      .busy_o        (pw_busy),
      .err_o         (pw_err),
      .sched_we_i    (sched_we_q),
      .sched_waddr_i (cache_waddr_q),
      .sched_wdata_i (cache_wdata_q[23:0]),
      .step_valid_o  (pw_step_valid),
      .step_ready_i  (step_ready && run_q[RunFront]),
      .beat_valid_o  (pw_beat_valid),
      .beat_ready_i  (beat_ready),
      .beat_addr_o   (pw_beat_addr),
      .beat_in_o     (pw_beat_in),
      .beat_cache_o  (pw_beat_cache),
      .beat_first_o  (pw_beat_first),
      .beat_last_o   (pw_beat_last),
      .beat_param_o  (pw_beat_param)
    );

    // One walker runs at a time: the valid and step requests are ORs.
    assign walk_busy       = cw_busy || pw_busy;
    assign walk_step_valid = cw_step_valid || pw_step_valid;
    assign beat_valid      = cw_beat_valid || pw_beat_valid;
    assign beat_addr       = packed_q ? pw_beat_addr[0] : cw_beat_addr;
    assign beat_addr1      = packed_q ? pw_beat_addr[1] : cw_beat_addr;
    assign beat_in         = packed_q ? pw_beat_in : 2'b01;
    assign beat_packed     = packed_q;
    assign beat_cache      = packed_q ? pw_beat_cache : cw_beat_cache;
    assign beat_first      = packed_q ? pw_beat_first : cw_beat_first;
    assign beat_last       = packed_q ? pw_beat_last : cw_beat_last;
    assign beat_fill       = !packed_q && cw_beat_fill;  // no partial sums when packed
    assign beat_param      = packed_q ? pw_beat_param : cw_beat_param;
    assign walk_err        = pw_err;

    `STRATA_ASSERT(ce_one_walker, clk_i, rst_ni, !(cw_busy && pw_busy))
    `STRATA_ASSERT(ce_packed_flag, clk_i, rst_ni,
                   !busy_q[BusyWalk] || packed_q == (cfg.packed_rows != '0))
  end else begin : g_dense_walk
    logic unused_sched;  // no schedule on a dense build
    assign unused_sched    = ^{sched_we_q, cfg.packed_rows};
    assign walk_busy       = cw_busy;
    assign walk_step_valid = cw_step_valid;
    assign beat_valid      = cw_beat_valid;
    assign beat_addr       = cw_beat_addr;
    assign beat_addr1      = cw_beat_addr;
    assign beat_in         = 2'b01;
    assign beat_packed     = 1'b0;
    assign beat_cache      = cw_beat_cache;
    assign beat_first      = cw_beat_first;
    assign beat_last       = cw_beat_last;
    assign beat_fill       = cw_beat_fill;
    assign beat_param      = cw_beat_param;
    assign walk_err        = 1'b0;
  end

  assign step_valid = run_q[RunFront] && walk_step_valid;

  // ---------------------------------------------------------------- bank reads
  // side: the beat's cache address, first, last (pushed with the request);
  // data: the bank word (pushed with the response). Both pop together, so
  // side holds the requests in flight plus the buffered words: its room is the
  // read credit. side's head is one register copy per PE (HeadCopies), so
  // each PE's cache RAMs read the address from a copy of their own, not
  // from one head register whose net reaches the caches of every PE.
  typedef struct packed {
    logic [CacheAddrWidth-1:0] cache;  // PE cache address of the beat
    logic                      first;  // first beat of an accumulation
    logic                      last;   // last beat of an accumulation
    logic                      fill;   // a partial-sum word (acc_in), not an operand
  } side_t;
  side_t [Pes-1:0]      side_heads;
  logic                 side_ready, side_valid, data_valid, unused_data_ready, rd_fire, op_fire;
  logic [CntWidth-1:0]  side_count, data_count;
  logic [WordWidth-1:0] data_head;
  logic [2:0]           rd_out_d, rd_out_q;  // requests without a response yet

  // running && side_ready is a flip-flop of its own loaded from their next
  // values (walk_ready_q, a copy in strata_reg_copies, checked against them):
  // placed beside the walker it drives the walker's ~200 advance enables
  // without the route from the side FIFO's not-full flag, which sits with
  // the FIFO near the PE array. (In strata_top the bank port always accepts: rd_req_ready_i is constant 1.)
  // The side FIFO's next not-full flag is selected as in strata_fifo.
  logic walk_ready_q;
  logic side_ready_d;

  always_comb begin
    side_ready_d = side_ready;
    if (rd_fire && !op_fire) side_ready_d = side_count != CntWidth'(ReadDepth - 1);
    if (op_fire && !rd_fire) side_ready_d = 1'b1;
    if (!dp_rst_n[DpRstFront]) side_ready_d = 1'b1;
  end

  strata_reg_copies #(.Copies (1)) u_walk_ready (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (run_d && side_ready_d),
    .mirror_i (running && side_ready),
    .q_o      (walk_ready_q)
  );

  assign rd_req_valid_o = beat_valid && walk_ready_q;
  assign beat_ready     = walk_ready_q && rd_req_ready_i;
  assign rd_req_o.bank  = BankIdxWidth'(beat_fill ? cfg.acc_id : cfg.in_id);
  assign rd_req_o.addr  = beat_addr;
  assign rd_fire        = rd_req_valid_o && rd_req_ready_i;
  assign rd_out_d       = rd_out_q + 3'(rd_fire) - 3'(rd_rsp_valid_i);

  strata_fifo #(
    .T      (side_t),
    .Depth  (ReadDepth),
    .OutReg     (1'b1),  // the PE array's operands leave flip-flops
    .HeadCopies (Pes)
  ) u_side (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstFront]),
    .in_valid_i  (rd_fire),
    .in_ready_o  (side_ready),
    .in_data_i   (side_t'{cache: beat_cache, first: beat_first, last: beat_last,
                          fill: beat_fill}),
    .out_valid_o (side_valid),
    .out_ready_i (op_fire),
    .out_data_o  (side_heads),
    .count_o     (side_count)
  );

  // Sparse builds: the second read port reads with every request (the
  // packed beat's next word; a dense beat's is dropped), and a word outside
  // the image becomes zeros as it arrives: the inside flags of each request
  // wait the bank latency (three cycles, exact) in a delay line.
  logic [WordWidth-1:0] rsp_data;       // the first port's word, zeros outside
  logic [WordWidth-1:0] data1_head;     // the second port's word at the operand FIFO's head

  if (Sparse) begin : g_second_read
    localparam int unsigned BankLatency = 3;  // strata_banks: compute read handshake to word
    logic [BankLatency-1:0]      fire_dl;
    logic [BankLatency-1:0][1:0] in_dl;
    logic                        data1_valid, unused_data1_ready;
    logic [CntWidth-1:0]         data1_count;

    assign rd1_req_valid_o = rd_fire;  // with the first port's handshake
    assign rd1_req_o.bank  = BankIdxWidth'(cfg.in_id);
    assign rd1_req_o.addr  = beat_addr1;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) fire_dl <= '0;
      else         fire_dl <= {fire_dl[BankLatency-2:0], rd_fire};
    end
    always_ff @(posedge clk_i) begin
      in_dl <= {in_dl[BankLatency-2:0], beat_in};
    end

    assign rsp_data = in_dl[BankLatency-1][0] ? rd_rsp_i.data : '0;

    strata_fifo #(
      .Width  (WordWidth),
      .Depth  (ReadDepth),
      .OutReg (1'b1)
    ) u_data1 (
      .clk_i       (clk_i),
      .rst_ni      (dp_rst_n[DpRstFront]),
      .in_valid_i  (rd1_rsp_valid_i && state_q != StAbort),
      .in_ready_o  (unused_data1_ready),
      .in_data_i   (in_dl[BankLatency-1][1] ? rd1_rsp_i.data : '0),
      .out_valid_o (data1_valid),
      .out_ready_i (op_fire),
      .out_data_o  (data1_head),
      .count_o     (data1_count)
    );

    `STRATA_ASSERT(ce_rd1_ready, clk_i, rst_ni, !rd1_req_valid_o || rd1_req_ready_i)
    `STRATA_ASSERT(ce_rd_latency, clk_i, rst_ni,
                   rd_rsp_valid_i == fire_dl[BankLatency-1] && rd1_rsp_valid_i == rd_rsp_valid_i)
    `STRATA_ASSERT(ce_data1_in_step, clk_i, rst_ni,
                   data1_valid == data_valid && data1_count == data_count)
  end else begin : g_one_read
    logic unused_rd1;  // the second read port is a sparse build's
    assign unused_rd1      = ^{rd1_req_ready_i, rd1_rsp_valid_i, rd1_rsp_i, beat_addr1, beat_in};
    assign rd1_req_valid_o = 1'b0;
    assign rd1_req_o       = '0;
    assign rsp_data        = rd_rsp_i.data;
    assign data1_head      = '0;
  end

  strata_fifo #(
    .Width  (WordWidth),
    .Depth  (ReadDepth),
    .OutReg (1'b1)  // the PE array's operands leave flip-flops
  ) u_data (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstFront]),
    .in_valid_i  (rd_rsp_valid_i && state_q != StAbort),
    .in_ready_o  (unused_data_ready),
    .in_data_i   (rsp_data),
    .out_valid_o (data_valid),
    .out_ready_i (op_fire),
    .out_data_o  (data_head),
    .count_o     (data_count)
  );

  logic [Pes-1:0][CacheAddrWidth-1:0] op_cache;  // copy p for PE p
  logic                      op_first, op_last, op_fill;
  logic [2:0]                unused_side_flags [Pes];  // first / last / fill (copy 0's are used)

  assign op_first = side_heads[0].first;
  assign op_last  = side_heads[0].last;
  assign op_fill  = side_heads[0].fill;
  always_comb begin
    for (int p = 0; p < Pes; p++) begin
      op_cache[p]          = side_heads[p].cache;
      unused_side_flags[p] = {side_heads[p].first, side_heads[p].last, side_heads[p].fill};
    end
  end

  // acc_in: the fill register takes the partial-sum words at the operand
  // FIFO's head (always at once; they never enter the PE array). Word k is
  // byte k of every lane's start value, so each word shifts in from the top
  // and the fourth leaves lane p's int32 in fill_acc_q[p]. The window's first
  // beat, which follows its four words in the FIFO, carries it as the bias;
  // the next window's words arrive only after that beat has been taken.
  logic            fill_pop;
  acc_t [Pes-1:0]  fill_acc_q;
  assign fill_pop = data_valid && op_fill;
  always_ff @(posedge clk_i) begin
    if (fill_pop) begin
      for (int p = 0; p < Pes; p++) fill_acc_q[p] <= {data_head[p*8 +: 8], fill_acc_q[p][31:8]};
    end
  end

  // ---------------------------------------------------------------- parameters
  logic                  par_rd, par_rd_all, fc_rd_q, fc_rd_q2, fc_rd_q3;
  logic [ParamIdxWidth-1:0] par_base;
  acc_t   [Pes-1:0]      par_bias;
  mult_t  [Pes-1:0]      par_mult;
  shift_t [Pes-1:0]      par_shift;
  logic [ParWidth-1:0]   par0;        // lane 0 {S, M, bias}, the cycle before par_* load (FC)

  // CONV: the P channels once, when the first step's units are granted (the
  // parameter LOAD is one of the producers those units stand for: reading at
  // the start could see entries still being written); the first beat enters
  // the array at least four cycles later (three-cycle bank read, operand
  // FIFO), when the four-cycle read has just completed (ce_conv_param checks
  // it). FC: a neuron's channel with its first beat's bank request.
  logic conv_par_d, conv_par_q;  // CONV parameters not read yet
  logic conv_rd, conv_rd_q, conv_rd_q2, conv_rd_q3;  // read now; 1, 2, 3 cycles ago
  assign conv_rd    = conv_par_q && step_valid && step_ready;
  assign conv_par_d = start_q[StartFront] ? (!cfg.fc && !cfg.pool_only) : (conv_par_q && !conv_rd);
  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstFront]) begin
      conv_par_q <= 1'b0;
      conv_rd_q  <= 1'b0;
      conv_rd_q2 <= 1'b0;
      conv_rd_q3 <= 1'b0;
    end else begin
      conv_par_q <= conv_par_d;
      conv_rd_q  <= conv_rd;
      conv_rd_q2 <= conv_rd_q;
      conv_rd_q3 <= conv_rd_q2;
    end
  end
  assign par_rd     = conv_rd || (rd_fire && cfg.fc && beat_first);
  assign par_rd_all = !cfg.fc;
  assign par_base   = cfg.fc ? beat_param : ParamIdxWidth'(cfg.walk.param_base);

  strata_param_ram #(
    .Pes        (Pes),
    .ParamDepth (ParamDepth)
  ) u_params (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .wr_valid_i (param_valid_i),
    .wr_ready_o (param_ready_o),
    .wr_ch_i    (param_channel_i),
    .wr_data_i  (param_data_i),
    .rd_i       (par_rd),
    .rd_all_i   (par_rd_all),
    .rd_base_i  (par_base),
    .bias_o     (par_bias),
    .mult_o     (par_mult),
    .shift_o    (par_shift),
    .lane0_o    (par0)
  );

  // FC: the neuron's entry leaves the parameter RAM (lane 0, before the
  // output register) three cycles after the read, no later than its first
  // bank word (the bank read takes three cycles too; ce_fc_param checks it).
  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstFront]) begin
      fc_rd_q  <= 1'b0;
      fc_rd_q2 <= 1'b0;
      fc_rd_q3 <= 1'b0;
    end else begin
      fc_rd_q  <= rd_fire && cfg.fc && beat_first;
      fc_rd_q2 <= fc_rd_q;
      fc_rd_q3 <= fc_rd_q2;
    end
  end

  // FC: the neuron's {bias, M, S} from its first beat until its last beat
  // enters the array (at most one neuron per buffered beat, plus one).
  logic                fcp_valid, unused_fcp_ready;
  logic [ParWidth-1:0] fcp_head;
  logic [$clog2(ReadDepth + 2)-1:0] unused_fcp_count;
  acc_t                fc_bias;
  mult_t               fc_mult;
  shift_t              fc_shift;

  strata_fifo #(
    .Width (ParWidth),
    .Depth (ReadDepth + 1)
  ) u_fc_param (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstFc]),
    .in_valid_i  (fc_rd_q3),
    .in_ready_o  (unused_fcp_ready),
    .in_data_i   (par0),
    .out_valid_o (fcp_valid),
    .out_ready_i (op_fire && cfg.fc && op_last),
    .out_data_o  (fcp_head),
    .count_o     (unused_fcp_count)
  );

  assign {fc_shift, fc_mult, fc_bias} = fcp_head;

  // FC: M, S of each neuron whose last beat entered the array, until its
  // result is requantised. The push is registered (the cycle after the last
  // beat's handshake), so the array's input handshake ends at two registers
  // here instead of at the queue's write pointer and storage enables; a last
  // beat therefore needs room for two entries, its own and one still on its
  // way (ms_room). The room flag is a flip-flop loaded from the queue's next
  // fill level (asserted equal to the comparison of the level).
  localparam int unsigned MsCountWidth = $clog2(MsDepth + 1);
  logic                    ms_ready, ms_valid, ms_room, ms_push_q, rq_fire, ms_pop;
  logic [MsWidth-1:0]      ms_head, ms_data_q;
  logic [MsCountWidth-1:0] ms_count;

  // The next fill level is ms_count + push - pop; the room flag's next value
  // is selected by the push and the pop from comparisons of the present
  // level (as strata_fifo's flags): the requantiser's handshake reaches a
  // multiplexer's select, not an adder.
  logic ms_room_d;
  assign ms_pop = ms_valid && rq_fire && cfg.fc;
  always_comb begin
    unique case ({ms_push_q, ms_pop})
      2'b10:   ms_room_d = 32'(ms_count) + 3 <= MsDepth;
      2'b01:   ms_room_d = 32'(ms_count) + 1 <= MsDepth;
      default: ms_room_d = 32'(ms_count) + 2 <= MsDepth;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstFc]) begin
      ms_push_q <= 1'b0;
      ms_room   <= 1'b1;
    end else begin
      ms_push_q <= op_fire && cfg.fc && op_last;
      ms_room   <= ms_room_d;
    end
  end

  always_ff @(posedge clk_i) begin
    ms_data_q <= {fc_shift, fc_mult};
  end

  strata_fifo #(
    .Width (MsWidth),
    .Depth (MsDepth)
  ) u_fc_ms (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstFc]),
    .in_valid_i  (ms_push_q),
    .in_ready_o  (ms_ready),
    .in_data_i   (ms_data_q),
    .out_valid_o (ms_valid),
    .out_ready_i (rq_fire && cfg.fc),
    .out_data_o  (ms_head),
    .count_o     (ms_count)
  );

  // ---------------------------------------------------------------- DEPTHWISE beats
  // The window slice (declared here, written by the window generator below)
  // feeds the pooling unit (POOL, CONV with pool_en) or, for DEPTHWISE, the
  // beat register: window w becomes beats b = 0 .. DwBeats - 1, in which PE
  // p's lane l carries channel p of tap b * N + l (tap t = ky * MaxPoolKernel
  // + kx; taps past the window are zero), its cache address is cache_base +
  // b, and the first and last beats open and close the accumulation. The
  // window generator zeroes the padded taps, so padding contributes nothing.
  // The beat register is the PE array's DEPTHWISE operand, so the operands
  // leave flip-flops as the broadcast ones do; its byte p of each tap goes to
  // PE p only (a transpose is wiring). The window leaves the slice with its
  // last beat.
  logic pe_in_valid, pe_in_ready;  // the PE array's input handshake

  localparam int unsigned PoolTaps  = MaxPoolKernel * MaxPoolKernel;
  localparam int unsigned DwBeats   = (PoolTaps + Lanes - 1) / Lanes;
  localparam int unsigned DwBeatW   = (DwBeats > 1) ? $clog2(DwBeats) : 1;

  typedef struct packed {
    logic [PoolTaps-1:0]           mask;  // taps inside the image
    logic [PoolTaps*WordWidth-1:0] data;  // the taps' words
  } window_t;
  logic       ws_valid, ws_ready;
  window_t    ws;  // the window at the slice's head

  logic [DwBeatW-1:0]                  dwb_beat_q;   // beat of the window at the slice head
  logic                                dwb_valid_q;  // a beat waits for the PE array
  logic [Pes-1:0][Lanes-1:0][7:0]      dwb_op_q;     // PE p's lanes of the beat
  logic [Pes-1:0][CacheAddrWidth-1:0]  dwb_addr_q;   // copy p for PE p
  logic                                dwb_first_q, dwb_last_q;
  logic                                dwb_take, dwb_pop, dwb_last_beat;
  logic [Pes-1:0][Lanes-1:0][7:0]      dwb_op;
  logic [$clog2(Lanes+1)-1:0]          dwb_taps, dwb_taps_q;  // lanes holding a tap of the kernel

  // The register takes a beat when it is empty or its beat enters the array.
  assign dwb_last_beat = dwb_beat_q == DwBeatW'(DwBeats - 1);
  assign dwb_take      = cfg.dw && ws_valid && (!dwb_valid_q || pe_in_ready);
  assign dwb_pop       = dwb_take && dwb_last_beat;

  always_comb begin
    for (int p = 0; p < Pes; p++) begin
      for (int l = 0; l < Lanes; l++) begin
        dwb_op[p][l] = '0;
        for (int b = 0; b < DwBeats; b++) begin
          if (b * Lanes + l < PoolTaps && 32'(dwb_beat_q) == b) begin
            dwb_op[p][l] = ws.data[(b * Lanes + l) * WordWidth + p * 8 +: 8];
          end
        end
      end
    end
  end

  // The beat's useful lanes, for the MAC counter: taps t = b * N + l inside
  // the instruction's pool_k x pool_k kernel (the other lanes carry zeros).
  always_comb begin
    dwb_taps = '0;
    for (int l = 0; l < Lanes; l++) begin
      for (int b = 0; b < DwBeats; b++) begin
        if (b * Lanes + l < PoolTaps && 32'(dwb_beat_q) == b &&
            (b * Lanes + l) / MaxPoolKernel < 32'(cfg.pool.kernel) &&
            (b * Lanes + l) % MaxPoolKernel < 32'(cfg.pool.kernel)) begin
          dwb_taps = dwb_taps + 1'b1;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstPool]) begin
      dwb_beat_q  <= '0;
      dwb_valid_q <= 1'b0;
    end else begin
      if (dwb_take) dwb_beat_q <= dwb_last_beat ? '0 : dwb_beat_q + DwBeatW'(1);
      if (dwb_take) dwb_valid_q <= 1'b1;
      else if (pe_in_ready) dwb_valid_q <= 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (dwb_take) begin
      dwb_op_q    <= dwb_op;
      dwb_first_q <= dwb_beat_q == '0;
      dwb_last_q  <= dwb_last_beat;
      dwb_taps_q  <= dwb_taps;
      for (int p = 0; p < Pes; p++) begin
        dwb_addr_q[p] <= CacheAddrWidth'(cfg.walk.cache_base) + CacheAddrWidth'(dwb_beat_q);
      end
    end
  end

  // The array's inputs: DEPTHWISE beats or the broadcast stream. The select
  // of PE p's operand and address reads a copy of cfg.dw of its own
  // (strata_reg_copies, loaded like rq_fc_q below), placed beside the PE.
  localparam int unsigned OpVectors = Sparse ? 2 : 1;  // sparse: the window {current, next}
  logic [Pes-1:0]                      pe_dw_q;
  logic [Pes-1:0][OpVectors-1:0][WordWidth-1:0] pe_op;
  logic [Pes-1:0][CacheAddrWidth-1:0]  pe_addr;
  logic                                pe_first, pe_last;

  strata_reg_copies #(.Copies (Pes)) u_pe_dw_copies (
    .clk_i    (clk_i),
    .rst_ni   (1'b1),
    .d_i      (busy_q[BusyMisc] ? cfg.dw : dec_cfg.dw),
    .mirror_i (cfg.dw),
    .q_o      (pe_dw_q)
  );

  always_comb begin
    for (int p = 0; p < Pes; p++) begin
      pe_op[p][0] = pe_dw_q[p] ? dwb_op_q[p] : data_head;
      if (Sparse) pe_op[p][OpVectors-1] = data1_head;  // zeros unless packed
      pe_addr[p]  = pe_dw_q[p] ? dwb_addr_q[p] : op_cache[p];
    end
  end
  assign pe_first = cfg.dw ? dwb_first_q : op_first;
  assign pe_last  = cfg.dw ? dwb_last_q : op_last;

  // ---------------------------------------------------------------- PE array
  logic                      pe_res_valid, pe_res_ready, pe_err;
  acc_t [Pes-1:0]            pe_bias, pe_acc;
  logic                      cache_we, cache_we_q;  // PE cache write: arbitrated, registered
  logic [Pes-1:0]            cache_mask, cache_mask_q;
  logic [CacheAddrWidth-1:0] cache_waddr;
  logic [WordWidth-1:0]      cache_wdata;
  logic                      cache_ctl, cache_ctl_q;  // sparse: a control plane / schedule word

  // An FC last beat also needs room for its M, S (never lacking in practice);
  // every FC beat waits for it, so the handshake does not wait for op_last
  // (read from the side FIFO's LUT RAM).
  // Everything but the operand's valid is one flip-flop, pe_go_q (running,
  // not pooling only, and the FC room), loaded from the next values of its
  // terms (asserted equal): each PE's accept, which is its cache's read
  // enable, is one LUT of three flip-flops (data valid, pe_go_q, the PE's
  // credit) instead of the FC room logic and a second LUT level in front of
  // the route to the PE caches' clock enables.
  logic pe_go_d, pe_go_q;
  assign pe_go_d = run_d &&
                   !(busy_q[BusyMisc] ? (cfg.pool_only || cfg.dw)
                                      : (dec_cfg.pool_only || dec_cfg.dw)) &&
                   !((busy_q[BusyMisc] ? cfg.fc : dec_cfg.fc) &&
                     !(ms_room_d || !dp_rst_n[DpRstFc]));

  always_ff @(posedge clk_i) begin
    if (!rst_ni) pe_go_q <= 1'b0;
    else         pe_go_q <= pe_go_d;
  end

  // DEPTHWISE beats come from the beat register (below), whose valid is
  // never set in the other modes.
  assign pe_in_valid = (pe_go_q && data_valid && !op_fill) || dwb_valid_q;
  always_comb begin
    for (int p = 0; p < Pes; p++) begin
      pe_bias[p] = cfg.acc_in ? fill_acc_q[p] : cfg.fc ? fc_bias : par_bias[p];
    end
  end

  strata_pe_array #(
    .Pes         (Pes),
    .Lanes       (Lanes),
    .CacheDepth  (PeCacheDepth),
    .Sparse      (Sparse),
    .FabricLanes (PeFabricLanes),
    .AddrCopies  (Pes),
    .OpCopies    (Pes)
  ) u_pe_array (
    .clk_i           (clk_i),
    .rst_ni          (dp_rst_n[DpRstPe]),
    .cache_we_i      (cache_we_q),
    .cache_ctl_i     (cache_ctl_q),
    .cache_pe_mask_i (cache_mask_q),
    .cache_waddr_i   (cache_waddr_q),
    .cache_wdata_i   (cache_wdata_q),
    .in_valid_i      (pe_in_valid),
    .in_ready_o      (pe_in_ready),
    .in_op_i         (pe_op),
    .in_addr_i       (pe_addr),
    .in_first_i      (pe_first),
    .in_last_i       (pe_last),
    .in_bias_i       (pe_bias),
    .in_packed_i     (beat_packed),
    .res_valid_o     (pe_res_valid),
    .res_ready_i     (pe_res_ready),
    .res_acc_o       (pe_acc),
    .err_o           (pe_err)
  );

  // ---------------------------------------------------------------- acc_out byte planes
  // acc_out: each result of the array is offered to the requantiser four
  // times, beat k carrying byte k of every lane's accumulator (sign-extended,
  // so M = 1, S = 0 and the full clamp pass it unchanged); the array's result
  // is taken with the fourth. spill_more_q (acc_out and another byte to go)
  // is a flip-flop, so the array's result ready is one gate after the
  // requantiser's.
  logic            rq_in_ready, rq_in_fire;
  logic [1:0]      spill_k_q;
  logic            spill_more_q;
  acc_t [Pes-1:0]  rq_acc;

  assign rq_in_fire   = pe_res_valid && rq_in_ready;
  assign pe_res_ready = rq_in_ready && !spill_more_q;

  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstRequant]) begin
      spill_k_q    <= '0;
      spill_more_q <= 1'b0;
    end else if (!running_q) begin
      spill_k_q    <= '0;
      spill_more_q <= busy_q[BusyMisc] ? cfg.acc_out : dec_cfg.acc_out;
    end else if (rq_in_fire && cfg.acc_out) begin
      spill_k_q    <= spill_k_q + 2'd1;
      spill_more_q <= spill_k_q != 2'd2;
    end
  end

  always_comb begin
    for (int p = 0; p < Pes; p++) begin
      rq_acc[p] = !cfg.acc_out ? pe_acc[p] :
                  AccWidth'($signed(pe_acc[p][8*spill_k_q +: 8]));
    end
  end

  // ---------------------------------------------------------------- requantisation
  logic           rq_valid, rq_ready, unused_rq_err;
  mult_t  [Pes-1:0] rq_mult;
  shift_t [Pes-1:0] rq_shift;
  logic [WordWidth-1:0] rq_data;

  // The operand select of channel p (FC: the neuron's M, S; CONV: the
  // channel's) reads a copy of cfg.fc of its own (rq_fc_q[p], strata_reg_copies
  // loaded with cfg.fc's next value, checked against it): each copy sits beside
  // its channel's multipliers instead of one flip-flop driving every channel's
  // select across the die.
  logic [Pes-1:0] rq_fc_q, rq_raw_q;

  strata_reg_copies #(.Copies (Pes)) u_rq_fc_copies (
    .clk_i    (clk_i),
    .rst_ni   (1'b1),
    .d_i      (busy_q[BusyMisc] ? cfg.fc : dec_cfg.fc),
    .mirror_i (cfg.fc),
    .q_o      (rq_fc_q)
  );

  // acc_out's M = 1, S = 0 likewise select with a copy of cfg.acc_out per
  // channel (rq_raw_q).
  strata_reg_copies #(.Copies (Pes)) u_rq_raw_copies (
    .clk_i    (clk_i),
    .rst_ni   (1'b1),
    .d_i      (busy_q[BusyMisc] ? cfg.acc_out : dec_cfg.acc_out),
    .mirror_i (cfg.acc_out),
    .q_o      (rq_raw_q)
  );

  always_comb begin
    for (int p = 0; p < Pes; p++) begin
      rq_mult[p]  = rq_raw_q[p] ? MultWidth'(1) :
                    rq_fc_q[p] ? ms_head[0 +: MultWidth] : par_mult[p];
      rq_shift[p] = rq_raw_q[p] ? '0 :
                    rq_fc_q[p] ? ms_head[MultWidth +: ShiftWidth] : par_shift[p];
    end
  end

  strata_requant #(
    .Channels  (Pes),
    .Lanes     (Lanes),
    .ActTables (ActTables)
  ) u_requant (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstRequant]),
    .in_valid_i  (pe_res_valid),
    .in_ready_o  (rq_in_ready),
    .in_acc_i    (rq_acc),
    .in_mult_i   (rq_mult),
    .in_shift_i  (rq_shift),
    .in_lo_i     (cfg.clamp_lo),
    .in_hi_i     (cfg.clamp_hi),
    .in_tab_en_i (cfg.act_en),
    .in_tab_i    (cfg.act_table),
    .tab_valid_i (tab_valid_i),
    .tab_ready_o (tab_ready_o),
    .tab_addr_i  (tab_addr_i),
    .tab_data_i  (tab_data_i),
    .out_valid_o (rq_valid),
    .out_ready_i (rq_ready),
    .out_data_o  (rq_data),
    .err_o       (unused_rq_err)
  );

  assign rq_fire = pe_res_valid && pe_res_ready;

  // ---------------------------------------------------------------- pooling
  localparam int unsigned PoolKw   = $clog2(MaxPoolKernel + 1);

  logic                          wg_cfg_valid, wg_cfg_ready, wg_cfg_error, wg_busy;
  logic                          wg_in_valid, wg_in_ready;
  logic [WordWidth-1:0]          wg_in_data;
  logic                          win_valid, win_ready;
  logic [PoolTaps*WordWidth-1:0] win_data;
  logic [PoolTaps-1:0]           win_mask;
  logic [DimWidth-1:0]           frames_d, frames_q;   // frames configured so far
  logic                          cfg_more_d, cfg_more_q;
  logic                          cfg_offered_q;        // a configuration offered, not taken
  logic                          wg_in_offered_q;      // a pixel word offered, not taken

  // A frame configuration once offered stays offered until the window
  // generator takes it or the datapath reset clears both (an abort ends the
  // run before the flush): the configuration port is a valid/ready stream.
  // So is the pixel input: a word offered when an abort ends the run stays
  // offered until the input slice takes it (wg_in_offered_q; its source, the
  // operand FIFO or the requantiser, holds it until then).
  assign wg_cfg_valid = cfg_more_q && (run_q[RunPool] || cfg_offered_q);
  assign wg_in_valid  = (run_q[RunPool] || wg_in_offered_q) &&
                        (cfg.pool.from_bank ? data_valid : (cfg.pool.enable && rq_valid));
  assign wg_in_data   = cfg.pool.from_bank ? data_head : rq_data;

  // Input slice in front of the window generator: its producers (the
  // operand FIFO, the requantiser) sit elsewhere on an FPGA, and the
  // generator's next ready (room, walk and column state) would wait for
  // their valid, a route to the producers' handshake and one back in a cycle.
  // The producers see the slice's registered ready, the generator the
  // slice's registered valid and word. Full rate; one cycle more per pooling
  // input stream.
  logic                 wgs_valid, wgs_ready;
  logic [WordWidth-1:0] wgs_data;
  logic [1:0]           unused_wgs_count;

  strata_fifo #(
    .Width  (WordWidth),
    .Depth  (2),
    .OutReg (1'b1)
  ) u_window_in_slice (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstWindow]),
    .in_valid_i  (wg_in_valid),
    .in_ready_o  (wg_in_ready),
    .in_data_i   (wg_in_data),
    .out_valid_o (wgs_valid),
    .out_ready_i (wgs_ready),
    .out_data_o  (wgs_data),
    .count_o     (unused_wgs_count)
  );

  always_comb begin
    frames_d   = frames_q;
    cfg_more_d = cfg_more_q;
    if (wg_cfg_valid && wg_cfg_ready) begin
      frames_d   = frames_q + DimWidth'(1);
      cfg_more_d = frames_q != cfg.pool.frames_m1;
    end
    if (start_q[StartPool]) begin
      frames_d   = '0;
      cfg_more_d = cfg.pool.enable;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstPool]) begin
      frames_q      <= '0;
      cfg_more_q    <= 1'b0;
      cfg_offered_q <= 1'b0;
      wg_in_offered_q <= 1'b0;
    end else begin
      frames_q      <= frames_d;
      cfg_more_q    <= cfg_more_d;
      cfg_offered_q <= wg_cfg_valid && !wg_cfg_ready;
      wg_in_offered_q <= wg_in_valid && !wg_in_ready;
    end
  end

  logic [$clog2(PoolTaps+1)-1:0] unused_win_count;
  logic [((MaxPoolKernel > 1) ? $clog2(MaxPoolKernel) : 1)-1:0] unused_ky_lo, unused_ky_hi;
  logic [((MaxPoolKernel > 1) ? $clog2(MaxPoolKernel) : 1)-1:0] unused_kx_lo, unused_kx_hi;
  logic [DimWidth-1:0] unused_win_oy, unused_win_ox;
  logic        unused_win_first, unused_win_last;

  strata_window_gen #(
    .Lanes         (Pes),
    .DataWidth     (8),
    .MaxKernel     (MaxPoolKernel),
    .MaxImageWidth (MaxImageWidth),
    .DimWidth      (DimWidth)
  ) u_window_gen (
    .clk_i            (clk_i),
    .rst_ni           (dp_rst_n[DpRstWindow]),
    .cfg_valid_i      (wg_cfg_valid),
    .cfg_ready_o      (wg_cfg_ready),
    .cfg_height_i     (cfg.pool.height),
    .cfg_width_i      (cfg.pool.width),
    .cfg_kernel_i     (PoolKw'(cfg.pool.kernel)),
    .cfg_stride_i     (cfg.pool.stride),
    .cfg_pad_top_i    (PoolKw'(cfg.pool.pad_top)),
    .cfg_pad_left_i   (PoolKw'(cfg.pool.pad_left)),
    .cfg_pad_bottom_i (PoolKw'(cfg.pool.pad_bottom)),
    .cfg_pad_right_i  (PoolKw'(cfg.pool.pad_right)),
    .cfg_ceil_i       (cfg.pool.ceil_mode),
    .cfg_error_o      (wg_cfg_error),
    .busy_o           (wg_busy),
    .in_valid_i       (wgs_valid),
    .in_ready_o       (wgs_ready),
    .in_data_i        (wgs_data),
    .win_valid_o      (win_valid),
    .win_ready_i      (win_ready),
    .win_data_o       (win_data),
    .win_mask_o       (win_mask),
    .win_count_o      (unused_win_count),
    .win_ky_lo_o      (unused_ky_lo),
    .win_ky_hi_o      (unused_ky_hi),
    .win_kx_lo_o      (unused_kx_lo),
    .win_kx_hi_o      (unused_kx_hi),
    .win_oy_o         (unused_win_oy),
    .win_ox_o         (unused_win_ox),
    .win_first_o      (unused_win_first),
    .win_last_o       (unused_win_last)
  );

  // Window slice between the window generator and the pooling unit (they
  // sit apart on an FPGA: the line buffer's RAM blocks on one side, the
  // average unit's DSP blocks on the other). The pooling unit's ready stops
  // at the slice's head register, and the window register's shift (an
  // enable of 3 x 192 flip-flops) waits only for the slice's registered
  // ready, not for a ready from across the die. Full rate; one cycle more
  // per window.
  // The slice's storage (585 flip-flops at the default) is written under
  // PoolTaps copies of its not-full flag, so no single flag's net reaches
  // every storage enable.
  logic [1:0] unused_ws_count;

  strata_fifo #(
    .T        (window_t),
    .Depth    (2),
    .OutReg   (1'b1),
    .WeCopies (PoolTaps)
  ) u_win_slice (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstPool]),
    .in_valid_i  (win_valid),
    .in_ready_o  (win_ready),
    .in_data_i   (window_t'{mask: win_mask, data: win_data}),
    .out_valid_o (ws_valid),
    .out_ready_i (ws_ready),
    .out_data_o  (ws),
    .count_o     (unused_ws_count)
  );

  logic                 pool_valid, pool_ready, pool_in_ready;
  logic [WordWidth-1:0] pool_data;
  logic                 unused_pool_user;

  assign ws_ready = cfg.dw ? dwb_pop : pool_in_ready;

  strata_pool #(
    .Lanes     (Pes),
    .DataWidth (8),
    .Kernel    (MaxPoolKernel),
    .UserWidth (1),
    .OutClamp  (1'b1)
  ) u_pool (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstPool]),
    .in_valid_i  (ws_valid && !cfg.dw),
    .in_ready_o  (pool_in_ready),
    .in_op_i     (cfg.pool.op_avg ? PoolAvg : PoolMax),
    .in_taps_i   (ws.data),
    .in_mask_i   (ws.mask),
    .in_user_i   (1'b0),
    .out_valid_o (pool_valid),
    .out_ready_i (pool_ready),
    .out_data_o  (pool_data),
    .out_user_o  (unused_pool_user),
    .clamp_lo_i  (cfg.pool.post_lo),
    .clamp_hi_i  (cfg.pool.post_hi)
  );

  // The clamp after pooling is the pooling unit's output clamp (before its
  // output buffer, so no comparator follows the buffer's LUT-RAM read); its
  // results pass a register slice of their own, so the buffer read ends
  // there instead of running on through the result multiplexer into the
  // writer's slice. Full rate; one cycle more per pooled result.
  logic                 post_valid;
  logic [WordWidth-1:0] post_slice_data;
  logic [1:0]           unused_post_count;

  // ---------------------------------------------------------------- operand consumer
  logic                      res_valid, res_ready;
  logic [WordWidth-1:0]      res_data;

  // POOL and DEPTHWISE: the bank stream feeds the window generator; CONV
  // with pool_en: the requantised results do.
  assign op_fire  = cfg.pool.from_bank ? (wg_in_valid && wg_in_ready) :
                    ((pe_in_valid && pe_in_ready) || fill_pop);
  assign rq_ready = (cfg.pool.enable && !cfg.dw) ? (run_q[RunPool] && wg_in_ready) : res_ready;

  // ---------------------------------------------------------------- destination
  // A PE cache write of the writer (PE_TRANSPOSE: a word to the PEs of mask).
  typedef struct packed {
    logic [Pes-1:0]            mask;  // PEs written
    logic [CacheAddrWidth-1:0] addr;  // cache word address
    logic [WordWidth-1:0]      data;  // the word
  } cache_wr_t;
  logic      wcache_valid, wcache_ready;      // after the writer's cache slice
  cache_wr_t wcache;
  logic      wr_cache_valid, wr_cache_ready;  // the writer's cache port
  cache_wr_t wr_cache;
  logic [1:0]                unused_cslice_count;
  logic                      wrel_valid, writer_busy;
  logic [UnitWidth-1:0]      wrel_units;

  strata_fifo #(
    .Width (WordWidth),
    .Depth (2)
  ) u_post_slice (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstPool]),
    .in_valid_i  (pool_valid),
    .in_ready_o  (pool_ready),
    .in_data_i   (pool_data),
    .out_valid_o (post_valid),
    .out_ready_i (res_ready),
    .out_data_o  (post_slice_data),
    .count_o     (unused_post_count)
  );

  assign res_valid  = (cfg.pool.enable && !cfg.dw) ? post_valid : (run_q[RunBack] && rq_valid);
  assign res_data   = (cfg.pool.enable && !cfg.dw) ? post_slice_data : rq_data;

  // Register slice in front of the writer: its ready (which follows the bank
  // write port's ready) and its group counters stop here instead of running
  // back through the pooling unit, the window generator and the requantiser
  // (the engine's critical path). Full rate; one cycle more per result.
  logic                 wres_valid, wres_ready;
  logic [WordWidth-1:0] wres_data;
  logic [1:0]           unused_wres_count;

  strata_fifo #(
    .Width (WordWidth),
    .Depth (2)
  ) u_res_slice (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstBack]),
    .in_valid_i  (res_valid),
    .in_ready_o  (res_ready),
    .in_data_i   (res_data),
    .out_valid_o (wres_valid),
    .out_ready_i (wres_ready),
    .out_data_o  (wres_data),
    .count_o     (unused_wres_count)
  );

  strata_dst_writer #(
    .Pes            (Pes),
    .Lanes          (Lanes),
    .BankIdxWidth   (BankIdxWidth),
    .BankAddrWidth  (BankAddrWidth),
    .CacheAddrWidth (CacheAddrWidth)
  ) u_writer (
    .clk_i         (clk_i),
    .rst_ni        (dp_rst_n[DpRstBack]),
    .start_i       (start_q[StartBack]),
    .cfg_i         (cfg.wr),
    .busy_o        (writer_busy),
    .in_valid_i    (wres_valid),
    .in_ready_o    (wres_ready),
    .in_data_i     (wres_data),
    .bank_valid_o  (wr_valid_o),
    .bank_ready_i  (wr_ready_i),
    .bank_o        (wr_req_o.bank),
    .bank_addr_o   (wr_req_o.addr),
    .bank_data_o   (wr_req_o.data),
    .cache_valid_o (wr_cache_valid),
    .cache_ready_i (wr_cache_ready),
    .cache_mask_o  (wr_cache.mask),
    .cache_addr_o  (wr_cache.addr),
    .cache_data_o  (wr_cache.data),
    .rel_valid_o   (wrel_valid),
    .rel_units_o   (wrel_units)
  );

  // The writer's cache requests pass a register slice (its ready depends only
  // on its fill level), so the load engine's pe_valid_i, through the
  // arbitration below, never reaches the writer's handshake and the enables
  // of its address counters and output register.
  strata_fifo #(
    .T     (cache_wr_t),
    .Depth (2)
  ) u_cache_slice (
    .clk_i       (clk_i),
    .rst_ni      (dp_rst_n[DpRstBack]),
    .in_valid_i  (wr_cache_valid),
    .in_ready_o  (wr_cache_ready),
    .in_data_i   (wr_cache),
    .out_valid_o (wcache_valid),
    .out_ready_i (wcache_ready),
    .out_data_o  (wcache),
    .count_o     (unused_cslice_count)
  );

  // PE cache write port: this engine's results and the load engine's words,
  // round robin when both want it (either side waits at most one write).
  logic prio_d, prio_q;  // 1: the result writer goes first on a conflict

  assign pe_ready_o   = !(wcache_valid && prio_q);
  assign wcache_ready = !pe_valid_i || prio_q;
  assign prio_d       = (wcache_valid && pe_valid_i) ? !prio_q : prio_q;
  assign cache_we     = (wcache_valid && wcache_ready) || (pe_valid_i && pe_ready_o);
  // pe_i = P (the schedule, sparse builds) selects no PE.
  assign cache_mask   = (wcache_valid && wcache_ready) ? wcache.mask : Pes'((Pes + 1)'(1) << pe_i);
  assign cache_waddr  = (wcache_valid && wcache_ready) ? wcache.addr : pe_addr_i;
  assign cache_wdata  = (wcache_valid && wcache_ready) ? wcache.data : pe_data_i;
  assign cache_ctl    = Sparse && !(wcache_valid && wcache_ready) && pe_ctl_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) prio_q <= 1'b0;
    else         prio_q <= prio_d;
  end

  // The arbitrated write is registered before it fans out to the Pes caches
  // (the load engine's handshake and this arbitration end at flip-flops; the
  // caches' block RAM address and data pins start from them). A cache word
  // is written the cycle after the handshake: its readers are released no
  // earlier (a release reaches a grant two cycles after it is made), and
  // this engine's own result words are read by a later instruction only.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) cache_we_q <= 1'b0;
    else         cache_we_q <= cache_we;
  end

  always_ff @(posedge clk_i) begin
    cache_mask_q  <= cache_mask;
    cache_waddr_q <= cache_waddr;
    cache_wdata_q <= cache_wdata;
    cache_ctl_q   <= cache_ctl;
  end

  // The schedule's write (sparse builds): a CONTROL word for PE index P.
  if (Sparse) begin : g_sched_write
    always_ff @(posedge clk_i) begin
      if (!rst_ni) sched_we_q <= 1'b0;
      else         sched_we_q <= cache_we && cache_ctl && 32'(pe_i) == Pes;
    end
  end else begin : g_no_sched_write
    logic unused_pe_ctl;  // 0 on dense builds
    assign unused_pe_ctl = pe_ctl_i;
    assign sched_we_q    = 1'b0;
  end

  // Fine-grained releases: one rel0 unit per result row written, one per
  // cycle (strata_dep_sync's step_done).
  logic [PendWidth-1:0] pend_d, pend_q;

  assign step_done = run_q[RunBack] && pend_q != '0;
  always_comb begin
    pend_d = pend_q - PendWidth'(step_done);
    if (wrel_valid && fine_q) pend_d = pend_d + PendWidth'(wrel_units);
  end

  always_ff @(posedge clk_i) begin
    if (!dp_rst_n[DpRstBack]) pend_q <= '0;
    else           pend_q <= pend_d;
  end

  // ---------------------------------------------------------------- control
  logic      err_d, err_q, all_done, all_done_q;
  err_code_e err_code_d, err_code_q;
  csr_error_code_index_t err_index_d, err_index_q;

  // Done when every result is written (the cache slice empty too) and, with
  // pooling, the window generator has taken every pixel of every frame
  // (windows may end before the last rows and columns of a frame, which are
  // then still on their way). The state machine reads it registered
  // (all_done_q: done in the previous cycle of StRun; nothing enters the
  // datapath once it is done, so it stays done): the busy flags of the
  // blocks reach a flip-flop, not the state register and its fan-out.
  assign all_done     = !walk_busy && !writer_busy && !wcache_valid && !wres_valid &&
                        pend_q == '0 && (!cfg.pool.enable || (!cfg_more_q && !wg_busy));
  assign finish_valid = state_q == StFinish;

  always_comb begin
    state_d     = state_q;
    err_d       = err_q;
    err_code_d  = err_code_q;
    // The index follows the decode slot while idle, so it holds the failing
    // instruction's from the error on (err_index_o is read only with err_o),
    // and its 16 enables wait for no decoder result.
    err_index_d = (state_q == StIdle) ? nx_index_q : err_index_q;
    unique case (state_q)
      StIdle: begin
        if (checked && !abort_i) begin
          if (dec_code != ErrNone) begin
            state_d     = StError;
            err_d       = 1'b1;
            err_code_d  = dec_code;
          end else begin
            state_d = StStart;
          end
        end
      end
      StStart:  state_d = StRun;  // the dependency side is idle (asserted)
      StRun: begin
        // A packed CONV whose schedule the walker refuses (sparse builds).
        if (walk_err) begin
          state_d    = StError;
          err_d      = 1'b1;
          err_code_d = ErrUnsupported;
        end else if (all_done_q) begin
          state_d = StFinish;
        end
      end
      StFinish: if (finish_ready) state_d = StIdle;
      StError:  ;
      StAbort:  if (rd_out_q == '0 && !rd_rsp_valid_i) state_d = StIdle;
      default:  state_d = StIdle;
    endcase
    // An instruction in the decode slot is dropped too (the local reset at
    // the end of the abort clears the decoder).
    if (abort_i && (state_q != StIdle || slot_q != SlotEmpty) && state_q != StAbort) begin
      state_d = StAbort;
    end
    if (abort_i) err_d = 1'b0;
  end

  // The two next-state decodes that load far-placed copies (running and the
  // datapath reset) written out from the transitions above (asserted equal
  // to the decodes of state_d): a few registered inputs each, so the copies'
  // data inputs do not wait for the whole next-state logic (its instruction
  // checks, behind the decoder's done and a route from the decoder).
  assign run_d   = !abort_i && (state_q == StStart ||
                                (state_q == StRun && !all_done_q && !walk_err));
  assign flush_d = state_q == StAbort && rd_out_q == '0 && !rd_rsp_valid_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      err_q      <= 1'b0;
      err_code_q <= ErrNone;
      rd_out_q   <= '0;
      flush_q    <= 1'b0;
      running_q  <= 1'b0;
      all_done_q <= 1'b0;
    end else begin
      state_q    <= state_d;
      running_q  <= run_d;
      all_done_q <= state_q == StRun && all_done;
      err_q      <= err_d;
      err_code_q <= err_code_d;
      rd_out_q   <= rd_out_d;
      flush_q    <= flush_d;
    end
  end

  always_ff @(posedge clk_i) begin
    err_index_q <= err_index_d;
  end

  // busy_q: state_q != StIdle, one copy per group of the registers the idle
  // cycles load (header fields, cfg's walk / writer / pool parts), loaded
  // from the next state's idle decode written out like run_d (asserted).
  logic idle_d;
  assign idle_d = (state_q == StIdle && (slot_q == SlotEmpty || (!abort_i && !checked))) ||
                  (state_q == StFinish && finish_ready && !abort_i) || flush_d;

  strata_reg_copies #(.Copies (BusyCopies)) u_busy_copies (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (!idle_d),
    .mirror_i (state_q != StIdle),
    .q_o      (busy_q)
  );


  // ---------------------------------------------------------------- status
  assign idle_o       = state_q == StIdle && slot_q == SlotEmpty && !flush_q;
  assign busy_o       = state_q inside {StStart, StRun, StFinish} ||
                        (state_q == StIdle && slot_q != SlotEmpty);
  assign dep_wait_o   = sync_waiting;
  assign retire_o     = state_q == StFinish && finish_ready;
  assign index_o      = index_q;
  assign err_o        = err_q;
  assign err_code_o   = err_code_q;
  assign err_index_o  = err_index_q;
  assign mac_active_o = pe_in_valid && pe_in_ready;
  // P x N per beat, except DEPTHWISE beats: P x the lanes holding a kernel tap.
  assign macs_o       = !mac_active_o ? '0 :
                        cfg.dw ? IncWidth'(Pes) * IncWidth'(dwb_taps_q) : IncWidth'(Pes * Lanes);
  assign stall_out_o  = running && data_valid &&
                        (cfg.pool.from_bank ? !wg_in_ready : (pe_in_valid && !pe_in_ready));

  // ---------------------------------------------------------------- checks
  logic unused_dec_busy;
  assign unused_dec_busy = dec_busy;

  logic ok_n;  // assertions are off during reset and abort
  assign ok_n = rst_ni && !abort_i && state_q != StAbort;

  `STRATA_ASSERT_STREAM(ce_instr, clk_i, ok_n, instr_valid_i, instr_ready_o,
                        {instr_i, instr_index_i})
  `STRATA_ASSERT_STREAM(ce_rd_req, clk_i, ok_n, rd_req_valid_o, rd_req_ready_i,
                        rd_req_o)
  `STRATA_ASSERT_STREAM(ce_pe_wr, clk_i, ok_n, pe_valid_i, pe_ready_o,
                        {pe_i, pe_ctl_i, pe_addr_i, pe_data_i})
  `STRATA_ASSERT_STREAM(ce_param_wr, clk_i, ok_n, param_valid_i, param_ready_o,
                        {param_channel_i, param_data_i})
  // Responses never overrun the buffers: a request is issued only with room.
  `STRATA_ASSERT(ce_ms_room, clk_i, ok_n, ms_room == (32'(ms_count) + 2 <= MsDepth))
  `STRATA_ASSERT(ce_instr_ok, clk_i, rst_ni, instr_ok_q ==
                 (slot_q == SlotEmpty && !(state_q inside {StError, StAbort}) && !flush_q))
  `STRATA_ASSERT(ce_idle_d, clk_i, rst_ni, idle_d == (state_d == StIdle))
  `STRATA_ASSERT(ce_next_decodes, clk_i, rst_ni, run_d == (state_d == StRun) &&
                 flush_d == (state_q == StAbort && state_d == StIdle))
  `STRATA_ASSERT(ce_done_stays, clk_i, rst_ni, !(state_q == StRun && all_done_q) || all_done)
  `STRATA_ASSERT(ce_rsp_room, clk_i, ok_n, !rd_rsp_valid_i || unused_data_ready)
  `STRATA_ASSERT(ce_rsp_expected, clk_i, ok_n, !rd_rsp_valid_i || rd_out_q != '0)
  `STRATA_ASSERT(ce_data_le_side, clk_i, ok_n, data_count <= side_count)
  // FC: a neuron's parameters are there when its beats reach the array, and
  // its M, S when its result reaches the requantiser.
  `STRATA_ASSERT(ce_fc_param, clk_i, ok_n, !(cfg.fc && pe_in_valid) || fcp_valid)
  `STRATA_ASSERT(ce_fc_ms_push, clk_i, ok_n, !ms_push_q || ms_ready)
  `STRATA_ASSERT(ce_fc_ms, clk_i, ok_n, !(cfg.fc && pe_res_valid) || ms_valid)
  // Beats are well framed and the window generator accepts every frame.
  `STRATA_ASSERT(ce_pe_err, clk_i, ok_n, !pe_err)
  // Partial-sum words come only with acc_in, never with a DEPTHWISE beat, and
  // the acc_out byte counter restarts with every result.
  `STRATA_ASSERT(ce_fill_acc_in, clk_i, ok_n, !(data_valid && op_fill) || cfg.acc_in)
  `STRATA_ASSERT(ce_fill_not_dw, clk_i, ok_n, !(fill_pop && dwb_valid_q))
  `STRATA_ASSERT(ce_spill_more, clk_i, ok_n, !running_q ||
                 spill_more_q == (cfg.acc_out && spill_k_q != 2'd3))
  `STRATA_ASSERT(ce_wg_cfg, clk_i, ok_n, !wg_cfg_error)
  // Nothing of the instruction is left behind when it retires.
  `STRATA_ASSERT(ce_running, clk_i, rst_ni, running_q == (state_q == StRun))
  `STRATA_ASSERT(ce_pe_go, clk_i, rst_ni,
                 pe_go_q == (running_q && !cfg.pool_only && !cfg.dw && !(cfg.fc && !ms_room)))
  `STRATA_ASSERT(ce_drained, clk_i, ok_n, state_q != StFinish ||
                 (!side_valid && side_count == '0 && !pe_res_valid && !rq_valid && !win_valid &&
                  !dwb_valid_q &&
                  !pool_valid && !post_valid && !wres_valid))
  `STRATA_ASSERT(ce_conv_param, clk_i, ok_n,
                 !(pe_in_valid && (conv_par_q || conv_rd_q || conv_rd_q2 || conv_rd_q3)))
  `STRATA_ASSERT(ce_pend_range, clk_i, ok_n, pend_q < PendWidth'(2 ** PendWidth - Lanes - 1))

`ifndef SYNTHESIS
  initial begin
    assert (Pes == Lanes) else $fatal(1, "strata_compute_engine: this version requires P = N");
    assert (Pes == 2 ** $clog2(Pes)) else $fatal(1, "strata_compute_engine: P must be 2^k");
    assert (ReadDepth >= 3 && ReadDepth <= 7)
      else $fatal(1, "strata_compute_engine: ReadDepth must be 3..7");
    assert (Pes * Lanes < 2 ** IncWidth) else $fatal(1, "strata_compute_engine: IncWidth");
  end
`endif

endmodule : strata_compute_engine
