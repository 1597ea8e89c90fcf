#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of `strata import` (scripts/strata_import.py), run by ctest (strata_import, label unit).

Builds small float ONNX models with onnx.helper (no PyTorch), imports them with
the built `strata import`, loads the result with `strata info`, runs the golden
model (`strata run`) on the quantised calibration images and compares its
dequantised output with onnxruntime's float output; quantises two of them to QDQ
models with onnxruntime's quantize_static and checks that the import keeps their
int8 weights and agrees with onnxruntime running them; then the error cases. Last, the
concat models (Concat, Split, Slice, Resize), PyTorch modules exported by /usr/bin/python3
(skipped, printed, without PyTorch there): against onnxruntime, on the ISA simulator against
the golden model, and their refusals.

  strata_import_test.py --strata build/sw/strata --source SRC [--keep DIR]

Needs the project venv (.venv: numpy, onnx, onnxruntime; `make setup`). Started by
another python (ctest uses /usr/bin/python3), it re-runs itself with the venv's;
without the venv or its packages it exits 77, which ctest reports as skipped.
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
ap.add_argument("--rtl", action="store_true",
                help="the build has the RTL model: imported chains also run on it, checked")
ARGS = ap.parse_args()

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
except ImportError as e:
    reexec_in_venv(ARGS.source, "STRATA_IMPORT_TEST_REEXEC")
    print(f"SKIP: strata import tests need numpy, onnx and onnxruntime in {ARGS.source}/.venv "
          f"({e.name} is missing): run make setup")
    sys.exit(SKIP)

RNG = np.random.default_rng(34)
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def conv_w(cout, cin, k):
    return RNG.normal(0, 1.0 / np.sqrt(cin * k * k), (cout, cin, k, k))


def make_model(name, nodes, inits, in_shape, out_name, out_shape=None, opset=13):
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape)],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def bn(prefix, c, x, y):
    inits = [init(f"{prefix}_g", RNG.uniform(0.5, 1.5, c)),
             init(f"{prefix}_b", RNG.normal(0, .2, c)),
             init(f"{prefix}_m", RNG.normal(0, .2, c)), init(f"{prefix}_v", RNG.uniform(.5, 2, c))]
    node = helper.make_node("BatchNormalization", [x] + [i.name for i in inits], [y],
                            name=f"{prefix}", epsilon=1e-5)
    return node, inits


def model_convnet():
    """Conv+BN+Relu (asymmetric pads), depthwise Conv + Clip(0, 6), Add shortcut + Relu,
    MaxPool, Conv, GlobalAveragePool, Flatten, Gemm."""
    n, i = [], []
    i += [init("c1_w", conv_w(8, 3, 3)), init("c1_b", RNG.normal(0, .1, 8))]
    n.append(helper.make_node("Conv", ["x", "c1_w", "c1_b"], ["c1"], name="conv1",
                              kernel_shape=[3, 3], pads=[0, 0, 1, 1], strides=[2, 2]))
    b, bi = bn("bn1", 8, "c1", "b1")
    n.append(b), i.extend(bi)
    n.append(helper.make_node("Relu", ["b1"], ["r1"], name="relu1"))
    i += [init("dw_w", conv_w(8, 1, 3)), init("dw_b", RNG.normal(0, .1, 8)),
          init("lo", 0.0), init("hi", 6.0)]
    n.append(helper.make_node("Conv", ["r1", "dw_w", "dw_b"], ["d1"], name="dw1", group=8,
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Clip", ["d1", "lo", "hi"], ["d1c"], name="relu6"))
    i += [init("pw_w", conv_w(8, 8, 1))]
    n.append(helper.make_node("Conv", ["d1c", "pw_w"], ["p1"], name="pw1", kernel_shape=[1, 1]))
    n.append(helper.make_node("Add", ["p1", "r1"], ["a1"], name="add1"))
    n.append(helper.make_node("Relu", ["a1"], ["a1r"], name="relu_add"))
    n.append(helper.make_node("MaxPool", ["a1r"], ["m1"], name="pool1", kernel_shape=[2, 2],
                              strides=[2, 2]))
    i += [init("c2_w", conv_w(16, 8, 3)), init("c2_b", RNG.normal(0, .1, 16))]
    n.append(helper.make_node("Conv", ["m1", "c2_w", "c2_b"], ["c2"], name="conv2",
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Relu", ["c2"], ["r2"], name="relu2"))
    n.append(helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"))
    n.append(helper.make_node("Flatten", ["g"], ["f"], name="flat", axis=1))
    i += [init("fc_w", RNG.normal(0, .5, (10, 16))), init("fc_b", RNG.normal(0, .1, 10))]
    n.append(helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1))
    return make_model("convnet", n, i, [1, 3, 16, 16], "y", [1, 10])


def model_mlp():
    """AveragePool (pads, count_include_pad 0), Reshape [N, -1], MatMul + Add, Relu, Gemm."""
    n, i = [], []
    n.append(helper.make_node("AveragePool", ["x"], ["p"], name="avg", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]))
    i += [init("shape", np.array([1, -1])), init("w1", RNG.normal(0, .3, (2 * 4 * 4, 12))),
          init("b1", RNG.normal(0, .1, 12)), init("w2", RNG.normal(0, .3, (12, 5)))]
    i[0] = numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "shape")
    n.append(helper.make_node("Reshape", ["p", "shape"], ["r"], name="reshape"))
    n.append(helper.make_node("MatMul", ["r", "w1"], ["h"], name="fc1"))
    n.append(helper.make_node("Add", ["h", "b1"], ["hb"], name="fc1_bias"))
    n.append(helper.make_node("Relu", ["hb"], ["hr"], name="fc1_relu"))
    n.append(helper.make_node("Gemm", ["hr", "w2"], ["y"], name="fc2"))
    return make_model("mlp", n, i, [1, 2, 8, 8], "y", [1, 5])


def model_relu6():
    """Conv (auto_pad SAME_UPPER, stride 2) + Clip(-1, 6) that clips, MaxPool (ceil mode) +
    Clip(0, 1) on its own (a clamp layer), AveragePool, Flatten, Gemm; a node without a name."""
    n, i = [], []
    i += [init("c_w", 4 * conv_w(6, 2, 3)), init("c_b", RNG.normal(0, .1, 6)),
          init("lo", 0.0), init("lo_m1", -1.0), init("hi", 6.0), init("hi1", 1.0)]
    n.append(helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], kernel_shape=[3, 3],
                              strides=[2, 2], auto_pad="SAME_UPPER"))
    n.append(helper.make_node("Clip", ["c", "lo_m1", "hi"], ["c6"], name="clip_m1_6"))
    n.append(helper.make_node("MaxPool", ["c6"], ["m"], name="pool", kernel_shape=[3, 3],
                              strides=[2, 2], ceil_mode=1))
    n.append(helper.make_node("Clip", ["m", "lo", "hi1"], ["mc"], name="clip01"))
    # ONNX's default stride is 1, not the kernel.
    n.append(helper.make_node("AveragePool", ["mc"], ["a"], name="avg", kernel_shape=[2, 2]))
    n.append(helper.make_node("Flatten", ["a"], ["f"], name="flat"))
    i += [init("fc_w", RNG.normal(0, .5, (6 * 4 * 4, 7)))]
    n.append(helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc"))
    return make_model("relu6", n, i, [1, 2, 19, 19], "y", [1, 7])


def model_act_chain():
    """Conv + Relu + Clip(0.5, 3) (one fused activation, as PyTorch's ReLU6 is Relu then Clip),
    a Conv whose weights come through an Identity of an initializer (as torch.onnx.export
    shares equal initializers), GlobalAveragePool, Flatten, Gemm."""
    n, i = [], []
    i += [init("c1_w", 4 * conv_w(8, 2, 3)), init("c1_b", RNG.normal(0, .1, 8)),
          init("lo", 0.5), init("hi", 3.0), init("c2_w_src", conv_w(8, 8, 3)),
          init("fc_w", RNG.normal(0, .5, (8, 6)))]
    n.append(helper.make_node("Identity", ["c2_w_src"], ["c2_w"], name="shared_w"))
    n.append(helper.make_node("Conv", ["x", "c1_w", "c1_b"], ["c1"], name="conv1",
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
    n.append(helper.make_node("Clip", ["r1", "lo", "hi"], ["k1"], name="clip1"))
    n.append(helper.make_node("Conv", ["k1", "c2_w"], ["c2"], name="conv2", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]))
    n.append(helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"))
    n.append(helper.make_node("Flatten", ["g"], ["f"], name="flat"))
    n.append(helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc"))
    return make_model("act_chain", n, i, [1, 2, 8, 8], "y", [1, 6])


def model_torchvision():
    """The patterns of torchvision's resnet18 and mobilenet_v2 as torch.onnx.export writes them
    (opset 13): a symbolic batch, 7x7 stride-2 stem + Relu, MaxPool 3x3/2 with pads 1, a basic
    block whose shortcut is a 1x1 stride-2 Conv (add + Relu), a depthwise Conv + Clip whose
    bounds are Constant nodes (ReLU6), an Add without activation, GlobalAveragePool, Flatten
    of the [C][1][1] map, Gemm with explicit alpha, beta and transB."""
    n, i = [], []

    def clip6(x, y, tag):
        for bound, v in (("min", 0.0), ("max", 6.0)):
            n.append(helper.make_node("Constant", [], [f"{tag}_{bound}"], name=f"{tag}_{bound}",
                                      value=numpy_helper.from_array(np.array(v, np.float32))))
        n.append(helper.make_node("Clip", [x, f"{tag}_min", f"{tag}_max"], [y], name=tag))

    i += [init("stem_w", conv_w(8, 3, 7)), init("stem_b", RNG.normal(0, .1, 8))]
    n.append(helper.make_node("Conv", ["x", "stem_w", "stem_b"], ["s"], name="stem",
                              kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3]))
    n.append(helper.make_node("Relu", ["s"], ["sr"], name="stem_relu"))
    n.append(helper.make_node("MaxPool", ["sr"], ["m"], name="maxpool", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=0))
    i += [init("b1_w", conv_w(16, 8, 3)), init("b1_b", RNG.normal(0, .1, 16)),
          init("b2_w", conv_w(16, 16, 3)), init("b2_b", RNG.normal(0, .1, 16)),
          init("ds_w", conv_w(16, 8, 1)), init("ds_b", RNG.normal(0, .1, 16))]
    n.append(helper.make_node("Conv", ["m", "b1_w", "b1_b"], ["b1"], name="block_conv1",
                              kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Relu", ["b1"], ["b1r"], name="block_relu1"))
    n.append(helper.make_node("Conv", ["b1r", "b2_w", "b2_b"], ["b2"], name="block_conv2",
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Conv", ["m", "ds_w", "ds_b"], ["ds"], name="downsample",
                              kernel_shape=[1, 1], strides=[2, 2]))
    n.append(helper.make_node("Add", ["b2", "ds"], ["a"], name="block_add"))
    n.append(helper.make_node("Relu", ["a"], ["ar"], name="block_relu2"))
    i += [init("dw_w", 2 * conv_w(16, 1, 3)), init("dw_b", RNG.normal(0, .1, 16)),
          init("pw_w", conv_w(16, 16, 1)), init("pw_b", RNG.normal(0, .1, 16))]
    n.append(helper.make_node("Conv", ["ar", "dw_w", "dw_b"], ["d"], name="dw", group=16,
                              kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    clip6("d", "dc", "dw_relu6")
    n.append(helper.make_node("Conv", ["dc", "pw_w", "pw_b"], ["p"], name="pw",
                              kernel_shape=[1, 1]))
    n.append(helper.make_node("Add", ["ar", "p"], ["a2"], name="linear_add"))
    n.append(helper.make_node("GlobalAveragePool", ["a2"], ["g"], name="gap"))
    n.append(helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1))
    i += [init("fc_w", RNG.normal(0, .5, (10, 16))), init("fc_b", RNG.normal(0, .1, 10))]
    n.append(helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", alpha=1.0,
                              beta=1.0, transB=1))
    return make_model("torchvision", n, i, ["N", 3, 32, 32], "y", ["N", 10])


def model_reduce_mean():
    """MNASNet's head as torch.onnx.export writes it: Conv + Relu, ReduceMean over axes [2, 3]
    with keepdims 0 (x.mean([2, 3]): the [N, C] a flatten of the global pool would be), Gemm,
    then a final Softmax over the classes (dropped: the network outputs the logits)."""
    n, i = [], []
    i += [init("c_w", conv_w(12, 3, 3)), init("c_b", RNG.normal(0, .1, 12)),
          init("fc_w", RNG.normal(0, .5, (10, 12))), init("fc_b", RNG.normal(0, .1, 10))]
    n.append(helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Relu", ["c"], ["r"], name="relu"))
    n.append(helper.make_node("ReduceMean", ["r"], ["m"], name="mean", axes=[2, 3], keepdims=0))
    n.append(helper.make_node("Gemm", ["m", "fc_w", "fc_b"], ["logits"], name="fc", transB=1))
    n.append(helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=1))
    return make_model("reduce_mean", n, i, ["N", 3, 12, 12], "y", ["N", 10])


def model_reduce_mean_keepdims():
    """Opset 18: ReduceMean with its axes as an input ([-1, -2]) and keepdims 1, Flatten, Gemm; a
    standalone Pad (pads and constant_value as inputs) folded into a Conv with pads of its own,
    and one folded into a depthwise Conv."""
    n, i = [], []
    i += [init("c_w", conv_w(8, 3, 3)), init("dw_w", 2 * conv_w(8, 1, 3)),
          init("fc_w", RNG.normal(0, .5, (8, 6))), init("zero", np.array(0.0))]
    i += [numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 0, 1, 2], np.int64), "pads1"),
          numpy_helper.from_array(np.array([0, 0, 2, 1, 0, 0, 0, 1], np.int64), "pads2"),
          numpy_helper.from_array(np.array([-1, -2], np.int64), "axes")]
    n.append(helper.make_node("Pad", ["x", "pads1", "zero"], ["xp"], name="pad1"))
    n.append(helper.make_node("Conv", ["xp", "c_w"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 0, 0], strides=[2, 2]))
    n.append(helper.make_node("Relu", ["c"], ["r"], name="relu"))
    n.append(helper.make_node("Pad", ["r", "pads2"], ["rp"], name="pad2", mode="constant"))
    n.append(helper.make_node("Conv", ["rp", "dw_w"], ["d"], name="dw", kernel_shape=[3, 3],
                              group=8))
    n.append(helper.make_node("ReduceMean", ["d", "axes"], ["m"], name="mean", keepdims=1))
    n.append(helper.make_node("Flatten", ["m"], ["f"], name="flat"))
    n.append(helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc"))
    return make_model("reduce_mean_keepdims", n, i, [1, 3, 15, 14], "y", [1, 6], opset=18)


def model_pad_maxpool():
    """A Pad of a Relu's output before a MaxPool (as SAME padding exports from some frameworks):
    zeros beside values >= 0 never win a max, so the Pad folds into the pool's padding; then a
    Conv, GlobalAveragePool, Flatten, Gemm."""
    n, i = [], []
    i += [init("c_w", conv_w(8, 3, 3)), init("c_b", RNG.normal(0, .1, 8)),
          init("c2_w", conv_w(8, 8, 3)), init("fc_w", RNG.normal(0, .5, (8, 5))),
          numpy_helper.from_array(np.array([0, 0, 0, 1, 0, 0, 1, 0], np.int64), "pads")]
    n.append(helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Relu", ["c"], ["r"], name="relu"))
    n.append(helper.make_node("Pad", ["r", "pads"], ["rp"], name="pad"))
    n.append(helper.make_node("MaxPool", ["rp"], ["p"], name="maxpool", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 0, 0, 1]))
    n.append(helper.make_node("Conv", ["p", "c2_w"], ["c2"], name="conv2", kernel_shape=[3, 3]))
    n.append(helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"))
    n.append(helper.make_node("Flatten", ["g"], ["f"], name="flat"))
    n.append(helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc"))
    return make_model("pad_maxpool", n, i, [1, 3, 14, 14], "y", [1, 5])


def model_edge_pad_maxpool():
    """Darknet's stride-1 max pool as PyTorch exports it (YOLOv3-tiny): an edge Pad of one row
    and column after a LeakyRelu (negative values), a 2 x 2 MaxPool at stride 1; the copies
    never win a window's max, so the Pad folds into the pool's padding. Then a Conv,
    GlobalAveragePool, Flatten, Gemm."""
    n, i = [], []
    i += [init("c_w", conv_w(8, 3, 3)), init("c_b", RNG.normal(0, .1, 8)),
          init("c2_w", conv_w(8, 8, 3)), init("fc_w", RNG.normal(0, .5, (8, 5))),
          numpy_helper.from_array(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64), "pads")]
    n.append(helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]))
    n.append(helper.make_node("LeakyRelu", ["c"], ["r"], name="leaky", alpha=0.1))
    n.append(helper.make_node("Pad", ["r", "pads"], ["rp"], name="pad", mode="edge"))
    n.append(helper.make_node("MaxPool", ["rp"], ["p"], name="maxpool", kernel_shape=[2, 2],
                              strides=[1, 1]))
    n.append(helper.make_node("Conv", ["p", "c2_w"], ["c2"], name="conv2", kernel_shape=[3, 3]))
    n.append(helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"))
    n.append(helper.make_node("Flatten", ["g"], ["f"], name="flat"))
    n.append(helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc"))
    return make_model("edge_pad_maxpool", n, i, [1, 3, 13, 13], "y", [1, 5])


def model_dilations():
    """Opset 19 (AveragePool's dilations): Conv, MaxPool and AveragePool with dilations [1, 1],
    as PyTorch exports them, then GlobalAveragePool, Flatten, Gemm."""
    n, i = [], []
    i += [init("c_w", conv_w(8, 2, 3)), init("c_b", RNG.normal(0, .1, 8)),
          init("fc_w", RNG.normal(0, .5, (8, 5)))]
    n.append(helper.make_node("Conv", ["x", "c_w", "c_b"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], dilations=[1, 1]))
    n.append(helper.make_node("MaxPool", ["c"], ["p"], name="maxpool", kernel_shape=[2, 2],
                              strides=[2, 2], dilations=[1, 1]))
    n.append(helper.make_node("AveragePool", ["p"], ["a"], name="avgpool", kernel_shape=[3, 3],
                              strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1]))
    n.append(helper.make_node("GlobalAveragePool", ["a"], ["g"], name="gap"))
    n.append(helper.make_node("Flatten", ["g"], ["f"], name="flat"))
    n.append(helper.make_node("Gemm", ["f", "fc_w"], ["y"], name="fc"))
    return make_model("dilations", n, i, [1, 2, 12, 12], "y", [1, 5], opset=19)


# Concat / Split / Slice / Resize models, exported by /usr/bin/python3 (PyTorch): a YOLO-style
# neck, a C2f block (ReLU for SiLU, whose table the compiler does not take yet; torch.chunk: Slice nodes whose bounds torch writes as Shape arithmetic;
# tensor.split at opset 11: a Split), a SqueezeNet fire module, the input concatenated with a
# conv output, and the refused forms.
CONCAT_EXPORT = r'''
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(7)


class Neck(nn.Module):  # YOLO-style: conv, maxpool branch, 1x1, upsample, cat, head
    def __init__(self):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.c2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.lat = nn.Conv2d(16, 8, 1)
        self.up = nn.Upsample(scale_factor=2)
        self.head = nn.Conv2d(16, 10, 3, padding=1)
        self.fc = nn.Linear(10, 10)

    def forward(self, x):
        a = self.c1(x)
        b = self.lat(self.c2(self.pool(a)))
        y = torch.cat([self.up(b), a], 1)
        y = F.interpolate(self.head(y), scale_factor=2, mode="nearest")
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


class C2f(nn.Module):  # split in halves, bottleneck + residual on one, cat of all pieces
    def __init__(self, chunk):
        super().__init__()
        self.chunk = chunk
        self.cv1 = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())
        self.m = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                               nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.cv2 = nn.Sequential(nn.Conv2d(24, 16, 1), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = self.cv1(x)
        a, b = y.chunk(2, 1) if self.chunk else y.split((8, 8), 1)
        c = b + self.m(b)
        z = self.cv2(torch.cat([a, b, c], 1))
        return self.fc(z.mean((2, 3)))


class Fire(nn.Module):  # SqueezeNet fire module then a ceil-mode maxpool of the cat
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU())
        self.sq = nn.Sequential(nn.Conv2d(16, 8, 1), nn.ReLU())
        self.e1 = nn.Sequential(nn.Conv2d(8, 12, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(8, 12, 3, padding=1), nn.ReLU())
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.cls = nn.Sequential(nn.Conv2d(24, 10, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                 nn.Flatten())

    def forward(self, x):
        s = self.sq(self.stem(x))
        return self.cls(self.pool(torch.cat([self.e1(s), self.e3(s)], 1)))


class InputCat(nn.Module):  # the network input concatenated with a conv output
    def __init__(self):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        with torch.no_grad():   # an output range above the input's
            self.c1[0].weight *= 3.0
        self.c2 = nn.Conv2d(11, 10, 3, stride=2, padding=1)
        self.fc = nn.Linear(10 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.c2(torch.cat([x, self.c1(x)], 1)), 1))


class Grouped(nn.Module):  # RegNet / ResNeXt-style grouped convolutions
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.g1 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1, groups=2), nn.ReLU())
        self.g2 = nn.Sequential(nn.Conv2d(32, 24, 3, stride=2, padding=1, groups=4), nn.ReLU())
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        return self.fc(self.g2(self.g1(self.stem(x))).mean((2, 3)))


class TwoHeads(nn.Module):  # YOLOv3-tiny-like: heads at 1/32 and 1/16, LeakyReLU 0.1
    def __init__(self):
        super().__init__()
        def cbl(i, o, k=3):
            return nn.Sequential(nn.Conv2d(i, o, k, padding=k // 2), nn.BatchNorm2d(o),
                                 nn.LeakyReLU(0.1))
        self.s1, self.s2, self.s3 = cbl(3, 8), cbl(8, 16), cbl(16, 16)
        self.s4, self.s5, self.s6 = cbl(16, 32), cbl(32, 32), cbl(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.neck = cbl(64, 32, 1)
        self.h32 = nn.Sequential(cbl(32, 64), nn.Conv2d(64, 18, 1))
        self.lat = cbl(32, 16, 1)
        self.up = nn.Upsample(scale_factor=2)
        self.h16 = nn.Sequential(cbl(48, 32), nn.Conv2d(32, 18, 1))

    def forward(self, x):
        x = self.pool(self.s3(self.pool(self.s2(self.pool(self.s1(x))))))
        route = self.s5(self.pool(self.s4(x)))           # 1/16
        n = self.neck(self.s6(self.pool(route)))          # 1/32
        return self.h32(n), self.h16(torch.cat([self.up(self.lat(n)), route], 1))


class Bad(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.c = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = self.c(x)
        k = self.kind
        if k == "cat_axis2":
            return torch.cat([y, y], 2)
        if k == "resize_1p5":
            return F.interpolate(y, scale_factor=1.5, mode="nearest")
        if k == "resize_linear":
            return F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        if k == "slice_h":
            return y[:, :, 1:5]
        if k == "slice_step2":
            return y[:, 0:8:2]


out = sys.argv[1]
models = {"neck": Neck(), "c2f_chunk": C2f(True), "c2f_split": C2f(False), "fire": Fire(),
          "input_cat": InputCat(), "grouped": Grouped()}
for k in ("cat_axis2", "resize_1p5", "resize_linear", "slice_h", "slice_step2"):
    models[k] = Bad(k)
for name, m in models.items():
    m.eval()
    for p in m.modules():
        if isinstance(p, nn.BatchNorm2d):
            p.running_mean.uniform_(-0.2, 0.2)
            p.running_var.uniform_(0.5, 1.5)
    torch.onnx.export(m, torch.randn(1, 3, 8, 8), f"{out}/{name}.onnx", input_names=["x"],
                      output_names=["y"], opset_version=13 if name != "c2f_split" else 11,
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
m = TwoHeads().eval()
for p in m.modules():
    if isinstance(p, nn.BatchNorm2d):
        p.running_mean.uniform_(-0.2, 0.2)
        p.running_var.uniform_(0.5, 1.5)
torch.onnx.export(m, torch.randn(1, 3, 64, 64), f"{out}/two_heads.onnx", input_names=["x"],
                  output_names=["h32", "h16"], opset_version=13,
                  dynamic_axes={"x": {0: "N"}, "h32": {0: "N"}, "h16": {0: "N"}})
'''
CONCAT_MODELS = ("neck", "c2f_chunk", "c2f_split", "fire", "input_cat", "grouped")
CONCAT_REFUSED = ("cat_axis2", "resize_1p5", "resize_linear", "slice_h", "slice_step2")


def strata(*args):
    return subprocess.run([ARGS.strata, *args], capture_output=True, text=True)


def float_output(model_path, x):
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    return np.concatenate([sess.run(None, {"x": x[k:k + 1]})[0] for k in range(len(x))])


def imported(work, name, path, calib):
    """`strata import` of `path` into work/name: (output directory, YAML path, the import's
    report), or Nones after a failed check. Every add it writes must have the PE array's
    form."""
    out = os.path.join(work, name)
    r = strata("import", path, "--calibration", calib, "--out", out)
    check(r.returncode == 0, f"{name}: strata import exits 0 ({r.stderr.strip()})")
    if r.returncode != 0:
        return None, None, None
    print(r.stdout)
    yaml = os.path.join(out, name + ".yaml")
    adds_in_pe_array_form(yaml, os.path.join(out, name), name)
    return out, yaml, r.stdout


def golden_run(out, yaml, name):
    """The golden model (`strata run`) on the import's int8 calibration images: the path of
    its output, or None after a failed check."""
    y_path = os.path.join(out, "golden.npy")
    run = strata("run", yaml, "--input", os.path.join(out, "calibration_input.npy"),
                 "--output", y_path)
    check(run.returncode == 0, f"{name}: strata run (golden) exits 0 ({run.stderr.strip()})")
    return y_path if run.returncode == 0 else None


def import_and_compare(work, model, images, tol, min_top1, ref=None):
    """Imports `model`; checks info, the golden run against onnxruntime; tol is the largest
    max abs error allowed as a fraction of the float output range. ref: the model whose float
    output the golden one stands for (default `model`; a model whose final Softmax the import
    drops is compared with the same model without it, the logits)."""
    name = model.graph.name
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    calib = os.path.join(work, name + "_calib.npy")
    x = RNG.normal(0, 1, (images, *[d.dim_value for d in model.graph.input[0].type.tensor_type
                                      .shape.dim][1:])).astype(np.float32)
    np.save(calib, x)
    out, yaml, report = imported(work, name, path, calib)
    if out is None:
        return
    info = strata("info", yaml)
    check(info.returncode == 0 and "not present" not in info.stdout,
          f"{name}: strata info loads the YAML and every parameter file ({info.stderr.strip()})")
    y_path = golden_run(out, yaml, name)
    if y_path is None:
        return
    # The output scale the importer used: it prints it; recompute it the same way.
    ref_path = path
    if ref is not None:
        ref_path = os.path.join(work, name + "_ref.onnx")
        onnx.save(ref, ref_path)
    f = float_output(ref_path, x).reshape(images, -1)
    s_out = np.max(np.abs(f)) / 127.0
    y = np.load(y_path).astype(np.float64).reshape(images, -1) * s_out
    err = np.abs(y - f)
    rng = np.max(np.abs(f))
    top1 = np.mean(np.argmax(y, 1) == np.argmax(f, 1))
    print(f"{name}: max abs error {err.max():.4f} ({100 * err.max() / rng:.2f} % of the output "
          f"range {rng:.3f}), mean {err.mean():.4f}, top-1 agreement {100 * top1:.1f} %")
    check(err.max() <= tol * rng, f"{name}: max abs error within {100 * tol:.0f} % of the range")
    check(top1 >= min_top1, f"{name}: top-1 agrees on at least {100 * min_top1:.0f} % of images")
    # The importer's own report names the same figures.
    check("top-1 agreement" in report and "max abs error" in report,
          f"{name}: import prints the float vs int8 agreement")
    return report


def without_last_node(model, out_name, out_shape):
    """`model` without its last node, `out_name` (of out_shape) its output."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.node[-1]
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape))
    return m


class Images(CalibrationDataReader):
    """quantize_static's calibration data: the images one at a time."""

    def __init__(self, x):
        self.it = iter([{"x": x[k:k + 1]} for k in range(len(x))])

    def get_next(self):
        return next(self.it, None)


def quantise_qdq(work, model, x, tag="qdq", activation_type=None, symmetric=True,
                 pre_process=True):
    """`model` as onnxruntime's static quantisation writes it in the QDQ format: int8 weights per
    output channel and int8 activations, symmetric (zero points 0) unless told otherwise. The
    float model is first pre-processed (quant_pre_process folds BatchNormalization into the
    convolution before it, the documented first step). Returns the QDQ model's path."""
    name = model.graph.name
    src = os.path.join(work, f"{name}_{tag}_float.onnx")
    onnx.save(model, src)
    if pre_process:
        pre = os.path.join(work, f"{name}_{tag}_pre.onnx")
        quant_pre_process(src, pre, skip_symbolic_shape=True)
        src = pre
    path = os.path.join(work, f"{name}_{tag}.onnx")
    quantize_static(src, path, Images(x), quant_format=QuantFormat.QDQ,
                    activation_type=activation_type or QuantType.QInt8,
                    weight_type=QuantType.QInt8, per_channel=True,
                    extra_options={"ActivationSymmetric": symmetric,
                                   "WeightSymmetric": True})
    return path


def qdq_weights(model_path):
    """{node name: (int8 weights, int32 bias or None)} of every Conv / Gemm of a QDQ model, the
    initializers its DequantizeLinear nodes read."""
    m = onnx.load(model_path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    dq = {n.output[0]: inits.get(n.input[0]) for n in m.graph.node
          if n.op_type == "DequantizeLinear"}
    return {n.name: (dq.get(n.input[1]), dq.get(n.input[2]) if len(n.input) > 2 else None)
            for n in m.graph.node if n.op_type in ("Conv", "Gemm")}


# Largest difference, in output LSBs, between the golden model's int8 output and onnxruntime
# evaluating the QDQ model. Both start from the same int8 weights, int32 biases and int8 input;
# they differ in rounding. onnxruntime computes each float operator on dequantised values and
# QuantizeLinear rounds half to even; Strata requantises the int32 accumulator with a 16-bit
# M / 2^S and rounds half up (docs/numerics.md): a convolution's output differs by at most one
# LSB, on a tie or an M / 2^S rounding. An add in the PE-array form (weights of at most 127,
# M <= 516) approximates its scale ratios to about 1/127 and differs by one LSB on about one
# element in eight; Strata's global pool keeps its input's scale where the QDQ model
# re-quantises the mean at a finer one; and the Gemm sums 16 inputs, each of which may be one
# LSB off. Measured: 4 output LSBs on both models (3 % of the output range); allowed: 5.
QDQ_MAX_LSB = 5


def qdq_import_and_compare(work, model, images, min_top1, edit=None):
    """Quantises `model` to QDQ on `images` calibration images (then `edit(path)` rewrites the
    QDQ model, if given), imports it and checks that
    (a) the imported int8 weights are the QDQ model's initializers, and the int32 biases where
    the input scale is the one the QDQ model used, (b) the golden model agrees with
    onnxruntime running the QDQ model on the same images: top-1 on at least min_top1 and every
    output within QDQ_MAX_LSB output LSBs."""
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    x = RNG.normal(0, 1, (images, *shape)).astype(np.float32)
    path = quantise_qdq(work, model, x)
    if edit is not None:
        edit(path)
    name = os.path.splitext(os.path.basename(path))[0]
    calib = os.path.join(work, name + "_calib.npy")
    np.save(calib, x)
    out, yaml, report = imported(work, name, path, calib)
    if out is None:
        return
    wdir = os.path.join(out, name)
    layers = re.findall(r"name: ([A-Za-z0-9_-]+), type: (conv|depthwise|fc)\b", open(yaml).read())
    # keyed by the layer names the import gives the nodes
    ref = {re.sub(r"[^A-Za-z0-9_-]", "_", k).strip("_"): v for k, v in qdq_weights(path).items()}
    same_w = [l for l, _ in layers if l in ref and ref[l][0] is not None and np.array_equal(
        np.load(os.path.join(wdir, f"{l}_weight.npy")), ref[l][0])]
    check(len(same_w) == len(layers) == len(ref),
          f"{name}: the int8 weights of all {len(ref)} Conv / Gemm nodes are the QDQ "
          f"initializers ({len(same_w)} of {len(layers)} layers equal)")
    # Every bias but the Gemm's after the global pool (whose QDQ input scale Strata does not
    # have, as the pool keeps its input's scale) is the QDQ model's int32 as it is.
    same_b = [l for l, _ in layers if ref.get(l, (0, None))[1] is not None and np.array_equal(
        np.load(os.path.join(wdir, f"{l}_bias.npy")), ref[l][1])]
    with_b = [l for l in ref if ref[l][1] is not None and l != "fc"]
    check(set(with_b) <= set(same_b), f"{name}: the int32 biases of {with_b} are the QDQ "
          f"initializers (equal: {same_b})")
    y_path = golden_run(out, yaml, name)
    if y_path is None:
        return
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    last = next(n for n in m.graph.node if n.output[0] == m.graph.output[0].name)
    s_out = float(inits[last.input[1]])
    y = np.load(y_path).astype(np.float64).reshape(images, -1)
    lsb = top1 = None
    for optimised in (False, True):
        # The reference is onnxruntime evaluating the QDQ graph operator by operator, as ONNX
        # defines it (graph optimisations off). With them on (the default), onnxruntime fuses
        # the pairs into QLinearConv / QGemm kernels whose u8s8 path on x86 CPUs without VNNI
        # (AVX2's vpmaddubsw) can saturate 16-bit pair sums with 8-bit weights (onnxruntime's
        # quantisation docs: reduce_range); that figure depends on the machine and is printed
        # for information only.
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        if not optimised:
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        f = np.concatenate([sess.run(None, {"x": x[k:k + 1]})[0] for k in range(len(x))])
        f = np.round(f.reshape(images, -1) / s_out)   # the int8 codes of the QDQ output
        err = np.abs(y - f)
        agree = np.mean(np.argmax(y, 1) == np.argmax(f, 1))
        how = "optimised int8 kernels, information only" if optimised else "QDQ graph op by op"
        print(f"{name}: golden vs onnxruntime ({how}) on {images} images: "
              f"max abs error {err.max():.0f} output LSBs "
              f"({100 * err.max() / max(1, np.abs(f).max()):.2f} % of the output range), "
              f"mean {err.mean():.3f} LSBs, outputs equal {100 * np.mean(err == 0):.1f} %, "
              f"top-1 agreement {100 * agree:.1f} %")
        if not optimised:
            lsb, top1 = err, agree
    check(lsb.max() <= QDQ_MAX_LSB, f"{name}: max abs error within {QDQ_MAX_LSB} output LSBs")
    check(top1 >= min_top1, f"{name}: top-1 agrees on at least {100 * min_top1:.0f} % of images")
    check("top-1 agreement" in report and "onnxruntime (QDQ model) vs int8" in report,
          f"{name}: import prints the onnxruntime vs int8 agreement")


def expect_qdq_error(work, label, model, needle, **quant):
    """A QDQ model quantisation cannot map: one line naming `needle` (a node name and why)."""
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    x = RNG.normal(0, 1, (8, *shape)).astype(np.float32)
    path = quantise_qdq(work, model, x, tag=label, **quant)
    with open(path, "rb") as f:
        data = f.read()
    m = onnx.load_from_string(data)
    expect_error(work, label, data, x.shape, needle(m) if callable(needle) else needle)


def first_nonzero_zero_point(m):
    """The first Q / DQ node (graph order) whose zero point is not 0, and its label."""
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    n = next(n for n in m.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")
             and np.any(inits[n.input[2]] != 0))
    return f"node '{n.name}' ({n.op_type}): zero point"


def pe_array_form(ma, mb):
    """Ma = wa * M and Mb = wb * M for some 0 <= wa, wb <= 127 and M <= 65535 (an add as a
    two-tap weighted sum on the PE array). M = gcd(Ma, Mb) gives the smallest weights, so the
    form exists exactly when it works with that M."""
    g = math.gcd(int(ma), int(mb))
    return g == 0 or (ma // g <= 127 and mb // g <= 127 and g <= 65535)


def adds_in_pe_array_form(yaml, weights_dir, name):
    """Every imported add's Ma[c], Mb[c] share one factor M with weights of at most 127."""
    adds = re.findall(r"name: ([A-Za-z0-9_-]+), type: add\b", open(yaml).read())
    if name == "convnet":
        check(adds == ["add1"], f"convnet: the Add is imported as an add layer ({adds})")
    for add in adds:
        ma = np.load(os.path.join(weights_dir, f"{add}_mult_a.npy"))
        mb = np.load(os.path.join(weights_dir, f"{add}_mult_b.npy"))
        check(all(pe_array_form(a, b) for a, b in zip(ma, mb)),
              f"{name}: add {add}: Ma {ma[0]}, Mb {mb[0]} are wa * M, wb * M with "
              "0 <= wa, wb <= 127")


def rtl_matches_golden(work, name):
    """The imported network, compiled and run on the Verilated accelerator for every
    calibration image, equals the golden model element by element (--check)."""
    out = os.path.join(work, name)
    r = strata("run", os.path.join(out, name + ".yaml"), "--input",
               os.path.join(out, "calibration_input.npy"), "--output",
               os.path.join(out, "rtl.npy"), "--backend", "rtl", "--check")
    check(r.returncode == 0, f"{name}: strata run --backend rtl --check exits 0 "
          f"({r.stderr.strip()})")
    if r.returncode == 0:
        same = np.array_equal(np.load(os.path.join(out, "rtl.npy")),
                              np.load(os.path.join(out, "golden.npy")))
        check(same, f"{name}: the RTL's outputs equal the golden model's")


def read_if(path):
    """The file's text, or "" when the import that writes it failed (already reported)."""
    return open(path).read() if os.path.exists(path) else ""


def snapshot(path):
    """What is at `path`: None, a file's bytes, or a directory's {relative path: bytes or None
    for a directory}, to check that a failed import left --out as it was."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return f.read()
    if not os.path.isdir(path):
        return None
    snap = {}
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            p = os.path.join(root, n)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    snap[os.path.relpath(p, path)] = f.read()
            else:
                snap[os.path.relpath(p, path)] = None
    return snap


def one_line_error(r, needle):
    err = r.stderr.strip()
    return (r.returncode == 1 and err.startswith("strata: error:") and len(err.splitlines()) == 1
            and "Traceback" not in err and needle in err), err


def expect_error(work, label, model_bytes, calib_shape, needle, model_shape_dims=None,
                 calib_data=None, out=None, extra=()):
    """`strata import` fails with one line naming `needle`, exit 1, and leaves --out (default
    work/label, absent before) as it was. calib_data: the calibration array (default: normal
    images of calib_shape); extra: more options (--no-check)."""
    path = os.path.join(work, label + ".onnx")
    with open(path, "wb") as f:
        f.write(model_bytes)
    calib = os.path.join(work, label + "_calib.npy")
    np.save(calib, RNG.normal(0, 1, calib_shape).astype(np.float32) if calib_data is None
            else calib_data)
    out = out or os.path.join(work, label)
    before = snapshot(out)
    r = strata("import", path, "--calibration", calib, "--out", out, *extra)
    ok, err = one_line_error(r, needle)
    same = snapshot(out) == before
    check(ok and same, f"error {label}: exit {r.returncode}, one line naming '{needle}', "
          f"--out {'unchanged' if same else 'CHANGED'}: {err}")


OUT4 = ["N", "C", "H", "W"]   # a 4-D graph output of any shape


def conv_model(label, w, b=None, in_shape=(1, 3, 8, 8), **conv_attrs):
    """One Conv 'conv0' of weights w (bias b) on x: the model's bytes."""
    inits = [init("w", w)] + ([init("b", b)] if b is not None else [])
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if b is not None else []), ["y"],
                            name="conv0", **conv_attrs)
    return make_model(label, [node], inits, list(in_shape), "y", OUT4).SerializeToString()


def expect_non_finite_errors(work):
    """NaN / Inf parameters and calibration images: one line naming the initializer and the
    node (not a ValueError / OverflowError from deep inside the quantisation)."""
    w = conv_w(4, 3, 3)
    w[1, 2, 0, 1] = np.nan
    expect_error(work, "nan_weight", conv_model("nan_weight", w, kernel_shape=[3, 3]),
                 (4, 3, 8, 8), "initializer 'w' of node 'conv0' (Conv) holds NaN values")
    w[1, 2, 0, 1] = np.inf
    expect_error(work, "inf_weight", conv_model("inf_weight", w, kernel_shape=[3, 3]),
                 (4, 3, 8, 8), "initializer 'w' of node 'conv0' (Conv) holds infinite values")
    b = RNG.normal(0, .1, 4)
    b[3] = -np.inf
    expect_error(work, "inf_bias", conv_model("inf_bias", conv_w(4, 3, 3), b,
                                              kernel_shape=[3, 3]),
                 (4, 3, 8, 8), "initializer 'b' of node 'conv0' (Conv) holds infinite values")
    n, i = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", kernel_shape=[3, 3])], \
        [init("w", conv_w(4, 3, 3))]
    bnode, bi = bn("bn0", 4, "c", "y")
    bi[3] = init("bn0_v", [1.0, np.nan, 1.0, 1.0])
    m = make_model("nan_bn", n + [bnode], i + bi, [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "nan_bn", m.SerializeToString(), (4, 3, 8, 8),
                 "initializer 'bn0_v' of node 'bn0' (BatchNormalization) holds NaN values")
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", kernel_shape=[3, 3]),
         helper.make_node("Constant", [], ["hi"], name="hi_const",
                          value=numpy_helper.from_array(np.array(np.nan, np.float32))),
         helper.make_node("Clip", ["c", "", "hi"], ["y"], name="clip0")]
    m = make_model("nan_clip", n, [init("w", conv_w(4, 3, 3))], [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "nan_clip", m.SerializeToString(), (4, 3, 8, 8),
                 "constant 'hi' of node 'clip0' (Clip) holds NaN values")
    # A Clip's -inf minimum means no bound: imported, not refused.
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", kernel_shape=[3, 3]),
         helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip0")]
    m = make_model("clip_no_min", n, [init("w", conv_w(4, 3, 3)), init("lo", -np.inf),
                                      init("hi", 0.5)], [1, 3, 8, 8], "y", OUT4)
    path = os.path.join(work, "clip_no_min.onnx")
    onnx.save(m, path)
    calib = os.path.join(work, "clip_no_min_calib.npy")
    np.save(calib, RNG.normal(0, 1, (4, 3, 8, 8)).astype(np.float32))
    r = strata("import", path, "--calibration", calib, "--out", os.path.join(work, "clip_no_min"),
               "--no-check")
    check(r.returncode == 0, f"clip_no_min: a Clip with min -inf imports ({r.stderr.strip()})")
    good = conv_model("calib", conv_w(4, 3, 3), kernel_shape=[3, 3])
    for label, bad in (("nan", np.nan), ("inf", np.inf)):
        x = RNG.normal(0, 1, (4, 3, 8, 8)).astype(np.float32)
        x[2, 1, 3, 3] = bad
        what = "NaN" if label == "nan" else "infinite"
        expect_error(work, f"{label}_calibration", good, None,
                     f"{label}_calibration_calib.npy: the calibration array holds {what} values "
                     "(first in image 2)", calib_data=x)
    expect_error(work, "no_images", good, None,
                 "no_images_calib.npy: the calibration array holds no images",
                 calib_data=np.zeros((0, 3, 8, 8), np.float32))


def expect_new_operator_errors(work):
    """ReduceMean over other axes, a Pad that is not a zero pad of H and W read by one Conv
    (reflect, a value, the channels, cropping, before a MaxPool or an AveragePool, pads that
    reach the conv's kernel), a Softmax that is not the final one over the channels, and
    dilations other than 1: each one line naming the node."""
    w = init("w", conv_w(4, 3, 3))
    conv = helper.make_node("Conv", ["xp", "w"], ["y"], name="conv0", kernel_shape=[3, 3])

    def pads(v):
        return numpy_helper.from_array(np.array(v, np.int64), "pads")

    for label, axes, keep in (("mean_c", [1], 1), ("mean_chw", [1, 2, 3], 1),
                              ("mean_h", [2], 1)):
        m = make_model(label, [helper.make_node("ReduceMean", ["x"], ["y"], name="rmean",
                                                axes=axes, keepdims=keep)], [], [1, 3, 8, 8],
                       "y", OUT4)
        expect_error(work, label, m.SerializeToString(), (4, 3, 8, 8),
                     f"node 'rmean' (ReduceMean): a mean over axes {axes} of a tensor of shape "
                     "[3, 8, 8] per image is not supported")
    hw = [0, 0, 1, 1, 0, 0, 1, 1]
    cases = [
        ("pad_reflect", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0",
                                          mode="reflect"), conv], [w, pads(hw)],
         "node 'pad0' (Pad): mode 'reflect' is not supported"),
        ("pad_edge", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0", mode="edge"),
                      conv], [w, pads(hw)],
         "node 'pad0' (Pad): an edge Pad is folded only into the one MaxPool that reads it; its "
         "output is read by node 'conv0' (Conv)"),
        ("pad_value", [helper.make_node("Pad", ["x", "pads", "v"], ["xp"], name="pad0"), conv],
         [w, pads(hw), init("v", 1.0)], "node 'pad0' (Pad): pad value 1.0 is not supported"),
        ("pad_channels", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0"),
                          helper.make_node("Conv", ["xp", "w5"], ["y"], name="conv0",
                                           kernel_shape=[3, 3])],
         [init("w5", conv_w(4, 5, 3)), pads([0, 1, 1, 1, 0, 1, 1, 1])],
         "node 'pad0' (Pad): pads [0, 1, 1, 1, 0, 1, 1, 1] pad the batch or the channels"),
        ("pad_negative", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0"), conv],
         [w, pads([0, 0, -1, 0, 0, 0, 0, 0])], "node 'pad0' (Pad): negative pads"),
        ("pad_maxpool", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0"),
                         helper.make_node("MaxPool", ["xp"], ["y"], name="pool0",
                                          kernel_shape=[3, 3])], [pads(hw)],
         "node 'pad0' (Pad): a Pad before node 'pool0' (MaxPool) cannot be folded exactly"),
        ("pad_avgpool", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0"),
                         helper.make_node("AveragePool", ["xp"], ["y"], name="pool0",
                                          kernel_shape=[3, 3])], [pads(hw)],
         "node 'pad0' (Pad): a Pad before node 'pool0' (AveragePool) cannot be folded exactly"),
        ("pad_reaches_kernel", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0"),
                                helper.make_node("Conv", ["xp", "w"], ["y"], name="conv0",
                                                 kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
         [w, pads([0, 0, 1, 0, 0, 0, 0, 2])],
         "node 'pad0' (Pad): its pads [1, 0, 0, 2] and the pads [1, 1, 1, 1] of node 'conv0' "
         "(Conv) add up to [2, 1, 1, 3]"),
        ("pad_output", [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad0")], [pads(hw)],
         "node 'pad0' (Pad): a standalone Pad is folded only into the one Conv that reads it; "
         "its output is read by the graph output"),
        ("pad_two_readers", [helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad0"),
                             helper.make_node("Conv", ["xp", "w"], ["c"], name="conv0",
                                              kernel_shape=[3, 3]),
                             helper.make_node("Conv", ["xp", "w"], ["d"], name="conv1",
                                              kernel_shape=[3, 3]),
                             helper.make_node("Add", ["c", "d"], ["y"], name="add0")],
         [w, pads(hw)],
         "node 'pad0' (Pad): a standalone Pad is folded only into the one Conv that reads it; "
         "its output is read by node 'conv0' (Conv), node 'conv1' (Conv)"),
        ("softmax_spatial", [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0",
                                              kernel_shape=[3, 3]),
                             helper.make_node("Softmax", ["c"], ["y"], name="sm", axis=1)], [w],
         "node 'sm' (Softmax): a Softmax over axis 1 of a tensor of shape [1, 4, 6, 6]"),
        ("softmax_last_axis", [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0",
                                                kernel_shape=[3, 3]),
                               helper.make_node("GlobalAveragePool", ["c"], ["g"], name="gap"),
                               helper.make_node("Softmax", ["g"], ["y"], name="sm")], [w],
         "node 'sm' (Softmax): a Softmax over axis -1 of a tensor of shape [1, 4, 1, 1]"),
        ("dilated_conv", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv0",
                                           kernel_shape=[3, 3], dilations=[2, 2])], [w],
         "node 'conv0' (Conv): dilations [2, 2] are not supported"),
        ("dilated_maxpool", [helper.make_node("MaxPool", ["x"], ["y"], name="pool0",
                                              kernel_shape=[2, 2], dilations=[1, 2])], [],
         "node 'pool0' (MaxPool): dilations [1, 2] are not supported"),
    ]
    for label, nodes, inits, needle in cases:
        m = make_model(label, nodes, inits, [1, 3, 8, 8], "y", OUT4)
        expect_error(work, label, m.SerializeToString(), (4, 3, 8, 8), needle)
    # A Pad of non-negative values before a ceil-mode MaxPool whose last window would start in
    # the Pad's zeros after the input: not the same output size.
    n = [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
         helper.make_node("Pad", ["r", "pads"], ["rp"], name="pad0"),
         helper.make_node("MaxPool", ["rp"], ["y"], name="pool0", kernel_shape=[3, 3],
                          strides=[2, 2], ceil_mode=1)]
    m = make_model("pad_maxpool_ceil", n, [pads([0, 0, 0, 0, 0, 0, 2, 0])], [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "pad_maxpool_ceil", m.SerializeToString(), (4, 3, 8, 8),
                 "node 'pad0' (Pad): folded into node 'pool0' (MaxPool) (ceil mode) it gives "
                 "another output size than [5, 4]")
    # A Softmax whose output another node reads as well as the graph output is not final.
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", kernel_shape=[3, 3]),
         helper.make_node("GlobalAveragePool", ["c"], ["g"], name="gap"),
         helper.make_node("Softmax", ["g"], ["s"], name="sm", axis=1),
         helper.make_node("Relu", ["s"], ["y"], name="relu_after")]
    m = make_model("softmax_mid", n, [w], [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "softmax_mid", m.SerializeToString(), (4, 3, 8, 8),
                 "node 'sm' (Softmax): unsupported operator Softmax")
    m = make_model("dilated_avgpool", [helper.make_node("AveragePool", ["x"], ["y"], name="pool0",
                                                        kernel_shape=[2, 2], dilations=[2, 2])],
                   [], [1, 3, 8, 8], "y", OUT4, opset=19)
    expect_error(work, "dilated_avgpool", m.SerializeToString(), (4, 3, 8, 8),
                 "node 'pool0' (AveragePool): dilations [2, 2] are not supported")


def expect_out_errors(work):
    """--out that is a file, under a file, or not creatable: one line naming it, and the file
    left as it was."""
    good = conv_model("out", conv_w(4, 3, 3), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    a_file = os.path.join(work, "out_is_file")
    with open(a_file, "w") as f:
        f.write("not a directory\n")
    expect_error(work, "out_file", good, (4, 3, 8, 8),
                 f"--out '{a_file}': is a file, not a directory", out=a_file)
    below = os.path.join(a_file, "sub")
    expect_error(work, "out_below_file", good, (4, 3, 8, 8),
                 f"--out '{below}': '{a_file}' is a file, not a directory", out=below)
    if os.path.isdir("/proc"):
        expect_error(work, "out_proc", good, (4, 3, 8, 8), "--out '/proc/strata_import_test/x'",
                     out="/proc/strata_import_test/x")


def expect_format_limit_errors(work):
    """Models onnxruntime runs but the network format refuses: with --no-check too, the import
    refuses them naming the node (and writes nothing) instead of writing a network that
    `strata info` rejects."""
    mm = make_model("matmul_4d", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm4d")],
                    [init("w", RNG.normal(0, .3, (8, 5)))], [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "matmul_4d", mm.SerializeToString(), (4, 3, 8, 8),
                 "node 'mm4d' (MatMul): reads 'x' of shape [3, 8, 8] per image",
                 extra=("--no-check",))
    big = conv_model("kernel13", conv_w(4, 3, 13), in_shape=(1, 3, 16, 16), kernel_shape=[13, 13])
    expect_error(work, "kernel13", big, (4, 3, 16, 16),
                 "node 'conv0' (Conv): kernel 13x13 is outside the network format's limit 1..11",
                 extra=("--no-check",))
    pad = conv_model("pad_1x1", conv_w(4, 3, 1), kernel_shape=[1, 1], pads=[1, 1, 1, 1])
    expect_error(work, "pad_1x1", pad, (4, 3, 8, 8),
                 "node 'conv0' (Conv): pads [1, 1, 1, 1] ([top, left, bottom, right]) must "
                 "each be smaller than the kernel 1", extra=("--no-check",))
    stride = conv_model("stride9", conv_w(4, 3, 3), in_shape=(1, 3, 20, 20), kernel_shape=[3, 3],
                        strides=[9, 9])
    expect_error(work, "stride9", stride, (4, 3, 20, 20),
                 "node 'conv0' (Conv): stride 9 is outside the network format's limit 1..8",
                 extra=("--no-check",))
    # A node whose output never reaches the graph output would be a layer nothing reads.
    n = [helper.make_node("Relu", ["x"], ["dead"], name="dead_relu"),
         helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", kernel_shape=[1, 1])]
    m = make_model("dead_branch", n, [init("w", conv_w(4, 3, 1))], [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "dead_branch", m.SerializeToString(), (4, 3, 8, 8),
                 "node 'dead_relu' (Relu): its output never reaches a graph output",
                 extra=("--no-check",))


def expect_all_or_nothing(work):
    """A failing agreement run (a stand-in `strata` whose golden run fails, passed to the
    script directly) is an error that leaves --out as it was: a fresh --out is not created,
    an earlier import in it keeps every file; the message names the final paths, not the
    staging directory. A successful import leaves no staging directory behind."""
    script = os.path.join(ARGS.source, "scripts", "strata_import.py")
    path = os.path.join(work, "agree.onnx")
    with open(path, "wb") as f:
        f.write(conv_model("agree", conv_w(4, 3, 3), kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    calib = os.path.join(work, "agree_calib.npy")
    np.save(calib, RNG.normal(0, 1, (4, 3, 8, 8)).astype(np.float32))
    fake = os.path.join(work, "failing_strata.sh")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\necho "strata: error: $2:3: layer \'conv0\': simulated" >&2\nexit 1\n')
    os.chmod(fake, 0o755)

    def run(out, strata_bin):
        return subprocess.run([sys.executable, script, path, "--calibration", calib, "--out", out,
                               "--strata", strata_bin], capture_output=True, text=True)

    out = os.path.join(work, "agree")
    r = run(out, ARGS.strata)
    check(r.returncode == 0, f"agree: first import exits 0 ({r.stderr.strip()})")
    hidden = [e for e in os.listdir(out) if e.startswith(".")] if os.path.isdir(out) else []
    check(r.returncode == 0 and not hidden and os.path.isfile(os.path.join(
        out, "calibration_output.npy")), f"agree: no staging directory left ({hidden}), "
        "calibration_output.npy written")
    before = snapshot(out)
    np.save(calib, RNG.normal(0, 1, (4, 3, 8, 8)).astype(np.float32))  # new scales, new files
    r = run(out, fake)
    ok, err = one_line_error(r, "the golden model could not run the imported network: "
                                f"{os.path.join(out, 'agree.yaml')}:3")
    check(ok and ".import-" not in err and snapshot(out) == before,
          f"agree: a failing golden run is one error naming the final YAML, and the earlier "
          f"import is kept as it was: {err}")
    fresh = os.path.join(work, "agree_fresh", "sub")
    r = run(fresh, fake)
    check(r.returncode == 1 and not os.path.exists(os.path.dirname(fresh)),
          f"agree: a failing golden run leaves no --out behind ({r.stderr.strip()})")


def concat_models(work):
    """The PyTorch concat models: imported, golden model against onnxruntime, the layers they
    become; the refused ones name the node; a concat of maps of different H (onnx.helper),
    and a QDQ concat whose inputs quantize_static gave different scales, refused. Their
    calibration images come from a generator of their own (the same whether or not the
    tests before ran)."""
    global RNG
    RNG = np.random.default_rng(35)
    tdir = os.path.join(work, "torch_concat")
    os.makedirs(tdir, exist_ok=True)
    r = subprocess.run(["/usr/bin/python3", "-c", CONCAT_EXPORT, tdir], capture_output=True,
                       text=True)
    if r.returncode != 0 and "No module named 'torch'" in r.stderr:
        print("SKIP (printed, not failed): PyTorch is not installed for /usr/bin/python3; the "
              "concat models are not tested")
        torch_ok = False
    else:
        check(r.returncode == 0, f"torch.onnx.export of the concat models ({r.stderr[-300:]})")
        torch_ok = r.returncode == 0
    if torch_ok:
        for name in CONCAT_MODELS:
            m = onnx.load(os.path.join(tdir, name + ".onnx"))
            m.graph.name = name
            import_and_compare(work, m, 64, 0.10, 0.85)
        y = {n: read_if(os.path.join(work, n, n + ".yaml")) for n in CONCAT_MODELS}
        check("groups: 2" in y["grouped"] and "groups: 4" in y["grouped"],
              "grouped: the convolutions keep their channel groups (groups: 2, groups: 4)")
        check(y["neck"].count("type: upsample, scale: 2}") == 2
              and re.search(r"type: concat, inputs: \[up_Resize, c1_c1_0_Conv\]", y["neck"]),
              "neck: nn.Upsample and F.interpolate are upsample layers, torch.cat a concat")
        for n in ("c2f_chunk", "c2f_split"):
            check(re.search(r"type: slice, begin: 0, end: 8}", y[n]) and
                  re.search(r"type: slice, begin: 8, end: 16, inputs: cv1_cv1_0_Conv}", y[n]) and
                  re.search(r"type: concat, inputs: \[\w+, \w+, Add\w*\]", y[n]),
                  f"{n}: the halves are slice layers [0, 8) and [8, 16), the pieces a concat")
        check(re.search(r"type: concat, inputs: \[e1_e1_0_Conv, e3_e3_0_Conv\]\}\n.*type: "
                        r"maxpool, kernel: 3, stride: 2, ceil_mode: true\}", y["fire"]),
              "fire: the expand convs concatenated, the ceil-mode max pool reading the concat")
        # The input's scale is the concat group's: max|x| / 127 of the input and the conv output.
        x = np.load(os.path.join(work, "input_cat_calib.npy")).astype(np.float64)
        conv = run_float_tensor(os.path.join(work, "input_cat.onnx"), x, "/c1/c1.1/Relu_output_0")
        want = max(np.max(np.abs(x)), np.max(np.abs(conv))) / 127.0
        got = re.search(r"scales: \{input: ([0-9.e-]+)", y["input_cat"])
        check("type: concat, inputs: [input, c1_c1_0_Conv]}" in y["input_cat"] and got and
              math.isclose(float(got.group(1)), want, rel_tol=1e-6),
              f"input_cat: the input concatenated as it is, its scale the group's {want:.6g} "
              f"({got.group(1) if got else None})")
        for name in CONCAT_MODELS:   # the compiled graphs (concat, slice, upsample)
            isa_matches_golden(work, name)
        if ARGS.rtl:
            for name in CONCAT_MODELS:
                rtl_matches_golden(work, name)
        two_heads(work, tdir)
        needles = {"cat_axis2": "node '/Concat' (Concat): a Concat along axis 2",
                   "resize_1p5": "node '/Resize' (Resize): scales [1.0, 1.0, 1.5, 1.5]",
                   "resize_linear": "node '/Resize' (Resize): mode 'linear' is not supported",
                   "slice_h": "node '/Slice' (Slice): a Slice of H",
                   "slice_step2": "node '/Slice' (Slice): a Slice of the channels with step 2"}
        for name in CONCAT_REFUSED:
            with open(os.path.join(tdir, name + ".onnx"), "rb") as f:
                expect_error(work, name, f.read(), (4, 3, 8, 8), needles[name])
        fire = onnx.load(os.path.join(tdir, "fire.onnx"))
        fire.graph.name = "fire"
        expect_qdq_error(work, "qdq_concat", fire, "node '/Concat' (Concat): its inputs and "
                         "output must share one int8 scale (a concat stacks int8 codes), but "
                         "the model quantises")
        # The same QDQ model with the concat's QuantizeLinear scales made one: imported, and
        # agreeing with onnxruntime running it.
        qdq_import_and_compare(work, fire, 64, 0.95, edit=share_concat_scales)
    # Concat inputs of different heights (onnx.helper: PyTorch would not export it).
    n = [helper.make_node("Conv", ["x", "w"], ["a"], name="conv", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("MaxPool", ["a"], ["p"], name="pool", kernel_shape=[2, 1],
                          strides=[2, 1]),
         helper.make_node("Concat", ["a", "p"], ["y"], name="cat_hw", axis=1)]
    m = make_model("cat_hw", n, [init("w", conv_w(4, 3, 3))], [1, 3, 8, 8], "y", OUT4)
    expect_error(work, "cat_hw", m.SerializeToString(), (4, 3, 8, 8),
                 "node 'cat_hw' (Concat): concatenates 'a' of shape [4, 8, 8] and 'p' of shape "
                 "[4, 4, 8] per image: a concat needs one H x W")


def two_heads(work, tdir):
    """A detector with two graph outputs (TwoHeads: heads at 1/32 and 1/16 of a 64 x 64 input,
    LeakyReLU 0.1 as table activations, upsample + concat): each graph output becomes a network
    output in ONNX's order, every output of the golden model agrees with onnxruntime's within
    10 % of its range, and the ISA simulator (and, with the RTL built, the RTL) equals the
    golden model on every output."""
    name = "two_heads"
    path = os.path.join(tdir, name + ".onnx")
    x = RNG.normal(0, 1, (16, 3, 64, 64)).astype(np.float32)
    calib = os.path.join(work, name + "_calib.npy")
    np.save(calib, x)
    out, yaml, report = imported(work, name, path, calib)
    if out is None:
        return
    text = read_if(yaml)
    outs = re.search(r"^outputs: \[(\w+), (\w+)\]$", text, re.M)
    scales = re.search(r"output: \[([0-9.e-]+), ([0-9.e-]+)\]\}", text)
    check(outs is not None and scales is not None,
          f"{name}: the YAML lists both graph outputs (outputs:) and their scales")
    if outs is None or scales is None:
        return
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    check([o.name for o in sess.get_outputs()] == ["h32", "h16"], f"{name}: ONNX outputs h32, h16")
    f = [np.concatenate(v).astype(np.float64) for v in
         zip(*[sess.run(None, {"x": x[k:k + 1]}) for k in range(len(x))])]
    xq = os.path.join(out, "calibration_input.npy")
    files = {b: [os.path.join(out, f"{b}_{j}.npy") for j in range(2)] for b in ("golden", "isa")}
    for backend in ("golden", "isa"):
        r = strata("run", yaml, "--input", xq, "--output", files[backend][0], "--output",
                   files[backend][1], "--backend", backend)
        check(r.returncode == 0, f"{name}: strata run --backend {backend} with two --output "
              f"exits 0 ({r.stderr.strip()})")
        if r.returncode != 0:
            return
    for j, (want, s) in enumerate(zip(f, (float(scales.group(1)), float(scales.group(2))))):
        y = np.load(files["golden"][j]).astype(np.float64) * s
        check(y.shape == want.shape, f"{name}: output {j} has onnxruntime's shape "
              f"{list(want.shape)} ({list(y.shape)})")
        if y.shape != want.shape:
            continue
        err = np.abs(y - want)
        rng = np.max(np.abs(want))
        print(f"{name}: output {j} ({outs.group(j + 1)}, {list(want.shape[1:])}): max abs error "
              f"{err.max():.4f} ({100 * err.max() / rng:.2f} % of the output range {rng:.3f}), "
              f"mean {err.mean():.4f}")
        check(err.max() <= 0.10 * rng, f"{name}: output {j} within 10 % of its range")
        check(np.array_equal(np.load(files["isa"][j]), np.load(files["golden"][j])),
              f"{name}: output {j} on the ISA simulator equals the golden model's")
    check(report.count("max abs error") == 2, f"{name}: the import reports each output")
    if ARGS.rtl:
        rtl = [os.path.join(out, f"rtl_{j}.npy") for j in range(2)]
        r = strata("run", yaml, "--input", xq, "--output", rtl[0], "--output", rtl[1],
                   "--backend", "rtl", "--check")
        check(r.returncode == 0 and all(np.array_equal(np.load(a), np.load(b))
                                        for a, b in zip(rtl, files["golden"])),
              f"{name}: both outputs on the RTL equal the golden model's ({r.stderr.strip()})")


def isa_matches_golden(work, name):
    """The imported network, compiled and run on the ISA simulator for every calibration image,
    equals the golden model element by element."""
    out = os.path.join(work, name)
    r = strata("run", os.path.join(out, name + ".yaml"), "--input",
               os.path.join(out, "calibration_input.npy"), "--output",
               os.path.join(out, "isa.npy"), "--backend", "isa")
    check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out, "isa.npy")),
                                                np.load(os.path.join(out, "golden.npy"))),
          f"{name}: the ISA simulator's outputs equal the golden model's ({r.stderr.strip()})")


def share_concat_scales(path):
    """Rewrites a QDQ model so that the QuantizeLinear nodes of every Concat's inputs and output
    (and every Q / DQ reading the same scale initializers) use the largest of their scales."""
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    prod = {o: n for n in m.graph.node for o in n.output}
    for cat in [n for n in m.graph.node if n.op_type == "Concat"]:
        group = {prod[prod[i].input[0]].input[0] for i in cat.input} | {cat.output[0]}
        names = {n.input[1] for n in m.graph.node
                 if n.op_type == "QuantizeLinear" and n.input[0] in group}
        s = max(float(numpy_helper.to_array(inits[k])) for k in names)
        for k in names:
            inits[k].CopyFrom(numpy_helper.from_array(np.array(s, np.float32), k))
    onnx.save(m, path)


def run_float_tensor(path, x, tensor):
    """onnxruntime's float values of an inner tensor of the model at `path`."""
    m = onnx.load(path)
    m.graph.output.append(helper.make_empty_tensor_value_info(tensor))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.concatenate([sess.run([tensor], {"x": x[k:k + 1].astype(np.float32)})[0]
                           for k in range(len(x))]).astype(np.float64)


def check_docs_list_operators():
    """The unsupported-operator error points to docs/cli.md: its `strata import` section names
    every operator the importer supports."""
    src = open(os.path.join(ARGS.source, "scripts", "strata_import.py")).read()
    ops = [op for table in ("TABLE_OPS", "SUPPORTED_OPS")
           for op in re.findall(r'"(\w+)"', re.search(table + r" = \{(.*?)\}", src, re.S).group(1))]
    doc = open(os.path.join(ARGS.source, "docs", "cli.md")).read()
    section = doc[doc.index("## `strata import"):]
    section = section[:section.index("\n## ", 1)]
    missing = [op for op in ops if f"`{op}`" not in section]
    check(ops and not missing, f"docs/cli.md's strata import section lists the {len(ops)} "
          f"supported operators (missing: {missing})")


def main():
    if not ARGS.keep:
        with tempfile.TemporaryDirectory(prefix="strata_import_test_") as work:
            return run_all(work)
    os.makedirs(ARGS.keep, exist_ok=True)
    return run_all(ARGS.keep)


def run_all(work):
    import_and_compare(work, model_convnet(), 64, 0.10, 0.85)
    import_and_compare(work, model_mlp(), 64, 0.10, 0.85)
    import_and_compare(work, model_relu6(), 64, 0.10, 0.85)
    import_and_compare(work, model_act_chain(), 64, 0.10, 0.85)
    yaml = open(os.path.join(work, "act_chain", "act_chain.yaml")).read()
    # s_out = 3 / 127 (the clip's largest output): [0.5, 3] is [21, 127].
    check("name: conv1, type: conv, out_channels: 8, kernel: 3, pad: 1, activation: {clamp: "
          "[21, 127]}}" in yaml and "type: clamp" not in yaml and "type: relu" not in yaml,
          "act_chain: Relu then Clip(0.5, 3) fused into conv1 as one clamp [21, 127]")
    yaml = open(os.path.join(work, "relu6", "relu6.yaml")).read()
    # s_out = 6 / 127 (the clip's largest output), so Clip(-1, 6) is [-21, 127]; Clip(0, 1)
    # after the pool keeps the pool's scale: [0, round(1 / s)].
    check("activation: {clamp: [-21, 127]}" in yaml and "type: clamp, lo: 0, hi: 21}" in yaml
          and "ceil_mode: true" in yaml,
          "relu6: Clip(-1, 6) fused as a clamp activation, Clip after a pool as a clamp layer")
    import_and_compare(work, model_torchvision(), 64, 0.10, 0.85)
    path = os.path.join(work, "torchvision", "torchvision.yaml")
    yaml = open(path).read() if os.path.exists(path) else ""
    # ReLU6 quantises to [0, 127] (s_out = 6 / 127 when the clip saturates), else a clamp.
    check("{name: maxpool, type: maxpool, kernel: 3, stride: 2, pad: 1}" in yaml
          and "{name: downsample, type: conv, out_channels: 16, kernel: 1, stride: 2, "
          "inputs: maxpool}" in yaml
          and "inputs: [block_conv2, downsample]" in yaml
          and re.search(r"name: dw, type: depthwise, kernel: 3, pad: 1, "
                        r"activation: (relu|\{clamp: \[0, \d+\]\})", yaml)
          and "type: global_avgpool" in yaml and "flatten" not in yaml,
          "torchvision: padded max pool, 1x1 stride-2 shortcut, depthwise + Clip(0, 6) from "
          "Constant bounds, no flatten layer after the global pool")
    if ARGS.rtl:
        # Every imported model on the accelerator: shortcuts, adds, depthwise layers, global
        # pools, SAME padding, the MLP.
        for name in ("convnet", "mlp", "relu6", "act_chain", "torchvision"):
            rtl_matches_golden(work, name)

    # QDQ models (onnxruntime's quantize_static): the conv / BN / ReLU / add / pool / Gemm net
    # and the torchvision patterns (depthwise, ReLU6, strided shortcut, linear add).
    qdq_import_and_compare(work, model_convnet(), 64, 0.95)
    qdq_import_and_compare(work, model_torchvision(), 64, 0.95)
    if ARGS.rtl:
        rtl_matches_golden(work, "convnet_qdq")
    # Asymmetric activations (zero points not 0), uint8 activations, an unfolded BN, a
    # float average pool before the first QuantizeLinear.
    expect_qdq_error(work, "qdq_zero_point", model_convnet(), first_nonzero_zero_point,
                     symmetric=False)
    expect_qdq_error(work, "qdq_uint8", model_convnet(),
                     "node 'x_QuantizeLinear' (QuantizeLinear): uint8",
                     activation_type=QuantType.QUInt8)
    expect_qdq_error(work, "qdq_bn", model_convnet(), "node 'bn1' (BatchNormalization)",
                     pre_process=False)
    # quantize_static leaves the MLP's leading AveragePool in float: quantising the input at the
    # pooled tensor's scale would clip it.
    expect_qdq_error(work, "qdq_float_avgpool", model_mlp(), "node 'avg' (AveragePool)")

    # After the QDQ models, so that their calibration images stay the same random draws.
    # ReduceMean over H and W as a global pool (keepdims 0 and 1, axes as an attribute and as
    # an input), a final Softmax dropped, standalone Pads folded into the Conv after them,
    # dilations of ones.
    m = model_reduce_mean()
    report = import_and_compare(work, m, 64, 0.10, 0.85,
                                ref=without_last_node(m, "logits", ["N", 10])) or ""
    yaml = read_if(os.path.join(work, "reduce_mean", "reduce_mean.yaml"))
    check("{name: mean, type: global_avgpool}" in yaml and "flatten" not in yaml
          and "oftmax" not in yaml and "name: fc, type: fc, out_features: 10" in yaml,
          "reduce_mean: ReduceMean([2, 3], keepdims 0) is a global_avgpool, no flatten, the "
          "Softmax dropped")
    check("note: node 'softmax' (Softmax): the final Softmax is dropped; the network outputs "
          "its input 'logits'" in report, "reduce_mean: the import notes the dropped Softmax")
    import_and_compare(work, model_reduce_mean_keepdims(), 64, 0.10, 0.85)
    yaml = read_if(os.path.join(work, "reduce_mean_keepdims", "reduce_mean_keepdims.yaml"))
    check("{name: conv, type: conv, out_channels: 8, kernel: 3, stride: 2, pad: [2, 1, 1, 2], "
          "activation: relu}" in yaml
          and "{name: dw, type: depthwise, kernel: 3, pad: [2, 1, 0, 1]}" in yaml
          and "{name: mean, type: global_avgpool}" in yaml and "flatten" not in yaml,
          "reduce_mean_keepdims: Pads folded into the conv and the depthwise conv's pads, "
          "ReduceMean([-1, -2], keepdims 1) a global_avgpool")
    import_and_compare(work, model_pad_maxpool(), 64, 0.10, 0.85)
    yaml = read_if(os.path.join(work, "pad_maxpool", "pad_maxpool.yaml"))
    check("{name: maxpool, type: maxpool, kernel: 3, stride: 2, pad: 1}" in yaml,
          "pad_maxpool: a Pad of a Relu's output folded into the MaxPool's pads")
    import_and_compare(work, model_edge_pad_maxpool(), 64, 0.10, 0.85)
    yaml = read_if(os.path.join(work, "edge_pad_maxpool", "edge_pad_maxpool.yaml"))
    check("{name: maxpool, type: maxpool, kernel: 2, stride: 1, pad: [0, 0, 1, 1]}" in yaml,
          "edge_pad_maxpool: an edge Pad of a LeakyRelu's output folded into the MaxPool's pads")
    import_and_compare(work, model_dilations(), 64, 0.10, 0.85)
    yaml = read_if(os.path.join(work, "dilations", "dilations.yaml"))
    check("{name: maxpool, type: maxpool, kernel: 2}" in yaml
          and "{name: avgpool, type: avgpool, kernel: 3, stride: 1, pad: 1}" in yaml,
          "dilations: Conv, MaxPool and AveragePool with dilations [1, 1] imported")
    if ARGS.rtl:
        for name in ("reduce_mean", "reduce_mean_keepdims", "pad_maxpool", "edge_pad_maxpool",
                     "dilations"):
            rtl_matches_golden(work, name)

    good = model_convnet()
    data = good.SerializeToString()
    expect_error(work, "truncated", data[:len(data) // 2], (4, 3, 16, 16), "truncated.onnx")
    expect_error(work, "wrong_calibration", data, (4, 3, 16, 15), "wrong_calibration_calib.npy")
    # An unsupported operator in the middle: Softmax between two layers, and an LSTM.
    n = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
         helper.make_node("Softmax", ["c"], ["s"], name="mid_softmax", axis=1),
         helper.make_node("Conv", ["s", "w"], ["y"], name="conv2", kernel_shape=[1, 1])]
    m = make_model("softmax", n, [init("w", conv_w(3, 3, 1))], [1, 3, 4, 4], "y", [1, 3, 4, 4])
    expect_error(work, "softmax", m.SerializeToString(), (4, 3, 4, 4),
                 "node 'mid_softmax' (Softmax): unsupported operator Softmax (docs/cli.md")
    check_docs_list_operators()
    g = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="lstm1", hidden_size=2)], "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 2])],
        initializer=[init("W", RNG.normal(0, 1, (1, 8, 2))),
                     init("R", RNG.normal(0, 1, (1, 8, 2)))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    expect_error(work, "lstm", m.SerializeToString(), (4, 1, 2, 2), "'lstm1' (LSTM)")
    # Dynamic spatial shape.
    m = make_model("dynamic", [helper.make_node("Relu", ["x"], ["y"], name="r")], [],
                   [1, 3, "H", "W"], "y", [1, 3, "H", "W"])
    expect_error(work, "dynamic", m.SerializeToString(), (4, 3, 4, 4), "dynamic or unknown shape")
    m = make_model("zero_dim", [helper.make_node("Relu", ["x"], ["y"], name="r")], [],
                   [1, 3, 0, 8], "y", [1, 3, 0, 8])
    expect_error(work, "zero_dim", m.SerializeToString(), (4, 3, 1, 8),
                 "graph input 'x' has a zero dimension: shape [1, 3, 0, 8]")
    # A group count that does not divide the channels.
    m = make_model("grouped", [helper.make_node("Conv", ["x", "w"], ["y"], name="gconv", group=3,
                                                kernel_shape=[1, 1])],
                   [init("w", conv_w(4, 2, 1))], [1, 4, 4, 4], "y", [1, 4, 4, 4])
    expect_error(work, "grouped", m.SerializeToString(), (4, 4, 4, 4), "gconv")
    # count_include_pad = 1.
    cip = helper.make_node("AveragePool", ["x"], ["y"], name="avgcip", kernel_shape=[3, 3],
                           pads=[1, 1, 1, 1], count_include_pad=1)
    m = make_model("cip", [cip], [], [1, 2, 4, 4], "y", [1, 2, 4, 4])
    expect_error(work, "cip", m.SerializeToString(), (4, 2, 4, 4), "avgcip")
    # Two graph outputs that are one layer's map (an Identity of the other), and a graph
    # output that is the input: refused naming the outputs.
    def two(nodes, outs):
        g = helper.make_graph(nodes, "two",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, 1, 2, 2])
                               for o in outs])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m.SerializeToString()
    expect_error(work, "two_outputs", two([helper.make_node("Relu", ["x"], ["y"], name="r"),
                                           helper.make_node("Identity", ["y"], ["z"], name="i")],
                                          ["y", "z"]), (4, 1, 2, 2),
                 "graph outputs 'y' and 'z' are the same layer's map")
    expect_error(work, "input_output", two([helper.make_node("Relu", ["x"], ["y"], name="r"),
                                            helper.make_node("Identity", ["x"], ["z"], name="i")],
                                           ["y", "z"]), (4, 1, 2, 2),
                 "graph output 'z' is not the result of a supported layer")
    expect_error(work, "unread_last", two([helper.make_node("Relu", ["x"], ["y"], name="r"),
                                           helper.make_node("Relu", ["x"], ["z"], name="r2")],
                                          ["z", "y"][:1]), (4, 1, 2, 2),
                 "(Relu): its output never reaches a graph output")
    expect_error(work, "empty", b"", (1, 1, 2, 2), "empty.onnx")
    expect_non_finite_errors(work)
    expect_new_operator_errors(work)
    expect_out_errors(work)
    expect_format_limit_errors(work)
    expect_all_or_nothing(work)
    # Last, so that the models above keep their calibration images.
    concat_models(work)

    print(f"\n{len(FAILS)} failure(s)" + (": " + "; ".join(FAILS) if FAILS else ""))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
