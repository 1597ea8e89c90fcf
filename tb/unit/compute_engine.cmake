# SPDX-License-Identifier: Apache-2.0
# COMPUTE engine bench (engineer compute): strata_compute_engine + strata_banks
# (tb/unit/strata_compute_engine_tb_top.sv) against a reference built from
# strata/numerics.hpp, with instructions encoded by strata/isa.hpp.
# Included by tb/CMakeLists.txt.
strata_bench(strata_compute_engine_tests
  TOP strata_compute_engine_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_compute_engine_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_compute_engine_test.cpp)

# strata_packed_walker (the address walker of a packed CONV, sparse builds)
# against a reference written from IsaSim's packed-CONV semantics; a small
# schedule memory so random cache bases reach its end.
strata_bench(strata_packed_walker_test
  TOP strata_packed_walker
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_packed_walker_test.cpp
  PARAMS -GCacheDepth=256)
target_compile_definitions(strata_packed_walker_test PRIVATE STRATA_BENCH_CACHE_DEPTH=256)
