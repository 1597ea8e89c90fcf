#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The trained small models (docs/models.md) through `strata import` and the golden model.

Run by ctest (small_models, label unit). For examples/resnet_digits,
examples/mobilenet_digits and examples/se_digits: imports model.onnx with calibration.npy,
checks that the imported network has the layer kinds the model is there for (MODELS: adds,
depthwise layers; a concat, table activations and a mul), runs the golden model
(`strata run`) on the 360 held-out test images and checks that its int8 accuracy is within
2 percentage points of the float accuracy recorded in float_accuracy.json (printing both);
also that onnxruntime's float accuracy on the same images is the recorded one, and that
every imported add has the form the PE array runs (Ma = wa * M, Mb = wb * M, wa, wb in
0..127).

  small_models_test.py --strata build/sw/strata --source SRC --work DIR [--rtl N]

With --rtl N (a build with the RTL) the first N test images (0: all) also run on the RTL,
each output equal to the golden model's.

The imported networks are written to DIR/<model>/ (the build directory under ctest).
Needs the project venv (.venv: numpy, onnx, onnxruntime; `make setup`); started by another
python it re-runs itself with the venv's, and without the venv's packages it exits 77 (skip).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

from venv_reexec import reexec_in_venv

SKIP = 77
# Each model with the layer kinds its import must produce ("table": a layer with
# `activation: {table: ...}`), so that the test fails if the importer stops making them.
MODELS = {
    "resnet_digits": ("conv", "add", "global_avgpool", "fc"),
    "mobilenet_digits": ("conv", "depthwise", "add", "global_avgpool", "fc"),
    "se_digits": ("conv", "concat", "table", "global_avgpool", "mul", "fc"),
}
MAX_DROP = 0.02          # int8 accuracy may be at most 2 percentage points from the float


ap = argparse.ArgumentParser()
ap.add_argument("--strata", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--work", required=True, help="directory for the imported networks")
ap.add_argument("--rtl", type=int, default=0, metavar="N",
                help="also run the first N test images on the RTL (strata run --backend rtl "
                     "--check): every output equal to the golden model's (0: all, -1: none)")
ARGS = ap.parse_args()

try:
    import numpy as np
    import onnx  # noqa: F401 (strata import needs it; skip rather than fail without it)
    import onnxruntime as ort
except ImportError as e:
    reexec_in_venv(ARGS.source, "STRATA_SMALL_MODELS_TEST_REEXEC")
    print(f"SKIP: the small-model tests need numpy, onnx and onnxruntime in {ARGS.source}/.venv "
          f"({e.name} is missing): run make setup")
    sys.exit(SKIP)

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def strata(*args):
    return subprocess.run([ARGS.strata, *args], capture_output=True, text=True)


def pe_array_form(ma, mb):
    """Ma = wa * M and Mb = wb * M for some 0 <= wa, wb <= 127 and M <= 65535: M = gcd gives
    the smallest weights, so the form exists exactly when it works with M = gcd(Ma, Mb)."""
    g = math.gcd(int(ma), int(mb))
    return g == 0 or (ma // g <= 127 and mb // g <= 127 and g <= 65535)


def layer_kinds(yaml_text):
    """Layer type -> count in an imported YAML (one flow mapping per layer); "table" counts
    the layers with a table activation."""
    kinds = {}
    for line in yaml_text.splitlines():
        m = re.match(r"\s*- \{name: [A-Za-z0-9_-]+, type: ([a-z_]+)\b", line)
        if m:
            kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
            if re.search(r"\bactivation: \{table: ", line):
                kinds["table"] = kinds.get("table", 0) + 1
    return kinds


def check_kinds(yaml_path, model):
    kinds = layer_kinds(open(yaml_path).read())
    for kind in MODELS[model]:
        check(kinds.get(kind, 0) > 0,
              f"{model}: the import has {kind} layers ({kinds.get(kind, 0)})")


def check_adds(yaml_path, weights_dir, model):
    adds = re.findall(r"name: ([A-Za-z0-9_-]+), type: add\b", open(yaml_path).read())
    for name in adds:
        ma = np.load(os.path.join(weights_dir, f"{name}_mult_a.npy"))
        mb = np.load(os.path.join(weights_dir, f"{name}_mult_b.npy"))
        check(all(pe_array_form(a, b) for a, b in zip(ma, mb)),
              f"{model}: add {name}: Ma {ma[0]}, Mb {mb[0]} are wa * M, wb * M (wa, wb <= 127)")


def run_model(model):
    src = os.path.join(ARGS.source, "examples", model)
    onnx_path = os.path.join(src, "model.onnx")
    calib_path = os.path.join(src, "calibration.npy")
    images = np.load(os.path.join(src, "test_images.npy"))      # int8 [N][1][16][16], 0..127
    labels = np.load(os.path.join(src, "test_labels.npy"))
    recorded = json.load(open(os.path.join(src, "float_accuracy.json")))["float_test"]
    out = os.path.join(ARGS.work, model)
    os.makedirs(out, exist_ok=True)

    start = time.time()
    # --no-check: the golden run below on the test images replaces the calibration-set report.
    r = strata("import", onnx_path, "--calibration", calib_path, "--out", out, "--name", model,
               "--no-check")
    check(r.returncode == 0, f"{model}: strata import exits 0 ({r.stderr.strip()})")
    if r.returncode != 0:
        return
    print(r.stdout.rstrip())
    yaml_path = os.path.join(out, model + ".yaml")
    check_kinds(yaml_path, model)
    check_adds(yaml_path, os.path.join(out, model), model)

    # The float model reads q / 127; the importer's input scale is max|calibration| / 127.
    x_float = images.astype(np.float32) / 127.0
    s_in = float(np.max(np.abs(np.load(calib_path)))) / 127.0
    xq = np.clip(np.round(x_float / s_in), -128, 127).astype(np.int8)
    xq_path = os.path.join(out, "test_input.npy")
    np.save(xq_path, xq)
    y_path = os.path.join(out, "test_output.npy")
    run = strata("run", yaml_path, "--input", xq_path, "--output", y_path)
    check(run.returncode == 0, f"{model}: strata run (golden) exits 0 ({run.stderr.strip()})")
    if run.returncode != 0:
        return
    logits = np.load(y_path).reshape(len(labels), -1)
    int8_acc = float(np.mean(np.argmax(logits, axis=1) == labels))

    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    f = sess.run(None, {sess.get_inputs()[0].name: x_float})[0]
    ort_acc = float(np.mean(np.argmax(f, axis=1) == labels))
    n = len(labels)
    print(f"{model}: {n} test images: float {100 * recorded:.2f} % (recorded; onnxruntime "
          f"{100 * ort_acc:.2f} %), golden int8 {100 * int8_acc:.2f} % "
          f"({time.time() - start:.1f} s)")
    check(abs(ort_acc - recorded) <= 1.0 / n + 1e-9,
          f"{model}: onnxruntime's float accuracy is the recorded one (within one image)")
    check(abs(int8_acc - recorded) <= MAX_DROP + 1e-9,
          f"{model}: golden int8 accuracy {100 * int8_acc:.2f} % within "
          f"{100 * MAX_DROP:.0f} points of the float {100 * recorded:.2f} %")
    if ARGS.rtl < 0:
        return
    count = n if ARGS.rtl == 0 else min(n, ARGS.rtl)
    rtl_in = os.path.join(out, "rtl_input.npy")
    np.save(rtl_in, xq[:count])
    rtl_out = os.path.join(out, "rtl_output.npy")
    start = time.time()
    run = strata("run", yaml_path, "--input", rtl_in, "--output", rtl_out, "--backend", "rtl",
                 "--check")
    check(run.returncode == 0, f"{model}: strata run --backend rtl --check on {count} images "
                               f"exits 0: every output equal to the golden model's "
                               f"({run.stderr.strip()})")
    if run.returncode != 0:
        return
    rtl = np.load(rtl_out).reshape(count, -1)
    check(np.array_equal(rtl, logits[:count]), f"{model}: RTL outputs equal the golden run's")
    rtl_acc = float(np.mean(np.argmax(rtl, axis=1) == labels[:count]))
    print(f"{model}: RTL on {count} test images: {100 * rtl_acc:.2f} % "
          f"({time.time() - start:.1f} s)")


def main():
    for model in MODELS:
        run_model(model)
    print(f"\n{len(FAILS)} failure(s)" + (": " + "; ".join(FAILS) if FAILS else ""))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
