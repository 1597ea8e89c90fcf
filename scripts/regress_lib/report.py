# SPDX-License-Identifier: Apache-2.0
"""What a regression leaves in its run directory:

  results.json       every run (test, seed, outcome, time, tail of output) and
                     the run's metadata; --merge reads these
  junit.xml          one <testsuite> per label, one <testcase> per test x seed
  summary.md         runs / passed / failed / time per label, coverage, failing seeds
  failing_seeds.txt  the failing runs, in the format --rerun reads
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import xml.etree.ElementTree as ET

from .runner import FAILED, PASSED, SKIPPED, TIMEOUT, Result
from .worklist import RegressError, WorkItem, write_rerun

RESULTS = "results.json"
JUNIT = "junit.xml"
SUMMARY = "summary.md"
FAILING = "failing_seeds.txt"
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """XML 1.0 cannot hold most control characters (a crash can print them)."""
    return _XML_BAD.sub("?", text)


def write_results(run_dir: pathlib.Path, meta: dict, results: list[Result]) -> None:
    doc = {"meta": meta, "results": [dataclasses.asdict(r) for r in results]}
    (run_dir / RESULTS).write_text(json.dumps(doc, indent=1) + "\n")


def read_results(run_dir: pathlib.Path) -> tuple[dict, list[Result]]:
    path = run_dir / RESULTS
    try:
        doc = json.loads(path.read_text())
        return doc["meta"], [Result(**r) for r in doc["results"]]
    except OSError as e:
        raise RegressError(f"--merge: {path}: {e.strerror}") from e
    except (ValueError, KeyError, TypeError) as e:
        raise RegressError(f"--merge: {path} is not a regress results file: {e}") from e


def failing(results: list[Result]) -> list[WorkItem]:
    return [r.item for r in results if not r.ok]


def write_failing(run_dir: pathlib.Path, meta: dict, results: list[Result]) -> None:
    header = {"run": meta["run_id"], "build": meta["build"], "base_seed": meta["base_seed"]}
    write_rerun(run_dir / FAILING, failing(results), header)


def _split_name(test: str) -> tuple[str, str]:
    """gtest 'Suite.Name' (or 'Prefix/Suite.Name/Param') -> (suite, name)."""
    suite, dot, name = test.partition(".")
    return (suite, name) if dot else ("", test)


def write_junit(path: pathlib.Path, meta: dict, results: list[Result]) -> None:
    """JUnit XML as Jenkins / GitLab read it: a testsuite per label; a testcase
    per run, classname <label>.<suite>, name '<test> [seed N]' or '<test>';
    failures (timeouts included) carry the last lines of output."""
    root = ET.Element("testsuites", name="strata-regress")
    labels: dict[str, list[Result]] = {}
    for r in results:
        labels.setdefault(r.label, []).append(r)
    totals = {"tests": 0, "failures": 0, "skipped": 0, "time": 0.0}
    for label in sorted(labels):
        runs = labels[label]
        n_fail = sum(1 for r in runs if r.outcome in (FAILED, TIMEOUT))
        n_skip = sum(1 for r in runs if r.outcome == SKIPPED)
        t = sum(r.duration for r in runs)
        suite = ET.SubElement(root, "testsuite", name=label, tests=str(len(runs)),
                              failures=str(n_fail), errors="0", skipped=str(n_skip),
                              time=f"{t:.3f}", timestamp=meta.get("started", ""),
                              hostname=meta.get("host", ""))
        props = ET.SubElement(suite, "properties")
        for key in ("run_id", "base_seed", "build", "fingerprint"):
            ET.SubElement(props, "property", name=key, value=str(meta.get(key, "")))
        shard_text = ("/".join(str(x) for x in meta.get("shard", [0, 1])) if not meta.get("shards")
                      else f"all {len(meta['shards'])} shards merged")
        ET.SubElement(props, "property", name="shard", value=shard_text)
        for r in runs:
            test_suite, test_name = _split_name(r.test)
            name = test_name if r.seed is None else f"{test_name} [seed {r.seed}]"
            classname = f"{label}.{test_suite}" if test_suite else label
            case = ET.SubElement(suite, "testcase", classname=classname, name=name,
                                 time=f"{r.duration:.3f}")
            if r.outcome in (FAILED, TIMEOUT):
                fail = ET.SubElement(case, "failure", type=r.outcome, message=_xml_text(
                    f"{r.message}; rerun: STRATA_SEED={r.seed if r.seed is not None else ''} "
                    f"log {r.log}"))
                fail.text = _xml_text(r.tail)
            elif r.outcome == SKIPPED:
                ET.SubElement(case, "skipped", message=_xml_text(r.message))
        totals["tests"] += len(runs)
        totals["failures"] += n_fail
        totals["skipped"] += n_skip
        totals["time"] += t
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    root.set("time", f"{totals['time']:.3f}")
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def label_table(results: list[Result]) -> list[dict]:
    """Rows label, tests, runs, passed, failed, skipped, time; and a total row."""
    rows = []
    by_label: dict[str, list[Result]] = {}
    for r in results:
        by_label.setdefault(r.label, []).append(r)

    def row(label: str, runs: list[Result]) -> dict:
        return {"label": label, "tests": len({r.test for r in runs}), "runs": len(runs),
                "passed": sum(1 for r in runs if r.outcome == PASSED),
                "failed": sum(1 for r in runs if r.outcome in (FAILED, TIMEOUT)),
                "skipped": sum(1 for r in runs if r.outcome == SKIPPED),
                "time": sum(r.duration for r in runs)}

    for label in sorted(by_label):
        rows.append(row(label, by_label[label]))
    rows.append(row("total", results))
    return rows


def _fmt_time(seconds: float) -> str:
    return f"{seconds:.1f}" if seconds < 600 else f"{seconds:.0f} ({seconds / 60:.1f} min)"


def write_summary(path: pathlib.Path, meta: dict, results: list[Result]) -> None:
    seeds = meta.get("seeds", [])
    shard = meta.get("shard", [0, 1])
    out = [f"# Strata regression {meta['run_id']}\n\n"]
    out.append(f"- command: `{meta.get('command', '')}`\n")
    out.append(f"- build: `{meta['build']}`"
               + (" (coverage build)" if meta.get("coverage") else "") + "\n")
    out.append(f"- labels: {', '.join(meta.get('labels', []))}\n")
    out.append(f"- base seed: **{meta['base_seed']}**; {len(seeds)} seed(s) per random test: "
               f"{', '.join(str(s) for s in seeds)}\n")
    if meta.get("shards"):
        out.append(f"- merged from {len(meta['shards'])} shard(s): "
                   f"{', '.join(meta['shards'])}\n")
    else:
        out.append(f"- shard {shard[0]}/{shard[1]}: {meta['items']} of {meta['work_total']} "
                   f"runs (work list {meta['fingerprint']})\n")
    out.append(f"- wall time: {_fmt_time(meta.get('wall_time', 0.0))} s with "
               f"{meta.get('jobs', '?')} job(s); per-run timeout {meta.get('timeout', '?')} s\n")
    out.append(f"- started {meta.get('started', '')} on {meta.get('host', '')}\n\n")

    out.append("| label | tests | runs | passed | failed | skipped | time (s) |\n")
    out.append("|---|---:|---:|---:|---:|---:|---:|\n")
    for row in label_table(results):
        bold = "**" if row["label"] == "total" else ""
        out.append(f"| {bold}{row['label']}{bold} | {row['tests']} | {row['runs']} | "
                   f"{row['passed']} | {row['failed']} | {row['skipped']} | "
                   f"{_fmt_time(row['time'])} |\n")

    cov = meta.get("coverage")
    out.append("\n## Coverage\n\n")
    if not cov:
        out.append("Not measured (run with `--coverage` / `make regress COVERAGE=1`).\n")
    elif "note" in cov:
        out.append(f"{cov['note']}\n")
    else:
        out.append(f"Verilator points over the files in rtl/ these runs simulated: line "
                   f"**{cov['line']}**, toggle **{cov['toggle']}**. "
                   f"Report: `{cov.get('html') or 'genhtml not installed'}` "
                   f"(toggle: `{cov.get('toggle_html') or '-'}`), "
                   f"annotated sources: `{cov['annotate']}`.\n\n")
        out.append("| file | line | toggle |\n|---|---:|---:|\n")
        for f in cov["files"]:
            out.append(f"| {f['file']} | {f['line']} | {f['toggle']} |\n")
        if cov.get("not_simulated"):
            out.append(f"\nNot simulated by any of these runs (no points, not in the total): "
                       f"{', '.join(cov['not_simulated'])}.\n")

    bad = [r for r in results if not r.ok]
    out.append("\n## Failing seeds\n\n")
    if not bad:
        out.append("None.\n")
    else:
        out.append(f"Re-run them: `scripts/regress --build {meta['build']} --rerun "
                   f"{meta.get('run_dir', '.')}/{FAILING}`\n\n")
        out.append("| test | seed | outcome | why | log |\n|---|---|---|---|---|\n")
        for r in bad:
            why = r.message.replace("|", "\\|")
            out.append(f"| {r.test} | {r.seed if r.seed is not None else 'once'} | {r.outcome} | "
                       f"{why} | {r.log} |\n")
    silent = sorted({r.test for r in results if r.outcome == PASSED and not r.seed_echoed})
    if silent:
        out.append("\n## Random tests that did not print their seed\n\n"
                   "Labelled random, but no `STRATA_SEED=<seed>` line in their output: "
                   "their label or their fixture is wrong.\n\n")
        out += [f"- {t}\n" for t in silent]
    path.write_text("".join(out))
