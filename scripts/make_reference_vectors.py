#!/usr/bin/python3
"""Reference vectors for the numerics contract, computed with PyTorch.

An independent check of the golden model (sw/src/numerics.cpp): every layer
operation is computed here by PyTorch in float64 on integer-valued tensors
(exact: every accumulator is an integer far below 2^53), then requantised or
averaged by the contract's integer rules in exact int64 numpy:

  conv    torch.nn.functional.conv2d (bias, stride, padding), then
          y = clamp(rshift_round(acc * M[c], S[c]), lo, hi)
  fc      torch.nn.functional.linear on the input flattened in C, H, W order,
          then the same requantisation
  maxpool torch.nn.functional.max_pool2d (padding, ceil_mode)
  avgpool sum and count of the valid elements of each window from
          torch.nn.functional.avg_pool2d(divisor_override=1) on the data and on
          a tensor of ones (padded zeros add nothing to either), then
          floor((2 * sum + n) / (2 * n))

Output: tests/data/reference/<case>/{input,weights,bias,mult,shift,expected}.npy
and tests/data/reference/manifest.json, read by sw/tests/reference_test.cpp.
Deterministic (seeded): running it twice gives identical files.

Usage: /usr/bin/python3 scripts/make_reference_vectors.py [--out-dir DIR]
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parent.parent
SEED = 7031
N_RANDOM_CONV = 12
N_RANDOM_FC = 4
N_RANDOM_POOL = 6         # of each kind

INT8_MIN, INT8_MAX = -128, 127
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MULT_MAX = 65535
MAX_SHIFT = 47
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


def conv_acc(x, w, b, stride, pad):
    out = F.conv2d(f64(x)[None], f64(w), f64(b), stride=stride, padding=pad)
    return exact_int(out[0], "conv2d")


def fc_acc(x, w, b):
    out = F.linear(f64(x).reshape(-1), f64(w), f64(b))
    return exact_int(out, "linear")[:, None, None]


def maxpool(x, kernel, stride, pad, ceil_mode):
    out = F.max_pool2d(f64(x)[None], kernel, stride, pad, ceil_mode=ceil_mode)
    return exact_int(out[0], "max_pool2d").astype(np.int8)


def avgpool(x, kernel, stride, pad, ceil_mode):
    def window_sums(t):
        return F.avg_pool2d(t[None], kernel, stride, pad, ceil_mode=ceil_mode,
                            divisor_override=1)[0]
    data = f64(x)
    total = exact_int(window_sums(data), "avg_pool2d sum")
    count = exact_int(window_sums(torch.ones_like(data)), "avg_pool2d count")
    if count.min() < 1:
        raise ValueError("a pooling window holds no input element")
    return avg_round(total, count).astype(np.int8)


# ----------------------------------------------------------------------------
# Case construction


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
        """A conv or fc case: op 'conv' (geometry = (kernel, stride, pad)) or 'fc'.

        requant: (mult, shift) arrays, or None to choose them from the accumulators.
        """
        self._check_name(name)
        if op == "conv":
            kernel, stride, pad = geometry
            if w.shape[2] != kernel or pad >= kernel or x.shape[1] + 2 * pad < kernel \
                    or x.shape[2] + 2 * pad < kernel:
                raise ValueError(f"{name}: impossible convolution geometry")
            acc = conv_acc(x, w, b, stride, pad)
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
        if op == "conv":
            case.update({"kernel": kernel, "stride": stride, "pad": pad})
        case.update({"lo": lo, "hi": hi, "files": files})
        self.cases.append(case)

    def conv(self, name, cin, h, w, cout, kernel, stride=1, pad=0, clamp=NONE, requant=None,
             x=None, weights=None, bias=None):
        x = int8_data(self.rng, (cin, h, w)) if x is None else x
        weights = int8_data(self.rng, (cout, cin, kernel, kernel)) if weights is None else weights
        if bias is None:
            bias = self.rng.integers(-20000, 20000, size=cout, endpoint=True).astype(np.int32)
        self.weighted(name, "conv", x, weights, bias, clamp, requant, (kernel, stride, pad))

    def fc(self, name, in_shape, cout, clamp=NONE, requant=None):
        x = int8_data(self.rng, in_shape)
        weights = int8_data(self.rng, (cout, int(np.prod(in_shape))))
        bias = self.rng.integers(-20000, 20000, size=cout, endpoint=True).astype(np.int32)
        self.weighted(name, "fc", x, weights, bias, clamp, requant)

    def pool(self, name, op, x, kernel, stride, pad=0, ceil_mode=False):
        self._check_name(name)
        if pad > kernel // 2:
            raise ValueError(f"{name}: PyTorch needs pooling pad <= kernel // 2")
        if isinstance(x, tuple):
            x = int8_data(self.rng, x)
        fn = maxpool if op == "maxpool" else avgpool
        expected = fn(x, kernel, stride, pad, ceil_mode)
        files = self._write(name, {"input": (x, np.int8), "expected": (expected, np.int8)})
        self.cases.append({"name": name, "op": op, "kernel": kernel, "stride": stride,
                           "pad": pad, "ceil_mode": ceil_mode, "files": files})

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
    (out / "manifest.json").write_text(json.dumps(b.manifest(), indent=1) + "\n")

    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    counts = {op: sum(c["op"] == op for c in b.cases) for op in ("conv", "fc", "maxpool",
                                                                  "avgpool")}
    print(f"wrote {len(b.cases)} cases ({counts}) to {out}, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
