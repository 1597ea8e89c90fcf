#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Reference vectors for the numerics contract, computed with PyTorch.

An independent check of the golden model (sw/src/numerics.cpp): every layer
operation is computed here by PyTorch in float64 on integer-valued tensors
(exact: every accumulator is an integer far below 2^53), then requantised or
averaged by the contract's integer rules in exact int64 numpy:

  conv    torch.nn.functional.conv2d (bias, stride, padding, groups), then
          y = clamp(rshift_round(acc * M[c], S[c]), lo, hi); padding per side
          (ONNX order top, left, bottom, right) is torch.nn.functional.pad with
          zeros before an unpadded conv2d; groups = C is a depthwise convolution
  fc      torch.nn.functional.linear on the input flattened in C, H, W order,
          then the same requantisation
  maxpool torch.nn.functional.max_pool2d (padding, ceil_mode); padding per
          side is torch.nn.functional.pad with -inf before an unpadded pool
  avgpool sum and count of the valid elements of each window from
          torch.nn.functional.avg_pool2d(divisor_override=1) on the data and on
          a tensor of ones (padded zeros add nothing to either; padding per
          side is torch.nn.functional.pad with zeros), then
          floor((2 * sum + n) / (2 * n))
  add     two int8 maps of one shape, in exact int64 numpy:
          y = clamp(rshift_round(a * Ma[c] + b * Mb[c], S[c]), lo, hi)
  global_avgpool
          each channel's sum from torch.sum over H and W, n = H * W, then
          floor((2 * sum + n) / (2 * n))
  mul     a map [C][H][W] times a vector [C][1][1] (squeeze-and-excitation):
          torch.mul with broadcasting, then the conv's requantisation
  concat  torch.cat of two maps along the channels
  slice   torch.narrow of a map's channels
  upsample
          torch.nn.functional.interpolate(mode="nearest") by an integer factor

In ceil mode the contract drops a last window that starts in the padding after
the input; PyTorch on a pre-padded tensor would keep it (holding no input
element). The script fails on a window without an input element, so the
per-side pool cases it writes have the same output size under both rules.

Output: tests/data/reference/<case>/{input,weights,bias,mult,shift,expected}.npy
(add: {input,input_b,mult_a,mult_b,shift,expected}.npy; mul:
{input,input_b,mult,shift,expected}.npy, input_b the vector) and
tests/data/reference/manifest.json, read by sw/tests/reference_test.cpp. A
manifest "pad" is one number for every side or [top, left, bottom, right]; conv
cases with the latter also give "groups".
Deterministic (seeded): running it twice gives identical files.

Usage: /usr/bin/python3 scripts/make_reference_vectors.py [--out-dir DIR]
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

from hw_constants import MAX_SHIFT, MULT_MAX

import numpy as np
import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parent.parent
SEED = 7031
N_RANDOM_CONV = 12
N_RANDOM_FC = 4
N_RANDOM_POOL = 6         # of each kind
N_RANDOM_GROUPED = 10     # grouped and depthwise convolutions, padding per side
N_RANDOM_ASYM_CONV = 4    # one group, padding per side
N_RANDOM_ASYM_POOL = 4    # of each kind, padding per side
N_RANDOM_VIEW = 4         # of each of concat, slice, upsample
N_RANDOM_ADD = 4
N_RANDOM_MUL = 6
N_RANDOM_GAP = 3

INT8_MIN, INT8_MAX = -128, 127
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
EXACT_LIMIT = 2**53       # float64 holds every integer below this exactly

NONE = (INT8_MIN, INT8_MAX)
RELU = (0, INT8_MAX)
RELU6 = (0, 6)
NEGATIVE = (-100, -20)    # a clamp range that excludes zero
CLAMPS = [NONE, RELU, RELU6, NEGATIVE, (-5, 90)]


# ----------------------------------------------------------------------------
# The contract's integer rules (int64 numpy)


def rshift_round(v, s):
    """(v + 2^(s-1)) >> s for s > 0 (arithmetic shift), v for s == 0; elementwise."""
    s = np.asarray(s, dtype=np.int64)
    half = np.where(s > 0, np.left_shift(np.int64(1), np.maximum(s - 1, 0)), 0)
    return np.right_shift(v + half, s)


def requantise(acc, mult, shift, lo, hi):
    """acc int64 [C][H][W]; per-channel M and S; clamp to [lo, hi]."""
    m = mult.astype(np.int64)[:, None, None]
    s = shift.astype(np.int64)[:, None, None]
    return np.clip(rshift_round(acc * m, s), lo, hi).astype(np.int8)


def avg_round(total, count):
    """floor((2 * sum + n) / (2 * n)): the mean rounded half toward +infinity."""
    return np.floor_divide(2 * total + count, 2 * count)


def exact_int(t, what):
    """float64 tensor of integers -> int64 array; fails if a value is not exact."""
    a = t.detach().numpy()
    if not np.all(np.abs(a) < EXACT_LIMIT) or not np.array_equal(a, np.round(a)):
        raise ValueError(f"{what}: float64 result is not an exact integer")
    return a.astype(np.int64)


def check_acc(acc, name):
    if acc.min() < INT32_MIN or acc.max() > INT32_MAX:
        raise ValueError(f"{name}: accumulator leaves int32 ({acc.min()}..{acc.max()})")


# ----------------------------------------------------------------------------
# PyTorch computations


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def torch_pads(pads):
    """ONNX (top, left, bottom, right) -> torch.nn.functional.pad's (left, right, top, bottom)."""
    top, left, bottom, right = pads
    return (left, right, top, bottom)


def conv_acc(x, w, b, stride, pad, groups=1):
    """pad: one number for every side, or (top, left, bottom, right)."""
    if isinstance(pad, tuple):
        data = F.pad(f64(x)[None], torch_pads(pad))
        out = F.conv2d(data, f64(w), f64(b), stride=stride, groups=groups)
    else:
        out = F.conv2d(f64(x)[None], f64(w), f64(b), stride=stride, padding=pad, groups=groups)
    return exact_int(out[0], "conv2d")


def fc_acc(x, w, b):
    out = F.linear(f64(x).reshape(-1), f64(w), f64(b))
    return exact_int(out, "linear")[:, None, None]


def maxpool(x, kernel, stride, pad, ceil_mode):
    """pad: one number for every side, or (top, left, bottom, right) padded with
    -inf (ignored by max); a window of padding alone would give -inf and fail."""
    if isinstance(pad, tuple):
        data = F.pad(f64(x)[None], torch_pads(pad), value=-np.inf)
        out = F.max_pool2d(data, kernel, stride, 0, ceil_mode=ceil_mode)
        if not torch.all(torch.isfinite(out)):
            raise ValueError("a pooling window holds no input element")
    else:
        out = F.max_pool2d(f64(x)[None], kernel, stride, pad, ceil_mode=ceil_mode)
    return exact_int(out[0], "max_pool2d").astype(np.int8)


def avgpool(x, kernel, stride, pad, ceil_mode):
    """pad as for maxpool; per-side padding adds zeros to both the data and the
    tensor of ones, so it adds nothing to the sums or the counts."""
    per_side = torch_pads(pad) if isinstance(pad, tuple) else None

    def window_sums(t):
        if per_side is not None:
            return F.avg_pool2d(F.pad(t[None], per_side), kernel, stride, 0,
                                ceil_mode=ceil_mode, divisor_override=1)[0]
        return F.avg_pool2d(t[None], kernel, stride, pad, ceil_mode=ceil_mode,
                            divisor_override=1)[0]
    data = f64(x)
    total = exact_int(window_sums(data), "avg_pool2d sum")
    count = exact_int(window_sums(torch.ones_like(data)), "avg_pool2d count")
    if count.min() < 1:
        raise ValueError("a pooling window holds no input element")
    return avg_round(total, count).astype(np.int8)


def global_avgpool(x):
    data = f64(x)
    total = exact_int(torch.sum(data, dim=(1, 2), keepdim=True), "global sum")
    count = x.shape[1] * x.shape[2]
    return avg_round(total, np.int64(count)).astype(np.int8)


def residual_add(a, b, mult_a, mult_b, shift, lo, hi):
    """Exact int64: clamp(rshift_round(a * Ma[c] + b * Mb[c], S[c]), lo, hi)."""
    ma = mult_a.astype(np.int64)[:, None, None]
    mb = mult_b.astype(np.int64)[:, None, None]
    s = shift.astype(np.int64)[:, None, None]
    total = a.astype(np.int64) * ma + b.astype(np.int64) * mb
    return np.clip(rshift_round(total, s), lo, hi).astype(np.int8)


# ----------------------------------------------------------------------------
# Case construction


def channel_mul(x, v, mult, shift, lo, hi):
    """torch.mul of the map by the [C][1][1] vector (broadcast), then requantised."""
    acc = exact_int(torch.mul(f64(x), f64(v)), "mul product")
    return requantise(acc, mult, shift, lo, hi)


def concat(a, b):
    return torch.cat([torch.from_numpy(a), torch.from_numpy(b)], dim=0).numpy()


def channel_slice(x, begin, end):
    return torch.narrow(torch.from_numpy(x), 0, begin, end - begin).numpy()


def upsample(x, scale):
    y = F.interpolate(f64(x)[None], scale_factor=scale, mode="nearest")[0]
    return exact_int(y, "upsample").astype(np.int8)


def int8_data(rng, shape, lo=INT8_MIN, hi=INT8_MAX):
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(np.int8)


def auto_requant(acc, clamp, rng):
    """Per-channel (M, S) that spread the channel's accumulators over about the
    clamp's span (the largest |acc| maps to 0.6..1.6 times the larger of |lo|,
    |hi|, so some outputs saturate and most do not); S is the largest shift that
    keeps M in 16 bits, minus a random 0..5 to vary M's magnitude."""
    target = max(abs(clamp[0]), abs(clamp[1]), 1)
    mult, shift = [], []
    for c in range(acc.shape[0]):
        peak = max(int(np.abs(acc[c]).max()), 1)
        ratio = target * rng.uniform(0.6, 1.6) / peak
        s_max = MAX_SHIFT
        while s_max > 0 and np.floor(ratio * 2.0**s_max + 0.5) > MULT_MAX:
            s_max -= 1
        s = max(s_max - int(rng.integers(0, 6)), 0)
        mult.append(int(min(np.floor(ratio * 2.0**s + 0.5), MULT_MAX)))
        shift.append(s)
    return np.array(mult, dtype=np.uint16), np.array(shift, dtype=np.uint8)


class Builder:
    """Collects cases and writes their files and the manifest."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.cases = []
        self.rng = np.random.default_rng(SEED)

    def _write(self, name, arrays):
        case_dir = self.out_dir / name
        case_dir.mkdir(parents=True)
        files = {}
        for key, (array, dtype) in arrays.items():
            array = np.ascontiguousarray(array)
            if array.dtype != np.dtype(dtype):
                raise TypeError(f"{name}/{key}: dtype {array.dtype}, expected {dtype}")
            np.save(case_dir / f"{key}.npy", array, allow_pickle=False)
            files[key] = f"{name}/{key}.npy"
        return files

    def _check_name(self, name):
        if not name.replace("_", "").isalnum() or any(c["name"] == name for c in self.cases):
            raise ValueError(f"case name '{name}' must be unique and [A-Za-z0-9_]+")

    def weighted(self, name, op, x, w, b, clamp, requant=None, geometry=None):
        """A conv or fc case: op 'conv' (geometry = (kernel, stride, pad, groups),
        pad one number or (top, left, bottom, right)) or 'fc'.

        requant: (mult, shift) arrays, or None to choose them from the accumulators.
        """
        self._check_name(name)
        if op == "conv":
            kernel, stride, pad, groups = geometry
            top, left, bottom, right = pad if isinstance(pad, tuple) else (pad,) * 4
            if w.shape[2] != kernel or max(top, left, bottom, right) >= kernel \
                    or x.shape[1] + top + bottom < kernel or x.shape[2] + left + right < kernel \
                    or x.shape[0] % groups or w.shape[0] % groups \
                    or w.shape[1] * groups != x.shape[0]:
                raise ValueError(f"{name}: impossible convolution geometry")
            acc = conv_acc(x, w, b, stride, pad, groups)
        else:
            acc = fc_acc(x, w, b)
        check_acc(acc, name)
        mult, shift = requant if requant is not None else auto_requant(acc, clamp, self.rng)
        mult = np.asarray(mult, dtype=np.uint16)
        shift = np.asarray(shift, dtype=np.uint8)
        if shift.max() > MAX_SHIFT or len(mult) != w.shape[0] or len(shift) != w.shape[0]:
            raise ValueError(f"{name}: bad requantisation parameters")
        lo, hi = clamp
        expected = requantise(acc, mult, shift, lo, hi)
        files = self._write(name, {
            "input": (x, np.int8), "weights": (w, np.int8), "bias": (b, np.int32),
            "mult": (mult, np.uint16), "shift": (shift, np.uint8),
            "expected": (expected, np.int8)})
        case = {"name": name, "op": op}
        if op == "conv" and isinstance(pad, tuple):
            case.update({"kernel": kernel, "stride": stride, "pad": list(pad), "groups": groups})
        elif op == "conv":
            if groups != 1:
                raise ValueError(f"{name}: give a grouped convolution's pads per side")
            case.update({"kernel": kernel, "stride": stride, "pad": pad})
        case.update({"lo": lo, "hi": hi, "files": files})
        self.cases.append(case)

    def conv(self, name, cin, h, w, cout, kernel, stride=1, pad=0, clamp=NONE, requant=None,
             x=None, weights=None, bias=None, groups=1):
        """pad: one number (the manifest's "pad": n) or a (top, left, bottom,
        right) tuple (written as "pad": [t, l, b, r] with "groups")."""
        x = int8_data(self.rng, (cin, h, w)) if x is None else x
        if weights is None:
            weights = int8_data(self.rng, (cout, cin // groups, kernel, kernel))
        if bias is None:
            bias = self.rng.integers(-20000, 20000, size=cout, endpoint=True).astype(np.int32)
        self.weighted(name, "conv", x, weights, bias, clamp, requant,
                      (kernel, stride, pad, groups))

    def fc(self, name, in_shape, cout, clamp=NONE, requant=None):
        x = int8_data(self.rng, in_shape)
        weights = int8_data(self.rng, (cout, int(np.prod(in_shape))))
        bias = self.rng.integers(-20000, 20000, size=cout, endpoint=True).astype(np.int32)
        self.weighted(name, "fc", x, weights, bias, clamp, requant)

    def pool(self, name, op, x, kernel, stride, pad=0, ceil_mode=False):
        """pad: one number, or (top, left, bottom, right) each below the kernel."""
        self._check_name(name)
        if isinstance(pad, tuple):
            if len(pad) != 4 or max(pad) >= kernel:
                raise ValueError(f"{name}: pads per side must be four values below the kernel")
        elif pad > kernel // 2:
            raise ValueError(f"{name}: PyTorch needs pooling pad <= kernel // 2")
        if isinstance(x, tuple):
            x = int8_data(self.rng, x)
        fn = maxpool if op == "maxpool" else avgpool
        expected = fn(x, kernel, stride, pad, ceil_mode)
        files = self._write(name, {"input": (x, np.int8), "expected": (expected, np.int8)})
        self.cases.append({"name": name, "op": op, "kernel": kernel, "stride": stride,
                           "pad": list(pad) if isinstance(pad, tuple) else pad,
                           "ceil_mode": ceil_mode, "files": files})

    def add(self, name, a, b, mult_a, mult_b, shift, clamp=NONE):
        """A residual add; a and b are arrays or a shape to draw both from."""
        self._check_name(name)
        if isinstance(a, tuple):
            a = int8_data(self.rng, a)
        if isinstance(b, tuple):
            b = int8_data(self.rng, b)
        mult_a = np.asarray(mult_a, dtype=np.uint16)
        mult_b = np.asarray(mult_b, dtype=np.uint16)
        shift = np.asarray(shift, dtype=np.uint8)
        if a.shape != b.shape or a.ndim != 3 or shift.max() > MAX_SHIFT \
                or not len(mult_a) == len(mult_b) == len(shift) == a.shape[0]:
            raise ValueError(f"{name}: bad add shapes or parameters")
        lo, hi = clamp
        expected = residual_add(a, b, mult_a, mult_b, shift, lo, hi)
        files = self._write(name, {
            "input": (a, np.int8), "input_b": (b, np.int8), "mult_a": (mult_a, np.uint16),
            "mult_b": (mult_b, np.uint16), "shift": (shift, np.uint8),
            "expected": (expected, np.int8)})
        self.cases.append({"name": name, "op": "add", "lo": lo, "hi": hi, "files": files})

    def global_avgpool(self, name, x):
        self._check_name(name)
        if isinstance(x, tuple):
            x = int8_data(self.rng, x)
        expected = global_avgpool(x)
        files = self._write(name, {"input": (x, np.int8), "expected": (expected, np.int8)})
        self.cases.append({"name": name, "op": "global_avgpool", "files": files})

    def mul(self, name, x, v, clamp=NONE, requant=None):
        """A channel-wise multiply; x, v arrays or shapes to draw them from; requant
        (mult, shift) or None for auto_requant."""
        self._check_name(name)
        if isinstance(x, tuple):
            x = int8_data(self.rng, x)
        if isinstance(v, tuple):
            v = int8_data(self.rng, v)
        if x.ndim != 3 or v.shape != (x.shape[0], 1, 1):
            raise ValueError(f"{name}: bad mul shapes")
        lo, hi = clamp
        if requant is None:
            acc = exact_int(torch.mul(f64(x), f64(v)), "mul product")
            mult, shift = auto_requant(acc, clamp, self.rng)
        else:
            mult = np.asarray(requant[0], dtype=np.uint16)
            shift = np.asarray(requant[1], dtype=np.uint8)
        expected = channel_mul(x, v, mult, shift, lo, hi)
        files = self._write(name, {
            "input": (x, np.int8), "input_b": (v, np.int8), "mult": (mult, np.uint16),
            "shift": (shift, np.uint8), "expected": (expected, np.int8)})
        self.cases.append({"name": name, "op": "mul", "lo": lo, "hi": hi, "files": files})

    def view(self, name, op, x, x_b=None, **params):
        """concat (x, x_b), slice (begin, end) or upsample (scale)."""
        self._check_name(name)
        if isinstance(x, tuple):
            x = int8_data(self.rng, x)
        arrays = {"input": (x, np.int8)}
        if op == "concat":
            if isinstance(x_b, tuple):
                x_b = int8_data(self.rng, x_b)
            arrays["input_b"] = (x_b, np.int8)
            expected = concat(x, x_b)
        elif op == "slice":
            expected = channel_slice(x, params["begin"], params["end"])
        else:
            expected = upsample(x, params["scale"])
        arrays["expected"] = (expected, np.int8)
        files = self._write(name, arrays)
        self.cases.append({"name": name, "op": op, **params, "files": files})

    def manifest(self):
        return {
            "generator": "scripts/make_reference_vectors.py",
            "seed": SEED,
            "files": "paths relative to this manifest; all .npy, C order, little-endian",
            "cases": self.cases,
        }


# ----------------------------------------------------------------------------
# The cases


def conv_cases(b):
    rng = b.rng
    b.conv("conv_k3_p1_odd", cin=3, h=7, w=9, cout=4, kernel=3, pad=1)
    b.conv("conv_k3_s2_p1_relu", cin=2, h=9, w=11, cout=5, kernel=3, stride=2, pad=1, clamp=RELU)
    b.conv("conv_k2_s3_stride_gt_kernel", cin=3, h=10, w=8, cout=3, kernel=2, stride=3)
    b.conv("conv_k1_image_1x1", cin=5, h=1, w=1, cout=3, kernel=1)
    b.conv("conv_k3_p1_image_1x1", cin=4, h=1, w=1, cout=2, kernel=3, pad=1)
    b.conv("conv_k5_p2_kernel_gt_input", cin=2, h=2, w=3, cout=3, kernel=5, pad=2)
    b.conv("conv_k7_s2_p3", cin=3, h=13, w=12, cout=4, kernel=7, stride=2, pad=3, clamp=RELU)
    b.conv("conv_k3_p2_pad_gt_half", cin=2, h=5, w=4, cout=3, kernel=3, pad=2)
    b.conv("conv_k4_s2_p1_even_kernel", cin=3, h=8, w=9, cout=2, kernel=4, stride=2, pad=1)
    b.conv("conv_relu6", cin=4, h=6, w=6, cout=4, kernel=3, pad=1, clamp=RELU6)
    b.conv("conv_clamp_negative", cin=3, h=6, w=5, cout=3, kernel=3, pad=1, clamp=NEGATIVE)
    b.conv("conv_clamp_single_value", cin=2, h=4, w=4, cout=2, kernel=3, pad=1, clamp=(7, 7))

    # Shift 0: y = clamp(acc * M): small inputs so most outputs stay in range.
    b.conv("conv_shift0", cin=1, h=5, w=5, cout=4, kernel=3, pad=1,
           x=int8_data(rng, (1, 5, 5), -3, 3),
           weights=int8_data(rng, (4, 1, 3, 3), -3, 3),
           bias=np.array([0, 5, -7, 60], dtype=np.int32),
           requant=([1, 2, 0, 3], [0, 0, 0, 0]))

    # Shift 47 with M = 65535: |acc * M| / 2^47 < 1, so outputs are -1, 0 or 1.
    # acc * 65535 crosses +-2^46 (the rounding point) at |acc| = 1073758208.25:
    # channels 2 and 3 sit on it, so small tap sums decide which way it rounds.
    cout = 6
    big = np.array([INT32_MAX - 300000, INT32_MIN + 300000, 1073758208, -1073758208,
                    2**29, -(2**29)], dtype=np.int32)
    b.conv("conv_shift47_mult65535", cin=2, h=6, w=6, cout=cout, kernel=3, pad=1, bias=big,
           requant=([MULT_MAX] * cout, [MAX_SHIFT] * cout))

    # Multiplier extremes per channel: 65535 and 0, with small and large shifts.
    b.conv("conv_mult_extremes", cin=3, h=5, w=7, cout=6, kernel=3, pad=1,
           requant=([MULT_MAX, 0, MULT_MAX, 0, 1, MULT_MAX],
                    [24, 0, 30, MAX_SHIFT, 0, MAX_SHIFT]))

    # Accumulators at the ends of int32 (full-range inputs and weights, 400 taps
    # at the centre, bias chosen so the centre reaches INT32_MAX / near INT32_MIN)
    # times M = 65535: the largest products acc * M the requantiser sees.
    b.conv("conv_large_acc", cin=16, h=5, w=5, cout=2, kernel=5, pad=2,
           x=np.full((16, 5, 5), INT8_MIN, dtype=np.int8),
           weights=np.stack([np.full((16, 5, 5), INT8_MIN, dtype=np.int8),
                             np.full((16, 5, 5), INT8_MAX, dtype=np.int8)]),
           bias=np.array([INT32_MAX - 400 * 16384, INT32_MIN + 400 * 16384], dtype=np.int32),
           requant=([MULT_MAX, MULT_MAX], [41, 41]))

    for i in range(N_RANDOM_CONV):
        kernel = int(rng.integers(1, 8))
        pad = int(rng.integers(0, kernel))
        stride = int(rng.integers(1, 5))
        h = int(rng.integers(max(1, kernel - 2 * pad), 13))
        w = int(rng.integers(max(1, kernel - 2 * pad), 13))
        clamp = CLAMPS[int(rng.integers(0, len(CLAMPS)))]
        b.conv(f"conv_random_{i:02d}", cin=int(rng.integers(1, 7)), h=h, w=w,
               cout=int(rng.integers(1, 7)), kernel=kernel, stride=stride, pad=pad, clamp=clamp)


def fc_cases(b):
    rng = b.rng
    b.fc("fc_flatten_chw", (4, 3, 3), 10)
    b.fc("fc_input_1x1x1", (1, 1, 1), 3, clamp=RELU)
    b.fc("fc_wide_relu6", (16, 4, 4), 16, clamp=RELU6)
    b.fc("fc_clamp_negative", (8, 2, 2), 5, clamp=NEGATIVE)
    b.fc("fc_mult_extremes", (6, 2, 3), 4,
         requant=([MULT_MAX, 0, MULT_MAX, 1], [MAX_SHIFT, 5, 20, 0]))
    for i in range(N_RANDOM_FC):
        shape = tuple(int(v) for v in rng.integers(1, 7, size=3))
        clamp = CLAMPS[int(rng.integers(0, len(CLAMPS)))]
        b.fc(f"fc_random_{i:02d}", shape, int(rng.integers(1, 13)), clamp=clamp)


def pool_cases(b, op):
    rng = b.rng
    b.pool(f"{op}_k2_s2_even", op, (3, 8, 8), 2, 2)
    b.pool(f"{op}_k3_s2_ceil_cut", op, (2, 8, 8), 3, 2, ceil_mode=True)     # last window 6..8
    b.pool(f"{op}_k3_s2_p1_ceil_cut", op, (2, 9, 10), 3, 2, 1, ceil_mode=True)
    b.pool(f"{op}_k2_s2_p1_ceil_drop", op, (2, 5, 5), 2, 2, 1, ceil_mode=True)  # 4th dropped
    b.pool(f"{op}_k3_s2_odd_floor", op, (2, 7, 9), 3, 2)
    b.pool(f"{op}_k2_s3_stride_gt_kernel", op, (2, 10, 11), 2, 3)
    b.pool(f"{op}_k2_s3_ceil_stride_gt_kernel", op, (2, 10, 11), 2, 3, ceil_mode=True)
    b.pool(f"{op}_k3_s1_p1", op, (3, 5, 7), 3, 1, 1)
    b.pool(f"{op}_k1_image_1x1", op, (4, 1, 1), 1, 1)
    b.pool(f"{op}_k3_p1_image_1x1", op, (3, 1, 1), 3, 1, 1)
    b.pool(f"{op}_k3_s2_p1_kernel_gt_input", op, (2, 2, 1), 3, 2, 1, ceil_mode=True)
    # Padding must be ignored, not read as zero: all-negative data would show it.
    b.pool(f"{op}_negative_p1", op, int8_data(rng, (2, 5, 6), INT8_MIN, -1), 3, 2, 1,
           ceil_mode=True)
    b.pool(f"{op}_extremes", op, int8_data(rng, (2, 6, 6), INT8_MAX - 1, INT8_MAX), 2, 2)
    b.pool(f"{op}_int8_min", op, np.full((1, 4, 4), INT8_MIN, dtype=np.int8), 3, 2, 1,
           ceil_mode=True)
    # Averages that fall exactly on .5 (both signs): 2 x 2 windows with sums 2 mod 4.
    ties = np.array([[[1, 0, -1, 0, 3, 2],
                      [0, 1, 0, -1, -4, -7],
                      [-3, 0, 5, 5, 7, 0],
                      [0, 1, 5, 7, -8, -9]]], dtype=np.int8)
    b.pool(f"{op}_half_ties", op, ties, 2, 2)
    for i in range(N_RANDOM_POOL):
        kernel = int(rng.integers(1, 5))
        pad = int(rng.integers(0, kernel // 2 + 1))
        stride = int(rng.integers(1, 5))
        h = int(rng.integers(max(1, kernel - 2 * pad), 12))
        w = int(rng.integers(max(1, kernel - 2 * pad), 12))
        b.pool(f"{op}_random_{i:02d}", op, (int(rng.integers(1, 5)), h, w), kernel, stride, pad,
               ceil_mode=bool(rng.integers(0, 2)))


def random_pads(rng, kernel, h, w):
    """Pads per side below the kernel, re-drawn until the padded map holds a window."""
    while True:
        pads = tuple(int(v) for v in rng.integers(0, kernel, size=4))
        if h + pads[0] + pads[2] >= kernel and w + pads[1] + pads[3] >= kernel:
            return pads


def grouped_conv_cases(b):
    """Depthwise (groups = C) and grouped convolutions, padding per side (ONNX
    order top, left, bottom, right)."""
    rng = b.rng
    b.conv("dwconv_k3_p1_odd", cin=4, h=7, w=9, cout=4, kernel=3, pad=(1, 1, 1, 1), groups=4)
    # TensorFlow SAME on an even map with stride 2: one pad row / column after.
    b.conv("dwconv_k3_s2_same_even_relu", cin=3, h=10, w=12, cout=3, kernel=3, stride=2,
           pad=(0, 0, 1, 1), groups=3, clamp=RELU)
    b.conv("dwconv_k3_s2_p1_odd_relu6", cin=5, h=9, w=11, cout=5, kernel=3, stride=2,
           pad=(1, 1, 1, 1), groups=5, clamp=RELU6)
    b.conv("dwconv_k5_p2_odd", cin=3, h=9, w=7, cout=3, kernel=5, pad=(2, 2, 2, 2), groups=3)
    b.conv("dwconv_k5_s2_asym", cin=4, h=11, w=13, cout=4, kernel=5, stride=2,
           pad=(2, 1, 1, 2), groups=4, clamp=(-5, 90))
    b.conv("dwconv_k5_s1_asym_relu", cin=2, h=5, w=7, cout=2, kernel=5, pad=(0, 3, 4, 1),
           groups=2, clamp=RELU)
    b.conv("dwconv_k3_multiplier2", cin=3, h=5, w=6, cout=6, kernel=3, pad=(1, 0, 1, 2),
           groups=3)    # two filters per input channel
    b.conv("dwconv_k3_p1_image_1x1", cin=3, h=1, w=1, cout=3, kernel=3, pad=(1, 1, 1, 1),
           groups=3)
    b.conv("dwconv_k5_kernel_gt_input", cin=2, h=2, w=3, cout=2, kernel=5, pad=(2, 2, 2, 2),
           groups=2)
    b.conv("dwconv_clamp_negative", cin=3, h=6, w=5, cout=3, kernel=3, stride=2,
           pad=(0, 1, 1, 0), groups=3, clamp=NEGATIVE)
    b.conv("gconv_g2_k3_asym", cin=4, h=7, w=6, cout=6, kernel=3, pad=(1, 0, 1, 2), groups=2)
    b.conv("gconv_g3_k3_s2_relu", cin=6, h=9, w=9, cout=3, kernel=3, stride=2,
           pad=(0, 1, 1, 0), groups=3, clamp=RELU)
    b.conv("gconv_g2_k5_s2_same", cin=4, h=8, w=11, cout=4, kernel=5, stride=2,
           pad=(1, 2, 2, 2), groups=2, clamp=RELU6)

    # Saturation: M = 65535 with small shifts drives most outputs to lo or hi.
    b.conv("dwconv_saturate", cin=4, h=5, w=5, cout=4, kernel=3, pad=(1, 1, 1, 1), groups=4,
           bias=np.zeros(4, dtype=np.int32), requant=([MULT_MAX] * 4, [8, 4, 12, 0]))
    b.conv("dwconv_saturate_relu", cin=3, h=7, w=5, cout=3, kernel=3, stride=2,
           pad=(0, 0, 1, 1), groups=3, clamp=RELU, requant=([MULT_MAX] * 3, [10, 6, 2]))
    # Multiplier extremes and shift 0 / 47 per channel.
    b.conv("dwconv_mult_extremes", cin=6, h=5, w=7, cout=6, kernel=3, pad=(1, 1, 1, 1),
           groups=6, requant=([MULT_MAX, 0, MULT_MAX, 0, 1, MULT_MAX],
                              [24, 0, 30, MAX_SHIFT, 0, MAX_SHIFT]))
    # Accumulators at the ends of int32 (9 taps of 16384 or of -16256 at the
    # centre) times M = 65535 with S = 41.
    b.conv("dwconv_large_acc", cin=2, h=3, w=3, cout=2, kernel=3, pad=(1, 1, 1, 1), groups=2,
           x=np.full((2, 3, 3), INT8_MIN, dtype=np.int8),
           weights=np.stack([np.full((1, 3, 3), INT8_MIN, dtype=np.int8),
                             np.full((1, 3, 3), INT8_MAX, dtype=np.int8)]),
           bias=np.array([INT32_MAX - 9 * 16384, INT32_MIN + 9 * 16256], dtype=np.int32),
           requant=([MULT_MAX, MULT_MAX], [41, 41]))

    for i in range(N_RANDOM_GROUPED):
        groups = int(rng.integers(2, 6))
        depthwise = bool(rng.integers(0, 2))     # one input channel per group
        cin = groups * (1 if depthwise else int(rng.integers(2, 4)))
        cout = groups * int(rng.integers(1, 3))
        kernel = int(rng.choice([1, 3, 3, 5, 5, 7]))
        stride = int(rng.integers(1, 4))
        h = int(rng.integers(1, 14))
        w = int(rng.integers(1, 14))
        pad = random_pads(rng, kernel, h, w)
        clamp = CLAMPS[int(rng.integers(0, len(CLAMPS)))]
        b.conv(f"gconv_random_{i:02d}", cin=cin, h=h, w=w, cout=cout, kernel=kernel,
               stride=stride, pad=pad, groups=groups, clamp=clamp)


def asym_conv_cases(b):
    """One group, padding per side."""
    rng = b.rng
    # TensorFlow SAME, stride 2: the odd total pad puts the extra row / column after.
    b.conv("conv_asym_k3_s2_same_even", cin=3, h=10, w=8, cout=4, kernel=3, stride=2,
           pad=(0, 0, 1, 1))
    b.conv("conv_asym_k2_s2_same_odd_relu", cin=2, h=7, w=9, cout=3, kernel=2, stride=2,
           pad=(0, 0, 1, 1), clamp=RELU)
    b.conv("conv_asym_k5_s1", cin=2, h=7, w=5, cout=3, kernel=5, pad=(2, 1, 2, 3), clamp=RELU6)
    b.conv("conv_asym_k3_top_only", cin=3, h=5, w=6, cout=2, kernel=3, pad=(2, 0, 0, 0))
    b.conv("conv_asym_k3_s2_saturate", cin=3, h=9, w=7, cout=3, kernel=3, stride=2,
           pad=(1, 0, 0, 1), requant=([MULT_MAX] * 3, [6, 10, 0]))
    for i in range(N_RANDOM_ASYM_CONV):
        kernel = int(rng.integers(1, 8))
        stride = int(rng.integers(1, 4))
        h = int(rng.integers(1, 13))
        w = int(rng.integers(1, 13))
        pad = random_pads(rng, kernel, h, w)
        clamp = CLAMPS[int(rng.integers(0, len(CLAMPS)))]
        b.conv(f"conv_asym_random_{i:02d}", cin=int(rng.integers(1, 6)), h=h, w=w,
               cout=int(rng.integers(1, 6)), kernel=kernel, stride=stride, pad=pad,
               clamp=clamp)


def asym_pool_cases(b, op):
    """Pools with padding per side; padded elements are ignored."""
    rng = b.rng
    b.pool(f"{op}_asym_k2_s2_same_odd", op, (2, 7, 9), 2, 2, (0, 0, 1, 1))
    b.pool(f"{op}_asym_k3_s2_same_even", op, (2, 8, 10), 3, 2, (0, 0, 1, 1))
    b.pool(f"{op}_asym_k3_s1", op, (2, 5, 7), 3, 1, (1, 0, 1, 2))
    b.pool(f"{op}_asym_k3_s2_ceil", op, (2, 9, 8), 3, 2, (2, 0, 0, 1), ceil_mode=True)
    b.pool(f"{op}_asym_negative", op, int8_data(rng, (2, 5, 6), INT8_MIN, -1), 3, 2,
           (0, 2, 1, 0))
    for i in range(N_RANDOM_ASYM_POOL):
        kernel = int(rng.integers(2, 5))
        stride = int(rng.integers(1, 4))
        h = int(rng.integers(1, 12))
        w = int(rng.integers(1, 12))
        pad = random_pads(rng, kernel, h, w)
        b.pool(f"{op}_asym_random_{i:02d}", op, (int(rng.integers(1, 4)), h, w), kernel, stride,
               pad)


def add_cases(b):
    rng = b.rng

    def mults(c, shift):
        """Multipliers near 2^S (a scale ratio of 0.3..1.2), in 16 bits."""
        ratio = rng.uniform(0.3, 1.2, size=c)
        return np.minimum(np.floor(ratio * 2.0 ** np.asarray(shift)), MULT_MAX)

    shift = np.array([12, 14, 9], dtype=np.uint8)
    b.add("add_odd", (3, 5, 7), (3, 5, 7), mults(3, shift), mults(3, shift), shift)
    b.add("add_relu", (3, 7, 7), (3, 7, 7), mults(3, shift), mults(3, shift), shift,
          clamp=RELU)
    b.add("add_relu6", (3, 3, 5), (3, 3, 5), mults(3, shift), mults(3, shift), shift,
          clamp=RELU6)
    b.add("add_clamp_negative", (3, 4, 3), (3, 4, 3), mults(3, shift), mults(3, shift), shift,
          clamp=NEGATIVE)
    b.add("add_image_1x1", (4, 1, 1), (4, 1, 1), [300, 1, 65535, 0], [7, 65535, 0, 2],
          [8, 16, 24, 0])
    # Multiplier 0 and 65535 on either input, shift 0 and 47.
    b.add("add_mult_extremes", (6, 5, 5), (6, 5, 5),
          [0, MULT_MAX, MULT_MAX, 0, 1, MULT_MAX], [MULT_MAX, 0, MULT_MAX, 0, 1, 1],
          [16, 16, MAX_SHIFT, 0, 0, 24])
    # Shift 0, M = 1: y = clamp(a + b), saturating at both ends.
    b.add("add_shift0_saturate", (2, 5, 5), (2, 5, 5), [1, 1], [1, 1], [0, 0])
    b.add("add_shift0_saturate_relu6", (2, 3, 3), (2, 3, 3), [1, 2], [1, 3], [0, 0],
          clamp=RELU6)
    # Extreme inputs with the largest multipliers: a * Ma + b * Mb at +-2^24.
    b.add("add_int8_extremes", np.full((4, 3, 3), INT8_MIN, dtype=np.int8),
          np.stack([np.full((3, 3), v, dtype=np.int8) for v in (INT8_MIN, INT8_MAX, 0, -1)]),
          [MULT_MAX] * 4, [MULT_MAX] * 4, [16, 17, 20, 24])
    b.add("add_int8_max_shift47", np.full((2, 3, 3), INT8_MAX, dtype=np.int8),
          np.full((2, 3, 3), INT8_MAX, dtype=np.int8), [MULT_MAX, 1], [MULT_MAX, 0],
          [MAX_SHIFT, MAX_SHIFT])
    # Halves both ways: (a + b) / 2 with odd sums, and (a + b) / 4 with sums 2 mod 4.
    ties_a = np.array([[[1, 2, -1, -2, 5, -5]], [[1, 3, -1, -3, 7, -7]]], dtype=np.int8)
    ties_b = np.array([[[0, 1, 0, -1, 0, 0]], [[1, 3, -1, -3, 3, -3]]], dtype=np.int8)
    b.add("add_half_ties", ties_a, ties_b, [1, 1], [1, 1], [1, 2])
    for i in range(N_RANDOM_ADD):
        c = int(rng.integers(1, 6))
        shape = (c, int(rng.integers(1, 10)), int(rng.integers(1, 10)))
        s = rng.integers(0, 17, size=c)
        clamp = CLAMPS[int(rng.integers(0, len(CLAMPS)))]
        b.add(f"add_random_{i:02d}", shape, shape, mults(c, s), mults(c, s), s, clamp=clamp)


def view_cases(b):
    """Concat, slice and upsample: data movement, exact by construction."""
    rng = b.rng
    b.view("concat_3_5", "concat", (3, 4, 5), (5, 4, 5))
    b.view("concat_1x1", "concat", (2, 1, 1), (1, 1, 1))
    b.view("slice_middle", "slice", (9, 3, 4), begin=3, end=7)
    b.view("slice_last", "slice", (5, 2, 2), begin=4, end=5)
    b.view("upsample_2", "upsample", (2, 3, 4), scale=2)
    b.view("upsample_3_1x1", "upsample", (3, 1, 1), scale=3)
    for i in range(N_RANDOM_VIEW):
        h, w = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        c = int(rng.integers(1, 12))
        b.view(f"concat_random_{i:02d}", "concat", (c, h, w), (int(rng.integers(1, 12)), h, w))
        begin = int(rng.integers(0, c))
        b.view(f"slice_random_{i:02d}", "slice", (c, h, w), begin=begin,
               end=int(rng.integers(begin + 1, c + 1)))
        b.view(f"upsample_random_{i:02d}", "upsample", (c, h, w), scale=int(rng.integers(2, 9)))


def global_avgpool_cases(b):
    rng = b.rng
    b.global_avgpool("gavgpool_7x7", (4, 7, 7))
    b.global_avgpool("gavgpool_1x1", (5, 1, 1))
    b.global_avgpool("gavgpool_3x5", (3, 3, 5))
    b.global_avgpool("gavgpool_13x13", (2, 13, 13))
    b.global_avgpool("gavgpool_all_min", np.full((2, 5, 5), INT8_MIN, dtype=np.int8))
    b.global_avgpool("gavgpool_all_max", np.full((2, 7, 7), INT8_MAX, dtype=np.int8))
    b.global_avgpool("gavgpool_extremes", int8_data(rng, (3, 9, 7), INT8_MAX - 1, INT8_MAX))
    # Means on .5 (both signs: sums +-3 and +-9 over 6 elements) and just
    # either side of it (sums +-24 and +-25 over 49 elements).
    ties = np.zeros((4, 3, 2), dtype=np.int8)
    for c, total in enumerate((3, -3, 9, -9)):
        ties[c, 0, 0] = total
    b.global_avgpool("gavgpool_half_ties", ties)
    near = np.zeros((4, 7, 7), dtype=np.int8)
    for c, total in enumerate((24, -24, 25, -25)):
        near[c, 3, 3] = total
    b.global_avgpool("gavgpool_near_ties", near)
    for i in range(N_RANDOM_GAP):
        shape = (int(rng.integers(1, 6)), int(rng.integers(1, 16)), int(rng.integers(1, 16)))
        b.global_avgpool(f"gavgpool_random_{i:02d}", shape)


def mul_cases(b):
    """Channel-wise multiply: products at the int8 ends (-128 * -128 = 2^14), M and S
    at their ends, halves both ways, every clamp."""
    rng = b.rng
    b.mul("mul_odd", (3, 5, 7), (3, 1, 1))
    b.mul("mul_relu", (4, 6, 6), (4, 1, 1), clamp=RELU)
    b.mul("mul_relu6", (3, 3, 5), (3, 1, 1), clamp=RELU6)
    b.mul("mul_clamp_negative", (3, 4, 3), (3, 1, 1), clamp=NEGATIVE)
    b.mul("mul_image_1x1", (5, 1, 1), (5, 1, 1))
    # Products of the int8 ends: 16384, -16256, 16129 and 0 with M, S at their ends.
    ends = np.stack([np.full((3, 3), v, dtype=np.int8) for v in (INT8_MIN, INT8_MIN, INT8_MAX, 0)])
    b.mul("mul_int8_extremes", ends, np.array([INT8_MIN, INT8_MAX, INT8_MAX, INT8_MIN],
                                              dtype=np.int8).reshape(4, 1, 1),
          requant=([MULT_MAX, MULT_MAX, 1, MULT_MAX], [MAX_SHIFT, 16, 0, 0]))
    b.mul("mul_mult_extremes", (4, 4, 4), (4, 1, 1),
          requant=([0, MULT_MAX, 1, 32768], [0, 24, 0, MAX_SHIFT]))
    # x * s / 2 and / 4 on exact halves of both signs: round half toward +infinity.
    ties = np.array([[[1, -1, 3, -3, 5, -5]], [[1, -1, 3, -3, 2, -2]]], dtype=np.int8)
    b.mul("mul_half_ties", ties, np.array([1, 2], dtype=np.int8).reshape(2, 1, 1),
          requant=([1, 1], [1, 2]))
    for i in range(N_RANDOM_MUL):
        c = int(rng.integers(1, 20))
        shape = (c, int(rng.integers(1, 10)), int(rng.integers(1, 10)))
        clamp = CLAMPS[int(rng.integers(0, len(CLAMPS)))]
        b.mul(f"mul_random_{i:02d}", shape, (c, 1, 1), clamp=clamp)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", type=Path, default=REPO / "tests" / "data" / "reference",
                        help="output directory (replaced; must be empty or a previous output)")
    args = parser.parse_args()

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    out = args.out_dir
    if out.exists():
        if any(out.iterdir()) and not (out / "manifest.json").is_file():
            print(f"error: {out} is not empty and holds no manifest.json; not replacing it",
                  file=sys.stderr)
            return 1
        shutil.rmtree(out)
    out.mkdir(parents=True)

    b = Builder(out)
    conv_cases(b)
    fc_cases(b)
    pool_cases(b, "maxpool")
    pool_cases(b, "avgpool")
    # Added after the cases above, so theirs draw the same random numbers as before.
    grouped_conv_cases(b)
    asym_conv_cases(b)
    asym_pool_cases(b, "maxpool")
    asym_pool_cases(b, "avgpool")
    add_cases(b)
    global_avgpool_cases(b)
    view_cases(b)
    mul_cases(b)
    (out / "manifest.json").write_text(json.dumps(b.manifest(), indent=1) + "\n")

    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    counts = {op: sum(c["op"] == op for c in b.cases)
              for op in ("conv", "fc", "maxpool", "avgpool", "add", "global_avgpool", "concat",
                         "slice", "upsample", "mul")}
    print(f"wrote {len(b.cases)} cases ({counts}) to {out}, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
