# SPDX-License-Identifier: Apache-2.0
# The RTL file list rtl/manifest.txt for the vendor flows (vivado/, quartus/):
# sourced by their scripts. The manifest holds one path relative to rtl/ per
# line in compile order (packages first); '#' starts a comment.
#
#   strata_rtl_manifest <root> sv_var inc_var mod_var
# sets sv_var to the .sv files (packages and modules, in order), inc_var to the
# folders of the included .svh files and mod_var to a dict {module file};
# Verilator waivers (.vlt) are left out.
proc strata_rtl_manifest {root sv_var inc_var mod_var} {
  upvar 1 $sv_var sv $inc_var inc $mod_var mods
  set sv {}
  set inc {}
  set mods [dict create]
  set fh [open $root/rtl/manifest.txt r]
  foreach line [split [read $fh] "\n"] {
    set line [string trim [lindex [split $line "#"] 0]]
    if {$line eq ""} { continue }
    set f $root/rtl/$line
    if {![file exists $f]} {
      close $fh
      error "rtl/manifest.txt names rtl/$line, which does not exist"
    }
    switch -glob -- $f {
      *.vlt {}
      *.svh { if {[lsearch -exact $inc [file dirname $f]] < 0} { lappend inc [file dirname $f] } }
      *_pkg.sv { lappend sv $f }
      *.sv { lappend sv $f; dict set mods [file rootname [file tail $f]] $f }
    }
  }
  close $fh
}
