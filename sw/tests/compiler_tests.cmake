# SPDX-License-Identifier: Apache-2.0
# ISA, compiler and ISA simulator tests (label unit), and the check that the
# generated ISA views match config/isa.yaml (label lint). Included from
# sw/CMakeLists.txt.
add_executable(strata_compiler_tests
  ${CMAKE_CURRENT_LIST_DIR}/isa_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compiler_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compiler_passes_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/random_network_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/target_rules_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/partial_sums_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tiling_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_shapes_test.cpp
)
target_link_libraries(strata_compiler_tests PRIVATE strata_core GTest::gtest_main)
# compiler_passes_test.cpp tests each pass on its own: the compiler's internal
# headers (sw/src/compiler/ir.hpp, passes.hpp).
target_include_directories(strata_compiler_tests PRIVATE ${CMAKE_SOURCE_DIR}/sw/src)
target_compile_definitions(strata_compiler_tests PRIVATE
  STRATA_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  STRATA_PYTHON="${STRATA_PYTHON}"
  STRATA_CLI="$<TARGET_FILE:strata>")
add_dependencies(strata_compiler_tests strata)
target_compile_options(strata_compiler_tests PRIVATE -Wall -Wextra -Wpedantic)
gtest_discover_tests(strata_compiler_tests PROPERTIES LABELS "unit" DISCOVERY_TIMEOUT 60
  TEST_FILTER "-RandomNetworks.*")
# RandomNetworks draws its networks from STRATA_SEED: label random too, so the
# nightly regression (scripts/regress) runs it with several seeds.
add_test(NAME RandomNetworks.CompiledAndSimulatedEqualTheGoldenModel
         COMMAND strata_compiler_tests
                 --gtest_filter=RandomNetworks.CompiledAndSimulatedEqualTheGoldenModel)
set_tests_properties(RandomNetworks.CompiledAndSimulatedEqualTheGoldenModel PROPERTIES
  LABELS "unit;random")
# Compiled => runs: random networks of every layer type and order (the library's
# generator, random_network.hpp); accepted ones run on the ISA simulator equal to
# the golden model, the others are refused by the reader or the compiler.
foreach(t AcceptedNetworksRunOnTheIsaSimulator AcceptedLargeNetworksRunOnTheIsaSimulator
          TiledNetworksRunOnTheIsaSimulator AnySizeNetworksRunOnTheIsaSimulator)
  add_test(NAME RandomNetworks.${t}
           COMMAND strata_compiler_tests --gtest_filter=RandomNetworks.${t})
  set_tests_properties(RandomNetworks.${t} PROPERTIES LABELS "unit;random")
endforeach()

# The committed rtl/pkg/strata_isa_pkg.sv, sw/include/strata/isa_fields.hpp,
# sw/include/strata/isa_codec.hpp and the field tables of docs/isa.md must match
# config/isa.yaml.
add_test(NAME isa_in_sync
         COMMAND ${STRATA_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/gen_isa.py --check
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(isa_in_sync PROPERTIES LABELS "lint")

# The target-rules section of docs/isa.md must match the table of
# sw/src/target_rules.cpp (strata rules --update docs/isa.md rewrites it).
add_test(NAME target_rules_in_sync
         COMMAND strata rules --check ${CMAKE_SOURCE_DIR}/docs/isa.md
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(target_rules_in_sync PROPERTIES LABELS "lint")
