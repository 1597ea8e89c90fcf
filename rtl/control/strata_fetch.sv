// SPDX-License-Identifier: Apache-2.0
// Instruction fetch, decode checks and dispatch to the three engine queues.
//
// Fetch: instruction i (64 bytes) is read from base + 64 i with one AXI INCR
// burst of 512 / AxiDataWidth beats (8 at 64 bits; never crosses 4 KB since
// the base is 64-byte aligned). Up to PrefetchInstrs bursts are in flight or
// buffered: the beat buffer (strata_fifo_ram) has room for all of them, so R
// beats are always accepted and the shared R channel never waits for the
// fetcher. No instruction at or beyond INSTR_LIMIT is ever read.
// Decode (one instruction at a time, in order): the beats are assembled into
// the decode register and checked:
//   an R beat with RRESP != OKAY                               -> AXI_READ
//   unknown opcode (incl. 0) or a non-zero reserved bit        -> ILLEGAL_INSTR
//   a dependency field that must be 0 (END/CONFIG: all six; LOAD rel1;
//   STORE acq1) or acq0_first > acq0                           -> ILLEGAL_INSTR
//   CONFIG not matching this configuration (version, P, N,
//   sparse differ; banks, depths, act_tables above this build's) -> UNSUPPORTED
// (in two register stages: the rules, then their priority; two cycles after
// the last beat), then LOAD /
// COMPUTE / STORE go to their queue (strata_fifo, QueueDepth
// entries of instruction and index, in program order), CONFIG retires, END
// stops fetching (end_o) the cycle after it is taken. The dispatch condition
// is a register per destination, loaded from the next values of its terms.
// The AR address is a running register (+64 per instruction) and the
// remaining count below INSTR_LIMIT a down-counter.
// The instruction at index INSTR_LIMIT - 1 dispatched without an END is error
// NO_END with index INSTR_LIMIT (INSTR_LIMIT = 0: at once, index 0).
// Errors are reported in program order: a bad instruction fetched ahead of an
// END, but never decoded, reports nothing.
// Stop (END, error or abort_i): no new AR; beats still to come are absorbed
// and dropped; idle_o once no AR is pending and every beat has arrived. The
// queues are emptied by clear_i and abort_i (not by END: they hold the program).
// Throughput: one instruction per 512 / AxiDataWidth + 3 cycles when the
// beats are buffered; latency from START: the memory latency plus that.
// Indices are the low 16 bits of the fetch index.
`include "strata_assert.svh"

module strata_fetch
  import strata_csr_pkg::*;
  import strata_isa_pkg::*;
#(
  parameter int unsigned AxiDataWidth   = strata_cfg_pkg::AxiDataWidth,  // R beat bits
  parameter int unsigned AxiAddrWidth   = strata_cfg_pkg::AxiAddrWidth,  // byte address bits
  parameter int unsigned PrefetchInstrs = 4,   // instructions in flight or buffered, >= 1
  parameter int unsigned QueueDepth     = 2,   // entries per engine queue
  // The configuration CONFIG instructions are checked against.
  parameter int unsigned HwVersion      = strata_cfg_pkg::HwVersion,
  parameter int unsigned Pes            = strata_cfg_pkg::Pes,
  parameter int unsigned Lanes          = strata_cfg_pkg::Lanes,
  parameter int unsigned Banks          = strata_cfg_pkg::Banks,
  parameter int unsigned BankDepth      = strata_cfg_pkg::BankDepth,
  parameter int unsigned PeCacheDepth   = strata_cfg_pkg::PeCacheDepth,
  parameter int unsigned ParamDepth     = strata_cfg_pkg::ParamDepth,
  parameter bit          Sparse         = strata_cfg_pkg::Sparse,
  parameter int unsigned ActTables      = strata_cfg_pkg::ActTables
) (
  input  logic                    clk_i,          // clock
  input  logic                    rst_ni,         // synchronous reset, active low
  input  logic                    clear_i,        // run start: latch base/limit, begin fetching
  input  logic                    abort_i,        // stop, drain, empty the queues
  input  logic [63:6]             base_i,         // INSTR_BASE bits 63:6 (64-byte aligned)
  input  logic [31:0]             limit_i,        // INSTR_LIMIT
  // AXI read (ID assigned by strata_axi_rd_arbiter)
  output logic                    arvalid_o,      // burst request
  input  logic                    arready_i,      // taken
  output logic [AxiAddrWidth-1:0] araddr_o,       // instruction address
  output logic [7:0]              arlen_o,        // beats - 1
  input  logic                    rvalid_i,       // read beat
  output logic                    rready_o,       // always 1 in practice (space reserved)
  input  logic [AxiDataWidth-1:0] rdata_i,        // beat data
  input  logic [1:0]              rresp_i,        // beat response
  input  logic                    rlast_i,        // last beat of a burst
  // engine queues: load, compute, store
  output logic                    ld_valid_o,     // LOAD instruction available
  input  logic                    ld_ready_i,     // load engine takes it
  output instr_t                  ld_instr_o,     // instruction
  output csr_error_code_index_t   ld_index_o,     // its fetch index
  output logic                    cp_valid_o,     // COMPUTE instruction available
  input  logic                    cp_ready_i,     // compute engine takes it
  output instr_t                  cp_instr_o,     // instruction
  output csr_error_code_index_t   cp_index_o,     // its fetch index
  output logic                    st_valid_o,     // STORE instruction available
  input  logic                    st_ready_i,     // store engine takes it
  output instr_t                  st_instr_o,     // instruction
  output csr_error_code_index_t   st_index_o,     // its fetch index
  output logic [2:0]              queue_empty_o,  // load, compute, store queue empty
  // status
  output logic                    idle_o,         // no AR pending, no beat outstanding
  output logic                    end_o,          // END decoded (held until clear)
  output logic                    blocked_o,      // decoded instruction waits for a full queue
  output logic                    err_o,          // error (held until clear)
  output err_code_e               err_code_o,     // its code
  output csr_error_code_index_t   err_index_o,    // its instruction index
  output logic                    retire_o        // END or CONFIG retired (pulse)
);

  localparam int unsigned BeatsPerInstr = InstrBits / AxiDataWidth;
  localparam int unsigned BeatIdxWidth  = (BeatsPerInstr > 1) ? $clog2(BeatsPerInstr) : 1;
  localparam int unsigned BufDepth      = (PrefetchInstrs * BeatsPerInstr < 4) ? 4 :
                                          PrefetchInstrs * BeatsPerInstr;
  localparam int unsigned CreditWidth   = $clog2(PrefetchInstrs + 1);
  localparam int unsigned OutstWidth    = $clog2(PrefetchInstrs * BeatsPerInstr + 1);

  // ---------------------------------------------------------------- run state
  logic        active_d, active_q;      // fetching allowed (cleared by stop)
  logic        end_d, end_q;
  logic        err_d, err_q;
  err_code_e   err_code_d, err_code_q;
  csr_error_code_index_t err_index_d, err_index_q;
  logic [31:0] limit_d, limit_q;
  logic        limit_zero_d, limit_zero_q;  // limit_q == 0
  logic        stop;                    // any reason to stop this cycle
  logic        noend_q;                 // the limit was reached without END last cycle
  logic        stop_pend_q;             // END or the last allowed instruction was taken

  // ---------------------------------------------------------------- AR issue
  logic                    ar_valid_d, ar_valid_q;
  logic [AxiAddrWidth-1:0] ar_addr_d, ar_addr_q;
  logic [AxiAddrWidth-1:0] next_addr_d, next_addr_q;  // address of the next instruction to read
  logic [31:0]             to_issue_d, to_issue_q;    // instructions below the limit not requested
  logic                    more_d, more_q;            // to_issue_q != 0
  logic [CreditWidth-1:0]  credits_d, credits_q;      // instructions in flight or buffered
  logic [OutstWidth-1:0]   outst_d, outst_q;          // beats requested, not yet received
  logic                    ar_fire, ar_adv, ar_new, r_fire, instr_consumed;

  // ar_adv: the AR slot is free and an instruction may be requested; ar_new:
  // it is (no reason to stop this cycle). The address and count registers
  // and the credits advance on ar_adv alone, so the stop logic (decode
  // checks, dispatch) reaches only ar_valid_q, not their ~160 clock enables.
  // Advancing them in the cycle fetching stops is harmless: nothing reads
  // them until clear_i reloads them (no instruction is consumed while
  // draining, so the credits stay within PrefetchInstrs).
  assign ar_fire  = ar_valid_q && arready_i;
  assign ar_adv   = active_q && (!ar_valid_q || arready_i) && more_q &&
                    (32'(credits_q) < PrefetchInstrs);
  assign ar_new   = ar_adv && !stop;
  assign r_fire   = rvalid_i && rready_o;

  always_comb begin
    ar_valid_d  = ar_valid_q && !arready_i;
    ar_addr_d   = ar_addr_q;
    next_addr_d = next_addr_q;
    to_issue_d  = to_issue_q;
    more_d      = more_q;
    if (ar_new) ar_valid_d = 1'b1;
    if (ar_adv) begin
      ar_addr_d   = next_addr_q;
      next_addr_d = next_addr_q + AxiAddrWidth'(64);
      to_issue_d  = to_issue_q - 32'd1;
      more_d      = to_issue_q != 32'd1;
    end
    credits_d = credits_q + CreditWidth'(ar_adv) - CreditWidth'(instr_consumed);
    outst_d   = outst_q + (ar_fire ? OutstWidth'(BeatsPerInstr) : '0) - OutstWidth'(r_fire);
    if (clear_i) begin
      ar_valid_d  = ar_valid_q && !arready_i;  // an AR already raised stays until taken
      next_addr_d = AxiAddrWidth'({base_i, 6'd0});
      to_issue_d  = limit_i;
      more_d      = limit_i != 32'd0;
      credits_d   = '0;
    end
  end

  assign arvalid_o = ar_valid_q;
  assign araddr_o  = ar_addr_q;
  assign arlen_o   = 8'(BeatsPerInstr - 1);

  // ---------------------------------------------------------------- beat buffer
  logic                    buf_in_ready, buf_out_valid, buf_out_ready, buf_flush;
  typedef struct packed {
    logic                    error;  // RRESP != OKAY
    logic [AxiDataWidth-1:0] data;
  } beat_t;
  beat_t                   buf_out;
  logic                    draining; // stopped: beats are dropped
  logic [$clog2(BufDepth + 1)-1:0] unused_buf_count;
  logic                    unused_rlast;

  assign unused_rlast = rlast_i;  // bursts have a fixed length; beats are counted

  // clear_i comes only while stopped (the controller starts a run from Idle,
  // which it enters after the fetcher stopped; asserted), so the buffer and
  // the decode register are already emptied by draining: clear_i is not
  // among their flush terms, and the run-start pulse (with the reset it is
  // merged with) does not reach the R handshake or the buffer count.
  assign draining  = !active_q;
  assign buf_flush = draining;
  assign rready_o  = draining || buf_in_ready;

  strata_fifo_ram #(
    .T     (beat_t),
    .Depth (BufDepth)
  ) u_beats (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .flush_i     (buf_flush),
    .in_valid_i  (rvalid_i && !draining),
    .in_ready_o  (buf_in_ready),
    .in_data_i   (beat_t'{error: rresp_i != 2'b00, data: rdata_i}),
    .out_valid_o (buf_out_valid),
    .out_ready_i (buf_out_ready),
    .out_data_o  (buf_out),
    .count_o     (unused_buf_count)
  );

  // ---------------------------------------------------------------- assembly / decode
  instr_t                  dec_d, dec_q;
  logic                    dec_valid_d, dec_valid_q;   // dec_q holds a whole instruction
  logic                    dec_rerr_d, dec_rerr_q;     // one of its beats had RRESP != OKAY
  logic [BeatIdxWidth-1:0] beat_d, beat_q;
  logic [31:0]             dec_idx_d, dec_idx_q;       // fetch index of dec_q
  logic [31:0]             next_idx_d, next_idx_q;     // fetch index of the next one assembled
  // The index is loaded when an instruction is complete (from next_idx_q),
  // not counted when it is taken: the take (after the queues' ready) then
  // reaches a few flags, not 32 enables.
  logic                    dispatch, dec_take;
  logic                    check_fail;
  err_code_e               check_code;
  logic [2:0]              q_in_valid, q_in_ready;

  assign buf_out_ready  = !dec_valid_q && !draining;
  assign instr_consumed = buf_out_valid && buf_out_ready && 32'(beat_q) == BeatsPerInstr - 1;

  always_comb begin
    dec_d       = dec_q;
    dec_valid_d = dec_valid_q;
    dec_rerr_d  = dec_rerr_q;
    beat_d      = beat_q;
    dec_idx_d   = dec_idx_q;
    next_idx_d  = next_idx_q;
    if (buf_out_valid && buf_out_ready) begin
      dec_d[32'(beat_q) * AxiDataWidth +: AxiDataWidth] = buf_out.data;
      dec_rerr_d = (beat_q == '0 ? 1'b0 : dec_rerr_q) || buf_out.error;
      if (32'(beat_q) == BeatsPerInstr - 1) begin
        beat_d      = '0;
        dec_valid_d = 1'b1;
        dec_idx_d   = next_idx_q;
        next_idx_d  = next_idx_q + 32'd1;
      end else begin
        beat_d = beat_q + BeatIdxWidth'(1);
      end
    end
    if (dec_take) begin
      dec_valid_d = 1'b0;
    end
    if (draining) begin
      dec_valid_d = 1'b0;
      beat_d      = '0;
    end
    if (clear_i) next_idx_d = 32'd0;
  end

  // Checks of the decoded instruction, in two register stages. Stage 1
  // (flag_*_q) evaluates each rule of dec_q on its own, every cycle; dec_q
  // does not change while it holds a whole instruction (no beat is taken
  // then), so the flags describe it from the cycle after it is complete
  // (flag_valid_q). Stage 2 (chk_*_q) is the rules' priority over those
  // flags: the 512-bit masks and the field comparisons never share a cycle
  // with the priority, the dispatch condition or the error state.
  opcode_e    op;
  logic [4:0] op_onehot;             // load, compute, store, end, config; 0: unknown opcode
  assign op        = hdr_opcode(dec_q);
  assign op_onehot = {op == OpConfig, op == OpEnd, op == OpStore, op == OpCompute, op == OpLoad};

  logic       flag_valid_q;          // the flags below describe dec_q
  logic       flag_rerr_q;           // one of its beats had RRESP != OKAY
  logic [4:0] flag_resv_q;           // reserved bits set, per opcode (load .. config)
  logic       flag_acq_order_q;      // acq0_first > acq0
  logic       flag_retire_deps_q;    // END / CONFIG with a dependency field set
  logic       flag_load_rel1_q;      // rel1 set (an error for LOAD)
  logic       flag_store_acq1_q;     // acq1 set (an error for STORE)
  logic       flag_config_q;         // CONFIG payload does not match this configuration
  logic [4:0] flag_op_q;             // op_onehot

  always_ff @(posedge clk_i) begin
    if (!rst_ni) flag_valid_q <= 1'b0;
    else         flag_valid_q <= dec_valid_q && !dec_take && !draining;
  end

  always_ff @(posedge clk_i) begin
    flag_rerr_q        <= dec_rerr_q;
    flag_resv_q        <= {(dec_q & ~ConfigUsedMask) != '0, (dec_q & ~EndUsedMask) != '0,
                           (dec_q & ~StoreUsedMask) != '0, (dec_q & ~ComputeUsedMask) != '0,
                           (dec_q & ~LoadUsedMask) != '0};
    flag_acq_order_q   <= hdr_acq0_first(dec_q) > hdr_acq0(dec_q);
    flag_retire_deps_q <= hdr_acq0(dec_q) != '0 || hdr_acq1(dec_q) != '0 ||
                          hdr_rel0(dec_q) != '0 || hdr_rel1(dec_q) != '0 ||
                          hdr_acq0_first(dec_q) != '0 || hdr_acq0_step(dec_q) != '0;
    flag_load_rel1_q   <= hdr_rel1(dec_q) != '0;
    flag_store_acq1_q  <= hdr_acq1(dec_q) != '0;
    flag_config_q      <= 32'(config_version(dec_q)) != HwVersion ||
                          32'(config_pes(dec_q)) != Pes || 32'(config_lanes(dec_q)) != Lanes ||
                          32'(config_banks(dec_q)) > Banks ||
                          config_bank_depth(dec_q) > 32'(BankDepth) ||
                          config_pe_cache_depth(dec_q) > 32'(PeCacheDepth) ||
                          config_param_depth(dec_q) > 32'(ParamDepth) ||
                          config_sparse(dec_q) != Sparse ||
                          32'(config_act_tables(dec_q)) > ActTables;
    flag_op_q          <= op_onehot;
  end

  // Stage 2: the rules in priority order (the first that fails names the error).
  always_comb begin
    check_fail = 1'b1;
    check_code = ErrNone;
    if (flag_rerr_q) begin
      check_code = ErrAxiRead;
    end else if (flag_op_q == '0 || |(flag_resv_q & flag_op_q)) begin
      check_code = ErrIllegalInstr;
    end else if (flag_acq_order_q) begin
      check_code = ErrIllegalInstr;
    end else if ((flag_op_q[3] || flag_op_q[4]) && flag_retire_deps_q) begin
      check_code = ErrIllegalInstr;
    end else if ((flag_op_q[0] && flag_load_rel1_q) || (flag_op_q[2] && flag_store_acq1_q)) begin
      check_code = ErrIllegalInstr;
    end else if (flag_op_q[4] && flag_config_q) begin
      check_code = ErrUnsupported;
    end else begin
      check_fail = 1'b0;
    end
  end

  // The priority is registered too (chk_*): an instruction is dispatched or
  // reported two cycles after it is complete.
  logic       chk_valid_d, chk_valid_q;  // chk_* describe dec_q
  logic       chk_fail_q;
  err_code_e  chk_code_q;
  logic       chk_end_q;
  logic       chk_last_q;                // dec_q is at INSTR_LIMIT - 1
  logic       chk_stop_q;                // taking dec_q stops fetching (END or the limit)
  logic       stop_take;                 // the instruction that stops fetching is taken

  assign chk_valid_d = flag_valid_q && dec_valid_q && !dec_take && !draining;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) chk_valid_q <= 1'b0;
    else         chk_valid_q <= chk_valid_d;
  end

  always_ff @(posedge clk_i) begin
    chk_fail_q    <= check_fail;
    chk_code_q    <= check_code;
    chk_end_q     <= flag_op_q[3];
    chk_last_q    <= dec_idx_q + 32'd1 == limit_q;
    chk_stop_q    <= flag_op_q[3] || dec_idx_q + 32'd1 == limit_q;
  end

  // Dispatch. An instruction may leave the decode register when it is checked
  // without error, fetching is active and not about to stop:
  //   chk_valid_q && active_q && !stop_pend_q && !chk_fail_q.
  // Each of those is a register, so the condition is one of its own, loaded
  // from their next values, and split by destination (go_*_q): the queues'
  // valid and the retire are flip-flops, and the take that advances the
  // decode state is one LUT from them and the queues' ready (no check result,
  // run state or stop term in front of its fan-out).
  logic       go_d;                      // the condition above, next cycle
  logic [2:0] go_queue_q;                // it holds and dec_q goes to store, compute, load
  logic       go_retire_q;               // it holds and dec_q is END or CONFIG
  logic       last_allowed;

  assign go_d = chk_valid_d && active_d && !stop_take && !check_fail;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      go_queue_q  <= '0;
      go_retire_q <= 1'b0;
    end else begin
      go_queue_q  <= {go_d && flag_op_q[2], go_d && flag_op_q[1], go_d && flag_op_q[0]};
      go_retire_q <= go_d && (flag_op_q[3] || flag_op_q[4]);
    end
  end

  assign q_in_valid   = go_queue_q;
  assign dispatch     = |(q_in_valid & q_in_ready);
  assign dec_take     = dispatch || go_retire_q;
  assign blocked_o    = |(q_in_valid & ~q_in_ready);
  assign retire_o     = go_retire_q;
  // Reaching the limit without END: the instruction at limit - 1 was not END.
  assign last_allowed = chk_last_q;

  // Any reason to stop (the cases below), from registered flags in few levels.
  // Taking END (or the instruction at limit - 1) stops fetching the cycle
  // after (stop_pend_q): the stop's fan-out (active_q, the AR valid) then
  // does not wait for the engine queues' ready. In that cycle nothing more is
  // decoded, dispatched or reported (an AR may still be issued: its beats
  // are dropped while draining, like those of any AR in flight at a stop).
  assign stop = active_q && (limit_zero_q || (chk_valid_q && chk_fail_q) || stop_pend_q ||
                             abort_i);

  always_comb begin
    active_d    = active_q;
    end_d       = end_q;
    err_d       = err_q;
    err_code_d  = err_code_q;
    err_index_d = err_index_q;
    if (active_q && !stop_pend_q) begin
      if (limit_zero_q) begin
        err_d       = 1'b1;
        err_code_d  = ErrNoEnd;
        err_index_d = '0;
      end else if (chk_valid_q && chk_fail_q) begin
        err_d       = 1'b1;
        err_code_d  = chk_code_q;
        err_index_d = csr_error_code_index_t'(dec_idx_q);
      end
    end
    // A taken END: dec_take already implies an active, unstopped fetcher and
    // a checked instruction without error (and INSTR_LIMIT = 0 fetches
    // nothing; asserted), so it competes with neither case above.
    if (dec_take && chk_end_q) end_d = 1'b1;
    // Reported the cycle after the instruction at limit - 1 (not END) went to
    // its queue: the error registers' enable does not wait for the queues'
    // ready (fetch is stopped by then, so nothing else competes).
    if (noend_q) begin
      err_d       = 1'b1;
      err_code_d  = ErrNoEnd;
      err_index_d = csr_error_code_index_t'(limit_q);
    end
    if (stop) active_d = 1'b0;
    if (clear_i) begin
      active_d    = 1'b1;
      end_d       = 1'b0;
      err_d       = 1'b0;
      err_code_d  = ErrNone;
      err_index_d = '0;
    end
  end

  // The instruction that stops fetching (END or the one at limit - 1) is
  // taken. Not END and at the limit: NO_END.
  assign stop_take = dec_take && chk_stop_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      stop_pend_q <= 1'b0;
      noend_q     <= 1'b0;
    end else begin
      stop_pend_q <= stop_take;
      noend_q     <= stop_take && !chk_end_q && last_allowed && !limit_zero_q;
    end
  end

  assign limit_d      = clear_i ? limit_i : limit_q;
  assign limit_zero_d = clear_i ? limit_i == 32'd0 : limit_zero_q;

  // ---------------------------------------------------------------- queues
  logic [2:0]             q_out_valid, q_out_ready;
  // An engine queue's entry.
  typedef struct packed {
    csr_error_code_index_t index;  // fetch index
    instr_t      instr;  // the instruction
  } queued_t;
  queued_t q_out [3];
  logic                   q_flush;

  assign q_flush     = clear_i || abort_i;
  assign q_out_ready = {st_ready_i, cp_ready_i, ld_ready_i};

  for (genvar q = 0; q < 3; q++) begin : g_queue
    logic [$clog2(QueueDepth + 1)-1:0] unused_count;

    strata_fifo #(
      .T     (queued_t),
      .Depth (QueueDepth)
    ) u_queue (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni && !q_flush),
      .in_valid_i  (q_in_valid[q]),
      .in_ready_o  (q_in_ready[q]),
      .in_data_i   (queued_t'{index: csr_error_code_index_t'(dec_idx_q), instr: dec_q}),
      .out_valid_o (q_out_valid[q]),
      .out_ready_i (q_out_ready[q]),
      .out_data_o  (q_out[q]),
      .count_o     (unused_count)
    );
  end

  assign ld_index_o    = q_out[0].index;
  assign ld_instr_o    = q_out[0].instr;
  assign cp_index_o    = q_out[1].index;
  assign cp_instr_o    = q_out[1].instr;
  assign st_index_o    = q_out[2].index;
  assign st_instr_o    = q_out[2].instr;
  assign ld_valid_o    = q_out_valid[0];
  assign cp_valid_o    = q_out_valid[1];
  assign st_valid_o    = q_out_valid[2];
  assign queue_empty_o = ~q_out_valid;

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      active_q    <= 1'b0;
      end_q       <= 1'b0;
      err_q       <= 1'b0;
      err_code_q  <= ErrNone;
      err_index_q <= '0;
      ar_valid_q  <= 1'b0;
      to_issue_q  <= 32'd0;
      more_q      <= 1'b0;
      credits_q   <= '0;
      outst_q     <= '0;
      dec_valid_q <= 1'b0;
      beat_q      <= '0;
      dec_idx_q   <= 32'd0;
      next_idx_q  <= 32'd0;
      limit_q     <= 32'd0;
      limit_zero_q <= 1'b1;
    end else begin
      active_q    <= active_d;
      end_q       <= end_d;
      err_q       <= err_d;
      err_code_q  <= err_code_d;
      err_index_q <= err_index_d;
      ar_valid_q  <= ar_valid_d;
      to_issue_q  <= to_issue_d;
      more_q      <= more_d;
      credits_q   <= credits_d;
      outst_q     <= outst_d;
      dec_valid_q <= dec_valid_d;
      beat_q      <= beat_d;
      dec_idx_q   <= dec_idx_d;
      next_idx_q  <= next_idx_d;
      limit_q     <= limit_d;
      limit_zero_q <= limit_zero_d;
    end
  end

  always_ff @(posedge clk_i) begin
    ar_addr_q   <= ar_addr_d;
    next_addr_q <= next_addr_d;
    dec_q      <= dec_d;
    dec_rerr_q <= dec_rerr_d;
  end

  assign idle_o      = !ar_valid_q && outst_q == '0;
  assign end_o       = end_q;
  assign err_o       = err_q;
  assign err_code_o  = err_code_q;
  assign err_index_o = err_index_q;

  // ---------------------------------------------------------------- checks
  `STRATA_ASSERT_STREAM(fetch_ar, clk_i, rst_ni, arvalid_o, arready_i, {araddr_o, arlen_o})
  `STRATA_ASSERT(fetch_clear_stopped, clk_i, rst_ni, !clear_i || !active_q)
  `STRATA_ASSERT(fetch_r_expected, clk_i, rst_ni, !rvalid_i || outst_q != '0)
  `STRATA_ASSERT(fetch_r_room, clk_i, rst_ni, !rvalid_i || rready_o)
  `STRATA_ASSERT(fetch_take_ok, clk_i, rst_ni,
                 !dec_take || (chk_valid_q && active_q && !stop_pend_q && !chk_fail_q &&
                               !limit_zero_q))
  `STRATA_ASSERT(fetch_credit_range, clk_i, rst_ni, 32'(credits_q) <= PrefetchInstrs)
  // The stage-1 flags describe the instruction in dec_q whenever they are
  // marked valid: the opcode and reserved-bit rule equals the package's.
  `STRATA_ASSERT(fetch_flags_current, clk_i, rst_ni,
                 !flag_valid_q || (flag_op_q == op_onehot &&
                                   (flag_op_q == '0 || |(flag_resv_q & flag_op_q)) ==
                                   !reserved_bits_clear(dec_q)))

`ifndef SYNTHESIS
  initial begin
    assert (AxiDataWidth >= 8 && AxiDataWidth <= InstrBits &&
            2 ** $clog2(AxiDataWidth) == AxiDataWidth)
      else $fatal(1, "strata_fetch: AxiDataWidth must be a power of two, 8..512");
    assert (PrefetchInstrs >= 1 && QueueDepth >= 1 && AxiAddrWidth >= 12 && AxiAddrWidth <= 64)
      else $fatal(1, "strata_fetch: parameters out of range");
  end
`endif

endmodule : strata_fetch
