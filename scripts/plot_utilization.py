#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-layer MAC utilisation plot (PNG) from `strata bench --json` reports.

Usage:
  scripts/plot_utilization.py OUT.png REPORT.json [REPORT.json ...]

Each report is one bar series: its `layers[].utilization` (the bench's
default mode) and a last bar for the whole network. The legend names the
configuration (P x N), the batch and the scheduling mode of each report, so
the plot in docs/performance.md says what it shows. The performance targets are
drawn as short marks: conv layers 90 % (conv1 70 %), FC at batch 8 60 %,
whole network 75 %. Needs matplotlib (/usr/bin/python3 on Debian:
python3-matplotlib).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write files only
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plot_utilization: {path}: {e}")
    for key in ("network", "config", "layers", "utilization", "mismatches"):
        if key not in report:
            sys.exit(f"plot_utilization: {path}: not a strata bench report (no '{key}')")
    if report["mismatches"] != 0:
        sys.exit(f"plot_utilization: {path}: {report['mismatches']} mismatches; "
                 "a report with wrong results is not plotted")
    return report


def label(report):
    c = report["config"]
    return (f"{report['network']}, P={c['pes']} N={c['lanes']}, batch {c['batch']}, "
            f"{c['mode']} mode")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    out, paths = argv[1], argv[2:]
    reports = [load(p) for p in paths]
    names = [layer["name"] for layer in reports[0]["layers"]] + ["network"]
    for p, r in zip(paths, reports):
        if [layer["name"] for layer in r["layers"]] + ["network"] != names:
            sys.exit(f"plot_utilization: {p}: other layers than {paths[0]}")

    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=110)
    width = 0.8 / len(reports)
    for i, r in enumerate(reports):
        values = [100.0 * layer["utilization"] for layer in r["layers"]]
        values.append(100.0 * r["utilization"])
        xs = [k + (i - (len(reports) - 1) / 2) * width for k in range(len(names))]
        bars = ax.bar(xs, values, width, label=label(r))
        for x, v in zip(xs, values):
            ax.text(x, v + 1, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
        del bars

    # The performance targets, one mark per bar group they apply to.
    kinds = [layer["kind"] for layer in reports[0]["layers"]] + ["network"]
    first_conv = kinds.index("conv") if "conv" in kinds else -1
    for k, kind in enumerate(kinds):
        target = {"conv": 70.0 if k == first_conv else 90.0, "fc": 60.0,
                  "network": 75.0}.get(kind)
        if target is not None:
            ax.hlines(target, k - 0.45, k + 0.45, colors="black", linestyles="dashed",
                      linewidth=1)
    ax.plot([], [], "k--", linewidth=1, label="target (FC at batch 8)")

    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("MAC utilisation (%)")
    ax.set_ylim(0, 115)
    ax.set_title("Useful MACs / (P x N x cycles), cycles from the RTL (60-cycle memory)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out, metadata={"Software": None})  # no tool version: reproducible bytes
    print(f"plot_utilization: wrote {out}")


if __name__ == "__main__":
    main(sys.argv)
