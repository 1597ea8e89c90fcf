#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that configuration parameters pass from the top down (docs/rtl-blocks.md,
"Parameters").

A module parameter whose default is read from strata_cfg_pkg (P, N, bank count
and depth, cache depths, AXI widths, ...) is a configuration parameter: the
default exists so a bench can build the module alone. Inside rtl/, every
instantiation gives each configuration parameter of its child explicitly, so
the value a block runs with is the one its parent passes, from strata_top down,
never a silent package default. The tops (strata_top, and strata_cascade_top,
which instantiates strata_top) read the package. A parameter with a literal default (a FIFO's
OutReg, a burst length) is the block's own design choice and may default.

Exit status 0 when every instantiation passes its child's configuration
parameters, 1 (with one line per omission) otherwise. It also fails when a
module other than the tops reads a configuration value from strata_cfg_pkg
anywhere but a parameter default. The number format (DataWidth, AccWidth,
MultWidth, ShiftWidth, MaxShift: int8 operands, int32 sums, the requantiser's
fields) is fixed by the numerics contract and read from the package everywhere.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# One parameter per line: `parameter [type [unsigned] [range]] Name = default,`.
PARAM = re.compile(
    r"^\s*parameter\s+(?:[\w:]+\s+(?:unsigned\s+)?(?:\[[^\]]*\]\s*)?)?"
    r"(\w+)\s*=\s*([^\n]*?)\s*,?\s*$", re.M)
TOPS = {"strata_top.sv", "strata_cascade_top.sv"}  # read the configuration package
FORMAT = {"DataWidth", "AccWidth", "MultWidth", "ShiftWidth", "MaxShift"}
PKG_READ = re.compile(r"strata_cfg_pkg::(\w+|\*)")
MODULE = re.compile(r"^\s*module\s+(\w+)", re.M)
INSTANCE = re.compile(r"^\s*(strata_\w+)\s*(?:#\s*\((.*?)\)\s*)?(\w+)\s*\(", re.M | re.S)


def strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def config_params(text: str) -> list[str]:
    """Names of the parameters (not localparams) of the module's header that
    default from strata_cfg_pkg."""
    header = text.split(");", 1)[0]
    return [name for name, default in PARAM.findall(header) if "strata_cfg_pkg::" in default]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=pathlib.Path, default=ROOT,
                    help="repository root whose rtl/ is checked (default: this one)")
    root = ap.parse_args().root.resolve()
    files = sorted((root / "rtl").rglob("*.sv"))
    modules = {}
    for f in files:
        text = strip_comments(f.read_text())
        m = MODULE.search(text)
        if m:
            modules[m.group(1)] = config_params(text[m.start():])
    problems = []
    for f in files:
        text = strip_comments(f.read_text())
        for m in INSTANCE.finditer(text):
            child, given, inst = m.group(1), m.group(2) or "", m.group(3)
            if child not in modules:
                continue
            bound = set(re.findall(r"\.(\w+)\s*\(", given))
            missing = [p for p in modules[child] if p not in bound]
            if missing:
                line = text.count("\n", 0, m.start(1)) + 1
                problems.append(f"{f.relative_to(root)}:{line}: {inst} ({child}) leaves "
                                f"{', '.join(missing)} at the package default")
    for f in files:
        if f.name in TOPS or f.name.endswith("_pkg.sv"):
            continue
        for number, line in enumerate(strip_comments(f.read_text()).splitlines(), 1):
            if re.match(r"\s*parameter\b", line):
                continue
            for name in PKG_READ.findall(line):
                if name not in FORMAT:
                    problems.append(f"{f.relative_to(root)}:{number}: reads configuration value "
                                    f"strata_cfg_pkg::{name}; take it as a parameter")
    for p in problems:
        print(p)
    if problems:
        print(f"check_rtl_params: {len(problems)} instantiations leave configuration "
              "parameters at the package default", file=sys.stderr)
        return 1
    print(f"check_rtl_params: {len(files)} files, every configuration parameter passed down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
