// SPDX-License-Identifier: Apache-2.0
// Bench top of the COMPUTE engine: strata_compute_engine wired to
// strata_banks as in strata_top. The bench plays the load engine (bank load
// write port, PE cache and parameter write ports), the store engine (bank
// store read port, to read results back), the semaphores and the controller.
// rd_stall_i / wr_stall_i hold off the engine's bank read / write requests
// for a cycle (random back-pressure on both bank ports; strata_banks itself
// never refuses the compute ports). Observation ports (obs_*) show the
// engine's accepted bank reads and writes and every write into the PE caches,
// so the bench can check addresses, ordering against the semaphores and
// stray writes. Packed ports only (Verilator-friendly): the bench's bank ports
// stay flat fields here and are packed into the bank payload structs below.
`include "strata_bank_types.svh"

module strata_compute_engine_tb_top
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
#(
  localparam int unsigned Pes            = strata_cfg_pkg::Pes,
  localparam int unsigned Lanes          = strata_cfg_pkg::Lanes,
  localparam int unsigned Banks          = strata_cfg_pkg::Banks,
  localparam int unsigned WordWidth      = Lanes * 8,
  localparam int unsigned BankIdxWidth   = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned BankAddrWidth  = $clog2(strata_cfg_pkg::BankDepth),
  localparam int unsigned PeIdxWidth     = (Pes > 1) ? $clog2(Pes) : 1,
  localparam int unsigned CacheAddrWidth = $clog2(strata_cfg_pkg::PeCacheDepth),
  localparam int unsigned ParamIdxWidth  = $clog2(strata_cfg_pkg::ParamDepth),
  localparam int unsigned TableWords     = (strata_cfg_pkg::ActTables * 256 + Lanes - 1) / Lanes,
  localparam int unsigned TableAddrWidth = (TableWords > 1) ? $clog2(TableWords) : 1
) (
  input  logic                      clk_i,            // clock
  input  logic                      rst_ni,           // synchronous reset, active low
  input  logic                      abort_i,          // controller abort
  input  logic                      fine_i,           // fine-grained dependencies
  // instruction queue
  input  logic                      instr_valid_i,
  output logic                      instr_ready_o,
  input  instr_t                    instr_i,
  input  logic [15:0]               instr_index_i,
  // semaphores: {edge 1, edge 0}
  output logic [1:0]                acq_req_o,
  output logic [31:0]               acq_amount_o,
  input  logic [1:0]                acq_grant_i,
  output logic [1:0]                rel_valid_o,
  output logic [31:0]               rel_amount_o,
  // back-pressure on the engine's bank ports
  input  logic                      rd_stall_i,       // refuse the read request this cycle
  input  logic                      wr_stall_i,       // refuse the write request this cycle
  // bank load write port (the bench fills banks)
  input  logic                      lw_valid_i,
  output logic                      lw_ready_o,
  input  logic [BankIdxWidth-1:0]   lw_bank_i,
  input  logic [BankAddrWidth-1:0]  lw_addr_i,
  input  logic [WordWidth-1:0]      lw_data_i,
  // bank store read port (the bench reads results; it announces the bank,
  // sr_active_i, a cycle before its requests, as the store engine does)
  input  logic                      sr_active_i,
  input  logic                      sr_req_valid_i,
  output logic                      sr_req_ready_o,
  input  logic [BankIdxWidth-1:0]   sr_bank_i,
  input  logic [BankAddrWidth-1:0]  sr_addr_i,
  output logic                      sr_rsp_valid_o,
  output logic [WordWidth-1:0]      sr_rsp_data_o,
  // load engine -> PE caches and parameter RAM
  input  logic                      pe_valid_i,
  output logic                      pe_ready_o,
  input  logic [PeIdxWidth-1:0]     pe_i,
  input  logic [CacheAddrWidth-1:0] pe_addr_i,
  input  logic [WordWidth-1:0]      pe_data_i,
  input  logic                      param_valid_i,
  output logic                      param_ready_o,
  input  logic [ParamIdxWidth-1:0]  param_channel_i,
  input  logic [63:0]               param_data_i,
  // activation-table write port (the bench plays LOAD TABLE)
  input  logic                      tab_valid_i,
  output logic                      tab_ready_o,
  input  logic [TableAddrWidth-1:0] tab_addr_i,
  input  logic [WordWidth-1:0]      tab_data_i,
  // engine status
  output logic                      idle_o,
  output logic                      busy_o,
  output logic                      dep_wait_o,
  output logic                      retire_o,
  output logic [15:0]               index_o,
  output logic                      err_o,
  output logic [7:0]                err_code_o,
  output logic [15:0]               err_index_o,
  output logic                      mac_active_o,
  output logic [15:0]               macs_o,
  output logic                      stall_out_o,
  // observation
  output logic                      obs_rd_fire_o,    // a bank read request was taken
  output logic [BankIdxWidth-1:0]   obs_rd_bank_o,
  output logic [BankAddrWidth-1:0]  obs_rd_addr_o,
  output logic                      obs_wr_fire_o,    // a bank write was taken
  output logic [BankIdxWidth-1:0]   obs_wr_bank_o,
  output logic [BankAddrWidth-1:0]  obs_wr_addr_o,
  output logic [WordWidth-1:0]      obs_wr_data_o,
  output logic                      obs_cache_we_o,   // a PE cache write (any source)
  output logic [Pes-1:0]            obs_cache_mask_o,
  output logic [CacheAddrWidth-1:0] obs_cache_addr_o,
  output logic [WordWidth-1:0]      obs_cache_data_o
);

  // Bank port payloads (strata_bank_types.svh), as in strata_top.
  localparam type bank_wr_t  = `STRATA_BANK_WR_T(BankIdxWidth, BankAddrWidth, WordWidth);
  localparam type bank_rd_t  = `STRATA_BANK_RD_T(BankIdxWidth, BankAddrWidth);
  localparam type bank_rsp_t = `STRATA_BANK_RSP_T(WordWidth);

  logic                     rd_valid, rd_ready, cr_ready, rsp_valid;
  bank_rd_t                 rd_req, sr_req;
  bank_wr_t                 wr_req, lw_req;
  bank_rsp_t                rsp, sr_rsp;
  logic                     wr_valid, wr_ready, cw_ready;
  logic [1:0][15:0]         acq_amount, rel_amount;
  err_code_e                err_code;

  strata_compute_engine u_engine (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .abort_i         (abort_i),
    .fine_i          (fine_i),
    .instr_valid_i   (instr_valid_i),
    .instr_ready_o   (instr_ready_o),
    .instr_i         (instr_i),
    .instr_index_i   (instr_index_i),
    .acq_req_o       (acq_req_o),
    .acq_amount_o    (acq_amount),
    .acq_grant_i     (acq_grant_i),
    .rel_valid_o     (rel_valid_o),
    .rel_amount_o    (rel_amount),
    .rd_req_valid_o  (rd_valid),
    .rd_req_ready_i  (rd_ready),
    .rd_req_o        (rd_req),
    .rd_rsp_valid_i  (rsp_valid),
    .rd_rsp_i        (rsp),
    .rd1_req_valid_o (rd1_valid),
    .rd1_req_ready_i (cr1_ready),
    .rd1_req_o       (rd1_req),
    .rd1_rsp_valid_i (cr1_rsp_valid),
    .rd1_rsp_i       (cr1_rsp),
    .wr_valid_o      (wr_valid),
    .wr_ready_i      (wr_ready),
    .wr_req_o        (wr_req),
    .pe_valid_i      (pe_valid_i),
    .pe_ready_o      (pe_ready_o),
    .pe_i            (pe_i),
    .pe_ctl_i        (1'b0),
    .pe_addr_i       (pe_addr_i),
    .pe_data_i       (pe_data_i),
    .param_valid_i   (param_valid_i),
    .param_ready_o   (param_ready_o),
    .param_channel_i (param_channel_i),
    .param_data_i    (param_data_i),
    .tab_valid_i     (tab_valid_i),
    .tab_ready_o     (tab_ready_o),
    .tab_addr_i      (tab_addr_i),
    .tab_data_i      (tab_data_i),
    .idle_o          (idle_o),
    .busy_o          (busy_o),
    .dep_wait_o      (dep_wait_o),
    .retire_o        (retire_o),
    .index_o         (index_o),
    .err_o           (err_o),
    .err_code_o      (err_code),
    .err_index_o     (err_index_o),
    .mac_active_o    (mac_active_o),
    .macs_o          (macs_o),
    .stall_out_o     (stall_out_o)
  );

  assign acq_amount_o = acq_amount;
  assign rel_amount_o = rel_amount;
  assign err_code_o   = err_code;

  // Back-pressure: a stalled cycle hides the request from the banks and
  // refuses it (ready does not depend on the engine's valid).
  assign rd_ready = cr_ready && !rd_stall_i;
  assign wr_ready = cw_ready && !wr_stall_i;

  assign lw_req.bank = lw_bank_i;
  assign lw_req.addr = lw_addr_i;
  assign lw_req.data = lw_data_i;
  assign sr_req.bank = sr_bank_i;
  assign sr_req.addr = sr_addr_i;

  // The second bank read port (ComputeReadPorts = 2) is a sparse build's;
  // the dense engine leaves it idle.
  logic      rd1_valid, cr1_ready, cr1_rsp_valid;
  bank_rd_t  rd1_req;
  bank_rsp_t cr1_rsp;

  strata_banks u_banks (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .lw_valid_i      (lw_valid_i),
    .lw_ready_o      (lw_ready_o),
    .lw_req_i        (lw_req),
    .cw_valid_i      (wr_valid && !wr_stall_i),
    .cw_ready_o      (cw_ready),
    .cw_req_i        (wr_req),
    .cr_req_valid_i  (rd_valid && !rd_stall_i),
    .cr_req_ready_o  (cr_ready),
    .cr_req_i        (rd_req),
    .cr_rsp_valid_o  (rsp_valid),
    .cr_rsp_o        (rsp),
    .cr1_req_valid_i (rd1_valid),
    .cr1_req_ready_o (cr1_ready),
    .cr1_req_i       (rd1_req),
    .cr1_rsp_valid_o (cr1_rsp_valid),
    .cr1_rsp_o       (cr1_rsp),
    .sr_active_i     (sr_active_i),
    .sr_req_valid_i  (sr_req_valid_i),
    .sr_req_ready_o  (sr_req_ready_o),
    .sr_req_i        (sr_req),
    .sr_rsp_valid_o  (sr_rsp_valid_o),
    .sr_rsp_o        (sr_rsp)
  );

  assign sr_rsp_data_o    = sr_rsp.data;

  assign obs_rd_fire_o    = rd_valid && rd_ready;
  assign obs_rd_bank_o    = rd_req.bank;
  assign obs_rd_addr_o    = rd_req.addr;
  assign obs_wr_fire_o    = wr_valid && wr_ready;
  assign obs_wr_bank_o    = wr_req.bank;
  assign obs_wr_addr_o    = wr_req.addr;
  assign obs_wr_data_o    = wr_req.data;
  // The arbitrated write in its handshake cycle (the PE caches see it a cycle
  // later, from the engine's write register; results check what they hold).
  assign obs_cache_we_o   = u_engine.cache_we;
  assign obs_cache_mask_o = u_engine.cache_mask;
  assign obs_cache_addr_o = u_engine.cache_waddr;
  assign obs_cache_data_o = u_engine.cache_wdata;

endmodule : strata_compute_engine_tb_top
