# Compute-block benches (engineer rtl-compute): PE, PE array, activation
# stager (inside the sparse PE), requantiser. Included by tb/CMakeLists.txt.
# Each bench is its own GoogleTest binary; the compile definitions tell the
# shared bench source (tb/unit/pe_bench_util.hpp) which configuration it checks.

set(STRATA_PE_RTL
  ${STRATA_RTL_DIR}/strata_fifo.sv
  ${STRATA_RTL_DIR}/strata_credit_fifo.sv
  ${STRATA_RTL_DIR}/strata_ram_1r1w.sv
  ${STRATA_RTL_DIR}/strata_adder_tree.sv
  ${STRATA_RTL_DIR}/strata_act_stager.sv
  ${STRATA_RTL_DIR}/strata_pe.sv
)

# strata_pe, default configuration (dense).
strata_bench(strata_pe_test
  TOP strata_pe
  RTL ${STRATA_PE_RTL}
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_test.cpp)

# strata_act_stager, inside the sparse PE (strata_pe, Sparse = 1).
strata_bench(strata_act_stager_test
  TOP strata_pe
  RTL ${STRATA_PE_RTL}
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_act_stager_test.cpp
  PARAMS -GSparse=1'b1)
target_compile_definitions(strata_act_stager_test PRIVATE STRATA_BENCH_SPARSE=1)
