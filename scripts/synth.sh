#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Strata FPGA synthesis: Yosys (+ nextpnr-ecp5 for ECP5) on one RTL top.
#   scripts/synth.sh --target ecp5|xilinx|gowin [--top MODULE] [--config YAML]
#                    [--params "Name=value ..."] [--speeds 8,6] [--seeds 1,2,3]
#                    [--out DIR]
# Needs the .venv tools: STRATA_SETUP_FPGA=1 scripts/setup.sh (`make synth`
# does that first). See docs/fpga.md.
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 scripts/synth/flow.py "$@"
