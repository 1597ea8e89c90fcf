// SPDX-License-Identifier: Apache-2.0
// The compiler's intermediate representation (docs/compiler.md, "Passes"): what
// the passes of passes.hpp take and return. Internal to strata_core and its
// tests; the public interface is strata/compiler.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/network.hpp"
#include "strata/numerics.hpp"
#include "strata/sparse_pack.hpp"
#include "strata/tensor.hpp"
#include "tiling.hpp"

namespace strata::compiler {

// Every region of the memory image starts at a multiple of this.
constexpr uint64_t kRegionAlign = 64;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// ---- ops: what lower() makes of the network's layers ----------------------------------------

// The network input as an op's source (OpBase::srcs).
constexpr int kInputSrc = -1;

// One part of an input assembled from stored maps (a concat, a channel slice, a
// nearest upsampling, or any nesting of them; docs/compiler.md, "Concat, slice
// and upsample"): groups [first_group, first_group + groups) of its source map
// (src_groups groups per row, its rows and columns the op's input divided by
// `factor`), each word repeated `factor` times along both axes. The parts sit in
// the op's input one after the other, part i from group sum(groups of parts < i)
// on; its channel j is lane `lane + j` of its first group, counting on.
struct InputPart {
  int64_t src_groups = 0;
  int64_t first_group = 0;
  int64_t groups = 0;
  int64_t lane = 0;
  int64_t channels = 0;
  int factor = 1;
};

// What every op has: the network layers it computes, the layer that started it
// (errors name it), the ops whose results it reads, its input and its result.
struct OpBase {
  std::vector<size_t> layers;   // indices into Network::layers, in order
  const Layer* main = nullptr;  // the layer that started the op; nullptr for the copy op
  // The ops whose results it reads, in operand order (kInputSrc: the network
  // input): the op before it in a chain; any earlier op for a shortcut; two
  // for an add, whose operands share one shape.
  std::vector<int> srcs;
  // Set when the input is assembled from parts, one per source in `srcs` (a
  // source may appear more than once); empty for a map read as it is stored,
  // and for an add's two operands (interleaved by group).
  std::vector<InputPart> parts;
  int64_t in_c = 0, in_h = 0, in_w = 0;     // input map [C][H][W] (fc: as the network has it)
  int64_t out_c = 0, out_h = 0, out_w = 0;  // result map (fc: out_c neurons, 1x1)
  int64_t macs = 0;                         // useful MACs per image
  std::vector<std::string> notes;           // lowering decisions, for the listing
  // A layer that several ops compute (a max pool larger than the pooling unit, as a
  // cascade of smaller windows): its index and this op's part ("2/3"), shown after
  // the layer's name in the op's name ("pool1[2/3]").
  size_t part_layer = SIZE_MAX;
  std::string part;
  // The network outputs (indices into Network::output_layers()) that are this
  // op's result: stored to external memory (docs/compiler.md, "Several outputs").
  std::vector<size_t> outputs;
};

// Per output channel of a convolution or FC: bias, M and S, and the
// requantisation clamp [lo, hi] (clamps fused into the op narrow it).
struct ChannelParams {
  std::vector<int32_t> bias;
  std::vector<uint16_t> mult;
  std::vector<uint8_t> shift;
  int lo = kInt8Min, hi = kInt8Max;
  // The activation table after the clamp (docs/numerics.md): empty, or 256
  // entries with the clamps fused after it applied to them.
  std::vector<int8_t> table;
};

// A pooling stage (fused into a convolution, or a POOL op): the window, max or
// average, and the clamp applied after it.
struct Pooling {
  PoolWindow window;
  bool avg = false;
  int post_lo = kInt8Min, post_hi = kInt8Max;
};

// What a convolution-mode op computes besides a convolution (lower.cpp).
enum class ConvKind {
  kConv,           // a convolution layer
  kIdentityPool,   // an average pool with identity weights (larger than the pooling unit)
  kDepthwise,      // a depthwise layer: one input group per pass (ConvOp::depthwise_mode)
  kAdd,            // a residual add: per channel wa * a + wb * b, then M, S
  kGlobalAvgPool,  // a global average pool: a depthwise sum over the map, exact M, S
  kGrouped,        // a convolution with channel groups, each pass inside one group
  kMul,            // a channel-wise multiply: DEPTHWISE 1x1 with the vector as its weights
};

// A convolution (CONV mode), with the pool that follows it fused in when the
// pooling unit can run it. Grouped kinds (`pass_groups` > 0: depthwise, add,
// global average pool, a convolution with channel groups) read, in pass p, only
// the input groups [q * pass_groups, (q + 1) * pass_groups) of their channel
// group q = p / passes_per_group: their weights are [Cout][pass_groups * N][K][K],
// the second index the lane within the pass's groups. An add's input is its two
// operands interleaved by group (group 2g = a's g, 2g + 1 = b's g).
struct ConvOp : OpBase {
  int kernel = 1, stride = 1;
  Pads pad;  // zero padding per side
  ConvKind kind = ConvKind::kConv;
  int64_t pass_groups = 0;       // input groups per pass; 0: all of them (a dense convolution)
  int64_t passes_per_group = 1;  // grouped: consecutive passes that read the same input groups
  // A depthwise layer that runs in COMPUTE mode DEPTHWISE (PE p = channel p of the
  // pass's group, the taps through the window generator; no fused pool), its
  // weights [Cout][1][K][K] as the layer has them. false: as a grouped CONV, its
  // weights diagonal ([Cout][N][K][K], each PE's on its own channel's lane).
  bool depthwise_mode = false;
  // kMul: the op whose result is the [C][1][1] vector (stored to external memory, read
  // back per image and turned into the DEPTHWISE weights on chip; docs/compiler.md,
  // "Channel-wise multiply"). Its weights are the N selector words of PE 0, word q
  // holding 1 in lane q; its parameters are the layer's C channels, padded to whole
  // passes, then P identity channels (bias 0, M 1, S 0) for the selector CONVs.
  int vector_src = -1;
  Tensor<int8_t> weights;  // [Cout][Cin][K][K]; grouped: [Cout][pass_groups * N][K][K]
  ChannelParams params;
  int64_t conv_h = 0, conv_w = 0;  // convolution output, before the fused pool
  std::optional<Pooling> pool;     // fused pool; out_h, out_w are its output
};

inline const char* conv_kind_name(const ConvOp& c) {
  switch (c.kind) {
    case ConvKind::kIdentityPool:
      return "identity conv";
    case ConvKind::kDepthwise:
      return "depthwise";
    case ConvKind::kAdd:
      return "add";
    case ConvKind::kGlobalAvgPool:
      return "global avgpool";
    case ConvKind::kGrouped:
      return "grouped conv";
    case ConvKind::kMul:
      return "mul";
    case ConvKind::kConv:
      break;
  }
  return "conv";
}

// A fully-connected layer (FC mode) over the flattened input.
struct FcOp : OpBase {
  int64_t features = 0;    // flattened input features
  Tensor<int8_t> weights;  // [Cout][features]
  ChannelParams params;
};

// A pool on its own (POOL mode); also a clamp that follows nothing fusable, and
// the copy of a network that computes nothing: a 1x1 window (clamp_only).
struct PoolOp : OpBase {
  Pooling pool;
  bool clamp_only = false;  // 1x1 window: elementwise clamp [post_lo, post_hi]
};

using Op = std::variant<ConvOp, FcOp, PoolOp>;

inline const OpBase& base(const Op& op) {
  return std::visit([](const auto& o) -> const OpBase& { return o; }, op);
}
inline OpBase& base(Op& op) {
  return std::visit([](auto& o) -> OpBase& { return o; }, op);
}
template <class T>
bool is(const Op& op) {
  return std::holds_alternative<T>(op);
}
// The op's pooling stage: a POOL op's, a convolution's fused pool, or nullptr.
inline const Pooling* pooling(const Op& op) {
  if (const auto* p = std::get_if<PoolOp>(&op)) return &p->pool;
  if (const auto* c = std::get_if<ConvOp>(&op)) return c->pool ? &*c->pool : nullptr;
  return nullptr;
}
// A convolution's or FC's per-channel parameters, nullptr for a POOL op.
inline const ChannelParams* channel_params(const Op& op) {
  if (const auto* c = std::get_if<ConvOp>(&op)) return &c->params;
  if (const auto* f = std::get_if<FcOp>(&op)) return &f->params;
  return nullptr;
}

// ---- the plan: layouts, on-chip allocation and the parameter and weight images --------------

// Where an op's results go: a bank; the PE caches as a map (an FC follows);
// transposed into the PE caches, lane = image (an FC follows an FC).
enum class Dst { kBank, kPeCache, kTranspose };

// Feature index (C, H, W order) held by lane `lane` of FC input word `t`, or -1.
struct FeatureOrder {
  bool from_map = false;  // the previous op wrote a map into the PE caches: ((g*H+y)*W+x)*N+lane
  // The previous op's map as stored in external memory, [row][group][col]: word
  // (y*G+g)*W+x (an FC whose features are loaded chunk by chunk from there).
  bool row_major = false;
  int64_t c = 0, h = 0, w = 0;
  int64_t features = 0;
  // Features per word after an FC layer whose tiles are narrower than a word: each tile
  // starts a PE-cache word (the hardware writes whole words), so lanes 0..per_word-1 of
  // word t hold neurons t*per_word.. and the other lanes are zero. 0 = N per word.
  int64_t per_word = 0;
  int64_t at(int64_t t, int64_t lane, int64_t n) const {
    if (!from_map) {
      const int64_t width = per_word > 0 ? per_word : n;
      const int64_t f = t * width + lane;
      return lane < width && f < features ? f : -1;
    }
    const int64_t plane = h * w, groups = (c + n - 1) / n;
    const int64_t g = row_major ? (t / w) % groups : t / plane;
    const int64_t y = row_major ? t / (groups * w) : (t % plane) / w, x = t % w;
    const int64_t ch = g * n + lane;
    return ch < c ? (ch * h + y) * w + x : -1;
  }
};

// plan()'s decisions for one op, one type per op kind (ConvOp -> ConvPlan, FcOp ->
// FcPlan, PoolOp -> PoolPlan). What every op's plan has:
struct PlanBase {
  std::string name;       // "conv1+pool1+relu1"
  int tag = 0;            // header tag of its instructions: its first layer's index
  bool is_final = false;  // the last op: its results are stored
  Dst dst = Dst::kBank;
  int64_t next_feat_base = 0;  // dst kPeCache / kTranspose: the next FC's feat_base
  // parameters (a POOL has none: 0 entries)
  int64_t param_entries = 0;
  uint64_t param_ext = 0;        // offset in the params region
  int64_t param_base = -1;       // resident channel base, -1 = loaded per use
  bool params_per_pass = false;  // more channels than the parameter RAM: P loaded per pass
  // activation table (none: table < 0): its index among the program's distinct
  // tables, its offset in the params region, and its slot when the tables are
  // resident (else a LOAD TABLE into the ring before each use)
  int table = -1;
  uint64_t table_ext = 0;
  int table_slot = -1;
};

// Where a tiled op keeps its tiles (docs/compiler.md, "Large maps"): two input
// buffers that alternate between tiles, and two output buffers when its results
// go to external memory (otherwise they go straight into the whole output map,
// in a bank or the PE caches). A buffer is a bank, or half of one when the
// target has too few banks for a bank each (`*_shared`: both in one bank).
struct TileBuffers {
  int64_t in_words = 0;   // each input buffer
  int64_t out_words = 0;  // each output buffer; 0: none
  bool in_shared = false;
  bool out_shared = false;
};

// A map op's input, its output groups, and how it runs (CONV, POOL): whole (its
// input map in one bank, loaded whole or left there by the op before) or tiled
// (bands x strips, its input read tile by tile from external memory).
struct MapInput {
  bool reorder = false;  // the first convolution's input, reordered on the host
  int64_t g_in = 0, map_h = 0, map_w = 0;
  int64_t out_groups = 0;
  bool tiled = false;
  bool out_external = false;  // its results are stored: the output, or a map in external memory
  AxisGeometry rows, cols;    // the op's windows along each axis, as run
  TilingChoice tiling;        // tiled: bands, strips, loop order, predicted cost
  TileBuffers buffers;        // tiled
};

struct ConvPlan : PlanBase, MapInput {
  int kh = 1, kw = 1, sh = 1, sw = 1;  // geometry as run (reordered: K x 1)
  Pads pad;                            // as run (reordered: no column padding)
  int64_t g_pass = 0;         // input groups each pass reads (= g_in for a dense convolution)
  int64_t per_pass = 0;       // weight words per PE per pass
  int64_t passes = 1;         // passes of P output channels
  int64_t weight_passes = 1;  // passes with weights of their own; 1 < passes: all use pass 0's
                              // (a global pool: the same weight word per PE in every pass)
  uint64_t weights_ext = 0;   // offset in the weights region
  int64_t cache_base = -1;    // resident cache base, -1 = streamed
  // Streamed weights: the PE-cache slots its passes take in turn. `slots` of
  // `per_pass` words side by side, or, when two do not fit, two that overlap
  // (one at the bottom, one at the top of the weight region): a pass's LOAD is
  // then split so that only the overlap waits for the pass before it.
  int64_t slots = 0;
  bool slots_overlap = false;
  // Sparse targets (docs/sparsity.md): the weight passes packed when that saves
  // beats. `per_pass` is then the longest pass's packed rows, pass i's CONV runs
  // packing[i].packed_cycles() of them, and the weights region holds, after the
  // op's weights, every pass's control words (P x per_pass per pass) and then
  // every pass's schedule (per_pass words per pass), from `controls_ext` on.
  bool packed = false;
  int64_t dense_per_pass = 0;                // per_pass before packing
  int64_t weight_slots = 0, zero_slots = 0;  // its weight passes' lanes, and the zero ones
  std::vector<PackedSchedule> packing;       // per weight pass
  uint64_t controls_ext = 0;
  // Split passes (docs/compiler.md, "Split passes"): a pass whose weights do not fit
  // the free PE-cache words runs as `chunks` COMPUTEs, chunk j over the instruction's
  // input groups [j * chunk_groups, (j + 1) * chunk_groups) (the last may have fewer),
  // the int32 partial sums carried from one to the next through a spill buffer of 4
  // words per convolution output pixel (acc_out, acc_in). `per_pass` is then one
  // chunk's words (`taps` per group) and the weights image holds per weight pass
  // `chunks` blocks of P rows (weight_blocks()), placed like passes of their own.
  // 1: unsplit.
  int64_t chunks = 1;
  int64_t chunk_groups = 0;  // input groups per chunk, as the COMPUTE counts them
  int64_t run_groups = 0;    // input groups of a pass, as the COMPUTE counts them
  int64_t taps = 0;          // weight words per input group (kernel_h * kernel_w as run)
  // Where a split op keeps its partial sums when it runs tiled: after the results in
  // each output buffer (results stored), else in a bank of their own.
  bool spill_in_out_buffer = false;
  // A global pool: its weight words are all equal, so every chunk reads the first words
  // of one block per weight pass (loaded once, like an unsplit pass's).
  bool chunks_share_weights = false;
  // Each chunk's input is loaded on its own into the input buffers in turn (a tiled op):
  // a global pool whose map (one group) exceeds an input buffer, in chunks of whole rows;
  // a dense convolution none of whose tiles fits the buffers, its chunk's groups.
  bool chunk_input = false;
  // Blocks of P rows of per_pass words in the weights image.
  int64_t weight_blocks() const { return weight_passes * (chunks_share_weights ? 1 : chunks); }
  // The input groups chunk `j` of a pass reads.
  int64_t chunk_size(int64_t j) const {
    return std::min(chunk_groups, run_groups - j * chunk_groups);
  }
  // The packed rows pass `pass`'s CONV runs (0: the dense schedule).
  int64_t packed_rows(int64_t pass) const {
    if (!packed) return 0;
    return std::max(1,
                    packing[static_cast<size_t>(pass < weight_passes ? pass : 0)].packed_cycles());
  }
};

struct PoolPlan : PlanBase, MapInput {};

struct FcPlan : PlanBase {
  FeatureOrder order;        // which feature each lane of an input word holds
  int64_t fc_words = 0;      // N-byte words per neuron (= features per image / N, padded)
  int64_t tile = 0;          // neurons per tile
  int64_t feat_base = 0;     // PE cache address of the features
  uint64_t weights_ext = 0;  // offset in the weights region
  // Split neurons (docs/compiler.md, "Split passes"): a neuron's weights longer than a
  // bank, or features that do not fit the PE caches, run per tile as `chunks` COMPUTEs
  // over words [j * chunk_words, (j + 1) * chunk_words) of each neuron (the last may be
  // shorter), the int32 partial sums in a spill bank (4 words per neuron). 1: unsplit.
  int64_t chunks = 1;
  int64_t chunk_words = 0;
  // The features do not stay in the PE caches: each chunk's words are loaded before its
  // COMPUTE (at feat_base, chunk_words per PE) from the network input, or from the
  // previous op's map, stored for it (FeatureOrder::row_major).
  bool features_streamed = false;
  int64_t chunk_size(int64_t j) const {
    return chunks == 1 ? fc_words : std::min(chunk_words, fc_words - j * chunk_words);
  }
  // The last layer's results when they exceed a bank: tile i's at ((i mod slots) * tile)
  // of the output bank, stored from there (0: neuron o at word o, all of them).
  int64_t result_slots = 0;
  int64_t result_base(int64_t o0) const {
    return result_slots > 0 ? (o0 / tile % result_slots) * tile : o0;
  }
  // The PE-cache words its features take.
  int64_t feature_words() const { return features_streamed ? chunk_words : fc_words; }
};

using OpPlan = std::variant<ConvPlan, FcPlan, PoolPlan>;

inline const PlanBase& base(const OpPlan& q) {
  return std::visit([](const auto& p) -> const PlanBase& { return p; }, q);
}
// A CONV's or POOL's input map, nullptr for an FC.
inline const MapInput* map_input(const OpPlan& q) {
  if (const auto* c = std::get_if<ConvPlan>(&q)) return c;
  if (const auto* p = std::get_if<PoolPlan>(&q)) return p;
  return nullptr;
}

// What plan() returns.
struct Plan {
  std::vector<OpPlan> ops;       // per op, the kind of its op
  std::vector<uint8_t> params;   // params region
  std::vector<uint8_t> weights;  // weights region
  bool params_resident = false;
  bool weights_resident = false;
  // Activation tables (after the parameter entries in the params region):
  // distinct tables, resident (every one loaded once into its own slot) when
  // they fit the target's act_tables, else loaded before each use into slots
  // taken in turn; table_slots is what the program uses (CONFIG act_tables).
  int tables = 0;
  bool tables_resident = true;
  int table_slots = 0;
  uint64_t tables_ext = 0;
  int64_t weight_words = 0;  // PE-cache words per PE below the FC features
  // The words every mul op's vector is written to, as DEPTHWISE weights (one word
  // per channel group and B - 1 more): below the FC features, above weight_words.
  int64_t mul_base = 0;
  InputLayout input_layout = InputLayout::kMap;
  int64_t input_words = 0;  // words per image in external memory
  std::vector<std::string> notes;
};

// ---- emitted instructions and what they touch ------------------------------------------------

enum class Space : uint8_t { kBank, kCache, kParam, kExt, kTable };  // kTable: table words

struct Span {
  Space space;
  int64_t id;
  int64_t begin, end;
};

struct Touch {
  Span span;
  bool write;
};

inline bool overlap(const Span& a, const Span& b) {
  return a.space == b.space && a.id == b.id && a.begin < b.end && b.begin < a.end;
}

using AnyInstr = std::variant<isa::LoadInstr, isa::ComputeInstr, isa::StoreInstr>;

// One instruction with what it touches: per acquisition step (consumer view),
// per release unit (producer view: spans written, or read for a STORE), and
// the per-memory bounding spans used to find conflicts.
struct Emit {
  AnyInstr instr;
  isa::Engine engine = isa::Engine::kLoad;
  std::string what;  // op name, for errors
  std::vector<std::vector<Touch>> steps;
  std::vector<std::vector<Span>> units;
  std::vector<Touch> bounds;
};

// emit()'s unit of program order: the loads a compute needs, the compute, the
// stores of its results (a job of resident loads has no compute).
struct Job {
  std::vector<Emit> loads;
  std::optional<Emit> compute;
  std::vector<Emit> stores;
};

// External addresses below are relative to the start of the data (params region).
struct DataLayout {
  uint64_t params = 0;
  uint64_t weights = 0;
  std::vector<uint64_t> inputs;
  std::vector<uint64_t> outputs;
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  // Maps kept in external memory between two ops ([row][group][col] words): per
  // image, per op, the address of its results (0 for an op whose results stay
  // on chip or are the output) and their size.
  std::vector<std::vector<uint64_t>> maps;
  std::vector<uint64_t> map_bytes;
  uint64_t end = 0;
};

// What emit() returns.
struct Emission {
  std::vector<Emit> emits;
  DataLayout data;
};

inline isa::Header& header_of(AnyInstr& v) {
  return std::visit([](auto& i) -> isa::Header& { return i.hdr; }, v);
}
inline const isa::Header& header_of(const AnyInstr& v) {
  return std::visit([](const auto& i) -> const isa::Header& { return i.hdr; }, v);
}

inline isa::Opcode opcode_of(const AnyInstr& v) {
  if (std::holds_alternative<isa::LoadInstr>(v)) return isa::Opcode::kLoad;
  if (std::holds_alternative<isa::StoreInstr>(v)) return isa::Opcode::kStore;
  return isa::Opcode::kCompute;
}

// What an instruction touches (docs/compiler.md, "Dependency emission"): an Emit
// per LOAD, COMPUTE and STORE, for a target's P and N.
class Emitter {
 public:
  explicit Emitter(const HwTarget& t)
      : n_(t.lanes), p_(t.pes), dw_words_(t.depthwise_weight_words()) {}
  Emit load(const isa::LoadInstr& l, const std::string& what) const;
  Emit store(const isa::StoreInstr& s, const std::string& what) const;
  Emit compute(const isa::ComputeInstr& c, const std::string& what) const;

 private:
  int64_t n_;
  int64_t p_;
  int64_t dw_words_;  // DEPTHWISE weight words per PE (B)
};

// True when the two instructions touch a common word and one of them writes it.
bool conflict(const Emit& a, const Emit& b);

}  // namespace strata::compiler
