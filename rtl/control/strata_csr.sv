// SPDX-License-Identifier: Apache-2.0
// AXI4-Lite slave with the registers of config/registers.yaml (docs/registers.md).
//
// Handshakes: AW and W are accepted independently (either order, or together)
// into holding registers; the write is applied the cycle both are held and
// BVALID rises the cycle after. One write and one read are in flight at most:
// AWREADY / WREADY stay low while their holding register is full or the
// response waits for BREADY. A read's address is registered at the AR
// handshake; the next cycle selects the register's word and the counter
// (register decode and 15 x 64-bit counter multiplexer, into registers of
// their own), the cycle after picks between them into RDATA, and RVALID
// rises the cycle after that (read latency 3, one read per four cycles at
// most): the AXI-Lite address pins, the multiplexers and RDATA's last choice
// are in different cycles.
// Unmapped addresses answer SLVERR (reads return 0, writes change nothing);
// everything else answers OKAY. WSTRB selects the bytes written.
//
// Register semantics: CTRL.START is write-1-to-set and emits a one-cycle
// start_o pulse (it reads 0); IRQ_STATUS bits are set by done_set_i /
// error_set_i and cleared by writing 1 (a set in the same cycle wins, so no
// event is lost); irq_o = |(IRQ_STATUS & IRQ_ENABLE), from registers.
// 64-bit counters: a LO read returns bits 31:0 and captures bits 63:32 of the
// same counter in one shared snapshot register, which any HI read returns.
// The configuration registers (CFG_PES, CFG_LANES, ...) read the module's
// parameters, so they describe the hardware built.
`include "strata_assert.svh"

module strata_csr
  import strata_csr_pkg::*;
  import strata_axi_pkg::*;
#(
  parameter int unsigned HwVersion     = strata_cfg_pkg::HwVersion,     // configuration version
  parameter int unsigned Pes           = strata_cfg_pkg::Pes,           // P
  parameter int unsigned Lanes         = strata_cfg_pkg::Lanes,         // N
  parameter int unsigned Banks         = strata_cfg_pkg::Banks,         // on-chip banks
  parameter int unsigned BankDepth     = strata_cfg_pkg::BankDepth,     // words per bank
  parameter int unsigned PeCacheDepth  = strata_cfg_pkg::PeCacheDepth,  // words per PE cache
  parameter int unsigned ParamDepth    = strata_cfg_pkg::ParamDepth,    // parameter channels
  parameter int unsigned AxiDataWidth  = strata_cfg_pkg::AxiDataWidth,  // AXI4 master data bits
  parameter int unsigned MaxKernel     = strata_cfg_pkg::MaxKernel,     // conv kernel side
  parameter int unsigned MaxPoolKernel = strata_cfg_pkg::MaxPoolKernel, // pool window side
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth, // line-buffer row length
  parameter int unsigned AxiAddrWidth  = strata_cfg_pkg::AxiAddrWidth,  // AXI4 master address bits
  parameter bit          Sparse        = strata_cfg_pkg::Sparse,        // sparse build
  parameter int unsigned ActTables     = strata_cfg_pkg::ActTables,     // activation tables
  localparam int unsigned CounterVecWidth = NumPerfCounters * 64
) (
  input  logic                       clk_i,            // clock
  input  logic                       rst_ni,           // synchronous reset, active low
  input  axil_req_t                  s_req_i,          // AXI4-Lite (no PROT), window offsets
  output axil_rsp_t                  s_rsp_o,          // its response (OKAY or SLVERR)
  // To the controller and the fetcher
  output logic                       start_o,          // one-cycle pulse: CTRL.START written 1
  output logic                       fine_grain_o,     // CTRL.FINE_GRAIN
  output logic [63:6]                instr_base_o,     // INSTR_BASE_HI:LO bits 63:6 (5:0 are 0)
  output logic [31:0]                instr_limit_o,    // INSTR_LIMIT
  // From the controller
  input  logic                       busy_i,           // STATUS.BUSY
  input  logic                       done_i,           // STATUS.DONE
  input  logic                       error_i,          // STATUS.ERROR
  input  err_code_e                  err_code_i,       // ERROR_CODE.CODE
  input  csr_error_code_index_t      err_index_i,      // ERROR_CODE.INDEX
  input  logic                       done_set_i,       // pulse: run finished, sets IRQ_STATUS.DONE
  input  logic                       error_set_i,      // pulse: run failed, sets IRQ_STATUS.ERROR
  input  logic [CounterVecWidth-1:0] counters_i,       // 64-bit counters, *_IDX order
  output logic                       irq_o             // |(IRQ_STATUS & IRQ_ENABLE), a flip-flop
);

  localparam logic [1:0] RespOkay   = 2'b00;
  localparam logic [1:0] RespSlverr = 2'b10;

  localparam int unsigned PerfIdxWidth = $clog2(NumPerfCounters);

  // Word address inside the counter block (LO or HI word of some counter).
  function automatic logic is_counter(logic [CsrAddrWidth-1:0] addr);
    return addr[1:0] == 2'b00 && addr >= CSR_PERF_BASE_OFFSET &&
           32'(addr) < 32'(CSR_PERF_BASE_OFFSET) + 8 * NumPerfCounters;
  endfunction

  // Index of the counter a counter address names.
  function automatic logic [PerfIdxWidth-1:0] perf_index(logic [CsrAddrWidth-1:0] addr);
    return PerfIdxWidth'((addr - CSR_PERF_BASE_OFFSET) >> 3);
  endfunction

  // ---------------------------------------------------------------- write path
  logic                    aw_full_d, aw_full_q, w_full_d, w_full_q;
  logic [CsrAddrWidth-1:0] aw_addr_d, aw_addr_q;
  logic [31:0]             w_data_d, w_data_q;
  logic [3:0]              w_strb_d, w_strb_q;
  logic                    bvalid_d, bvalid_q;
  logic [1:0]              bresp_d, bresp_q;
  logic                    do_write;
  logic [31:0]             wmask;  // bit mask of the written bytes

  assign s_rsp_o.aw_ready = !aw_full_q;
  assign s_rsp_o.w_ready  = !w_full_q;
  assign do_write    = aw_full_q && w_full_q && !bvalid_q;
  assign wmask       = {{8{w_strb_q[3]}}, {8{w_strb_q[2]}}, {8{w_strb_q[1]}}, {8{w_strb_q[0]}}};

  always_comb begin
    aw_full_d = aw_full_q;
    aw_addr_d = aw_addr_q;
    w_full_d  = w_full_q;
    w_data_d  = w_data_q;
    w_strb_d  = w_strb_q;
    if (s_req_i.aw_valid && s_rsp_o.aw_ready) begin
      aw_full_d = 1'b1;
      aw_addr_d = s_req_i.aw.addr;
    end
    if (s_req_i.w_valid && s_rsp_o.w_ready) begin
      w_full_d = 1'b1;
      w_data_d = s_req_i.w.data;
      w_strb_d = s_req_i.w.strb;
    end
    if (do_write) begin
      aw_full_d = 1'b0;
      w_full_d  = 1'b0;
    end
  end

  // Writable state.
  logic        fine_grain_d, fine_grain_q;
  logic [1:0]  irq_enable_d, irq_enable_q;
  logic [1:0]  irq_status_d, irq_status_q;
  logic [31:0] base_lo_d, base_lo_q, base_hi_d, base_hi_q, limit_d, limit_q;
  logic        start_d, start_q;
  logic        write_hit;

  // A 32-bit register update with byte strobes and an access mask.
  function automatic logic [31:0] merge(logic [31:0] old, logic [31:0] data, logic [31:0] bytes,
                                        logic [31:0] rw_mask);
    return (old & ~(bytes & rw_mask)) | (data & bytes & rw_mask);
  endfunction

  logic [31:0] ctrl_old, ctrl_new;
  logic [1:0]  irq_enable_new, irq_clear;

  assign ctrl_old       = 32'(fine_grain_q) << CSR_CTRL_FINE_GRAIN_BIT;
  assign ctrl_new       = merge(ctrl_old, w_data_q, wmask, CSR_CTRL_RW_MASK);
  assign irq_enable_new = 2'(merge(32'(irq_enable_q), w_data_q, wmask, CSR_IRQ_ENABLE_RW_MASK));
  assign irq_clear      = 2'(w_data_q & wmask & CSR_IRQ_STATUS_W1C_MASK);

  always_comb begin
    fine_grain_d = fine_grain_q;
    irq_enable_d = irq_enable_q;
    base_lo_d    = base_lo_q;
    base_hi_d    = base_hi_q;
    limit_d      = limit_q;
    start_d      = 1'b0;
    irq_status_d = irq_status_q;
    write_hit    = 1'b1;
    if (do_write) begin
      unique case (aw_addr_q)
        CSR_CTRL_OFFSET: begin
          fine_grain_d = ctrl_new[CSR_CTRL_FINE_GRAIN_BIT];
          start_d = |(w_data_q & wmask & CSR_CTRL_W1S_MASK);
        end
        CSR_IRQ_ENABLE_OFFSET: irq_enable_d = irq_enable_new;
        CSR_IRQ_STATUS_OFFSET: begin
          irq_status_d = irq_status_q & ~irq_clear;
        end
        CSR_INSTR_BASE_LO_OFFSET: base_lo_d = merge(base_lo_q, w_data_q, wmask,
                                                    CSR_INSTR_BASE_LO_RW_MASK);
        CSR_INSTR_BASE_HI_OFFSET: base_hi_d = merge(base_hi_q, w_data_q, wmask,
                                                    CSR_INSTR_BASE_HI_RW_MASK);
        CSR_INSTR_LIMIT_OFFSET:   limit_d = merge(limit_q, w_data_q, wmask,
                                                  CSR_INSTR_LIMIT_RW_MASK);
        // Read-only registers: the write is ignored, the access is legal.
        CSR_ID_OFFSET, CSR_VERSION_OFFSET, CSR_STATUS_OFFSET, CSR_ERROR_CODE_OFFSET,
        CSR_CFG_PES_OFFSET, CSR_CFG_LANES_OFFSET, CSR_CFG_BANKS_OFFSET,
        CSR_CFG_BANK_DEPTH_OFFSET, CSR_CFG_CACHE_DEPTH_OFFSET, CSR_CFG_PARAM_DEPTH_OFFSET,
        CSR_CFG_AXI_DATA_WIDTH_OFFSET, CSR_CFG_LIMITS_OFFSET, CSR_CFG_FEATURES_OFFSET,
        CSR_CFG_AXI_ADDR_WIDTH_OFFSET: ;
        default: write_hit = is_counter(aw_addr_q);
      endcase
    end
    // Hardware events win over a clearing write in the same cycle.
    if (done_set_i)  irq_status_d[CSR_IRQ_STATUS_DONE_BIT]  = 1'b1;
    if (error_set_i) irq_status_d[CSR_IRQ_STATUS_ERROR_BIT] = 1'b1;
  end

  always_comb begin
    bvalid_d = bvalid_q;
    bresp_d  = bresp_q;
    if (s_rsp_o.b_valid && s_req_i.b_ready) bvalid_d = 1'b0;
    if (do_write) begin
      bvalid_d = 1'b1;
      bresp_d  = write_hit ? RespOkay : RespSlverr;
    end
  end

  assign s_rsp_o.b_valid = bvalid_q;
  assign s_rsp_o.b.resp  = bresp_q;

  // ---------------------------------------------------------------- read path
  logic                    rvalid_d, rvalid_q;
  logic [31:0]             rdata_d, rdata_q;
  logic [1:0]              rresp_d, rresp_q;
  logic [31:0]             snap_d, snap_q;  // HI half captured by the last LO read
  logic                    rd;

  logic                    rd_pend_q;  // a read address is registered, selected this cycle
  (* keep *) logic [CsrAddrWidth-1:0] raddr_q;  // kept: see perf_idx_q
  logic                    rd_sel_q;   // the selection is registered, RDATA loads this cycle

  // Selection (the cycle after the AR handshake): the register's word, the
  // addressed counter and what kind of word the address names.
  logic [31:0]             reg_word;   // word of a register (0 for a counter)
  logic                    reg_hit;    // the address names a register
  logic                    ctr_hit;    // the address names a counter's LO or HI word
  logic [PerfIdxWidth-1:0] perf_idx;   // of raddr_q: what perf_idx_q is asserted equal to
  // The counter index, a register of its own loaded with raddr_q (both
  // kept: Yosys merges a flip-flop into a kept one that loads the same
  // value, so neither may be merged). The register decode and the
  // counter multiplexer (15 x 64 bits) then share no address net and no
  // LUT, so the register word's path does not run through the wide
  // multiplexer's decode and its routes.
  (* keep *) logic [PerfIdxWidth-1:0] perf_idx_q;
  logic [31:0]             reg_word_q;
  logic [63:0]             ctr_val_q;  // the addressed counter, both halves
  logic                    reg_hit_q, ctr_hit_q, ctr_hi_q;

  assign s_rsp_o.ar_ready = !rvalid_q && !rd_pend_q && !rd_sel_q;
  assign rd          = s_req_i.ar_valid && s_rsp_o.ar_ready;
  assign ctr_hit     = is_counter(raddr_q);
  assign perf_idx    = perf_index(raddr_q);
  `STRATA_ASSERT(csr_perf_idx_copy, clk_i, rst_ni, !rd_pend_q || perf_idx_q == perf_idx)

  // Register contents seen by a read.
  always_comb begin
    reg_hit  = 1'b1;
    reg_word = 32'd0;
    unique case (raddr_q)
      CSR_ID_OFFSET:            reg_word = CSR_ID_RESET;
      CSR_VERSION_OFFSET:       reg_word = 32'(HwVersion);
      CSR_CTRL_OFFSET:          reg_word[CSR_CTRL_FINE_GRAIN_BIT] = fine_grain_q;
      CSR_STATUS_OFFSET: begin
        reg_word[CSR_STATUS_BUSY_BIT]  = busy_i;
        reg_word[CSR_STATUS_DONE_BIT]  = done_i;
        reg_word[CSR_STATUS_ERROR_BIT] = error_i;
      end
      CSR_ERROR_CODE_OFFSET: begin
        reg_word[CSR_ERROR_CODE_CODE_LSB +: CSR_ERROR_CODE_CODE_WIDTH]   = err_code_i;
        reg_word[CSR_ERROR_CODE_INDEX_LSB +: CSR_ERROR_CODE_INDEX_WIDTH] = err_index_i;
      end
      CSR_IRQ_ENABLE_OFFSET:    reg_word[1:0] = irq_enable_q;
      CSR_IRQ_STATUS_OFFSET:    reg_word[1:0] = irq_status_q;
      CSR_INSTR_BASE_LO_OFFSET: reg_word = base_lo_q;
      CSR_INSTR_BASE_HI_OFFSET: reg_word = base_hi_q;
      CSR_INSTR_LIMIT_OFFSET:   reg_word = limit_q;
      CSR_CFG_PES_OFFSET:       reg_word = 32'(Pes);
      CSR_CFG_LANES_OFFSET:     reg_word = 32'(Lanes);
      CSR_CFG_BANKS_OFFSET:     reg_word = 32'(Banks);
      CSR_CFG_BANK_DEPTH_OFFSET:  reg_word = 32'(BankDepth);
      CSR_CFG_CACHE_DEPTH_OFFSET: reg_word = 32'(PeCacheDepth);
      CSR_CFG_PARAM_DEPTH_OFFSET: reg_word = 32'(ParamDepth);
      CSR_CFG_AXI_DATA_WIDTH_OFFSET: reg_word = 32'(AxiDataWidth);
      CSR_CFG_LIMITS_OFFSET: begin
        reg_word[CSR_CFG_LIMITS_MAX_KERNEL_LSB +: CSR_CFG_LIMITS_MAX_KERNEL_WIDTH] =
            CSR_CFG_LIMITS_MAX_KERNEL_WIDTH'(MaxKernel);
        reg_word[CSR_CFG_LIMITS_MAX_POOL_KERNEL_LSB +: CSR_CFG_LIMITS_MAX_POOL_KERNEL_WIDTH] =
            CSR_CFG_LIMITS_MAX_POOL_KERNEL_WIDTH'(MaxPoolKernel);
        reg_word[CSR_CFG_LIMITS_MAX_IMAGE_WIDTH_LSB +: CSR_CFG_LIMITS_MAX_IMAGE_WIDTH_WIDTH] =
            CSR_CFG_LIMITS_MAX_IMAGE_WIDTH_WIDTH'(MaxImageWidth);
      end
      CSR_CFG_FEATURES_OFFSET: begin
        reg_word[CSR_CFG_FEATURES_SPARSE_BIT] = Sparse;
        reg_word[CSR_CFG_FEATURES_ACT_TABLES_LSB +: CSR_CFG_FEATURES_ACT_TABLES_WIDTH] =
            CSR_CFG_FEATURES_ACT_TABLES_WIDTH'(ActTables);
      end
      CSR_CFG_AXI_ADDR_WIDTH_OFFSET: reg_word = 32'(AxiAddrWidth);
      default:                  reg_hit = 1'b0;
    endcase
  end

  // RDATA (the cycle after the selection): a register's word, a counter's LO
  // word (its HI word goes to the snapshot) or the snapshot for a HI word;
  // an address that names neither answers SLVERR with 0.
  always_comb begin
    rvalid_d = rvalid_q;
    rdata_d  = rdata_q;
    rresp_d  = rresp_q;
    snap_d   = snap_q;
    if (s_rsp_o.r_valid && s_req_i.r_ready) rvalid_d = 1'b0;
    if (rd_sel_q) begin
      rvalid_d = 1'b1;
      rdata_d  = !ctr_hit_q ? reg_word_q : ctr_hi_q ? snap_q : ctr_val_q[31:0];
      rresp_d  = (reg_hit_q || ctr_hit_q) ? RespOkay : RespSlverr;
      if (ctr_hit_q && !ctr_hi_q) snap_d = ctr_val_q[63:32];
    end
  end

  assign s_rsp_o.r_valid = rvalid_q;
  assign s_rsp_o.r.data  = rdata_q;
  assign s_rsp_o.r.resp  = rresp_q;

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      aw_full_q    <= 1'b0;
      w_full_q     <= 1'b0;
      bvalid_q     <= 1'b0;
      rvalid_q     <= 1'b0;
      rd_pend_q    <= 1'b0;
      rd_sel_q     <= 1'b0;
      fine_grain_q <= CSR_CTRL_RESET[CSR_CTRL_FINE_GRAIN_BIT];
      irq_enable_q <= CSR_IRQ_ENABLE_RESET[1:0];
      irq_status_q <= CSR_IRQ_STATUS_RESET[1:0];
      base_lo_q    <= CSR_INSTR_BASE_LO_RESET;
      base_hi_q    <= CSR_INSTR_BASE_HI_RESET;
      limit_q      <= CSR_INSTR_LIMIT_RESET;
      start_q      <= 1'b0;
      snap_q       <= 32'd0;
    end else begin
      aw_full_q    <= aw_full_d;
      w_full_q     <= w_full_d;
      bvalid_q     <= bvalid_d;
      rvalid_q     <= rvalid_d;
      rd_pend_q    <= rd;
      rd_sel_q     <= rd_pend_q;
      fine_grain_q <= fine_grain_d;
      irq_enable_q <= irq_enable_d;
      irq_status_q <= irq_status_d;
      base_lo_q    <= base_lo_d;
      base_hi_q    <= base_hi_d;
      limit_q      <= limit_d;
      start_q      <= start_d;
      snap_q       <= snap_d;
    end
  end

  // Payload registers: qualified by their valid / full bits.
  always_ff @(posedge clk_i) begin
    aw_addr_q <= aw_addr_d;
    w_data_q  <= w_data_d;
    w_strb_q  <= w_strb_d;
    bresp_q   <= bresp_d;
    rdata_q   <= rdata_d;
    rresp_q   <= rresp_d;
    if (rd) raddr_q <= s_req_i.ar.addr;
    if (rd) perf_idx_q <= perf_index(s_req_i.ar.addr);
    if (rd_pend_q) begin
      reg_word_q <= reg_word;
      ctr_val_q  <= counters_i[64 * 32'(perf_idx_q) +: 64];
      reg_hit_q  <= reg_hit;
      ctr_hit_q  <= ctr_hit;
      ctr_hi_q   <= raddr_q[2];  // counters are 8-byte aligned: bit 2 is the HI word
    end
  end

  assign start_o       = start_q;
  assign fine_grain_o  = fine_grain_q;
  assign instr_base_o  = {base_hi_q, base_lo_q[31:6]};
  assign instr_limit_o = limit_q;
  assign irq_o         = |(irq_status_q & irq_enable_q);

  // ---------------------------------------------------------------- checks
  `STRATA_ASSERT_STREAM(csr_b, clk_i, rst_ni, s_rsp_o.b_valid, s_req_i.b_ready, s_rsp_o.b)
  `STRATA_ASSERT_STREAM(csr_r, clk_i, rst_ni, s_rsp_o.r_valid, s_req_i.r_ready, s_rsp_o.r)
  `STRATA_ASSERT_STREAM(csr_aw, clk_i, rst_ni, s_req_i.aw_valid, s_rsp_o.aw_ready, s_req_i.aw)
  `STRATA_ASSERT_STREAM(csr_w, clk_i, rst_ni, s_req_i.w_valid, s_rsp_o.w_ready, s_req_i.w)
  `STRATA_ASSERT_STREAM(csr_ar, clk_i, rst_ni, s_req_i.ar_valid, s_rsp_o.ar_ready, s_req_i.ar)

`ifndef SYNTHESIS
  initial begin
    assert (NumPerfCounters >= 2 && 2 ** PerfIdxWidth >= NumPerfCounters &&
            CSR_PERF_BASE_OFFSET[2:0] == 3'd0)
      else $fatal(1, "strata_csr: counter decoder out of range");
    assert (Pes < 2 ** 16 && Lanes < 2 ** 16 && Banks < 2 ** 16 && AxiDataWidth >= 32)
      else $fatal(1, "strata_csr: configuration out of range");
    assert (MaxKernel < 2 ** CSR_CFG_LIMITS_MAX_KERNEL_WIDTH &&
            MaxPoolKernel < 2 ** CSR_CFG_LIMITS_MAX_POOL_KERNEL_WIDTH &&
            MaxImageWidth < 2 ** CSR_CFG_LIMITS_MAX_IMAGE_WIDTH_WIDTH)
      else $fatal(1, "strata_csr: CFG_LIMITS fields overflow");
    assert (AxilAddrWidth == CsrAddrWidth)
      else $fatal(1, "strata_csr: AXI4-Lite address width differs from the register map's");
  end
`endif

endmodule : strata_csr
