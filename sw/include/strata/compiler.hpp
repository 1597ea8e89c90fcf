// SPDX-License-Identifier: Apache-2.0
// The Strata compiler (docs/compiler.md): turns a validated network into a
// program for one hardware target — the instructions of docs/isa.md and the
// external memory image they run on (instructions, parameters, weights, and
// space for the inputs and outputs) — plus the description of where each
// image's input goes and its output comes from, so that write_input() and
// read_output() are all a backend (ISA simulator, RTL bench, board) needs.
//
// Lowering in brief: conv/fc + a following max/avg pool + clamps fuse into one
// COMPUTE per pass; standalone pools and clamps become POOL computes; depthwise
// layers are DEPTHWISE computes, one per channel group (grouped CONVs where the
// window generator cannot run them); flatten is free; the first convolution's input is reordered on
// the host when that saves beats; convolutions run per image, fully-connected layers in batch mode
// (PE i = image i); every instruction carries the dependency counts of both modes (completion and
// fine-grained). What the target cannot run is a strata::Error naming the layer and the limit.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/file_io.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata {

// First-layer input reordering (docs/architecture.md): each word holds
// kernel x C horizontally adjacent taps and the layer runs as a kernel x 1
// convolution. kAuto reorders when that needs fewer PE-array beats.
enum class Reorder { kAuto, kNever, kAlways };

struct CompileOptions {
  int batch = 1;  // images per run, 1..P
  Reorder reorder = Reorder::kAuto;
};

// A named, 64-byte aligned region of the external memory image.
struct MemRegion {
  std::string name;  // "instructions", "params", "weights", "input0", ..., "output0" / "output",
                     // "output<i>:<layer>" (image i of an output other than the last
                     // layer, OutputLayout::kRowMap)
  uint64_t offset = 0;
  uint64_t size = 0;
};

// How the input images sit in external memory.
enum class InputLayout {
  kMap,        // [row][group][col] words, lane = channel % N (channels >= C zero)
  kReordered,  // [row][group][out col] words: lane l of group g holds channel c of input
               // column x*stride - pad + kx where g*N + l = kx*C + c (zero outside)
  kFeatures,   // the C*H*W input flattened, N per word (the first layer is fully connected)
};

struct InputPlacement {
  InputLayout layout = InputLayout::kMap;
  Shape shape;                       // network input [C][H][W]
  std::vector<uint64_t> image_addr;  // byte address of each image's region
  int64_t groups = 0;                // words per pixel (kFeatures: words per image)
  int64_t rows = 0;                  // kMap / kReordered: rows of the map
  int64_t cols = 0;                  // kMap: W; kReordered: output width of the first layer
  int kernel = 0;                    // kReordered: first layer's kernel, stride, left pad
  int stride = 0;
  int pad = 0;
};

// How the outputs come back.
enum class OutputLayout {
  kMap,      // per image, [group][row][col] words of the last layer's map
  kNeurons,  // one region for the batch: neuron o of image i at byte o * N + i
  kRowMap,   // per image, [row][group][col] words: a network output other than the
             // last layer's, stored as a map kept in external memory
};

// Where one network output comes back (Program::outputs, in Network::outputs order).
struct OutputPlacement {
  std::string layer;  // the output layer's name
  OutputLayout layout = OutputLayout::kMap;
  Shape shape;                       // the output's shape (after any flatten)
  Shape map_shape;                   // [C][H][W] as computed (before flatten)
  std::vector<uint64_t> image_addr;  // kMap, kRowMap: per image; kNeurons: one address
  int64_t groups = 0;                // kMap, kRowMap: channel groups
};

// One fused operation of the program, for listings and reports.
struct CompiledOp {
  std::string name;            // "conv1+pool1+relu1"
  std::string kind;            // "conv", "fc", "pool"; "depthwise" (COMPUTE DEPTHWISE, or
                               // grouped CONV where that cannot run it); grouped CONV ops:
                               // "add", "gpool" (docs/compiler.md, Graphs); "mul" (COMPUTE
                               // DEPTHWISE, docs/compiler.md, Channel-wise multiply)
  std::string detail;          // geometry and the decisions taken
  std::vector<size_t> layers;  // indices into Network::layers
  int tag = 0;                 // header tag of its instructions (first layer's index)
  int64_t macs = 0;            // useful MACs per image (padded taps excluded)
  // Where its input and output live ("on chip", "external", "PE caches") and
  // how it runs ("whole", or "B bands x S strips"; FC: "tiles of T neurons").
  std::string input_at, output_at, tiling;
  // A CONV op's weights in the image, as the PE caches take them: `weight_passes`
  // passes of P PEs x `pass_words` words of N bytes from image address
  // `weights_at` (the packing report, docs/sparsity.md). 0 passes: weights that
  // are not streamed against a dense schedule (FC, DEPTHWISE, global pooling).
  uint64_t weights_at = 0;
  int64_t pass_words = 0, weight_passes = 0;
  // A sparse target's packed op: the figures of its packing (op_packing).
  bool packed = false;
  int64_t packed_rows = 0, dense_rows = 0, slots = 0, zero_slots = 0;
};

struct Program {
  HwTarget target;
  std::string network;
  int batch = 1;
  std::vector<isa::Instruction> instructions;  // CONFIG first, END last
  std::vector<uint8_t> image;                  // external memory: instructions at 0, ...
  std::vector<MemRegion> regions;
  InputPlacement input;
  std::vector<OutputPlacement> outputs;  // one per network output, in Network::outputs order
  std::vector<CompiledOp> ops;
  std::vector<std::string> notes;            // lowering decisions, one line each
  std::array<int64_t, isa::kEdges> units{};  // dependency units per edge (released = acquired)

  const MemRegion& region(const std::string& name) const;  // throws strata::Error if absent
};

// Compiles `net` (parameters loaded) for `target`. Throws strata::Error naming
// the layer and the limit for anything the target cannot run.
Program compile(const Network& net, const HwTarget& target, const CompileOptions& options = {});

// Writes image `image` (0..batch-1), a [C][H][W] tensor of the network's input
// shape, into `memory` (a copy of program.image or a device's memory).
void write_input(const Program& program, std::vector<uint8_t>& memory, int image,
                 const Tensor<int8_t>& input);

// Reads image `image`'s output `output` (index into Program::outputs; that
// output's shape) from `memory`.
Tensor<int8_t> read_output(const Program& program, const std::vector<uint8_t>& memory, int image,
                           size_t output = 0);

// The rows a sparse build runs for each op's weights (docs/sparsity.md). A
// dense program: every weight pass of the op packed with pack_sparse()
// (intra-tile moves, inter-tile moves to a neighbouring tile) and proven exact
// with check_packed(). A sparse program: the packing it runs (an op it runs
// dense has packed rows = dense rows). Rows are PE-array beats per output
// pixel, summed over the passes (at least one per pass: an all-zero pass still
// opens and closes its accumulation); ops without packable weights report 0
// dense rows.
struct OpPacking {
  int64_t slots = 0, zero_slots = 0;  // weight bytes of its passes (padding lanes too), zeros
  int64_t dense_rows = 0, packed_rows = 0;
};
std::vector<OpPacking> op_packing(const Program& program);

// Work of one op of a program, summed over its instructions (by header tag):
// what `strata bench` reports next to the RTL's cycles.
struct OpWork {
  int64_t beats = 0;        // PE-array beats as the hardware walks them (padded taps skipped)
  int64_t dense_beats = 0;  // beats a walk over every tap, padded ones included, would take
  int64_t load_bytes = 0;   // external bytes its LOADs read
  int64_t store_bytes = 0;  // external bytes its STOREs write
  int64_t computes = 0;     // its COMPUTE instructions
};

// One entry per program.ops (same order), for the whole program (all `batch`
// images). Instructions whose tag is no op's (CONFIG, END) count nowhere.
std::vector<OpWork> op_work(const Program& program);

// Human-readable listing: target, regions, input/output placement, ops,
// notes and every instruction (index, address, disassembly).
std::string listing(const Program& program);

// Writes program.image (the external memory image, instructions at byte 0) to
// `image_path` and, unless `listing_path` is empty, listing(program) to it:
// both or neither (file_io.hpp). Throws strata::Error naming the file when it
// cannot be written.
void save_program(const Program& program, const std::string& image_path,
                  const std::string& listing_path = "");
// The same files added to `out`, to be committed with others.
void add_program(OutputFiles& out, const Program& program, const std::string& image_path,
                 const std::string& listing_path = "");

}  // namespace strata
