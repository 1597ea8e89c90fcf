// SPDX-License-Identifier: Apache-2.0
// Strata accelerator top: the memory system and control (strata_memsys: CSRs,
// controller, fetch, semaphores, load and store engines, banks, AXI) with the
// COMPUTE engine (strata_compute_engine: PE array, requantiser, pooling path,
// PE caches, parameter RAM) attached to its compute ports.
// Interfaces: AXI4-Lite CSR slave (config/registers.yaml, docs/registers.md),
// AXI4 master to external memory (ID 0 = instruction fetch and all writes,
// ID 1 = loads; INCR bursts that never cross 4 KB), level interrupt irq_o, and an
// output-only debug trace port (trace_*_o; docs/architecture.md), and the
// cascade: an AXI4-Stream output and input (m_axis_cas_*, s_axis_cas_*;
// TDATA AxiDataWidth bits, TUSER the transfer's 16-bit link id, TLAST its
// last beat) with the chain-stop pair, which strata_cascade_top links from
// one accelerator to the next (docs/cascade.md). A single accelerator ties
// s_axis_cas_tvalid and chain_stop_i to 0 and m_axis_cas_tready to 1.
// The AXI ports are flat and named (m_axi_arvalid, s_axil_awaddr, ...) for
// integrators and the C++ harness, mapped field by field onto strata_memsys's
// request / response bundles.
// Programs: docs/isa.md; configuration: strata_cfg_pkg (P = N required).
// Reset: synchronous, active low; the compute engine follows one cycle late
// (a registered copy).
`include "strata_axi_types.svh"
`include "strata_bank_types.svh"

module strata_top
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
  import strata_axi_pkg::axil_req_t, strata_axi_pkg::axil_rsp_t;
#(
  parameter int unsigned WatchdogCycles = 4096,  // cycles without progress before DEADLOCK
  // The configuration (config/*.yaml -> strata_cfg_pkg), read here once and
  // passed down: no block below reads a configuration value from the package.
  localparam int unsigned HwVersion      = strata_cfg_pkg::HwVersion,
  localparam int unsigned Lanes          = strata_cfg_pkg::Lanes,
  localparam int unsigned Pes            = strata_cfg_pkg::Pes,
  localparam int unsigned Banks          = strata_cfg_pkg::Banks,
  localparam int unsigned BankDepth      = strata_cfg_pkg::BankDepth,
  localparam int unsigned PeCacheDepth   = strata_cfg_pkg::PeCacheDepth,
  localparam int unsigned ParamDepth     = strata_cfg_pkg::ParamDepth,
  localparam int unsigned MaxKernel      = strata_cfg_pkg::MaxKernel,
  localparam int unsigned MaxPoolKernel  = strata_cfg_pkg::MaxPoolKernel,
  localparam int unsigned MaxImageWidth  = strata_cfg_pkg::MaxImageWidth,
  localparam int unsigned AxiDataWidth   = strata_cfg_pkg::AxiDataWidth,
  localparam int unsigned AxiAddrWidth   = strata_cfg_pkg::AxiAddrWidth,
  localparam bit          Sparse         = strata_cfg_pkg::Sparse,
  localparam int unsigned PeFabricLanes  = strata_cfg_pkg::PeFabricLanes,
  localparam int unsigned ActTables      = strata_cfg_pkg::ActTables,
  localparam int unsigned TableWords     = (ActTables * 256 + Lanes - 1) / Lanes,
  localparam int unsigned TableAddrWidth = (TableWords > 1) ? $clog2(TableWords) : 1,
  localparam int unsigned WordWidth      = Lanes * strata_cfg_pkg::DataWidth,
  localparam int unsigned BankIdxWidth   = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned BankAddrWidth  = $clog2(BankDepth),
  localparam int unsigned PeIdxWidth     = (Pes > 1) ? $clog2(Pes) : 1,
  localparam int unsigned PeSelWidth     = Sparse ? $clog2(Pes + 1) : PeIdxWidth,  // + schedule
  localparam int unsigned CacheAddrWidth = $clog2(PeCacheDepth),
  localparam int unsigned ParamIdxWidth  = $clog2(ParamDepth),
  localparam int unsigned IncWidth       = 16
) (
  input  logic                       clk_i,             // clock
  input  logic                       rst_ni,            // synchronous reset, active low
  // AXI4-Lite slave (CSRs)
  input  logic                       s_axil_awvalid,    // write address valid
  output logic                       s_axil_awready,    // write address ready
  input  logic [CsrAddrWidth-1:0]    s_axil_awaddr,     // write address
  input  logic                       s_axil_wvalid,     // write data valid
  output logic                       s_axil_wready,     // write data ready
  input  logic [31:0]                s_axil_wdata,      // write data
  input  logic [3:0]                 s_axil_wstrb,      // write strobes
  output logic                       s_axil_bvalid,     // write response valid
  input  logic                       s_axil_bready,     // write response ready
  output logic [1:0]                 s_axil_bresp,      // write response
  input  logic                       s_axil_arvalid,    // read address valid
  output logic                       s_axil_arready,    // read address ready
  input  logic [CsrAddrWidth-1:0]    s_axil_araddr,     // read address
  output logic                       s_axil_rvalid,     // read data valid
  input  logic                       s_axil_rready,     // read data ready
  output logic [31:0]                s_axil_rdata,      // read data
  output logic [1:0]                 s_axil_rresp,      // read response
  output logic                       irq_o,             // level, |(IRQ_STATUS & IRQ_ENABLE)
  // AXI4 master
  output logic                       m_axi_arvalid,     // AR valid (ID 0 fetch, 1 loads)
  input  logic                       m_axi_arready,     // AR ready
  output logic [0:0]                 m_axi_arid,        // AR ID
  output logic [AxiAddrWidth-1:0]    m_axi_araddr,      // AR address
  output logic [7:0]                 m_axi_arlen,       // AR beats - 1 (INCR, in a 4 KB page)
  output logic [2:0]                 m_axi_arsize,      // AR beat size: full width
  output logic [1:0]                 m_axi_arburst,     // AR burst type: INCR
  input  logic                       m_axi_rvalid,      // R valid
  output logic                       m_axi_rready,      // R ready
  input  logic [0:0]                 m_axi_rid,         // R ID (routes the beat)
  input  logic [AxiDataWidth-1:0]    m_axi_rdata,       // R data
  input  logic [1:0]                 m_axi_rresp,       // R response (not OKAY: AXI_READ)
  input  logic                       m_axi_rlast,       // R last beat of the burst
  output logic                       m_axi_awvalid,     // AW valid (ID 0: stores)
  input  logic                       m_axi_awready,     // AW ready
  output logic [0:0]                 m_axi_awid,        // AW ID
  output logic [AxiAddrWidth-1:0]    m_axi_awaddr,      // AW address
  output logic [7:0]                 m_axi_awlen,       // AW beats - 1 (INCR, in a 4 KB page)
  output logic [2:0]                 m_axi_awsize,      // AW beat size: full width
  output logic [1:0]                 m_axi_awburst,     // AW burst type: INCR
  output logic                       m_axi_wvalid,      // W valid
  input  logic                       m_axi_wready,      // W ready
  output logic [AxiDataWidth-1:0]    m_axi_wdata,       // W data
  output logic [AxiDataWidth/8-1:0]  m_axi_wstrb,       // W strobes (0 after an abort)
  output logic                       m_axi_wlast,       // W last beat of the burst
  input  logic                       m_axi_bvalid,      // B valid
  output logic                       m_axi_bready,      // B ready
  input  logic [0:0]                 m_axi_bid,         // B ID
  input  logic [1:0]                 m_axi_bresp,       // B response (not OKAY: AXI_WRITE)
  // Cascade (docs/cascade.md): STORE CASCADE drives the output, LOAD CASCADE takes the input.
  output logic                       m_axis_cas_tvalid, // output stream valid
  input  logic                       m_axis_cas_tready, // output stream ready
  output logic [AxiDataWidth-1:0]    m_axis_cas_tdata,  // output beat
  output logic                       m_axis_cas_tlast,  // a transfer's last beat
  output store_link_id_t             m_axis_cas_tuser,  // its link id
  input  logic                       s_axis_cas_tvalid, // input stream valid
  output logic                       s_axis_cas_tready, // input stream ready
  input  logic [AxiDataWidth-1:0]    s_axis_cas_tdata,  // input beat
  input  logic                       s_axis_cas_tlast,  // a transfer's last beat
  input  load_link_id_t              s_axis_cas_tuser,  // its link id
  input  logic                       chain_stop_i,      // another stage stopped: CHAIN_STOP
  output logic                       chain_stop_o,      // this one drains after an error
  // Debug trace port (docs/architecture.md, "Debug trace port"): observation only, leave
  // unconnected or give it to an ILA. Registered: it shows each cycle's terms one cycle
  // later. The runner samples it each cycle to split the performance counters by layer.
  // State bits: [0] load busy [1] load dep wait
  // [2] load mem wait [3] compute busy [4] compute dep wait [5] compute stall out
  // [6] MAC active [7] store busy [8] store dep wait [9] store mem wait.
  output logic                       trace_count_o,     // the performance counters count
  output logic [3:0]                 trace_retire_o,    // retire: load, compute, store, fetch
  output csr_error_code_index_t [2:0] trace_index_o,    // load, compute, store instr. index
  output logic [9:0]                 trace_state_o,     // engine state bits (above)
  output logic [IncWidth-1:0]        trace_macs_o       // useful MACs this cycle
);

  // Compute engine <-> memory system.
  logic                      cp_instr_valid, cp_instr_ready;
  instr_t                    cp_instr;
  csr_error_code_index_t     cp_index;
  logic [1:0]                cp_acq_req, cp_acq_grant, cp_rel_valid;
  dep_count_t [1:0]          cp_acq_amount, cp_rel_amount;
  logic                      cw_valid, cw_ready, cr_req_valid, cr_req_ready, cr_rsp_valid;
  // Bank port payloads between the compute engine and the memory system
  // (strata_bank_types.svh).
  localparam type bank_wr_t  = `STRATA_BANK_WR_T(BankIdxWidth, BankAddrWidth, WordWidth);
  localparam type bank_rd_t  = `STRATA_BANK_RD_T(BankIdxWidth, BankAddrWidth);
  localparam type bank_rsp_t = `STRATA_BANK_RSP_T(WordWidth);
  bank_wr_t                  cw_req;
  bank_rd_t                  cr_req;
  bank_rsp_t                 cr_rsp;
  logic                      pe_valid, pe_ready, param_valid, param_ready;
  logic [PeSelWidth-1:0]     pe;
  logic                      pe_ctl;
  logic                      cr1_req_valid, cr1_req_ready, cr1_rsp_valid;  // second bank read
  bank_rd_t                  cr1_req;                                      // port (sparse)
  bank_rsp_t                 cr1_rsp;
  logic [CacheAddrWidth-1:0] pe_addr;
  logic [WordWidth-1:0]      pe_data;
  logic [ParamIdxWidth-1:0]  param_channel;
  logic [63:0]               param_data;
  logic                      tab_valid, tab_ready;  // LOAD TABLE words
  logic [TableAddrWidth-1:0] tab_addr;
  logic [WordWidth-1:0]      tab_data;
  logic                      cp_idle, cp_busy, cp_dep_wait, cp_err, cp_retire;
  logic                      cp_mac_active, cp_stall_out;
  csr_error_code_index_t     cp_cur_index, cp_err_index;
  err_code_e                 cp_err_code;
  logic [IncWidth-1:0]       cp_macs;
  logic                      abort, clear, fine;
  logic [5*32-1:0]           sem_count;
  logic                      ms_count;
  logic [2:0]                ms_retire;
  csr_error_code_index_t [1:0] ms_index;
  logic [5:0]                ms_state;

  // The compute engine's reset is a registered copy of rst_ni
  // (strata_reg_copies): its reset net starts beside the engine (with the
  // inverter an ECP5 flip-flop's active-high LSR needs), not at the memory
  // system's reset net across the die. The engine leaves reset one cycle
  // after the memory system, which cannot send it anything that early (an
  // instruction needs a CSR START first). The memory system, with the
  // AXI ports, follows rst_ni itself.
  logic cp_rst_n;

  strata_reg_copies #(.Copies (1)) u_cp_rst (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (1'b1),
    .mirror_i (1'b1),
    .q_o      (cp_rst_n)
  );

  // The flat, named bus ports onto strata_memsys's request / response
  // bundles, field by field (strata_axi_pkg, strata_axi_types.svh).
  localparam type axi_ar_t  = `STRATA_AXI_AX_T(AxiAddrWidth);
  localparam type axi_w_t   = `STRATA_AXI_W_T(AxiDataWidth);
  localparam type axi_r_t   = `STRATA_AXI_R_T(AxiDataWidth);
  localparam type axi_b_t   = `STRATA_AXI_B_T;
  localparam type axi_req_t = `STRATA_AXI_REQ_T(axi_ar_t, axi_ar_t, axi_w_t);
  localparam type axi_rsp_t = `STRATA_AXI_RSP_T(axi_r_t, axi_b_t);

  axil_req_t s_axil_req;
  axil_rsp_t s_axil_rsp;
  axi_req_t  m_axi_req;
  axi_rsp_t  m_axi_rsp;

  assign s_axil_req = '{aw: '{addr: s_axil_awaddr}, aw_valid: s_axil_awvalid,
                        w: '{data: s_axil_wdata, strb: s_axil_wstrb}, w_valid: s_axil_wvalid,
                        b_ready: s_axil_bready,
                        ar: '{addr: s_axil_araddr}, ar_valid: s_axil_arvalid,
                        r_ready: s_axil_rready};
  assign s_axil_awready = s_axil_rsp.aw_ready;
  assign s_axil_wready  = s_axil_rsp.w_ready;
  assign s_axil_bvalid  = s_axil_rsp.b_valid;
  assign s_axil_bresp   = s_axil_rsp.b.resp;
  assign s_axil_arready = s_axil_rsp.ar_ready;
  assign s_axil_rvalid  = s_axil_rsp.r_valid;
  assign s_axil_rdata   = s_axil_rsp.r.data;
  assign s_axil_rresp   = s_axil_rsp.r.resp;

  assign m_axi_arvalid = m_axi_req.ar_valid;
  assign m_axi_arid    = m_axi_req.ar.id;
  assign m_axi_araddr  = m_axi_req.ar.addr;
  assign m_axi_arlen   = m_axi_req.ar.len;
  assign m_axi_arsize  = m_axi_req.ar.size;
  assign m_axi_arburst = m_axi_req.ar.burst;
  assign m_axi_rready  = m_axi_req.r_ready;
  assign m_axi_awvalid = m_axi_req.aw_valid;
  assign m_axi_awid    = m_axi_req.aw.id;
  assign m_axi_awaddr  = m_axi_req.aw.addr;
  assign m_axi_awlen   = m_axi_req.aw.len;
  assign m_axi_awsize  = m_axi_req.aw.size;
  assign m_axi_awburst = m_axi_req.aw.burst;
  assign m_axi_wvalid  = m_axi_req.w_valid;
  assign m_axi_wdata   = m_axi_req.w.data;
  assign m_axi_wstrb   = m_axi_req.w.strb;
  assign m_axi_wlast   = m_axi_req.w.last;
  assign m_axi_bready  = m_axi_req.b_ready;
  assign m_axi_rsp = '{aw_ready: m_axi_awready, w_ready: m_axi_wready,
                       b: '{id: m_axi_bid, resp: m_axi_bresp}, b_valid: m_axi_bvalid,
                       ar_ready: m_axi_arready,
                       r: '{id: m_axi_rid, data: m_axi_rdata, resp: m_axi_rresp,
                            last: m_axi_rlast},
                       r_valid: m_axi_rvalid};

  strata_memsys #(
    .WatchdogCycles (WatchdogCycles),
    .HwVersion      (HwVersion),
    .Pes            (Pes),
    .Lanes          (Lanes),
    .Banks          (Banks),
    .BankDepth      (BankDepth),
    .PeCacheDepth   (PeCacheDepth),
    .ParamDepth     (ParamDepth),
    .MaxKernel      (MaxKernel),
    .MaxPoolKernel  (MaxPoolKernel),
    .MaxImageWidth  (MaxImageWidth),
    .AxiDataWidth   (AxiDataWidth),
    .AxiAddrWidth   (AxiAddrWidth),
    .Sparse         (Sparse),
    .ActTables      (ActTables)
  ) u_memsys (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .s_axil_req_i     (s_axil_req),
    .s_axil_rsp_o     (s_axil_rsp),
    .irq_o            (irq_o),
    .m_axi_req_o      (m_axi_req),
    .m_axi_rsp_i      (m_axi_rsp),
    .cp_instr_valid_o (cp_instr_valid),
    .cp_instr_ready_i (cp_instr_ready),
    .cp_instr_o       (cp_instr),
    .cp_index_o       (cp_index),
    .cp_acq_req_i     (cp_acq_req),
    .cp_acq_amount_i  (cp_acq_amount),
    .cp_acq_grant_o   (cp_acq_grant),
    .cp_rel_valid_i   (cp_rel_valid),
    .cp_rel_amount_i  (cp_rel_amount),
    .cw_valid_i       (cw_valid),
    .cw_ready_o       (cw_ready),
    .cw_req_i         (cw_req),
    .cr_req_valid_i   (cr_req_valid),
    .cr_req_ready_o   (cr_req_ready),
    .cr_req_i         (cr_req),
    .cr_rsp_valid_o   (cr_rsp_valid),
    .cr_rsp_o         (cr_rsp),
    .cr1_req_valid_i  (cr1_req_valid),
    .cr1_req_ready_o  (cr1_req_ready),
    .cr1_req_i        (cr1_req),
    .cr1_rsp_valid_o  (cr1_rsp_valid),
    .cr1_rsp_o        (cr1_rsp),
    .pe_valid_o       (pe_valid),
    .pe_ready_i       (pe_ready),
    .pe_o             (pe),
    .pe_ctl_o         (pe_ctl),
    .pe_addr_o        (pe_addr),
    .pe_data_o        (pe_data),
    .param_valid_o    (param_valid),
    .param_ready_i    (param_ready),
    .param_channel_o  (param_channel),
    .param_data_o     (param_data),
    .tab_valid_o      (tab_valid),
    .tab_ready_i      (tab_ready),
    .tab_addr_o       (tab_addr),
    .tab_data_o       (tab_data),
    .cp_idle_i        (cp_idle),
    .cp_busy_i        (cp_busy),
    .cp_dep_wait_i    (cp_dep_wait),
    .cp_index_i       (cp_cur_index),
    .cp_err_i         (cp_err),
    .cp_err_code_i    (cp_err_code),
    .cp_err_index_i   (cp_err_index),
    .cp_retire_i      (cp_retire),
    .cp_mac_active_i  (cp_mac_active),
    .cp_macs_i        (cp_macs),
    .cp_stall_out_i   (cp_stall_out),
    .abort_o          (abort),
    .clear_o          (clear),
    .fine_grain_o     (fine),
    .sem_count_o      (sem_count),
    .trace_count_o    (ms_count),
    .trace_retire_o   (ms_retire),
    .trace_index_o    (ms_index),
    .trace_state_o    (ms_state),
    .cas_out_valid_o  (m_axis_cas_tvalid),
    .cas_out_ready_i  (m_axis_cas_tready),
    .cas_out_data_o   (m_axis_cas_tdata),
    .cas_out_last_o   (m_axis_cas_tlast),
    .cas_out_user_o   (m_axis_cas_tuser),
    .cas_in_valid_i   (s_axis_cas_tvalid),
    .cas_in_ready_o   (s_axis_cas_tready),
    .cas_in_data_i    (s_axis_cas_tdata),
    .cas_in_last_i    (s_axis_cas_tlast),
    .cas_in_user_i    (s_axis_cas_tuser),
    .chain_stop_i     (chain_stop_i),
    .chain_stop_o     (chain_stop_o)
  );

  strata_compute_engine #(
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
    .PeFabricLanes (PeFabricLanes),
    .ActTables     (ActTables)
  ) u_compute (
    .clk_i           (clk_i),
    .rst_ni          (cp_rst_n),
    .abort_i         (abort),
    .fine_i          (fine),
    .instr_valid_i   (cp_instr_valid),
    .instr_ready_o   (cp_instr_ready),
    .instr_i         (cp_instr),
    .instr_index_i   (cp_index),
    .acq_req_o       (cp_acq_req),
    .acq_amount_o    (cp_acq_amount),
    .acq_grant_i     (cp_acq_grant),
    .rel_valid_o     (cp_rel_valid),
    .rel_amount_o    (cp_rel_amount),
    .rd_req_valid_o  (cr_req_valid),
    .rd_req_ready_i  (cr_req_ready),
    .rd_req_o        (cr_req),
    .rd_rsp_valid_i  (cr_rsp_valid),
    .rd_rsp_i        (cr_rsp),
    .rd1_req_valid_o (cr1_req_valid),
    .rd1_req_ready_i (cr1_req_ready),
    .rd1_req_o       (cr1_req),
    .rd1_rsp_valid_i (cr1_rsp_valid),
    .rd1_rsp_i       (cr1_rsp),
    .wr_valid_o      (cw_valid),
    .wr_ready_i      (cw_ready),
    .wr_req_o        (cw_req),
    .pe_valid_i      (pe_valid),
    .pe_ready_o      (pe_ready),
    .pe_i            (pe),
    .pe_ctl_i        (pe_ctl),
    .pe_addr_i       (pe_addr),
    .pe_data_i       (pe_data),
    .param_valid_i   (param_valid),
    .param_ready_o   (param_ready),
    .param_channel_i (param_channel),
    .param_data_i    (param_data),
    .tab_valid_i     (tab_valid),
    .tab_ready_o     (tab_ready),
    .tab_addr_i      (tab_addr),
    .tab_data_i      (tab_data),
    .idle_o          (cp_idle),
    .busy_o          (cp_busy),
    .dep_wait_o      (cp_dep_wait),
    .retire_o        (cp_retire),
    .index_o         (cp_cur_index),
    .err_o           (cp_err),
    .err_code_o      (cp_err_code),
    .err_index_o     (cp_err_index),
    .mac_active_o    (cp_mac_active),
    .macs_o          (cp_macs),
    .stall_out_o     (cp_stall_out)
  );

  // Debug trace port: the memory system's terms and the compute engine's,
  // regrouped and registered (the port shows each cycle one cycle late, every
  // bit alike). Registered, the port's logic is the engines' own: no output
  // (to pins, an ILA or a test harness) pulls the engines' retire and state
  // logic towards it, and an ILA samples flip-flops.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      trace_count_o  <= 1'b0;
      trace_retire_o <= '0;
    end else begin
      trace_count_o  <= ms_count;
      trace_retire_o <= {ms_retire[2], ms_retire[1], cp_retire, ms_retire[0]};
    end
  end

  always_ff @(posedge clk_i) begin
    trace_index_o <= {ms_index[1], cp_cur_index, ms_index[0]};
    trace_state_o <= {ms_state[5:3], cp_mac_active, cp_stall_out, cp_dep_wait, cp_busy,
                      ms_state[2:0]};
    trace_macs_o  <= cp_macs;
  end

  logic unused_sem_count, unused_clear;
  assign unused_sem_count = ^sem_count;  // debug view, not used at the top
  assign unused_clear     = clear;       // the compute engine is cleared by abort and reset

endmodule : strata_top
