# SPDX-License-Identifier: Apache-2.0
"""Strata in a LiteX SoC (docs/board.md): the accelerator as a Migen instance of
strata_top, its AXI4 master on a port of the DRAM controller's crossbar, its
AXI4-Lite registers on the CPU's bus, its interrupt on a CPU interrupt line,
and a fault injector on the DRAM path that firmware can arm (the SoC tests
use it to check the driver's error path on real hardware and in simulation).

The accelerator's configuration is the one its RTL packages were generated
for (rtl/pkg/strata_cfg_pkg.sv, from config/default.yaml): this module reads
the AXI widths from the generated packages, so nothing here repeats them.
"""
import pathlib
import re
import sys

from migen import ClockSignal, If, Instance, Mux, ResetSignal, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import axi, stream
from litex.soc.interconnect.csr import CSRStorage
from litex.soc.integration.soc import SoCRegion

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import rtl_manifest  # noqa: E402  (scripts/rtl_manifest.py)

# Where the registers sit on the CPU's bus: in VexRiscv's uncached I/O range.
REGISTERS_ORIGIN = 0x8200_0000
REGISTERS_SIZE = 0x1000


def package_value(pkg, name):
    """A localparam of a generated package (the one source of the RTL's widths)."""
    text = (ROOT / "rtl" / "pkg" / pkg).read_text()
    m = re.search(rf"localparam\s+(?:int unsigned|int)\s+{name}\s*=\s*(\d+)\s*;", text)
    if m is None:
        raise SystemExit(f"strata_litex: {name} not found in rtl/pkg/{pkg}")
    return int(m.group(1))


AXI_DATA_WIDTH = package_value("strata_cfg_pkg.sv", "AxiDataWidth")
AXI_ADDR_WIDTH = package_value("strata_cfg_pkg.sv", "AxiAddrWidth")
CSR_ADDR_WIDTH = package_value("strata_csr_pkg.sv", "CsrAddrWidth")


def add_rtl_sources(platform):
    """The RTL of rtl/manifest.txt for the simulation (Verilator reads the
    waivers, packages and modules in manifest order)."""
    m = rtl_manifest.Manifest()
    for f in m.waivers + m.packages + list(m.modules.values()):
        platform.add_source(str(f))
    for d in m.include_dirs:
        platform.add_verilog_include_path(str(d))


class Strata(LiteXModule):
    """strata_top with LiteX interfaces: .axi (AXI4 master, 32-bit addresses on
    the SoC's bus), .axil (AXI4-Lite slave) and .irq. The cascade ports are
    tied off (one accelerator) and the debug trace port is left open."""

    def __init__(self):
        self.axi = axi.AXIInterface(data_width=AXI_DATA_WIDTH, address_width=32, id_width=1)
        self.axil = axi.AXILiteInterface(data_width=32, address_width=32)
        self.irq = Signal()
        m, lite = self.axi, self.axil
        # The accelerator drives AXI_ADDR_WIDTH address bits; the SoC's bus has
        # 32. The driver places every block inside main RAM (docs/board.md).
        araddr, awaddr = Signal(AXI_ADDR_WIDTH), Signal(AXI_ADDR_WIDTH)
        self.comb += [m.ar.addr.eq(araddr[:32]), m.aw.addr.eq(awaddr[:32])]
        self.specials += Instance(
            "strata_top",
            i_clk_i=ClockSignal("sys"), i_rst_ni=~ResetSignal("sys"),
            # Registers (the bridge gives the whole bus address: the low bits select).
            i_s_axil_awvalid=lite.aw.valid, o_s_axil_awready=lite.aw.ready,
            i_s_axil_awaddr=lite.aw.addr[:CSR_ADDR_WIDTH],
            i_s_axil_wvalid=lite.w.valid, o_s_axil_wready=lite.w.ready,
            i_s_axil_wdata=lite.w.data, i_s_axil_wstrb=lite.w.strb,
            o_s_axil_bvalid=lite.b.valid, i_s_axil_bready=lite.b.ready, o_s_axil_bresp=lite.b.resp,
            i_s_axil_arvalid=lite.ar.valid, o_s_axil_arready=lite.ar.ready,
            i_s_axil_araddr=lite.ar.addr[:CSR_ADDR_WIDTH],
            o_s_axil_rvalid=lite.r.valid, i_s_axil_rready=lite.r.ready,
            o_s_axil_rdata=lite.r.data, o_s_axil_rresp=lite.r.resp,
            o_irq_o=self.irq,
            # AXI4 master.
            o_m_axi_arvalid=m.ar.valid, i_m_axi_arready=m.ar.ready, o_m_axi_arid=m.ar.id,
            o_m_axi_araddr=araddr, o_m_axi_arlen=m.ar.len, o_m_axi_arsize=m.ar.size,
            o_m_axi_arburst=m.ar.burst,
            i_m_axi_rvalid=m.r.valid, o_m_axi_rready=m.r.ready, i_m_axi_rid=m.r.id,
            i_m_axi_rdata=m.r.data, i_m_axi_rresp=m.r.resp, i_m_axi_rlast=m.r.last,
            o_m_axi_awvalid=m.aw.valid, i_m_axi_awready=m.aw.ready, o_m_axi_awid=m.aw.id,
            o_m_axi_awaddr=awaddr, o_m_axi_awlen=m.aw.len, o_m_axi_awsize=m.aw.size,
            o_m_axi_awburst=m.aw.burst,
            o_m_axi_wvalid=m.w.valid, i_m_axi_wready=m.w.ready, o_m_axi_wdata=m.w.data,
            o_m_axi_wstrb=m.w.strb, o_m_axi_wlast=m.w.last,
            i_m_axi_bvalid=m.b.valid, o_m_axi_bready=m.b.ready, i_m_axi_bid=m.b.id,
            i_m_axi_bresp=m.b.resp,
            # One accelerator: nothing on the cascade input, its output always taken.
            i_s_axis_cas_tvalid=0, i_s_axis_cas_tdata=0, i_s_axis_cas_tlast=0,
            i_s_axis_cas_tuser=0, i_m_axis_cas_tready=1, i_chain_stop_i=0,
        )


class AXIFaultInjector(LiteXModule):
    """Passes an AXI4 master (.s side, the accelerator) through to a slave
    (.m side, the DRAM port) and, while armed, answers SLVERR for every read
    burst whose address lies in [read_base, read_base + read_size) and every
    write burst in [write_base, write_base + write_size); the data still moves.
    A flag per accepted burst, in order (one ID: the slave answers in order),
    marks the responses to change. Disarmed (size 0) it changes nothing."""

    def __init__(self, s, m, depth=16):
        self.read_base = CSRStorage(32, description="First byte address whose reads fail")
        self.read_size = CSRStorage(32, description="Bytes from read_base that fail (0: none)")
        self.write_base = CSRStorage(32, description="First byte address whose writes fail")
        self.write_size = CSRStorage(32, description="Bytes from write_base that fail (0: none)")

        def inside(addr, base, size):
            return (addr >= base.storage) & ((addr - base.storage) < size.storage)

        for ax, resp, last, base, size in ((s.ar, m.r, True, self.read_base, self.read_size),
                                           (s.aw, m.b, False, self.write_base, self.write_size)):
            flags = stream.SyncFIFO([("err", 1)], depth)
            self.submodules += flags
            m_ax = m.ar if ax is s.ar else m.aw
            s_resp = s.r if ax is s.ar else s.b
            self.comb += [
                ax.connect(m_ax, omit={"valid", "ready"}),
                m_ax.valid.eq(ax.valid & flags.sink.ready),
                ax.ready.eq(m_ax.ready & flags.sink.ready),
                flags.sink.valid.eq(ax.valid & m_ax.ready & flags.sink.ready),
                flags.sink.err.eq(inside(ax.addr, base, size)),
                resp.connect(s_resp, omit={"resp"}),
                s_resp.resp.eq(Mux(flags.source.err, 0b10, resp.resp)),
                flags.source.ready.eq(resp.valid & s_resp.ready & (resp.last if last else 1)),
            ]
        self.comb += s.w.connect(m.w)


def add_strata(soc):
    """The accelerator, its DRAM path (through the fault injector) and its
    registers and interrupt, in `soc` (which has main RAM on SDRAM)."""
    from litedram.frontend.axi import LiteDRAMAXI2Native

    soc.strata = strata = Strata()
    soc.bus.add_slave(name="strata", slave=strata.axil,
                      region=SoCRegion(origin=REGISTERS_ORIGIN, size=REGISTERS_SIZE, cached=False))
    dram = axi.AXIInterface(data_width=AXI_DATA_WIDTH, address_width=32, id_width=1)
    soc.strata_fault = AXIFaultInjector(strata.axi, dram)
    # A port of the DRAM controller's crossbar, beside the CPU's: the
    # accelerator's bursts do not cross the CPU's bus (and bypass its L2 cache).
    port = soc.sdram.crossbar.get_port(data_width=AXI_DATA_WIDTH)
    soc.strata_dma = LiteDRAMAXI2Native(axi=dram, port=port,
                                        base_address=soc.bus.regions["main_ram"].origin)
    # A level interrupt: the accelerator has its own enable and status registers.
    soc.irq.add("strata_irq", use_loc_if_exists=True)
    soc.comb += soc.cpu.interrupt[soc.irq.locs["strata_irq"]].eq(strata.irq)
