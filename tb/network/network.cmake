# SPDX-License-Identifier: Apache-2.0
# Whole-network tests (ctest label "network") on the RTL runner library
# strata_rtl_runner (sim/CMakeLists.txt): the example networks, random networks
# and the command line on the Verilated accelerator.
add_executable(strata_top_tests ${CMAKE_CURRENT_SOURCE_DIR}/network/strata_top_test.cpp)
target_link_libraries(strata_top_tests PRIVATE strata_rtl_runner GTest::gtest_main)
target_include_directories(strata_top_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/common)
# Label random too: every test draws its images and stalls from STRATA_SEED.
gtest_discover_tests(strata_top_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_top_tests network random)

# Compiled => runs on the RTL: random networks (strata::random_network_yaml)
# that the compiler accepts must match the golden model; seeds from STRATA_SEED.
add_executable(strata_random_network_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/network/random_network_test.cpp)
target_link_libraries(strata_random_network_tests PRIVATE strata_rtl_runner GTest::gtest_main)
target_include_directories(strata_random_network_tests PRIVATE ${CMAKE_SOURCE_DIR}/sw/tests
                                                                ${CMAKE_CURRENT_SOURCE_DIR}/common)
gtest_discover_tests(strata_random_network_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_random_network_tests network random)

# The command line on the RTL: run --backend rtl, bench --json, their errors.
add_executable(strata_cli_rtl_tests ${CMAKE_CURRENT_SOURCE_DIR}/network/cli_rtl_test.cpp)
target_link_libraries(strata_cli_rtl_tests PRIVATE strata_core GTest::gtest_main
                      nlohmann_json::nlohmann_json)
target_include_directories(strata_cli_rtl_tests PRIVATE ${CMAKE_SOURCE_DIR}/sw/tests)
target_compile_definitions(strata_cli_rtl_tests PRIVATE
  STRATA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  STRATA_BINARY_DIR="${CMAKE_BINARY_DIR}"
  STRATA_CLI="$<TARGET_FILE:strata>")
add_dependencies(strata_cli_rtl_tests strata examples)
gtest_discover_tests(strata_cli_rtl_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_cli_rtl_tests network)

# Cascade chains (docs/cascade.md) on the Verilated strata_cascade_top
# (strata_chain_runner): example networks on 2 to 4 stages, link and memory
# stalls, an error in one stage, misrouted and malformed transfers.
add_executable(strata_cascade_tests ${CMAKE_CURRENT_SOURCE_DIR}/network/cascade_chain_test.cpp)
target_link_libraries(strata_cascade_tests PRIVATE strata_chain_runner GTest::gtest_main)
target_include_directories(strata_cascade_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/common)
gtest_discover_tests(strata_cascade_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_cascade_tests network random)

# The runner with the fast model alone (strata_rtl_runner_fast_only), as the
# strata command of a build for `make demo`: its model runs, the others are a
# clear error.
add_executable(strata_model_table_tests ${CMAKE_CURRENT_SOURCE_DIR}/network/model_table_test.cpp)
target_link_libraries(strata_model_table_tests PRIVATE strata_rtl_runner_fast_only
                      GTest::gtest_main)
if(STRATA_RTL_CONFIGS)
  list(GET STRATA_RTL_CONFIGS 0 first_config)
  target_compile_definitions(strata_model_table_tests PRIVATE
    STRATA_FURTHER_CONFIG="${first_config}")
endif()
gtest_discover_tests(strata_model_table_tests DISCOVERY_TIMEOUT 120)
strata_discovered_labels(strata_model_table_tests network)
