#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of `strata import`'s table activations (scripts/strata_import.py), run by ctest
(strata_import_act, label unit).

For each function (LeakyReLU 0.1, Sigmoid, SiLU, Hardsigmoid, Hardswish, Tanh, GELU, Mish,
ELU) a small PyTorch model is exported to ONNX by /usr/bin/python3 (PyTorch is a Debian
package there; torch.onnx.export writes SiLU as Sigmoid * x, GELU as the Erf pattern, Mish
as x * Tanh(Softplus(x))): the function after a Conv, a depthwise Conv, an Add, on its own
after a MaxPool, and after a Linear. Each is imported with the built `strata import`; the
checks:
  - every activation became a table on the layer before it (conv, depthwise, add, fc) or a
    1x1 identity depthwise layer carrying it (after the pool), and no other layers;
  - the first conv's table equals T[i] = clamp(round(f((i - 128) * s_in) / s_out)) computed
    here from the function and the two scales (onnxruntime's float tensors, max|x| / 127);
  - the golden model (`strata run`) on the int8 calibration images against onnxruntime's
    float output: max abs error within TOL of the output range (each figure printed);
  - with --rtl, the compiled network on the Verilated accelerator equals the golden model.
Also: ONNX's Gelu operator (opset 20) built with onnx.helper, and an unsupported elementwise
use (a Mul of two different layers' outputs) refused with the node named.

Squeeze-and-excitation (a Mul of a map by a [N, C, 1, 1] vector computed in the graph):
a MobileNet-v3 block (Hardswish, SE with ReLU and Hardsigmoid) and an EfficientNet block
(SiLU, SE with SiLU and Sigmoid), each ending in a pooled Linear classifier, exported by
PyTorch; each SE Mul must become a mul layer reading [map, vector] with the Hardsigmoid /
Sigmoid a table on the conv before it, and the golden model's output is compared with
onnxruntime's (max error as % of the output range, and top-1 agreement). A Mul by a
one-channel vector (broadcast over C) is refused naming the node.

  strata_import_act_test.py --strata build/sw/strata --source SRC [--keep DIR] [--rtl]

Needs the project venv (numpy, onnx, onnxruntime; else exit 77, skipped). Without PyTorch
in /usr/bin/python3 the PyTorch models are skipped (printed), the onnx.helper ones still run.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

from venv_reexec import reexec_in_venv

SKIP = 77

ap = argparse.ArgumentParser()
ap.add_argument("--strata", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--keep", help="keep the models and imports in this directory")
ap.add_argument("--rtl", action="store_true", help="also run the imports on the RTL, checked")
ARGS = ap.parse_args()

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import onnxruntime as ort
except ImportError as e:
    reexec_in_venv(ARGS.source, "STRATA_IMPORT_ACT_TEST_REEXEC")
    print(f"SKIP: needs numpy, onnx and onnxruntime in {ARGS.source}/.venv ({e.name} is "
          "missing): run make setup")
    sys.exit(SKIP)

FAILS = []
TOL = 0.06   # max abs error / float output range (measured: at most 3.6 %)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


# The float functions, as the test computes them (independently of the importer).
def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


FUNCS = {
    "leaky": lambda x: np.where(x >= 0, x, float(np.float32(0.1)) * x),  # ONNX: float32 alpha
    "sigmoid": sigmoid,
    "silu": lambda x: x * sigmoid(x),
    "hardsigmoid": lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "hardswish": lambda x: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "tanh": np.tanh,
    "gelu": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "mish": lambda x: x * np.tanh(np.logaddexp(0.0, x)),
    "elu": lambda x: np.where(x >= 0, x, np.expm1(np.minimum(x, 0.0))),
}

TORCH_EXPORT = r'''
import sys
import torch
import torch.nn as nn
torch.manual_seed(5)
ACTS = {"leaky": lambda: nn.LeakyReLU(0.1), "sigmoid": nn.Sigmoid, "silu": nn.SiLU,
        "hardsigmoid": nn.Hardsigmoid, "hardswish": nn.Hardswish, "tanh": nn.Tanh,
        "gelu": nn.GELU, "mish": nn.Mish, "elu": nn.ELU}


class Net(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 10)
        self.a1, self.a2, self.a3, self.a4, self.a5 = (ACTS[act]() for _ in range(5))

    def forward(self, x):
        y = self.a1(self.c1(x))
        z = self.a2(self.dw(y))
        s = self.a3(z + y)
        p = self.a4(self.pool(s))
        return self.a5(self.fc(torch.flatten(p, 1)))


out = sys.argv[1]
for name in sys.argv[2:]:
    torch.onnx.export(Net(name).eval(), torch.randn(1, 3, 8, 8), f"{out}/{name}.onnx",
                      input_names=["x"], output_names=["y"], opset_version=14)
'''


SE_EXPORT = r'''
import sys
import torch
import torch.nn as nn
torch.manual_seed(11)


class SE(nn.Module):
    """torchvision's SqueezeExcitation: scale = act2(fc2(act1(fc1(avgpool(x))))); scale * x."""
    def __init__(self, c, r, act1, act2):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1, self.fc2 = nn.Conv2d(c, r, 1), nn.Conv2d(r, c, 1)
        self.act1, self.act2 = act1(), act2()

    def forward(self, x):
        return self.act2(self.fc2(self.act1(self.fc1(self.pool(x))))) * x


class Block(nn.Module):
    """conv -> act -> depthwise -> act -> SE -> 1x1 projection (+ the block input) -> pooled
    Linear classifier: MobileNet-v3 with (Hardswish, ReLU, Hardsigmoid), EfficientNet with
    (SiLU, SiLU, Sigmoid)."""
    def __init__(self, act, se1, se2):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.se = SE(16, 8, se1, se2)
        self.pw = nn.Conv2d(16, 16, 1)
        self.a1, self.a2 = act(), act()
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = self.a1(self.c1(x))
        z = self.pw(self.se(self.a2(self.dw(y)))) + y
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(z, 1), 1))


out = sys.argv[1]
for name, m in (("se_mobilenetv3", Block(nn.Hardswish, nn.ReLU, nn.Hardsigmoid)),
                ("se_efficientnet", Block(nn.SiLU, nn.SiLU, nn.Sigmoid))):
    torch.onnx.export(m.eval(), torch.randn(1, 3, 8, 8), f"{out}/{name}.onnx",
                      input_names=["x"], output_names=["y"], opset_version=14)
'''


def strata(*args):
    return subprocess.run([ARGS.strata, *args], capture_output=True, text=True)


def run_ort(path, x, extra=()):
    """onnxruntime's float outputs [y, *extra] for images x (one at a time)."""
    m = onnx.load(path)
    for t in extra:
        m.graph.output.append(helper.make_empty_tensor_value_info(t))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    outs = [sess.run(names, {"x": x[k:k + 1]}) for k in range(len(x))]
    return [np.concatenate([o[i] for o in outs]).astype(np.float64) for i in range(len(names))]


def layers_of(yaml):
    return re.findall(r"\{name: ([A-Za-z0-9_-]+), type: (\w+)([^\n]*)", open(yaml).read())


def import_model(work, name, path, x):
    """Imports `path`; returns (output dir, yaml path) or (None, None) after a failed check."""
    calib = os.path.join(work, name + "_calib.npy")
    np.save(calib, x)
    out = os.path.join(work, name)
    r = strata("import", path, "--calibration", calib, "--out", out)
    check(r.returncode == 0, f"{name}: strata import exits 0 ({r.stderr.strip()})")
    if r.returncode != 0:
        return None, None
    return out, os.path.join(out, name + ".yaml")


def golden_vs_float(name, out, yaml, path, x, top1=False):
    """The golden model's dequantised output against onnxruntime's float output."""
    y_path = os.path.join(out, "golden.npy")
    r = strata("run", yaml, "--input", os.path.join(out, "calibration_input.npy"), "--output",
               y_path)
    check(r.returncode == 0, f"{name}: strata run (golden) exits 0 ({r.stderr.strip()})")
    if r.returncode != 0:
        return
    f = run_ort(path, x)[0].reshape(len(x), -1)
    s_out = np.max(np.abs(f)) / 127.0
    y = np.load(y_path).astype(np.float64).reshape(len(x), -1) * s_out
    err = np.abs(y - f)
    rng = np.max(np.abs(f))
    rel = err.max() / rng
    print(f"{name}: max abs error {err.max():.4f} = {100 * rel:.2f} % of the output range "
          f"{rng:.3f} (mean {100 * err.mean() / rng:.2f} %)")
    check(rel <= TOL, f"{name}: golden model within {100 * TOL:.0f} % of the float range")
    if top1:
        agree = int(np.sum(np.argmax(y, axis=1) == np.argmax(f, axis=1)))
        print(f"{name}: top-1 agreement {agree}/{len(x)}")
        check(agree >= len(x) - max(1, len(x) // 16),
              f"{name}: top-1 agrees with onnxruntime on all but {max(1, len(x) // 16)} images")
    if ARGS.rtl:
        r = strata("run", yaml, "--input", os.path.join(out, "calibration_input.npy"),
                   "--output", os.path.join(out, "rtl.npy"), "--backend", "rtl", "--check")
        check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out, "rtl.npy")),
                                                    np.load(y_path)),
              f"{name}: the RTL's outputs equal the golden model's ({r.stderr.strip()})")


def expected_table(f, s_in, s_out):
    v = (np.arange(256) - 128.0) * s_in
    return np.clip(np.round(f(v) / s_out), -128, 127).astype(np.int8)


def check_first_table(name, out, yaml, path, x, pre, post):
    """conv1's table against the function with the scales of onnxruntime's tensors."""
    ls = layers_of(yaml)
    t = re.search(r"table: ([A-Za-z0-9_.-]+)", ls[0][2])
    check(t is not None, f"{name}: the first conv carries a table ({ls[0]})")
    if t is None:
        return
    have = np.load(os.path.join(out, name, t.group(1)))
    check(have.dtype == np.int8 and have.shape == (256,),
          f"{name}: table file int8 [256] ({have.dtype} {list(have.shape)})")
    _, a, b = run_ort(path, x, [pre, post])
    want = expected_table(FUNCS[name], np.max(np.abs(a)) / 127.0, np.max(np.abs(b)) / 127.0)
    diff = np.abs(have.astype(int) - want.astype(int))
    # The scales come from float32 maxima: a code on a rounding boundary may differ by one.
    check(diff.max() <= 1 and np.count_nonzero(diff) <= 3,
          f"{name}: conv1's table equals clamp(round(f((i - 128) s_in) / s_out)) "
          f"({np.count_nonzero(diff)} entries differ by one)")


def torch_models(work):
    names = list(FUNCS)
    r = subprocess.run(["/usr/bin/python3", "-c", TORCH_EXPORT, work, *names],
                       capture_output=True, text=True)
    if r.returncode != 0 and "No module named 'torch'" in r.stderr:
        print("SKIP (printed, not failed): PyTorch is not installed for /usr/bin/python3; the "
              "PyTorch models are not tested")
        return
    check(r.returncode == 0, f"torch.onnx.export of the activation models ({r.stderr[-300:]})")
    if r.returncode != 0:
        return
    rng = np.random.default_rng(9)
    x = rng.normal(0, 1, (32, 3, 8, 8)).astype(np.float32)
    for name in names:
        path = os.path.join(work, name + ".onnx")
        m = onnx.load(path)
        # The tensors before and after conv1's activation, as torch named them.
        conv1 = next(n for n in m.graph.node if n.op_type == "Conv")
        pre = conv1.output[0]
        post = next(n for n in m.graph.node if n.op_type == "Conv" and n is not conv1).input[0]
        out, yaml = import_model(work, name, path, x)
        if out is None:
            continue
        ls = layers_of(yaml)
        kinds = [(k, "table:" in rest) for _, k, rest in ls]
        check(kinds == [("conv", True), ("depthwise", True), ("add", True), ("maxpool", False),
                        ("depthwise", True), ("flatten", False), ("fc", True)],
              f"{name}: tables on conv, depthwise, add, an identity depthwise after the pool "
              f"and fc, no other layers ({[k for k, _ in kinds]})")
        check_first_table(name, out, yaml, path, x, pre, post)
        golden_vs_float(name, out, yaml, path, x)


def helper_models(work):
    """ONNX's own Gelu (opset 20) and HardSwish after a Conv; a refused Mul."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.normal(0, 0.4, (4, 2, 3, 3)).astype(np.float32), "w")
    w2 = numpy_helper.from_array(rng.normal(0, 0.4, (4, 4, 1, 1)).astype(np.float32), "w2")
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Gelu", ["c"], ["g"], name="gelu"),
         helper.make_node("Conv", ["g", "w2"], ["c2"], name="conv2", kernel_shape=[1, 1]),
         helper.make_node("HardSwish", ["c2"], ["y"], name="hswish")]
    g = helper.make_graph(n, "onnx_gelu",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
                          initializer=[w, w2])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    path = os.path.join(work, "onnx_gelu.onnx")
    onnx.save(m, path)
    x = rng.normal(0, 1, (16, 2, 6, 6)).astype(np.float32)
    out, yaml = import_model(work, "onnx_gelu", path, x)
    if out is not None:
        ls = layers_of(yaml)
        check([(k, "table:" in r) for _, k, r in ls] == [("conv", True), ("conv", True)],
              f"onnx_gelu: Gelu and HardSwish as tables on the two convs ({ls})")
        t = np.load(os.path.join(out, "onnx_gelu", "conv_table.npy"))
        _, a, b = run_ort(path, x, ["c", "g"])
        want = expected_table(FUNCS["gelu"], np.max(np.abs(a)) / 127, np.max(np.abs(b)) / 127)
        check(np.abs(t.astype(int) - want).max() <= 1, "onnx_gelu: the Gelu table")
        golden_vs_float("onnx_gelu", out, yaml, path, x)

    # A Mul of two layers' outputs is not an activation: refused, naming the node.
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["x", "w"], ["d"], name="convb", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Mul", ["c", "d"], ["y"], name="gate")]
    g = helper.make_graph(n, "mul2",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
                          initializer=[w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(work, "mul2.onnx")
    onnx.save(m, path)
    calib = os.path.join(work, "mul2_calib.npy")
    np.save(calib, x)
    r = strata("import", path, "--calibration", calib, "--out", os.path.join(work, "mul2"))
    check(r.returncode == 1 and "node 'gate' (Mul)" in r.stderr,
          f"mul2: a Mul of two layers is refused naming the node ({r.stderr.strip()})")


def se_models(work):
    """Squeeze-and-excitation blocks (MobileNet-v3, EfficientNet): the SE Mul as a mul layer."""
    r = subprocess.run(["/usr/bin/python3", "-c", SE_EXPORT, work], capture_output=True,
                       text=True)
    if r.returncode != 0 and "No module named 'torch'" in r.stderr:
        print("SKIP (printed, not failed): PyTorch is not installed for /usr/bin/python3; the "
              "SE models are not tested")
        return
    check(r.returncode == 0, f"torch.onnx.export of the SE models ({r.stderr[-300:]})")
    if r.returncode != 0:
        return
    rng = np.random.default_rng(17)
    x = rng.normal(0, 1, (64, 3, 8, 8)).astype(np.float32)
    for name in ("se_mobilenetv3", "se_efficientnet"):
        path = os.path.join(work, name + ".onnx")
        out, yaml = import_model(work, name, path, x)
        if out is None:
            continue
        ls = layers_of(yaml)
        kinds = [k for _, k, _ in ls]
        mul = [(n, rest) for n, k, rest in ls if k == "mul"]
        check(len(mul) == 1, f"{name}: one mul layer ({kinds})")
        if len(mul) != 1:
            continue
        names = [n for n, _, _ in ls]
        src = re.search(r"inputs: \[([A-Za-z0-9_-]+), ([A-Za-z0-9_-]+)\]", mul[0][1])
        vec = ls[names.index(src.group(2))] if src else None
        check(src is not None and vec[1] == "conv" and "table:" in vec[2] and
              ls[names.index(src.group(1))][1] == "depthwise",
              f"{name}: the mul reads [the depthwise map, the SE conv with the gate's table] "
              f"({mul[0]}, {vec})")
        golden_vs_float(name, out, yaml, path, x, top1=True)

    # A Mul by a one-channel vector broadcasts over C: not a channel-wise mul, refused.
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.normal(0, 0.4, (4, 2, 3, 3)).astype(np.float32), "w")
    w1 = numpy_helper.from_array(rng.normal(0, 0.4, (1, 4, 1, 1)).astype(np.float32), "w1")
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("GlobalAveragePool", ["c"], ["p"], name="gap"),
         helper.make_node("Conv", ["p", "w1"], ["v"], name="squeeze", kernel_shape=[1, 1]),
         helper.make_node("Mul", ["c", "v"], ["y"], name="scale1")]
    g = helper.make_graph(n, "mul_c1",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
                          initializer=[w, w1])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(work, "mul_c1.onnx")
    onnx.save(m, path)
    calib = os.path.join(work, "mul_c1_calib.npy")
    np.save(calib, rng.normal(0, 1, (8, 2, 6, 6)).astype(np.float32))
    r = strata("import", path, "--calibration", calib, "--out", os.path.join(work, "mul_c1"))
    check(r.returncode == 1 and "node 'scale1' (Mul)" in r.stderr and
          "[4, 6, 6] and [1, 1, 1]" in r.stderr,
          f"mul_c1: a Mul by a one-channel vector is refused naming the node ({r.stderr.strip()})")


def run_all(work):
    helper_models(work)
    torch_models(work)
    se_models(work)
    print(f"\n{len(FAILS)} failure(s)" + (": " + "; ".join(FAILS) if FAILS else ""))
    return 1 if FAILS else 0


def main():
    if not ARGS.keep:
        with tempfile.TemporaryDirectory(prefix="strata_import_act_test_") as work:
            return run_all(work)
    os.makedirs(ARGS.keep, exist_ok=True)
    return run_all(ARGS.keep)


if __name__ == "__main__":
    sys.exit(main())
