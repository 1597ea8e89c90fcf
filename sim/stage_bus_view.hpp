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

#include "port_fields.hpp"

namespace strata::tb {

// CsrAddrBits is strata_csr_pkg::CsrAddrWidth (the register map fixes it).
template <unsigned AddrBits, unsigned DataBits, unsigned CsrAddrBits = 12>
class StageBusView {
 public:
  explicit StageBusView(unsigned stage) : stage_(stage) {}

  // AXI4 master of the stage.
  CData m_axi_awid = 0, m_axi_awlen = 0, m_axi_awsize = 0, m_axi_awburst = 0;
  VlPort<AddrBits> m_axi_awaddr{};
  CData m_axi_awvalid = 0, m_axi_awready = 0;
  VlPort<DataBits> m_axi_wdata{};
  VlPort<DataBits / 8> m_axi_wstrb{};
  CData m_axi_wlast = 0, m_axi_wvalid = 0, m_axi_wready = 0;
  CData m_axi_bid = 0, m_axi_bresp = 0, m_axi_bvalid = 0, m_axi_bready = 0;
  CData m_axi_arid = 0, m_axi_arlen = 0, m_axi_arsize = 0, m_axi_arburst = 0;
  VlPort<AddrBits> m_axi_araddr{};
  CData m_axi_arvalid = 0, m_axi_arready = 0;
  CData m_axi_rid = 0, m_axi_rresp = 0, m_axi_rlast = 0, m_axi_rvalid = 0, m_axi_rready = 0;
  VlPort<DataBits> m_axi_rdata{};
  // AXI4-Lite slave of the stage.
  VlPort<CsrAddrBits> s_axil_awaddr = 0, s_axil_araddr = 0;
  CData s_axil_awvalid = 0, s_axil_awready = 0;
  IData s_axil_wdata = 0;
  CData s_axil_wstrb = 0, s_axil_wvalid = 0, s_axil_wready = 0;
  CData s_axil_bresp = 0, s_axil_bvalid = 0, s_axil_bready = 0;
  CData s_axil_arvalid = 0, s_axil_arready = 0;
  IData s_axil_rdata = 0;
  CData s_axil_rresp = 0, s_axil_rvalid = 0, s_axil_rready = 0;
  CData irq_o = 0;

  // Before an eval: what the bench drives into the stage.
  template <class Dut>
  void to_dut(Dut& d) const {
    put(d.m_axi_awready, m_axi_awready, 1);
    put(d.m_axi_wready, m_axi_wready, 1);
    put(d.m_axi_bvalid, m_axi_bvalid, 1);
    put(d.m_axi_bid, m_axi_bid, 1);
    put(d.m_axi_bresp, m_axi_bresp, 2);
    put(d.m_axi_arready, m_axi_arready, 1);
    put(d.m_axi_rvalid, m_axi_rvalid, 1);
    put(d.m_axi_rid, m_axi_rid, 1);
    put(d.m_axi_rdata, m_axi_rdata, DataBits);
    put(d.m_axi_rresp, m_axi_rresp, 2);
    put(d.m_axi_rlast, m_axi_rlast, 1);
    put(d.s_axil_awvalid, s_axil_awvalid, 1);
    put(d.s_axil_awaddr, s_axil_awaddr, CsrAddrBits);
    put(d.s_axil_wvalid, s_axil_wvalid, 1);
    put(d.s_axil_wdata, s_axil_wdata, 32);
    put(d.s_axil_wstrb, s_axil_wstrb, 4);
    put(d.s_axil_bready, s_axil_bready, 1);
    put(d.s_axil_arvalid, s_axil_arvalid, 1);
    put(d.s_axil_araddr, s_axil_araddr, CsrAddrBits);
    put(d.s_axil_rready, s_axil_rready, 1);
  }

  // After an eval: what the stage drives.
  template <class Dut>
  void from_dut(const Dut& d) {
    get(d.m_axi_awvalid, m_axi_awvalid, 1);
    get(d.m_axi_awid, m_axi_awid, 1);
    get(d.m_axi_awaddr, m_axi_awaddr, AddrBits);
    get(d.m_axi_awlen, m_axi_awlen, 8);
    get(d.m_axi_awsize, m_axi_awsize, 3);
    get(d.m_axi_awburst, m_axi_awburst, 2);
    get(d.m_axi_wvalid, m_axi_wvalid, 1);
    get(d.m_axi_wdata, m_axi_wdata, DataBits);
    get(d.m_axi_wstrb, m_axi_wstrb, DataBits / 8);
    get(d.m_axi_wlast, m_axi_wlast, 1);
    get(d.m_axi_bready, m_axi_bready, 1);
    get(d.m_axi_arvalid, m_axi_arvalid, 1);
    get(d.m_axi_arid, m_axi_arid, 1);
    get(d.m_axi_araddr, m_axi_araddr, AddrBits);
    get(d.m_axi_arlen, m_axi_arlen, 8);
    get(d.m_axi_arsize, m_axi_arsize, 3);
    get(d.m_axi_arburst, m_axi_arburst, 2);
    get(d.m_axi_rready, m_axi_rready, 1);
    get(d.s_axil_awready, s_axil_awready, 1);
    get(d.s_axil_wready, s_axil_wready, 1);
    get(d.s_axil_bvalid, s_axil_bvalid, 1);
    get(d.s_axil_bresp, s_axil_bresp, 2);
    get(d.s_axil_arready, s_axil_arready, 1);
    get(d.s_axil_rvalid, s_axil_rvalid, 1);
    get(d.s_axil_rdata, s_axil_rdata, 32);
    get(d.s_axil_rresp, s_axil_rresp, 2);
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
