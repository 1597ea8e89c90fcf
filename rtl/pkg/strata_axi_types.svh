// SPDX-License-Identifier: Apache-2.0
// The AXI4 channel structs and request / response bundles of a master with
// AW address bits and DW data bits. A package cannot take the configuration's
// widths as parameters, so each module that needs the types declares them
// from these bodies (strata_memsys in its parameter list, strata_top in its
// body): one definition, every user with named fields. Field types and the
// bundle convention: strata_axi_pkg. In a packed struct the first field is
// the most significant.
`ifndef STRATA_AXI_TYPES_SVH
`define STRATA_AXI_TYPES_SVH

// AR and AW: a burst of len + 1 beats of 2^size bytes from addr.
`define STRATA_AXI_AX_T(AW) struct packed { \
    strata_axi_pkg::axi_id_t id; logic [(AW)-1:0] addr; strata_axi_pkg::axi_len_t len; \
    strata_axi_pkg::axi_size_t size; strata_axi_pkg::axi_burst_t burst; \
  }
// W: a beat, its byte strobes, the burst's last beat.
`define STRATA_AXI_W_T(DW) struct packed { \
    logic [(DW)-1:0] data; logic [(DW)/8-1:0] strb; logic last; \
  }
// R: a read beat with its ID and response.
`define STRATA_AXI_R_T(DW) struct packed { \
    strata_axi_pkg::axi_id_t id; logic [(DW)-1:0] data; strata_axi_pkg::axi_resp_t resp; \
    logic last; \
  }
// B: a write response.
`define STRATA_AXI_B_T struct packed { \
    strata_axi_pkg::axi_id_t id; strata_axi_pkg::axi_resp_t resp; \
  }
// What the master drives: payloads, their valid bits, the response channels' ready bits.
`define STRATA_AXI_REQ_T(AR_T, AW_T, W_T) struct packed { \
    AW_T aw; logic aw_valid; W_T w; logic w_valid; logic b_ready; \
    AR_T ar; logic ar_valid; logic r_ready; \
  }
// What the memory returns.
`define STRATA_AXI_RSP_T(R_T, B_T) struct packed { \
    logic aw_ready; logic w_ready; B_T b; logic b_valid; \
    logic ar_ready; R_T r; logic r_valid; \
  }

`endif  // STRATA_AXI_TYPES_SVH
