#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file carries the project's licence as an SPDX line.

  spdx.py [--root DIR]          check: exit 1 listing the files without it
  spdx.py [--root DIR] --fix    add the line where it is missing

A source file is a tracked file (`git ls-files`) of a language below: the
line `<comment> SPDX-License-Identifier: Apache-2.0` must be its first line,
or its second after a `#!` line. Generated files get it from their generator
(scripts/gen_config.py, gen_isa.py, gen_registers.py). The licence text is
LICENSE. Run by ctest (spdx, label lint).
"""
import argparse
import os
import subprocess
import sys

LICENSE_ID = "Apache-2.0"
TAG = f"SPDX-License-Identifier: {LICENSE_ID}"

# Comment form per file kind: by extension, or by name for files without one.
BY_EXT = {
    ".sv": "//", ".svh": "//", ".v": "//", ".vlt": "//",
    ".cpp": "//", ".hpp": "//", ".dtsi": "//",
    ".c": "/*", ".h": "/*",
    ".py": "#", ".sh": "#", ".cmake": "#", ".tcl": "#", ".xdc": "#", ".sdc": "#",
    ".lpf": "#",
}
BY_NAME = {"CMakeLists.txt": "#", "Makefile": "#", "manifest.txt": "#", "regress": "#"}


def comment_kind(path):
    name = os.path.basename(path)
    if name in BY_NAME:
        return BY_NAME[name]
    return BY_EXT.get(os.path.splitext(name)[1])


def spdx_line(kind):
    return f"/* {TAG} */" if kind == "/*" else f"{kind} {TAG}"


def has_tag(lines):
    first = lines[1:2] if lines and lines[0].startswith("#!") else lines[:1]
    return any(TAG in line for line in first)


def sources(root):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for path in files:
        kind = comment_kind(path) if path else None
        if kind and os.path.isfile(os.path.join(root, path)):
            yield path, kind


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="repository root (default: .)")
    ap.add_argument("--fix", action="store_true", help="add the line where it is missing")
    args = ap.parse_args()
    missing = []
    for path, kind in sources(args.root):
        full = os.path.join(args.root, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines(keepends=True)
        if has_tag([line.rstrip("\n") for line in lines]):
            continue
        if not args.fix:
            missing.append(path)
            continue
        at = 1 if lines and lines[0].startswith("#!") else 0
        lines.insert(at, spdx_line(kind) + "\n")
        with open(full, "w", encoding="utf-8") as f:
            f.write("".join(lines))
        print(f"added: {path}")
    for path in missing:
        print(f"{path}: no '{TAG}' line")
    if missing:
        print(f"{len(missing)} source file(s) without the licence line: run scripts/spdx.py --fix")
        return 1
    if not args.fix:
        print("every source file carries the licence line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
