// SPDX-License-Identifier: Apache-2.0
// Run control of the accelerator: start, completion, abort on error, drain,
// and the deadlock watchdog.
//
// States: Idle -> Run (START) -> Idle (END reached and everything idle: DONE)
//                           \--> Drain (error) -> Idle (everything idle: ERROR)
// START (start_i, a CSR pulse) in Idle pulses clear_o for one cycle (engines,
// fetcher, semaphores and counters return to their initial state), clears
// DONE / ERROR / ERROR_CODE, latches CTRL.FINE_GRAIN and enters Run.
// In Run the first error wins: its code and instruction index are latched
// (several in one cycle: fetch, load, compute, store, semaphore overflow,
// deadlock, BUSY_START, in that order) and abort_o rises until every client is
// idle, i.e. has finished the AXI transactions it started (every AW has its W
// beats, every AR's R beats are absorbed) and no write response is pending.
// ERROR and its interrupt (error_set_o) are set only then, so the next START
// finds a quiet bus. A semaphore overflow is ILLEGAL_INSTR with index 0xFFFF
// (the program's counts are wrong).
// START while Run is error BUSY_START (the run's results are unreliable); in
// Drain it is ignored (the first error stands).
// DONE: the fetcher has reached END (all instructions before it dispatched),
// every queue is empty and every engine idle, which includes all AXI writes
// acknowledged.
// Watchdog: in Run, when the fetcher can make no progress (END reached, or
// blocked on a full queue) and every engine is either idle (nothing
// outstanding) with an empty queue or waiting on a semaphore, and at least
// one waits, for WatchdogCycles cycles in a row, the run stops with
// DEADLOCK; the index is the smallest instruction index among the waiting
// engines. A store engine waiting for write responses, or with an S2L release
// pending, is not idle. The condition is exact (nothing could release a
// unit), so the count only adds margin.
// Cascade chain (strata_cascade_top, docs/cascade.md): chain_stop_i in Run
// stops the run with CHAIN_STOP (index 0xFFFF; after every error of this
// stage, before the watchdog): another stage of the chain stopped. It is
// kept until judged (chain_seen_q), so a stop in the first cycles after START,
// when no error is judged yet, is not lost. chain_stop_o is high while this
// stage drains after an error, from a flip-flop.
// Every status input from the fetcher and the engines is registered first
// (they come from blocks placed far apart on an FPGA, and the error priority
// and completion logic then start from flip-flops), and so is the outcome of
// the error priority and of the completion check (err_*_q, finished_q), so
// the state, code and abort registers load from flip-flops: errors,
// completion and deadlock are judged two cycles after the clients show them.
// clear_o and abort_o reach every client: each client gets its own copy
// (ClearCopies, AbortCopies; strata_reg_copies, checked against the state), which the
// placer puts beside the client, instead of one flip-flop whose net crosses
// the die.
// Latency: START to clear_o one cycle; completion to DONE (and done_set_o)
// three cycles. Status outputs are registers.
`include "strata_assert.svh"

module strata_controller
  import strata_csr_pkg::*;
#(
  parameter int unsigned WatchdogCycles = 4096,  // deadlock detection time, >= 2
  parameter int unsigned ClearCopies    = 1,     // copies of clear_o, one per client
  parameter int unsigned AbortCopies    = 1      // copies of abort_o, one per client
) (
  input  logic        clk_i,              // clock
  input  logic        rst_ni,             // synchronous reset, active low
  // from the CSRs
  input  logic        start_i,            // CTRL.START written 1 (pulse)
  input  logic        fine_grain_i,       // CTRL.FINE_GRAIN
  // fetcher
  input  logic        fetch_idle_i,       // no instruction read outstanding, not fetching
  input  logic        fetch_end_i,        // END reached: nothing more to dispatch
  input  logic        fetch_blocked_i,    // dispatch waits for a full queue
  input  logic        fetch_err_i,        // error (held until clear / abort)
  input  err_code_e   fetch_err_code_i,   // its code
  input  csr_error_code_index_t fetch_err_index_i,  // its instruction index
  // engines: load, compute, store (index 0, 1, 2)
  input  logic [2:0]  eng_queue_empty_i,  // the engine's instruction queue is empty
  input  logic [2:0]  eng_idle_i,         // no instruction, no AXI transaction outstanding
  input  logic [2:0]  eng_dep_wait_i,     // waiting on a semaphore
  input  csr_error_code_index_t [2:0] eng_index_i,  // index of the instruction being executed
  input  logic [2:0]  eng_err_i,          // error (held until abort)
  input  err_code_e [2:0] eng_err_code_i, // codes
  input  csr_error_code_index_t [2:0] eng_err_index_i,  // instruction indices
  // semaphores
  input  logic        sem_overflow_i,     // a semaphore would have overflowed
  // cascade chain
  input  logic        chain_stop_i,       // another stage of the chain stopped with an error
  output logic        chain_stop_o,       // this stage stops with an error (Drain)
  // to every client
  output logic [ClearCopies-1:0] clear_o, // one-cycle pulse at START: reset run state
  output logic [AbortCopies-1:0] abort_o, // stop issuing, finish AXI transactions, go idle
  output logic        fine_grain_o,       // mode of this run (latched at START)
  // status (to the CSRs)
  output logic        busy_o,             // STATUS.BUSY (Run or Drain)
  output logic        done_o,             // STATUS.DONE
  output logic        error_o,            // STATUS.ERROR
  output err_code_e   err_code_o,         // ERROR_CODE.CODE
  output csr_error_code_index_t err_index_o,  // ERROR_CODE.INDEX
  output logic        done_set_o,         // pulse: run finished (IRQ_STATUS.DONE)
  output logic        error_set_o         // pulse: run stopped with an error (IRQ_STATUS.ERROR)
);

  typedef enum logic [1:0] {
    StIdle,
    StRun,
    StDrain
  } state_e;

  localparam int unsigned WdWidth = $clog2(WatchdogCycles + 1);

  state_e       state_d, state_q;
  logic         done_d, done_q, error_d, error_q, fine_d, fine_q;
  logic         clear_d, clear_q, done_set_d, done_set_q, error_set_d, error_set_q;
  err_code_e    code_d, code_q;
  csr_error_code_index_t index_d, index_q;
  logic [WdWidth-1:0] wd_d, wd_q;

  // Registered status inputs (see the header), for the error priority, the
  // completion check and the watchdog.
  logic             in_f_idle_q, in_f_end_q, in_f_blocked_q, in_f_err_q, in_overflow_q;
  logic             in_chain_q, chain_seen_q;
  err_code_e        in_f_code_q;
  csr_error_code_index_t in_f_index_q;
  logic [2:0]       in_e_empty_q, in_e_idle_q, in_e_wait_q, in_e_err_q;
  err_code_e [2:0]  in_e_code_q;
  csr_error_code_index_t [2:0] in_e_index_q, in_e_err_index_q;
  logic             clear_q2;  // clear_o was high two cycles ago
  logic             clear_q3;  // clear_o was high three cycles ago

  always_ff @(posedge clk_i) begin
    in_f_idle_q      <= fetch_idle_i;
    in_f_end_q       <= fetch_end_i;
    in_f_blocked_q   <= fetch_blocked_i;
    in_f_err_q       <= fetch_err_i;
    in_f_code_q      <= fetch_err_code_i;
    in_f_index_q     <= fetch_err_index_i;
    in_e_empty_q     <= eng_queue_empty_i;
    in_e_idle_q      <= eng_idle_i;
    in_e_wait_q      <= eng_dep_wait_i;
    in_e_index_q     <= eng_index_i;
    in_e_err_q       <= eng_err_i;
    in_e_code_q      <= eng_err_code_i;
    in_e_err_index_q <= eng_err_index_i;
    in_overflow_q    <= sem_overflow_i;
    in_chain_q       <= chain_stop_i;
  end

  // First error of this cycle, by priority.
  logic         err_any;
  err_code_e    err_code;
  csr_error_code_index_t err_index;
  logic         all_idle, finished, stuck, deadlock;
  csr_error_code_index_t wait_index, wait_index_q;  // smallest waiting index (stable while stuck)

  always_comb begin
    err_any   = 1'b1;
    err_code  = ErrNone;
    err_index = '0;
    if (in_f_err_q) begin
      err_code  = in_f_code_q;
      err_index = in_f_index_q;
    end else if (in_e_err_q[0]) begin
      err_code  = in_e_code_q[0];
      err_index = in_e_err_index_q[0];
    end else if (in_e_err_q[1]) begin
      err_code  = in_e_code_q[1];
      err_index = in_e_err_index_q[1];
    end else if (in_e_err_q[2]) begin
      err_code  = in_e_code_q[2];
      err_index = in_e_err_index_q[2];
    end else if (in_overflow_q) begin
      // A release that overflows a semaphore: the program's counts are wrong.
      err_code  = ErrIllegalInstr;
      err_index = '1;
    end else if (in_chain_q || chain_seen_q) begin
      err_code  = ErrChainStop;
      err_index = '1;
    end else if (deadlock) begin
      err_code  = ErrDeadlock;
      err_index = wait_index_q;
    end else if (start_i) begin
      err_code  = ErrBusyStart;
      err_index = '1;
    end else begin
      err_any = 1'b0;
    end
  end

  // Watchdog: nothing can move and someone waits (from registered inputs).
  // An engine between instructions with work outstanding (write responses,
  // a STORE's S2L release waiting for them) is not idle, so it does not
  // count as stuck: that work ends by itself, however slow the bus.
  always_comb begin
    stuck      = (in_f_end_q || in_f_blocked_q) && (|in_e_wait_q);
    for (int e = 0; e < 3; e++) begin
      if (!(in_e_wait_q[e] || (in_e_idle_q[e] && in_e_empty_q[e]))) stuck = 1'b0;
    end
  end

  // Smallest index among the waiting engines (the first engine on a tie):
  // three comparisons side by side and a selection, not three in series.
  logic       lt10, lt20, lt21;  // index of engine 1 < engine 0, 2 < 0, 2 < 1
  logic [2:0] wsel;
  always_comb begin
    lt10 = in_e_index_q[1] < in_e_index_q[0];
    lt20 = in_e_index_q[2] < in_e_index_q[0];
    lt21 = in_e_index_q[2] < in_e_index_q[1];
    wsel[0] = in_e_wait_q[0] && !(in_e_wait_q[1] && lt10) && !(in_e_wait_q[2] && lt20);
    wsel[1] = in_e_wait_q[1] && !(in_e_wait_q[0] && !lt10) && !(in_e_wait_q[2] && lt21);
    wsel[2] = in_e_wait_q[2] && !(in_e_wait_q[0] && !lt20) && !(in_e_wait_q[1] && !lt21);
    wait_index = wsel[0] ? in_e_index_q[0] : wsel[1] ? in_e_index_q[1] :
                 wsel[2] ? in_e_index_q[2] : '1;
  end

  assign deadlock = stuck && wd_q == WdWidth'(WatchdogCycles - 1);
  assign all_idle = in_f_idle_q && (&in_e_idle_q);
  assign finished = in_f_end_q && (&in_e_empty_q) && all_idle;

  // The priority's and the completion check's outcome, registered together
  // (an error and the completion it comes with are seen in the same cycle).
  logic         err_any_q, finished_q;
  err_code_e    err_code_q;
  csr_error_code_index_t err_index_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      err_any_q  <= 1'b0;
      finished_q <= 1'b0;
    end else begin
      err_any_q  <= err_any;
      finished_q <= finished;
    end
  end

  always_ff @(posedge clk_i) begin
    err_code_q  <= err_code;
    err_index_q <= err_index;
  end

  always_comb begin
    state_d     = state_q;
    done_d      = done_q;
    error_d     = error_q;
    fine_d      = fine_q;
    code_d      = code_q;
    index_d     = index_q;
    clear_d     = 1'b0;
    done_set_d  = 1'b0;
    error_set_d = 1'b0;
    wd_d        = (state_q == StRun && stuck) ? wd_q + WdWidth'(1) : '0;
    unique case (state_q)
      StIdle: begin
        if (start_i) begin
          state_d = StRun;
          clear_d = 1'b1;
          done_d  = 1'b0;
          error_d = 1'b0;
          fine_d  = fine_grain_i;
          code_d  = ErrNone;
          index_d = '0;
        end
      end
      StRun: begin
        // clear_o is high in the first Run cycle: clients still show the last
        // run's state then, the registered inputs a cycle longer and the
        // registered outcome one more, so nothing is judged before they are
        // reset.
        if (!clear_q && !clear_q2 && !clear_q3) begin
          if (err_any_q) begin
            state_d = StDrain;
            code_d  = err_code_q;
            index_d = err_index_q;
          end else if (finished_q) begin
            state_d    = StIdle;
            done_d     = 1'b1;
            done_set_d = 1'b1;
          end
        end
      end
      StDrain: begin
        if (all_idle) begin
          state_d     = StIdle;
          error_d     = 1'b1;
          error_set_d = 1'b1;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q     <= StIdle;
      done_q      <= 1'b0;
      error_q     <= 1'b0;
      fine_q      <= 1'b0;
      code_q      <= ErrNone;
      index_q     <= '0;
      clear_q     <= 1'b0;
      clear_q2    <= 1'b0;
      clear_q3    <= 1'b0;
      done_set_q  <= 1'b0;
      error_set_q <= 1'b0;
      wd_q        <= '0;
      chain_seen_q <= 1'b0;
    end else begin
      state_q     <= state_d;
      done_q      <= done_d;
      error_q     <= error_d;
      fine_q      <= fine_d;
      code_q      <= code_d;
      index_q     <= index_d;
      clear_q     <= clear_d;
      clear_q2    <= clear_q;
      clear_q3    <= clear_q2;
      done_set_q  <= done_set_d;
      error_set_q <= error_set_d;
      wd_q        <= wd_d;
      chain_seen_q <= !clear_d && (chain_seen_q || (in_chain_q && state_q == StRun));
    end
  end

  // A deadlock needs WatchdogCycles >= 2 stuck cycles, in which the waiting
  // engines and their indices do not change: last cycle's minimum is exact,
  // and the index comparisons stay out of the error path.
  always_ff @(posedge clk_i) begin
    wait_index_q <= wait_index;
  end

  strata_reg_copies #(.Copies (ClearCopies)) u_clear_copies (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (clear_d),
    .mirror_i (clear_q),
    .q_o      (clear_o)
  );

  strata_reg_copies #(.Copies (AbortCopies)) u_abort_copies (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (state_d == StDrain),
    .mirror_i (state_q == StDrain),
    .q_o      (abort_o)
  );

  assign fine_grain_o = fine_q;
  assign chain_stop_o = state_q == StDrain;
  assign busy_o       = state_q != StIdle;
  assign done_o       = done_q;
  assign error_o      = error_q;
  assign err_code_o   = code_q;
  assign err_index_o  = index_q;
  assign done_set_o   = done_set_q;
  assign error_set_o  = error_set_q;

  `STRATA_ASSERT(ctrl_status_excl, clk_i, rst_ni, !(done_q && error_q))
`ifndef SYNTHESIS
  // The selection equals the running minimum over the engines in order.
  function automatic csr_error_code_index_t min_waiting();
    csr_error_code_index_t m;
    m = '1;
    for (int e = 0; e < 3; e++) begin
      if (in_e_wait_q[e] && in_e_index_q[e] < m) m = in_e_index_q[e];
    end
    return m;
  endfunction
  `STRATA_ASSERT(ctrl_wait_index, clk_i, rst_ni, wait_index == min_waiting())
`endif
  `STRATA_ASSERT(ctrl_error_code, clk_i, rst_ni, !error_q || code_q != ErrNone)

`ifndef SYNTHESIS
  initial begin
    assert (WatchdogCycles >= 2) else $fatal(1, "strata_controller: WatchdogCycles must be >= 2");
  end
`endif

endmodule : strata_controller
