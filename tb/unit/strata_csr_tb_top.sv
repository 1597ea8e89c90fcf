// SPDX-License-Identifier: Apache-2.0
// Bench wrapper of strata_csr: maps flat AXI4-Lite ports s_axil_* (the
// names sim/axil_driver.hpp drives) onto its struct bundles; the rest passes through.
module strata_csr_tb_top
  import strata_csr_pkg::*;
(
  input  logic                        clk_i,           // clock
  input  logic                        rst_ni,          // synchronous reset, active low
  input  logic                        s_axil_awvalid,  // AXI4-Lite slave
  output logic                        s_axil_awready,
  input  logic [CsrAddrWidth-1:0]     s_axil_awaddr,
  input  logic                        s_axil_wvalid,
  output logic                        s_axil_wready,
  input  logic [31:0]                 s_axil_wdata,
  input  logic [3:0]                  s_axil_wstrb,
  output logic                        s_axil_bvalid,
  input  logic                        s_axil_bready,
  output logic [1:0]                  s_axil_bresp,
  input  logic                        s_axil_arvalid,
  output logic                        s_axil_arready,
  input  logic [CsrAddrWidth-1:0]     s_axil_araddr,
  output logic                        s_axil_rvalid,
  input  logic                        s_axil_rready,
  output logic [31:0]                 s_axil_rdata,
  output logic [1:0]                  s_axil_rresp,
  output logic                        start_o,         // CTRL.START pulse
  output logic                        fine_grain_o,    // CTRL.FINE_GRAIN
  output logic [63:6]                 instr_base_o,    // INSTR_BASE
  output logic [31:0]                 instr_limit_o,   // INSTR_LIMIT
  input  logic                        busy_i,          // STATUS
  input  logic                        done_i,
  input  logic                        error_i,
  input  logic [7:0]                  err_code_i,      // ERROR_CODE
  input  logic [15:0]                 err_index_i,
  input  logic                        done_set_i,      // IRQ_STATUS set pulses
  input  logic                        error_set_i,
  input  logic [NumPerfCounters*64-1:0] counters_i,    // performance counters
  output logic                        irq_o            // interrupt
);

  strata_csr u_csr (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    // The flat ports in the field order of strata_axi_pkg's AXI4-Lite bundles.
    .s_req_i       ({s_axil_awaddr, s_axil_awvalid, s_axil_wdata, s_axil_wstrb, s_axil_wvalid,
                     s_axil_bready, s_axil_araddr, s_axil_arvalid, s_axil_rready}),
    .s_rsp_o       ({s_axil_awready, s_axil_wready, s_axil_bresp, s_axil_bvalid,
                     s_axil_arready, s_axil_rdata, s_axil_rresp, s_axil_rvalid}),
    .start_o       (start_o),
    .fine_grain_o  (fine_grain_o),
    .instr_base_o  (instr_base_o),
    .instr_limit_o (instr_limit_o),
    .busy_i        (busy_i),
    .done_i        (done_i),
    .error_i       (error_i),
    .err_code_i    (err_code_e'(err_code_i)),
    .err_index_i   (err_index_i),
    .done_set_i    (done_set_i),
    .error_set_i   (error_set_i),
    .counters_i    (counters_i),
    .irq_o         (irq_o)
  );

endmodule : strata_csr_tb_top
