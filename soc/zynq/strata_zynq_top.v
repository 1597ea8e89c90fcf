// SPDX-License-Identifier: Apache-2.0
// Strata for a Vivado block design on a Zynq-7000 (soc/zynq/strata_zynq.tcl,
// docs/board.md): a Verilog wrapper, as IP integrator's module references
// take no SystemVerilog top, around strata_top with its AXI4 master
// completed for the PS's HP port (cache, protection, lock and QoS tied to a
// normal, non-secure, bufferable access) and the cascade ports tied off.
// The parameters must be the generated configuration's (rtl/pkg/
// strata_cfg_pkg.sv, strata_csr_pkg.sv): the Tcl reads them from there.
module strata_zynq_top #(
  parameter integer AXI_ADDR_WIDTH = 40,  // strata_cfg_pkg::AxiAddrWidth
  parameter integer AXI_DATA_WIDTH = 64,  // strata_cfg_pkg::AxiDataWidth
  parameter integer CSR_ADDR_WIDTH = 12   // strata_csr_pkg::CsrAddrWidth
) (
  (* X_INTERFACE_PARAMETER = "ASSOCIATED_BUSIF m_axi:s_axil, ASSOCIATED_RESET rst_ni" *)
  input  wire                        clk_i,
  (* X_INTERFACE_PARAMETER = "POLARITY ACTIVE_LOW" *)
  input  wire                        rst_ni,
  // Registers (AXI4-Lite slave).
  input  wire                        s_axil_awvalid,
  output wire                        s_axil_awready,
  input  wire [CSR_ADDR_WIDTH-1:0]   s_axil_awaddr,
  input  wire                        s_axil_wvalid,
  output wire                        s_axil_wready,
  input  wire [31:0]                 s_axil_wdata,
  input  wire [3:0]                  s_axil_wstrb,
  output wire                        s_axil_bvalid,
  input  wire                        s_axil_bready,
  output wire [1:0]                  s_axil_bresp,
  input  wire                        s_axil_arvalid,
  output wire                        s_axil_arready,
  input  wire [CSR_ADDR_WIDTH-1:0]   s_axil_araddr,
  output wire                        s_axil_rvalid,
  input  wire                        s_axil_rready,
  output wire [31:0]                 s_axil_rdata,
  output wire [1:0]                  s_axil_rresp,
  (* X_INTERFACE_INFO = "xilinx.com:signal:interrupt:1.0 irq_o INTERRUPT" *)
  (* X_INTERFACE_PARAMETER = "SENSITIVITY LEVEL_HIGH" *)
  output wire                        irq_o,
  // Main memory (AXI4 master).
  output wire                        m_axi_arvalid,
  input  wire                        m_axi_arready,
  output wire [0:0]                  m_axi_arid,
  output wire [AXI_ADDR_WIDTH-1:0]   m_axi_araddr,
  output wire [7:0]                  m_axi_arlen,
  output wire [2:0]                  m_axi_arsize,
  output wire [1:0]                  m_axi_arburst,
  output wire [3:0]                  m_axi_arcache,
  output wire [2:0]                  m_axi_arprot,
  output wire [0:0]                  m_axi_arlock,
  output wire [3:0]                  m_axi_arqos,
  input  wire                        m_axi_rvalid,
  output wire                        m_axi_rready,
  input  wire [0:0]                  m_axi_rid,
  input  wire [AXI_DATA_WIDTH-1:0]   m_axi_rdata,
  input  wire [1:0]                  m_axi_rresp,
  input  wire                        m_axi_rlast,
  output wire                        m_axi_awvalid,
  input  wire                        m_axi_awready,
  output wire [0:0]                  m_axi_awid,
  output wire [AXI_ADDR_WIDTH-1:0]   m_axi_awaddr,
  output wire [7:0]                  m_axi_awlen,
  output wire [2:0]                  m_axi_awsize,
  output wire [1:0]                  m_axi_awburst,
  output wire [3:0]                  m_axi_awcache,
  output wire [2:0]                  m_axi_awprot,
  output wire [0:0]                  m_axi_awlock,
  output wire [3:0]                  m_axi_awqos,
  output wire                        m_axi_wvalid,
  input  wire                        m_axi_wready,
  output wire [AXI_DATA_WIDTH-1:0]   m_axi_wdata,
  output wire [AXI_DATA_WIDTH/8-1:0] m_axi_wstrb,
  output wire                        m_axi_wlast,
  input  wire                        m_axi_bvalid,
  output wire                        m_axi_bready,
  input  wire [0:0]                  m_axi_bid,
  input  wire [1:0]                  m_axi_bresp
);

  // Normal, non-secure data accesses the interconnect may buffer and modify.
  assign m_axi_arcache = 4'b0011;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_arprot  = 3'b000;
  assign m_axi_awprot  = 3'b000;
  assign m_axi_arlock  = 1'b0;
  assign m_axi_awlock  = 1'b0;
  assign m_axi_arqos   = 4'b0000;
  assign m_axi_awqos   = 4'b0000;

  strata_top u_strata (
    .clk_i             (clk_i),
    .rst_ni            (rst_ni),
    .s_axil_awvalid    (s_axil_awvalid),
    .s_axil_awready    (s_axil_awready),
    .s_axil_awaddr     (s_axil_awaddr),
    .s_axil_wvalid     (s_axil_wvalid),
    .s_axil_wready     (s_axil_wready),
    .s_axil_wdata      (s_axil_wdata),
    .s_axil_wstrb      (s_axil_wstrb),
    .s_axil_bvalid     (s_axil_bvalid),
    .s_axil_bready     (s_axil_bready),
    .s_axil_bresp      (s_axil_bresp),
    .s_axil_arvalid    (s_axil_arvalid),
    .s_axil_arready    (s_axil_arready),
    .s_axil_araddr     (s_axil_araddr),
    .s_axil_rvalid     (s_axil_rvalid),
    .s_axil_rready     (s_axil_rready),
    .s_axil_rdata      (s_axil_rdata),
    .s_axil_rresp      (s_axil_rresp),
    .irq_o             (irq_o),
    .m_axi_arvalid     (m_axi_arvalid),
    .m_axi_arready     (m_axi_arready),
    .m_axi_arid        (m_axi_arid),
    .m_axi_araddr      (m_axi_araddr),
    .m_axi_arlen       (m_axi_arlen),
    .m_axi_arsize      (m_axi_arsize),
    .m_axi_arburst     (m_axi_arburst),
    .m_axi_rvalid      (m_axi_rvalid),
    .m_axi_rready      (m_axi_rready),
    .m_axi_rid         (m_axi_rid),
    .m_axi_rdata       (m_axi_rdata),
    .m_axi_rresp       (m_axi_rresp),
    .m_axi_rlast       (m_axi_rlast),
    .m_axi_awvalid     (m_axi_awvalid),
    .m_axi_awready     (m_axi_awready),
    .m_axi_awid        (m_axi_awid),
    .m_axi_awaddr      (m_axi_awaddr),
    .m_axi_awlen       (m_axi_awlen),
    .m_axi_awsize      (m_axi_awsize),
    .m_axi_awburst     (m_axi_awburst),
    .m_axi_wvalid      (m_axi_wvalid),
    .m_axi_wready      (m_axi_wready),
    .m_axi_wdata       (m_axi_wdata),
    .m_axi_wstrb       (m_axi_wstrb),
    .m_axi_wlast       (m_axi_wlast),
    .m_axi_bvalid      (m_axi_bvalid),
    .m_axi_bready      (m_axi_bready),
    .m_axi_bid         (m_axi_bid),
    .m_axi_bresp       (m_axi_bresp),
    .m_axis_cas_tvalid (),
    .m_axis_cas_tready (1'b1),
    .m_axis_cas_tdata  (),
    .m_axis_cas_tlast  (),
    .m_axis_cas_tuser  (),
    .s_axis_cas_tvalid (1'b0),
    .s_axis_cas_tready (),
    .s_axis_cas_tdata  ({AXI_DATA_WIDTH{1'b0}}),
    .s_axis_cas_tlast  (1'b0),
    .s_axis_cas_tuser  (16'd0),
    .chain_stop_i      (1'b0),
    .chain_stop_o      (),
    .trace_count_o     (),
    .trace_retire_o    (),
    .trace_index_o     (),
    .trace_state_o     (),
    .trace_macs_o      ()
  );

endmodule
