# SPDX-License-Identifier: Apache-2.0
# Strata timing constraints for AMD/Xilinx (Vivado). One clock, clk_i.
# 200 MHz is the 7-series target (xc7z020-1); scripts/synth/vivado/strata_synth.tcl
# overrides the period for faster families. Out-of-context runs need no pin
# constraints; a board design adds its PACKAGE_PIN / IOSTANDARD lines apart.
create_clock -name clk_i -period 5.000 [get_ports clk_i]
