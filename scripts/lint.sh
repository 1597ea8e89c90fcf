#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# verilator --lint-only -Wall over every module of rtl/manifest.txt, each as its
# own top, so unused-top modules are linted too. Waivers live in per-file .vlt
# files listed in the manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
# The manifest in order: waivers and packages, the include folders, the modules.
pkgs=()
incdirs=()
modules=()
while read -r line; do
  line=${line%%#*}
  line=${line//[[:space:]]/}
  [[ -n "$line" ]] || continue
  f=rtl/$line
  [[ -e "$f" ]] || { echo "lint: rtl/manifest.txt names $f, which does not exist"; exit 1; }
  case "$f" in
    *.vlt | *_pkg.sv) pkgs+=("$f") ;;
    *.svh) incdirs+=("-I$(dirname "$f")") ;;
    *.sv) modules+=("$f") ;;
  esac
done < rtl/manifest.txt
status=0
for f in "${modules[@]}"; do
  top=$(basename "$f" .sv)
  if ! out=$(verilator --lint-only -Wall --assert "${incdirs[@]}" "${pkgs[@]}" \
        "${modules[@]}" --top-module "$top" 2>&1); then
    echo "$out"
    echo "lint: $f FAILED"
    status=1
  elif [[ -n "$out" ]]; then
    echo "$out"
    status=1
  fi
done
# Once more with every package and module in file-name order, as a tool that
# globs rtl/ reads them: no package may depend on one that sorts after it.
mapfile -t sorted_pkgs < <(printf '%s\n' "${pkgs[@]}" | grep '_pkg\.sv$' | LC_ALL=C sort)
mapfile -t sorted_modules < <(printf '%s\n' "${modules[@]}" | LC_ALL=C sort)
if ! out=$(verilator --lint-only -Wall --assert "${incdirs[@]}" rtl/pkg/strata_pkg.vlt \
      "${sorted_pkgs[@]}" "${sorted_modules[@]}" --top-module strata_top 2>&1) || [[ -n "$out" ]]; then
  echo "$out"
  echo "lint: the design in file-name order FAILED"
  status=1
fi
((status == 0)) && echo "lint: ${#modules[@]} modules clean (verilator -Wall), also in file-name order"
exit $status
