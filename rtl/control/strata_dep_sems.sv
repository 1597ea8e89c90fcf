// SPDX-License-Identifier: Apache-2.0
// The five dependency semaphores of docs/isa.md: L2C, C2S, C2L, S2C, S2L.
//
// Each semaphore is a counter with one producer (release) and one consumer
// (acquire). Engine ports follow the per-opcode edge numbering:
//   load:    acquire e0 = C2L, e1 = S2L;  release e0 = L2C (e1 unused: rel1 = 0)
//   compute: acquire e0 = L2C, e1 = S2C;  release e0 = C2S, e1 = C2L
//   store:   acquire e0 = C2S (e1 unused: acq1 = 0);  release e0 = S2C, e1 = S2L
// Acquire is a valid/ready handshake: acq_req (valid) with a stable amount is
// granted (acq_grant, one cycle) the cycle after the registered count was
// seen to hold at least that amount, and the amount is subtracted in the
// cycle of the grant. The comparison loads a flip-flop per semaphore
// (grant_q) and the grant is that flip-flop alone: nothing crosses from an
// engine through the comparison and back into the engine in one cycle. It
// is exact because each semaphore has one consumer: while its request waits
// nothing else takes units, and releases only add, so a count that held the
// amount still holds it a cycle later. The flip-flop is not loaded in the
// cycle of a grant (the request it saw is done), so back-to-back acquires
// on one semaphore are two cycles apart. A release adds its amount the cycle
// rel_valid is high (no handshake). Releases are registered on arrival (the
// engines sit far apart on an FPGA: a release travels one cycle, then the
// counter adds it), so a release can make a grant three cycles later.
// While abort_i is high nothing is granted and requests may be withdrawn.
// clear_i (start of a run) zeroes every counter and drops a release of its
// cycle. count + release - acquire is one carry chain behind a carry-save
// stage. The unused edges (load rel1, store acq1) are asserted idle (the
// fetcher rejects instructions that would use them). A count that would exceed
// 2^SemWidth - 1 is an error: the counter wraps (keeps the low SemWidth bits),
// overflow_o rises the cycle after and stays high until clear_i (the
// controller stops the run; an assertion fires too, since a well-formed
// program never releases that much). Timing: the overflow bit of each
// counter's sum goes to a flip-flop beside it (over_q) and nowhere else, not
// into the count's own next value.
`include "strata_assert.svh"

module strata_dep_sems #(
  parameter int unsigned SemWidth    = 32,  // counter bits, >= AmountWidth
  parameter int unsigned AmountWidth = strata_isa_pkg::DepCountWidth,  // amount bits (ISA header)
  localparam int unsigned NumSems    = 5
) (
  input  logic                        clk_i,              // clock
  input  logic                        rst_ni,             // synchronous reset, active low
  input  logic                        clear_i,            // zero every counter (run start)
  input  logic                        abort_i,            // run aborted: no grants
  // load engine
  input  logic [1:0]                  ld_acq_req_i,       // acquire request per edge (C2L, S2L)
  input  logic [1:0][AmountWidth-1:0] ld_acq_amount_i,    // units requested
  output logic [1:0]                  ld_acq_grant_o,     // granted this cycle
  input  logic [1:0]                  ld_rel_valid_i,     // release per edge (L2C, unused)
  input  logic [1:0][AmountWidth-1:0] ld_rel_amount_i,    // units released
  // compute engine
  input  logic [1:0]                  cp_acq_req_i,       // acquire request (L2C, S2C)
  input  logic [1:0][AmountWidth-1:0] cp_acq_amount_i,    // units requested
  output logic [1:0]                  cp_acq_grant_o,     // granted this cycle
  input  logic [1:0]                  cp_rel_valid_i,     // release (C2S, C2L)
  input  logic [1:0][AmountWidth-1:0] cp_rel_amount_i,    // units released
  // store engine
  input  logic [1:0]                  st_acq_req_i,       // acquire request (C2S, unused)
  input  logic [1:0][AmountWidth-1:0] st_acq_amount_i,    // units requested
  output logic [1:0]                  st_acq_grant_o,     // granted this cycle
  input  logic [1:0]                  st_rel_valid_i,     // release (S2C, S2L)
  input  logic [1:0][AmountWidth-1:0] st_rel_amount_i,    // units released
  // status
  output logic [NumSems-1:0][SemWidth-1:0] count_o,       // L2C, C2S, C2L, S2C, S2L (index order)
  output logic                        overflow_o          // a counter would have overflowed
);

  // Semaphore indices (the order of count_o).
  localparam int unsigned L2C = 0;
  localparam int unsigned C2S = 1;
  localparam int unsigned C2L = 2;
  localparam int unsigned S2C = 3;
  localparam int unsigned S2L = 4;

  logic [NumSems-1:0]                  acq_req, grant, over;
  logic [NumSems-1:0]                  grant_d, grant_q;  // the count holds the request's amount
  logic [NumSems-1:0]                  over_q;            // over, registered per counter
  logic [NumSems-1:0][AmountWidth-1:0] acq_amount, rel_add;
  logic [NumSems-1:0][SemWidth-1:0]    count_d, count_q;
  logic                                overflow_d, overflow_q;
  logic                                live;  // not in reset, clear or abort (for checks)

  // An abort withdraws waiting requests: the stream rule holds outside it.
  assign live = rst_ni && !clear_i && !abort_i;

  // Who acquires and who releases each semaphore (releases: before their
  // input register).
  logic [NumSems-1:0]                  rel_valid_in;
  logic [NumSems-1:0][AmountWidth-1:0] rel_amount_in;

  always_comb begin
    acq_req[L2C] = cp_acq_req_i[0];  acq_amount[L2C] = cp_acq_amount_i[0];
    acq_req[C2S] = st_acq_req_i[0];  acq_amount[C2S] = st_acq_amount_i[0];
    acq_req[C2L] = ld_acq_req_i[0];  acq_amount[C2L] = ld_acq_amount_i[0];
    acq_req[S2C] = cp_acq_req_i[1];  acq_amount[S2C] = cp_acq_amount_i[1];
    acq_req[S2L] = ld_acq_req_i[1];  acq_amount[S2L] = ld_acq_amount_i[1];
    rel_valid_in[L2C] = ld_rel_valid_i[0];  rel_amount_in[L2C] = ld_rel_amount_i[0];
    rel_valid_in[C2S] = cp_rel_valid_i[0];  rel_amount_in[C2S] = cp_rel_amount_i[0];
    rel_valid_in[C2L] = cp_rel_valid_i[1];  rel_amount_in[C2L] = cp_rel_amount_i[1];
    rel_valid_in[S2C] = st_rel_valid_i[0];  rel_amount_in[S2C] = st_rel_amount_i[0];
    rel_valid_in[S2L] = st_rel_valid_i[1];  rel_amount_in[S2L] = st_rel_amount_i[1];
  end

  // The release register holds the amount to add (0: no release). A release
  // in the cycle of clear_i is dropped, as the counters it would have reached
  // are zeroed that cycle.
  for (genvar s = 0; s < NumSems; s++) begin : g_rel
    always_ff @(posedge clk_i) begin
      if (!rst_ni || clear_i || !rel_valid_in[s]) rel_add[s] <= '0;
      else                                        rel_add[s] <= rel_amount_in[s];
    end
  end

  // The new count is computed for both outcomes of the acquire (in parallel
  // with the comparison), and the grant only selects one: the comparator and
  // the adders are not in series. count + release - acquire is one carry
  // chain, not two: a carry-save stage (one LUT level) reduces the three
  // operands count, release and ~acquire to two, and the free LSB of the
  // shifted carries adds the 1 of the negation.
  // Modulo 2^(SemWidth+1) that is count + release - acquire exactly, which
  // is never negative when the acquire is granted (count >= acquire).
  for (genvar s = 0; s < NumSems; s++) begin : g_sem
    logic [SemWidth-1:0] count;     // this semaphore's count (named for waveforms)
    logic [SemWidth:0]   sum_keep;  // count + release (one extra bit to see the overflow)
    logic [SemWidth:0]   sum_take;  // count + release - acquire
    logic [SemWidth:0]   sum;
    logic [SemWidth:0]   op_count, op_rel, op_acq_n;  // the three operands of sum_take
    logic [SemWidth:0]   csa_sum, csa_carry;          // their carry-save form
    logic                unused_csa_top;              // carry of weight 2^(SemWidth+1)
    assign count     = count_q[s];
    // The request waits at least a cycle: its comparison with this cycle's
    // count loads grant_q, and a set grant_q is the grant (the request is
    // still there: stream rule, or abort, which blocks the grant).
    assign grant_d[s] = acq_req[s] && !grant[s] && !abort_i && !clear_i &&
                        count >= SemWidth'(acq_amount[s]);
    assign grant[s]   = grant_q[s] && !abort_i;
    `STRATA_ASSERT(sem_grant_holds, clk_i, rst_ni, !grant[s] ||
                   (acq_req[s] && count >= SemWidth'(acq_amount[s])))
    assign sum_keep  = {1'b0, count} + (SemWidth + 1)'(rel_add[s]);
    assign op_count  = {1'b0, count};
    assign op_rel    = (SemWidth + 1)'(rel_add[s]);
    assign op_acq_n  = ~(SemWidth + 1)'(acq_amount[s]);
    assign csa_sum   = op_count ^ op_rel ^ op_acq_n;
    assign csa_carry = (op_count & op_rel) | (op_count & op_acq_n) | (op_rel & op_acq_n);
    assign sum_take  = csa_sum + {csa_carry[SemWidth-1:0], 1'b1};
    assign unused_csa_top = csa_carry[SemWidth];  // outside the sum (modulo 2^(SemWidth+1))
    `STRATA_ASSERT(sem_take_exact, clk_i, rst_ni, !grant[s] ||
                   sum_take == sum_keep - (SemWidth + 1)'(acq_amount[s]))
    assign sum      = grant[s] ? sum_take : sum_keep;
    assign over[s] = sum[SemWidth];
    assign count_d[s] = clear_i ? '0 : sum[SemWidth-1:0];
  end

  assign overflow_d = !clear_i && (overflow_q || |over_q);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      count_q    <= '0;
      grant_q    <= '0;
      over_q     <= '0;
      overflow_q <= 1'b0;
    end else begin
      count_q    <= count_d;
      grant_q    <= grant_d;
      over_q     <= clear_i ? '0 : over;
      overflow_q <= overflow_d;
    end
  end

  assign ld_acq_grant_o = {grant[S2L], grant[C2L]};
  assign cp_acq_grant_o = {grant[S2C], grant[L2C]};
  assign st_acq_grant_o = {1'b0, grant[C2S]};
  assign count_o        = count_q;
  assign overflow_o     = overflow_q;

  // Acquire requests are valid/ready streams (the amount is the payload).
  for (genvar e = 0; e < 2; e++) begin : g_edge_checks
    `STRATA_ASSERT_STREAM(ld_acq, clk_i, live, ld_acq_req_i[e], ld_acq_grant_o[e],
                          ld_acq_amount_i[e])
    `STRATA_ASSERT_STREAM(cp_acq, clk_i, live, cp_acq_req_i[e], cp_acq_grant_o[e],
                          cp_acq_amount_i[e])
  end
  `STRATA_ASSERT_STREAM(st_acq, clk_i, live, st_acq_req_i[0], st_acq_grant_o[0],
                        st_acq_amount_i[0])
  // Edges that do not exist (LOAD rel1, STORE acq1) are never used.
  `STRATA_ASSERT(no_load_rel1, clk_i, rst_ni, !ld_rel_valid_i[1] || ld_rel_amount_i[1] == '0)
  `STRATA_ASSERT(no_store_acq1, clk_i, rst_ni, !st_acq_req_i[1] || st_acq_amount_i[1] == '0)
  `STRATA_ASSERT(no_overflow, clk_i, rst_ni, !(|over) || clear_i)

`ifndef SYNTHESIS
  initial begin
    assert (SemWidth >= AmountWidth && SemWidth <= 63)
      else $fatal(1, "strata_dep_sems: SemWidth must be in AmountWidth..63");
  end
`endif

endmodule : strata_dep_sems
