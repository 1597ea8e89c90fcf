# SPDX-License-Identifier: Apache-2.0
# Strata: Vivado non-project synthesis, place and route of one RTL top,
# out of context (no pins: synth_design -mode out_of_context).
#
#   vivado -mode batch -source scripts/synth/vivado/strata_synth.tcl \
#     -tclargs <part> <top> <out_dir> [<period_ns>] [Name=value ...]
#
#   parts: xc7z020clg400-1 (Zynq-7020, 7-series),
#          xczu3eg-sbva484-1-e (Zynq UltraScale+)
# Run from the repository root. NOT RUN in this repository's environment
# (Vivado is not installed here); see scripts/synth/README.md.

if {[llength $argv] < 3} {
  puts "usage: -tclargs <part> <top> <out_dir> \[<period_ns>\] \[Name=value ...\]"
  exit 2
}
set part    [lindex $argv 0]
set top     [lindex $argv 1]
set out_dir [lindex $argv 2]
set rest    [lrange $argv 3 end]
set period  ""
if {[llength $rest] > 0 && [string is double -strict [lindex $rest 0]]} {
  set period [lindex $rest 0]
  set rest   [lrange $rest 1 end]
}
set generics {}
foreach p $rest {
  if {![regexp {^[A-Za-z_][A-Za-z0-9_]*=[0-9]+$} $p]} {
    puts "bad parameter '$p': expected Name=integer"
    exit 2
  }
  lappend generics $p
}
# Packages first, in dependency order, then every module: rtl/manifest.txt.
source [file join [file dirname [info script]] .. rtl_manifest.tcl]
strata_rtl_manifest . sources incdirs modules
if {![dict exists $modules $top]} {
  puts "no module '$top' in rtl/manifest.txt; run from the repository root"
  exit 2
}
file mkdir $out_dir

read_verilog -sv $sources
read_xdc constraints/strata_xilinx.xdc

set args [list -top $top -part $part -mode out_of_context -include_dirs $incdirs \
               -verilog_define SYNTHESIS]
foreach g $generics { lappend args -generic $g }
synth_design {*}$args
if {$period ne ""} {
  create_clock -name clk_i -period $period [get_ports clk_i]
}
report_utilization -hierarchical -file $out_dir/utilization_synth.rpt

opt_design
place_design
phys_opt_design
route_design
report_utilization -file $out_dir/utilization.rpt
report_timing_summary -max_paths 10 -file $out_dir/timing.rpt
report_drc -file $out_dir/drc.rpt
write_checkpoint -force $out_dir/$top.dcp

set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set clk_period [get_property PERIOD [get_clocks clk_i]]
puts "strata: $top on $part: WNS $wns ns at period $clk_period ns,\
      Fmax [format %.1f [expr {1000.0 / ($clk_period - $wns)}]] MHz"
