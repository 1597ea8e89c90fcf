# SPDX-License-Identifier: Apache-2.0
"""scripts/regress command line; see scripts/regress --help and docs/regression.md."""
from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import shlex
import shutil
import socket
import sys
import time

from . import coverage, report
from .runner import Result, Runner
from .worklist import (DEFAULT_LABELS, RANDOM_LABEL, RegressError, Test, WorkItem,
                       default_base_seed, derive_seeds, fingerprint, load_ctest,
                       make_worklist, parse_extra_test, parse_shard, read_rerun,
                       select_tests, shard, shard_from_env)

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_SEEDS = 5
DEFAULT_TIMEOUT_S = 900.0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="scripts/regress",
        description="Strata nightly regression: every test labelled 'random' runs once per "
                    "seed, every other test once; writes junit.xml, summary.md, "
                    "failing_seeds.txt (and a coverage report with --coverage) under "
                    "OUT/<run-id>/, with OUT/latest pointing at it. Exit status 0: all "
                    "passed; 1: a run failed or hung; 2: bad usage or input.",
        epilog="docs/regression.md describes the outputs, sharding and coverage.")
    p.add_argument("--build", help="configured CMake build directory whose tests run "
                   "(default: build, or the one named in the --rerun file)")
    p.add_argument("--labels", help=f"comma-separated ctest labels (default "
                   f"{','.join(DEFAULT_LABELS)}; 'all' for every test)")
    p.add_argument("--tests", metavar="REGEX", help="only tests whose name matches")
    p.add_argument("--exclude", metavar="REGEX", help="leave out tests whose name matches")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"seeds per random test (default {DEFAULT_SEEDS})")
    p.add_argument("--base-seed", type=int,
                   help="base of the seed list (default: today's UTC date, YYYYMMDD)")
    p.add_argument("--shard", metavar="I/N",
                   help="run shard I of N (I = 0..N-1) of the work list; default from "
                        "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS, else 0/1")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="runs in parallel (default: number of CPUs)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds per run when ctest sets no TIMEOUT (default "
                        f"{DEFAULT_TIMEOUT_S:g}); a run over it is killed and fails")
    p.add_argument("--out", help="output root (default: $REGRESS_OUT, else BUILD/regress)")
    p.add_argument("--run-id", help="run directory name (default: UTC time, plus the shard)")
    p.add_argument("--coverage", action="store_true",
                   help="collect Verilator line/toggle coverage (BUILD must be configured "
                        "with -DSTRATA_COVERAGE=ON)")
    p.add_argument("--keep-raw-coverage", action="store_true",
                   help="keep each run's coverage .dat file after merging")
    p.add_argument("--rerun", metavar="FILE",
                   help="run exactly the runs listed in FILE (a failing_seeds.txt)")
    p.add_argument("--merge", metavar="DIR", nargs="+",
                   help="combine the run directories of all shards into one report")
    p.add_argument("--list", action="store_true",
                   help="print this shard's work list (test<TAB>seed) and exit")
    p.add_argument("--extra-test", metavar="NAME:LABELS:CMD", action="append", default=[],
                   help="add a test ctest does not know (a shell command); for the "
                        "script's own tests and for wrapping external checks")
    return p


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _make_run_dir(out_root: pathlib.Path, run_id: str) -> pathlib.Path:
    out_root.mkdir(parents=True, exist_ok=True)
    run_dir = out_root / run_id
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = out_root / f"{run_id}.{suffix}"
    run_dir.mkdir()
    latest = out_root / "latest"
    tmp = out_root / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, latest)
    return run_dir


def _label_order(labels: list[str] | None) -> list[str]:
    if labels is None:
        return list(DEFAULT_LABELS)
    return [label for label in labels if label != "all"]


def primary_label(test: Test, order: list[str]) -> str:
    """The label a test is counted under (once, so label rows add up)."""
    for label in order:
        if label in test.labels and label != RANDOM_LABEL:
            return label
    others = [label for label in test.labels if label != RANDOM_LABEL]
    return others[0] if others else (test.labels[0] if test.labels else "none")


def _cost_order(build: pathlib.Path, items: list[WorkItem]) -> list[WorkItem]:
    """Longest tests first (ctest's own cost data, when the build has run
    ctest before), so the last minutes of a night are not one long test."""
    costs: dict[str, float] = {}
    path = build / "Testing" / "Temporary" / "CTestCostData.txt"
    try:
        for line in path.read_text().splitlines():
            if line.startswith("---"):
                break
            parts = line.rsplit(None, 2)
            if len(parts) == 3:
                costs[parts[0]] = float(parts[2])
    except (OSError, ValueError):
        return items
    return sorted(items, key=lambda i: -costs.get(i.test, 0.0))


def _is_coverage_build(build: pathlib.Path) -> bool:
    try:
        cache = (build / "CMakeCache.txt").read_text()
    except OSError:
        return False
    return any(line.startswith("STRATA_COVERAGE:") and line.split("=", 1)[1].upper()
               in ("ON", "1", "TRUE", "YES") for line in cache.splitlines())


def _coverage_meta(rep: coverage.Report, source_dir: pathlib.Path) -> dict:
    rows = []
    for f in sorted(rep.files):
        path = pathlib.Path(f)
        try:
            name = str(path.resolve().relative_to(source_dir.resolve()))
        except ValueError:
            name = f
        if not name.startswith("rtl/"):
            name += " (bench top, not in the total)"
        fc = rep.files[f]
        rows.append({"file": name, "line": fc.line.text(), "toggle": fc.toggle.text(),
                     "line_points": [fc.line.covered, fc.line.total],
                     "toggle_points": [fc.toggle.covered, fc.toggle.total]})
    seen = {r["file"] for r in rows}
    unseen = [str(p.relative_to(source_dir)) for p in sorted((source_dir / "rtl").rglob("*.sv"))
              if not p.name.endswith("_pkg.sv")
              and str(p.relative_to(source_dir)) not in seen]
    rows.sort(key=lambda r: (not r["file"].startswith("rtl/"), r["file"]))
    t = rep.rtl_total
    return {"line": t.line.text(), "toggle": t.toggle.text(), "not_simulated": unseen,
            "line_percent": t.line.percent, "toggle_percent": t.toggle.percent,
            "html": rep.html, "toggle_html": rep.toggle_html, "annotate": rep.annotate,
            "files": rows}


def _finish(run_dir: pathlib.Path, meta: dict, results: list[Result]) -> int:
    meta["run_dir"] = str(run_dir)
    report.write_results(run_dir, meta, results)
    report.write_junit(run_dir / report.JUNIT, meta, results)
    report.write_summary(run_dir / report.SUMMARY, meta, results)
    report.write_failing(run_dir, meta, results)
    total = report.label_table(results)[-1]
    print(f"\nregress: {total['runs']} runs: {total['passed']} passed, {total['failed']} "
          f"failed, {total['skipped']} skipped (base seed {meta['base_seed']})")
    cov = meta.get("coverage")
    if cov and "line" in cov:
        print(f"regress: coverage of rtl/: line {cov['line']}, toggle {cov['toggle']}")
    for name in (report.SUMMARY, report.JUNIT, report.FAILING):
        print(f"regress: {run_dir / name}")
    return 1 if total["failed"] or (cov or {}).get("failed") else 0


def _run_coverage(run_dir: pathlib.Path, raw_dir: pathlib.Path, keep_raw: bool) -> dict:
    raw = sorted(raw_dir.glob("*.dat"))
    if not raw:
        return {"note": "no coverage data: none of the runs was a Verilated bench"}
    print(f"regress: merging {len(raw)} coverage files", flush=True)
    try:
        rep = coverage.report(raw, run_dir / "coverage", SOURCE_DIR, keep_raw=keep_raw)
    except RuntimeError as e:  # the runs are still reported; the exit status says it failed
        print(f"regress: error: coverage report: {e}", file=sys.stderr)
        return {"note": f"coverage report failed: {e}", "failed": True}
    if not keep_raw:
        shutil.rmtree(raw_dir, ignore_errors=True)
    return _coverage_meta(rep, SOURCE_DIR)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    rerun_items: list[WorkItem] | None = None
    rerun_meta: dict[str, str] = {}
    if args.rerun:
        rerun_items, rerun_meta = read_rerun(pathlib.Path(args.rerun))
    build = pathlib.Path(args.build or rerun_meta.get("build") or "build").resolve()
    if not build.is_dir():
        raise RegressError(f"build directory {build} does not exist (run cmake first, or "
                           f"`make regress`, which configures and builds it)")
    if args.seeds < 1:
        raise RegressError(f"--seeds {args.seeds}: need at least 1")
    if args.jobs < 1 or args.timeout <= 0:
        raise RegressError("--jobs and --timeout must be positive")
    index, total = (parse_shard(args.shard) if args.shard
                    else shard_from_env(dict(os.environ)) or (0, 1))
    if args.coverage:
        if not _is_coverage_build(build):
            raise RegressError(f"--coverage: {build} is not a coverage build; configure it with "
                               f"cmake -S . -B {build} -DSTRATA_COVERAGE=ON")
        if not shutil.which("verilator_coverage"):
            raise RegressError("--coverage: verilator_coverage is not installed")

    all_tests = load_ctest(build) + [parse_extra_test(s) for s in args.extra_test]
    by_name = {t.name: t for t in all_tests}
    labels = [x for x in args.labels.split(",") if x] if args.labels else None
    if rerun_items is not None:
        unknown = sorted({i.test for i in rerun_items if i.test not in by_name})
        if unknown:
            raise RegressError(f"--rerun {args.rerun}: {build} has no test named "
                               f"{', '.join(unknown)}")
        items = rerun_items
        seeds = sorted({i.seed for i in items if i.seed is not None})
        base_seed = int(rerun_meta.get("base_seed", 0) or 0)
        tests = [by_name[n] for n in dict.fromkeys(i.test for i in items)]
        label_order = sorted({primary_label(t, _label_order(labels)) for t in tests})
    else:
        tests = select_tests(all_tests, labels, args.tests, args.exclude)
        base_seed = args.base_seed if args.base_seed is not None else default_base_seed()
        seeds = derive_seeds(base_seed, args.seeds)
        items = make_worklist(tests, seeds)
        label_order = _label_order(labels)
    mine = shard(items, index, total)

    if args.list:
        for item in mine:
            print(item.key)
        return 0

    started = _now()
    run_id = args.run_id or started.strftime("%Y%m%dT%H%M%SZ") + (
        f"-shard{index}of{total}" if total > 1 else "")
    out_root = pathlib.Path(args.out or os.environ.get("REGRESS_OUT") or build / "regress")
    run_dir = _make_run_dir(out_root.resolve(), run_id)
    print(f"regress: {run_dir}\nregress: base seed {base_seed}, seeds {seeds}; shard "
          f"{index}/{total}: {len(mine)} of {len(items)} runs, {args.jobs} job(s)", flush=True)

    raw_cov = run_dir / "coverage" / "raw" if args.coverage else None
    if raw_cov is not None:
        raw_cov.mkdir(parents=True)
    runner = Runner(by_name, run_dir, args.jobs, args.timeout,
                    lambda t: primary_label(t, label_order), coverage_dir=raw_cov)
    t0 = time.monotonic()
    results = runner.run(_cost_order(build, mine))
    position = {item: k for k, item in enumerate(mine)}
    results.sort(key=lambda r: position[r.item])
    wall = time.monotonic() - t0

    meta = {"run_id": run_dir.name, "started": started.isoformat(timespec="seconds"),
            "host": socket.gethostname(), "command": shlex.join(["scripts/regress"] + argv),
            "build": str(build), "labels": label_order, "base_seed": base_seed,
            "seeds": seeds, "shard": [index, total], "fingerprint": fingerprint(items),
            "work_total": len(items), "items": len(mine), "jobs": args.jobs,
            "timeout": args.timeout, "wall_time": wall, "coverage": None}
    if raw_cov is not None:
        meta["coverage"] = _run_coverage(run_dir, raw_cov, args.keep_raw_coverage)
    return _finish(run_dir, meta, results)


def _resolve_run_dir(path: pathlib.Path) -> pathlib.Path:
    if not (path / report.RESULTS).is_file() and (path / "latest" / report.RESULTS).is_file():
        return (path / "latest").resolve()
    return path.resolve()


def merge(args: argparse.Namespace, argv: list[str]) -> int:
    """Combines the run directories of the shards of one regression."""
    runs = [(d, *report.read_results(d)) for d in map(_resolve_run_dir,
                                                      map(pathlib.Path, args.merge))]
    first = runs[0][1]
    for d, meta, _ in runs:
        if meta.get("fingerprint") != first.get("fingerprint"):
            raise RegressError(f"--merge: {d} ran another work list ({meta.get('fingerprint')} "
                               f"vs {first.get('fingerprint')}): different build, labels or "
                               f"seeds")
        if meta.get("shard", [0, 1])[1] != first.get("shard", [0, 1])[1]:
            raise RegressError(f"--merge: {d} was cut into {meta['shard'][1]} shards, "
                               f"{runs[0][0]} into {first['shard'][1]}")
    total = first["shard"][1]
    seen = sorted(meta["shard"][0] for _, meta, _ in runs)
    if seen != list(range(total)):
        missing = sorted(set(range(total)) - set(seen))
        twice = sorted({i for i in seen if seen.count(i) > 1})
        raise RegressError(f"--merge: need each of shards 0..{total - 1} once; "
                           + (f"missing {missing}" if missing else "")
                           + ("; " if missing and twice else "")
                           + (f"given twice {twice}" if twice else ""))
    results: list[Result] = [r for _, _, rs in runs for r in rs]
    order = {s: k for k, s in enumerate(first.get("seeds", []))}
    results.sort(key=lambda r: (r.test, -1 if r.seed is None else order.get(r.seed, r.seed)))
    for (d, _, rs) in runs:  # logs stay where they are: point at them
        for r in rs:
            r.log = str(d / r.log)
    started = _now()
    out_root = pathlib.Path(args.out or os.environ.get("REGRESS_OUT")
                            or pathlib.Path(first["build"]) / "regress")
    run_dir = _make_run_dir(out_root.resolve(),
                            args.run_id or started.strftime("%Y%m%dT%H%M%SZ") + "-merged")
    meta = dict(first)
    meta.update({"run_id": run_dir.name, "started": started.isoformat(timespec="seconds"),
                 "host": socket.gethostname(),
                 "command": shlex.join(["scripts/regress"] + argv),
                 "shards": [str(d) for d, _, _ in runs], "items": len(results),
                 "jobs": sum(m.get("jobs", 0) for _, m, _ in runs),
                 "wall_time": max(m.get("wall_time", 0.0) for _, m, _ in runs),
                 "coverage": None})
    dats = [d / "coverage" / "merged.dat" for d, _, _ in runs]
    if any(m.get("coverage") for _, m, _ in runs):
        present = [p for p in dats if p.is_file()]
        if present:
            cov_dir = run_dir / "coverage"
            cov_dir.mkdir()
            coverage.merge(present, cov_dir / "merged.dat")
            rep = coverage.report_merged(cov_dir / "merged.dat", cov_dir, SOURCE_DIR)
            meta["coverage"] = _coverage_meta(rep, SOURCE_DIR)
    return _finish(run_dir, meta, results)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        if args.merge:
            return merge(args, argv)
        return run(args, argv)
    except RegressError as e:
        print(f"regress: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # a tool (verilator_coverage, genhtml) failed
        print(f"regress: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("regress: interrupted; running tests were killed", file=sys.stderr)
        return 130
