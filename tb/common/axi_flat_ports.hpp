// SPDX-License-Identifier: Apache-2.0
// The flat AXI4 master and AXI4-Lite slave port names of strata_top, as
// plain members: the bus agents (sim/axi_mem_model.hpp, sim/axil_driver.hpp)
// drive and sample these names, and a view (tb/unit/memsys_bus_view.hpp,
// sim/stage_bus_view.hpp) copies them to and from a model whose ports are
// packed otherwise. CsrAddrBits is strata_csr_pkg::CsrAddrWidth.
#pragma once

#include <verilated.h>

#include "port_fields.hpp"

namespace strata::tb {

template <unsigned AddrBits, unsigned DataBits, unsigned CsrAddrBits = 12>
struct AxiFlatPorts {
  // AXI4 master.
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
  // AXI4-Lite slave.
  VlPort<CsrAddrBits> s_axil_awaddr = 0, s_axil_araddr = 0;
  CData s_axil_awvalid = 0, s_axil_awready = 0;
  IData s_axil_wdata = 0;
  CData s_axil_wstrb = 0, s_axil_wvalid = 0, s_axil_wready = 0;
  CData s_axil_bresp = 0, s_axil_bvalid = 0, s_axil_bready = 0;
  CData s_axil_arvalid = 0, s_axil_arready = 0;
  IData s_axil_rdata = 0;
  CData s_axil_rresp = 0, s_axil_rvalid = 0, s_axil_rready = 0;
};

}  // namespace strata::tb
