// SPDX-License-Identifier: Apache-2.0
// On-chip feature buffers: Banks x strata_ram_1r1w of BankDepth words of
// WordWidth bits (one word = N int8 lanes), with four client ports:
//   load write (lw), compute write (cw), compute read (cr), store read (sr),
// and on sparse builds a fifth, a second compute read (cr1, described last).
// Each bank has one write and one read port. A read and a write of different
// clients may use the same bank in the same cycle, at different addresses: the
// dependency semaphores order every producer and consumer of a word, so a
// word is never read in the cycle it is written (asserted in simulation by
// strata_ram_1r1w, ReadFirst = 0: no read-first emulation logic on ECP5).
// Two writers of one bank, or two readers, are arbitrated with fixed
// priority: compute wins, the loser sees ready = 0 that cycle (ready depends
// combinationally on the other client's valid and bank, never on its own
// valid).
// Compute reads pass a request register first (cr_req_ready_o is always 1):
// the compute engine's walker and handshake logic then end at flip-flops
// here, and the RAM address multiplexers and the store read port's ready
// start from them, instead of one path running from the compute engine's
// state through the arbitration into every bank's address pins.
// Writes pass a register too, after the arbitration (lw_ready_o still
// depends only on the compute write's valid and bank): the RAM is written
// the cycle after the handshake. The dependency semaphores release a word's
// consumer no earlier than that (a release reaches a grant two cycles after
// it is made, strata_dep_sems), so no read sees a word before its write.
// Each bank has its own write registers (enable, address, data), loaded from
// the winning client's request, so the RAM's write pins are driven straight
// from flip-flops. A bank is built from Slices RAMs of SliceWidth bits (on
// ECP5, 4096 x 16 = four DP16KD), and every slice has its own copy of the
// write enable, the write address and the compute read hit and address:
// each copy drives the pins of a few neighbouring block RAMs instead of one
// net reaching all of the bank's blocks across the die. The copies carry the
// keep attribute: the open flow keeps their flip-flops apart
// (scripts/synth/flow.py; Yosys would merge identical registers); vendor
// tools read the same attribute (not run here).
// The store port's read enables: the store engine announces the bank it
// reads (sr_active_i with sr_req_i.bank, from its registers) for as long as its
// reads may come, and each slice's RAM read enable is a flip-flop of that
// announcement (sr_act_q, one per slice like the compute read's), not the
// request, so neither the request's logic nor its route across the die sits
// in front of every block RAM's clock enable. The announced bank is then
// read every cycle while the store runs, whether or not it requests (a read
// whose word nobody takes; the RAMs' own checks are off, CheckReads = 0, and
// the reads that are used are checked here). A store request needs the
// announcement of its bank in the cycle before (asserted).
// Reads: a request (valid/ready) returns its word on rsp_valid exactly two
// cycles (store port) or three cycles (compute port: the request register)
// after the handshake, in order; the client must take it (it issues no more
// requests than it can absorb). The last cycle is a register on each RAM's
// output (flip-flops beside the block RAM; a vendor tool may use the block
// RAM's own output register): its clock-to-out and the routing through the
// bank multiplexer are then in different cycles. Throughput: one read and
// one write per client per cycle when there is no conflict.
// A second compute read port (ComputeReadPorts = 2, the sparse build): the
// packed CONV of a sparse build reads two activation words per beat,
// consecutive dense rows of one tap, which may lie in the same bank at any
// distance, so neither an address-parity split nor a wider word serves them.
// Every bank is then built twice: two sets of RAMs written together by the
// same write registers (every write reaches both copies), copy 0 read by the
// compute read port (cr) and the store port as above, copy 1 by the second
// compute read port (cr1) alone, so cr1 needs no arbitration and never delays
// the store. cr1 has cr's protocol and latency (request register with
// per-slice hit and address copies, RAM, output register: three cycles, in
// order, cr1_req_ready_o always 1). With ComputeReadPorts = 1 the cr1 ports
// exist but are ignored (outputs 0) and nothing of copy 1 is built.
`include "strata_assert.svh"
`include "strata_bank_types.svh"

module strata_banks #(
  parameter int unsigned Banks     = strata_cfg_pkg::Banks,      // number of banks, >= 1
  parameter int unsigned BankDepth = strata_cfg_pkg::BankDepth,  // words per bank, >= 2
  parameter int unsigned WordWidth = strata_cfg_pkg::Lanes * strata_cfg_pkg::DataWidth,  // bits
  // bits per RAM of a bank; divides WordWidth
  parameter int unsigned SliceWidth = (WordWidth % 16 == 0) ? 16 : WordWidth,
  // compute read ports: 1, or 2 (a replica of every bank, read by cr1)
  parameter int unsigned ComputeReadPorts = 1,
  localparam int unsigned BankIdxWidth = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned AddrWidth    = $clog2(BankDepth),
  localparam int unsigned Slices       = WordWidth / SliceWidth,
  // Port payloads (strata_bank_types.svh).
  localparam type bank_wr_t  = `STRATA_BANK_WR_T(BankIdxWidth, AddrWidth, WordWidth),
  localparam type bank_rd_t  = `STRATA_BANK_RD_T(BankIdxWidth, AddrWidth),
  localparam type bank_rsp_t = `STRATA_BANK_RSP_T(WordWidth)
) (
  input  logic                    clk_i,           // clock
  input  logic                    rst_ni,          // synchronous reset, active low
  // load engine write port
  input  logic                    lw_valid_i,      // write request
  output logic                    lw_ready_o,      // accepted (no compute write to that bank)
  input  bank_wr_t                lw_req_i,        // bank, word address, word
  // compute engine write port (priority)
  input  logic                    cw_valid_i,      // write request
  output logic                    cw_ready_o,      // always accepted
  input  bank_wr_t                cw_req_i,        // bank, word address, word
  // compute engine read port (priority)
  input  logic                    cr_req_valid_i,  // read request
  output logic                    cr_req_ready_o,  // always accepted
  input  bank_rd_t                cr_req_i,        // bank, word address
  output logic                    cr_rsp_valid_o,  // word of the request three cycles earlier
  output bank_rsp_t               cr_rsp_o,        // word
  // second compute engine read port (ComputeReadPorts = 2; else ignored, outputs 0)
  input  logic                    cr1_req_valid_i, // read request (bank copy 1)
  output logic                    cr1_req_ready_o, // always accepted (1; 0 without the port)
  input  bank_rd_t                cr1_req_i,       // bank, word address
  output logic                    cr1_rsp_valid_o, // word of the request three cycles earlier
  output bank_rsp_t               cr1_rsp_o,       // word
  // store engine read port
  input  logic                    sr_active_i,     // store reads bank sr_req_i.bank from
                                                   // the next cycle on (see above)
  input  logic                    sr_req_valid_i,  // read request
  output logic                    sr_req_ready_o,  // accepted (no compute read of that bank)
  input  bank_rd_t                sr_req_i,        // bank, word address
  output logic                    sr_rsp_valid_o,  // word of the request two cycles earlier
  output bank_rsp_t               sr_rsp_o         // word
);

  logic                    lw_fire, cw_fire, cr_fire, sr_fire;
  logic                    cr_valid_q;            // registered compute read request
  logic [BankIdxWidth-1:0] cr_req_bank_q;
  logic [AddrWidth-1:0]    cr_req_addr_q;
  logic [1:0]              cr_rsp_q, sr_rsp_q;    // a RAM read 1 / 2 cycles ago
  logic [BankIdxWidth-1:0] cr_bank_q, sr_bank_q, cr_bank_q2, sr_bank_q2;
  // Registered RAM outputs, copy c in bits [c * WordWidth +: WordWidth].
  logic [ComputeReadPorts*WordWidth-1:0] rdata_q2 [Banks];
  logic                    lw_q, cw_q;            // registered writes (after arbitration)
  logic [BankIdxWidth-1:0] lw_bank_q, cw_bank_q;

  assign cw_ready_o     = 1'b1;
  assign cr_req_ready_o = 1'b1;
  assign lw_ready_o     = !(cw_valid_i && cw_req_i.bank == lw_req_i.bank);
  assign sr_req_ready_o = !(cr_valid_q && cr_req_bank_q == sr_req_i.bank);
  assign lw_fire        = lw_valid_i && lw_ready_o;
  assign cw_fire        = cw_valid_i;
  assign cr_fire        = cr_valid_q;
  assign sr_fire        = sr_req_valid_i && sr_req_ready_o;

  for (genvar b = 0; b < Banks; b++) begin : g_bank
    // This bank's share of the requests, decoded before the registers.
    logic                 cw_sel, lw_sel, cr_sel, sr_at, sr_req;
    logic [WordWidth-1:0] wdata_q;
    logic [ComputeReadPorts*WordWidth-1:0] rdata;  // the copies' RAM outputs

    assign cw_sel = cw_fire && cw_req_i.bank == BankIdxWidth'(b);
    assign lw_sel = lw_fire && lw_req_i.bank == BankIdxWidth'(b);
    assign cr_sel = cr_req_valid_i && cr_req_i.bank == BankIdxWidth'(b);
    // The store addresses this bank; its request (checked against the
    // announcement).
    assign sr_at  = sr_req_i.bank == BankIdxWidth'(b);
    assign sr_req = sr_req_valid_i && sr_at;

    always_ff @(posedge clk_i) begin
      wdata_q <= cw_sel ? cw_req_i.data : lw_req_i.data;
    end

    for (genvar s = 0; s < Slices; s++) begin : g_slice
      (* keep *) logic                 we_q, cr_hit_q;  // write; compute read
      (* keep *) logic                 sr_act_q;        // store reads this bank
      (* keep *) logic [AddrWidth-1:0] waddr_q, cr_addr_q;
      logic                 re, used;
      logic [AddrWidth-1:0] raddr;

      always_ff @(posedge clk_i) begin
        if (!rst_ni) begin
          we_q     <= 1'b0;
          cr_hit_q <= 1'b0;
          sr_act_q <= 1'b0;
        end else begin
          we_q     <= cw_sel || lw_sel;
          cr_hit_q <= cr_sel;
          sr_act_q <= sr_active_i && sr_at;
        end
      end

      always_ff @(posedge clk_i) begin
        waddr_q   <= cw_sel ? cw_req_i.addr : lw_req_i.addr;
        cr_addr_q <= cr_req_i.addr;
      end

      assign re    = cr_hit_q || sr_act_q;
      assign raddr = cr_hit_q ? cr_addr_q : sr_req_i.addr;
      assign used  = cr_hit_q || (sr_fire && sr_at);

      strata_ram_1r1w #(
        .Width      (SliceWidth),
        .Depth      (BankDepth),
        .ReadFirst  (1'b0),
        .CheckReads (1'b0)
      ) u_ram (
        .clk_i   (clk_i),
        .we_i    (we_q),
        .waddr_i (waddr_q),
        .wdata_i (wdata_q[s*SliceWidth +: SliceWidth]),
        .re_i    (re),
        .raddr_i (raddr),
        .rdata_o (rdata[s*SliceWidth +: SliceWidth])
      );

      // A store request finds its bank announced; a read that is used is
      // enabled, in range, and not of the word written in the same cycle.
      `STRATA_ASSERT(banks_sr_announced, clk_i, rst_ni, !sr_req || sr_act_q)
      `STRATA_ASSERT(banks_read_used, clk_i, rst_ni, !used ||
                     (re && 32'(raddr) < BankDepth && !(we_q && waddr_q == raddr)))
      // Every copy agrees with the bank's registered requests.
      `STRATA_ASSERT(banks_copies, clk_i, rst_ni,
                     we_q == ((cw_q && cw_bank_q == BankIdxWidth'(b)) ||
                              (lw_q && lw_bank_q == BankIdxWidth'(b))) &&
                     cr_hit_q == (cr_valid_q && cr_req_bank_q == BankIdxWidth'(b)) &&
                     cr_addr_q == cr_req_addr_q)

      // Bank copy 1 (the second compute read port): the same write pins,
      // its own read hit and address registers (per slice, as cr's).
      if (ComputeReadPorts == 2) begin : g_copy1
        (* keep *) logic                 cr1_hit_q;
        (* keep *) logic [AddrWidth-1:0] cr1_addr_q;

        always_ff @(posedge clk_i) begin
          if (!rst_ni) begin
            cr1_hit_q <= 1'b0;
          end else begin
            cr1_hit_q <= cr1_req_valid_i && cr1_req_i.bank == BankIdxWidth'(b);
          end
        end

        always_ff @(posedge clk_i) begin
          cr1_addr_q <= cr1_req_i.addr;
        end

        strata_ram_1r1w #(
          .Width      (SliceWidth),
          .Depth      (BankDepth),
          .ReadFirst  (1'b0),
          .CheckReads (1'b0)
        ) u_ram (
          .clk_i   (clk_i),
          .we_i    (we_q),
          .waddr_i (waddr_q),
          .wdata_i (wdata_q[s*SliceWidth +: SliceWidth]),
          .re_i    (cr1_hit_q),
          .raddr_i (cr1_addr_q),
          .rdata_o (rdata[WordWidth + s*SliceWidth +: SliceWidth])
        );

        // A read is in range and not of the word written in the same cycle.
        `STRATA_ASSERT(banks_read1_used, clk_i, rst_ni, !cr1_hit_q ||
                       (32'(cr1_addr_q) < BankDepth && !(we_q && waddr_q == cr1_addr_q)))
      end
    end

    always_ff @(posedge clk_i) begin
      rdata_q2[b] <= rdata;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cr_valid_q <= 1'b0;
      cr_rsp_q   <= '0;
      sr_rsp_q   <= '0;
      lw_q       <= 1'b0;
      cw_q       <= 1'b0;
    end else begin
      cr_valid_q <= cr_req_valid_i;
      lw_q       <= lw_fire;
      cw_q       <= cw_fire;
      cr_rsp_q   <= {cr_rsp_q[0], cr_fire};
      sr_rsp_q   <= {sr_rsp_q[0], sr_fire};
    end
  end

  always_ff @(posedge clk_i) begin
    lw_bank_q     <= lw_req_i.bank;
    cw_bank_q     <= cw_req_i.bank;
    cr_req_bank_q <= cr_req_i.bank;
    cr_req_addr_q <= cr_req_i.addr;
    cr_bank_q     <= cr_req_bank_q;
    sr_bank_q     <= sr_req_i.bank;
    cr_bank_q2    <= cr_bank_q;
    sr_bank_q2    <= sr_bank_q;
  end

  assign cr_rsp_valid_o = cr_rsp_q[1];
  assign sr_rsp_valid_o = sr_rsp_q[1];
  assign cr_rsp_o.data  = rdata_q2[cr_bank_q2][WordWidth-1:0];
  assign sr_rsp_o.data  = rdata_q2[sr_bank_q2][WordWidth-1:0];

  // The second compute read port: request and response pipeline as cr's
  // (the request register is the per-slice hit and address copies above).
  if (ComputeReadPorts == 2) begin : g_cr1
    logic                    cr1_valid_q;
    logic [1:0]              cr1_rsp_q;
    logic [BankIdxWidth-1:0] cr1_req_bank_q, cr1_bank_q, cr1_bank_q2;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        cr1_valid_q <= 1'b0;
        cr1_rsp_q   <= '0;
      end else begin
        cr1_valid_q <= cr1_req_valid_i;
        cr1_rsp_q   <= {cr1_rsp_q[0], cr1_valid_q};
      end
    end

    always_ff @(posedge clk_i) begin
      cr1_req_bank_q <= cr1_req_i.bank;
      cr1_bank_q     <= cr1_req_bank_q;
      cr1_bank_q2    <= cr1_bank_q;
    end

    assign cr1_req_ready_o = 1'b1;
    assign cr1_rsp_valid_o = cr1_rsp_q[1];
    assign cr1_rsp_o.data  = rdata_q2[cr1_bank_q2][WordWidth +: WordWidth];

    `STRATA_ASSERT(banks_cr1_range, clk_i, rst_ni,
                   !cr1_req_valid_i || 32'(cr1_req_i.bank) < Banks)
  end else begin : g_no_cr1
    logic unused_cr1;
    assign unused_cr1      = ^{cr1_req_valid_i, cr1_req_i};
    assign cr1_req_ready_o = 1'b0;
    assign cr1_rsp_valid_o = 1'b0;
    assign cr1_rsp_o       = '0;
  end

  `STRATA_ASSERT_STREAM(banks_lw, clk_i, rst_ni, lw_valid_i, lw_ready_o,
                        lw_req_i)
  `STRATA_ASSERT_STREAM(banks_sr, clk_i, rst_ni, sr_req_valid_i, sr_req_ready_o,
                        sr_req_i)
  // The registered writes never collide (the arbitration above).
  `STRATA_ASSERT(banks_w_one, clk_i, rst_ni, !(lw_q && cw_q && lw_bank_q == cw_bank_q))
  `STRATA_ASSERT(banks_lw_range, clk_i, rst_ni, !lw_valid_i || 32'(lw_req_i.bank) < Banks)
  `STRATA_ASSERT(banks_cw_range, clk_i, rst_ni, !cw_valid_i || 32'(cw_req_i.bank) < Banks)
  `STRATA_ASSERT(banks_cr_range, clk_i, rst_ni, !cr_req_valid_i || 32'(cr_req_i.bank) < Banks)
  `STRATA_ASSERT(banks_sr_range, clk_i, rst_ni, !sr_req_valid_i || 32'(sr_req_i.bank) < Banks)

`ifndef SYNTHESIS
  initial begin
    assert (Banks >= 1 && Banks <= 64 && BankDepth >= 2 && WordWidth >= 8 &&
            SliceWidth >= 1 && WordWidth % SliceWidth == 0)
      else $fatal(1, "strata_banks: Banks, BankDepth, WordWidth or SliceWidth out of range");
    assert (ComputeReadPorts == 1 || ComputeReadPorts == 2)
      else $fatal(1, "strata_banks: ComputeReadPorts 1 or 2");
  end
`endif

endmodule : strata_banks
