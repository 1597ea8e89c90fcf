#!/usr/bin/python3
"""Per-layer speed-up of the sparse build against the packer's figure for the
same weights (docs/sparsity.md, "Against the packer, per layer").

  /usr/bin/python3 scripts/sparsity_rtl_table.py [--strata build/sw/strata]
      [--network examples/cifar10_quick.yaml ...] [--sparsity 0.5 0.75 0.9]

For each network and sparsity it runs `strata bench NET --config
config/sparse.yaml --sparsity S --mode fine --json` (the packed program on the
sparse build, the dense program of the same weights on the dense build, both
checked against the golden model) and prints one Markdown row per packed
convolution: the packer's dense rows / packed rows for those weights, the
beats and cycles the RTL took on each build, the RTL's cycle speed-up and how
far it falls short of the packer's figure. The last row of each block is all
packed convolutions together. Exit status 1 when a bench fails or any output
element differs from the golden model.
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


def row(name: str, sparsity: float, dense_rows: int, packed_rows: int, beats: int,
        dense_beats: int, cycles: int, dense_cycles: int) -> str:
    packer = dense_rows / packed_rows
    rtl = dense_cycles / cycles
    return (f"| {name} | {sparsity * 100:.0f} % | {packer:.2f}x | {dense_beats / beats:.2f}x "
            f"| {rtl:.2f}x | {100 * (rtl / packer - 1):+.1f} % |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strata", default=str(ROOT / "build" / "sw" / "strata"))
    ap.add_argument("--network", nargs="+",
                    default=["examples/cifar10_quick.yaml", "examples/vgg_stack224.yaml"])
    ap.add_argument("--sparsity", nargs="+", type=float, default=[0.5, 0.75, 0.9])
    args = ap.parse_args()
    print("| layer | sparsity | packer (rows) | RTL beats | RTL cycles | RTL / packer |")
    print("|---|---:|---:|---:|---:|---:|")
    for network in args.network:
        path = network if pathlib.Path(network).is_absolute() else str(ROOT / network)
        for s in args.sparsity:
            r = bench(args.strata, path, s)
            total = [0] * 6
            for layer in r["layers"]:
                if not layer["packed"]:
                    continue
                figures = [layer["dense_rows"], layer["packed_rows"], layer["beats"],
                           layer["dense_program_beats"], layer["cycles"],
                           layer["dense_build_cycles"]]
                total = [a + b for a, b in zip(total, figures)]
                print(row(f"{r['network']} {layer['name']}", s, *figures))
            if total[1] > 0:
                print(row(f"**{r['network']} packed convolutions**", s, *total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
