#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports two object detectors (random weights) as ONNX for strata import: YOLOv3-tiny and a YOLOv8n-style network.

  /usr/bin/python3 scripts/export_detectors.py [OUT_DIR] [--images N] [--seed S] [--size-v3 S] [--size-v8 S]

Run with Debian's python3 (python3-torch). Writes into OUT_DIR (default build/models/):

  yolov3_tiny.onnx          input 'input' [N, 3, 416, 416]; outputs 'p5' [N, 255, 13, 13]
                            and 'p4' [N, 255, 26, 26] (the two heads before box decoding)
  yolov8n.onnx              input 'input' [N, 3, 320, 320]; outputs 'p3', 'p4', 'p5'
                            [N, 144, 40 / 20 / 10, ...] (box distribution 64 + 80 classes)
  calibration_416.npy,      float32 images for `strata import --calibration`, at each
  calibration_320.npy       network's input size

YOLOv3-tiny follows Darknet's layer list: 3 x 3 convolutions with BatchNorm and
LeakyReLU 0.1, five 2 x 2 max pools at stride 2, a sixth at stride 1 whose
window runs past the map's right and bottom edge (Darknet's max pool ignores
the outside; here an edge-replicating pad of one row and column, which gives
the same maxima), a 13 x 13 head, and a 26 x 26 head fed by a 1 x 1
convolution, a nearest 2x upsample and a concatenation with the backbone's
26 x 26 map. The heads are 1 x 1 convolutions with bias (3 anchors x 85).

The YOLOv8n-style network has the layer list of Ultralytics' YOLOv8n (width
0.25, depth 0.33): Conv-BN-SiLU blocks, C2f blocks (a 1 x 1 convolution split
in two halves, bottlenecks on the second, everything concatenated), SPPF (three
chained 5 x 5 max pools at stride 1 and a concatenation), the upsample + concat
neck and a downsampling path, and the decoupled head's box and class branches,
concatenated per scale. Box decoding (the distribution focal loss integral,
anchors, sigmoid of the classes) is left to the host, as deployments do.

Weights are random (torch's initialisers under a fixed seed; nothing is
downloaded) and BatchNorm statistics come from forward passes over synthetic
images, as in scripts/export_torchvision.py; the exporter folds each BatchNorm
into its convolution.
"""
import argparse
import os
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_torchvision import set_bn_statistics, synthetic_images  # noqa: E402

BN_IMAGES = 16


class ConvBnAct(nn.Module):
    """Convolution without bias, BatchNorm, activation; padding k // 2."""

    def __init__(self, c_in, c_out, k=3, s=1, act="silu"):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.LeakyReLU(0.1) if act == "leaky" else nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class YoloV3Tiny(nn.Module):
    def __init__(self, classes=80, anchors=3):
        super().__init__()
        widths = [16, 32, 64, 128, 256]
        c_in = 3
        self.stages = nn.ModuleList()
        for c in widths:
            self.stages.append(ConvBnAct(c_in, c, 3, act="leaky"))
            c_in = c
        self.conv512 = ConvBnAct(256, 512, 3, act="leaky")
        self.conv1024 = ConvBnAct(512, 1024, 3, act="leaky")
        self.conv256 = ConvBnAct(1024, 256, 1, act="leaky")
        self.conv512b = ConvBnAct(256, 512, 3, act="leaky")
        self.head5 = nn.Conv2d(512, anchors * (classes + 5), 1)
        self.conv128 = ConvBnAct(256, 128, 1, act="leaky")
        self.conv256b = ConvBnAct(384, 256, 3, act="leaky")
        self.head4 = nn.Conv2d(256, anchors * (classes + 5), 1)

    def forward(self, x):
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i == 4:
                p4 = x  # 26 x 26 at 416
            x = F.max_pool2d(x, 2, 2)
        x = self.conv512(x)
        x = F.max_pool2d(F.pad(x, (0, 1, 0, 1), mode="replicate"), 2, 1)
        x = self.conv256(self.conv1024(x))
        out5 = self.head5(self.conv512b(x))
        y = F.interpolate(self.conv128(x), scale_factor=2, mode="nearest")
        out4 = self.head4(self.conv256b(torch.cat([y, p4], 1)))
        return out5, out4


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut):
        super().__init__()
        self.cv1 = ConvBnAct(c, c, 3)
        self.cv2 = ConvBnAct(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    def __init__(self, c_in, c_out, n, shortcut):
        super().__init__()
        self.c = c_out // 2
        self.cv1 = ConvBnAct(c_in, 2 * self.c, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))
        self.cv2 = ConvBnAct((2 + n) * self.c, c_out, 1)

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class Sppf(nn.Module):
    def __init__(self, c_in, c_out, k=5):
        super().__init__()
        self.cv1 = ConvBnAct(c_in, c_in // 2, 1)
        self.cv2 = ConvBnAct(c_in * 2, c_out, 1)
        self.k = k

    def forward(self, x):
        x = self.cv1(x)
        y1 = F.max_pool2d(x, self.k, 1, self.k // 2)
        y2 = F.max_pool2d(y1, self.k, 1, self.k // 2)
        y3 = F.max_pool2d(y2, self.k, 1, self.k // 2)
        return self.cv2(torch.cat([x, y1, y2, y3], 1))


class DetectBranch(nn.Module):
    """One scale of the decoupled head: box branch (4 x 16 bins) and class branch, concatenated."""

    def __init__(self, c_in, c_box, c_cls, classes, bins=16):
        super().__init__()
        self.box = nn.Sequential(ConvBnAct(c_in, c_box, 3), ConvBnAct(c_box, c_box, 3),
                                 nn.Conv2d(c_box, 4 * bins, 1))
        self.cls = nn.Sequential(ConvBnAct(c_in, c_cls, 3), ConvBnAct(c_cls, c_cls, 3),
                                 nn.Conv2d(c_cls, classes, 1))

    def forward(self, x):
        return torch.cat([self.box(x), self.cls(x)], 1)


class YoloV8n(nn.Module):
    def __init__(self, classes=80):
        super().__init__()
        self.b0 = ConvBnAct(3, 16, 3, 2)
        self.b1 = ConvBnAct(16, 32, 3, 2)
        self.b2 = C2f(32, 32, 1, True)
        self.b3 = ConvBnAct(32, 64, 3, 2)
        self.b4 = C2f(64, 64, 2, True)
        self.b5 = ConvBnAct(64, 128, 3, 2)
        self.b6 = C2f(128, 128, 2, True)
        self.b7 = ConvBnAct(128, 256, 3, 2)
        self.b8 = C2f(256, 256, 1, True)
        self.b9 = Sppf(256, 256)
        self.h12 = C2f(384, 128, 1, False)
        self.h15 = C2f(192, 64, 1, False)
        self.h16 = ConvBnAct(64, 64, 3, 2)
        self.h18 = C2f(192, 128, 1, False)
        self.h19 = ConvBnAct(128, 128, 3, 2)
        self.h21 = C2f(384, 256, 1, False)
        c_cls = max(64, min(classes, 100))
        self.d3 = DetectBranch(64, 64, c_cls, classes)
        self.d4 = DetectBranch(128, 64, c_cls, classes)
        self.d5 = DetectBranch(256, 64, c_cls, classes)

    def forward(self, x):
        x = self.b1(self.b0(x))
        p3 = self.b4(self.b3(self.b2(x)))
        p4 = self.b6(self.b5(p3))
        p5 = self.b9(self.b8(self.b7(p4)))
        up = F.interpolate(p5, scale_factor=2, mode="nearest")
        n4 = self.h12(torch.cat([up, p4], 1))
        up = F.interpolate(n4, scale_factor=2, mode="nearest")
        n3 = self.h15(torch.cat([up, p3], 1))
        m4 = self.h18(torch.cat([self.h16(n3), n4], 1))
        m5 = self.h21(torch.cat([self.h19(m4), p5], 1))
        return self.d3(n3), self.d4(m4), self.d5(m5)


def export(model, path, example, outputs):
    axes = {"input": {0: "N"}}
    axes.update({o: {0: "N"} for o in outputs})
    torch.onnx.export(model, example, path, opset_version=13, input_names=["input"],
                      output_names=outputs, dynamic_axes=axes, do_constant_folding=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default=os.path.join("build", "models"))
    ap.add_argument("--images", type=int, default=8, help="calibration images (default 8)")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--size-v3", type=int, default=416, help="YOLOv3-tiny input size (multiple of 32)")
    ap.add_argument("--size-v8", type=int, default=320, help="YOLOv8n input size (multiple of 32)")
    a = ap.parse_args(argv)
    if a.images < 1:
        ap.error("--images must be at least 1")
    for size in (a.size_v3, a.size_v8):
        if size < 64 or size % 32:
            ap.error(f"input size {size}: must be a multiple of 32, at least 64")
    os.makedirs(a.out, exist_ok=True)

    nets = [("yolov3_tiny", YoloV3Tiny, a.size_v3, ["p5", "p4"]),
            ("yolov8n", YoloV8n, a.size_v8, ["p3", "p4", "p5"])]
    for name, build, size, outputs in nets:
        rng = np.random.default_rng(a.seed)
        calibration = synthetic_images(a.images, rng, size)
        bn_images = synthetic_images(BN_IMAGES, rng, size)
        cal_path = os.path.join(a.out, f"calibration_{size}.npy")
        np.save(cal_path, calibration)
        torch.manual_seed(a.seed)
        model = build()
        set_bn_statistics(model, bn_images)
        path = os.path.join(a.out, name + ".onnx")
        export(model, path, torch.from_numpy(calibration[:1]), outputs)
        print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB), {cal_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
