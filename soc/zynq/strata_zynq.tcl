# SPDX-License-Identifier: Apache-2.0
# Strata on a Zynq-7020 board (docs/board.md): a Vivado block design with the
# Zynq processing system, the accelerator's registers on M_AXI_GP0, its AXI4
# master on S_AXI_HP0 (the PS's DDR), its interrupt on IRQ_F2P[0], one 100 MHz
# clock (FCLK_CLK0); then synthesis, implementation and the bitstream.
#
#   vivado -mode batch -source soc/zynq/strata_zynq.tcl -tclargs [PART] [OUT]
#     PART  default xc7z020clg400-1 (PYNQ-Z2; a ZedBoard is xc7z020clg484-1)
#     OUT   default build/zynq
#
# Vivado is not available on the machines Strata is developed on: this script
# is written against Vivado 2022.2's Tcl commands and has not been run here.
# The Linux side (soc/zynq/strata_zynq.dtsi) makes the registers a UIO
# device and reserves a DMA buffer for strata_rt's UIO backend.

set root [file normalize [file join [file dirname [info script]] .. ..]]
set part [expr {[llength $argv] > 0 ? [lindex $argv 0] : "xc7z020clg400-1"}]
set out  [expr {[llength $argv] > 1 ? [lindex $argv 1] : [file join $root build zynq]}]

# The RTL of rtl/manifest.txt (packages first) and the wrapper.
proc manifest_files {root} {
  set files {}
  set f [open [file join $root rtl manifest.txt]]
  foreach line [split [read $f] "\n"] {
    set line [string trim [lindex [split $line "#"] 0]]
    if {$line ne "" && [string match *.sv $line]} { lappend files [file join $root rtl $line] }
  }
  close $f
  return $files
}

# A localparam of a generated package: the wrapper's parameters come from there.
proc package_value {root pkg name} {
  set f [open [file join $root rtl pkg $pkg]]
  set text [read $f]
  close $f
  if {![regexp "localparam\\s+int unsigned\\s+$name\\s*=\\s*(\\d+)\\s*;" $text -> value]} {
    error "$name not found in rtl/pkg/$pkg"
  }
  return $value
}

create_project strata_zynq $out -part $part -force
add_files -norecurse [manifest_files $root]
add_files -norecurse [file join $root soc zynq strata_zynq_top.v]
set_property include_dirs [list [file join $root rtl pkg]] [current_fileset]
set_property verilog_define SYNTHESIS [current_fileset]
update_compile_order -fileset sources_1

create_bd_design strata
set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:processing_system7 ps7]
set_property -dict [list \
  CONFIG.PCW_USE_M_AXI_GP0 {1} \
  CONFIG.PCW_USE_S_AXI_HP0 {1} \
  CONFIG.PCW_S_AXI_HP0_DATA_WIDTH {64} \
  CONFIG.PCW_USE_FABRIC_INTERRUPT {1} \
  CONFIG.PCW_IRQ_F2P_INTR {1} \
  CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ {100} \
] $ps
apply_bd_automation -rule xilinx.com:bd_rule:processing_system7 \
  -config {make_external "FIXED_IO, DDR" apply_board_preset "1"} $ps

set strata [create_bd_cell -type module -reference strata_zynq_top strata]
set_property -dict [list \
  CONFIG.AXI_ADDR_WIDTH [package_value $root strata_cfg_pkg.sv AxiAddrWidth] \
  CONFIG.AXI_DATA_WIDTH [package_value $root strata_cfg_pkg.sv AxiDataWidth] \
  CONFIG.CSR_ADDR_WIDTH [package_value $root strata_csr_pkg.sv CsrAddrWidth] \
] $strata

set rst [create_bd_cell -type ip -vlnv xilinx.com:ip:proc_sys_reset reset]
connect_bd_net [get_bd_pins ps7/FCLK_CLK0] [get_bd_pins strata/clk_i] \
  [get_bd_pins reset/slowest_sync_clk] [get_bd_pins ps7/M_AXI_GP0_ACLK] \
  [get_bd_pins ps7/S_AXI_HP0_ACLK]
connect_bd_net [get_bd_pins ps7/FCLK_RESET0_N] [get_bd_pins reset/ext_reset_in]
connect_bd_net [get_bd_pins reset/peripheral_aresetn] [get_bd_pins strata/rst_ni]

# Registers: GP0 -> SmartConnect -> the AXI4-Lite slave (4 KiB at 0x43C0_0000).
set gp [create_bd_cell -type ip -vlnv xilinx.com:ip:smartconnect gp_interconnect]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1}] $gp
connect_bd_intf_net [get_bd_intf_pins ps7/M_AXI_GP0] [get_bd_intf_pins gp_interconnect/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins gp_interconnect/M00_AXI] [get_bd_intf_pins strata/s_axil]
# Main memory: the accelerator's AXI4 master -> SmartConnect (AXI4 to the
# port's AXI3, 40 to 32 address bits) -> HP0.
set hp [create_bd_cell -type ip -vlnv xilinx.com:ip:smartconnect hp_interconnect]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1}] $hp
connect_bd_intf_net [get_bd_intf_pins strata/m_axi] [get_bd_intf_pins hp_interconnect/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins hp_interconnect/M00_AXI] [get_bd_intf_pins ps7/S_AXI_HP0]
foreach ic {gp_interconnect hp_interconnect} {
  connect_bd_net [get_bd_pins ps7/FCLK_CLK0] [get_bd_pins $ic/aclk]
  connect_bd_net [get_bd_pins reset/peripheral_aresetn] [get_bd_pins $ic/aresetn]
}
# The interrupt: IRQ_F2P[0] (GIC SPI 29, interrupt ID 61).
connect_bd_net [get_bd_pins strata/irq_o] [get_bd_pins ps7/IRQ_F2P]

assign_bd_address -offset 0x43C00000 -range 4K [get_bd_addr_segs strata/s_axil/reg0]
assign_bd_address [get_bd_addr_segs ps7/S_AXI_HP0/HP0_DDR_LOWOCM]
validate_bd_design
save_bd_design

make_wrapper -files [get_files strata.bd] -top
add_files -norecurse [file join $out strata_zynq.gen sources_1 bd strata hdl strata_wrapper.v]
set_property top strata_wrapper [current_fileset]
update_compile_order -fileset sources_1

launch_runs synth_1 -jobs 4
wait_on_run synth_1
launch_runs impl_1 -to_step write_bitstream -jobs 4
wait_on_run impl_1
open_run impl_1
report_timing_summary -file [file join $out timing_summary.rpt]
report_utilization -file [file join $out utilization.rpt]
puts "bitstream: [file join $out strata_zynq.runs impl_1 strata_wrapper.bit]"
