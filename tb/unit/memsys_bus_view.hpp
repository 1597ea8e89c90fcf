// SPDX-License-Identifier: Apache-2.0
// Flat AXI4 / AXI4-Lite port names over strata_memsys's bus struct ports.
//
// strata_memsys carries its buses as packed request / response structs
// (rtl/pkg/strata_axi_pkg.sv, the AXI4 structs in strata_memsys's header);
// Verilator turns each into one integer or VlWide port. The bus agents
// (sim/axi_mem_model.hpp, sim/axil_driver.hpp) address the flat names that
// strata_top has (m_axi_arvalid, s_axil_awaddr, ...), so the memsys bench gives
// them this view: to_dut() packs the inputs into the struct ports before an
// eval, from_dut() unpacks the outputs after it. The field lists follow the
// struct declarations, first field most significant.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "axi_flat_ports.hpp"
#include "port_fields.hpp"

namespace strata::tb {

// Walks a struct's fields from the most significant one: `fields(f)` calls
// f(flat, width) for each field in declaration order.
template <class Port, class Fields>
void pack_struct(Port& port, Fields&& fields) {
  unsigned total = 0;
  fields([&](const auto&, unsigned w) { total += w; });
  fields([&](const auto& flat, unsigned w) { pack_field(port, total -= w, w, flat); });
}

template <class Port, class Fields>
void unpack_struct(const Port& port, Fields&& fields) {
  unsigned total = 0;
  fields([&](auto&, unsigned w) { total += w; });
  fields([&](auto& flat, unsigned w) { unpack_field(port, total -= w, w, flat); });
}

// CsrAddrBits is strata_csr_pkg::CsrAddrWidth (the register map fixes it).
template <unsigned AddrBits, unsigned DataBits, unsigned CsrAddrBits = 12>
class MemsysBusView : public AxiFlatPorts<AddrBits, DataBits, CsrAddrBits> {
 public:
  // Before an eval: what the bench drives.
  template <class Dut>
  void to_dut(Dut& d) const {
    pack_struct(d.m_axi_rsp_i, [this](auto&& f) {
      f(this->m_axi_awready, 1), f(this->m_axi_wready, 1);
      f(this->m_axi_bid, 1), f(this->m_axi_bresp, 2), f(this->m_axi_bvalid, 1);
      f(this->m_axi_arready, 1);
      f(this->m_axi_rid, 1), f(this->m_axi_rdata, DataBits), f(this->m_axi_rresp, 2),
          f(this->m_axi_rlast, 1);
      f(this->m_axi_rvalid, 1);
    });
    pack_struct(d.s_axil_req_i, [this](auto&& f) {
      f(this->s_axil_awaddr, CsrAddrBits), f(this->s_axil_awvalid, 1);
      f(this->s_axil_wdata, 32), f(this->s_axil_wstrb, 4), f(this->s_axil_wvalid, 1);
      f(this->s_axil_bready, 1);
      f(this->s_axil_araddr, CsrAddrBits), f(this->s_axil_arvalid, 1);
      f(this->s_axil_rready, 1);
    });
  }

  // After an eval: what the memory system drives.
  template <class Dut>
  void from_dut(const Dut& d) {
    unpack_struct(d.m_axi_req_o, [this](auto&& f) {
      f(this->m_axi_awid, 1), f(this->m_axi_awaddr, AddrBits), f(this->m_axi_awlen, 8),
          f(this->m_axi_awsize, 3);
      f(this->m_axi_awburst, 2), f(this->m_axi_awvalid, 1);
      f(this->m_axi_wdata, DataBits), f(this->m_axi_wstrb, DataBits / 8), f(this->m_axi_wlast, 1);
      f(this->m_axi_wvalid, 1);
      f(this->m_axi_bready, 1);
      f(this->m_axi_arid, 1), f(this->m_axi_araddr, AddrBits), f(this->m_axi_arlen, 8),
          f(this->m_axi_arsize, 3);
      f(this->m_axi_arburst, 2), f(this->m_axi_arvalid, 1);
      f(this->m_axi_rready, 1);
    });
    unpack_struct(d.s_axil_rsp_o, [this](auto&& f) {
      f(this->s_axil_awready, 1), f(this->s_axil_wready, 1);
      f(this->s_axil_bresp, 2), f(this->s_axil_bvalid, 1);
      f(this->s_axil_arready, 1);
      f(this->s_axil_rdata, 32), f(this->s_axil_rresp, 2), f(this->s_axil_rvalid, 1);
    });
  }
};

}  // namespace strata::tb
