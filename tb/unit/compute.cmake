# SPDX-License-Identifier: Apache-2.0
# Compute-block benches (engineer rtl-compute): PE, PE array, activation
# stager (inside the sparse PE), requantiser. Included by tb/CMakeLists.txt.
# Each bench is its own GoogleTest binary; the compile definitions tell the
# shared bench source (tb/unit/pe_bench_util.hpp) which configuration it checks.

# The default configuration's figures, read from the single source.
file(STRINGS ${CMAKE_SOURCE_DIR}/config/default.yaml _strata_cfg_lines
     REGEX "^(lanes|pes|pe_cache_depth):")
foreach(_line IN LISTS _strata_cfg_lines)
  if(_line MATCHES "^([a-z_]+): *([0-9]+)")
    string(TOUPPER ${CMAKE_MATCH_1} _key)
    set(STRATA_CFG_${_key} ${CMAKE_MATCH_2})
  endif()
endforeach()
if(NOT STRATA_CFG_LANES OR NOT STRATA_CFG_PES OR NOT STRATA_CFG_PE_CACHE_DEPTH)
  message(FATAL_ERROR "compute.cmake: lanes/pes/pe_cache_depth not found in config/default.yaml")
endif()

# strata_pe, default configuration (dense).
strata_bench(strata_pe_test
  TOP strata_pe
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_test.cpp)
target_compile_definitions(strata_pe_test PRIVATE
  STRATA_BENCH_PES=1 STRATA_BENCH_LANES=${STRATA_CFG_LANES}
  STRATA_BENCH_DEPTH=${STRATA_CFG_PE_CACHE_DEPTH})

# strata_pe_mul (through a bench wrapper).
strata_bench(strata_pe_mul_test
  TOP strata_pe_mul_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_mul_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_mul_test.cpp)

# strata_pe_mul's LUT build (Fabric = 1, strata_fabric_mul): the same bench.
strata_bench(strata_pe_mul_fabric_test
  TOP strata_pe_mul_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_mul_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_mul_test.cpp
  PARAMS -GFabric=1'b1)
target_compile_definitions(strata_pe_mul_fabric_test PRIVATE
  STRATA_PE_MUL_SUITE=StrataPeMulFabric)

# strata_fabric_mul on seven operand shapes (through a bench wrapper).
strata_bench(strata_fabric_mul_test
  TOP strata_fabric_mul_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_fabric_mul_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_fabric_mul_test.cpp)

# strata_act_stager, inside the sparse PE (strata_pe, Sparse = 1).
strata_bench(strata_act_stager_test
  TOP strata_pe
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_act_stager_test.cpp
  PARAMS -GSparse=1'b1)
target_compile_definitions(strata_act_stager_test PRIVATE
  STRATA_BENCH_PES=1 STRATA_BENCH_LANES=${STRATA_CFG_LANES}
  STRATA_BENCH_DEPTH=${STRATA_CFG_PE_CACHE_DEPTH} STRATA_BENCH_SPARSE=1)

# strata_pe_array, default configuration (P = Pes, N = Lanes from config/default.yaml).
strata_bench(strata_pe_array_test
  TOP strata_pe_array
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_array_test.cpp)
target_compile_definitions(strata_pe_array_test PRIVATE
  STRATA_BENCH_PES=${STRATA_CFG_PES} STRATA_BENCH_LANES=${STRATA_CFG_LANES}
  STRATA_BENCH_DEPTH=${STRATA_CFG_PE_CACHE_DEPTH} STRATA_ARRAY_SUITE=StrataPeArray)

# strata_pe_array, second configuration: P = 16, N = 16 and a cache depth that
# is not a power of two (so out-of-range cache addresses can be tested).
strata_bench(strata_pe_array_p16n16_test
  TOP strata_pe_array
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_array_test.cpp
  PARAMS -GPes=16 -GLanes=16 -GCacheDepth=200)
target_compile_definitions(strata_pe_array_p16n16_test PRIVATE
  STRATA_BENCH_PES=16 STRATA_BENCH_LANES=16 STRATA_BENCH_DEPTH=200
  STRATA_ARRAY_SUITE=StrataPeArrayP16N16)

# strata_requant, Channels = Pes (one PE-array result beat per cycle).
strata_bench(strata_requant_test
  TOP strata_requant
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_requant_test.cpp)
target_compile_definitions(strata_requant_test PRIVATE STRATA_BENCH_CHANNELS=${STRATA_CFG_PES})

# strata_pe_array with the activation stagers (Sparse = 1): 4 PEs whose
# different pruned weights share one packed cycle sequence.
strata_bench(strata_pe_array_sparse_test
  TOP strata_pe_array
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_pe_array_sparse_test.cpp
  PARAMS -GPes=4 -GLanes=${STRATA_CFG_LANES} -GCacheDepth=64 -GSparse=1'b1)
target_compile_definitions(strata_pe_array_sparse_test PRIVATE
  STRATA_BENCH_PES=4 STRATA_BENCH_LANES=${STRATA_CFG_LANES} STRATA_BENCH_DEPTH=64
  STRATA_BENCH_SPARSE=1)
