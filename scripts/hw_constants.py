#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The numeric limits of the hardware, read from config/default.yaml.

The one source of the configuration (scripts/gen_config.py turns it into the
RTL package and sw/include/strata/hw_config.hpp); the Python scripts take the
requantisation limits from here instead of writing them again:

  MAX_SHIFT   the largest requantisation shift S (max_shift)
  MULT_MAX    the largest multiplier M, 2^mult_width - 1

Reads the file's top-level `key: integer` lines with a regular expression, so
it needs no YAML package (the import script runs in the project venv, which
has none).
"""
import pathlib
import re

CONFIG = pathlib.Path(__file__).resolve().parent.parent / "config" / "default.yaml"


def _read(path):
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^(\w+):\s*(-?\d+)\s*(#.*)?$", line)
        if m:
            values[m.group(1)] = int(m.group(2))
    return values


_VALUES = _read(CONFIG)
MAX_SHIFT = _VALUES["max_shift"]
MULT_MAX = (1 << _VALUES["mult_width"]) - 1
