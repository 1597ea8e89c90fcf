#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of scripts/regress (ctest label "regress"):

  test_regress.py [--build DIR] [unittest options]

The logic tests (work list, seeds, sharding, rerun files, JUnit, coverage
parsing, merge checks) need nothing. With --build (a configured and built
Strata build directory; ctest passes its own) the end-to-end tests also run
scripts/regress on one real bench test with two seeds plus fake tests that
fail for odd seeds, hang, or must run without a seed; on a coverage build
they check the coverage report too.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from regress_lib import coverage, report, runner, worklist  # noqa: E402
from regress_lib.runner import FAILED, PASSED, SKIPPED, TIMEOUT, Result  # noqa: E402
from regress_lib.worklist import RegressError, Test, WorkItem  # noqa: E402

REGRESS = [sys.executable, str(HERE.parent / "regress")]
BUILD: pathlib.Path | None = None
BENCH_TEST = "StrataDepSems.RandomTrafficWithGaps"  # a real bench test of well under a second


def synthetic_tests(count: int, rng: random.Random) -> list[Test]:
    return [Test(name=f"Suite{k % 7}.Case{k}", command=("true",),
                 labels=("unit", "random") if rng.random() < 0.6 else ("lint",))
            for k in range(count)]


class WorkListTest(unittest.TestCase):
    def test_shards_are_disjoint_complete_and_balanced(self):
        rng = random.Random(5)
        tests = synthetic_tests(40, rng)
        items = worklist.make_worklist(tests, worklist.derive_seeds(3, 4))
        self.assertEqual(len(items), sum(4 if t.random else 1 for t in tests))
        for total in range(1, 8):
            shards = [worklist.shard(items, i, total) for i in range(total)]
            flat = [item for s in shards for item in s]
            self.assertEqual(len(flat), len(set(flat)), f"{total} shards overlap")
            self.assertEqual(set(flat), set(items), f"{total} shards miss runs")
            sizes = [len(s) for s in shards]
            self.assertLessEqual(max(sizes) - min(sizes), 1, sizes)

    def test_work_list_does_not_depend_on_ctest_order(self):
        rng = random.Random(9)
        tests = synthetic_tests(25, rng)
        seeds = worklist.derive_seeds(20261122, 3)
        shuffled = list(tests)
        rng.shuffle(shuffled)
        a, b = worklist.make_worklist(tests, seeds), worklist.make_worklist(shuffled, seeds)
        self.assertEqual(a, b)
        self.assertEqual(worklist.fingerprint(a), worklist.fingerprint(b))
        self.assertEqual(worklist.shard(a, 1, 3), worklist.shard(b, 1, 3))
        self.assertNotEqual(worklist.fingerprint(a),
                            worklist.fingerprint(worklist.make_worklist(tests, seeds[:2])))

    def test_random_tests_get_every_seed_the_others_run_once(self):
        tests = [Test("A.r", ("x",), ("unit", "random")), Test("B.d", ("x",), ("unit",))]
        items = worklist.make_worklist(tests, [11, 22])
        self.assertEqual(items, [WorkItem("A.r", 11), WorkItem("A.r", 22), WorkItem("B.d", None)])

    def test_seeds_are_reproducible_distinct_and_never_zero_for_verilator(self):
        a = worklist.derive_seeds(20261122, 50)
        self.assertEqual(a, worklist.derive_seeds(20261122, 50))
        self.assertEqual(a[:5], worklist.derive_seeds(20261122, 5))
        self.assertEqual(len(set(a)), 50)
        self.assertTrue(all(1 <= s < 2**31 for s in a))
        self.assertNotEqual(a[:5], worklist.derive_seeds(20261123, 5))

    def test_shard_spec_and_gtest_variables(self):
        self.assertEqual(worklist.parse_shard("2/5"), (2, 5))
        for bad in ("5/5", "1/0", "a/b", "1", "-1/3"):
            with self.assertRaises(RegressError, msg=bad):
                worklist.parse_shard(bad)
        self.assertEqual(worklist.shard_from_env(
            {"GTEST_SHARD_INDEX": "1", "GTEST_TOTAL_SHARDS": "3"}), (1, 3))
        self.assertIsNone(worklist.shard_from_env({}))
        with self.assertRaises(RegressError):
            worklist.shard_from_env({"GTEST_TOTAL_SHARDS": "3"})

    def test_child_environment(self):
        os.environ["GTEST_TOTAL_SHARDS"] = "4"
        os.environ["GTEST_SHARD_INDEX"] = "1"
        os.environ["STRATA_SEED"] = "999"
        try:
            t = Test("A.b", ("x",), ("unit", "random"), environment=(("FOO", "1"),))
            env = runner.child_env(t, WorkItem("A.b", 42), pathlib.Path("/tmp/cov"))
            self.assertEqual(env["STRATA_SEED"], "42")
            self.assertEqual(env["FOO"], "1")
            self.assertEqual(env["STRATA_COVERAGE_DIR"], "/tmp/cov")
            self.assertNotIn("GTEST_TOTAL_SHARDS", env)  # gtest would drop the test it is given
            self.assertNotIn("GTEST_SHARD_INDEX", env)
            self.assertNotIn("STRATA_SEED", runner.child_env(t, WorkItem("A.b", None), None))
        finally:
            for k in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "STRATA_SEED"):
                del os.environ[k]

    def test_ctest_json_and_selection(self):
        doc = {"tests": [
            {"name": "S.a", "command": ["/bin/a"], "properties": [
                {"name": "LABELS", "value": ["random", "unit"]},
                {"name": "WORKING_DIRECTORY", "value": "/w"},
                {"name": "ENVIRONMENT", "value": ["X=1=2"]}]},
            {"name": "lint_x", "command": ["/bin/l"], "properties": [
                {"name": "LABELS", "value": ["lint"]}, {"name": "TIMEOUT", "value": 30},
                {"name": "SKIP_RETURN_CODE", "value": 77},
                {"name": "RESOURCE_LOCK", "value": ["tool"]}]},
            {"name": "off", "command": ["/bin/o"], "properties": [
                {"name": "LABELS", "value": ["unit"]}, {"name": "DISABLED", "value": True}]},
            {"name": "notbuilt", "properties": [{"name": "LABELS", "value": ["network"]}]}]}
        tests = worklist.parse_ctest_json(json.dumps(doc), pathlib.Path("/b"))
        a, lint, off, nb = tests
        self.assertTrue(a.random)
        self.assertEqual((a.cwd, a.environment), ("/w", (("X", "1=2"),)))
        self.assertEqual((lint.timeout, lint.skip_return_code, lint.locks, lint.cwd),
                         (30.0, 77, frozenset({"tool"}), "/b"))
        self.assertTrue(off.disabled)
        self.assertEqual(nb.command, ())
        names = [t.name for t in worklist.select_tests(tests, None)]
        self.assertEqual(names, ["S.a", "lint_x", "notbuilt"])  # disabled ones never run
        self.assertEqual([t.name for t in worklist.select_tests(tests, ["unit"])], ["S.a"])
        self.assertEqual([t.name for t in worklist.select_tests(tests, ["all"], "^n")],
                         ["notbuilt"])
        with self.assertRaises(RegressError):
            worklist.select_tests(tests, ["synth"])
        with self.assertRaises(RegressError):
            worklist.select_tests(tests, ["all"], "(")
        with self.assertRaises(RegressError):
            worklist.parse_ctest_json("not json", pathlib.Path("/b"))

    def test_extra_test_spec(self):
        t = worklist.parse_extra_test("Fake.X:unit,random:exit 3")
        self.assertEqual((t.name, t.labels, t.command), ("Fake.X", ("unit", "random"),
                                                         ("/bin/sh", "-c", "exit 3")))
        for bad in ("nolabels", ":unit:cmd", "a:b:"):
            with self.assertRaises(RegressError):
                worklist.parse_extra_test(bad)


class RerunFileTest(unittest.TestCase):
    def test_round_trip(self):
        items = [WorkItem("StrataPe.Random", 123456), WorkItem("rtl_lint", None),
                 WorkItem("P/Suite.Case/2", 7)]
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "f.txt"
            worklist.write_rerun(path, items, {"build": "/x/build", "base_seed": "5"})
            back, meta = worklist.read_rerun(path)
            self.assertEqual(back, items)
            self.assertEqual(meta["build"], "/x/build")
            self.assertEqual(meta["base_seed"], "5")

    def test_bad_files_are_clear_errors(self):
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "f.txt"
            for text, needle in (("A.b 12\nonlyname\n", ":2:"), ("A.b zero\n", "zero"),
                                 ("A.b 0\n", "positive"), ("# nothing\n", "no runs")):
                path.write_text(text)
                with self.assertRaises(RegressError) as ctx:
                    worklist.read_rerun(path)
                self.assertIn(needle, str(ctx.exception))
            with self.assertRaises(RegressError):
                worklist.read_rerun(pathlib.Path(d) / "missing.txt")


def sample_results() -> list[Result]:
    return [
        Result("StrataPe.A", 11, "unit", PASSED, 1.5),
        Result("StrataPe.A", 22, "unit", FAILED, 2.0, "exit status 1",
               tail="mismatch at channel 3\x1b[0m\x00", log="logs/a.22.log"),
        Result("StrataPe.B", 11, "unit", TIMEOUT, 9.0, "timed out after 9 s", tail="...",
               log="logs/b.11.log"),
        Result("rtl_lint", None, "lint", PASSED, 0.5),
        Result("synth_X", None, "synth", SKIPPED, 0.1, "skipped (exit status 77)"),
    ]


SAMPLE_META = {"run_id": "r1", "started": "2026-11-22T00:00:00+00:00", "host": "h",
               "build": "/b", "base_seed": 5, "seeds": [11, 22], "shard": [0, 1],
               "fingerprint": "f", "work_total": 5, "items": 5, "labels": ["unit"],
               "coverage": None}


class ReportTest(unittest.TestCase):
    def test_junit_structure_and_counts(self):
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "junit.xml"
            report.write_junit(path, SAMPLE_META, sample_results())
            root = ET.parse(path).getroot()
            self.assertEqual(root.tag, "testsuites")
            self.assertEqual((root.get("tests"), root.get("failures"), root.get("skipped")),
                             ("5", "2", "1"))
            suites = {s.get("name"): s for s in root.findall("testsuite")}
            self.assertEqual(set(suites), {"unit", "lint", "synth"})
            for s in suites.values():  # attributes agree with the children
                cases = s.findall("testcase")
                self.assertEqual(int(s.get("tests")), len(cases))
                self.assertEqual(int(s.get("failures")),
                                 sum(1 for c in cases if c.find("failure") is not None))
                self.assertEqual(int(s.get("skipped")),
                                 sum(1 for c in cases if c.find("skipped") is not None))
            unit = suites["unit"].findall("testcase")
            self.assertEqual([(c.get("classname"), c.get("name")) for c in unit],
                             [("unit.StrataPe", "A [seed 11]"), ("unit.StrataPe", "A [seed 22]"),
                              ("unit.StrataPe", "B [seed 11]")])
            fail = unit[1].find("failure")
            self.assertIn("mismatch at channel 3", fail.text)
            self.assertIn("STRATA_SEED=22", fail.get("message"))
            self.assertEqual(unit[2].find("failure").get("type"), "timeout")
            self.assertEqual(suites["lint"].find("testcase").get("name"), "rtl_lint")

    def test_summary_and_failing_seeds(self):
        with tempfile.TemporaryDirectory() as d:
            run_dir = pathlib.Path(d)
            meta = dict(SAMPLE_META, run_dir=str(run_dir))
            report.write_summary(run_dir / "summary.md", meta, sample_results())
            report.write_failing(run_dir, meta, sample_results())
            text = (run_dir / "summary.md").read_text()
            self.assertIn("| unit | 2 | 3 | 1 | 2 | 0 |", text)
            self.assertIn("| **total** | 4 | 5 | 2 | 2 | 1 |", text)
            self.assertIn("base seed: **5**", text)
            self.assertIn("| StrataPe.A | 22 | failed |", text)
            items, meta_back = worklist.read_rerun(run_dir / "failing_seeds.txt")
            self.assertEqual(items, [WorkItem("StrataPe.A", 22), WorkItem("StrataPe.B", 11)])
            self.assertEqual(meta_back["build"], "/b")

    def test_judge_follows_ctest_rules(self):
        t = Test("x", ("x",), skip_return_code=77, fail_regex=("FATAL",))
        item = WorkItem("x", None)
        self.assertEqual(runner.judge(t, item, 0, "ok")[0], PASSED)
        self.assertEqual(runner.judge(t, item, 77, "")[0], SKIPPED)
        self.assertEqual(runner.judge(t, item, 1, ""), (FAILED, "exit status 1"))
        self.assertEqual(runner.judge(t, item, 0, "FATAL: x")[0], FAILED)
        self.assertIn("signal 11", runner.judge(t, item, -11, "")[1])
        inverted = Test("y", ("y",), will_fail=True)
        self.assertEqual(runner.judge(inverted, item, 1, "")[0], PASSED)
        self.assertEqual(runner.judge(inverted, item, 0, "")[0], FAILED)
        gskip = Test("z", ("z",), skip_regex=(r"\[  SKIPPED \]",))
        self.assertEqual(runner.judge(gskip, item, 0, "[  SKIPPED ] 1 test")[0], SKIPPED)

    def test_merge_refuses_mismatched_shards(self):
        from regress_lib import cli
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for k, (index, fp) in enumerate(((0, "f"), (1, "other"))):
                run_dir = pathlib.Path(d) / f"s{k}"
                run_dir.mkdir()
                report.write_results(run_dir, dict(SAMPLE_META, shard=[index, 2], fingerprint=fp),
                                     sample_results()[:1])
                dirs.append(str(run_dir))
            err = self._main_error(cli, ["--merge"] + dirs + ["--out", d])
            self.assertIn("another work list", err)
            err = self._main_error(cli, ["--merge", dirs[0], "--out", d])
            self.assertIn("missing [1]", err)
            err = self._main_error(cli, ["--merge", str(pathlib.Path(d) / "none"), "--out", d])
            self.assertIn("results.json", err)

    def _main_error(self, cli, argv) -> str:
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stderr(buf):
            self.assertEqual(cli.main(argv), 2)
        return buf.getvalue()


DAT = """# SystemC::Coverage-3
C '\x01f\x02/s/rtl/a.sv\x01l\x021\x01n\x025\x01page\x02v_toggle/a\x01o\x02x[0]\x01h\x02t.a' 3
C '\x01f\x02/s/rtl/a.sv\x01l\x021\x01n\x025\x01page\x02v_toggle/a\x01o\x02x[1]\x01h\x02t.a' 0
C '\x01f\x02/s/rtl/a.sv\x01l\x024\x01n\x023\x01page\x02v_line/a\x01o\x02block\x01h\x02t.a' 10
C '\x01f\x02/s/rtl/a.sv\x01l\x025\x01n\x023\x01page\x02v_branch/a\x01o\x02if\x01h\x02t.a' 4
C '\x01f\x02/s/rtl/a.sv\x01l\x025\x01n\x024\x01page\x02v_branch/a\x01o\x02else\x01h\x02t.a' 0
C '\x01f\x02/s/tb/top.sv\x01l\x022\x01n\x021\x01page\x02v_line/top\x01o\x02block\x01h\x02t' 1
"""


class CoverageTest(unittest.TestCase):
    def test_points_per_file(self):
        points = coverage.parse_dat(DAT)
        self.assertEqual(len(points), 6)
        files = coverage.summarise(points)
        a = files["/s/rtl/a.sv"]
        self.assertEqual((a.line.covered, a.line.total), (2, 3))
        self.assertEqual((a.toggle.covered, a.toggle.total), (1, 2))
        self.assertEqual(a.line.text(), "66.7 % (2/3)")
        top = files["/s/tb/top.sv"]
        self.assertEqual((top.line.covered, top.line.total, top.toggle.total), (1, 1, 0))
        self.assertEqual(top.toggle.text(), "-")

    def test_lcov_files(self):
        points = coverage.parse_dat(DAT)
        with tempfile.TemporaryDirectory() as d:
            line = pathlib.Path(d) / "line.info"
            coverage.write_info(points, "line", line, "t")
            text = line.read_text()
            a = text[text.index("SF:/s/rtl/a.sv"):].split("end_of_record")[0]
            # line 5 has an arm never taken: the line counts as missed
            self.assertIn("DA:4,10\n", a)
            self.assertIn("DA:5,0\n", a)
            self.assertIn("BRDA:5,0,1,-\n", a)
            self.assertIn("LF:2\nLH:1\n", a)
            toggle = pathlib.Path(d) / "toggle.info"
            coverage.write_info(points, "toggle", toggle, "t")
            self.assertIn("DA:1,0\n", toggle.read_text())
            self.assertNotIn("top.sv", toggle.read_text())


class EndToEndTest(unittest.TestCase):
    """scripts/regress on a real build: one bench test x 2 seeds, plus fakes."""

    @classmethod
    def setUpClass(cls):
        if not os.environ.get("STRATA_REGRESS_BUILD"):
            raise unittest.SkipTest("needs --build")
        cls.build = pathlib.Path(os.environ["STRATA_REGRESS_BUILD"])
        cls.tmp = tempfile.TemporaryDirectory(prefix="regress-test-")
        cls.root = pathlib.Path(cls.tmp.name)
        cls.cov = _is_coverage_build(cls.build)
        # a base seed whose two seeds are one odd and one even
        cls.base = next(b for b in range(1, 1000)
                        if len({s % 2 for s in worklist.derive_seeds(b, 2)}) == 2)
        cls.seeds = worklist.derive_seeds(cls.base, 2)
        cls.main = cls.regress("main", ["--timeout", "10"] + (["--coverage"] if cls.cov else []))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    FAKES = ["--extra-test", "Fake.OddSeedFails:unit,random:echo STRATA_SEED=$STRATA_SEED; "
             "exit $((STRATA_SEED % 2))",
             "--extra-test", "Fake.Hangs:unit:sleep 600",
             "--extra-test", "Fake.Once:unit:test -z \"$STRATA_SEED\""]

    @classmethod
    def regress(cls, out: str, extra: list[str], select: bool = True):
        argv = ["--build", str(cls.build), "--out", str(cls.root / out), "--jobs", "2"]
        if select:
            argv += ["--labels", "unit", "--tests", rf"^({re.escape(BENCH_TEST)}|Fake\..*)$",
                     "--seeds", "2", "--base-seed", str(cls.base)]
        return subprocess.run(REGRESS + argv + cls.FAKES + extra, capture_output=True,
                              text=True, timeout=600, check=False)

    def run_dir(self, out: str) -> pathlib.Path:
        latest = self.root / out / "latest"
        self.assertTrue(latest.is_symlink(), f"{latest} is not a symlink")
        return latest.resolve()

    def test_exit_status_junit_and_failing_seeds(self):
        self.assertEqual(self.main.returncode, 1, self.main.stdout + self.main.stderr)
        run_dir = self.run_dir("main")
        root = ET.parse(run_dir / "junit.xml").getroot()
        cases = root.findall("testsuite/testcase")
        # bench x 2 seeds, odd-seed fake x 2 seeds, the hang once, the seedless fake once
        self.assertEqual(len(cases), 6)
        self.assertEqual(root.get("tests"), "6")
        odd = [s for s in self.seeds if s % 2 == 1]
        self.assertEqual(root.get("failures"), str(len(odd) + 1))
        names = {(c.get("classname"), c.get("name")): c for c in cases}
        bench_suite, bench_name = BENCH_TEST.split(".")
        for s in self.seeds:
            case = names[(f"unit.{bench_suite}", f"{bench_name} [seed {s}]")]
            self.assertIsNone(case.find("failure"), f"bench failed with seed {s}")
            fake = names[("unit.Fake", f"OddSeedFails [seed {s}]")]
            self.assertEqual(fake.find("failure") is not None, s % 2 == 1)
        self.assertEqual(names[("unit.Fake", "Hangs")].find("failure").get("type"), "timeout")
        self.assertIsNone(names[("unit.Fake", "Once")].find("failure"))
        items, _ = worklist.read_rerun(run_dir / "failing_seeds.txt")
        self.assertEqual(sorted(items), sorted([WorkItem("Fake.OddSeedFails", s) for s in odd]
                                               + [WorkItem("Fake.Hangs", None)]))
        # the seed really reached the bench: it prints the seed it ran with
        for s in self.seeds:
            logs = list((run_dir / "logs").glob(f"{BENCH_TEST}-*.{s}.log"))
            self.assertEqual(len(logs), 1)
            self.assertIn(f"STRATA_SEED={s}", logs[0].read_text())
        summary = (run_dir / "summary.md").read_text()
        self.assertIn(f"base seed: **{self.base}**", summary)
        self.assertIn(f"| unit | 4 | 6 | {5 - len(odd)} | {len(odd) + 1} | 0 |", summary)

    def test_rerun_runs_exactly_the_failing_list(self):
        listed = self.run_dir("main") / "failing_seeds.txt"
        proc = self.regress("rerun", ["--rerun", str(listed), "--timeout", "3"], select=False)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        meta, results = report.read_results(self.run_dir("rerun"))
        items, _ = worklist.read_rerun(listed)
        self.assertEqual([r.item for r in results], items)
        self.assertTrue(all(not r.ok for r in results))

    def test_shards_merge_into_the_whole_run(self):
        base = ["--exclude", "Hangs"]
        for i in range(2):
            proc = self.regress(f"shard{i}", base + ["--shard", f"{i}/2"])
            self.assertIn(proc.returncode, (0, 1), proc.stderr)
        shard_dirs = [str(self.run_dir(f"shard{i}")) for i in range(2)]
        merged = subprocess.run(REGRESS + ["--merge"] + shard_dirs + ["--out",
                                str(self.root / "merged")], capture_output=True, text=True,
                                timeout=600, check=False)
        self.assertEqual(merged.returncode, 1, merged.stderr)  # odd seeds fail
        cases = ET.parse(self.run_dir("merged") / "junit.xml").getroot().findall(
            "testsuite/testcase")
        whole = ET.parse(self.run_dir("main") / "junit.xml").getroot().findall(
            "testsuite/testcase")
        self.assertEqual(sorted((c.get("classname"), c.get("name")) for c in cases),
                         sorted((c.get("classname"), c.get("name")) for c in whole
                                if c.get("name") != "Hangs"))
        twice = subprocess.run(REGRESS + ["--merge", shard_dirs[0], shard_dirs[0], "--out",
                               str(self.root / "bad")], capture_output=True, text=True,
                               timeout=60, check=False)
        self.assertEqual(twice.returncode, 2)
        self.assertIn("given twice [0]", twice.stderr)

    def test_bad_input_is_a_clear_error(self):
        proc = self.regress("bad", ["--rerun", str(self.root / "missing.txt")], select=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot read", proc.stderr)
        listed = self.root / "unknown.txt"
        listed.write_text("No.SuchTest 5\n")
        proc = self.regress("bad", ["--rerun", str(listed)], select=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no test named No.SuchTest", proc.stderr)
        proc = self.regress("bad", ["--shard", "2/2"])
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--shard", proc.stderr)

    def test_coverage(self):
        if not self.cov:
            proc = self.regress("nocov", ["--coverage"])
            self.assertEqual(proc.returncode, 2)
            self.assertIn("not a coverage build", proc.stderr)
            return
        run_dir = self.run_dir("main")
        meta, _ = report.read_results(run_dir)
        cov = meta["coverage"]
        self.assertIn("line", cov, cov)
        files = {f["file"]: f for f in cov["files"]}
        sems = files["rtl/control/strata_dep_sems.sv"]
        self.assertGreater(sems["line_points"][1], 0)
        self.assertGreater(sems["toggle_points"][1], 0)
        rtl = [f for name, f in files.items() if name.startswith("rtl/")]
        for kind in ("line", "toggle"):  # the total is the sum over rtl/ files
            covered = sum(f[f"{kind}_points"][0] for f in rtl)
            points = sum(f[f"{kind}_points"][1] for f in rtl)
            self.assertAlmostEqual(cov[f"{kind}_percent"], 100.0 * covered / points)
            self.assertGreater(covered, 0)
        self.assertTrue((run_dir / "coverage" / "merged.dat").is_file())
        self.assertTrue((run_dir / "coverage" / "annotate" / "strata_dep_sems.sv").is_file())
        self.assertTrue((run_dir / cov["html"]).is_file())
        self.assertIn(f"line **{cov['line']}**, toggle **{cov['toggle']}**",
                      (run_dir / "summary.md").read_text())


def _is_coverage_build(build: pathlib.Path) -> bool:
    from regress_lib import cli
    return cli._is_coverage_build(build)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--build")
    known, rest = parser.parse_known_args()
    if known.build:
        os.environ["STRATA_REGRESS_BUILD"] = str(pathlib.Path(known.build).resolve())
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
