#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Networks on the Strata SoC in simulation, checked byte by byte (docs/board.md).

  .venv/bin/python scripts/soc_sim.py --strata build/sw/strata --out build/soc
        [--network digits ...] [--images N] [--no-faults] [--timeout S]

Builds (once, then only when soc/ or rtl/ change) the SoC's LiteX Verilator
simulation (soc/strata_soc.py --target sim) and the firmware (firmware/),
compiles each network into a bundle (`strata compile --bundle`), and puts the
firmware and a payload (firmware/strata_payload.h) in the simulated ROM:
each network's bundle and N images, then (unless --no-faults) an AXI read
error injected on the DRAM path while a network runs, and two bundles the
firmware must refuse (a malformed one, one compiled for other hardware).
The simulation boots the firmware, which runs everything through the driver
library and prints each image's output bytes; this script compares them
with the golden model (`strata run`) and checks that each fault was reported
with its error and was followed by a correct run. Exit status 0 when all of
that holds, 1 otherwise (the differences printed), 77 when LiteX is missing
(`make setup` with STRATA_SETUP_SOC=1 installs it).

Networks: digits (the trained model of examples/digits with its images),
or any examples/<name>.yaml with the parameters and images `strata gen
--seed 1` makes (cifar10_quick; imagenet_small, whose maps live in DRAM).
"""
import argparse
import hashlib
import os
import pathlib
import re
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SKIP = 77
FW_BYTES = 0x20000          # the firmware's share of the ROM; the payload follows it
ROM_BYTES = 0x10_0000       # soc/strata_soc.py SIM_ROM_SIZE

try:
    import numpy  # noqa: F401  (scripts/soc_payload.py)
except ImportError:
    print("SKIP: scripts/soc_sim.py needs numpy in the project venv: run make setup")
    sys.exit(SKIP)

sys.path.insert(0, str(ROOT / "scripts"))
from soc_payload import fix_crc, network, payload, run  # noqa: E402


def sources_digest():
    """What the simulation is built from: the SoC description and the RTL."""
    h = hashlib.sha256()
    files = sorted((ROOT / "soc").glob("*.py")) + sorted((ROOT / "rtl").rglob("*.sv*")) + \
        [ROOT / "rtl" / "manifest.txt", ROOT / "rtl" / "pkg" / "strata_pkg.vlt"]
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def build_soc(out):
    """out/sim/gateware/obj_dir/Vsim, rebuilt when its sources changed."""
    sim = out / "sim"
    stamp = sim / "sources.sha256"
    vsim = sim / "gateware" / "obj_dir" / "Vsim"
    digest = sources_digest()
    if vsim.exists() and stamp.exists() and stamp.read_text() == digest:
        return sim
    t = time.time()
    run([sys.executable, str(ROOT / "soc" / "strata_soc.py"), "--target", "sim",
         "--output-dir", str(sim)])
    run(["bash", "build_sim.sh"], cwd=sim / "gateware")
    stamp.write_text(digest)
    print(f"soc_sim: built the SoC simulation in {time.time() - t:.0f} s")
    return sim


def build_firmware(sim):
    fw = sim / "firmware"
    fw.mkdir(exist_ok=True)
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}")
    run(["make", "-C", str(fw), "-f", str(ROOT / "firmware" / "Makefile"),
         f"BUILD_DIR={sim}", "MEM=rom", f"PAYLOAD_ADDR={FW_BYTES:#x}"], env=env)
    data = (fw / "strata_fw.bin").read_bytes()
    if len(data) > FW_BYTES:
        raise SystemExit(f"soc_sim: the firmware ({len(data)} bytes) exceeds {FW_BYTES} bytes")
    return data


def write_rom(sim, firmware, data):
    image = firmware.ljust(FW_BYTES, b"\0") + data
    if len(image) > ROM_BYTES:
        raise SystemExit(f"soc_sim: firmware and payload ({len(image)} bytes) exceed the "
                         f"{ROM_BYTES}-byte ROM: fewer images")
    image += b"\0" * (-len(image) % 4)
    words = struct.unpack(f"<{len(image) // 4}I", image)
    (sim / "gateware" / "sim_rom.init").write_text("".join(f"{w:08x}\n" for w in words))


def simulate(sim, timeout):
    t = time.time()
    try:
        p = subprocess.run(["obj_dir/Vsim"], cwd=sim / "gateware", stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        sys.stdout.write((e.stdout or b"").decode(errors="replace"))
        raise SystemExit(f"soc_sim: the simulation did not end within {timeout} s")
    log = p.stdout.decode(errors="replace")
    (sim / "last_run.log").write_text(log)
    return log, time.time() - t


IMAGE_RE = re.compile(r"^image (\d+): class (\d+) checksum 0x([0-9a-f]{8}) cycles (\d+) "
                      r"run (\d+) output ([0-9a-f]*)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strata", required=True, help="the built strata command")
    ap.add_argument("--out", required=True, help="build directory of the SoC (e.g. build/soc)")
    ap.add_argument("--network", action="append", help="network to run (default: digits)")
    ap.add_argument("--images", type=int, default=4, help="images per network")
    ap.add_argument("--no-faults", action="store_true", help="no fault injection, no bad bundles")
    ap.add_argument("--timeout", type=float, default=900, help="seconds for the simulation")
    ap.add_argument("--only-with", metavar="VAR",
                    help="skip (exit 77) unless the environment variable VAR is 1")
    a = ap.parse_args()
    if a.only_with and os.environ.get(a.only_with) != "1":
        print(f"SKIP: {a.only_with} is not 1 (make regress sets it)")
        return SKIP
    try:
        import litex  # noqa: F401
    except ImportError:
        print("SKIP: LiteX is not in this python (make setup with STRATA_SETUP_SOC=1)")
        return SKIP
    out = pathlib.Path(a.out).resolve()
    strata = str(pathlib.Path(a.strata).resolve())
    work = out / "networks"
    work.mkdir(parents=True, exist_ok=True)
    sim = build_soc(out)
    firmware = build_firmware(sim)

    entries, expect = [], []  # expect: ("image", network, index, golden bytes) / ("line", text)
    names = a.network or ["digits"]
    for k, name in enumerate(names):
        bundle, x, golden = network(strata, name, a.images, work)
        entries += [(name, "bundle", bundle, 0),
                    (f"{name} images", "images", x.tobytes(), len(x))]
        expect += [("image", name, i, golden[i].tobytes()) for i in range(len(x))]
        if k == 0 and not a.no_faults:
            entries.append(("fault", "fault_read", b"", 0))
            expect += [("line", "fault: STRATA_E_HARDWARE: the accelerator stopped with error "
                                "AXI_READ at instruction "),
                       ("image", name, 0, golden[0].tobytes())]
            bad = bytearray(bundle)
            bad[132:136] = struct.pack("<I", 99)  # batch 99
            other, _, _ = network(strata, name, a.images, work, ROOT / "config" / "p4n4.yaml")
            entries += [("batch 99", "bad_bundle", fix_crc(bad), 0),
                        ("for p4n4", "bad_bundle", other, 0)]
            expect += [("line", "bad bundle: STRATA_E_BUNDLE: malformed bundle: batch outside "
                                "1..P"),
                       ("line", "bad bundle: STRATA_E_CONFIG: the bundle was compiled for P "
                                "(CFG_PES) = 4, the device has 8")]
    write_rom(sim, firmware, payload(entries))
    log, seconds = simulate(sim, a.timeout)

    lines = [l.rstrip("\r") for l in log.splitlines()]
    problems, cycles = [], {}
    at = 0
    for e in expect:
        while at < len(lines) and not (lines[at].startswith("image ") if e[0] == "image"
                                       else lines[at].startswith(e[1].split(":")[0] + ":")):
            at += 1
        if at == len(lines):
            problems.append(f"missing: {e[1] if e[0] == 'line' else f'{e[1]} image {e[2]}'}")
            break
        line = lines[at]
        at += 1
        if e[0] == "line":
            if not line.startswith(e[1]):
                problems.append(f"expected a line starting '{e[1]}', got '{line}'")
            continue
        m = IMAGE_RE.match(line)
        _, name, index, want = e
        if m is None or int(m.group(1)) != index:
            problems.append(f"{name} image {index}: unexpected line '{line}'")
            continue
        got = bytes.fromhex(m.group(6))
        if got != want:
            diff = [i for i in range(min(len(got), len(want))) if got[i] != want[i]]
            problems.append(f"{name} image {index}: {len(diff) + abs(len(got) - len(want))} of "
                            f"{len(want)} output bytes differ from the golden model (first at "
                            f"byte {diff[0] if diff else min(len(got), len(want))})")
        cycles.setdefault(name, []).append((int(m.group(4)), int(m.group(5))))
    exit_code = re.search(r"SIM_EXIT code=(\d+)", log)
    if exit_code is None or exit_code.group(1) != "0":
        ended = exit_code.group(0) if exit_code else "no exit code"
        problems.append(f"the firmware ended with {ended}")
    for name, c in cycles.items():
        acc = sum(x for x, _ in c) / len(c)
        tot = sum(y for _, y in c) / len(c)
        print(f"soc_sim: {name}: {len(c)} runs equal to the golden model, accelerator "
              f"{acc:.0f} cycles per image, {tot:.0f} cycles per strata_run on the CPU")
    print(f"soc_sim: simulation {seconds:.1f} s")
    if problems:
        print("\n".join(lines[-40:]))
        for p in problems:
            print(f"FAIL: {p}")
        return 1
    print("soc_sim: every output equal to the golden model; every fault reported, then a "
          "correct run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
