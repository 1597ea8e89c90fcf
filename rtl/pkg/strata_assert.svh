// Strata assertion macros (simulation only; kept on in Verilator with --assert).
//
// `STRATA_ASSERT_STREAM(name, clk, rst_n, valid, ready, payload)
//   AXI handshake rules on one valid/ready stream: once valid rises it stays
//   high until ready, and the payload does not change while waiting.
`ifndef STRATA_ASSERT_SVH
`define STRATA_ASSERT_SVH

`ifndef SYNTHESIS
`define STRATA_ASSERT_STREAM(name, clk, rst_n, valid, ready, payload) \
  name``_valid_stable : assert property (@(posedge clk) disable iff (!rst_n) \
    (valid && !ready) |=> valid) \
    else $error("%m: %s valid dropped before ready", `"name`"); \
  name``_payload_stable : assert property (@(posedge clk) disable iff (!rst_n) \
    (valid && !ready) |=> $stable(payload)) \
    else $error("%m: %s payload changed while waiting for ready", `"name`");
`define STRATA_ASSERT(name, clk, rst_n, prop) \
  name : assert property (@(posedge clk) disable iff (!rst_n) (prop)) \
    else $error("%m: assertion %s failed", `"name`");
`else
`define STRATA_ASSERT_STREAM(name, clk, rst_n, valid, ready, payload)
`define STRATA_ASSERT(name, clk, rst_n, prop)
`endif

`endif  // STRATA_ASSERT_SVH
