#!/usr/bin/env bash
# verilator --lint-only -Wall over every module in rtl/, each as its own top,
# so unused-top modules are linted too. Waivers live in per-file rtl/*.vlt.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(rtl/strata_cfg_pkg.sv rtl/strata_pkg.sv)
# Further packages (generated maps: strata_csr_pkg, strata_isa_pkg) after the two base ones.
for p in rtl/*_pkg.sv; do
  case "$p" in rtl/strata_cfg_pkg.sv | rtl/strata_pkg.sv) ;; *) pkgs+=("$p") ;; esac
done
waivers=(rtl/*.vlt)
[[ -e "${waivers[0]}" ]] || waivers=()
status=0
for f in rtl/*.sv; do
  case "$f" in *_pkg.sv) continue ;; esac
  top=$(basename "$f" .sv)
  others=()
  for g in rtl/*.sv; do
    case "$g" in *_pkg.sv) ;; *) others+=("$g") ;; esac
  done
  if ! out=$(verilator --lint-only -Wall --assert -Irtl "${waivers[@]}" "${pkgs[@]}" \
        "${others[@]}" --top-module "$top" 2>&1); then
    echo "$out"
    echo "lint: $f FAILED"
    status=1
  elif [[ -n "$out" ]]; then
    echo "$out"
    status=1
  fi
done
((status == 0)) && echo "lint: $(ls rtl/*.sv | wc -l) files clean (verilator -Wall)"
exit $status
