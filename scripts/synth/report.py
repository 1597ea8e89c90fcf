#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Strata synthesis report: Yosys `stat -json` + nextpnr `--report` -> report.json / .md.

Used by scripts/synth/flow.py (build, markdown, summary). Run on its own it
re-renders report.md from an existing report.json:
  /usr/bin/python3 scripts/synth/report.py build/synth/ecp5/report.json
A report collected from several runs (docs/fpga/ecp5-results.json) may leave
out what its runs did not record (harness widths, the cell list, run times,
critical paths) and may list different seeds per grade; markdown() renders
what is there. scripts/synth/docs_table.py turns such a report into the
results table of docs/fpga.md.
"""
import json
import pathlib
import re
import sys

# Cell types per family, grouped into the figures the report shows. Anything
# not listed is still kept in the per-cell table (cells_by_type).
FAMILY_CELLS = {
    "ecp5": {
        "LUT4": ["LUT4"],
        "CCU2C": ["CCU2C"],
        "FF": ["TRELLIS_FF"],
        "MULT18X18D": ["MULT18X18D"],
        "ALU54B": ["ALU54B"],
        "DP16KD": ["DP16KD", "PDPW16KD"],
        "LUTRAM (DPR16X4)": ["TRELLIS_DPR16X4"],
        "wide-mux (PFUMX, L6MUX21)": ["PFUMX", "L6MUX21"],
    },
    "xilinx": {
        "LUT": ["LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6"],
        "FF": ["FDRE", "FDSE", "FDCE", "FDPE"],
        "CARRY4": ["CARRY4"],
        "DSP48E1": ["DSP48E1"],
        "RAMB36E1": ["RAMB36E1"],
        "RAMB18E1": ["RAMB18E1"],
        "LUTRAM": ["RAM32X1D", "RAM64X1D", "RAM128X1D", "RAM32M", "RAM64M", "RAM32X1S",
                   "RAM64X1S", "RAM128X1S", "RAM256X1S"],
        "SRL": ["SRL16E", "SRLC32E"],
        "wide-mux (MUXF7, MUXF8)": ["MUXF7", "MUXF8"],
    },
    "gowin": {
        "LUT": ["LUT1", "LUT2", "LUT3", "LUT4"],
        "FF": ["DFF", "DFFE", "DFFS", "DFFSE", "DFFR", "DFFRE", "DFFP", "DFFPE", "DFFC",
               "DFFCE", "DFFN", "DFFNE", "DFFNS", "DFFNSE", "DFFNR", "DFFNRE", "DFFNP",
               "DFFNPE", "DFFNC", "DFFNCE"],
        "ALU": ["ALU"],
        "DSP (MULT*)": ["MULT9X9", "MULT18X18", "MULT36X36", "MULTALU18X18", "MULTALU36X18",
                        "MULTADDALU18X18", "ALU54D", "PADD9", "PADD18"],
        "BSRAM": ["DP", "DPX9", "DPB", "DPX9B", "SDP", "SDPX9", "SDPB", "SDPX9B", "SP",
                  "SPX9", "pROM", "pROMX9"],
        "LUTRAM": ["RAM16S1", "RAM16S2", "RAM16S4", "RAM16SDP1", "RAM16SDP2", "RAM16SDP4"],
        "wide-mux (MUX2_LUT5..8)": ["MUX2_LUT5", "MUX2_LUT6", "MUX2_LUT7", "MUX2_LUT8"],
    },
}

# nextpnr-ecp5 utilisation entries worth a column (bel type -> label).
PNR_BELS = {
    "TRELLIS_COMB": "TRELLIS_COMB (LUT4 slots, incl. carry and LUT RAM)",
    "TRELLIS_FF": "FF (TRELLIS_FF)",
    "TRELLIS_RAMW": "LUTRAM write ports",
    "MULT18X18D": "MULT18X18D",
    "ALU54B": "ALU54B",
    "DP16KD": "DP16KD",
    "TRELLIS_IO": "IO",
    "DCCA": "global clocks",
}


def group_cells(family, cells):
    out = {}
    for label, types in FAMILY_CELLS[family].items():
        out[label] = sum(cells.get(t, 0) for t in types)
    if family == "ecp5":
        # a CCU2C carry cell holds two LUT4s: count them like nextpnr does
        out["LUT4 equivalent"] = out["LUT4"] + 2 * out["CCU2C"]
    if family == "xilinx":
        out["RAMB36 equivalent"] = out["RAMB36E1"] + 0.5 * out["RAMB18E1"]
    return out


def clean_clock(name):
    """'$glbnet$clk_i$TRELLIS_IO_IN' -> 'clk_i'."""
    name = re.sub(r"^\$glbnet\$", "", name)
    return re.sub(r"\$TRELLIS_IO_IN$", "", name)


def critical_path(pnr, clock_raw):
    for cp in pnr.get("critical_paths", []):
        if cp.get("from") == f"posedge {clock_raw}" and cp.get("to") == f"posedge {clock_raw}":
            steps = cp["path"]
            if not steps:
                return None
            split = {"logic": 0.0, "routing": 0.0, "other": 0.0}
            for s in steps:
                key = s["type"] if s["type"] in ("logic", "routing") else "other"
                split[key] += s["delay"]
            first, last = steps[0]["from"], steps[-1]["to"]
            return {
                "from": f"{first['cell']}.{first['port']}",
                "to": f"{last['cell']}.{last['port']}",
                "delay_ns": round(sum(s["delay"] for s in steps), 3),
                "logic_ns": round(split["logic"], 3),
                "routing_ns": round(split["routing"], 3),
                "other_ns": round(split["other"], 3),
            }
    return None


HISTOGRAM_LEGEND = re.compile(r"\* represents (\d+) endpoint")
HISTOGRAM_BIN = re.compile(r"^Info: \[\s*(-?\d+),\s*(-?\d+)\) \|(\**)(\+?)\s*$")


def slack_histogram(log_text):
    """nextpnr's last slack histogram in a log (the routed one), or None.

    Bins of slack in ps against the clock constraint, each with the fewest
    and the most endpoints its bar can stand for: a star is `per` endpoints,
    a trailing '+' 1 to per - 1 more (nextpnr prints no exact counts)."""
    lines = log_text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.rstrip().endswith("Slack histogram:")]
    if not starts:
        return None
    i = starts[-1] + 1
    m = HISTOGRAM_LEGEND.search(lines[i]) if i < len(lines) else None
    if not m:
        raise ValueError(f"slack histogram without a legend at log line {i + 1}")
    per = int(m.group(1))
    bins = []
    for line in lines[i + 1:]:
        b = HISTOGRAM_BIN.match(line)
        if not b:
            if bins:
                break
            continue  # the '+' legend line
        stars = len(b.group(3)) * per
        plus = 1 if b.group(4) else 0
        bins.append({"from_ps": int(b.group(1)), "to_ps": int(b.group(2)),
                     "min": stars + plus, "max": stars + plus * max(per - 1, 1)})
    return {"per_star": per, "bins": bins}


def failing_endpoints(hist):
    """Endpoints below zero slack, as a range: at least those of the bins
    wholly below zero, at most those of every bin that starts below zero."""
    return {"at_least": sum(b["min"] for b in hist["bins"] if b["to_ps"] <= 0),
            "at_most": sum(b["max"] for b in hist["bins"] if b["from_ps"] < 0)}


# A register's bits and the copies of a generate loop are one group of endpoints.
ENDPOINT_BIT = re.compile(r"_TRELLIS_FF_Q(_\d+)?$")
GENERATE_INDEX = re.compile(r"\[\d+\]")
PORT_BIT = re.compile(r"\d+$")


def late_endpoints(pnr, clock_raw, period_ns, limit=30):
    """Every endpoint's latest data arrival, from nextpnr's detailed net timings.

    nextpnr's report names one critical path per clock; its
    `detailed_net_timings` (--detailed-timing-report) give, for every net that
    ends at a register, RAM or DSP input, the earliest and latest arrival at
    each such sink (setup not included). The endpoints whose arrival is at
    least 90 % of the period are grouped by register (its bits and the copies
    of a generate loop together) and port; the `limit` latest groups are kept.
    None when the report has no detailed timings."""
    nets = pnr.get("detailed_net_timings")
    if nets is None:
        return None
    event = f"posedge {clock_raw}"
    groups = {}
    over = late = 0
    for net in nets:
        for sink in net.get("endpoints", []):
            if sink.get("event") != event:
                continue
            arrival = sink["delay"][1]
            if arrival < 0.9 * period_ns:
                continue
            late += 1
            over += arrival >= period_ns
            cell = GENERATE_INDEX.sub("[*]", ENDPOINT_BIT.sub("", sink["cell"]))
            key = f"{cell}.{PORT_BIT.sub('', sink['port'])}"
            g = groups.setdefault(key, {"endpoint": key, "count": 0, "worst_arrival_ns": 0.0})
            g["count"] += 1
            g["worst_arrival_ns"] = max(g["worst_arrival_ns"], round(arrival, 3))
    ranked = sorted(groups.values(), key=lambda g: (-g["worst_arrival_ns"], g["endpoint"]))
    return {"period_ns": round(period_ns, 3), "at_least_90_percent": late,
            "arrival_over_period": over, "groups": ranked[:limit]}


def pnr_summary(pnr):
    clocks = {}
    for raw, f in pnr.get("fmax", {}).items():
        clocks[clean_clock(raw)] = {
            "fmax_mhz": round(f["achieved"], 2),
            "constraint_mhz": round(f["constraint"], 1),
            "met": f["achieved"] >= f["constraint"],
            "net": raw,
            "critical_path": critical_path(pnr, raw),
        }
        late = late_endpoints(pnr, raw, 1000.0 / f["constraint"])
        if late is not None:
            clocks[clean_clock(raw)]["late_endpoints"] = late
    util = {bel: pnr["utilization"][bel] for bel in PNR_BELS if bel in pnr.get("utilization", {})}
    summary = {"clocks": clocks, "utilization": util}
    if "seed_runs" in pnr:  # a seed sweep: the run kept, and every seed's outcome
        summary["seed"] = pnr["seed"]
        summary["seed_runs"] = [
            dict(r, fmax_mhz={clean_clock(raw): f for raw, f in r["fmax_mhz"].items()})
            if "fmax_mhz" in r else r for r in pnr["seed_runs"]]
    hist = pnr.get("slack_histogram")
    if hist:
        summary["slack_histogram"] = hist
        summary["failing_endpoints"] = failing_endpoints(hist)
    return summary


def split_modules(stat, wrapper):
    """(block module name, block cells, harness-only cells) from `stat -json`.

    The block is the one module the harness instantiates; its cells include
    those of any submodule the synthesis command left in place (counted once
    per instance), so the figures do not depend on flattening."""
    modules = {name.lstrip("\\"): m["num_cells_by_type"] for name, m in stat["modules"].items()}
    if wrapper not in modules:
        raise ValueError(f"{wrapper} missing from the synthesis statistics")

    def total(name, depth=0):
        if depth > 64:
            raise ValueError(f"module hierarchy too deep at {name}")
        cells = {}
        for cell, count in modules[name].items():
            sub = cell.lstrip("\\")
            if sub in modules:
                for k, v in total(sub, depth + 1).items():
                    cells[k] = cells.get(k, 0) + count * v
            else:
                cells[cell] = cells.get(cell, 0) + count
        return cells

    blocks = [c.lstrip("\\") for c in modules[wrapper] if c.lstrip("\\") in modules]
    if len(blocks) != 1:
        raise ValueError(f"expected one block instance in {wrapper}, got {blocks}")
    harness = {k: v for k, v in modules[wrapper].items() if k.lstrip("\\") != blocks[0]}
    return blocks[0], total(blocks[0]), harness


def build(run, spec, stat, pnr, wrapper):
    family = run["target"]
    block_name, block_cells, harness_cells = split_modules(stat, wrapper)
    rep = dict(run)
    rep["family"] = spec["family"]
    rep["block_module"] = block_name
    rep["resources"] = group_cells(family, block_cells)
    rep["cells_by_type"] = {k: v for k, v in sorted(block_cells.items()) if not k.startswith("$")}
    rep["harness_cells"] = dict(sorted(harness_cells.items()))
    if pnr:
        rep["device"] = {"part": spec["device"], "package": spec["package"]}
        rep["pnr"] = {speed: pnr_summary(p) for speed, p in pnr.items()}
    return rep


def source_text(git):
    """'git 1a2b3c4' and, when rtl/ differed from that commit, the files."""
    if isinstance(git, str):  # reports written before rtl_changed existed
        return f"git {git}"
    text = f"git {git['commit']}"
    if git["rtl_changed"]:
        text += " + uncommitted changes to " + ", ".join(git["rtl_changed"])
    return text


def _fmt(v):
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def markdown(rep):
    params = " ".join(f"{k}={v}" for k, v in rep["params"].items()) or "defaults"
    cmd = (f"make synth TARGET={rep['target']} TOP={rep['top']}"
           + (f" PARAMS=\"{params}\"" if rep["params"] else "")
           + (f" CONFIG={rep['config']['file']}"
              if rep["config"]["file"] != "config/default.yaml" else ""))
    lines = [
        f"# Synthesis report: {rep['top']} on {rep['family']}",
        "",
        "GENERATED by scripts/synth/flow.py; regenerate with:",
        "",
        f"    {cmd}",
        "",
        "| item | value |",
        "|---|---|",
        f"| top | `{rep['top']}` ({params}) |",
        f"| configuration | {rep['config']['name']} (`{rep['config']['file']}`) |",
        f"| source | {source_text(rep['git'])} |",
    ]
    for tool, ver in rep["tools"].items():
        lines.append(f"| {tool} | {ver} |")
    if "device" in rep:
        lines.append(f"| device | {rep['device']['part']} {rep['device']['package']}, "
                     f"speed grades {', '.join(rep['pnr'])} |")
        router = f", {rep['router']}" if rep.get("router") else ""
        placer = rep.get("placer")
        if placer:
            router += (f", HeAP timing weight {placer['timing_weight']}, "
                       f"criticality exponent {placer['crit_exp']}")
        seeds = rep.get("seeds", [rep.get("seed")])  # "seed": reports before seed sweeps
        seed_text = (f"nextpnr seed {seeds[0]}" if len(seeds) == 1 else
                     f"nextpnr seeds {', '.join(map(str, seeds))} (each grade's fastest run)")
        lines.append(f"| constraints | `{rep['constraints']}`, {seed_text}{router} |")
    if rep.get("runtime_s"):
        lines.append("| run time | "
                     + ", ".join(f"{k} {v} s" for k, v in rep["runtime_s"].items()) + " |")
    lines += [
        "",
        f"## Block resources after synthesis (`{rep['block_module']}`)",
        "",
        "Yosys `stat` of the block and everything below it (the harness excluded).",
        "",
        "| resource | count |",
        "|---|---|",
    ]
    lines += [f"| {k} | {_fmt(v)} |" for k, v in rep["resources"].items()]
    if "cells_by_type" in rep:
        lines += ["", "All cells: "
                  + ", ".join(f"{k} {v}" for k, v in rep["cells_by_type"].items())]
    if "harness" in rep:
        lines += ["", f"Harness (`{rep['harness']['module']}`, "
                  f"{rep['harness']['input_chain_bits']} input "
                  f"and {rep['harness']['output_chain_bits']} output chain bits): "
                  + (", ".join(f"{k} {v}" for k, v in rep.get("harness_cells", {}).items())
                     or "none")]
    if "pnr" in rep:
        lines += ["", "## Place and route (nextpnr-ecp5, block + harness)", ""]
        speeds = list(rep["pnr"])
        lines.append("| | " + " | ".join(f"speed {s}" for s in speeds) + " |")
        lines.append("|---" * (len(speeds) + 1) + "|")
        clocks = sorted({c for s in speeds for c in rep["pnr"][s]["clocks"]})
        for c in clocks:
            cells = []
            for s in speeds:
                ck = rep["pnr"][s]["clocks"].get(c)
                cells.append("n/a" if ck is None else
                             f"**{ck['fmax_mhz']} MHz** ({'meets' if ck['met'] else 'misses'} "
                             f"{ck['constraint_mhz']:g})")
            lines.append(f"| Fmax `{c}` | " + " | ".join(cells) + " |")
        for bel, label in PNR_BELS.items():
            cells = []
            for s in speeds:
                u = rep["pnr"][s]["utilization"].get(bel)
                cells.append("n/a" if u is None else f"{u['used']} / {u['available']}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        if any("seed_runs" in rep["pnr"][s] for s in speeds):
            lines.append("| nextpnr seed of the run | "
                         + " | ".join(str(rep["pnr"][s].get("seed", "n/a")) for s in speeds)
                         + " |")
        cells = []
        for s in speeds:
            fe = rep["pnr"][s].get("failing_endpoints")
            cells.append("n/a" if fe is None else f"{fe['at_least']} to {fe['at_most']}")
        lines.append("| endpoints below zero slack (slack histogram) | " + " | ".join(cells) + " |")
        sweep = {s: {r["seed"]: r for r in rep["pnr"][s]["seed_runs"]}
                 for s in speeds if "seed_runs" in rep["pnr"][s]}
        if sweep:
            lines += ["", "Seed sweep (Fmax of every run; the table above is each grade's "
                      "fastest):", "", "| seed | " + " | ".join(f"speed {s}" for s in sweep) + " |",
                      "|---" * (len(sweep) + 1) + "|"]
            swept = []  # every seed of any grade, in run order (the flow runs all at each)
            for runs in sweep.values():
                swept += [n for n in runs if n not in swept]
            for n in swept:
                cells = []
                for runs in sweep.values():
                    r = runs.get(n)
                    cells.append("not run" if r is None else
                                 f"failed: {r['error']}".replace("|", "\\|") if "error" in r else
                                 ", ".join(f"{f} MHz" for f in r["fmax_mhz"].values()) or "n/a")
                lines.append(f"| {n} | " + " | ".join(cells) + " |")
        for s in speeds:
            for c, ck in rep["pnr"][s]["clocks"].items():
                cp = ck.get("critical_path")
                if cp:
                    lines.append("")
                    lines.append(f"Critical path, speed {s}, `{c}`: `{cp['from']}` -> `{cp['to']}`, "
                                 f"{cp['delay_ns']} ns (logic {cp['logic_ns']}, routing "
                                 f"{cp['routing_ns']}, clock-to-out/setup {cp['other_ns']}).")
                late = ck.get("late_endpoints")
                if late:
                    lines += ["", f"Latest endpoints, speed {s}, `{c}` (nextpnr detailed timing: "
                              f"latest data arrival, setup not included; "
                              f"{late['at_least_90_percent']} endpoints arrive at 90 % of the "
                              f"{late['period_ns']} ns period or later, "
                              f"{late['arrival_over_period']} after the period):", "",
                              "| endpoint (register bits and generate copies together) | "
                              "endpoints | latest arrival (ns) |", "|---|---|---|"]
                    lines += [f"| `{g['endpoint']}` | {g['count']} | {g['worst_arrival_ns']} |"
                              for g in late["groups"]]
    return "\n".join(lines) + "\n"


def summary(rep):
    res = ", ".join(f"{k} {_fmt(v)}" for k, v in rep["resources"].items() if v)
    text = f"synth: {rep['top']} ({rep['target']}): {res or 'no cells'}"
    for speed, p in rep.get("pnr", {}).items():
        for clk, ck in p["clocks"].items():
            text += f"\nsynth: speed {speed}: Fmax {clk} {ck['fmax_mhz']} MHz"
            if "seed" in p:
                text += f" (seed {p['seed']}, the fastest of {len(p['seed_runs'])} seeds)"
    return text


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py <report.json>")
    path = pathlib.Path(sys.argv[1])
    rep = json.loads(path.read_text())
    (path.parent / "report.md").write_text(markdown(rep))
