// SPDX-License-Identifier: Apache-2.0
// What travels with a line-buffer column on its way from the window walker,
// through the column queue, to the window register of strata_window_gen, with
// MK (largest kernel side) tap rows and DW bits of the output position. As
// with strata_bank_types.svh, a package cannot take the module's widths, so
// the walker and the generator declare the type from this one body. In a
// packed struct the first field is the most significant.
`ifndef STRATA_WINDOW_TYPES_SVH
`define STRATA_WINDOW_TYPES_SVH

// col_in: the column lies inside the image (else it shifts in padding);
// emit: the shift completes a window; clear: a row start, clear the window
// register first; first / last: the frame's first / last window; rows: the
// window's tap rows inside the image; oy, ox: the output position.
`define STRATA_WINDOW_COL_META_T(MK, DW) struct packed { \
    logic col_in; logic emit; logic clear; logic first; logic last; \
    logic [(MK)-1:0] rows; logic [(DW)-1:0] oy; logic [(DW)-1:0] ox; \
  }

`endif  // STRATA_WINDOW_TYPES_SVH
