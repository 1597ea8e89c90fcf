// SPDX-License-Identifier: Apache-2.0
// One engine's side of the dependency semaphores (docs/isa.md, Dependencies):
// turns an instruction's header counts into acquire requests and releases,
// in completion-granular or fine-grained mode.
//
// Sequence per instruction (the engine drives start, step and finish):
//   start:  latch the header's counts (deps_i: acq0, acq1, rel0, rel1,
//           acq0_first, acq0_step) and the mode;
//           acquire acq1 on edge 1 (always up front);
//   step k: the engine may start step k (a row) once need(k) units of edge 0
//           are held: need = acq0 in completion mode, and
//           min(acq0, acq0_first + k * acq0_step) in fine-grained mode;
//   step done (fine-grained): release one unit of rel0 while fewer than rel0
//           have been released;
//   finish: acquire the rest of acq0, then release what is left of rel0 and
//           all of rel1 in the cycle finish_ready_o is high.
// Acquire ahead: the units of the next step are requested as soon as the
// previous step has started, not when the engine asks for it, so they are
// usually held by then. That is safe: every semaphore has one consumer, and
// the instruction acquires need(k) units before it finishes anyway.
// Zero amounts cost no request. Requests are valid/ready streams into
// strata_dep_sems (the amount stays stable until the grant).
// abort_i returns to idle at once (nothing released).
// Timing: the request and its amount come from registers (the gaps to the
// next step's and to the whole acq0 are kept as registers beside the held
// count), and step_ready_o / finish_ready_o are registered flags, so no
// comparison or subtraction crosses from the engine through the semaphores
// and back in one cycle (strata_dep_sems grants from a flip-flop, and a
// grant is taken as the grant of the standing request without looking at
// the request again). Latency: a granted request makes the step (or the
// finish) ready the next cycle; a step whose units are already held is
// accepted in the cycle it is asked for. After a step starts, the next
// step's request is raised the following cycle: consecutive fine-grained
// steps are at least two cycles apart.
// The fields and counts load in every idle cycle, so the engine's start moves
// only the state. What a fine-grained step changes, and step_ready_q's next
// value, are computed for both values of step_valid_i, which selects at the
// last LUT.
// waiting_o: the engine asks for a step or the finish that is not ready (read
// by the engines' dep_wait, the stall counters and the watchdog).
`include "strata_assert.svh"

module strata_dep_sync
  import strata_isa_pkg::dep_hdr_t;
#(
  localparam int unsigned AmountWidth = strata_isa_pkg::DepCountWidth  // header count bits
) (
  input  logic                        clk_i,           // clock
  input  logic                        rst_ni,          // synchronous reset, active low
  input  logic                        abort_i,         // drop the instruction, go idle
  // instruction start
  input  logic                        start_valid_i,   // an instruction begins
  output logic                        start_ready_o,   // idle: taken (then acquires acq1)
  input  logic                        fine_i,          // fine-grained mode for this instruction
  input  dep_hdr_t                    deps_i,          // the instruction's dependency fields
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
  output logic                        busy_o,          // between start and finish
  output logic                        waiting_o        // a request waits for its semaphore
);

  typedef enum logic [1:0] {
    StIdle,
    StAcq1,
    StRun
  } state_e;

  localparam int unsigned W = AmountWidth;

  state_e       state_d, state_q;
  logic         fine_d, fine_q;
  logic [W-1:0] acq0_d, acq0_q, acq1_d, acq1_q, rel1_d, rel1_q, step_d, step_q;
  logic [W-1:0] need_d, need_q;          // edge-0 units needed before the next step
  logic [W-1:0] held_d, held_q;          // edge-0 units acquired so far
  // rel0 units not released yet, counted down, and whether any is left (a
  // flip-flop loaded from a compare of the count, beside its decrement): a
  // fine-grained step's release reads the flag, not a 16-bit comparison of
  // the count with rel0 (no compare of the count in front of its own
  // decrement), and the finish releases the count itself (no subtraction).
  logic [W-1:0] rel_left_d, rel_left_q;
  logic         rel_any_d, rel_any_q;     // rel_left_q != 0
  // Registered views of held_q (exact, asserted below):
  logic         need_met_d, need_met_q;  // held_q >= need_q
  logic         need_met_wait;           // need_met_d if no step starts this cycle
  logic         need_met_step;           // need_met_d if a fine-grained step starts
  logic [W-1:0] need_wait, gap_wait;     // need_d, need_gap_d if no step starts
  logic         all_held_d, all_held_q;  // held_q >= acq0_q
  logic [W-1:0] need_gap_d, need_gap_q;  // need_q - held_q while !need_met_q
  logic [W-1:0] all_gap_d, all_gap_q;    // acq0_q - held_q
  logic         req_need, req_all;       // request the next step's / all remaining units
  logic         step_fire, finish_fire, step_rel, grant0;
  logic [W-1:0] step_gap;                // units the next step adds: min(step, acq0 - need)
  logic [W-1:0] first_need;              // need of step 0
  logic         step_zero_q;             // step_q == 0

  // step_ready_o leaves a flip-flop of its own (step_ready_q, kept, loaded
  // from the next state and need_met_d; asserted equal to the decode below):
  // the placer puts it beside the engine's step logic (the walker's advance
  // enables in the compute engine), so no route from need_met_q, across the
  // die from the semaphores, reaches the walker in the same cycle. The
  // sequencer's own logic reads the decode.
  (* keep *) logic step_ready_q;
  logic            step_ready;          // state_q == StRun && need_met_q

  assign step_ready     = state_q == StRun && need_met_q;
  assign step_ready_o   = step_ready_q;
  assign finish_ready_o = state_q == StRun && all_held_q;
  assign step_fire      = step_valid_i && step_ready;
  assign finish_fire    = finish_valid_i && finish_ready_o;
  assign step_rel       = state_q == StRun && fine_q && step_done_i && rel_any_q;
  assign start_ready_o  = state_q == StIdle;

  // The next step's units as soon as they are missing; the rest of acq0 when
  // the finish asks for it and the current step's units are held (so a
  // waiting request's amount never changes).
  assign req_need = state_q == StRun && !need_met_q;
  assign req_all  = state_q == StRun && need_met_q && finish_valid_i && !all_held_q;
  assign grant0   = acq_grant_i[0];  // only for a request (asserted below)

  always_comb begin
    acq_req_o       = '0;
    acq_amount_o    = '0;
    acq_req_o[0]    = req_need || req_all;
    acq_amount_o[0] = need_met_q ? all_gap_q : need_gap_q;
    acq_req_o[1]    = state_q == StAcq1;
    acq_amount_o[1] = acq1_q;
  end

  always_comb begin
    rel_valid_o  = '0;
    rel_amount_o = '0;
    if (finish_fire) begin
      rel_valid_o[0]  = rel_any_q;
      rel_amount_o[0] = rel_left_q;
      rel_valid_o[1]  = rel1_q != '0;
      rel_amount_o[1] = rel1_q;
    end else if (step_rel) begin
      rel_valid_o[0]  = 1'b1;
      rel_amount_o[0] = W'(1);
    end
  end

  // A fine-grained step starts with held_q == need_q (held never passes the
  // current need before the finish), so the next need is need_q + step_gap
  // and its gap to held_q is step_gap itself.
  assign step_gap   = (step_q < all_gap_q) ? step_q : all_gap_q;
  assign first_need = !fine_i                           ? deps_i.acq0 :
                      deps_i.acq0_first < deps_i.acq0 ? deps_i.acq0_first : deps_i.acq0;
  // need_met_d is written without the minimum's comparator: a minimum of two
  // unsigned numbers is 0 exactly when one of them is, and all_gap_q is 0
  // exactly when all_held_q (held_q never passes acq0_q; asserted below). So
  // step_ready_q's next value waits for no carry chain (no comparator of
  // the acquire amount or all_gap_q in front of need met).
  // need_met_d is written as a choice between need_met_step and
  // need_met_wait, so step_ready_q's next value can take the engine's
  // step_valid_i at its last LUT (see below).
  assign need_met_step = step_zero_q || all_held_q;  // step_gap == 0

  always_comb begin
    state_d    = state_q;
    fine_d     = fine_q;
    acq0_d     = acq0_q;
    acq1_d     = acq1_q;
    rel1_d     = rel1_q;
    step_d     = step_q;
    need_wait  = need_q;
    held_d     = held_q;
    rel_left_d = rel_left_q;
    rel_any_d  = rel_any_q;
    need_met_wait = need_met_q;
    all_held_d = all_held_q;
    gap_wait   = need_gap_q;
    all_gap_d  = all_gap_q;
    if (grant0) begin
      // held becomes need_q (step request) or acq0_q (finish request).
      held_d        = need_met_q ? acq0_q : need_q;
      need_met_wait = 1'b1;
      gap_wait   = '0;
      all_gap_d  = need_met_q ? '0 : all_gap_q - need_gap_q;
      all_held_d = need_met_q || all_gap_q == need_gap_q;
    end
    if (step_rel) begin
      rel_left_d = rel_left_q - W'(1);
      rel_any_d  = rel_left_q != W'(1);
    end
    unique case (state_q)
      StIdle: begin
        // The fields and counts load in every idle cycle (nothing reads them
        // before the start), so the engine's start only moves the state: it
        // does not fan out to the enables of the counters across the die.
        fine_d     = fine_i;
        acq0_d     = deps_i.acq0;
        acq1_d     = deps_i.acq1;
        rel1_d     = deps_i.rel1;
        step_d     = deps_i.acq0_step;
        need_wait  = first_need;
        held_d     = '0;
        rel_left_d = deps_i.rel0;
        rel_any_d  = deps_i.rel0 != '0;
        // first_need == 0
        need_met_wait = deps_i.acq0 == '0 || (fine_i && deps_i.acq0_first == '0);
        all_held_d = deps_i.acq0 == '0;
        gap_wait   = first_need;
        all_gap_d  = deps_i.acq0;
        if (start_valid_i) state_d = (deps_i.acq1 != '0) ? StAcq1 : StRun;
      end
      StAcq1: if (acq_grant_i[1]) state_d = StRun;
      StRun:  if (finish_fire) state_d = StIdle;
      default: state_d = StIdle;
    endcase
    if (abort_i) state_d = StIdle;
  end

  // What a fine-grained step changes (need_q, need_gap_q, need_met_q) is
  // computed for either value of the engine's step_valid_i, which then only
  // selects (a step coincides with neither a grant nor the idle loads: it
  // needs StRun and need_met_q, the step request !need_met_q, the finish's
  // request finish_valid_i, which excludes a step; asserted). So the
  // engine's step request (a decode of its burst generator's flags) reaches
  // one LUT after its route to the sequencer, not the step's multiplexers
  // behind it (the route from the engine is long; the critical path of the
  // load sequencer otherwise runs through it).
  // step_take: a step asked for this cycle would start, fine-grained.
  logic step_take;
  (* keep *) logic [W-1:0] need_if_step, gap_if_step;
  (* keep *) logic         met_if_step;
  assign step_take    = step_ready && fine_q;
  assign need_if_step = step_take ? need_q + step_gap : need_wait;
  assign gap_if_step  = step_take ? step_gap : gap_wait;
  assign met_if_step  = step_take ? need_met_step : need_met_wait;
  assign need_d       = step_valid_i ? need_if_step : need_wait;
  assign need_gap_d   = step_valid_i ? gap_if_step : gap_wait;
  assign need_met_d   = step_valid_i ? met_if_step : need_met_wait;

  // step_ready_q's next value (state_d == StRun && need_met_d) likewise, so
  // the step request's route from the engine meets one LUT, not the need-met
  // logic. state_d does not depend on step_valid_i.
  (* keep *) logic ready_if_step, ready_if_wait;
  assign ready_if_wait = state_d == StRun && need_met_wait;
  assign ready_if_step = state_d == StRun && met_if_step;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      step_ready_q <= 1'b0;
    end else begin
      state_q      <= state_d;
      step_ready_q <= step_valid_i ? ready_if_step : ready_if_wait;
    end
  end

  // Instruction fields and counters: qualified by the state.
  always_ff @(posedge clk_i) begin
    fine_q     <= fine_d;
    acq0_q     <= acq0_d;
    acq1_q     <= acq1_d;
    rel1_q     <= rel1_d;
    step_q     <= step_d;
    need_q     <= need_d;
    held_q     <= held_d;
    rel_left_q <= rel_left_d;
    rel_any_q  <= rel_any_d;
    need_met_q <= need_met_d;
    all_held_q <= all_held_d;
    need_gap_q <= need_gap_d;
    all_gap_q  <= all_gap_d;
  end

  always_ff @(posedge clk_i) begin
    step_zero_q <= step_d == '0;
  end

  assign busy_o    = state_q != StIdle;
  assign waiting_o = (step_valid_i && !step_ready) || (finish_valid_i && !finish_ready_o);

  `STRATA_ASSERT(dep_sync_step_ready, clk_i, rst_ni, step_ready_q == step_ready)
  `STRATA_ASSERT(dep_sync_ready_next, clk_i, rst_ni,
                 (step_valid_i ? ready_if_step : ready_if_wait) == (state_d == StRun && need_met_d))
  `STRATA_ASSERT(dep_sync_zero_flags, clk_i, rst_ni, state_q != StRun ||
                 (step_zero_q == (step_q == '0) && all_held_q == (all_gap_q == '0) &&
                  rel_any_q == (rel_left_q != '0)))
  `STRATA_ASSERT(dep_sync_excl, clk_i, rst_ni, !(step_valid_i && finish_valid_i))
  `STRATA_ASSERT(dep_sync_all_held, clk_i, rst_ni,
                 state_q != StRun || all_held_q == (held_q >= acq0_q))
  `STRATA_ASSERT(dep_sync_need_met, clk_i, rst_ni,
                 state_q != StRun || need_met_q == (held_q >= need_q))
  `STRATA_ASSERT(dep_sync_gaps, clk_i, rst_ni, state_q != StRun ||
                 (all_gap_q == acq0_q - held_q && need_q <= acq0_q &&
                  (need_met_q || need_gap_q == need_q - held_q)))
  `STRATA_ASSERT(dep_sync_grant_req, clk_i, rst_ni, !acq_grant_i[0] || acq_req_o[0])
  `STRATA_ASSERT(dep_sync_step_held, clk_i, rst_ni, !(step_fire && fine_q) || held_q == need_q)
  `STRATA_ASSERT(dep_sync_step_alone, clk_i, rst_ni,
                 !(step_valid_i && step_take) || (!grant0 && state_q == StRun))
  `STRATA_ASSERT(dep_sync_idle_use, clk_i, rst_ni,
                 state_q != StIdle || !(step_valid_i || finish_valid_i || step_done_i))

endmodule : strata_dep_sync
