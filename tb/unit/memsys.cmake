# SPDX-License-Identifier: Apache-2.0
# Memory-system benches (engineer memsys): CSR block, dependency semaphores,
# and the memory system end to end (CSRs, controller, fetch, semaphores, AXI
# read arbiter, load and store engines, banks) against the C++ AXI memory
# model (sim/axi_mem_model.hpp). Included by tb/CMakeLists.txt.

# The committed register-map views must match config/registers.yaml.
add_test(NAME registers_in_sync
         COMMAND ${STRATA_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/gen_registers.py --check
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(registers_in_sync PROPERTIES LABELS "lint")

strata_bench(strata_csr_tests
  TOP strata_csr_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_csr_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_csr_test.cpp)

strata_bench(strata_dep_sems_tests
  TOP strata_dep_sems
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_dep_sems_test.cpp
  PARAMS -GSemWidth=20)

# Default configuration; 17-bit semaphores so that overflow (an error) is
# reachable with three releases.
strata_bench(strata_memsys_tests
  TOP strata_memsys
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_memsys_test.cpp
  PARAMS -GSemWidth=17)
target_compile_definitions(strata_memsys_tests PRIVATE STRATA_BENCH_SEM_WIDTH=17)

# Wide configuration: N = 32 (256-bit words) on a 128-bit AXI bus, so a word
# is two beats, a beat holds two parameter entries and an instruction is four
# beats: the gather / split paths the default configuration does not use.
strata_bench(strata_memsys_wide_tests
  TOP strata_memsys
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_memsys_test.cpp
  PARAMS -GSemWidth=17 -GLanes=32 -GAxiDataWidth=128)
target_compile_definitions(strata_memsys_wide_tests PRIVATE STRATA_BENCH_SEM_WIDTH=17
  STRATA_BENCH_LANES=32 STRATA_BENCH_AXI_BITS=128 STRATA_MEMSYS_SUITE=StrataMemsysN32Axi128)

# Sparse build (Sparse = 1): strata_banks with the second compute read port
# (every bank built twice) and LOAD CONTROL through the PE write port, on the
# default configuration otherwise; the whole suite runs, CONFIG says sparse.
strata_bench(strata_memsys_sparse_tests
  TOP strata_memsys
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_memsys_test.cpp
  PARAMS -GSemWidth=17 -GSparse=1'b1)
target_compile_definitions(strata_memsys_sparse_tests PRIVATE STRATA_BENCH_SEM_WIDTH=17
  STRATA_BENCH_SPARSE=1 STRATA_MEMSYS_SUITE=StrataMemsysSparse)

# strata_fifo in every (Depth, OutReg) variant the RTL uses, and with write-enable
# copies, against a queue model.
strata_bench(strata_fifo_tests
  TOP strata_fifo_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_fifo_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_fifo_test.cpp)
