# Benches of the pooling path (engineer rtl-pool): window generator / line
# buffer, max and avg pooling units, the pool wrapper, and the end-to-end
# image -> window generator -> pool chain. Included by tb/CMakeLists.txt.
set(STRATA_POOL_UNIT_DIR ${CMAKE_CURRENT_SOURCE_DIR}/unit)

strata_bench(strata_window_gen_tests
  TOP strata_window_gen
  RTL ${STRATA_RTL_DIR}/strata_ram_1r1w.sv
      ${STRATA_RTL_DIR}/strata_line_buffer.sv
      ${STRATA_RTL_DIR}/strata_window_gen.sv
  TESTS ${STRATA_POOL_UNIT_DIR}/strata_window_gen_test.cpp)
