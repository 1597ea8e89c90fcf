# SPDX-License-Identifier: Apache-2.0
# Benches of the pooling path (engineer rtl-pool): window generator / line
# buffer, max and avg pooling units, the pool wrapper, and the end-to-end
# image -> window generator -> pool chain. Included by tb/CMakeLists.txt.
set(STRATA_POOL_UNIT_DIR ${CMAKE_CURRENT_SOURCE_DIR}/unit)

strata_bench(strata_window_gen_tests
  TOP strata_window_gen
  TESTS ${STRATA_POOL_UNIT_DIR}/strata_window_gen_test.cpp)

strata_bench(strata_maxpool_tests
  TOP strata_maxpool
  TESTS ${STRATA_POOL_UNIT_DIR}/strata_maxpool_test.cpp
  PARAMS -GUserWidth=16)

strata_bench(strata_avgpool_tests
  TOP strata_avgpool
  TESTS ${STRATA_POOL_UNIT_DIR}/strata_avgpool_test.cpp
  PARAMS -GUserWidth=16)

strata_bench(strata_pool_tests
  TOP strata_pool
  TESTS ${STRATA_POOL_UNIT_DIR}/strata_pool_test.cpp
  PARAMS -GUserWidth=16)

# End to end: image -> window generator (3x3 at most) -> pool, bench top in tb/unit.
strata_bench(strata_pool_e2e_tests
  TOP strata_pool_e2e_tb_top
  TB ${STRATA_POOL_UNIT_DIR}/strata_pool_e2e_tb_top.sv
  TESTS ${STRATA_POOL_UNIT_DIR}/strata_pool_e2e_test.cpp)
