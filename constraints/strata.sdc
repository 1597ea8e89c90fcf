# SPDX-License-Identifier: Apache-2.0
# Strata timing constraints for Intel/Altera (Quartus, TimeQuest). One clock, clk_i.
# 150 MHz is the Cyclone V target (5CSEMA5F31C6, speed grade 6).
create_clock -name clk_i -period 6.667 [get_ports {clk_i}]
derive_clock_uncertainty
