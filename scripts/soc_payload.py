#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The firmware's payload (firmware/strata_payload.h, docs/board.md): bundles,
images and faults for the Strata firmware to run.

As a command, for the board: the firmware and a payload of one network's
bundle and images, and the JSON that the serial loader (litex_term --images)
takes: the payload at 0x40800000, then the firmware at 0x40000000, where the
BIOS jumps when the transfer is done.

  .venv/bin/python scripts/soc_payload.py --strata build/sw/strata \\
      --soc build/soc/ulx3s --network digits --images 8

writes build/soc/ulx3s/boot/{strata_fw.bin, payload.bin, boot.json} and the
golden outputs (golden.npy) the console's lines can be compared with.
"""
import argparse
import os
import pathlib
import struct
import subprocess
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAGIC = 0x59415053  # "SPAY"
KIND = {"bundle": 1, "images": 2, "fault_read": 3, "bad_bundle": 4}
MAIN_RAM = 0x4000_0000
BOARD_PAYLOAD_ADDR = MAIN_RAM + 0x0080_0000  # firmware/main.c: below the outputs and the block


def run(cmd, **kw):
    """Runs a command; its output is shown only when it fails."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        raise SystemExit(f"{pathlib.Path(sys.argv[0]).name}: {' '.join(map(str, cmd))} exited "
                         f"with {p.returncode}")
    return p.stdout


def payload(entries):
    """The payload of `entries` (name, kind, bytes, arg): header, entry table,
    each entry's bytes 64-byte aligned."""
    head = 16 + 48 * len(entries)
    at = (head + 63) // 64 * 64
    table, blob = bytearray(), bytearray()
    for name, kind, data, arg in entries:
        table += name.encode()[:32].ljust(32, b"\0")
        table += struct.pack("<4I", KIND[kind], at, len(data), arg)
        pad = -len(data) % 64
        blob += data + b"\0" * pad
        at += len(data) + pad
    out = struct.pack("<4I", MAGIC, 1, len(entries), 0) + table
    return bytes(out + b"\0" * ((head + 63) // 64 * 64 - head) + blob)


def fix_crc(bundle):
    """A bundle's bytes with its CRC-32 recomputed (docs/bundle.md)."""
    b = bytearray(bundle)
    b[28:32] = b"\0\0\0\0"
    b[28:32] = struct.pack("<I", zlib.crc32(bytes(b)) & 0xFFFFFFFF)
    return bytes(b)


def network(strata, name, images, work, config=None):
    """Compiles network `name` into a bundle: (bundle bytes, images [N][C][H][W]
    int8, golden outputs [N][...]). digits: the trained model of
    examples/digits and its images; otherwise examples/<name>.yaml with the
    parameters and images of `strata gen --seed 1`."""
    import numpy as np

    work.mkdir(parents=True, exist_ok=True)
    if name == "digits":
        yaml = ROOT / "examples" / "digits" / "digits.yaml"
        weights = yaml.parent / "weights"
        x = np.ascontiguousarray(np.load(ROOT / "examples" / "digits" / "images.npy")[:images],
                                 dtype=np.int8)
    else:
        yaml = ROOT / "examples" / f"{name}.yaml"
        if not yaml.exists():
            raise SystemExit(f"no network '{name}' (digits or examples/<name>.yaml)")
        weights = work / name
        run([strata, "gen", str(yaml), "--seed", "1", "--images", str(images), "--out",
             str(weights)])
        x = np.load(weights / "images.npy")
    suffix = f"_{pathlib.Path(config).stem}" if config else ""
    bundle = work / f"{name}{suffix}.strb"
    run([strata, "compile", str(yaml), "--weights", str(weights), "--bundle", str(bundle)] +
        (["--config", str(config)] if config else []))
    np.save(work / f"{name}_images.npy", x)
    run([strata, "run", str(yaml), "--weights", str(weights), "--input",
         str(work / f"{name}_images.npy"), "--output", str(work / f"{name}_golden.npy")])
    golden = np.load(work / f"{name}_golden.npy").reshape(len(x), -1)
    return bundle.read_bytes(), x, golden


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strata", required=True, help="the built strata command")
    ap.add_argument("--soc", required=True, help="the board's LiteX build (make bitstream)")
    ap.add_argument("--network", default="digits", help="digits or an examples/<name>.yaml")
    ap.add_argument("--images", type=int, default=8, help="images to run")
    a = ap.parse_args()
    import numpy as np

    soc = pathlib.Path(a.soc).resolve()
    if not (soc / "software" / "include" / "generated" / "variables.mak").exists():
        raise SystemExit(f"{soc}: no LiteX build there (make bitstream BOARD=ulx3s makes it)")
    boot = soc / "boot"
    boot.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}")
    run(["make", "-C", str(boot), "-f", str(ROOT / "firmware" / "Makefile"), f"BUILD_DIR={soc}",
         "MEM=main_ram", f"PAYLOAD_ADDR={BOARD_PAYLOAD_ADDR:#x}"], env=env)
    bundle, x, golden = network(str(pathlib.Path(a.strata).resolve()), a.network, a.images,
                                boot / "networks")
    (boot / "payload.bin").write_bytes(payload([(a.network, "bundle", bundle, 0),
                                                (f"{a.network} images", "images", x.tobytes(),
                                                 len(x))]))
    np.save(boot / "golden.npy", golden)
    # litex_term boots the last image of the list.
    (boot / "boot.json").write_text(
        f'{{\n  "payload.bin": "{BOARD_PAYLOAD_ADDR:#010x}",\n'
        f'  "strata_fw.bin": "{MAIN_RAM:#010x}"\n}}\n')
    print(f"wrote {boot / 'boot.json'} (firmware, payload: {a.network}, {len(x)} images)")
    for i, g in enumerate(golden):
        print(f"golden image {i}: output {g.astype(np.int8).tobytes().hex()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
