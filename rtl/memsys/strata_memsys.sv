// SPDX-License-Identifier: Apache-2.0
// Memory system and control of the accelerator: every block of strata_top
// except the compute engine, wired as docs/architecture.md ("RTL structure")
// describes:
//   strata_csr, strata_controller, strata_perf_counters, strata_fetch,
//   strata_dep_sems, strata_axi_rd_arbiter, strata_load_engine,
//   strata_store_engine, strata_banks.
// The compute engine's connections are ports (prefix cp_ / cw_ / cr_ / cr1_ /
// pe_ / param_): strata_top attaches strata_compute_engine to them, and the
// memory system bench plays the compute engine on them. Sparse builds
// (Sparse = 1) add a second compute read port (cr1_*: strata_banks builds
// every bank twice, ComputeReadPorts = 2, for the packed CONV's two
// activation words per beat) and LOAD CONTROL on the PE write port (pe_ctl_o:
// a control word for PE pe_o, or with pe_o = P a schedule word); on dense
// builds cr1_* is ignored (outputs 0) and pe_ctl_o is 0. AXI4 master: ID 0 =
// instruction fetch and all writes, ID 1 = loads. The two buses are request /
// response struct bundles (strata_axi_pkg; the AXI4 channel structs are built
// below from AxiAddrWidth / AxiDataWidth); strata_top maps them onto flat ports.
// Cascade (docs/cascade.md): the store engine drives the AXI4-Stream output
// (cas_out_*), the load engine takes the input (cas_in_*). From an abort
// until the next START after a run that stopped with an error, the input
// takes and drops every beat (cas_flush), and so it does from a chain stop
// that finds this stage idle until its next START: what a stopped sender left
// in the link never reaches the next run. chain_stop_i / chain_stop_o link the
// controllers of a chain (strata_controller).
// Latency and throughput are those of the blocks (see each block's header).
`include "strata_axi_types.svh"
`include "strata_bank_types.svh"

module strata_memsys
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
  import strata_axi_pkg::*;
#(
  parameter int unsigned WatchdogCycles = 4096,  // deadlock detection time
  parameter int unsigned SemWidth       = 32,    // semaphore counter bits
  // Configuration (strata_top passes every one; the defaults serve the bench).
  parameter int unsigned HwVersion      = strata_cfg_pkg::HwVersion,      // configuration version
  parameter int unsigned Pes            = strata_cfg_pkg::Pes,            // P
  parameter int unsigned Lanes          = strata_cfg_pkg::Lanes,          // N (word bytes)
  parameter int unsigned Banks          = strata_cfg_pkg::Banks,          // on-chip banks
  parameter int unsigned BankDepth      = strata_cfg_pkg::BankDepth,      // words per bank
  parameter int unsigned PeCacheDepth   = strata_cfg_pkg::PeCacheDepth,   // words per PE cache
  parameter int unsigned ParamDepth     = strata_cfg_pkg::ParamDepth,     // parameter channels
  parameter int unsigned MaxKernel      = strata_cfg_pkg::MaxKernel,      // conv kernel side
  parameter int unsigned MaxPoolKernel  = strata_cfg_pkg::MaxPoolKernel,  // pool window side
  parameter int unsigned MaxImageWidth  = strata_cfg_pkg::MaxImageWidth,  // line-buffer row length
  parameter int unsigned AxiDataWidth   = strata_cfg_pkg::AxiDataWidth,   // AXI beat bits
  parameter int unsigned AxiAddrWidth   = strata_cfg_pkg::AxiAddrWidth,   // AXI byte address bits
  parameter bit          Sparse         = strata_cfg_pkg::Sparse,         // sparse build (CONFIG)
  parameter int unsigned ActTables      = strata_cfg_pkg::ActTables,      // activation tables
  localparam int unsigned WordWidth     = Lanes * strata_cfg_pkg::DataWidth,
  localparam int unsigned BankIdxWidth  = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned BankAddrWidth = $clog2(BankDepth),
  localparam int unsigned PeIdxWidth    = (Pes > 1) ? $clog2(Pes) : 1,
  // The PE write port's index: PE 0..P-1, and on sparse builds also P (the schedule).
  localparam int unsigned PeSelWidth    = Sparse ? $clog2(Pes + 1) : PeIdxWidth,
  localparam int unsigned CacheAddrWidth = $clog2(PeCacheDepth),
  localparam int unsigned ParamIdxWidth = $clog2(ParamDepth),
  localparam int unsigned TableWords    = (ActTables * 256 + Lanes - 1) / Lanes,
  localparam int unsigned TableAddrWidth = (TableWords > 1) ? $clog2(TableWords) : 1,
  localparam int unsigned IncWidth      = 16,
  // AXI4 channels and bundles (strata_axi_types.svh; AW as AR).
  localparam type axi_ar_t  = `STRATA_AXI_AX_T(AxiAddrWidth),
  localparam type axi_aw_t  = axi_ar_t,
  localparam type axi_w_t   = `STRATA_AXI_W_T(AxiDataWidth),
  localparam type axi_r_t   = `STRATA_AXI_R_T(AxiDataWidth),
  localparam type axi_b_t   = `STRATA_AXI_B_T,
  localparam type axi_req_t = `STRATA_AXI_REQ_T(axi_ar_t, axi_aw_t, axi_w_t),
  localparam type axi_rsp_t = `STRATA_AXI_RSP_T(axi_r_t, axi_b_t),
  // Bank port payloads (strata_bank_types.svh).
  localparam type bank_wr_t  = `STRATA_BANK_WR_T(BankIdxWidth, BankAddrWidth, WordWidth),
  localparam type bank_rd_t  = `STRATA_BANK_RD_T(BankIdxWidth, BankAddrWidth),
  localparam type bank_rsp_t = `STRATA_BANK_RSP_T(WordWidth)
) (
  input  logic                       clk_i,             // clock
  input  logic                       rst_ni,            // synchronous reset, active low
  input  axil_req_t                  s_axil_req_i,      // AXI4-Lite slave (CSRs): request
  output axil_rsp_t                  s_axil_rsp_o,      // and response
  output logic                       irq_o,             // interrupt
  output axi_req_t                   m_axi_req_o,       // AXI4 master: request
  input  axi_rsp_t                   m_axi_rsp_i,       // and response
  // compute engine stand-in: instruction queue
  output logic                       cp_instr_valid_o,  // COMPUTE instruction available
  input  logic                       cp_instr_ready_i,  // taken
  output instr_t                     cp_instr_o,        // instruction
  output csr_error_code_index_t      cp_index_o,        // its fetch index
  // semaphores (edge 0: L2C / C2S, edge 1: S2C / C2L)
  input  logic [1:0]                 cp_acq_req_i,      // acquire request
  input  dep_count_t [1:0]           cp_acq_amount_i,   // {edge 1, edge 0} units
  output logic [1:0]                 cp_acq_grant_o,    // granted
  input  logic [1:0]                 cp_rel_valid_i,    // release
  input  dep_count_t [1:0]           cp_rel_amount_i,   // {edge 1, edge 0} units
  // bank ports
  input  logic                       cw_valid_i,        // compute bank write
  output logic                       cw_ready_o,        // always 1 (compute wins)
  input  bank_wr_t                   cw_req_i,          // bank, word address, word
  input  logic                       cr_req_valid_i,    // compute bank read request
  output logic                       cr_req_ready_o,    // always 1 (compute wins)
  input  bank_rd_t                   cr_req_i,          // bank, word address
  output logic                       cr_rsp_valid_o,    // the word of the request 3 cycles ago
  output bank_rsp_t                  cr_rsp_o,          // word
  input  logic                       cr1_req_valid_i,   // second compute bank read (sparse
  output logic                       cr1_req_ready_o,   // builds; ignored, outputs 0, on dense)
  input  bank_rd_t                   cr1_req_i,         // bank, word address
  output logic                       cr1_rsp_valid_o,   // as cr_rsp_valid_o
  output bank_rsp_t                  cr1_rsp_o,         // word
  // load engine -> PE caches and parameter RAM
  output logic                       pe_valid_o,        // PE cache write
  input  logic                       pe_ready_i,        // taken
  output logic [PeSelWidth-1:0]      pe_o,              // PE (P: the schedule, with pe_ctl_o)
  output logic                       pe_ctl_o,          // LOAD CONTROL word (sparse builds)
  output logic [CacheAddrWidth-1:0]  pe_addr_o,         // cache word address
  output logic [WordWidth-1:0]       pe_data_o,         // cache word (N bytes)
  output logic                       param_valid_o,     // parameter RAM write
  input  logic                       param_ready_i,     // taken
  output logic [ParamIdxWidth-1:0]   param_channel_o,   // channel
  output logic [63:0]                param_data_o,      // bias (bytes 0-3), M (4-5), S (6)
  output logic                       tab_valid_o,       // activation-table write (word)
  input  logic                       tab_ready_i,       // taken (with the word's last byte)
  output logic [TableAddrWidth-1:0]  tab_addr_o,        // word a: entries a*N .. a*N + N - 1
  output logic [WordWidth-1:0]       tab_data_o,        // N table entries
  // compute engine status and performance strobes
  input  logic                       cp_idle_i,         // idle, nothing outstanding
  input  logic                       cp_busy_i,         // executing
  input  logic                       cp_dep_wait_i,     // waiting on a semaphore
  input  csr_error_code_index_t      cp_index_i,        // current instruction index
  input  logic                       cp_err_i,          // error (held until abort)
  input  csr_error_code_code_t       cp_err_code_i,     // its code
  input  csr_error_code_index_t      cp_err_index_i,    // its index
  input  logic                       cp_retire_i,       // instruction finished (pulse)
  input  logic                       cp_mac_active_i,   // a beat entered the PE array
  input  logic [IncWidth-1:0]        cp_macs_i,         // useful MACs this cycle
  input  logic                       cp_stall_out_i,    // result path back-pressure
  output logic                       abort_o,           // controller abort (to the compute engine)
  output logic                       clear_o,           // controller clear (run start)
  output logic                       fine_grain_o,      // mode of the run
  output logic [5*SemWidth-1:0]      sem_count_o,       // L2C, C2S, C2L, S2C, S2L (debug)
  // debug trace (strata_top's trace port): what the performance counters count
  output logic                       trace_count_o,     // the counters count this cycle
  output logic [2:0]                 trace_retire_o,    // retire: [0] load [1] store [2] fetch
  output csr_error_code_index_t [1:0] trace_index_o,    // load [15:0], store [31:16] index
  output logic [5:0]                 trace_state_o,     // load busy/dep/mem, store busy/dep/mem
  // cascade (AXI4-Stream, TUSER = link id)
  output logic                       cas_out_valid_o,   // TVALID
  input  logic                       cas_out_ready_i,   // TREADY
  output logic [AxiDataWidth-1:0]    cas_out_data_o,    // TDATA
  output logic                       cas_out_last_o,    // TLAST: a transfer's last beat
  output store_link_id_t             cas_out_user_o,    // TUSER: its link id
  input  logic                       cas_in_valid_i,    // TVALID
  output logic                       cas_in_ready_o,    // TREADY
  input  logic [AxiDataWidth-1:0]    cas_in_data_i,     // TDATA
  input  logic                       cas_in_last_i,     // TLAST
  input  load_link_id_t              cas_in_user_i,     // TUSER
  input  logic                       chain_stop_i,      // another stage stopped with an error
  output logic                       chain_stop_o       // this stage stops with an error
);

  // ---------------------------------------------------------------- CSRs + control
  logic        start, fine_grain_csr, busy, done, error, done_set, error_set;
  logic [63:6] instr_base;
  logic [31:0] instr_limit;
  err_code_e   err_code;
  csr_error_code_index_t err_index;
  logic [NumPerfCounters*64-1:0] counters;
  logic        fine;
  // Copies of the controller's clear and abort, one per client (see
  // strata_controller): the fetcher, the semaphores, the counters and trace;
  // the fetcher, the semaphores, the load and store engines and the compute
  // engine (abort_o).
  localparam int unsigned ClrFetch = 0, ClrSems = 1, ClrPerf = 2, ClearCopies = 3;
  localparam int unsigned AbtFetch = 0, AbtSems = 1, AbtLoad = 2, AbtStore = 3,
                          AbtCompute = 4, AbortCopies = 5;
  logic [ClearCopies-1:0] clear;
  logic [AbortCopies-1:0] abort;

  strata_csr #(
    .HwVersion     (HwVersion),
    .Pes           (Pes),
    .Lanes         (Lanes),
    .Banks         (Banks),
    .BankDepth     (BankDepth),
    .PeCacheDepth  (PeCacheDepth),
    .ParamDepth    (ParamDepth),
    .AxiDataWidth  (AxiDataWidth),
    .MaxKernel     (MaxKernel),
    .MaxPoolKernel (MaxPoolKernel),
    .MaxImageWidth (MaxImageWidth),
    .AxiAddrWidth  (AxiAddrWidth),
    .Sparse        (Sparse),
    .ActTables     (ActTables)
  ) u_csr (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .s_req_i      (s_axil_req_i),
    .s_rsp_o      (s_axil_rsp_o),
    .start_o      (start),
    .fine_grain_o (fine_grain_csr),
    .instr_base_o (instr_base),
    .instr_limit_o(instr_limit),
    .busy_i       (busy),
    .done_i       (done),
    .error_i      (error),
    .err_code_i   (err_code),
    .err_index_i  (err_index),
    .done_set_i   (done_set),
    .error_set_i  (error_set),
    .counters_i   (counters),
    .irq_o        (irq_o)
  );

  logic        f_idle, f_end, f_blocked, f_err, f_retire;
  err_code_e   f_err_code;
  csr_error_code_index_t f_err_index;
  logic [2:0]  q_empty;
  logic [2:0]  eng_idle, eng_wait, eng_err;
  csr_error_code_index_t [2:0] eng_index, eng_err_index;
  err_code_e [2:0]  eng_err_code;
  logic        sem_overflow;

  strata_controller #(
    .WatchdogCycles (WatchdogCycles),
    .ClearCopies    (ClearCopies),
    .AbortCopies    (AbortCopies)
  ) u_ctrl (
    .clk_i             (clk_i),
    .rst_ni            (rst_ni),
    .start_i           (start),
    .fine_grain_i      (fine_grain_csr),
    .fetch_idle_i      (f_idle),
    .fetch_end_i       (f_end),
    .fetch_blocked_i   (f_blocked),
    .fetch_err_i       (f_err),
    .fetch_err_code_i  (f_err_code),
    .fetch_err_index_i (f_err_index),
    .eng_queue_empty_i (q_empty),
    .eng_idle_i        (eng_idle),
    .eng_dep_wait_i    (eng_wait),
    .eng_index_i       (eng_index),
    .eng_err_i         (eng_err),
    .eng_err_code_i    (eng_err_code),
    .eng_err_index_i   (eng_err_index),
    .sem_overflow_i    (sem_overflow),
    .chain_stop_i      (chain_stop_i),
    .chain_stop_o      (chain_stop_o),
    .clear_o           (clear),
    .abort_o           (abort),
    .fine_grain_o      (fine),
    .busy_o            (busy),
    .done_o            (done),
    .error_o           (error),
    .err_code_o        (err_code),
    .err_index_o       (err_index),
    .done_set_o        (done_set),
    .error_set_o       (error_set)
  );

  assign abort_o      = abort[AbtCompute];
  assign clear_o      = clear[ClrPerf];
  assign fine_grain_o = fine;

  // ---------------------------------------------------------------- fetch + queues
  logic                    f_arvalid, f_arready, f_rvalid, f_rready, f_rlast;
  logic [AxiAddrWidth-1:0] f_araddr;
  logic [7:0]              f_arlen;
  logic [AxiDataWidth-1:0] f_rdata;
  logic [1:0]              f_rresp;
  logic                    ld_q_valid, ld_q_ready, st_q_valid, st_q_ready;
  instr_t                  ld_q_instr, st_q_instr;
  csr_error_code_index_t   ld_q_index, st_q_index;

  strata_fetch #(
    .AxiDataWidth (AxiDataWidth),
    .AxiAddrWidth (AxiAddrWidth),
    .HwVersion    (HwVersion),
    .Pes          (Pes),
    .Lanes        (Lanes),
    .Banks        (Banks),
    .BankDepth    (BankDepth),
    .PeCacheDepth (PeCacheDepth),
    .ParamDepth   (ParamDepth),
    .Sparse       (Sparse),
    .ActTables    (ActTables)
  ) u_fetch (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .clear_i       (clear[ClrFetch]),
    .abort_i       (abort[AbtFetch]),
    .base_i        (instr_base),
    .limit_i       (instr_limit),
    .arvalid_o     (f_arvalid),
    .arready_i     (f_arready),
    .araddr_o      (f_araddr),
    .arlen_o       (f_arlen),
    .rvalid_i      (f_rvalid),
    .rready_o      (f_rready),
    .rdata_i       (f_rdata),
    .rresp_i       (f_rresp),
    .rlast_i       (f_rlast),
    .ld_valid_o    (ld_q_valid),
    .ld_ready_i    (ld_q_ready),
    .ld_instr_o    (ld_q_instr),
    .ld_index_o    (ld_q_index),
    .cp_valid_o    (cp_instr_valid_o),
    .cp_ready_i    (cp_instr_ready_i),
    .cp_instr_o    (cp_instr_o),
    .cp_index_o    (cp_index_o),
    .st_valid_o    (st_q_valid),
    .st_ready_i    (st_q_ready),
    .st_instr_o    (st_q_instr),
    .st_index_o    (st_q_index),
    .queue_empty_o (q_empty),
    .idle_o        (f_idle),
    .end_o         (f_end),
    .blocked_o     (f_blocked),
    .err_o         (f_err),
    .err_code_o    (f_err_code),
    .err_index_o   (f_err_index),
    .retire_o      (f_retire)
  );

  // ---------------------------------------------------------------- semaphores
  logic [1:0]       ld_acq_req, ld_acq_grant, ld_rel_valid;
  dep_count_t [1:0] ld_acq_amount, ld_rel_amount;
  logic [1:0]       st_acq_req, st_acq_grant, st_rel_valid;
  dep_count_t [1:0] st_acq_amount, st_rel_amount;

  strata_dep_sems #(
    .SemWidth (SemWidth)
  ) u_sems (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .clear_i         (clear[ClrSems]),
    .abort_i         (abort[AbtSems]),
    .ld_acq_req_i    (ld_acq_req),
    .ld_acq_amount_i (ld_acq_amount),
    .ld_acq_grant_o  (ld_acq_grant),
    .ld_rel_valid_i  (ld_rel_valid),
    .ld_rel_amount_i (ld_rel_amount),
    .cp_acq_req_i    (cp_acq_req_i),
    .cp_acq_amount_i (cp_acq_amount_i),
    .cp_acq_grant_o  (cp_acq_grant_o),
    .cp_rel_valid_i  (cp_rel_valid_i),
    .cp_rel_amount_i (cp_rel_amount_i),
    .st_acq_req_i    (st_acq_req),
    .st_acq_amount_i (st_acq_amount),
    .st_acq_grant_o  (st_acq_grant),
    .st_rel_valid_i  (st_rel_valid),
    .st_rel_amount_i (st_rel_amount),
    .count_o         (sem_count_o),
    .overflow_o      (sem_overflow)
  );

  // ---------------------------------------------------------------- AXI read sharing
  logic                    l_arvalid, l_arready, l_rvalid, l_rready, l_rlast;
  logic [AxiAddrWidth-1:0] l_araddr;
  logic [7:0]              l_arlen;
  logic [AxiDataWidth-1:0] l_rdata;
  logic [1:0]              l_rresp;

  strata_axi_rd_arbiter #(
    .AxiDataWidth (AxiDataWidth),
    .AxiAddrWidth (AxiAddrWidth)
  ) u_rd_arb (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .f_arvalid_i (f_arvalid),
    .f_arready_o (f_arready),
    .f_araddr_i  (f_araddr),
    .f_arlen_i   (f_arlen),
    .f_rvalid_o  (f_rvalid),
    .f_rready_i  (f_rready),
    .f_rdata_o   (f_rdata),
    .f_rresp_o   (f_rresp),
    .f_rlast_o   (f_rlast),
    .l_arvalid_i (l_arvalid),
    .l_arready_o (l_arready),
    .l_araddr_i  (l_araddr),
    .l_arlen_i   (l_arlen),
    .l_rvalid_o  (l_rvalid),
    .l_rready_i  (l_rready),
    .l_rdata_o   (l_rdata),
    .l_rresp_o   (l_rresp),
    .l_rlast_o   (l_rlast),
    .m_arvalid_o (m_axi_req_o.ar_valid),
    .m_arready_i (m_axi_rsp_i.ar_ready),
    .m_arid_o    (m_axi_req_o.ar.id),
    .m_araddr_o  (m_axi_req_o.ar.addr),
    .m_arlen_o   (m_axi_req_o.ar.len),
    .m_arsize_o  (m_axi_req_o.ar.size),
    .m_arburst_o (m_axi_req_o.ar.burst),
    .m_rvalid_i  (m_axi_rsp_i.r_valid),
    .m_rready_o  (m_axi_req_o.r_ready),
    .m_rid_i     (m_axi_rsp_i.r.id),
    .m_rdata_i   (m_axi_rsp_i.r.data),
    .m_rresp_i   (m_axi_rsp_i.r.resp),
    .m_rlast_i   (m_axi_rsp_i.r.last)
  );

  // ---------------------------------------------------------------- cascade input flush
  // From the abort of a run to the next START after it stopped (STATUS.ERROR),
  // and from a chain stop that finds this stage idle to its next START, every
  // beat on the cascade input is taken and dropped: what a stopped sender
  // left in the link never reaches a run.
  logic cas_flush_q, idle_stop_q, ld_cas_ready;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cas_flush_q <= 1'b0;
      idle_stop_q <= 1'b0;
    end else begin
      idle_stop_q <= !clear[ClrFetch] && (idle_stop_q || (chain_stop_i && !busy));
      cas_flush_q <= (abort[AbtLoad] || error || idle_stop_q) && !clear[ClrFetch];
    end
  end
  assign cas_in_ready_o = cas_flush_q || ld_cas_ready;

  // ---------------------------------------------------------------- engines + banks
  logic                     lw_valid, lw_ready;
  bank_wr_t                 lw_req;
  logic                     ld_busy, ld_wait, ld_mem_wait, ld_retire;
  logic                     sr_active, sr_req_valid, sr_req_ready, sr_rsp_valid;
  bank_rd_t                 sr_req;
  bank_rsp_t                sr_rsp;
  logic                     st_busy, st_wait, st_mem_wait, st_retire;

  strata_load_engine #(
    .AxiDataWidth (AxiDataWidth),
    .AxiAddrWidth (AxiAddrWidth),
    .Lanes        (Lanes),
    .Pes          (Pes),
    .Banks        (Banks),
    .BankDepth    (BankDepth),
    .PeCacheDepth (PeCacheDepth),
    .ParamDepth   (ParamDepth),
    .Sparse       (Sparse),
    .ActTables    (ActTables)
  ) u_load (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .abort_i         (abort[AbtLoad]),
    .fine_i          (fine),
    .instr_valid_i   (ld_q_valid),
    .instr_ready_o   (ld_q_ready),
    .instr_i         (ld_q_instr),
    .instr_index_i   (ld_q_index),
    .acq_req_o       (ld_acq_req),
    .acq_amount_o    (ld_acq_amount),
    .acq_grant_i     (ld_acq_grant),
    .rel_valid_o     (ld_rel_valid),
    .rel_amount_o    (ld_rel_amount),
    .arvalid_o       (l_arvalid),
    .arready_i       (l_arready),
    .araddr_o        (l_araddr),
    .arlen_o         (l_arlen),
    .rvalid_i        (l_rvalid),
    .rready_o        (l_rready),
    .rdata_i         (l_rdata),
    .rresp_i         (l_rresp),
    .rlast_i         (l_rlast),
    .cas_valid_i     (cas_in_valid_i && !cas_flush_q),
    .cas_ready_o     (ld_cas_ready),
    .cas_data_i      (cas_in_data_i),
    .cas_last_i      (cas_in_last_i),
    .cas_user_i      (cas_in_user_i),
    .bank_valid_o    (lw_valid),
    .bank_ready_i    (lw_ready),
    .bank_req_o      (lw_req),
    .pe_valid_o      (pe_valid_o),
    .pe_ready_i      (pe_ready_i),
    .pe_o            (pe_o),
    .pe_ctl_o        (pe_ctl_o),
    .pe_addr_o       (pe_addr_o),
    .pe_data_o       (pe_data_o),
    .param_valid_o   (param_valid_o),
    .param_ready_i   (param_ready_i),
    .param_channel_o (param_channel_o),
    .param_data_o    (param_data_o),
    .tab_valid_o     (tab_valid_o),
    .tab_ready_i     (tab_ready_i),
    .tab_addr_o      (tab_addr_o),
    .tab_data_o      (tab_data_o),
    .idle_o          (eng_idle[0]),
    .busy_o          (ld_busy),
    .dep_wait_o      (ld_wait),
    .mem_wait_o      (ld_mem_wait),
    .retire_o        (ld_retire),
    .index_o         (eng_index[0]),
    .err_o           (eng_err[0]),
    .err_code_o      (eng_err_code[0]),
    .err_index_o     (eng_err_index[0])
  );

  strata_store_engine #(
    .AxiDataWidth (AxiDataWidth),
    .AxiAddrWidth (AxiAddrWidth),
    .Lanes        (Lanes),
    .Banks        (Banks),
    .BankDepth    (BankDepth)
  ) u_store (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .abort_i          (abort[AbtStore]),
    .fine_i           (fine),
    .instr_valid_i    (st_q_valid),
    .instr_ready_o    (st_q_ready),
    .instr_i          (st_q_instr),
    .instr_index_i    (st_q_index),
    .acq_req_o        (st_acq_req),
    .acq_amount_o     (st_acq_amount),
    .acq_grant_i      (st_acq_grant),
    .rel_valid_o      (st_rel_valid),
    .rel_amount_o     (st_rel_amount),
    .bank_active_o    (sr_active),
    .bank_req_valid_o (sr_req_valid),
    .bank_req_ready_i (sr_req_ready),
    .bank_req_o       (sr_req),
    .bank_rsp_valid_i (sr_rsp_valid),
    .bank_rsp_i       (sr_rsp),
    .awvalid_o        (m_axi_req_o.aw_valid),
    .awready_i        (m_axi_rsp_i.aw_ready),
    .awaddr_o         (m_axi_req_o.aw.addr),
    .awlen_o          (m_axi_req_o.aw.len),
    .wvalid_o         (m_axi_req_o.w_valid),
    .wready_i         (m_axi_rsp_i.w_ready),
    .wdata_o          (m_axi_req_o.w.data),
    .wstrb_o          (m_axi_req_o.w.strb),
    .wlast_o          (m_axi_req_o.w.last),
    .bvalid_i         (m_axi_rsp_i.b_valid),
    .bready_o         (m_axi_req_o.b_ready),
    .bresp_i          (m_axi_rsp_i.b.resp),
    .cas_valid_o      (cas_out_valid_o),
    .cas_ready_i      (cas_out_ready_i),
    .cas_data_o       (cas_out_data_o),
    .cas_last_o       (cas_out_last_o),
    .cas_user_o       (cas_out_user_o),
    .idle_o           (eng_idle[2]),
    .busy_o           (st_busy),
    .dep_wait_o       (st_wait),
    .mem_wait_o       (st_mem_wait),
    .retire_o         (st_retire),
    .index_o          (eng_index[2]),
    .err_o            (eng_err[2]),
    .err_code_o       (eng_err_code[2]),
    .err_index_o      (eng_err_index[2])
  );

  assign m_axi_req_o.aw.id    = 1'b0;
  assign m_axi_req_o.aw.size  = axi_size_t'($clog2(AxiDataWidth / 8));
  assign m_axi_req_o.aw.burst = AxiBurstIncr;
  logic unused_bid;
  assign unused_bid = m_axi_rsp_i.b.id;  // one write ID

  // The compute engine's status.
  assign eng_idle[1]      = cp_idle_i;
  assign eng_index[1]     = cp_index_i;
  assign eng_err[1]       = cp_err_i;
  assign eng_err_code[1]  = err_code_e'(cp_err_code_i);
  assign eng_err_index[1] = cp_err_index_i;
  assign eng_wait         = {st_wait, cp_dep_wait_i, ld_wait};

  strata_banks #(
    .Banks            (Banks),
    .BankDepth        (BankDepth),
    .WordWidth        (WordWidth),
    .ComputeReadPorts (Sparse ? 2 : 1)
  ) u_banks (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .lw_valid_i      (lw_valid),
    .lw_ready_o      (lw_ready),
    .lw_req_i        (lw_req),
    .cw_valid_i      (cw_valid_i),
    .cw_ready_o      (cw_ready_o),
    .cw_req_i        (cw_req_i),
    .cr_req_valid_i  (cr_req_valid_i),
    .cr_req_ready_o  (cr_req_ready_o),
    .cr_req_i        (cr_req_i),
    .cr_rsp_valid_o  (cr_rsp_valid_o),
    .cr_rsp_o        (cr_rsp_o),
    .cr1_req_valid_i (cr1_req_valid_i),
    .cr1_req_ready_o (cr1_req_ready_o),
    .cr1_req_i       (cr1_req_i),
    .cr1_rsp_valid_o (cr1_rsp_valid_o),
    .cr1_rsp_o       (cr1_rsp_o),
    .sr_active_i     (sr_active),
    .sr_req_valid_i  (sr_req_valid),
    .sr_req_ready_o  (sr_req_ready),
    .sr_req_i        (sr_req),
    .sr_rsp_valid_o  (sr_rsp_valid),
    .sr_rsp_o        (sr_rsp)
  );

  // ---------------------------------------------------------------- performance counters
  localparam int unsigned BeatBytes = AxiDataWidth / 8;
  logic [NumPerfCounters-1:0][IncWidth-1:0] inc;

  always_comb begin
    inc = '0;
    inc[PERF_CYCLES_IDX]            = IncWidth'(1);
    inc[PERF_LOAD_BUSY_IDX]         = IncWidth'(ld_busy);
    inc[PERF_COMPUTE_BUSY_IDX]      = IncWidth'(cp_busy_i);
    inc[PERF_STORE_BUSY_IDX]        = IncWidth'(st_busy);
    inc[PERF_MAC_ACTIVE_IDX]        = IncWidth'(cp_mac_active_i);
    inc[PERF_MACS_IDX]              = cp_macs_i;
    inc[PERF_STALL_COMPUTE_DEP_IDX] = IncWidth'(cp_dep_wait_i);
    inc[PERF_STALL_COMPUTE_OUT_IDX] = IncWidth'(cp_stall_out_i);
    inc[PERF_STALL_LOAD_DEP_IDX]    = IncWidth'(ld_wait);
    inc[PERF_STALL_LOAD_MEM_IDX]    = IncWidth'(ld_mem_wait);
    inc[PERF_STALL_STORE_DEP_IDX]   = IncWidth'(st_wait);
    inc[PERF_STALL_STORE_MEM_IDX]   = IncWidth'(st_mem_wait);
    inc[PERF_INSTRUCTIONS_IDX]      = IncWidth'(ld_retire) + IncWidth'(cp_retire_i) +
                                      IncWidth'(st_retire) + IncWidth'(f_retire);
    inc[PERF_READ_BYTES_IDX]        = (m_axi_rsp_i.r_valid && m_axi_req_o.r_ready) ?
                                      IncWidth'(BeatBytes) : '0;
    inc[PERF_WRITE_BYTES_IDX]       = (m_axi_req_o.w_valid && m_axi_rsp_i.w_ready &&
                                       |m_axi_req_o.w.strb) ? IncWidth'(BeatBytes) : '0;
  end

  // Debug trace: the per-cycle terms of the counters above, for strata_top's trace port.
  assign trace_count_o  = busy && !clear[ClrPerf];
  assign trace_retire_o = {f_retire, st_retire, ld_retire};
  assign trace_index_o  = {eng_index[2], eng_index[0]};
  assign trace_state_o  = {st_mem_wait, st_wait, st_busy, ld_mem_wait, ld_wait, ld_busy};

  strata_perf_counters #(
    .NumCounters (NumPerfCounters),
    .IncWidth    (IncWidth)
  ) u_perf (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clear_i  (clear[ClrPerf]),
    .enable_i (busy),
    .inc_i    (inc),
    .count_o  (counters)
  );

endmodule : strata_memsys
