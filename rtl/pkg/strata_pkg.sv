// SPDX-License-Identifier: Apache-2.0
// Strata shared types and derived parameters.
//
// Configuration values come from strata_cfg_pkg (generated from
// config/default.yaml); this package adds the types built from them.
//
// Design-wide conventions:
//   - Reset: synchronous, active low (rst_ni), written as
//     `always_ff @(posedge clk_i) if (!rst_ni) q <= '0; else q <= d;` on the
//     control registers that need one (FPGA-friendly: maps onto the flip-flop's
//     synchronous set/reset and leaves DSP and BRAM registers reset-free).
//     Datapath registers have no reset; a reset valid bit qualifies them.
//   - Streams: valid/ready with the AXI handshake rules. A transfer happens on
//     a rising edge where valid && ready. Once valid is high it stays high and
//     the payload stays stable until the transfer (asserted by
//     `STRATA_ASSERT_STREAM in rtl/pkg/strata_assert.svh). valid must not depend
//     combinationally on ready.
package strata_pkg;

  import strata_cfg_pkg::*;

  typedef logic signed [DataWidth-1:0] data_t;   // int8 activation / weight
  typedef logic signed [AccWidth-1:0]  acc_t;    // int32 accumulator / bias
  typedef logic [MultWidth-1:0]        mult_t;   // requant multiplier M (unsigned)
  typedef logic [ShiftWidth-1:0]       shift_t;  // requant shift S (0..MaxShift)

  // Product of two int8 values: 16 bits signed.
  localparam int unsigned ProdWidth = 2 * DataWidth;

  // Per-channel requantisation parameters.
  typedef struct packed {
    mult_t  multiplier;
    shift_t shift;
  } requant_t;

  // Pooling operation selected per layer at run time.
  typedef enum logic [0:0] {
    PoolMax = 1'b0,
    PoolAvg = 1'b1
  } pool_op_e;

endpackage : strata_pkg
