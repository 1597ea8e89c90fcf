#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of `strata import`'s graph transformations (scripts/strata_import.py), run by ctest
(strata_import_graph, label unit): standalone BatchNormalization, static shapes folded into
constants, channel shuffles, space-to-depth for kernels above --max-kernel.

Small PyTorch models, exported to ONNX by /usr/bin/python3 (PyTorch is a Debian package
there), each imported with the built `strata import`:
  - affine: a per-channel Mul and Add by constants (a BN written by hand), once before a Relu
    (a 1x1 depthwise layer with the Relu fused), once before an unpadded conv (folded);
  - dense: DenseNet's pattern, Concat -> BatchNormalization -> Relu -> Conv, a
    BatchNormalization straight into an unpadded Conv (folded into it), and the final
    BatchNormalization -> Relu -> global pool -> Linear. The standalone BNs with a Relu after
    them become 1x1 depthwise layers with the Relu fused; the one before the unpadded conv
    leaves no layer;
  - shuffle: ShuffleNet-v2's blocks (a stride-2 block with both branches, stride-1 blocks
    with chunk, concat and channel_shuffle, whose Reshape targets torch writes as Shape ->
    Gather -> Unsqueeze -> Concat arithmetic on a symbolic batch). No Shape, Transpose or
    permutation layer is left; the shuffles are folded into the convolutions that read them;
  - shuffle imported again with --shuffle-conv (each shuffle a 1x1 permutation convolution
    where it is): its golden output equals the folded import's bit for bit, so the folding is
    exact;
  - alexnet_stem (11 x 11 stride 4 pad 2) and resnet_stem (7 x 7 stride 2 pad 3, with
    --max-kernel 5): the stem becomes a space-to-depth layer and a smaller kernel, whose golden
    output equals that of the import that keeps the large kernel (--max-kernel 11) bit for bit.
For each, the golden model against onnxruntime's float output (max abs error within TOL of
the output range, top-1 agreement) and the ISA simulator against the golden model, element
by element. Refused, naming the node: a Reshape whose target stays unknown (computed from
tensor values), a Transpose that is not a channel shuffle (H and W swapped), a 5-D Transpose
whose Reshape back is no channel permutation, a BatchNormalization with one parameter too
many for its channels. A 9 x 9 kernel at stride 1 (no space-to-depth form) is kept, with a
note.

  strata_import_graph_test.py --strata build/sw/strata --source SRC [--keep DIR]

Needs the project venv (numpy, onnx, onnxruntime; else exit 77, skipped). Without PyTorch
in /usr/bin/python3 the PyTorch models are skipped (printed), the onnx.helper ones still run.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from venv_reexec import reexec_in_venv

SKIP = 77

ap = argparse.ArgumentParser()
ap.add_argument("--strata", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--keep", help="keep the models and imports in this directory")
ARGS = ap.parse_args()

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import onnxruntime as ort
except ImportError as e:
    reexec_in_venv(ARGS.source, "STRATA_IMPORT_GRAPH_TEST_REEXEC")
    print(f"SKIP: needs numpy, onnx and onnxruntime in {ARGS.source}/.venv ({e.name} is "
          "missing): run make setup")
    sys.exit(SKIP)

FAILS = []
TOL = 0.10          # max abs error / float output range
MIN_TOP1 = 0.85
IMAGES = 32


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


EXPORT = r'''
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(11)


def bn(c):
    b = nn.BatchNorm2d(c)
    with torch.no_grad():
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.3, 0.3)
        b.running_mean.uniform_(-0.3, 0.3)
        b.running_var.uniform_(0.5, 1.5)
    return b


class Dense(nn.Module):  # DenseNet: concat -> BN -> ReLU -> conv; BN -> unpadded conv
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.l1 = nn.Sequential(bn(16), nn.ReLU(), nn.Conv2d(16, 8, 3, padding=1))
        self.l2 = nn.Sequential(bn(24), nn.ReLU(), nn.Conv2d(24, 8, 3, padding=1))
        self.trans = nn.Sequential(bn(32), nn.Conv2d(32, 16, 1), nn.ReLU())
        self.norm5 = bn(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        a = self.stem(x)
        b = torch.cat([a, self.l1(a)], 1)
        c = torch.cat([b, self.l2(b)], 1)
        y = F.relu(self.norm5(self.trans(c)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


class Affine(nn.Module):  # x * w.view(1, C, 1, 1) + b.view(1, C, 1, 1): a BN written by hand
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.w1 = nn.Parameter(torch.rand(8) + 0.5)
        self.b1 = nn.Parameter(torch.rand(8) - 0.5)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.w2 = nn.Parameter(torch.rand(8) + 0.5)
        self.b2 = nn.Parameter(torch.rand(8) - 0.5)
        self.c3 = nn.Sequential(nn.Conv2d(8, 16, 1), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        a = F.relu(self.stem(x) * self.w1.view(1, 8, 1, 1) + self.b1.view(1, 8, 1, 1))
        a = self.c2(a) * self.w2.view(1, 8, 1, 1) + self.b2.view(1, 8, 1, 1)
        return self.fc(self.c3(a).mean([2, 3]))


def channel_shuffle(x, groups):  # torchvision's
    n, c, h, w = x.size()
    x = x.view(n, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(n, -1, h, w)


class Block(nn.Module):  # torchvision's ShuffleNet-v2 InvertedResidual, BN folded by export
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin), bn(cin),
                                         nn.Conv2d(cin, half, 1), bn(half), nn.ReLU())
        c2 = cin if stride > 1 else half
        self.branch2 = nn.Sequential(nn.Conv2d(c2, half, 1), bn(half), nn.ReLU(),
                                     nn.Conv2d(half, half, 3, stride, 1, groups=half), bn(half),
                                     nn.Conv2d(half, half, 1), bn(half), nn.ReLU())

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class Shuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), bn(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16, 32, 2), Block(32, 32, 1), Block(32, 32, 1),
                                    Block(32, 32, 1))
        self.conv5 = nn.Sequential(nn.Conv2d(32, 32, 1), bn(32), nn.ReLU())
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.conv5(self.blocks(self.stem(x))).mean([2, 3]))


class Large(nn.Module):  # AlexNet's stem (11x11 stride 4 pad 2) or ResNet's (7x7 stride 2 pad 3)
    def __init__(self, k, s, p):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, k, s, p), nn.ReLU(), nn.MaxPool2d(3, 2))
        self.conv = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.conv(self.stem(x)).mean([2, 3]))


class Bad(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 1)

    def forward(self, x):
        y = self.c1(x)
        if self.kind == "transpose_hw":
            y = y.transpose(2, 3)
        elif self.kind == "transpose_5d":
            n, c, h, w = y.size()
            y = y.view(n, 2, c // 2, h, w).transpose(3, 4).contiguous().view(n, c, h, w)
        return self.c2(y)


out = sys.argv[1]
models = {"dense": Dense(), "affine": Affine(), "shuffle": Shuffle(), "transpose_hw": Bad("transpose_hw"),
          "transpose_5d": Bad("transpose_5d"), "alexnet_stem": Large(11, 4, 2),
          "resnet_stem": Large(7, 2, 3)}
for name, m in models.items():
    m.eval()
    size = {"alexnet_stem": 39, "resnet_stem": 21}.get(name, 8)
    torch.onnx.export(m, torch.randn(1, 3, size, size), f"{out}/{name}.onnx", input_names=["x"],
                      output_names=["y"], opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
'''


def strata(*args):
    return subprocess.run([ARGS.strata, *args], capture_output=True, text=True)


def float_output(path, x):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return np.concatenate([sess.run(None, {"x": x[k:k + 1]})[0] for k in range(len(x))])


def import_model(work, name, path, calib, *extra):
    """`strata import` into work/name: the YAML's text, or None after a failed check."""
    out = os.path.join(work, name)
    r = strata("import", path, "--calibration", calib, "--out", out, "--name", name, *extra)
    check(r.returncode == 0, f"{name}: strata import exits 0 ({r.stderr.strip()})")
    if r.returncode != 0:
        return None
    print(r.stdout)
    with open(os.path.join(out, name + ".yaml")) as f:
        return f.read()


def golden_and_isa(work, name, path, x):
    """The golden model against onnxruntime's float output, the ISA simulator against the
    golden model; returns the golden output (int8) or None."""
    out = os.path.join(work, name)
    xq, g, i = (os.path.join(out, f) for f in ("calibration_input.npy", "golden.npy", "isa.npy"))
    r = strata("run", os.path.join(out, name + ".yaml"), "--input", xq, "--output", g)
    check(r.returncode == 0, f"{name}: strata run (golden) exits 0 ({r.stderr.strip()})")
    if r.returncode != 0:
        return None
    f = float_output(path, x).reshape(len(x), -1)
    s_out = np.max(np.abs(f)) / 127.0
    y = np.load(g).astype(np.float64).reshape(len(x), -1) * s_out
    err = np.abs(y - f).max()
    rng = np.max(np.abs(f))
    top1 = np.mean(np.argmax(y, 1) == np.argmax(f, 1))
    print(f"{name}: max abs error {err:.4f} ({100 * err / rng:.2f} % of the output range "
          f"{rng:.3f}), top-1 agreement {100 * top1:.1f} %")
    check(err <= TOL * rng, f"{name}: max abs error within {100 * TOL:.0f} % of the range")
    check(top1 >= MIN_TOP1, f"{name}: top-1 agrees on at least {100 * MIN_TOP1:.0f} % of images")
    r = strata("run", os.path.join(out, name + ".yaml"), "--input", xq, "--output", i,
               "--backend", "isa")
    check(r.returncode == 0 and np.array_equal(np.load(i), np.load(g)),
          f"{name}: the ISA simulator's outputs equal the golden model's ({r.stderr.strip()})")
    return np.load(g)


def expect_error(work, label, model_bytes, needle):
    """`strata import` of the model fails with one line holding `needle`, writing nothing."""
    path = os.path.join(work, label + ".onnx")
    with open(path, "wb") as f:
        f.write(model_bytes)
    calib = os.path.join(work, label + "_calib.npy")
    np.save(calib, np.random.default_rng(5).normal(0, 1, (4, 3, 8, 8)).astype(np.float32))
    out = os.path.join(work, label + "_out")
    r = strata("import", path, "--calibration", calib, "--out", out)
    err = r.stderr.strip()
    check(r.returncode == 1 and needle in err and len(err.splitlines()) == 1
          and not os.path.exists(os.path.join(out, label + ".yaml")),
          f"{label}: refused naming the node ({err})")


def torch_models(work):
    tdir = os.path.join(work, "torch")
    os.makedirs(tdir, exist_ok=True)
    r = subprocess.run(["/usr/bin/python3", "-c", EXPORT, tdir], capture_output=True, text=True)
    if r.returncode != 0 and "No module named 'torch'" in r.stderr:
        print("SKIP (printed, not failed): PyTorch is not installed for /usr/bin/python3; the "
              "PyTorch models are not tested")
        return
    check(r.returncode == 0, f"torch.onnx.export of the models ({r.stderr[-300:]})")
    if r.returncode != 0:
        return
    x = np.random.default_rng(34).normal(0, 1, (IMAGES, 3, 8, 8)).astype(np.float32)
    calib = os.path.join(work, "calib.npy")
    np.save(calib, x)

    path = os.path.join(tdir, "dense.onnx")
    yaml = import_model(work, "dense", path, calib)
    if yaml is not None:
        golden_and_isa(work, "dense", path, x)
        # l1.0 and l2.0 (BN, ReLU) and norm5 (BN, F.relu): 1x1 depthwise layers with the Relu
        # fused; trans.0 (BN straight into the unpadded 1x1 conv) folded into trans.1.
        for bn_name in ("l1_l1_0_BatchNormalization", "l2_l2_0_BatchNormalization",
                        "norm5_BatchNormalization"):
            check(f"{{name: {bn_name}, type: depthwise, kernel: 1, activation: relu" in yaml,
                  f"dense: {bn_name} is a 1x1 depthwise layer with the Relu fused")
        check("trans_trans_0" not in yaml and "type: relu" not in yaml,
              "dense: the BN before the unpadded conv folded into it, no Relu layer left")

    path = os.path.join(tdir, "affine.onnx")
    yaml = import_model(work, "affine", path, calib)
    if yaml is not None:
        golden_and_isa(work, "affine", path, x)
        check("{name: Mul, type: depthwise, kernel: 1, activation: relu" in yaml and
              "Mul_1" not in yaml and "Add" not in yaml,
              "affine: Mul + Add by per-channel constants then Relu is a 1x1 depthwise layer "
              "with the Relu fused; the one before the unpadded conv folded into it")

    path = os.path.join(tdir, "shuffle.onnx")
    m = onnx.load(path)
    ops = {n.op_type for n in m.graph.node}
    check({"Shape", "Gather", "Transpose"} <= ops,
          f"shuffle: the exported model computes its shuffles with Shape / Gather / Transpose "
          f"({sorted(ops)})")
    yaml = import_model(work, "shuffle", path, calib)
    folded = golden_and_isa(work, "shuffle", path, x) if yaml is not None else None
    if yaml is not None:
        check("_perm" not in yaml and "Transpose" not in yaml and "Reshape" not in yaml,
              "shuffle: every shuffle folded into the layers that read it (no permutation "
              "convolution, no Transpose or Reshape layer)")
    yaml = import_model(work, "shuffle_conv", path, calib, "--shuffle-conv")
    if yaml is not None:
        check(yaml.count("_perm, type: conv, out_channels: 32, kernel: 1") == 4,
              "shuffle_conv: each of the 4 shuffles a 1x1 permutation convolution")
        conv = golden_and_isa(work, "shuffle_conv", path, x)
        check(folded is not None and conv is not None and np.array_equal(folded, conv),
              "shuffle: the folded shuffles give the golden output of the permutation "
              "convolutions bit for bit")
        w = np.load(os.path.join(work, "shuffle_conv", "shuffle_conv",
                                 "blocks_blocks_0_Reshape_1_output_0_perm_weight.npy"))
        check(w.shape == (32, 32, 1, 1) and np.array_equal(np.sort(w.reshape(32, 32), 1)[:, -1],
                                                           np.ones(32)) and
              np.array_equal(w.reshape(32, 32).argmax(1),
                             np.arange(32).reshape(2, 16).T.reshape(-1)),
              "shuffle_conv: the permutation weights pick channel 16 * (c % 2) + c / 2")

    # Kernels above --max-kernel: space-to-depth. Without it (--max-kernel 11) the golden model
    # runs the large kernel as it is; the rewritten network's output is the same bit for bit,
    # and it runs on the ISA simulator (default configuration: max_kernel 7).
    for name, size, max_k, s, want in (("alexnet_stem", 39, 7, 4, "kernel: 3"),
                                        ("resnet_stem", 21, 5, 2, "kernel: 4")):
        path = os.path.join(tdir, name + ".onnx")
        xl = np.random.default_rng(8).normal(0, 1, (IMAGES, 3, size, size)).astype(np.float32)
        cl = os.path.join(work, name + "_calib.npy")
        np.save(cl, xl)
        yaml = import_model(work, name, path, cl, "--max-kernel", str(max_k))
        rewritten = golden_and_isa(work, name, path, xl) if yaml is not None else None
        if yaml is not None:
            check(f"stem_stem_0_Conv_s2d, type: conv, out_channels: {3 * s * s}, kernel: {s}, "
                  f"stride: {s}" in yaml and
                  f"name: stem_stem_0_Conv, type: conv, out_channels: 16, {want}" in yaml,
                  f"{name}: the stem is a space-to-depth layer and a {want} convolution")
        plain = os.path.join(work, name + "_plain")
        r = strata("import", path, "--calibration", cl, "--out", plain, "--name", name,
                   "--max-kernel", "11")
        g = os.path.join(plain, "golden.npy")
        r2 = strata("run", os.path.join(plain, name + ".yaml"), "--input",
                    os.path.join(plain, "calibration_input.npy"), "--output", g)
        check(r.returncode == 0 and r2.returncode == 0 and rewritten is not None and
              np.array_equal(np.load(g), rewritten),
              f"{name}: space-to-depth gives the golden output of the large kernel bit for bit "
              f"({r.stderr.strip()}{r2.stderr.strip()})")

    with open(os.path.join(tdir, "transpose_hw.onnx"), "rb") as f:
        expect_error(work, "transpose_hw", f.read(),
                     "node '/Transpose' (Transpose): rearranges '/c1/Conv_output_0' of shape "
                     "[8, 8, 8] per image into '/Transpose_output_0' of shape [8, 8, 8], which "
                     "is not a permutation of its channels, and node '/c2/Conv' (Conv) reads it")
    with open(os.path.join(tdir, "transpose_5d.onnx"), "rb") as f:
        expect_error(work, "transpose_5d", f.read(),
                     "node '/Reshape_1' (Reshape): rearranges '/c1/Conv_output_0' of shape "
                     "[8, 8, 8] per image into")


def init(name, arr, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(arr, dtype=dtype), name)


def helper_models(work):
    rng = np.random.default_rng(3)
    # A Reshape whose target comes from tensor values (a ReduceMax of the data).
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
         helper.make_node("ReduceMax", ["c"], ["m"], name="max", keepdims=0),
         helper.make_node("Mul", ["m", "zero"], ["z"], name="mul"),
         helper.make_node("Add", ["z", "shape_f"], ["sf"], name="add"),
         helper.make_node("Cast", ["sf"], ["shape"], name="cast", to=TensorProto.INT64),
         helper.make_node("Reshape", ["c", "shape"], ["y"], name="dyn_reshape")]
    inits = [init("w", rng.normal(0, 1, (4, 3, 1, 1))), init("zero", 0.0),
             init("shape_f", [1.0, -1.0])]
    m = make_model("dyn_reshape", n, inits, ["N", 3, 8, 8], "y", ["N", 256])
    expect_error(work, "dyn_reshape", m.SerializeToString(),
                 "node 'dyn_reshape' (Reshape): its target shape 'shape' stays unknown at "
                 "import time, computed by node 'cast' (Cast) from tensor values")
    # A 9 x 9 kernel at stride 1: no space-to-depth form; kept (the format allows it) with a note.
    n = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv9", kernel_shape=[9, 9],
                          pads=[4, 4, 4, 4])]
    m = make_model("conv9", n, [init("w", rng.normal(0, 0.1, (4, 3, 9, 9)))], ["N", 3, 8, 8],
                   "y", ["N", 4, 8, 8])
    path = os.path.join(work, "conv9.onnx")
    onnx.save(m, path)
    calib = os.path.join(work, "conv9_calib.npy")
    np.save(calib, rng.normal(0, 1, (4, 3, 8, 8)).astype(np.float32))
    r = strata("import", path, "--calibration", calib, "--out", os.path.join(work, "conv9"))
    check(r.returncode == 0 and "note: node 'conv9' (Conv): kernel 9x9 at stride 1 is above "
          "--max-kernel 7 and kept" in r.stdout and
          "type: conv, out_channels: 4, kernel: 9, pad: 4" in
          open(os.path.join(work, "conv9", "conv9.yaml")).read(),
          f"conv9: a 9 x 9 stride-1 kernel kept as it is, with a note ({r.stderr.strip()})")
    # A BatchNormalization with 5 parameters per kind for 4 channels.
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("BatchNormalization", ["r", "g", "b", "mu", "var"], ["y"],
                          name="bn_bad")]
    inits = [init("w", rng.normal(0, 1, (4, 3, 1, 1))), init("g", np.ones(5)),
             init("b", np.zeros(5)), init("mu", np.zeros(5)), init("var", np.ones(5))]
    m = make_model("bn_bad", n, inits, ["N", 3, 8, 8], "y", ["N", 4, 8, 8])
    expect_error(work, "bn_bad", m.SerializeToString(),
                 "node 'bn_bad' (BatchNormalization): its parameter 'g' holds 5 values for the "
                 "4 channels of 'r' (one per channel)")


def make_model(name, nodes, inits, in_shape, out_name, out_shape):
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape)],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def run_all(work):
    torch_models(work)
    helper_models(work)
    print(f"\n{len(FAILS)} failure(s)" + (": " + "; ".join(FAILS) if FAILS else ""))
    return 1 if FAILS else 0


def main():
    if ARGS.keep:
        os.makedirs(ARGS.keep, exist_ok=True)
        return run_all(ARGS.keep)
    with tempfile.TemporaryDirectory(prefix="strata_import_graph_test_") as work:
        return run_all(work)


if __name__ == "__main__":
    sys.exit(main())
