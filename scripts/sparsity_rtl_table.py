#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-layer speed-up of the sparse build against the packer's figure for the
same weights (docs/sparsity.md, "Against the packer, per layer").

  /usr/bin/python3 scripts/sparsity_rtl_table.py [--strata build/sw/strata]
      [--network examples/cifar10_quick.yaml ...] [--sparsity 0.5 0.75 0.9]
      [--max-gap PERCENT]

For each network and sparsity it runs `strata bench NET --config
config/sparse.yaml --sparsity S --mode fine --json` (the packed program on the
sparse build, the dense program of the same weights on the dense build, both
checked against the golden model) and prints one Markdown row per packed
convolution: the packer's dense rows / packed rows for those weights, the
beats and cycles the RTL took on each build, the RTL's cycle speed-up and how
far it falls short of the packer's figure. The last row of each block is all
packed convolutions together, the packer's figure weighted by each layer's
dense beats (its rows are per output pixel). Exit status 1 when a bench fails, any output
element differs from the golden model, or (--max-gap) the packed convolutions
together fall more than PERCENT short of the packer's figure.
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def bench(strata: str, network: str, sparsity: float) -> dict:
    cmd = [strata, "bench", network, "--config", str(ROOT / "config" / "sparse.yaml"),
           "--sparsity", str(sparsity), "--mode", "fine", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"sparsity_rtl_table: {' '.join(cmd)} failed ({run.returncode}): "
                 f"{run.stderr.strip()}")
    report = json.loads(run.stdout)
    if report["mismatches"] != 0 or report["sparse"]["dense_build"] is None:
        sys.exit(f"sparsity_rtl_table: {network} at {sparsity}: "
                 f"{report['mismatches']} mismatches, dense build "
                 f"{report['sparse']['dense_build']}")
    return report


def gap(packer: float, cycles: float, dense_cycles: float) -> float:
    """How far the RTL's cycle speed-up falls from the packer's, in percent."""
    return 100 * ((dense_cycles / cycles) / packer - 1)


def row(name: str, sparsity: float, packer: float, beats: float, dense_beats: float,
        cycles: float, dense_cycles: float) -> str:
    return (f"| {name} | {sparsity * 100:.0f} % | {packer:.2f}x "
            f"| {dense_beats / beats:.2f}x | {dense_cycles / cycles:.2f}x "
            f"| {gap(packer, cycles, dense_cycles):+.1f} % |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", default=str(ROOT / "build" / "sw" / "strata"))
    ap.add_argument("--network", nargs="+",
                    default=["examples/cifar10_quick.yaml", "examples/vgg_stack224.yaml"])
    ap.add_argument("--sparsity", nargs="+", type=float, default=[0.5, 0.75, 0.9])
    ap.add_argument("--max-gap", type=float, default=None,
                    help="exit 1 if the packed convolutions together fall more than this many "
                         "percent short of the packer's figure")
    args = ap.parse_args()
    failures = []
    print("| layer | sparsity | packer (rows) | RTL beats | RTL cycles | RTL / packer |")
    print("|---|---:|---:|---:|---:|---:|")
    for network in args.network:
        path = network if pathlib.Path(network).is_absolute() else str(ROOT / network)
        for s in args.sparsity:
            r = bench(args.strata, path, s)
            # Layers together: the packer's figure weighted as the beats are (rows are
            # per output pixel): the dense program's beats over the beats the
            # packer's row ratio predicts for each layer.
            total = [0.0] * 4  # beats, dense beats, cycles, dense cycles
            predicted = 0.0
            for layer in r["layers"]:
                if not layer["packed"]:
                    continue
                packer = layer["dense_rows"] / layer["packed_rows"]
                figures = [layer["beats"], layer["dense_program_beats"], layer["cycles"],
                           layer["dense_build_cycles"]]
                total = [a + b for a, b in zip(total, figures)]
                predicted += layer["dense_program_beats"] / packer
                print(row(f"{r['network']} {layer['name']}", s, packer, *figures))
            if predicted == 0:
                failures.append(f"{r['network']} at {s}: no packed convolution")
                continue
            packer = total[1] / predicted
            print(row(f"**{r['network']} packed convolutions**", s, packer, *total))
            g = gap(packer, total[2], total[3])
            if args.max_gap is not None and g < -args.max_gap:
                failures.append(f"{r['network']} at {s}: the packed convolutions are {-g:.1f} % "
                                f"short of the packer's figure (allowed: {args.max_gap} %)")
    for f in failures:
        print(f"sparsity_rtl_table: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
