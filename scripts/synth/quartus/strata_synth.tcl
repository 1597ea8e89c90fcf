# SPDX-License-Identifier: Apache-2.0
# Strata: Quartus Prime compilation of one RTL top for Cyclone V, with every
# port except clk_i made a virtual pin (out of context: no pin assignment).
#
#   quartus_sh -t scripts/synth/quartus/strata_synth.tcl <top> <out_dir> [Name=value ...]
#
# Device 5CSEMA5F31C6 (Cyclone V SE, DE1-SoC). Run from the repository root.
# NOT RUN in this repository's environment (Quartus is not installed here);
# see scripts/synth/README.md.

package require ::quartus::project
package require ::quartus::flow

if {[llength $quartus(args)] < 2} {
  puts "usage: quartus_sh -t strata_synth.tcl <top> <out_dir> \[Name=value ...\]"
  exit 2
}
set top     [lindex $quartus(args) 0]
set out_dir [file normalize [lindex $quartus(args) 1]]
set root    [pwd]
# Packages first, in dependency order, then every module: rtl/manifest.txt.
source [file join [file dirname [info script]] .. rtl_manifest.tcl]
strata_rtl_manifest $root sources incdirs modules
if {![dict exists $modules $top]} {
  puts "no module '$top' in rtl/manifest.txt; run from the repository root"
  exit 2
}
file mkdir $out_dir
cd $out_dir

project_new $top -overwrite
set_global_assignment -name FAMILY "Cyclone V"
set_global_assignment -name DEVICE 5CSEMA5F31C6
set_global_assignment -name TOP_LEVEL_ENTITY $top
set_global_assignment -name VERILOG_MACRO "SYNTHESIS=1"
foreach d $incdirs {
  set_global_assignment -name SEARCH_PATH $d
}
set_global_assignment -name SDC_FILE $root/constraints/strata.sdc
set_global_assignment -name PROJECT_OUTPUT_DIRECTORY $out_dir

foreach f $sources {
  set_global_assignment -name SYSTEMVERILOG_FILE $f
}
foreach p [lrange $quartus(args) 2 end] {
  if {![regexp {^([A-Za-z_][A-Za-z0-9_]*)=([0-9]+)$} $p -> name value]} {
    puts "bad parameter '$p': expected Name=integer"
    exit 2
  }
  set_parameter -name $name $value
}

# Elaborate once to learn the ports, then make all but the clock virtual.
execute_module -tool map
foreach_in_collection pin [get_names -filter * -node_type pin] {
  set name [get_name_info -info full_path $pin]
  if {$name ne "clk_i"} {
    set_instance_assignment -name VIRTUAL_PIN ON -to $name
  }
}
export_assignments

execute_flow -compile
project_close
puts "strata: reports in $out_dir ($top.fit.summary, $top.sta.rpt)"
