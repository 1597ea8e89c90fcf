# COMPUTE engine bench (engineer compute): strata_compute_engine + strata_banks
# (tb/unit/strata_compute_engine_tb_top.sv) against a reference built from
# strata/numerics.hpp, with instructions encoded by strata/isa.hpp.
# Included by tb/CMakeLists.txt.
strata_bench(strata_compute_engine_tests
  TOP strata_compute_engine_tb_top
  TB ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_compute_engine_tb_top.sv
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_compute_engine_test.cpp)
