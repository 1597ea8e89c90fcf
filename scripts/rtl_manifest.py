# SPDX-License-Identifier: Apache-2.0
"""The RTL file list, rtl/manifest.txt, for the Python scripts (the FPGA flows,
the coverage report).

The manifest holds one path relative to rtl/ per line, in compile order; '#'
starts a comment. Files ending in .vlt are Verilator waivers, *_pkg.sv
packages, .svh included files, every other .sv one module named after its
file. CMake (cmake/strata_rtl.cmake) and scripts/lint.sh read the same file.
"""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
RTL = ROOT / "rtl"
MANIFEST = "manifest.txt"


class ManifestError(Exception):
    pass


class Manifest:
    """The files of an RTL folder: those its manifest.txt names or, in a folder
    without one (the flow's test fixtures), every .sv and .svh in it."""

    def __init__(self, rtl_dir=RTL):
        self.rtl_dir = pathlib.Path(rtl_dir).resolve()
        listing = self.rtl_dir / MANIFEST
        if listing.is_file():
            self.files = []
            for line in listing.read_text().splitlines():
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                path = self.rtl_dir / line
                if not path.is_file():
                    raise ManifestError(f"{listing} names {line}, which does not exist")
                self.files.append(path)
        else:
            self.files = sorted(p for p in self.rtl_dir.iterdir() if p.suffix in (".sv", ".svh"))

    @property
    def waivers(self):
        return [p for p in self.files if p.suffix == ".vlt"]

    @property
    def packages(self):
        """The packages in compile order."""
        return [p for p in self.files if p.name.endswith("_pkg.sv")]

    @property
    def modules(self):
        """{module name: file} of every module, in manifest order."""
        return {p.stem: p for p in self.files
                if p.suffix == ".sv" and not p.name.endswith("_pkg.sv")}

    @property
    def include_dirs(self):
        return list(dict.fromkeys(p.parent for p in self.files if p.suffix == ".svh"))

    @property
    def source_dirs(self):
        """Every folder holding a package or a module: where a tool looks a
        missing one up by name (-y)."""
        return list(dict.fromkeys(p.parent for p in self.files if p.suffix == ".sv"))
