// SPDX-License-Identifier: Apache-2.0
// Flat AXI4 / AXI4-Lite port names of one stage of strata_cascade_top.
//
// strata_cascade_top carries each stage's bus signals in packed arrays (stage
// k in element k: m_axi_araddr[k], s_axil_wdata[k], ...), which Verilator
// turns into one integer or VlWide port per signal. The bus agents
// (axi_mem_model.hpp, axil_driver.hpp) address the flat names strata_top
// has, so the chain runner gives each stage this view: to_dut() copies the
// stage's inputs into element `stage` of the array ports before an eval,
// from_dut() copies its outputs out after it.
#pragma once

#include <verilated.h>

#include <cstdint>

#include "axi_flat_ports.hpp"
#include "port_fields.hpp"

namespace strata::tb {

// CsrAddrBits is strata_csr_pkg::CsrAddrWidth (the register map fixes it).
template <unsigned AddrBits, unsigned DataBits, unsigned CsrAddrBits = 12>
class StageBusView : public AxiFlatPorts<AddrBits, DataBits, CsrAddrBits> {
 public:
  explicit StageBusView(unsigned stage) : stage_(stage) {}

  CData irq_o = 0;

  // Before an eval: what the bench drives into the stage.
  template <class Dut>
  void to_dut(Dut& d) const {
    put(d.m_axi_awready, this->m_axi_awready, 1);
    put(d.m_axi_wready, this->m_axi_wready, 1);
    put(d.m_axi_bvalid, this->m_axi_bvalid, 1);
    put(d.m_axi_bid, this->m_axi_bid, 1);
    put(d.m_axi_bresp, this->m_axi_bresp, 2);
    put(d.m_axi_arready, this->m_axi_arready, 1);
    put(d.m_axi_rvalid, this->m_axi_rvalid, 1);
    put(d.m_axi_rid, this->m_axi_rid, 1);
    put(d.m_axi_rdata, this->m_axi_rdata, DataBits);
    put(d.m_axi_rresp, this->m_axi_rresp, 2);
    put(d.m_axi_rlast, this->m_axi_rlast, 1);
    put(d.s_axil_awvalid, this->s_axil_awvalid, 1);
    put(d.s_axil_awaddr, this->s_axil_awaddr, CsrAddrBits);
    put(d.s_axil_wvalid, this->s_axil_wvalid, 1);
    put(d.s_axil_wdata, this->s_axil_wdata, 32);
    put(d.s_axil_wstrb, this->s_axil_wstrb, 4);
    put(d.s_axil_bready, this->s_axil_bready, 1);
    put(d.s_axil_arvalid, this->s_axil_arvalid, 1);
    put(d.s_axil_araddr, this->s_axil_araddr, CsrAddrBits);
    put(d.s_axil_rready, this->s_axil_rready, 1);
  }

  // After an eval: what the stage drives.
  template <class Dut>
  void from_dut(const Dut& d) {
    get(d.m_axi_awvalid, this->m_axi_awvalid, 1);
    get(d.m_axi_awid, this->m_axi_awid, 1);
    get(d.m_axi_awaddr, this->m_axi_awaddr, AddrBits);
    get(d.m_axi_awlen, this->m_axi_awlen, 8);
    get(d.m_axi_awsize, this->m_axi_awsize, 3);
    get(d.m_axi_awburst, this->m_axi_awburst, 2);
    get(d.m_axi_wvalid, this->m_axi_wvalid, 1);
    get(d.m_axi_wdata, this->m_axi_wdata, DataBits);
    get(d.m_axi_wstrb, this->m_axi_wstrb, DataBits / 8);
    get(d.m_axi_wlast, this->m_axi_wlast, 1);
    get(d.m_axi_bready, this->m_axi_bready, 1);
    get(d.m_axi_arvalid, this->m_axi_arvalid, 1);
    get(d.m_axi_arid, this->m_axi_arid, 1);
    get(d.m_axi_araddr, this->m_axi_araddr, AddrBits);
    get(d.m_axi_arlen, this->m_axi_arlen, 8);
    get(d.m_axi_arsize, this->m_axi_arsize, 3);
    get(d.m_axi_arburst, this->m_axi_arburst, 2);
    get(d.m_axi_rready, this->m_axi_rready, 1);
    get(d.s_axil_awready, this->s_axil_awready, 1);
    get(d.s_axil_wready, this->s_axil_wready, 1);
    get(d.s_axil_bvalid, this->s_axil_bvalid, 1);
    get(d.s_axil_bresp, this->s_axil_bresp, 2);
    get(d.s_axil_arready, this->s_axil_arready, 1);
    get(d.s_axil_rvalid, this->s_axil_rvalid, 1);
    get(d.s_axil_rdata, this->s_axil_rdata, 32);
    get(d.s_axil_rresp, this->s_axil_rresp, 2);
    get(d.irq_o, irq_o, 1);
  }

 private:
  // Element stage_ (`width` bits) of an array port.
  template <class Port, class Flat>
  void put(Port& port, const Flat& flat, unsigned width) const {
    pack_field(port, stage_ * width, width, flat);
  }
  template <class Port, class Flat>
  void get(const Port& port, Flat& flat, unsigned width) const {
    unpack_field(port, stage_ * width, width, flat);
  }

  unsigned stage_;
};

}  // namespace strata::tb
