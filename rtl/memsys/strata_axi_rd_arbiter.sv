// SPDX-License-Identifier: Apache-2.0
// Shares one AXI4 read channel (AR/R) between the instruction fetcher (ID
// FetchId) and the load engine (ID LoadId).
//
// AR: round-robin between the two requesters into a 2-entry register slice
// (strata_fifo), so the master AR port is registered and keeps its payload
// stable until ARREADY whatever the requesters do. Bursts are always INCR with
// full-width beats (ARSIZE = log2(AxiDataWidth / 8)).
// R: routed by RID; RREADY is the addressed client's ready. A beat with an ID
// that neither client issued cannot occur (assertion); it would be accepted
// and dropped so the channel never hangs.
// Latency: one cycle from a client's AR handshake to ARVALID; R is
// combinational (no added latency). Throughput: one AR per cycle, one R beat
// per cycle.
`include "strata_assert.svh"

module strata_axi_rd_arbiter #(
  parameter int unsigned AxiDataWidth = strata_cfg_pkg::AxiDataWidth,  // R beat bits
  parameter int unsigned AxiAddrWidth = strata_cfg_pkg::AxiAddrWidth,  // byte address bits
  parameter int unsigned AxiIdWidth   = 1,                             // ARID / RID bits
  parameter int unsigned FetchId      = 0,                             // ID of fetch bursts
  parameter int unsigned LoadId       = 1                              // ID of load bursts
) (
  input  logic                    clk_i,          // clock
  input  logic                    rst_ni,         // synchronous reset, active low
  // fetcher
  input  logic                    f_arvalid_i,    // fetch burst request
  output logic                    f_arready_o,    // taken
  input  logic [AxiAddrWidth-1:0] f_araddr_i,     // first byte address
  input  logic [7:0]              f_arlen_i,      // beats - 1
  output logic                    f_rvalid_o,     // fetch read beat
  input  logic                    f_rready_i,     // fetcher takes it
  output logic [AxiDataWidth-1:0] f_rdata_o,      // beat data
  output logic [1:0]              f_rresp_o,      // beat response
  output logic                    f_rlast_o,      // last beat of the burst
  // load engine
  input  logic                    l_arvalid_i,    // load burst request
  output logic                    l_arready_o,    // taken
  input  logic [AxiAddrWidth-1:0] l_araddr_i,     // first byte address
  input  logic [7:0]              l_arlen_i,      // beats - 1
  output logic                    l_rvalid_o,     // load read beat
  input  logic                    l_rready_i,     // load engine takes it
  output logic [AxiDataWidth-1:0] l_rdata_o,      // beat data
  output logic [1:0]              l_rresp_o,      // beat response
  output logic                    l_rlast_o,      // last beat of the burst
  // AXI4 master read channels
  output logic                    m_arvalid_o,    // ARVALID
  input  logic                    m_arready_i,    // ARREADY
  output logic [AxiIdWidth-1:0]   m_arid_o,       // ARID
  output logic [AxiAddrWidth-1:0] m_araddr_o,     // ARADDR
  output logic [7:0]              m_arlen_o,      // ARLEN
  output logic [2:0]              m_arsize_o,     // ARSIZE (full-width beats)
  output logic [1:0]              m_arburst_o,    // ARBURST (INCR)
  input  logic                    m_rvalid_i,     // RVALID
  output logic                    m_rready_o,     // RREADY
  input  logic [AxiIdWidth-1:0]   m_rid_i,        // RID
  input  logic [AxiDataWidth-1:0] m_rdata_i,      // RDATA
  input  logic [1:0]              m_rresp_i,      // RRESP
  input  logic                    m_rlast_i       // RLAST
);

  localparam int unsigned ArWidth = AxiIdWidth + AxiAddrWidth + 8;

  typedef struct packed {
    logic [AxiIdWidth-1:0]   id;
    logic [AxiAddrWidth-1:0] addr;
    logic [7:0]              len;
  } ar_t;

  ar_t  slice_in, slice_out;
  logic slice_valid, slice_ready;
  logic pick_load;              // this cycle's grant
  logic prefer_load_d, prefer_load_q;  // round-robin pointer
  logic hold_d, hold_q;         // the slice refused last cycle's pick: keep it
  logic held_load_d, held_load_q;
  logic [1:0] unused_slice_count;

  // Round robin: the client that did not win last time goes first. A pick
  // the slice could not take is kept until it is taken, so the slice's input
  // follows the stream rules too.
  assign pick_load   = hold_q ? held_load_q : (l_arvalid_i && (!f_arvalid_i || prefer_load_q));
  assign hold_d      = slice_valid && !slice_ready;
  assign held_load_d = pick_load;
  assign slice_valid = f_arvalid_i || l_arvalid_i;
  assign f_arready_o = slice_ready && !pick_load;
  assign l_arready_o = slice_ready && pick_load;

  always_comb begin
    slice_in.id   = pick_load ? AxiIdWidth'(LoadId) : AxiIdWidth'(FetchId);
    slice_in.addr = pick_load ? l_araddr_i : f_araddr_i;
    slice_in.len  = pick_load ? l_arlen_i : f_arlen_i;
    prefer_load_d = prefer_load_q;
    if (slice_valid && slice_ready) prefer_load_d = !pick_load;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      prefer_load_q <= 1'b0;
      hold_q        <= 1'b0;
      held_load_q   <= 1'b0;
    end else begin
      prefer_load_q <= prefer_load_d;
      hold_q        <= hold_d;
      held_load_q   <= held_load_d;
    end
  end

  strata_fifo #(
    .Width (ArWidth),
    .Depth (2)
  ) u_ar_slice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (slice_valid),
    .in_ready_o  (slice_ready),
    .in_data_i   (slice_in),
    .out_valid_o (m_arvalid_o),
    .out_ready_i (m_arready_i),
    .out_data_o  (slice_out),
    .count_o     (unused_slice_count)
  );

  assign m_arid_o    = slice_out.id;
  assign m_araddr_o  = slice_out.addr;
  assign m_arlen_o   = slice_out.len;
  assign m_arsize_o  = 3'($clog2(AxiDataWidth / 8));
  assign m_arburst_o = 2'b01;  // INCR

  // R routing by ID.
  logic r_fetch, r_load;
  assign r_fetch    = m_rid_i == AxiIdWidth'(FetchId);
  assign r_load     = m_rid_i == AxiIdWidth'(LoadId);
  assign f_rvalid_o = m_rvalid_i && r_fetch;
  assign l_rvalid_o = m_rvalid_i && r_load;
  assign m_rready_o = r_fetch ? f_rready_i : (r_load ? l_rready_i : 1'b1);
  assign f_rdata_o  = m_rdata_i;
  assign f_rresp_o  = m_rresp_i;
  assign f_rlast_o  = m_rlast_i;
  assign l_rdata_o  = m_rdata_i;
  assign l_rresp_o  = m_rresp_i;
  assign l_rlast_o  = m_rlast_i;

  `STRATA_ASSERT_STREAM(arb_f_ar, clk_i, rst_ni, f_arvalid_i, f_arready_o, {f_araddr_i, f_arlen_i})
  `STRATA_ASSERT_STREAM(arb_l_ar, clk_i, rst_ni, l_arvalid_i, l_arready_o, {l_araddr_i, l_arlen_i})
  `STRATA_ASSERT_STREAM(arb_m_ar, clk_i, rst_ni, m_arvalid_o, m_arready_i, slice_out)
  `STRATA_ASSERT_STREAM(arb_m_r, clk_i, rst_ni, m_rvalid_i, m_rready_o,
                        {m_rid_i, m_rdata_i, m_rresp_i, m_rlast_i})
  `STRATA_ASSERT(arb_known_rid, clk_i, rst_ni, !m_rvalid_i || r_fetch || r_load)

`ifndef SYNTHESIS
  initial begin
    assert (FetchId != LoadId && FetchId < 2 ** AxiIdWidth && LoadId < 2 ** AxiIdWidth)
      else $fatal(1, "strata_axi_rd_arbiter: IDs must differ and fit in AxiIdWidth");
    assert (AxiDataWidth >= 8 && AxiDataWidth <= 1024 && 2 ** $clog2(AxiDataWidth) == AxiDataWidth)
      else $fatal(1, "strata_axi_rd_arbiter: AxiDataWidth must be a power of two, 8..1024");
  end
`endif

endmodule : strata_axi_rd_arbiter
