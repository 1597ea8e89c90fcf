# COMPUTE engine bench (engineer compute): strata_compute_engine + strata_banks
# (tb/unit/strata_compute_engine_tb_top.sv) against a reference built from
# strata/numerics.hpp, with instructions encoded by strata/isa.hpp.
# Included by tb/CMakeLists.txt.
set(STRATA_COMPUTE_ENGINE_RTL
  ${STRATA_RTL_DIR}/strata_csr_pkg.sv
  ${STRATA_RTL_DIR}/strata_isa_pkg.sv
  ${STRATA_RTL_DIR}/strata_compute_pkg.sv
  ${STRATA_RTL_DIR}/strata_fifo.sv
  ${STRATA_RTL_DIR}/strata_reg_copies.sv
  ${STRATA_RTL_DIR}/strata_credit_fifo.sv
  ${STRATA_RTL_DIR}/strata_ram_1r1w.sv
  ${STRATA_RTL_DIR}/strata_adder_tree.sv
  ${STRATA_RTL_DIR}/strata_act_stager.sv
  ${STRATA_RTL_DIR}/strata_dsp_mul.sv
  ${STRATA_RTL_DIR}/strata_pe_mul.sv
  ${STRATA_RTL_DIR}/strata_pe.sv
  ${STRATA_RTL_DIR}/strata_pe_array.sv
  ${STRATA_RTL_DIR}/strata_requant.sv
  ${STRATA_RTL_DIR}/strata_line_buffer.sv
  ${STRATA_RTL_DIR}/strata_window_gen.sv
  ${STRATA_RTL_DIR}/strata_pool_tree.sv
  ${STRATA_RTL_DIR}/strata_maxpool.sv
  ${STRATA_RTL_DIR}/strata_avgpool.sv
  ${STRATA_RTL_DIR}/strata_pool.sv
  ${STRATA_RTL_DIR}/strata_dep_sync.sv
  ${STRATA_RTL_DIR}/strata_engine_shell.sv
  ${STRATA_RTL_DIR}/strata_banks.sv
  ${STRATA_RTL_DIR}/strata_compute_decode.sv
  ${STRATA_RTL_DIR}/strata_conv_walker.sv
  ${STRATA_RTL_DIR}/strata_param_ram.sv
  ${STRATA_RTL_DIR}/strata_dst_writer.sv
  ${STRATA_RTL_DIR}/strata_compute_engine.sv
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_compute_engine_tb_top.sv
)

strata_bench(strata_compute_engine_tests
  TOP strata_compute_engine_tb_top
  RTL ${STRATA_COMPUTE_ENGINE_RTL}
  TESTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/strata_compute_engine_test.cpp)
