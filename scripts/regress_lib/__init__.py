# SPDX-License-Identifier: Apache-2.0
"""Strata nightly regression (scripts/regress, docs/regression.md).

Modules:
  worklist  ctest test list, seeds, work items, sharding, rerun files
  runner    parallel execution with per-run timeouts and resource locks
  report    results.json, JUnit XML, summary.md, failing_seeds.txt, merging
  coverage  Verilator coverage merge, per-file line/toggle figures, HTML
  cli       the command line
"""
