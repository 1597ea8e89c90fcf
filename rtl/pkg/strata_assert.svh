// SPDX-License-Identifier: Apache-2.0
// Strata assertion macros (simulation only; kept on in Verilator with --assert).
//
// `STRATA_ASSERT_STREAM(name, clk, rst_n, valid, ready, payload)
//   AXI handshake rules on one valid/ready stream: once valid rises it stays
//   high until ready, and the payload does not change while waiting. The
//   payload is compared (===, so that held X bits pass as with $stable) with
//   a register of its last value by an immediate assertion rather than by
//   $stable: a concurrent assertion keeps a sampled
//   copy of every variable it reads, and for a payload cut from a very wide
//   array (the compute engine's operands at P = N = 16: 64 words) Verilator
//   5.006 writes that copy's loop into a function without its loop variable.
`ifndef STRATA_ASSERT_SVH
`define STRATA_ASSERT_SVH

`ifndef SYNTHESIS
`define STRATA_ASSERT_STREAM(name, clk, rst_n, valid, ready, payload) \
  name``_valid_stable : assert property (@(posedge clk) disable iff (!rst_n) \
    (valid && !ready) |=> valid) \
    else $error("%m: %s valid dropped before ready", `"name`"); \
  logic name``_waiting_q; \
  logic [$bits(payload)-1:0] name``_payload_q; \
  always_ff @(posedge clk) begin \
    name``_waiting_q <= rst_n && valid && !ready; \
    name``_payload_q <= payload; \
    if (rst_n && name``_waiting_q) begin \
      name``_payload_stable : assert (payload === name``_payload_q) \
        else $error("%m: %s payload changed while waiting for ready", `"name`"); \
    end \
  end
`define STRATA_ASSERT(name, clk, rst_n, prop) \
  name : assert property (@(posedge clk) disable iff (!rst_n) (prop)) \
    else $error("%m: assertion %s failed", `"name`");
`else
`define STRATA_ASSERT_STREAM(name, clk, rst_n, valid, ready, payload)
`define STRATA_ASSERT(name, clk, rst_n, prop)
`endif

`endif  // STRATA_ASSERT_SVH
