// SPDX-License-Identifier: Apache-2.0
// Write side of strata_window_gen: takes the image's pixel vectors and
// places pixel (y, x) at line-buffer bank y mod Rows, word x. Row y may be
// written once no window still to come needs row y - Rows (the walker's
// output row start frees s rows: row_walk_i).
//
// Ports: start_i (the configuration handshake) resets the write position;
// check_i (the setup cycle that checks the configuration) loads the per-frame
// flags; run_i / drain_i and their next values run_next_i / drain_next_i give
// the frame state (drain: an illegal frame's pixels are taken and dropped).
// wr_x_o / wr_y_o are the position of the next pixel, lb_we_o writes the
// pixel taken this cycle there; wr_more_o: pixels of the frame still to come.
// Throughput: one pixel per cycle. in_ready_o is a flip-flop.
// The position update reads no compare: x_last = (wr_x == W - 1), more =
// (wr_y < H) and room_ok = (wr_y < free_lim) with room = free_lim - wr_y >= 0
// (the rows the write side may still start) are registered flags, each
// asserted against its definition.
`include "strata_assert.svh"

module strata_window_write #(
  parameter int unsigned MaxKernel   = strata_cfg_pkg::MaxKernel,  // largest kernel side
  parameter int unsigned DimWidth    = 16,  // bits of H, W, wr_x, wr_y
  parameter int unsigned StrideWidth = 4,   // bits of the stride
  localparam int unsigned KernelWidth = $clog2(MaxKernel + 1),
  localparam int unsigned PosWidth    = DimWidth + 2  // signed image coordinates
) (
  input  logic                       clk_i,             // clock
  input  logic                       rst_ni,            // synchronous reset, active low
  // Frame state and configuration (registered in strata_window_gen).
  input  logic                       start_i,           // configuration taken: position 0
  input  logic                       check_i,           // setup cycle: load the frame flags
  input  logic                       run_i,             // running a legal frame
  input  logic                       drain_i,           // dropping an illegal frame's pixels
  input  logic                       run_next_i,        // running next cycle
  input  logic                       drain_next_i,      // draining next cycle
  input  logic [DimWidth-1:0]        height_i,          // H
  input  logic [DimWidth-1:0]        width_i,           // W
  input  logic [StrideWidth-1:0]     stride_i,          // s
  input  logic [KernelWidth-1:0]     pad_top_i,         // pt, padding rows above the image
  // From the walker.
  input  logic signed [PosWidth-1:0] h_last_i,          // H - 1
  input  logic                       row_walk_i,        // the walker starts its next row
  input  logic                       walk_done_i,       // the walk is done
  input  logic                       walk_done_next_i,  // the walk is done next cycle
  input  logic signed [PosWidth-1:0] wy_i,              // window top row (assertions)
  input  logic signed [PosWidth-1:0] free_lim_i,        // wy + Rows (assertions)
  // Input stream.
  input  logic                       in_valid_i,        // pixel vector offered
  output logic                       in_ready_o,        // pixel vector taken
  // Line-buffer write.
  output logic                       lb_we_o,           // write the pixel taken at (wr_x, wr_y)
  output logic [DimWidth-1:0]        wr_x_o,            // column of the next pixel
  output logic [DimWidth-1:0]        wr_y_o,            // row of the next pixel
  output logic                       wr_more_o          // pixels of the frame still to come
);

  localparam int unsigned SlotWidth = $clog2(MaxKernel + 1);
  localparam int unsigned Rows      = 2 ** SlotWidth;

  typedef logic signed [PosWidth-1:0] pos_t;

  function automatic pos_t pos_of(logic [DimWidth-1:0] v);
    return pos_t'({2'b00, v});
  endfunction

  // Position of the next pixel to arrive, and its registered flags (header);
  // w_m2 = W - 2 and w_one = (W == 1) update x_last.
  logic [DimWidth-1:0] wr_x_d, wr_x_q, wr_y_d, wr_y_q;
  logic                wr_x_last_d, wr_x_last_q, wr_more_d, wr_more_q, room_ok_d, room_ok_q;
  logic                w_one_d, w_one_q;
  pos_t                room_d, room_q, w_m2_d, w_m2_q;

  pos_t pt, s, w, wr_x, wr_y;
  assign pt   = pos_t'(pad_top_i);
  assign s    = pos_t'(stride_i);
  assign w    = pos_of(width_i);
  assign wr_x = pos_of(wr_x_q);
  assign wr_y = pos_of(wr_y_q);

  logic in_fire, row_in;

  // The write side's flags for each outcome of its own events (a pixel
  // taken, in_fire; an input row completed, row_in), so in_ready_q's next
  // value takes in_fire at its last LUT: ready_if_fire / ready_if_hold
  // (kept, so synthesis keeps the split; asserted to equal write_ready of
  // the next flags) do not wait for the producer's valid, so its route is
  // not followed by the row-end carry chain and the room logic. The room
  // flags: rows left after a row end of the walker alone (room_ok_walk) or
  // with one of the input (room_ok_row: one fewer row, and s more if the
  // walker's row ends too).
  logic wr_more_hold, wr_more_fire, room_ok_walk, room_ok_row;
  (* keep *) logic ready_if_fire, ready_if_hold;

  always_comb begin
    wr_more_hold = check_i ? height_i != '0 : wr_more_q;
    wr_more_fire = wr_x_last_q ? wr_y < h_last_i : wr_more_hold;
    room_ok_walk = row_walk_i || (check_i ? pos_t'(Rows) > pt : room_ok_q);
    room_ok_row  = row_walk_i ? room_ok_q || (stride_i > StrideWidth'(1)) : room_q > pos_t'(1);
  end

  assign ready_if_hold = write_ready(run_next_i, drain_next_i, wr_more_hold, walk_done_next_i,
                                     room_ok_walk);
  assign ready_if_fire = write_ready(run_next_i, drain_next_i, wr_more_fire, walk_done_next_i,
                                     (wr_x_last_q && run_i) ? room_ok_row : room_ok_walk);

  // Ready for a pixel: running with rows left and room for them (or the walk
  // done), or draining the rows left. in_ready_q is loaded with this of the
  // next state and flags (asserted equal to it of the present ones), so the
  // producer's handshake starts at a flip-flop, not at the state decode
  // (no route to the producer's handshake and back in one cycle).
  function automatic logic write_ready(logic run, logic drain, logic more, logic done, logic ok);
    if (run)   return more && (done || ok);
    if (drain) return more;
    return 1'b0;
  endfunction

  logic in_ready_q;
  assign in_ready_o = in_ready_q;
  assign in_fire    = in_valid_i && in_ready_o;
  assign row_in     = in_fire && wr_x_last_q && run_i;
  assign lb_we_o    = in_fire && run_i;

  always_comb begin
    wr_x_d      = wr_x_q;
    wr_y_d      = wr_y_q;
    wr_x_last_d = wr_x_last_q;
    room_d      = room_q;
    w_one_d     = w_one_q;
    w_m2_d      = w_m2_q;

    if (start_i) begin
      wr_x_d = '0;
      wr_y_d = '0;
    end
    if (check_i) begin
      room_d      = pos_t'(Rows) - pt;
      wr_x_last_d = width_i == DimWidth'(1);
      w_one_d     = width_i == DimWidth'(1);
      w_m2_d      = w - pos_t'(2);
    end

    if (in_fire) begin
      if (wr_x_last_q) begin
        wr_x_d      = '0;
        wr_y_d      = wr_y_q + DimWidth'(1);
        wr_x_last_d = w_one_q;
      end else begin
        wr_x_d      = wr_x_q + DimWidth'(1);
        wr_x_last_d = wr_x == w_m2_q;
      end
    end

    // The rows the write side may start: one fewer when an input row is
    // complete, s more when the walker starts its next output row. room >= 0
    // (asserted), so with s >= 1 a walker row start always leaves room.
    // The three sums are of registers only; the two events select one.
    if (row_in || row_walk_i) begin
      unique case ({row_in, row_walk_i})
        2'b10:   room_d = room_q - pos_t'(1);
        2'b01:   room_d = room_q + s;
        default: room_d = room_q + s - pos_t'(1);
      endcase
    end
    wr_more_d = in_fire ? wr_more_fire : wr_more_hold;
    room_ok_d = row_in ? room_ok_row : room_ok_walk;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      in_ready_q  <= 1'b0;
      wr_x_q      <= '0;
      wr_y_q      <= '0;
      wr_x_last_q <= 1'b0;
      wr_more_q   <= 1'b0;
      room_ok_q   <= 1'b0;
      room_q      <= '0;
      w_one_q     <= 1'b0;
      w_m2_q      <= '0;
    end else begin
      in_ready_q  <= in_fire ? ready_if_fire : ready_if_hold;
      wr_x_q      <= wr_x_d;
      wr_y_q      <= wr_y_d;
      wr_x_last_q <= wr_x_last_d;
      wr_more_q   <= wr_more_d;
      room_ok_q   <= room_ok_d;
      room_q      <= room_d;
      w_one_q     <= w_one_d;
      w_m2_q      <= w_m2_d;
    end
  end

  assign wr_x_o    = wr_x_q;
  assign wr_y_o    = wr_y_q;
  assign wr_more_o = wr_more_q;

  // ---------------------------------------------------------------------------
  // Assertions.

  // The line buffer never overwrites a row a pending window still needs.
  `STRATA_ASSERT(wg_no_overwrite, clk_i, rst_ni,
                 !lb_we_o || walk_done_i || (wr_y < wy_i + pos_t'(Rows)))
  // The registered flags follow their definitions.
  `STRATA_ASSERT(wg_write_flags, clk_i, rst_ni, (!run_i && !drain_i)
                 || ((wr_x_last_q == (wr_x_q == width_i - DimWidth'(1)))
                     && (wr_more_q == (wr_y_q < height_i))
                     && (w_one_q == (width_i == DimWidth'(1)))
                     && (w_m2_q == w - pos_t'(2))))
  `STRATA_ASSERT(wg_in_ready_next, clk_i, rst_ni,
                 (in_fire ? ready_if_fire : ready_if_hold) ==
                 write_ready(run_next_i, drain_next_i, wr_more_d, walk_done_next_i, room_ok_d))
  `STRATA_ASSERT(wg_in_ready, clk_i, rst_ni,
                 in_ready_q == write_ready(run_i, drain_i, wr_more_q, walk_done_i, room_ok_q))
  `STRATA_ASSERT(wg_room, clk_i, rst_ni, !run_i || walk_done_i
                 || ((room_q == free_lim_i - wr_y) && (room_q >= pos_t'(0))
                     && (room_ok_q == (wr_y < free_lim_i))))

`ifndef SYNTHESIS
  initial begin
    assert (MaxKernel >= 1) else $fatal(1, "strata_window_write: MaxKernel must be >= 1");
    assert (StrideWidth >= 1 && StrideWidth < DimWidth)
      else $fatal(1, "strata_window_write: StrideWidth %0d out of range", StrideWidth);
  end
`endif

endmodule : strata_window_write
