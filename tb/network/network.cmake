# Whole-accelerator benches: strata_top Verilated once into the runner library
# strata_rtl_runner (also the RTL backend of `strata run --backend rtl`), and
# the whole-network tests (ctest label "network").
set(STRATA_TOP_RTL
  ${STRATA_RTL_DIR}/strata_csr_pkg.sv
  ${STRATA_RTL_DIR}/strata_isa_pkg.sv
  ${STRATA_RTL_DIR}/strata_compute_pkg.sv)
file(GLOB STRATA_TOP_MODULES ${STRATA_RTL_DIR}/strata_*.sv)
list(FILTER STRATA_TOP_MODULES EXCLUDE REGEX "_pkg\\.sv$")
list(APPEND STRATA_TOP_RTL ${STRATA_TOP_MODULES})

# The runner needs no test framework (the command line links it): its bench
# agents report failed checks into the run report (tb/common/bench_check.hpp).
add_library(strata_rtl_runner STATIC ${CMAKE_CURRENT_SOURCE_DIR}/network/accel_runner.cpp)
target_include_directories(strata_rtl_runner PUBLIC
  ${CMAKE_CURRENT_SOURCE_DIR}/network ${CMAKE_CURRENT_SOURCE_DIR}/common)
target_link_libraries(strata_rtl_runner PUBLIC strata_core)
target_compile_definitions(strata_rtl_runner PRIVATE STRATA_TB_NO_GTEST)
target_compile_definitions(strata_rtl_runner PUBLIC
  STRATA_WAVE_DIR_DEFAULT="${STRATA_WAVE_DIR}"
  STRATA_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_compile_options(strata_rtl_runner PRIVATE -Wall)
verilate(strata_rtl_runner
  TOP_MODULE strata_top
  PREFIX Vstrata_top
  SOURCES ${STRATA_RTL_PKGS} ${STRATA_TOP_RTL}
  TRACE_FST
  VERILATOR_ARGS --assert -Wall --x-assign unique --x-initial unique -I${STRATA_RTL_DIR}
                 ${STRATA_VERILATOR_COVERAGE_ARGS})

add_executable(strata_top_tests ${CMAKE_CURRENT_SOURCE_DIR}/network/strata_top_test.cpp)
target_link_libraries(strata_top_tests PRIVATE strata_rtl_runner GTest::gtest_main)
# Label random too: every test draws its images and stalls from STRATA_SEED.
gtest_discover_tests(strata_top_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_top_tests network random)

# The RTL backend of the command line (`strata run --backend rtl`, `strata bench`).
target_link_libraries(strata PRIVATE strata_rtl_runner nlohmann_json::nlohmann_json)
target_compile_definitions(strata PRIVATE STRATA_HAVE_RTL
  STRATA_GTKW_LAYOUT="${CMAKE_SOURCE_DIR}/tb/waves/strata_top.gtkw")
# The command line's own tests then expect the RTL backend to be there.
target_compile_definitions(strata_cli_tests PRIVATE STRATA_HAVE_RTL)

# The command line on the RTL: run --backend rtl, bench --json, their errors.
add_executable(strata_cli_rtl_tests ${CMAKE_CURRENT_SOURCE_DIR}/network/cli_rtl_test.cpp)
target_link_libraries(strata_cli_rtl_tests PRIVATE strata_core GTest::gtest_main
                      nlohmann_json::nlohmann_json)
target_compile_definitions(strata_cli_rtl_tests PRIVATE
  STRATA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  STRATA_BINARY_DIR="${CMAKE_BINARY_DIR}"
  STRATA_CLI="$<TARGET_FILE:strata>")
add_dependencies(strata_cli_rtl_tests strata examples)
gtest_discover_tests(strata_cli_rtl_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_cli_rtl_tests network)
