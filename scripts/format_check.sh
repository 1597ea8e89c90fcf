#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C and C++ sources follow .clang-format (docs/style.md): every tracked
# .c/.cc/.cpp/.h/.hpp file except the generated ones (their first lines say
# GENERATED; config_in_sync compares them with their generators instead).
#   scripts/format_check.sh          check, list the files that differ (exit 1)
#   scripts/format_check.sh --fix    reformat them in place
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "usage: scripts/format_check.sh [--fix]" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null ||
  { echo "format: clang-format not found (run 'make setup')" >&2; exit 2; }

files=()
while IFS= read -r f; do
  head -n 3 "$f" | grep -q "GENERATED" && continue
  files+=("$f")
done < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp')

if ((fix)); then
  clang-format -i --style=file "${files[@]}"
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'format: %s differs from .clang-format\n' "${bad[@]}"
  echo "format: ${#bad[@]} of ${#files[@]} files differ; scripts/format_check.sh --fix formats them"
  exit 1
fi
echo "format: ${#files[@]} C/C++ files follow .clang-format"
