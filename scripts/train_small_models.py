#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Train three small CNNs on the digits and export them as float ONNX for `strata import`.

The data is the digits set committed in examples/digits/ (int8 [1797][1][8][8], values 0..127
standing for q / 127; labels int32), upsampled to 16 x 16 by nearest neighbour (each pixel
repeated 2 x 2, so the upsampled images are still exact int8 values), with train_digits.py's
split: images 0..1436 train, 1437..1796 are held out (360).

  resnet_digits     stem conv + BN + ReLU, a residual block with an identity shortcut, two
                    downsampling blocks with a strided 1x1 projection conv (+ BN) on the
                    shortcut, ReLU after each add, GlobalAveragePool, Linear
  mobilenet_digits  MobileNet-v2 inverted residual blocks (1x1 expand + BN + ReLU6, 3x3
                    depthwise + BN + ReLU6, 1x1 linear projection + BN, residual add where the
                    stride is 1 and in = out channels), GlobalAveragePool, Linear
  se_digits         conv + BN + SiLU blocks (SiLU: a table activation on import), a fire
                    block (a 1x1 and a 3x3 branch, Concat along the channels), a
                    squeeze-and-excitation gate on the concatenation (GlobalAveragePool,
                    1x1 conv + ReLU, 1x1 conv + Hardsigmoid, Mul with the map: a `mul`
                    layer), GlobalAveragePool, Linear

The ONNX files keep BatchNormalization as separate nodes (export in TrainingMode.PRESERVE of a
model in eval mode): `strata import` folds them into the convolutions.

Outputs per model, in examples/<model>/ (all small, deterministic; run with /usr/bin/python3):
  model.onnx           float model, opset 13, batch dimension symbolic
  calibration.npy      float32 [288][1][16][16]: every fifth training image, the input of
                       `strata import --calibration` (values q / 127)
  test_images.npy      int8 [360][1][16][16]: the held-out images (values 0..127)
  test_labels.npy      int32 [360]
  float_accuracy.json  the float model's accuracy (fractions) on the held-out and train images

The ctest small_models (scripts/tests/small_models_test.py) imports the ONNX files and checks
the golden model's int8 accuracy against float_accuracy.json; docs/models.md has the figures.

Usage: /usr/bin/python3 scripts/train_small_models.py [--out-dir DIR] [--models NAME ...]
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from training import make_deterministic, train

REPO = Path(__file__).resolve().parent.parent

SEED = 20240634
N_TRAIN = 1437            # images 0..1436 train, 1437..1796 held out (360), as train_digits.py
CALIBRATION_STEP = 5      # every fifth training image calibrates the import (288 images)
EPOCHS = 40
BATCH = 64
LEARNING_RATE = 3e-3
WEIGHT_DECAY = 1e-4
INT8_MAX = 127
OPSET = 13


# ----------------------------------------------------------------------------
# Data


def load_digits_int8(digits_dir):
    images = np.load(digits_dir / "images.npy")      # int8 [1797][1][8][8], 0..127
    labels = np.load(digits_dir / "labels.npy")      # int32 [1797]
    if images.shape != (1797, 1, 8, 8) or images.dtype != np.int8 or images.min() < 0:
        raise ValueError(f"{digits_dir}/images.npy: expected int8 [1797][1][8][8] in 0..127")
    return images, labels.astype(np.int32)


def upsample(images):
    """Nearest-neighbour 2x upsampling: [N][C][H][W] -> [N][C][2H][2W], exact on integers."""
    return images.repeat(2, axis=2).repeat(2, axis=3)


# ----------------------------------------------------------------------------
# Models


class ConvBN(nn.Module):
    """K x K convolution (pad K // 2, no bias) + BatchNorm; the importer folds the BN."""

    def __init__(self, cin, cout, k, stride=1, groups=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups,
                              bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class BasicBlock(nn.Module):
    """ResNet basic block: 3x3 conv (stride s) + BN + ReLU, 3x3 conv + BN, plus the shortcut
    (identity, or a strided 1x1 projection conv + BN when the shape changes), then ReLU."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = ConvBN(cin, cout, 3, stride)
        self.conv2 = ConvBN(cout, cout, 3)
        self.proj = ConvBN(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.conv2(F.relu(self.conv1(x)))
        return F.relu(y + (x if self.proj is None else self.proj(x)))


class ResNetDigits(nn.Module):
    """1x16x16 -> stem 16 -> block 16 (16x16) -> block 24 /2 (8x8) -> block 32 /2 (4x4) ->
    GlobalAveragePool -> Linear 32 -> 10."""

    def __init__(self):
        super().__init__()
        self.stem = ConvBN(1, 16, 3)
        self.block1 = BasicBlock(16, 16, 1)
        self.block2 = BasicBlock(16, 24, 2)
        self.block3 = BasicBlock(24, 32, 2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = self.block3(self.block2(self.block1(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class InvertedResidual(nn.Module):
    """MobileNet-v2 block: 1x1 expand (t x) + BN + ReLU6, 3x3 depthwise (stride s) + BN + ReLU6,
    1x1 linear projection + BN (no activation); residual add when s = 1 and cin = cout."""

    def __init__(self, cin, cout, expand, stride):
        super().__init__()
        hidden = cin * expand
        self.expand = ConvBN(cin, hidden, 1)
        self.depthwise = ConvBN(hidden, hidden, 3, stride, groups=hidden)
        self.project = ConvBN(hidden, cout, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(F.relu6(self.depthwise(F.relu6(self.expand(x)))))
        return x + y if self.residual else y


class MobileNetDigits(nn.Module):
    """1x16x16 -> stem 16 (16x16) -> IR 16 /2 (8x8) -> IR 16 + add -> IR 32 /2 (4x4) ->
    IR 32 + add -> GlobalAveragePool -> Linear 32 -> 10."""

    def __init__(self):
        super().__init__()
        self.stem = ConvBN(1, 16, 3)
        self.ir1 = InvertedResidual(16, 16, 2, 2)
        self.ir2 = InvertedResidual(16, 16, 4, 1)
        self.ir3 = InvertedResidual(16, 32, 4, 2)
        self.ir4 = InvertedResidual(32, 32, 4, 1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu6(self.stem(x))
        x = self.ir4(self.ir3(self.ir2(self.ir1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class FireSE(nn.Module):
    """Two branches on one map, concatenated along the channels (SqueezeNet's fire, without
    its squeeze): 1x1 conv + BN + SiLU and 3x3 conv + BN + SiLU; then a squeeze-and-excitation
    gate (MobileNet-v3's): GlobalAveragePool, 1x1 conv (bias) + ReLU, 1x1 conv (bias) +
    Hardsigmoid, times the concatenated map per channel."""

    def __init__(self, cin, cbranch, csqueeze):
        super().__init__()
        self.branch1 = ConvBN(cin, cbranch, 1)
        self.branch3 = ConvBN(cin, cbranch, 3)
        self.se_reduce = nn.Conv2d(2 * cbranch, csqueeze, 1)
        self.se_expand = nn.Conv2d(csqueeze, 2 * cbranch, 1)

    def forward(self, x):
        y = torch.cat([F.silu(self.branch1(x)), F.silu(self.branch3(x))], dim=1)
        gate = F.adaptive_avg_pool2d(y, 1)
        gate = F.hardsigmoid(self.se_expand(F.relu(self.se_reduce(gate))))
        return y * gate


class SEDigits(nn.Module):
    """1x16x16 -> stem 16 (16x16) -> conv 16 /2 (8x8) -> fire 16 + 16 concatenated, SE gate
    (8x8) -> conv 32 /2 (4x4) -> GlobalAveragePool -> Linear 32 -> 10; SiLU after every
    convolution but the SE gate's."""

    def __init__(self):
        super().__init__()
        self.stem = ConvBN(1, 16, 3)
        self.down1 = ConvBN(16, 16, 3, 2)
        self.fire = FireSE(16, 16, 8)
        self.down2 = ConvBN(32, 32, 3, 2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = F.silu(self.down1(F.silu(self.stem(x))))
        x = F.silu(self.down2(self.fire(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


MODELS = {"resnet_digits": ResNetDigits, "mobilenet_digits": MobileNetDigits,
          "se_digits": SEDigits}


# ----------------------------------------------------------------------------
# Training


def accuracy(model, x, labels):
    with torch.no_grad():
        pred = np.argmax(model(x).numpy(), axis=1)
    return float(np.mean(pred == labels))


# ----------------------------------------------------------------------------
# Export


def save(path, array, dtype):
    array = np.ascontiguousarray(array)
    if array.dtype != np.dtype(dtype):
        raise TypeError(f"{path}: dtype {array.dtype}, expected {dtype}")
    np.save(path, array, allow_pickle=False)


def export_onnx(model, path):
    """Opset 13, constant folding, eval mode; BatchNormalization kept as nodes
    (TrainingMode.PRESERVE of an eval-mode model) for the importer to fold."""
    model.eval()
    dummy = torch.zeros(1, 1, 16, 16)
    with warnings.catch_warnings():  # about training-mode models; this one is in eval mode
        warnings.filterwarnings("ignore", message="It is recommended that constant folding")
        torch.onnx.export(model, dummy, str(path), opset_version=OPSET,
                          do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          input_names=["x"], output_names=["logits"],
                          dynamic_axes={"x": {0: "N"}, "logits": {0: "N"}})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", type=Path, default=REPO / "examples",
                        help="the models go to OUT_DIR/<model>/")
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=list(MODELS))
    args = parser.parse_args()

    images8, labels = load_digits_int8(REPO / "examples" / "digits")
    images = upsample(images8)                                    # int8 [1797][1][16][16]
    x = torch.from_numpy(images.astype(np.float32) / INT8_MAX)
    y = torch.from_numpy(labels.astype(np.int64))
    train_idx, test_idx = slice(0, N_TRAIN), slice(N_TRAIN, len(labels))

    for name in args.models:
        make_deterministic(SEED)
        model = MODELS[name]()
        start = time.time()
        train(model, x[train_idx], y[train_idx], seed=SEED, epochs=EPOCHS, batch=BATCH,
              learning_rate=LEARNING_RATE, weight_decay=WEIGHT_DECAY, shift_step=2)
        acc = {"float_test": accuracy(model, x[test_idx], labels[test_idx]),
               "float_train": accuracy(model, x[train_idx], labels[train_idx]),
               "test_images": int(len(labels) - N_TRAIN)}
        out = args.out_dir / name
        out.mkdir(parents=True, exist_ok=True)
        export_onnx(model, out / "model.onnx")
        save(out / "calibration.npy", x[0:N_TRAIN:CALIBRATION_STEP].numpy(), np.float32)
        save(out / "test_images.npy", images[test_idx], np.int8)
        save(out / "test_labels.npy", labels[test_idx], np.int32)
        (out / "float_accuracy.json").write_text(json.dumps(acc, indent=2) + "\n")
        params = sum(p.numel() for p in model.parameters())
        print(f"{name}: {params} parameters, trained in {time.time() - start:.0f} s, float "
              f"accuracy test {100 * acc['float_test']:.2f} %, train "
              f"{100 * acc['float_train']:.2f} %; wrote {out}/model.onnx "
              f"({(out / 'model.onnx').stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
