// SPDX-License-Identifier: Apache-2.0
// Strata bus types: AXI4 field types and the AXI4-Lite channel structs.
//
// AXI4-Lite (the CSR slave) has widths the register map fixes (a 4 KiB window,
// 32-bit data), so its channel structs and its request/response bundles live
// here. The package stands alone: AxilAddrWidth restates the register map's
// CsrAddrWidth (strata_csr_pkg, generated), and strata_csr checks at
// elaboration that the two agree. The AXI4 master's address and data widths
// are configuration parameters, and a package cannot take parameters: its
// channel structs are `localparam type`s in strata_memsys's header, built from
// the field types below and the module's AxiAddrWidth / AxiDataWidth.
//
// Bundles follow the PULP AXI convention: a request carries what the manager
// drives (payloads, their valid bits, the response channels' ready bits), a
// response what the subordinate drives. Handshakes follow the AXI rules stated
// in strata_pkg. In a packed struct the first field is the most significant.
package strata_axi_pkg;

  localparam int unsigned AxilAddrWidth = 12;  // CSR window byte address bits

  // AXI4 fields whose widths the protocol (or this design's single ID bit) fixes.
  typedef logic [0:0] axi_id_t;     // ID 0 = fetch and writes, ID 1 = loads
  typedef logic [7:0] axi_len_t;    // beats - 1
  typedef logic [2:0] axi_size_t;   // log2(bytes per beat)
  typedef logic [1:0] axi_burst_t;  // burst type
  typedef logic [1:0] axi_resp_t;   // OKAY, EXOKAY, SLVERR, DECERR

  localparam axi_burst_t AxiBurstIncr = 2'b01;  // the only burst type the master issues

  // AXI4-Lite channels.
  typedef struct packed {
    logic [AxilAddrWidth-1:0] addr;  // byte address
  } axil_aw_t;

  typedef struct packed {
    logic [31:0] data;  // write data
    logic [3:0]  strb;  // byte strobes
  } axil_w_t;

  typedef struct packed {
    axi_resp_t resp;  // write response
  } axil_b_t;

  typedef struct packed {
    logic [AxilAddrWidth-1:0] addr;  // byte address
  } axil_ar_t;

  typedef struct packed {
    logic [31:0] data;  // read data
    axi_resp_t   resp;  // read response
  } axil_r_t;

  // What the AXI4-Lite manager drives.
  typedef struct packed {
    axil_aw_t aw;
    logic     aw_valid;
    axil_w_t  w;
    logic     w_valid;
    logic     b_ready;
    axil_ar_t ar;
    logic     ar_valid;
    logic     r_ready;
  } axil_req_t;

  // What the AXI4-Lite subordinate drives.
  typedef struct packed {
    logic    aw_ready;
    logic    w_ready;
    axil_b_t b;
    logic    b_valid;
    logic    ar_ready;
    axil_r_t r;
    logic    r_valid;
  } axil_rsp_t;

endpackage : strata_axi_pkg
