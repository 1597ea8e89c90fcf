#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hand-made seed inputs of the libFuzzer harnesses (sw/fuzz/) and
the parameter files the network_yaml harness loads (tests/fuzz/weights/).

  /usr/bin/python3 tests/fuzz/make_seeds.py      # from the repository root

Deterministic (fixed NumPy seed). It (re)writes only the named files below.
The files named by a SHA-1 sum (all of tests/fuzz/compile_run/, some of npy/
and network_yaml/) are inputs the fuzzers found, picked by the code edges
they reach (docs/regression.md, Fuzzing); this script leaves them alone.
"""
import io
import pathlib
import shutil
import struct

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
rng = np.random.default_rng(31)


def npy_bytes(a: np.ndarray, version=None) -> bytes:
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def raw_npy(header: str, data: bytes = b"", version=(1, 0)) -> bytes:
    """A .npy file with a hand-written header dict (padded as NumPy pads it)."""
    h = header.encode("latin1")
    prefix = 10 if version[0] == 1 else 12
    h += b" " * ((64 - (prefix + len(h) + 1) % 64) % 64) + b"\n"
    length = struct.pack("<H", len(h)) if version[0] == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes(version) + length + h + data


def write(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def npy_seeds(d: pathlib.Path) -> None:
    ok = {
        "int8_2x3": np.arange(-3, 3, dtype=np.int8).reshape(2, 3),
        "uint8_vec": np.array([0, 1, 255], dtype=np.uint8),
        "int16_3d": np.arange(12, dtype=np.int16).reshape(1, 3, 4) - 6,
        "uint16_vec": np.array([0, 65535, 7], dtype=np.uint16),
        "int32_4d": np.arange(16, dtype=np.int32).reshape(2, 2, 2, 2) * 1000003,
        "scalar_int8": np.array(5, dtype=np.int8),
        "empty_int32": np.zeros((0,), dtype=np.int32),
        "empty_2d_uint16": np.zeros((3, 0), dtype=np.uint16),
    }
    for name, a in ok.items():
        write(d / f"{name}.npy", npy_bytes(a))
    write(d / "v2_int8.npy", npy_bytes(np.arange(5, dtype=np.int8), version=(2, 0)))
    write(d / "v3_int16.npy", npy_bytes(np.arange(3, dtype=np.int16), version=(3, 0)))
    write(d / "fortran_int8.npy", npy_bytes(np.asfortranarray(np.arange(6, dtype=np.int8).reshape(2, 3))))
    write(d / "big_endian_int16.npy", npy_bytes(np.arange(3, dtype=">i2")))
    write(d / "float32.npy", npy_bytes(np.arange(3, dtype=np.float32)))
    whole = npy_bytes(np.arange(8, dtype=np.int32))
    write(d / "truncated_data.npy", whole[:-3])
    write(d / "trailing_bytes.npy", whole + b"\0\0")
    write(d / "truncated_header.npy", whole[:20])
    write(d / "bad_magic.npy", b"\x93NUMPZ" + whole[6:])
    write(d / "version_9.npy", whole[:6] + b"\x09\x00" + whole[8:])
    write(d / "huge_dims.npy", raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': "
                                       "(4294967296, 4294967296), }"))
    write(d / "huge_count.npy", raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': "
                                        "(65536, 65536, 65536), }"))
    write(d / "dim_over_limit.npy", raw_npy("{'descr': '|u1', 'fortran_order': False, 'shape': "
                                            "(2147483649,), }"))
    write(d / "unknown_key.npy", raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (1,), "
                                         "'x': 1, }", b"\1"))
    write(d / "missing_shape.npy", raw_npy("{'descr': '|i1', 'fortran_order': False, }", b"\1"))
    write(d / "unterminated.npy", raw_npy("{'descr': '|i1, 'fortran_order': False, 'shape': (1,)}"))
    write(d / "negative_dim.npy", raw_npy("{'descr': '|i1', 'fortran_order': False, "
                                          "'shape': (-1,), }"))
    write(d / "double_quotes.npy", raw_npy('{"descr": "<u2", "fortran_order": False, '
                                           '"shape": (2,), }', b"\1\0\2\0"))
    write(d / "v2_long_header_len.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{")
    write(d / "empty.npy", b"")


def params(d: pathlib.Path, stem: str, cout: int, wshape: tuple, files=("weight", "bias", "mult",
                                                                         "shift")) -> None:
    if "weight" in files:
        write(d / f"{stem}_weight.npy", npy_bytes(rng.integers(-128, 128, wshape, dtype=np.int8)))
    if "bias" in files:
        write(d / f"{stem}_bias.npy", npy_bytes(rng.integers(-2000, 2000, (cout,), dtype=np.int32)))
    if "mult" in files:
        write(d / f"{stem}_mult.npy", npy_bytes(rng.integers(1, 65536, (cout,), dtype=np.uint16)))
    if "shift" in files:
        write(d / f"{stem}_shift.npy", npy_bytes(rng.integers(8, 24, (cout,), dtype=np.uint8)))


# Networks whose parameters are in tests/fuzz/weights/ (the harness loads them).
TINY = """name: tiny
input: [1, 8, 8]
layers:
  - {name: conv1, type: conv, out_channels: 4, kernel: 3, pad: 1, activation: relu}
  - {name: pool1, type: maxpool, kernel: 2}
  - {name: fc1, type: fc, out_features: 10}
"""
TINY2 = """# parameter files in a subdirectory, inline and per-channel requantisation
name: tiny2
input: [3, 6, 6]
layers:
  - name: c
    type: conv
    out_channels: 8
    kernel: 3
    stride: 1
    pad: 1
    activation: {clamp: [0, 96]}
    weights: sub/c_w.npy
    bias: sub/c_b.npy
    requant: {multiplier: [1, 2, 3, 4, 5, 6, 7, 8], shift: [8, 9, 10, 11, 12, 13, 14, 15]}
  - {name: p, type: avgpool, kernel: 3, stride: 2, pad: 1, ceil_mode: true}
  - {name: r, type: relu}
  - {name: fl, type: flatten}
  - name: f
    type: fc
    out_features: 5
    activation: none
    requant: {multiplier: 100, shift: f_shift.npy}
  - {name: k, type: clamp, lo: -5, hi: 5}
"""
TINY_BAD = """# parameter files that exist but are wrong: dtype, order, length, shift range
name: tiny_bad
input: [2, 4, 4]
layers:
  - {name: bd, type: conv, out_channels: 2, kernel: 1, weights: bad_dtype.npy}
  - {name: fo, type: conv, out_channels: 2, kernel: 1, weights: fortran.npy}
  - {name: tr, type: conv, out_channels: 2, kernel: 1, weights: truncated.npy}
  - {name: sh, type: fc, out_features: 3, requant: {multiplier: 1, shift: shift48.npy}}
"""
ESCAPES = """name: escapes
input: [1, 2, 2]
layers:
  - {name: a, type: conv, out_channels: 1, kernel: 1, weights: ../weights/conv1_weight.npy}
  - {name: b, type: conv, out_channels: 1, kernel: 1, weights: /etc/passwd.npy}
  - {name: c, type: conv, out_channels: 1, kernel: 1, weights: sub}
"""
MALFORMED = {
    "duplicate_key.yaml": "name: d\ninput: [1, 2, 2]\ninput: [1, 2, 2]\nlayers:\n  - {name: r, type: relu}\n",
    "unknown_key.yaml": "name: u\ninput: [1, 4, 4]\nlayers:\n  - {name: p, type: maxpool, kernel: 2, strdie: 2}\n",
    "typed_values.yaml": "name: t\ninput: [\"3\", 3.0, 0x3]\nlayers:\n  - {name: r, type: relu}\n",
    "huge_input.yaml": "name: h\ninput: [65535, 65535, 65535]\nlayers:\n  - {name: f, type: flatten}\n",
    "bad_clamp.yaml": "name: c\ninput: [1, 1, 1]\nlayers:\n  - {name: c, type: clamp, lo: 5, hi: -5}\n",
    "anchors.yaml": "name: a\ninput: &i [1, 2, 2]\nlayers:\n  - &l {name: r, type: relu}\n  - *l\n",
    "not_a_map.yaml": "- 1\n- 2\n",
    "syntax_error.yaml": "name: s\ninput: [1, 2\nlayers: {\n",
    "empty_layers.yaml": "name: e\ninput: [1, 2, 2]\nlayers: []\n",
    "kernel_too_big.yaml": "name: k\ninput: [1, 3, 3]\nlayers:\n  - {name: c, type: conv, out_channels: 1, kernel: 5}\n",
    "requant_lists.yaml": ("name: q\ninput: [1, 2, 2]\nlayers:\n  - {name: c, type: conv, out_channels: 2, "
                           "kernel: 1, requant: {multiplier: [1], shift: [48, 1]}}\n"),
}


def weights(d: pathlib.Path) -> None:
    if d.exists():
        shutil.rmtree(d)
    params(d, "conv1", 4, (4, 1, 3, 3))
    params(d, "fc1", 10, (10, 64))
    write(d / "sub" / "c_w.npy", npy_bytes(rng.integers(-128, 128, (8, 3, 3, 3), dtype=np.int8)))
    write(d / "sub" / "c_b.npy", npy_bytes(rng.integers(-500, 500, (8,), dtype=np.int32)))
    params(d, "f", 5, (5, 8 * 3 * 3), files=("weight", "bias"))
    write(d / "f_shift.npy", npy_bytes(np.full((5,), 12, dtype=np.uint8)))
    write(d / "bad_dtype.npy", npy_bytes(np.ones((2, 2, 1, 1), dtype=np.int32)))
    params(d, "bd", 2, (2, 2, 1, 1), files=("bias", "mult", "shift"))
    write(d / "fortran.npy", npy_bytes(np.asfortranarray(np.ones((2, 2, 1, 1), dtype=np.int8))))
    params(d, "fo", 2, (2, 2, 1, 1), files=("bias", "mult", "shift"))
    write(d / "truncated.npy", npy_bytes(np.ones((2, 2, 1, 1), dtype=np.int8))[:-1])
    params(d, "tr", 2, (2, 2, 1, 1), files=("bias", "mult", "shift"))
    write(d / "shift48.npy", npy_bytes(np.array([1, 48, 2], dtype=np.uint8)))
    params(d, "sh", 3, (3, 32), files=("weight", "bias"))


def yaml_seeds(d: pathlib.Path) -> None:
    for src in sorted((ROOT / "examples").glob("*.yaml")) + [ROOT / "examples/digits/digits.yaml"]:
        write(d / src.name, src.read_bytes())
    for name, text in {"tiny.yaml": TINY, "tiny2.yaml": TINY2, "tiny_bad.yaml": TINY_BAD,
                       "escapes.yaml": ESCAPES, **MALFORMED}.items():
        write(d / name, text.encode())


if __name__ == "__main__":
    npy_seeds(HERE / "npy")
    weights(HERE / "weights")
    yaml_seeds(HERE / "network_yaml")
