// On-chip feature buffers: Banks x strata_ram_1r1w of BankDepth words of
// WordWidth bits (one word = N int8 lanes), with four client ports:
//   load write (lw), compute write (cw), compute read (cr), store read (sr).
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
// Reads: a request (valid/ready) returns its word on rsp_valid exactly two
// cycles (store port) or three cycles (compute port: the request register)
// after the handshake, in order; the client must take it (it issues no more
// requests than it can absorb). The last cycle is a register on each RAM's
// output (flip-flops beside the block RAM; a vendor tool may use the block
// RAM's own output register): its clock-to-out and the routing through the
// bank multiplexer are then in different cycles. Throughput: one read and
// one write per client per cycle when there is no conflict.
`include "strata_assert.svh"

module strata_banks #(
  parameter int unsigned Banks     = strata_cfg_pkg::Banks,      // number of banks, >= 1
  parameter int unsigned BankDepth = strata_cfg_pkg::BankDepth,  // words per bank, >= 2
  parameter int unsigned WordWidth = strata_cfg_pkg::Lanes * strata_cfg_pkg::DataWidth,  // bits
  localparam int unsigned BankIdxWidth = (Banks > 1) ? $clog2(Banks) : 1,
  localparam int unsigned AddrWidth    = $clog2(BankDepth)
) (
  input  logic                    clk_i,           // clock
  input  logic                    rst_ni,          // synchronous reset, active low
  // load engine write port
  input  logic                    lw_valid_i,      // write request
  output logic                    lw_ready_o,      // accepted (no compute write to that bank)
  input  logic [BankIdxWidth-1:0] lw_bank_i,       // bank
  input  logic [AddrWidth-1:0]    lw_addr_i,       // word address
  input  logic [WordWidth-1:0]    lw_data_i,       // word
  // compute engine write port (priority)
  input  logic                    cw_valid_i,      // write request
  output logic                    cw_ready_o,      // always accepted
  input  logic [BankIdxWidth-1:0] cw_bank_i,       // bank
  input  logic [AddrWidth-1:0]    cw_addr_i,       // word address
  input  logic [WordWidth-1:0]    cw_data_i,       // word
  // compute engine read port (priority)
  input  logic                    cr_req_valid_i,  // read request
  output logic                    cr_req_ready_o,  // always accepted
  input  logic [BankIdxWidth-1:0] cr_bank_i,       // bank
  input  logic [AddrWidth-1:0]    cr_addr_i,       // word address
  output logic                    cr_rsp_valid_o,  // word of the request three cycles earlier
  output logic [WordWidth-1:0]    cr_rsp_data_o,   // word
  // store engine read port
  input  logic                    sr_req_valid_i,  // read request
  output logic                    sr_req_ready_o,  // accepted (no compute read of that bank)
  input  logic [BankIdxWidth-1:0] sr_bank_i,       // bank
  input  logic [AddrWidth-1:0]    sr_addr_i,       // word address
  output logic                    sr_rsp_valid_o,  // word of the request two cycles earlier
  output logic [WordWidth-1:0]    sr_rsp_data_o    // word
);

  logic                    lw_fire, cw_fire, cr_fire, sr_fire;
  logic                    cr_valid_q;            // registered compute read request
  logic [BankIdxWidth-1:0] cr_req_bank_q;
  logic [AddrWidth-1:0]    cr_req_addr_q;
  logic [1:0]              cr_rsp_q, sr_rsp_q;    // a RAM read 1 / 2 cycles ago
  logic [BankIdxWidth-1:0] cr_bank_q, sr_bank_q, cr_bank_q2, sr_bank_q2;
  logic [WordWidth-1:0]    rdata_q2 [Banks];      // registered RAM outputs
  logic                    lw_q, cw_q;            // registered writes (after arbitration)
  logic [BankIdxWidth-1:0] lw_bank_q, cw_bank_q;
  logic [AddrWidth-1:0]    lw_addr_q, cw_addr_q;
  logic [WordWidth-1:0]    lw_data_q, cw_data_q;

  assign cw_ready_o     = 1'b1;
  assign cr_req_ready_o = 1'b1;
  assign lw_ready_o     = !(cw_valid_i && cw_bank_i == lw_bank_i);
  assign sr_req_ready_o = !(cr_valid_q && cr_req_bank_q == sr_bank_i);
  assign lw_fire        = lw_valid_i && lw_ready_o;
  assign cw_fire        = cw_valid_i;
  assign cr_fire        = cr_valid_q;
  assign sr_fire        = sr_req_valid_i && sr_req_ready_o;

  // Per-bank hits of the registered requests, decoded before the registers:
  // each RAM's write enable and multiplexer selects come from its own
  // flip-flop, not from a bank-index comparison after one.
  logic [Banks-1:0] cw_hit_q, lw_hit_q, cr_hit_q;

  for (genvar b = 0; b < Banks; b++) begin : g_bank
    logic                 we, re;
    logic [AddrWidth-1:0] waddr, raddr;
    logic [WordWidth-1:0] wdata, rdata;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        cw_hit_q[b] <= 1'b0;
        lw_hit_q[b] <= 1'b0;
        cr_hit_q[b] <= 1'b0;
      end else begin
        cw_hit_q[b] <= cw_fire && cw_bank_i == BankIdxWidth'(b);
        lw_hit_q[b] <= lw_fire && lw_bank_i == BankIdxWidth'(b);
        cr_hit_q[b] <= cr_req_valid_i && cr_bank_i == BankIdxWidth'(b);
      end
    end

    assign we    = cw_hit_q[b] || lw_hit_q[b];
    assign waddr = cw_hit_q[b] ? cw_addr_q : lw_addr_q;
    assign wdata = cw_hit_q[b] ? cw_data_q : lw_data_q;
    assign re    = cr_hit_q[b] || (sr_fire && sr_bank_i == BankIdxWidth'(b));
    assign raddr = cr_hit_q[b] ? cr_req_addr_q : sr_addr_i;

    strata_ram_1r1w #(
      .Width     (WordWidth),
      .Depth     (BankDepth),
      .ReadFirst (1'b0)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (we),
      .waddr_i (waddr),
      .wdata_i (wdata),
      .re_i    (re),
      .raddr_i (raddr),
      .rdata_o (rdata)
    );

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
    lw_bank_q     <= lw_bank_i;
    lw_addr_q     <= lw_addr_i;
    lw_data_q     <= lw_data_i;
    cw_bank_q     <= cw_bank_i;
    cw_addr_q     <= cw_addr_i;
    cw_data_q     <= cw_data_i;
    cr_req_bank_q <= cr_bank_i;
    cr_req_addr_q <= cr_addr_i;
    cr_bank_q     <= cr_req_bank_q;
    sr_bank_q     <= sr_bank_i;
    cr_bank_q2    <= cr_bank_q;
    sr_bank_q2    <= sr_bank_q;
  end

  assign cr_rsp_valid_o = cr_rsp_q[1];
  assign sr_rsp_valid_o = sr_rsp_q[1];
  assign cr_rsp_data_o  = rdata_q2[cr_bank_q2];
  assign sr_rsp_data_o  = rdata_q2[sr_bank_q2];

  `STRATA_ASSERT_STREAM(banks_lw, clk_i, rst_ni, lw_valid_i, lw_ready_o,
                        {lw_bank_i, lw_addr_i, lw_data_i})
  `STRATA_ASSERT_STREAM(banks_sr, clk_i, rst_ni, sr_req_valid_i, sr_req_ready_o,
                        {sr_bank_i, sr_addr_i})
  // The registered writes never collide (the arbitration above), and the
  // per-bank hits agree with the registered requests.
  `STRATA_ASSERT(banks_w_one, clk_i, rst_ni, !(lw_q && cw_q && lw_bank_q == cw_bank_q))
  `STRATA_ASSERT(banks_hits, clk_i, rst_ni,
                 cw_hit_q == (cw_q ? Banks'(1) << cw_bank_q : '0) &&
                 lw_hit_q == (lw_q ? Banks'(1) << lw_bank_q : '0) &&
                 cr_hit_q == (cr_valid_q ? Banks'(1) << cr_req_bank_q : '0))
  `STRATA_ASSERT(banks_lw_range, clk_i, rst_ni, !lw_valid_i || 32'(lw_bank_i) < Banks)
  `STRATA_ASSERT(banks_cw_range, clk_i, rst_ni, !cw_valid_i || 32'(cw_bank_i) < Banks)
  `STRATA_ASSERT(banks_cr_range, clk_i, rst_ni, !cr_req_valid_i || 32'(cr_bank_i) < Banks)
  `STRATA_ASSERT(banks_sr_range, clk_i, rst_ni, !sr_req_valid_i || 32'(sr_bank_i) < Banks)

`ifndef SYNTHESIS
  initial begin
    assert (Banks >= 1 && Banks <= 64 && BankDepth >= 2 && WordWidth >= 8)
      else $fatal(1, "strata_banks: Banks 1..64, BankDepth >= 2, WordWidth >= 8");
  end
`endif

endmodule : strata_banks
