// SPDX-License-Identifier: Apache-2.0
// What the emission of one op's jobs shares with the others (pass 3, emit):
// the target, the plan, the external data layout, the bank rotation, the
// parameter ring and the weight slots. emit.cpp emits the ops that run whole
// and the fully-connected layers, emit_tiles.cpp the tiled ops.
#pragma once

#include <initializer_list>
#include <utility>
#include <vector>

#include "ir.hpp"

namespace strata::compiler {

class EmitContext {
 public:
  EmitContext(const HwTarget& t, const Plan& pl, const DataLayout& d) : t(t), pl(pl), d(d), em(t) {}

  const HwTarget& t;
  const Plan& pl;
  const DataLayout& d;
  const Emitter em;

  // The next bank in round-robin order that is not excluded.
  int64_t take_bank(std::initializer_list<int64_t> exclude);

  // The parameter RAM address of channel `first` of op `q`: its resident base,
  // or a LOAD of `count` channels from `first` into the ring (added to `loads`).
  int64_t param_load(const PlanBase& q, int64_t first, int64_t count, std::vector<Emit>& loads);

  // The table slot op `q` looks up in (-1: no table activation): its resident
  // slot, or the next slot in turn with a LOAD TABLE (added to `loads`).
  int64_t table_load(const PlanBase& q, std::vector<Emit>& loads);

  // Streamed weights: the PE-cache slot of the next pass and the LOAD that
  // fills it with pass `pass` of convolution `q` (added to `loads`).
  int64_t weight_load(const ConvPlan& q, int64_t pass, std::vector<Emit>& loads);
  // A packed op's control words and schedule for words [lo, hi) of weight pass
  // `first_pass` at cache address `at` (lo < 0: every pass, resident at `at`).
  void control_loads(const ConvPlan& q, int64_t first_pass, int64_t lo, int64_t hi, int64_t at,
                     std::vector<Emit>& loads) const;

 private:
  int next_bank_ = 0;
  int64_t ring_ = 0;
  int64_t table_turn_ = 0;                       // loads into the table ring so far
  int64_t slot_turn_ = 0;                        // the next pass's slot
  int slot_op_ = -1;                             // the tag of the op whose passes take the slots
  std::pair<int64_t, int64_t> last_slot_{0, 0};  // words of the last pass loaded
};

// The COMPUTE of one tile (a band and a strip) and pass of map op `op`: its
// input, [group][row][col] words of the tile's input rows and columns at
// `in_bank`:`in_base`, with the tile's padding and sizes (a grouped op's pass
// reads its groups from group `first_group` of them on); parameters from
// `param_base` (channel 0 of the pass), weights at `cache_base`. The caller
// sets the destination. An op that runs whole is one tile of the whole map.
isa::ComputeInstr tile_compute(const Op& op, const OpPlan& plan, const AxisTile& band,
                               const AxisTile& strip, int64_t first_group, int64_t in_bank,
                               int64_t in_base, int64_t param_base, int64_t cache_base);

// Split passes (docs/compiler.md, "Split passes"): makes COMPUTE `c` of a whole pass
// (tile_compute's, its destination and table set) the COMPUTE of chunk `chunk` of
// op plan `q`: its input groups (`whole_input`: the pass's groups are all in the input,
// the chunk's start `chunk * chunk_groups` groups in; else the input holds the chunk's
// only), and the int32 partial sums at `spill_bank`:`spill_base`, 4 words per
// convolution output pixel, read by every chunk but the first (acc_in) and written by
// every chunk but the last (acc_out: no requantisation, pooling or table).
void split_chunk(isa::ComputeInstr& c, const ConvPlan& q, int64_t chunk, int64_t spill_bank,
                 int64_t spill_base, bool whole_input);

// A mul op's vector as DEPTHWISE weights, for image `img`, before its passes
// (emit_tiles.cpp; docs/compiler.md, "Channel-wise multiply"): a LOAD of the
// stored [C][1][1] vector into a bank other than `busy`, then one CONV per PE q
// over it as a 1 x G image of one group, PE 0's selector word q picking lane q
// of every group's word into lane 0 of word mul_base + g of PE q's cache. The
// first job takes `pending` (the op's parameter and table loads).
void emit_mul_vector(EmitContext& cx, const ConvOp& op, const ConvPlan& q, int img,
                     int64_t op_params, int64_t busy, std::vector<Emit>& pending,
                     std::vector<Job>& jobs);

// Sets COMPUTE c's table lookup to `slot` (none when slot < 0).
void set_table(isa::ComputeInstr& c, int64_t slot);

// One map a tiled op reads from external memory ([row][group][col] words): its
// address and the groups of a row (`groups`, in_width / factor words each);
// the groups it loads, [first, first + count) (count 0: all), and where they go
// in the tile buffer: its group first + i is the tile's group tile_group + i * step;
// each word repeated `factor` times along both axes (nearest upsampling).
struct TiledSource {
  uint64_t ext = 0;
  int64_t groups = 0;
  int64_t first = 0;
  int64_t count = 0;
  int64_t tile_group = 0;
  int64_t step = 1;
  int factor = 1;
};

// The jobs of tiled op `k` (emit_tiles.cpp) for image `img`: its input read
// tile by tile from external memory (one source; an add's two, interleaved by
// group in the tile buffer: source s's group g is the tile's group g * sources + s;
// the parts of a concat, slice or upsample one after the other; a grouped op
// loads per pass only the pass's group of each source), its results into bank
// `out_bank` (a whole map on chip), the PE caches, or external memory at `out_ext`.
struct TiledOpIo {
  std::vector<TiledSource> srcs;
  int64_t in_width = 0;        // words per group row of the external input
  int64_t out_bank = -1;       // whole output map on chip (dst kBank, not external)
  uint64_t out_ext = 0;        // results in external memory
  bool out_is_output = false;  // the network's output region: [group][row][col]
};
void emit_tiled_op(EmitContext& cx, const Op& op, const OpPlan& plan, int img, const TiledOpIo& io,
                   std::vector<Job>& jobs);

}  // namespace strata::compiler
