# SPDX-License-Identifier: Apache-2.0
# What every Verilated build of the RTL shares (the runner library in sim/ and
# the benches in tb/): Verilator, the RTL file list (rtl/manifest.txt), and the
# coverage switch. Included by the top-level CMakeLists.txt.
find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)

set(STRATA_RTL_DIR ${CMAKE_SOURCE_DIR}/rtl)
set(STRATA_RTL_MANIFEST ${STRATA_RTL_DIR}/manifest.txt)
set(STRATA_WAVE_DIR ${CMAKE_BINARY_DIR}/waves)

# The RTL file list is rtl/manifest.txt (one rtl/-relative path per line, in
# compile order; '#' starts a comment). From it:
#   STRATA_RTL_PKGS          the Verilator waivers (.vlt) and the packages
#                            (*_pkg.sv), in manifest order; every model elaborates them
#   STRATA_RTL_MODULES       every other .sv: the modules, strata_top included
#   STRATA_RTL_INCLUDE_DIRS  the folders of the included files (.svh)
#   STRATA_RTL_MODULE_DIRS   the folders of the modules, where Verilator looks up
#                            (-y) the modules a bench's top instantiates
# Editing the manifest re-runs CMake, so the Verilated models (and their
# generated file lists) follow it in an incremental build.
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${STRATA_RTL_MANIFEST})
file(STRINGS ${STRATA_RTL_MANIFEST} _strata_manifest_lines)
set(STRATA_RTL_PKGS)
set(STRATA_RTL_MODULES)
set(STRATA_RTL_INCLUDE_DIRS)
set(STRATA_RTL_MODULE_DIRS)
set(_strata_listed)
foreach(_line IN LISTS _strata_manifest_lines)
  string(REGEX REPLACE "#.*" "" _line "${_line}")
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "")
    continue()
  endif()
  set(_file ${STRATA_RTL_DIR}/${_line})
  if(NOT EXISTS ${_file})
    message(FATAL_ERROR "rtl/manifest.txt names rtl/${_line}, which does not exist: "
                        "fix the path or remove the line")
  endif()
  if(_file IN_LIST _strata_listed)
    message(FATAL_ERROR "rtl/manifest.txt names rtl/${_line} twice")
  endif()
  list(APPEND _strata_listed ${_file})
  get_filename_component(_dir ${_file} DIRECTORY)
  if(_line MATCHES "\\.vlt$" OR _line MATCHES "_pkg\\.sv$")
    list(APPEND STRATA_RTL_PKGS ${_file})
  elseif(_line MATCHES "\\.svh$")
    list(APPEND STRATA_RTL_INCLUDE_DIRS ${_dir})
  elseif(_line MATCHES "\\.sv$")
    list(APPEND STRATA_RTL_MODULES ${_file})
    list(APPEND STRATA_RTL_MODULE_DIRS ${_dir})
  else()
    message(FATAL_ERROR "rtl/manifest.txt: rtl/${_line} is not a .sv, .svh or .vlt file")
  endif()
endforeach()
list(REMOVE_DUPLICATES STRATA_RTL_INCLUDE_DIRS)
list(REMOVE_DUPLICATES STRATA_RTL_MODULE_DIRS)
# The list cannot drift from the folder: every RTL file under rtl/ must be in it.
# CONFIGURE_DEPENDS: a file added to or removed from rtl/ re-runs this check.
file(GLOB_RECURSE _strata_rtl_found CONFIGURE_DEPENDS LIST_DIRECTORIES false
     ${STRATA_RTL_DIR}/*.sv ${STRATA_RTL_DIR}/*.svh ${STRATA_RTL_DIR}/*.vlt)
set(_strata_unlisted)
foreach(_file IN LISTS _strata_rtl_found)
  if(NOT _file IN_LIST _strata_listed)
    file(RELATIVE_PATH _rel ${STRATA_RTL_DIR} ${_file})
    list(APPEND _strata_unlisted "rtl/${_rel}")
  endif()
endforeach()
if(_strata_unlisted)
  list(JOIN _strata_unlisted ", " _strata_unlisted)
  message(FATAL_ERROR "Not in rtl/manifest.txt: ${_strata_unlisted}. Add each file to the "
                      "manifest (docs/architecture.md, RTL layout) or remove it.")
endif()

# strata_rtl_pkgs_with_cfg(<out> <cfg_pkg>): STRATA_RTL_PKGS with the configuration
# package replaced by <cfg_pkg> (one generated from another config/*.yaml).
function(strata_rtl_pkgs_with_cfg out cfg_pkg)
  set(pkgs)
  foreach(_file IN LISTS STRATA_RTL_PKGS)
    if(_file MATCHES "/strata_cfg_pkg\\.sv$")
      list(APPEND pkgs ${cfg_pkg})
    else()
      list(APPEND pkgs ${_file})
    endif()
  endforeach()
  set(${out} ${pkgs} PARENT_SCOPE)
endfunction()

# Where Verilator finds included files and the modules under a top it is not given.
set(STRATA_VERILATOR_RTL_ARGS)
foreach(_dir IN LISTS STRATA_RTL_INCLUDE_DIRS)
  list(APPEND STRATA_VERILATOR_RTL_ARGS -I${_dir})
endforeach()
foreach(_dir IN LISTS STRATA_RTL_MODULE_DIRS)
  list(APPEND STRATA_VERILATOR_RTL_ARGS -y ${_dir})
endforeach()

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
    ${STRATA_VERILATOR_RTL_ARGS} ${STRATA_VERILATOR_COVERAGE_ARGS})
set(STRATA_VERILATOR_FAST_ARGS -O3 -Wall --x-assign fast --x-initial fast
    ${STRATA_VERILATOR_RTL_ARGS})

# How the Verilated C++ is compiled (verilate()'s OPT_* flags, after the build
# type's): Verilator's __Slow files (construction, trace set-up) run once and
# take most of the compile time, so -O0; the checked models' evaluation code
# -O1, which compiles in less than half the time of -O3 (the benches' runs
# are short); the fast model keeps -O3 for `strata run` and `strata bench`.
set(STRATA_VERILATED_OPT_CHECKED OPT_SLOW -O0 OPT_FAST -O1 OPT_GLOBAL -O2)
set(STRATA_VERILATED_OPT_FAST OPT_SLOW -O0 OPT_FAST -O3 OPT_GLOBAL -O2)
