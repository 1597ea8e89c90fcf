# What every Verilated build of the RTL shares (the runner library in sim/ and
# the benches in tb/): Verilator, the RTL directory, the packages in dependency
# order, and the coverage switch. Included by the top-level CMakeLists.txt.
find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)

set(STRATA_RTL_DIR ${CMAKE_SOURCE_DIR}/rtl)
set(STRATA_WAVE_DIR ${CMAKE_BINARY_DIR}/waves)

# Packages first, in dependency order; every model elaborates them.
set(STRATA_RTL_PKGS
  ${STRATA_RTL_DIR}/strata_pkg.vlt
  ${STRATA_RTL_DIR}/strata_cfg_pkg.sv
  ${STRATA_RTL_DIR}/strata_pkg.sv
)

# strata_top and everything under it: the remaining packages, then every module.
# CONFIGURE_DEPENDS: a new rtl/ file re-runs CMake, so the Verilated models (and
# their generated file lists) include it in an incremental build.
set(STRATA_TOP_RTL
  ${STRATA_RTL_DIR}/strata_csr_pkg.sv
  ${STRATA_RTL_DIR}/strata_isa_pkg.sv
  ${STRATA_RTL_DIR}/strata_compute_pkg.sv)
file(GLOB STRATA_TOP_MODULES CONFIGURE_DEPENDS ${STRATA_RTL_DIR}/strata_*.sv)
list(FILTER STRATA_TOP_MODULES EXCLUDE REGEX "_pkg\\.sv$")
list(APPEND STRATA_TOP_RTL ${STRATA_TOP_MODULES})

# Coverage build (scripts/regress --coverage, docs/regression.md): every
# Verilated model counts line and toggle coverage, and each bench writes its
# counts when a model is torn down (sim/sim_coverage.hpp). Off in normal
# builds: the counters slow the models.
option(STRATA_COVERAGE "Verilate the benches with line and toggle coverage" OFF)
set(STRATA_VERILATOR_COVERAGE_ARGS)
if(STRATA_COVERAGE)
  set(STRATA_VERILATOR_COVERAGE_ARGS --coverage-line --coverage-toggle)
endif()

# How the models are Verilated. Checked: assertions on, X values randomised
# (the benches and `strata ... --checked-model`). Fast: the same RTL without
# assertions, X values resolved the cheap way, Verilator's -O3: about twice the
# simulation speed, the same cycles (the default of `strata run --backend rtl`
# and `strata bench`).
set(STRATA_VERILATOR_CHECKED_ARGS --assert -Wall --x-assign unique --x-initial unique
    -I${STRATA_RTL_DIR} ${STRATA_VERILATOR_COVERAGE_ARGS})
set(STRATA_VERILATOR_FAST_ARGS -O3 -Wall --x-assign fast --x-initial fast -I${STRATA_RTL_DIR})
