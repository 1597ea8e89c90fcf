// SPDX-License-Identifier: Apache-2.0
// What the LOAD, STORE and COMPUTE engines share between taking an
// instruction and retiring it: the start and run flags of their state
// machines, replicated for placement, and the dependency sequencer
// (strata_dep_sync) that turns the instruction's header counts into
// semaphore requests and releases. Each engine keeps its own state machine
// (its checks, its work, its error sources differ); the shell is driven by
// that machine's next-state decodes.
//
// start_o: the engine is in its start state (one cycle; the engine's blocks
//   load their counters). A flip-flop per group of blocks placed together
//   (strata_reg_copies) plus one for the sequencer, loaded from start_d_i,
//   the transition into the start state written out by the engine, and
//   checked against in_start_i, the decode of that state. The sequencer is
//   always idle in the start state (it leaves idle only on this start and
//   returns on the finish, an abort or the engine's error; asserted), so the
//   start needs no look at its ready: each block's load begins at a register
//   beside it, not at the state register's decode and the sequencer's state.
// run_o: the engine is in its run state, replicated the same way from
//   run_d_i and checked against in_run_i.
// Steps and finish: as strata_dep_sync (a step is a row of work; the finish
//   acquires what is left of acq0 and releases the rest).
// Latency: start_o and run_o follow start_d_i and run_d_i one cycle later;
// the sequencer's as in strata_dep_sync.
`include "strata_assert.svh"

module strata_engine_shell
  import strata_isa_pkg::dep_hdr_t;
#(
  parameter int unsigned StartCopies = 1,  // start flags for the engine's block groups, >= 1
  parameter int unsigned RunCopies   = 1,  // run flags for the engine's block groups, >= 1
  localparam int unsigned AmountWidth = strata_isa_pkg::DepCountWidth
) (
  input  logic                        clk_i,           // clock
  input  logic                        rst_ni,          // synchronous reset, active low
  input  logic                        abort_i,         // drop the instruction: sequencer to idle
  // the engine's state machine
  input  logic                        start_d_i,       // next state is the start state
  input  logic                        in_start_i,      // state is the start state (check only)
  input  logic                        run_d_i,         // next state is the run state
  input  logic                        in_run_i,        // state is the run state (check only)
  output logic [StartCopies-1:0]      start_o,         // in the start state, a copy per group
  output logic [RunCopies-1:0]        run_o,           // in the run state, a copy per group
  // the instruction (stable from the start state on)
  input  logic                        fine_i,          // fine-grained dependency mode
  input  dep_hdr_t                    deps_i,          // its dependency fields
  // steps
  input  logic                        step_valid_i,    // the engine wants to start the next step
  output logic                        step_ready_o,    // its units are held: go
  input  logic                        step_done_i,     // a step finished (pulse)
  input  logic                        finish_valid_i,  // all work done
  output logic                        finish_ready_o,  // remaining units held, releases issued
  // semaphore ports (strata_dep_sems)
  output logic [1:0]                  acq_req_o,       // acquire request per incoming edge
  output logic [1:0][AmountWidth-1:0] acq_amount_o,    // units requested
  input  logic [1:0]                  acq_grant_i,     // granted
  output logic [1:0]                  rel_valid_o,     // release per outgoing edge (pulse)
  output logic [1:0][AmountWidth-1:0] rel_amount_o,    // units released
  // status
  output logic                        waiting_o        // a step or the finish waits for units
);

  // Copy 0 starts the sequencer; copies 1.. are the engine's.
  logic [StartCopies:0] start_q;
  logic                 sync_start_ready, sync_busy;

  strata_reg_copies #(.Copies (StartCopies + 1)) u_start_copies (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (start_d_i),
    .mirror_i (in_start_i),
    .q_o      (start_q)
  );

  strata_reg_copies #(.Copies (RunCopies)) u_run_copies (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (run_d_i),
    .mirror_i (in_run_i),
    .q_o      (run_o)
  );

  assign start_o = start_q[StartCopies:1];

  strata_dep_sync u_sync (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .start_valid_i  (start_q[0]),
    .start_ready_o  (sync_start_ready),
    .fine_i         (fine_i),
    .deps_i         (deps_i),
    .step_valid_i   (step_valid_i),
    .step_ready_o   (step_ready_o),
    .step_done_i    (step_done_i),
    .finish_valid_i (finish_valid_i),
    .finish_ready_o (finish_ready_o),
    .acq_req_o      (acq_req_o),
    .acq_amount_o   (acq_amount_o),
    .acq_grant_i    (acq_grant_i),
    .rel_valid_o    (rel_valid_o),
    .rel_amount_o   (rel_amount_o),
    .busy_o         (sync_busy),
    .waiting_o      (waiting_o)
  );

  // ---------------------------------------------------------------- checks
  logic unused_sync_busy;
  assign unused_sync_busy = sync_busy;

  `STRATA_ASSERT(shell_start_idle, clk_i, rst_ni, !in_start_i || sync_start_ready)
  `STRATA_ASSERT(shell_start_once, clk_i, rst_ni, !(in_start_i && start_d_i))

`ifndef SYNTHESIS
  initial begin
    assert (StartCopies >= 1 && RunCopies >= 1)
      else $fatal(1, "strata_engine_shell: StartCopies and RunCopies must be >= 1");
  end
`endif

endmodule : strata_engine_shell
