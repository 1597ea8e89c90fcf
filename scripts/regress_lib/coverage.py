# SPDX-License-Identifier: Apache-2.0
"""Verilator line and toggle coverage of a regression.

Each bench process of a coverage build (cmake -DSTRATA_COVERAGE=ON) writes one
.dat per model into STRATA_COVERAGE_DIR. Here they are merged with
`verilator_coverage --write`, annotated with `verilator_coverage --annotate`,
counted per RTL file, and turned into lcov .info files that genhtml renders.

Points are Verilator's: a *line* point is a statement block or a branch arm
(pages v_line and v_branch), a *toggle* point is one bit of one signal (page
v_toggle; Verilator 5.006 counts changes of the bit). A point is covered when
its count is above zero. Instances of one module are combined (Verilator's
default), so a module's figure is over all its instances in all benches.

verilator_coverage's own --write-info is not used: it folds line and toggle
points of a source line into one count, so its HTML can say neither which
branch arm nor which bit was missed. The .info files here keep them apart.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil
import subprocess

LINE_PAGES = ("v_line", "v_branch")
TOGGLE_PAGES = ("v_toggle",)
MERGE_CHUNK = 200  # input files per verilator_coverage call
_POINT = re.compile(r"^C '(.*)' (\d+)\s*$")


@dataclasses.dataclass(frozen=True)
class Point:
    file: str
    line: int
    page: str     # v_line/<module>, v_branch/<module>, v_toggle/<module>, ...
    comment: str  # what the point is: "block", "if", "else", a signal bit, ...
    count: int

    @property
    def kind(self) -> str:
        page = self.page.split("/", 1)[0]
        if page in LINE_PAGES:
            return "line"
        if page in TOGGLE_PAGES:
            return "toggle"
        return "other"


@dataclasses.dataclass
class Figure:
    covered: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        self.covered += int(hit)
        self.total += 1

    @property
    def percent(self) -> float | None:
        return 100.0 * self.covered / self.total if self.total else None

    def text(self) -> str:
        p = self.percent
        return "-" if p is None else f"{p:.1f} % ({self.covered}/{self.total})"


@dataclasses.dataclass
class FileCoverage:
    line: Figure = dataclasses.field(default_factory=Figure)
    toggle: Figure = dataclasses.field(default_factory=Figure)


def parse_dat(text: str) -> list[Point]:
    """Points of a Verilator coverage file (`# SystemC::Coverage-3`)."""
    points = []
    for raw in text.splitlines():
        m = _POINT.match(raw)
        if not m:
            continue
        keys = {}
        for field in m.group(1).split("\x01"):
            key, sep, value = field.partition("\x02")
            if sep:
                keys[key] = value
        points.append(Point(file=keys.get("f", "?"), line=int(keys.get("l", "0") or 0),
                            page=keys.get("page", ""), comment=keys.get("o", ""),
                            count=int(m.group(2))))
    return points


def summarise(points: list[Point]) -> dict[str, FileCoverage]:
    """Line and toggle figures per source file."""
    files: dict[str, FileCoverage] = {}
    for p in points:
        fc = files.setdefault(p.file, FileCoverage())
        if p.kind == "line":
            fc.line.add(p.count > 0)
        elif p.kind == "toggle":
            fc.toggle.add(p.count > 0)
    return files


def total(files: dict[str, FileCoverage]) -> FileCoverage:
    t = FileCoverage()
    for fc in files.values():
        t.line.covered += fc.line.covered
        t.line.total += fc.line.total
        t.toggle.covered += fc.toggle.covered
        t.toggle.total += fc.toggle.total
    return t


def write_info(points: list[Point], kind: str, path: pathlib.Path, test_name: str) -> None:
    """An lcov tracefile of one kind of point. A source line is hit when every
    point of that kind on it is (so a line with an arm never taken, or with a
    bit that never toggled, shows as missed); each point is also a "branch"
    entry (BRDA), so genhtml --branch-coverage lists them one by one."""
    by_file: dict[str, dict[int, list[Point]]] = {}
    for p in points:
        if p.kind == kind:
            by_file.setdefault(p.file, {}).setdefault(p.line, []).append(p)
    out = [f"TN:{test_name}\n"]
    for file in sorted(by_file):
        lines = by_file[file]
        out.append(f"SF:{file}\n")
        branches = 0
        hit_branches = 0
        for line in sorted(lines):
            for k, p in enumerate(lines[line]):
                out.append(f"BRDA:{line},0,{k},{p.count if p.count > 0 else '-'}\n")
                branches += 1
                hit_branches += int(p.count > 0)
        out.append(f"BRF:{branches}\nBRH:{hit_branches}\n")
        for line in sorted(lines):
            out.append(f"DA:{line},{min(p.count for p in lines[line])}\n")
        hit_lines = sum(1 for line in lines if min(p.count for p in lines[line]) > 0)
        out.append(f"LF:{len(lines)}\nLH:{hit_lines}\nend_of_record\n")
    path.write_text("".join(out))


def _run(cmd: list[str], cwd: pathlib.Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed (exit {proc.returncode}):\n"
                           f"{(proc.stderr or proc.stdout)[-2000:]}")


def merge(inputs: list[pathlib.Path], out: pathlib.Path) -> None:
    """verilator_coverage --write, in chunks (a night writes thousands of files)."""
    if not inputs:
        raise RuntimeError("no coverage data: did the benches run from a coverage build?")
    work = list(inputs)
    level = 0
    while len(work) > MERGE_CHUNK:
        parts = []
        for k in range(0, len(work), MERGE_CHUNK):
            part = out.with_name(f"{out.stem}.part{level}_{k // MERGE_CHUNK}.dat")
            _run(["verilator_coverage", "--write", str(part)]
                 + [str(p) for p in work[k:k + MERGE_CHUNK]])
            parts.append(part)
        if level > 0:
            for p in work:
                p.unlink()
        work = parts
        level += 1
    _run(["verilator_coverage", "--write", str(out)] + [str(p) for p in work])
    if level > 0:
        for p in work:
            p.unlink()


@dataclasses.dataclass
class Report:
    files: dict[str, FileCoverage]
    rtl_total: FileCoverage
    html: str | None       # relative to the run directory
    toggle_html: str | None
    annotate: str


def report(raw_files: list[pathlib.Path], cov_dir: pathlib.Path, source_dir: pathlib.Path,
           keep_raw: bool = False) -> Report:
    """Merges raw .dat files into cov_dir/merged.dat, annotates, writes the
    .info files and, when genhtml is installed, the HTML reports."""
    cov_dir.mkdir(parents=True, exist_ok=True)
    merged = cov_dir / "merged.dat"
    merge(raw_files, merged)
    if not keep_raw:
        for p in raw_files:
            p.unlink(missing_ok=True)
    return report_merged(merged, cov_dir, source_dir)


def report_merged(merged: pathlib.Path, cov_dir: pathlib.Path,
                  source_dir: pathlib.Path) -> Report:
    annotate = cov_dir / "annotate"
    shutil.rmtree(annotate, ignore_errors=True)
    _run(["verilator_coverage", "--annotate", str(annotate), "--annotate-min", "1", str(merged)])
    points = parse_dat(merged.read_text(errors="replace"))
    files = summarise(points)
    rtl_dir = (source_dir / "rtl").resolve()
    rtl_files = {f: fc for f, fc in files.items()
                 if pathlib.Path(f).resolve().is_relative_to(rtl_dir)}
    write_info(points, "line", cov_dir / "line.info", "strata_line")
    write_info(points, "toggle", cov_dir / "toggle.info", "strata_toggle")
    html = toggle_html = None
    if shutil.which("genhtml"):
        shutil.rmtree(cov_dir / "html", ignore_errors=True)
        for info, sub, title in ((cov_dir / "line.info", "html", "Strata RTL line coverage"),
                                 (cov_dir / "toggle.info", "html/toggle",
                                  "Strata RTL toggle coverage")):
            dest = cov_dir / sub
            _run(["genhtml", "--quiet", "--branch-coverage", "--ignore-errors", "source",
                  "--prefix", str(source_dir.resolve()), "--title", title,
                  "--output-directory", str(dest), str(info)])
        html = str(pathlib.Path(cov_dir.name) / "html" / "index.html")
        toggle_html = str(pathlib.Path(cov_dir.name) / "html" / "toggle" / "index.html")
    return Report(files=files, rtl_total=total(rtl_files), html=html, toggle_html=toggle_html,
                  annotate=str(pathlib.Path(cov_dir.name) / "annotate"))
