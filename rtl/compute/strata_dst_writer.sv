// SPDX-License-Identifier: Apache-2.0
// Destination writer of the COMPUTE engine (docs/isa.md, COMPUTE): takes
// the result words of one instruction in order and writes them.
//   BANK / PE_CACHE: result (g, r, c) (group, row, column, raster order) to
//     word base + g*group_stride + r*row_stride + c of bank dst_id or of PE
//     dst_id's cache (running addresses, no multiplier).
//   PE_TRANSPOSE (FC): results are neurons o, lane p = image p. Lanes neurons
//     are collected in a Lanes x Pes byte matrix, then written as Pes words:
//     PE p's cache word base + o div Lanes holds byte (o mod Lanes) = lane p of
//     neuron o. The matrix is a shift register: each write takes byte 0 of
//     every collected word and shifts them right by one byte, so after Pes
//     writes it is zero again and the bytes of neurons a partial last group
//     does not have are written as zeros. Requires Pes = Lanes.
// Dependencies: rel_valid_o pulses when a result row is written (the
// handshake of its last word; PE_TRANSPOSE: the last of a group's Pes words),
// with the number of rows (neurons) it completes; the engine turns them into
// strata_dep_sync steps (fine-grained mode).
// Latency: one cycle from an accepted result to its write request (the output
// queue, a two-entry strata_fifo: its not-full flag is a flip-flop, so the
// result handshake and the transpose matrix never wait for the bank or cache
// port's ready). Throughput: one word per cycle (BANK / PE_CACHE); PE_TRANSPOSE
// takes Lanes results in Lanes cycles and then writes Pes words in Pes cycles
// without accepting results meanwhile (FC layers take in_groups >= 1 beats
// per neuron, so this halves the rate only at in_groups = 1).
// Timing: the matrix rows' enables are flip-flop copies, "takes the next
// result" passes from row to row, and the neuron count counts down with
// registered "next is the last" and "all taken" flags.
`include "strata_assert.svh"

module strata_dst_writer
  import strata_compute_pkg::*;
#(
  parameter int unsigned Pes            = strata_cfg_pkg::Pes,    // P
  parameter int unsigned Lanes          = strata_cfg_pkg::Lanes,  // N (bytes per word)
  parameter int unsigned BankIdxWidth   = 2,                      // bank index bits
  parameter int unsigned BankAddrWidth  = 12,                     // bank word bits
  parameter int unsigned CacheAddrWidth = 10,                     // cache word bits
  localparam int unsigned WordWidth = Lanes * 8,
  localparam int unsigned UnitWidth = $clog2(Lanes + 1)
) (
  input  logic                      clk_i,          // clock
  input  logic                      rst_ni,         // synchronous reset, active low
  input  logic                      start_i,        // begin an instruction (while idle)
  input  wr_cfg_t                   cfg_i,          // stable while busy
  output logic                      busy_o,         // results still to be written
  // results, in order
  input  logic                      in_valid_i,     // result word offered
  output logic                      in_ready_o,     // taken
  input  logic [WordWidth-1:0]      in_data_i,      // lane p at bits p*8
  // bank write port (strata_banks compute write)
  output logic                      bank_valid_o,   // write request
  input  logic                      bank_ready_i,   // written
  output logic [BankIdxWidth-1:0]   bank_o,         // bank
  output logic [BankAddrWidth-1:0]  bank_addr_o,    // word
  output logic [WordWidth-1:0]      bank_data_o,    // data
  // PE cache write request (to the engine's cache port arbiter)
  output logic                      cache_valid_o,  // write request
  input  logic                      cache_ready_i,  // written
  output logic [Pes-1:0]            cache_mask_o,   // PE (one-hot)
  output logic [CacheAddrWidth-1:0] cache_addr_o,   // word
  output logic [WordWidth-1:0]      cache_data_o,   // data
  // result rows written
  output logic                      rel_valid_o,    // pulse: rows completed
  output logic [UnitWidth-1:0]      rel_units_o     // how many
);

  localparam int unsigned PeWidth = (Pes > 1) ? $clog2(Pes) : 1;

  typedef enum logic [1:0] {
    StIdle,
    StRun,    // taking results
    StEmit,   // PE_TRANSPOSE: writing a group's Pes words
    StDrain   // every result taken, last write pending
  } state_e;

  state_e state_d, state_q;

  // ---------------------------------------------------------------- output queue
  // Write requests wait in a two-entry queue. out_free (room for one more) is
  // the queue's registered not-full flag.
  typedef struct packed {
    logic                 bank;    // to the bank port (else the cache port)
    dim_t                 addr;
    logic [Pes-1:0]       mask;
    logic [WordWidth-1:0] data;
    logic [UnitWidth-1:0] done_rows;  // rows this write completes
  } wr_req_t;

  wr_req_t                out_q;
  logic                   out_valid, out_ready, out_fire, out_free, out_load;
  logic [1:0]             out_count;
  dim_t                   ld_addr;
  logic [Pes-1:0]         ld_mask;
  logic [WordWidth-1:0]   ld_data;
  logic [UnitWidth-1:0]   ld_units;

  // The head request goes to the bank port or to the cache port.
  assign out_ready = out_q.bank ? bank_ready_i : cache_ready_i;
  assign out_fire  = out_valid && out_ready;

  // The head request leaves a flip-flop (OutReg): the bank and cache write
  // ports it feeds sit across the die, so no LUT-RAM read sits in front of
  // that route to the bank write address.
  strata_fifo #(
    .T      (wr_req_t),
    .Depth  (2),
    .OutReg (1'b1)
  ) u_out (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (out_load),
    .in_ready_o  (out_free),
    .in_data_i   (wr_req_t'{bank: cfg_i.kind == WrBank, addr: ld_addr, mask: ld_mask,
                            data: ld_data, done_rows: ld_units}),
    .out_valid_o (out_valid),
    .out_ready_i (out_ready),
    .out_data_o  (out_q),
    .count_o     (out_count)
  );

  // ---------------------------------------------------------------- addressing
  dim_t        c_d, c_q, r_d, r_q, g_d, g_q;
  dim_t        addr_d, addr_q, row_d, row_q, grp_d, grp_q;
  logic        transpose, in_fire, last_in;

  // ---------------------------------------------------------------- transpose matrix
  logic [Lanes-1:0][WordWidth-1:0] mat_d, mat_q;
  logic [UnitWidth-1:0]            n_d, n_q;        // neurons collected in the group
  dim_t                            o_left_d, o_left_q;  // neurons to take after the next
  logic                            o_last_d, o_last_q;  // next neuron is the last: o_left_q == 0
  logic                            all_in_d, all_in_q;  // every neuron taken
  logic [PeWidth-1:0]              p_d, p_q;        // PE of the next emitted word
  logic                            emit_now;        // group complete: emit before taking more
  logic [WordWidth-1:0]            column;

  assign transpose  = cfg_i.kind == WrTranspose;
  assign emit_now   = n_q == UnitWidth'(Lanes);
  assign in_ready_o = state_q == StRun && out_free && !(transpose && emit_now);
  assign in_fire    = in_valid_i && in_ready_o;
  for (genvar j = 0; j < Lanes; j++) begin : g_column
    assign column[j*8 +: 8] = mat_q[j][7:0];
  end

  assign last_in = transpose ? o_last_q
                             : (c_q == cfg_i.cols_m1 && r_q == cfg_i.rows_m1 &&
                                g_q == cfg_i.groups_m1);

  // The matrix is cleared the cycle after the start (no result can arrive
  // in the start cycle: the writer is idle), from a flip-flop of its own:
  // its 8 * N * N-bit clear does not wait for the engine's start decision.
  logic started_q;

  // Row enables of the matrix from flip-flops, one per row: "row j takes
  // the next result" (StRun, PE_TRANSPOSE, n = j) and "the matrix shifts"
  // (StEmit; a copy per row, strata_reg_copies). Each row's multiplexers then
  // see its two flags, the input valid, the output queue's not-full flag and
  // started_q, not the state and count decode (asserted equal to it). Their
  // next values are written out from the transitions (below), with the
  // neuron count's "last" and "all taken" flags registered (o_last_q,
  // all_in_q), so the 16-bit neuron compares are not in front of them
  // through the next-state decode.
  logic [Lanes-1:0] row_take_d, row_take_q, row_emit_q;
  logic             take_fire;   // with row_take_q[j]: row j takes a result
  logic             group_next;  // PE_TRANSPOSE: the next group begins (row 0 takes)
  logic             emit_d;      // state_d == StEmit

  always_comb begin
    state_d     = state_q;
    c_d         = c_q;
    r_d         = r_q;
    g_d         = g_q;
    addr_d      = addr_q;
    row_d       = row_q;
    grp_d       = grp_q;
    n_d         = n_q;
    p_d         = p_q;
    out_load    = 1'b0;
    ld_addr     = addr_q;
    ld_mask     = '0;
    ld_data     = in_data_i;
    ld_units    = '0;

    unique case (state_q)
      StIdle: ;
      StRun: begin
        if (in_fire && transpose) begin
          n_d        = n_q + UnitWidth'(1);
          if (last_in) state_d = StEmit;
        end else if (transpose && emit_now) begin
          state_d = StEmit;
        end else if (in_fire) begin
          out_load = 1'b1;
          ld_addr  = addr_q;
          ld_mask  = Pes'(1) << cfg_i.dst_id[PeWidth-1:0];
          ld_units = UnitWidth'(c_q == cfg_i.cols_m1);
          if (c_q != cfg_i.cols_m1) begin
            c_d    = c_q + DimWidth'(1);
            addr_d = addr_q + DimWidth'(1);
          end else if (r_q != cfg_i.rows_m1) begin
            c_d    = '0;
            r_d    = r_q + DimWidth'(1);
            row_d  = row_q + cfg_i.row_stride;
            addr_d = row_q + cfg_i.row_stride;
          end else begin
            c_d    = '0;
            r_d    = '0;
            g_d    = g_q + DimWidth'(1);
            grp_d  = grp_q + cfg_i.group_stride;
            row_d  = grp_q + cfg_i.group_stride;
            addr_d = grp_q + cfg_i.group_stride;
          end
          if (last_in) state_d = StDrain;
        end
      end
      StEmit: begin
        if (out_free) begin
          out_load = 1'b1;
          ld_addr  = addr_q;
          ld_mask  = Pes'(1) << p_q;
          ld_data  = column;
          if (32'(p_q) == Pes - 1) begin
            ld_units = n_q;
            n_d      = '0;
            p_d      = '0;
            addr_d   = addr_q + DimWidth'(1);
            state_d  = all_in_q ? StDrain : StRun;
          end else begin
            p_d = p_q + PeWidth'(1);
          end
        end
      end
      // Idle once the last queued write is taken.
      StDrain: if (out_count == 2'd0 || (out_count == 2'd1 && out_fire)) state_d = StIdle;
      default: state_d = StIdle;
    endcase

    if (start_i && state_q == StIdle) begin
      state_d = StRun;
      c_d     = '0;
      r_d     = '0;
      g_d     = '0;
      addr_d  = cfg_i.base;
      row_d   = cfg_i.base;
      grp_d   = cfg_i.base;
      n_d     = '0;
      p_d     = '0;
    end
  end

  // The neuron count (PE_TRANSPOSE) counts down, its flags loaded beside it.
  always_comb begin
    o_left_d = o_left_q;
    o_last_d = o_last_q;
    all_in_d = all_in_q;
    if (start_i && state_q == StIdle) begin
      o_left_d = cfg_i.neurons_m1;
      o_last_d = cfg_i.neurons_m1 == '0;
      all_in_d = 1'b0;
    end else if (in_fire && transpose) begin
      o_left_d = o_left_q - DimWidth'(1);
      o_last_d = o_left_q == DimWidth'(1);
      all_in_d = o_last_q;
    end
  end

  // The row flags' next values: row j's flag stays until it takes a result,
  // then passes to row j + 1 (none after row Lanes - 1: the group is full;
  // none after the last neuron); row 0's is set when a group begins.
  assign take_fire  = in_valid_i && out_free;
  assign group_next = (start_i && state_q == StIdle && transpose) ||
                      (state_q == StEmit && out_free && 32'(p_q) == Pes - 1 && !all_in_q);
  always_comb begin
    for (int j = 0; j < Lanes; j++) begin
      if (row_take_q[j]) row_take_d[j] = !take_fire;
      else if (j == 0)   row_take_d[j] = group_next;
      else               row_take_d[j] = row_take_q[j-1] && take_fire && !o_last_q;
    end
  end
  assign emit_d = (state_q == StRun && transpose && (emit_now || (in_fire && o_last_q))) ||
                  (state_q == StEmit && !(out_free && 32'(p_q) == Pes - 1));

  // The matrix: row j takes a result (priority over the clear of the start,
  // which can coincide with the first result), is cleared, or shifts one
  // byte per emitted word.
  always_comb begin
    for (int j = 0; j < Lanes; j++) begin
      if (row_take_q[j] && in_valid_i && out_free) mat_d[j] = in_data_i;
      else if (started_q)                        mat_d[j] = '0;
      else if (row_emit_q[j] && out_free)         mat_d[j] = mat_q[j] >> 8;
      else                                        mat_d[j] = mat_q[j];
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q     <= StIdle;
      started_q   <= 1'b0;
      row_take_q  <= '0;
    end else begin
      state_q     <= state_d;
      started_q   <= start_i && state_q == StIdle;
      row_take_q  <= row_take_d;
    end
  end

  strata_reg_copies #(.Copies (Lanes)) u_row_emit (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .d_i      (emit_d),
    .mirror_i (state_q == StEmit),
    .q_o      (row_emit_q)
  );

  always_ff @(posedge clk_i) begin
    c_q    <= c_d;
    r_q    <= r_d;
    g_q    <= g_d;
    addr_q <= addr_d;
    row_q  <= row_d;
    grp_q  <= grp_d;
    mat_q  <= mat_d;
    n_q      <= n_d;
    o_left_q <= o_left_d;
    o_last_q <= o_last_d;
    all_in_q <= all_in_d;
    p_q    <= p_d;
  end

  assign busy_o        = state_q != StIdle;
  assign bank_valid_o  = out_valid && out_q.bank;
  assign bank_o        = BankIdxWidth'(cfg_i.dst_id);
  assign bank_addr_o   = BankAddrWidth'(out_q.addr);
  assign bank_data_o   = out_q.data;
  assign cache_valid_o = out_valid && !out_q.bank;
  assign cache_mask_o  = out_q.mask;
  assign cache_addr_o  = CacheAddrWidth'(out_q.addr);
  assign cache_data_o  = out_q.data;
  assign rel_valid_o   = out_fire && out_q.done_rows != '0;
  assign rel_units_o   = out_q.done_rows;

  // Addresses are kept in the ISA's 16 bits; the decoder checked that they fit
  // the memory, so the bits above the port widths are zero.
  dim_t        unused_addr;
  assign unused_addr = out_q.addr;

  `STRATA_ASSERT_STREAM(writer_in, clk_i, rst_ni, in_valid_i, in_ready_o, in_data_i)
  `STRATA_ASSERT_STREAM(writer_bank, clk_i, rst_ni, bank_valid_o, bank_ready_i,
                        {bank_o, bank_addr_o, bank_data_o})
  `STRATA_ASSERT_STREAM(writer_cache, clk_i, rst_ni, cache_valid_o, cache_ready_i,
                        {cache_mask_o, cache_addr_o, cache_data_o})
  for (genvar j = 0; j < Lanes; j++) begin : g_row_flags
    `STRATA_ASSERT(writer_row_flags, clk_i, rst_ni,
                   row_take_q[j] == (state_q == StRun && transpose && n_q == UnitWidth'(j)))
  end
  `STRATA_ASSERT(writer_start_idle, clk_i, rst_ni, !start_i || state_q == StIdle)
  `STRATA_ASSERT(writer_next_flags, clk_i, rst_ni,
                 row_take_d == ({Lanes{state_d == StRun && transpose}} & (Lanes'(1) << n_d)) &&
                 emit_d == (state_d == StEmit))
  `STRATA_ASSERT(writer_neuron_flags, clk_i, rst_ni,
                 state_q == StIdle || !transpose || state_q == StDrain ||
                 (o_last_q == (o_left_q == '0) && (!all_in_q || state_q == StEmit)))

`ifndef SYNTHESIS
  initial begin
    assert (Pes == Lanes) else $fatal(1, "strata_dst_writer: PE_TRANSPOSE needs Pes = Lanes");
    assert (Pes == 2 ** PeWidth || Pes == 1) else $fatal(1, "strata_dst_writer: Pes must be 2^k");
  end
`endif

endmodule : strata_dst_writer
