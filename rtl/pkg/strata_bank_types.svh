// SPDX-License-Identifier: Apache-2.0
// The bank port payloads of strata_banks with BW bank-index bits, AW word-address
// bits and DW word bits. As with strata_axi_types.svh, a package cannot take the
// configuration's widths, so each module on a bank path declares the types from
// these bodies: one definition, every user with named fields. The handshake stays
// outside the payload (valid / ready beside it, AXI rules), so a register or a
// multiplexer moves a request as one value. In a packed struct the first field is
// the most significant.
`ifndef STRATA_BANK_TYPES_SVH
`define STRATA_BANK_TYPES_SVH

// A write: word data to address addr of bank bank.
`define STRATA_BANK_WR_T(BW, AW, DW) struct packed { \
    logic [(BW)-1:0] bank; logic [(AW)-1:0] addr; logic [(DW)-1:0] data; \
  }
// A read request: the word at address addr of bank bank.
`define STRATA_BANK_RD_T(BW, AW) struct packed { \
    logic [(BW)-1:0] bank; logic [(AW)-1:0] addr; \
  }
// A read response: the word.
`define STRATA_BANK_RSP_T(DW) struct packed { \
    logic [(DW)-1:0] data; \
  }

`endif  // STRATA_BANK_TYPES_SVH
