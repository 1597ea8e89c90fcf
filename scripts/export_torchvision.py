#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports torchvision's resnet18, mobilenet_v2, mnasnet0_5, squeezenet1_0, densenet121, shufflenet_v2_x0_5,
alexnet, mobilenet_v3_small and efficientnet_b0 (224 x 224) as ONNX for strata import.

  /usr/bin/python3 scripts/export_torchvision.py [OUT_DIR] [--images N] [--seed S] [--only NAME ...]

Run with Debian's python3 (python3-torch, python3-torchvision; `make models`
installs them), not the project venv. Writes into OUT_DIR (default build/models/):

  resnet18.onnx, mobilenet_v2.onnx,  opset 13, input 'input' [N, 3, 224, 224] (N symbolic),
  mnasnet0_5.onnx,                   output 'logits' [N, 1000] (mnasnet0_5's global pool is
  squeezenet1_0.onnx                 a ReduceMean over H and W; squeezenet1_0's fire modules
  densenet121.onnx                   concatenate their expand convolutions; densenet121's
  shufflenet_v2_x0_5.onnx            BatchNormalizations after its Concats stay nodes;
  alexnet.onnx                       shufflenet_v2_x0_5 shuffles its channels with Reshape /
  mobilenet_v3_small.onnx            Transpose / Reshape on shapes computed by Shape / Gather /
  efficientnet_b0.onnx               Unsqueeze / Concat; alexnet's stem is 11 x 11 at stride 4;
                                     mobilenet_v3_small and efficientnet_b0 gate their blocks
                                     with squeeze-and-excitation: a Mul of the map by a
                                     [N, C, 1, 1] HardSigmoid / Sigmoid of its pooled, twice
                                     convolved self)
  calibration.npy                    float32 [N][3][224][224], the images for
                                     `strata import --calibration`

Nothing is downloaded: the networks are built with weights=None and initialised
randomly by torchvision's own initialisers under a fixed seed, so their outputs
mean nothing; they stand for the real graphs (operators, shapes, MACs) and for
realistic activation statistics.

Images are synthetic and smooth: per image, a 7 x 7 random field upsampled
bilinearly to 224 x 224 plus a random colour gradient and a little pixel noise,
scaled to zero mean and unit variance per channel (what ImageNet
normalisation gives a photograph).

BatchNorm statistics: a randomly initialised BatchNorm has running mean 0 and
variance 1, which would leave the activations of a random network far from a
trained one's ranges. Before export each network therefore runs forward passes
in train mode over 32 further synthetic images (not the calibration images),
with momentum None, so every running mean / variance is the cumulative average
of the batch statistics; the network is then put in eval mode, in which the
ONNX exporter folds each BatchNorm into the Conv before it.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torchvision

SIZE = 224
BN_IMAGES = 32
BN_BATCH = 8


def synthetic_images(n, rng, size=SIZE):
    """n smooth images [n][3][size][size] float32, zero mean and unit variance per channel."""
    coarse = torch.from_numpy(rng.normal(0.0, 1.0, (n, 3, 7, 7)).astype(np.float32))
    x = torch.nn.functional.interpolate(coarse, size=(size, size), mode="bilinear",
                                        align_corners=False).numpy()
    ramp = np.linspace(-1.0, 1.0, size, dtype=np.float32)
    for i in range(n):
        gy, gx = rng.normal(0.0, 0.5, (2, 3, 1, 1)).astype(np.float32)
        x[i] += gy * ramp[None, :, None] + gx * ramp[None, None, :]
    x += rng.normal(0.0, 0.05, x.shape).astype(np.float32)
    x -= x.mean(axis=(2, 3), keepdims=True)
    x /= x.std(axis=(2, 3), keepdims=True)
    return x.astype(np.float32)


def set_bn_statistics(model, images):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over all batches
    model.train()
    with torch.no_grad():
        for i in range(0, len(images), BN_BATCH):
            model(torch.from_numpy(images[i:i + BN_BATCH]))
    model.eval()


def export(model, path, example):
    torch.onnx.export(model, example, path, opset_version=13, input_names=["input"],
                      output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                      do_constant_folding=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default=os.path.join("build", "models"))
    ap.add_argument("--images", type=int, default=8, help="calibration images (default 8)")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="export only these networks")
    a = ap.parse_args(argv)
    if a.images < 1:
        ap.error("--images must be at least 1")
    os.makedirs(a.out, exist_ok=True)

    rng = np.random.default_rng(a.seed)
    calibration = synthetic_images(a.images, rng)
    bn_images = synthetic_images(BN_IMAGES, rng)
    np.save(os.path.join(a.out, "calibration.npy"), calibration)

    builders = [("resnet18", torchvision.models.resnet18),
                ("mobilenet_v2", torchvision.models.mobilenet_v2),
                ("mnasnet0_5", torchvision.models.mnasnet0_5),
                ("squeezenet1_0", torchvision.models.squeezenet1_0),
                ("densenet121", torchvision.models.densenet121),
                ("shufflenet_v2_x0_5", torchvision.models.shufflenet_v2_x0_5),
                ("alexnet", torchvision.models.alexnet),
                ("mobilenet_v3_small", torchvision.models.mobilenet_v3_small),
                ("efficientnet_b0", torchvision.models.efficientnet_b0)]
    unknown = set(a.only or []) - {name for name, _ in builders}
    if unknown:
        ap.error(f"unknown network(s) {sorted(unknown)}")
    for name, build in builders:
        if a.only and name not in a.only:
            continue
        torch.manual_seed(a.seed)
        model = build(weights=None)
        set_bn_statistics(model, bn_images)
        path = os.path.join(a.out, name + ".onnx")
        export(model, path, torch.from_numpy(calibration[:1]))
        print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    print(f"wrote {os.path.join(a.out, 'calibration.npy')} ({a.images} images, seed {a.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
