#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The RTL takes every instruction field width from the generated package: an
encoding with wider fields either lints clean (the RTL follows) or does not
build (a check refuses it, naming the reason).

Each case edits a copy of config/isa.yaml, writes its views with
scripts/gen_isa.py --source FILE --out-dir DIR, and lints the design as
scripts/lint.sh does (verilator --lint-only -Wall --assert, the files of
rtl/manifest.txt, top strata_cascade_top, which holds strata_top) with DIR's
strata_isa_pkg.sv in place of the committed one.
"""
import copy
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
GEN_ISA = ROOT / "scripts" / "gen_isa.py"
ISA_PKG = "rtl/pkg/strata_isa_pkg.sv"
TOP = "strata_cascade_top"

# LOAD and STORE payloads leave bits 304..511 free: every transfer field moves
# there, 4 bits wider (ext_addr: 44 bits, above the 40-bit AXI address).
TRANSFER_FIELDS = {
    "load": ["ext_addr", "ext_row_stride", "rows", "row_words", "dst_addr", "dst_row_stride",
             "link_id"],
    "store": ["ext_addr", "ext_row_stride", "rows", "row_words", "src_addr", "src_row_stride",
              "link_id"],
}
FREE_LSB = 304


def field(isa, section, name):
    return next(f for f in isa[section] if f["name"] == name)


def widen_transfers(isa, sections):
    """Every transfer field of `sections` moved to the free bits, 4 bits wider."""
    for section in sections:
        lsb = FREE_LSB
        for name in TRANSFER_FIELDS[section]:
            f = field(isa, section, name)
            f["lsb"], f["width"] = lsb, f["width"] + 4
            lsb += f["width"]
        assert lsb <= 512, f"{section}: the widened fields do not fit"


def manifest():
    """(packages and waivers, include directories, modules) of rtl/manifest.txt."""
    pkgs, incdirs, modules = [], [], []
    for line in (ROOT / "rtl" / "manifest.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        path = f"rtl/{line}"
        if path.endswith((".vlt", "_pkg.sv")):
            pkgs.append(path)
        elif path.endswith(".svh"):
            incdirs.append(f"-I{pathlib.PurePosixPath(path).parent}")
        else:
            modules.append(path)
    return pkgs, incdirs, modules


class FieldWidths(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        with open(ROOT / "config" / "isa.yaml") as f:
            self.isa = yaml.safe_load(f)

    def tearDown(self):
        self.tmp.cleanup()

    def generate(self, isa):
        src = self.dir / "isa.yaml"
        src.write_text(yaml.safe_dump(isa, sort_keys=False))
        return subprocess.run([sys.executable, str(GEN_ISA), "--source", str(src),
                               "--out-dir", str(self.dir / "out")],
                              capture_output=True, text=True, cwd=ROOT)

    def sv_width(self, const):
        text = (self.dir / "out" / ISA_PKG).read_text()
        m = re.search(rf"localparam int unsigned {const} = (\d+);", text)
        self.assertIsNotNone(m, f"{const} not in the generated package")
        return int(m.group(1))

    def lint(self, fatal=True):
        pkgs, incdirs, modules = manifest()
        pkgs = [str(self.dir / "out" / ISA_PKG) if p == ISA_PKG else p for p in pkgs]
        cmd = ["verilator", "--lint-only", "-Wall", "--assert", *incdirs, *pkgs, *modules,
               "--top-module", TOP]
        if not fatal:
            cmd.append("-Wno-fatal")  # every message, the checks' $error too
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)

    def assert_follows(self, isa, widths):
        gen = self.generate(isa)
        self.assertEqual(gen.returncode, 0, gen.stderr)
        for const, width in widths.items():
            self.assertEqual(self.sv_width(const), width, const)
        r = self.lint()
        out = r.stdout + r.stderr
        self.assertNotIn("%Warning-WIDTH", out)
        self.assertEqual((r.returncode, out), (0, ""), "lint of the widened encoding")

    def assert_refused_by_rtl(self, isa, message):
        gen = self.generate(isa)
        self.assertEqual(gen.returncode, 0, gen.stderr)
        r = self.lint(fatal=False)
        out = r.stdout + r.stderr
        # A check's $error: a USERERROR warning, which -Wall lint (scripts/lint.sh,
        # the Verilated builds) stops at.
        self.assertRegex(out, rf"%Warning-USERERROR: .*{re.escape(message)}")

    def test_transfer_fields_wider(self):
        isa = copy.deepcopy(self.isa)
        widen_transfers(isa, ["load", "store"])
        self.assert_follows(isa, {"LoadRowsWidth": 20, "LoadExtRowStrideWidth": 28,
                                  "LoadExtAddrWidth": 44, "LoadRowWordsWidth": 20,
                                  "LoadDstAddrWidth": 20, "LoadDstRowStrideWidth": 20,
                                  "LoadLinkIdWidth": 20, "StoreRowsWidth": 20,
                                  "StoreExtRowStrideWidth": 28, "StoreSrcAddrWidth": 20,
                                  "StoreLinkIdWidth": 20})

    def test_load_rows_wider(self):
        isa = copy.deepcopy(self.isa)
        f = field(isa, "load", "rows")
        f["lsb"], f["width"] = FREE_LSB, 20
        self.assert_follows(isa, {"LoadRowsWidth": 20, "StoreRowsWidth": 16})

    def test_one_link_id_wider_is_refused(self):
        # One cascade link carries a STORE's link id to a LOAD: one TUSER width.
        isa = copy.deepcopy(self.isa)
        f = field(isa, "load", "link_id")
        f["lsb"], f["width"] = FREE_LSB, 20
        self.assert_refused_by_rtl(isa, "LOAD and STORE link_id differ in width")

    def test_compute_window_field_wider_is_refused(self):
        # Bits 131..135 of COMPUTE are free: kernel_h moves there with 5 bits.
        isa = copy.deepcopy(self.isa)
        f = field(isa, "compute", "kernel_h")
        f["lsb"], f["width"] = 131, 5
        self.assert_refused_by_rtl(isa, "a window field of COMPUTE exceeds WinWidth = 4")

    def test_overlapping_field_is_refused_by_the_generator(self):
        # COMPUTE's geometry fields are packed: in_h cannot grow in place.
        isa = copy.deepcopy(self.isa)
        field(isa, "compute", "in_h")["width"] = 17
        gen = self.generate(isa)
        self.assertEqual(gen.returncode, 1)
        self.assertIn("COMPUTE: fields 'in_h' (bits 176:160) and 'in_w' (bits 191:176) overlap",
                      gen.stderr)

    def test_generated_views_follow(self):
        # --out-dir writes every view: the C++ descriptors carry the new width too.
        isa = copy.deepcopy(self.isa)
        f = field(isa, "load", "rows")
        f["lsb"], f["width"] = FREE_LSB, 20
        gen = self.generate(isa)
        self.assertEqual(gen.returncode, 0, gen.stderr)
        hpp = (self.dir / "out" / "sw/include/strata/isa_fields.hpp").read_text()
        self.assertIn(f'kRows{{"rows", {FREE_LSB}, 20, false}}', hpp)
        self.assertIn("typedef logic [LoadRowsWidth-1:0] load_rows_t;",
                      (self.dir / "out" / ISA_PKG).read_text())


if __name__ == "__main__":
    unittest.main(verbosity=2)
