// SPDX-License-Identifier: Apache-2.0
// Cascade of K accelerators (docs/cascade.md): K strata_top instances, the
// cascade output of stage k feeding the cascade input of stage k + 1, so that
// a network split into K runs of consecutive layers runs as a pipeline.
// Interfaces: per stage, its own AXI4-Lite CSR window (s_axil_*[k]), its own
// AXI4 master (m_axi_*[k]: each stage reads its own weights and program;
// a board joins the K ports in its interconnect) and its interrupt irq_o[k];
// every per-stage port is a packed array, stage k in element k. The chain's
// ends are ports too: s_axis_cas_* enters stage 0 and m_axis_cas_* leaves
// stage K - 1 (another chain, a serial link to another board, or tied off:
// valid 0, ready 1), with chain_stop_i / chain_stop_o for the stop signal.
// Links: each stage-to-stage stream passes a two-entry register slice
// (strata_fifo), so no combinational path crosses from one instance to the
// next (the instances may be placed far apart). link_hold_i[k] stalls link k
// (k = 0 .. K - 2) for a cycle where the stream rules allow it (a bench
// stalls the links with it; tie it to 0).
// Chain stop: each stage's chain_stop_i is the OR of the other stages'
// chain_stop_o and of chain_stop_i, registered once; chain_stop_o is the OR
// of all stages' (docs/cascade.md, Stopping a chain).
// Reset: synchronous, active low, to every stage.
`include "strata_assert.svh"

module strata_cascade_top
  import strata_csr_pkg::CsrAddrWidth, strata_csr_pkg::csr_error_code_index_t;
  import strata_isa_pkg::load_link_id_t, strata_isa_pkg::store_link_id_t;
#(
  parameter int unsigned K              = 2,     // stages, >= 1
  parameter int unsigned WatchdogCycles = 4096,  // each stage's deadlock detection time
  localparam int unsigned AxiDataWidth  = strata_cfg_pkg::AxiDataWidth,
  localparam int unsigned AxiAddrWidth  = strata_cfg_pkg::AxiAddrWidth,
  localparam int unsigned Links         = (K > 1) ? K - 1 : 1  // stage-to-stage links
) (
  input  logic                                clk_i,             // clock
  input  logic                                rst_ni,            // synchronous reset, active low
  // AXI4-Lite slaves (CSRs), one per stage
  input  logic [K-1:0]                        s_axil_awvalid,    // write address valid
  output logic [K-1:0]                        s_axil_awready,    // write address ready
  input  logic [K-1:0][CsrAddrWidth-1:0]      s_axil_awaddr,     // write address
  input  logic [K-1:0]                        s_axil_wvalid,     // write data valid
  output logic [K-1:0]                        s_axil_wready,     // write data ready
  input  logic [K-1:0][31:0]                  s_axil_wdata,      // write data
  input  logic [K-1:0][3:0]                   s_axil_wstrb,      // write strobes
  output logic [K-1:0]                        s_axil_bvalid,     // write response valid
  input  logic [K-1:0]                        s_axil_bready,     // write response ready
  output logic [K-1:0][1:0]                   s_axil_bresp,      // write response
  input  logic [K-1:0]                        s_axil_arvalid,    // read address valid
  output logic [K-1:0]                        s_axil_arready,    // read address ready
  input  logic [K-1:0][CsrAddrWidth-1:0]      s_axil_araddr,     // read address
  output logic [K-1:0]                        s_axil_rvalid,     // read data valid
  input  logic [K-1:0]                        s_axil_rready,     // read data ready
  output logic [K-1:0][31:0]                  s_axil_rdata,      // read data
  output logic [K-1:0][1:0]                   s_axil_rresp,      // read response
  output logic [K-1:0]                        irq_o,             // interrupts, as strata_top.irq_o
  // AXI4 masters, one per stage
  output logic [K-1:0]                        m_axi_arvalid,     // AR valid (ID 0 fetch, 1 loads)
  input  logic [K-1:0]                        m_axi_arready,     // AR ready
  output logic [K-1:0][0:0]                   m_axi_arid,        // AR ID
  output logic [K-1:0][AxiAddrWidth-1:0]      m_axi_araddr,      // AR address
  output logic [K-1:0][7:0]                   m_axi_arlen,       // AR beats - 1 (in a 4 KB page)
  output logic [K-1:0][2:0]                   m_axi_arsize,      // AR beat size: full width
  output logic [K-1:0][1:0]                   m_axi_arburst,     // AR burst type: INCR
  input  logic [K-1:0]                        m_axi_rvalid,      // R valid
  output logic [K-1:0]                        m_axi_rready,      // R ready
  input  logic [K-1:0][0:0]                   m_axi_rid,         // R ID (routes the beat)
  input  logic [K-1:0][AxiDataWidth-1:0]      m_axi_rdata,       // R data
  input  logic [K-1:0][1:0]                   m_axi_rresp,       // R response
  input  logic [K-1:0]                        m_axi_rlast,       // R last beat of the burst
  output logic [K-1:0]                        m_axi_awvalid,     // AW valid (ID 0: stores)
  input  logic [K-1:0]                        m_axi_awready,     // AW ready
  output logic [K-1:0][0:0]                   m_axi_awid,        // AW ID
  output logic [K-1:0][AxiAddrWidth-1:0]      m_axi_awaddr,      // AW address
  output logic [K-1:0][7:0]                   m_axi_awlen,       // AW beats - 1 (in a 4 KB page)
  output logic [K-1:0][2:0]                   m_axi_awsize,      // AW beat size: full width
  output logic [K-1:0][1:0]                   m_axi_awburst,     // AW burst type: INCR
  output logic [K-1:0]                        m_axi_wvalid,      // W valid
  input  logic [K-1:0]                        m_axi_wready,      // W ready
  output logic [K-1:0][AxiDataWidth-1:0]      m_axi_wdata,       // W data
  output logic [K-1:0][AxiDataWidth/8-1:0]    m_axi_wstrb,       // W strobes (0 after an abort)
  output logic [K-1:0]                        m_axi_wlast,       // W last beat of the burst
  input  logic [K-1:0]                        m_axi_bvalid,      // B valid
  output logic [K-1:0]                        m_axi_bready,      // B ready
  input  logic [K-1:0][0:0]                   m_axi_bid,         // B ID
  input  logic [K-1:0][1:0]                   m_axi_bresp,       // B response
  // The chain's ends: into stage 0, out of stage K - 1
  input  logic                                s_axis_cas_tvalid, // stage 0 input valid (0: none)
  output logic                                s_axis_cas_tready, // stage 0 input ready
  input  logic [AxiDataWidth-1:0]             s_axis_cas_tdata,  // stage 0 input beat
  input  logic                                s_axis_cas_tlast,  // a transfer's last beat
  input  load_link_id_t                       s_axis_cas_tuser,  // its link id
  output logic                                m_axis_cas_tvalid, // stage K - 1 output valid
  input  logic                                m_axis_cas_tready, // stage K - 1 output ready
  output logic [AxiDataWidth-1:0]             m_axis_cas_tdata,  // stage K - 1 output beat
  output logic                                m_axis_cas_tlast,  // a transfer's last beat
  output store_link_id_t                      m_axis_cas_tuser,  // its link id
  input  logic                                chain_stop_i,      // stop every stage
  output logic                                chain_stop_o,      // a stage stops with an error
  input  logic [Links-1:0]                    link_hold_i        // bench: hold link k this cycle
);

  // One beat of a link (TDATA, TLAST, TUSER).
  typedef struct packed {
    logic [AxiDataWidth-1:0] data;
    logic                    last;
    store_link_id_t          user;  // a STORE's link id, a LOAD's on the next stage
  } beat_t;

  // Each stage's cascade input and output.
  logic  [K-1:0] in_valid, in_ready, out_valid, out_ready;
  beat_t [K-1:0] in_beat, out_beat;
  logic  [K-1:0] stop_out, stop_in_q;

  for (genvar k = 0; k < K; k++) begin : g_stage
    // Debug trace ports: observation only, unused in a chain.
    logic                unused_count;
    logic [3:0]          unused_retire;
    csr_error_code_index_t [2:0] unused_index;
    logic [9:0]          unused_state;
    logic [15:0]         unused_macs;

    strata_top #(
      .WatchdogCycles (WatchdogCycles)
    ) u_stage (
      .clk_i             (clk_i),
      .rst_ni            (rst_ni),
      .s_axil_awvalid    (s_axil_awvalid[k]),
      .s_axil_awready    (s_axil_awready[k]),
      .s_axil_awaddr     (s_axil_awaddr[k]),
      .s_axil_wvalid     (s_axil_wvalid[k]),
      .s_axil_wready     (s_axil_wready[k]),
      .s_axil_wdata      (s_axil_wdata[k]),
      .s_axil_wstrb      (s_axil_wstrb[k]),
      .s_axil_bvalid     (s_axil_bvalid[k]),
      .s_axil_bready     (s_axil_bready[k]),
      .s_axil_bresp      (s_axil_bresp[k]),
      .s_axil_arvalid    (s_axil_arvalid[k]),
      .s_axil_arready    (s_axil_arready[k]),
      .s_axil_araddr     (s_axil_araddr[k]),
      .s_axil_rvalid     (s_axil_rvalid[k]),
      .s_axil_rready     (s_axil_rready[k]),
      .s_axil_rdata      (s_axil_rdata[k]),
      .s_axil_rresp      (s_axil_rresp[k]),
      .irq_o             (irq_o[k]),
      .m_axi_arvalid     (m_axi_arvalid[k]),
      .m_axi_arready     (m_axi_arready[k]),
      .m_axi_arid        (m_axi_arid[k]),
      .m_axi_araddr      (m_axi_araddr[k]),
      .m_axi_arlen       (m_axi_arlen[k]),
      .m_axi_arsize      (m_axi_arsize[k]),
      .m_axi_arburst     (m_axi_arburst[k]),
      .m_axi_rvalid      (m_axi_rvalid[k]),
      .m_axi_rready      (m_axi_rready[k]),
      .m_axi_rid         (m_axi_rid[k]),
      .m_axi_rdata       (m_axi_rdata[k]),
      .m_axi_rresp       (m_axi_rresp[k]),
      .m_axi_rlast       (m_axi_rlast[k]),
      .m_axi_awvalid     (m_axi_awvalid[k]),
      .m_axi_awready     (m_axi_awready[k]),
      .m_axi_awid        (m_axi_awid[k]),
      .m_axi_awaddr      (m_axi_awaddr[k]),
      .m_axi_awlen       (m_axi_awlen[k]),
      .m_axi_awsize      (m_axi_awsize[k]),
      .m_axi_awburst     (m_axi_awburst[k]),
      .m_axi_wvalid      (m_axi_wvalid[k]),
      .m_axi_wready      (m_axi_wready[k]),
      .m_axi_wdata       (m_axi_wdata[k]),
      .m_axi_wstrb       (m_axi_wstrb[k]),
      .m_axi_wlast       (m_axi_wlast[k]),
      .m_axi_bvalid      (m_axi_bvalid[k]),
      .m_axi_bready      (m_axi_bready[k]),
      .m_axi_bid         (m_axi_bid[k]),
      .m_axi_bresp       (m_axi_bresp[k]),
      .m_axis_cas_tvalid (out_valid[k]),
      .m_axis_cas_tready (out_ready[k]),
      .m_axis_cas_tdata  (out_beat[k].data),
      .m_axis_cas_tlast  (out_beat[k].last),
      .m_axis_cas_tuser  (out_beat[k].user),
      .s_axis_cas_tvalid (in_valid[k]),
      .s_axis_cas_tready (in_ready[k]),
      .s_axis_cas_tdata  (in_beat[k].data),
      .s_axis_cas_tlast  (in_beat[k].last),
      .s_axis_cas_tuser  (in_beat[k].user),
      .chain_stop_i      (stop_in_q[k]),
      .chain_stop_o      (stop_out[k]),
      .trace_count_o     (unused_count),
      .trace_retire_o    (unused_retire),
      .trace_index_o     (unused_index),
      .trace_state_o     (unused_state),
      .trace_macs_o      (unused_macs)
    );

    // The others' stop (and the chain's), registered: a stage's own stop
    // never reaches its input, and the OR across the instances is not in
    // front of each stage's controller.
    logic [K-1:0] others;
    always_comb begin
      others    = stop_out;
      others[k] = 1'b0;
    end
    always_ff @(posedge clk_i) begin
      if (!rst_ni) stop_in_q[k] <= 1'b0;
      else         stop_in_q[k] <= |others || chain_stop_i;
    end
  end

  // Links: stage k's output through a register slice to stage k + 1's input.
  // link_hold_i[k] holds either side of the slice for a cycle, except a side
  // whose beat is already offered and waiting (AXI4-Stream: a valid beat
  // stays until it is taken), so the hold is a legal stall on both streams.
  for (genvar k = 0; k + 1 < K; k++) begin : g_link
    logic       slice_in_ready, slice_out_valid;
    logic       in_wait_q, out_wait_q;   // a beat waits on the slice's input / output side
    logic       hold_in, hold_out;
    logic [1:0] unused_count;

    assign hold_in  = link_hold_i[k] && !in_wait_q;
    assign hold_out = link_hold_i[k] && !out_wait_q;

    strata_fifo #(
      .T     (beat_t),
      .Depth (2)
    ) u_slice (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (out_valid[k] && !hold_in),
      .in_ready_o  (slice_in_ready),
      .in_data_i   (out_beat[k]),
      .out_valid_o (slice_out_valid),
      .out_ready_i (in_ready[k + 1] && !hold_out),
      .out_data_o  (in_beat[k + 1]),
      .count_o     (unused_count)
    );

    assign out_ready[k]    = slice_in_ready && !hold_in;
    assign in_valid[k + 1] = slice_out_valid && !hold_out;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        in_wait_q  <= 1'b0;
        out_wait_q <= 1'b0;
      end else begin
        in_wait_q  <= out_valid[k] && !out_ready[k];
        out_wait_q <= in_valid[k + 1] && !in_ready[k + 1];
      end
    end
  end

  // The chain's ends.
  assign in_valid[0]       = s_axis_cas_tvalid;
  assign in_beat[0]        = beat_t'{data: s_axis_cas_tdata, last: s_axis_cas_tlast,
                                     user: s_axis_cas_tuser};
  assign s_axis_cas_tready = in_ready[0];
  assign m_axis_cas_tvalid = out_valid[K-1];
  assign out_ready[K-1]    = m_axis_cas_tready;
  assign m_axis_cas_tdata  = out_beat[K-1].data;
  assign m_axis_cas_tlast  = out_beat[K-1].last;
  assign m_axis_cas_tuser  = out_beat[K-1].user;
  assign chain_stop_o      = |stop_out;

  if (K == 1) begin : g_no_links
    logic unused_hold;
    assign unused_hold = |link_hold_i;
  end

`ifndef SYNTHESIS
  initial begin
    assert (K >= 1) else $fatal(1, "strata_cascade_top: K must be >= 1");
  end

  // A link carries a STORE's link id to the next stage's LOAD (TUSER).
  if ($bits(load_link_id_t) != $bits(store_link_id_t)) begin : g_link_id_widths
    $error("strata_cascade_top: LOAD and STORE link_id differ in width (one TUSER per link)");
  end
`endif

endmodule : strata_cascade_top
