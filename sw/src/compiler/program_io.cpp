// SPDX-License-Identifier: Apache-2.0
// The program's I/O and reports (compiler.hpp): writing an image's input and
// reading its output, the work per op, the listing, saving a program.
#include <fmt/format.h>

#include <algorithm>

#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/file_io.hpp"
#include "strata/sparse_pack.hpp"

namespace strata {
namespace {

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, "][")); }

void check_image(const Program& prog, int image, size_t memory_size) {
  if (image < 0 || image >= prog.batch) {
    throw Error(fmt::format("image {} outside the program's batch 0..{}", image, prog.batch - 1));
  }
  if (memory_size < prog.image.size()) {
    throw Error(fmt::format("memory of {} bytes is smaller than the program's image ({} bytes)",
                            memory_size, prog.image.size()));
  }
}

}  // namespace

void write_input(const Program& prog, std::vector<uint8_t>& memory, int image,
                 const Tensor<int8_t>& input) {
  check_image(prog, image, memory.size());
  const InputPlacement& in = prog.input;
  if (input.shape() != in.shape) {
    throw Error(fmt::format("input has shape {}, the program expects {}", shape_text(input.shape()),
                            shape_text(in.shape)));
  }
  const int64_t n = prog.target.lanes;
  const int64_t c_count = in.shape[0], h = in.shape[1], w = in.shape[2];
  uint8_t* base = &memory[in.image_addr[static_cast<size_t>(image)]];
  switch (in.layout) {
    case InputLayout::kFeatures:
      std::fill_n(base, in.groups * n, uint8_t{0});
      for (int64_t f = 0; f < input.size(); ++f) base[f] = static_cast<uint8_t>(input[f]);
      return;
    case InputLayout::kMap:
      for (int64_t g = 0; g < in.groups; ++g) {
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) {
            uint8_t* word = base + ((y * in.groups + g) * w + x) * n;
            for (int64_t lane = 0; lane < n; ++lane) {
              const int64_t c = g * n + lane;
              word[lane] = c < c_count ? static_cast<uint8_t>(input(c, y, x)) : 0;
            }
          }
        }
      }
      return;
    case InputLayout::kReordered:
      for (int64_t g = 0; g < in.groups; ++g) {
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < in.cols; ++x) {
            uint8_t* word = base + ((y * in.groups + g) * in.cols + x) * n;
            for (int64_t lane = 0; lane < n; ++lane) {
              const int64_t idx = g * n + lane;
              const int64_t kx = idx / c_count, c = idx % c_count;
              const int64_t ix = x * in.stride - in.pad + kx;
              const bool inside = kx < in.kernel && ix >= 0 && ix < w;
              word[lane] = inside ? static_cast<uint8_t>(input(c, y, ix)) : 0;
            }
          }
        }
      }
      return;
  }
}

Tensor<int8_t> read_output(const Program& prog, const std::vector<uint8_t>& memory, int image,
                           size_t output) {
  check_image(prog, image, memory.size());
  if (output >= prog.outputs.size()) {
    throw Error(fmt::format("output {} outside the program's outputs 0..{}", output,
                            prog.outputs.size() - 1));
  }
  const OutputPlacement& out = prog.outputs[output];
  const int64_t n = prog.target.lanes;
  const int64_t c_count = out.map_shape[0], h = out.map_shape[1], w = out.map_shape[2];
  Tensor<int8_t> map({c_count, h, w});
  if (out.layout == OutputLayout::kNeurons) {
    const uint8_t* base = &memory[out.image_addr[0]];
    for (int64_t o = 0; o < c_count; ++o) map[o] = static_cast<int8_t>(base[o * n + image]);
  } else {
    const uint8_t* base = &memory[out.image_addr[static_cast<size_t>(image)]];
    const bool rows = out.layout == OutputLayout::kRowMap;
    for (int64_t c = 0; c < c_count; ++c) {
      const int64_t g = c / n, lane = c % n;
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const int64_t word = rows ? (y * out.groups + g) * w + x : (g * h + y) * w + x;
          map(c, y, x) = static_cast<int8_t>(base[word * n + lane]);
        }
      }
    }
  }
  return map.reshaped(out.shape);
}

void add_program(OutputFiles& out, const Program& prog, const std::string& image_path,
                 const std::string& listing_path) {
  out.add(image_path, prog.image);
  if (!listing_path.empty()) out.add(listing_path, listing(prog));
}

void save_program(const Program& prog, const std::string& image_path,
                  const std::string& listing_path) {
  OutputFiles out;
  add_program(out, prog, image_path, listing_path);
  out.commit();
}

std::vector<OpPacking> op_packing(const Program& prog) {
  const int p = prog.target.pes, n = prog.target.lanes;
  std::vector<OpPacking> out(prog.ops.size());
  for (size_t k = 0; k < prog.ops.size(); ++k) {
    const CompiledOp& op = prog.ops[k];
    OpPacking& r = out[k];
    if (op.packed) {  // a sparse program: the packing it runs
      r = {op.slots, op.zero_slots, op.dense_rows, op.packed_rows};
      continue;
    }
    const int words = static_cast<int>(op.pass_words);
    for (int64_t pass = 0; pass < op.weight_passes; ++pass) {
      // Pass `pass`: P consecutive blocks of `words` words, PE by PE (plan.cpp).
      const uint64_t at = op.weights_at + static_cast<uint64_t>(pass * p * words * n);
      DenseSchedule dense(p, words, n);
      for (int pe = 0; pe < p; ++pe) {
        for (int t = 0; t < words; ++t) {
          for (int lane = 0; lane < n; ++lane) {
            const int8_t v = static_cast<int8_t>(
                prog.image.at(at + static_cast<uint64_t>((pe * words + t) * n + lane)));
            dense.at(pe, t, lane) = v;
            r.zero_slots += v == 0;
          }
        }
      }
      r.slots += int64_t{p} * words * n;
      r.dense_rows += words;
      if (prog.target.sparse) {  // a sparse program runs this op dense: packing did not pay
        r.packed_rows += words;
        continue;
      }
      const PackedSchedule packed = pack_sparse(dense);
      check_packed(dense, packed);
      // A pass whose weights are all zero still takes one beat per output
      // pixel: the beat that opens and closes its accumulation (the bias).
      r.packed_rows += std::max(1, packed.packed_cycles());
    }
  }
  return out;
}

std::vector<OpWork> op_work(const Program& prog) {
  std::vector<OpWork> work(prog.ops.size());
  const int64_t n = prog.target.lanes;
  const auto op_of = [&](int64_t tag) -> OpWork* {
    for (size_t k = 0; k < prog.ops.size(); ++k) {
      if (prog.ops[k].tag == tag) return &work[k];
    }
    return nullptr;
  };
  // Taps of a window row (or column) inside the input, p the padding before it: what the walker
  // visits.
  const auto inside = [](int64_t o, int64_t in, int64_t k, int64_t s, int64_t p) {
    const int64_t y0 = o * s - p;
    return std::max<int64_t>(0, std::min(k, in - y0) - std::max<int64_t>(0, -y0));
  };
  // Sparse programs: the dense row each schedule entry starts at, as the
  // LOAD CONTROLs into the schedule (dst_id = P) leave it.
  std::vector<isa::ScheduleEntry> schedule;  // per cache address
  if (prog.target.sparse) schedule.resize(static_cast<size_t>(prog.target.pe_cache_depth));
  for (const isa::Instruction& in : prog.instructions) {
    const auto op = static_cast<isa::Opcode>(in.opcode_value());
    OpWork* w = op_of(isa::decode_header(in).tag);
    if (w == nullptr) continue;
    if (op == isa::Opcode::kLoad) {
      const isa::LoadInstr l = isa::decode_load(in);
      w->load_bytes += l.rows * l.row_words * n;
      if (l.dst_kind == isa::LoadDst::kControl && l.dst_id == prog.target.pes) {
        for (int64_t r = 0; r < l.rows; ++r) {
          for (int64_t k = 0; k < l.row_words; ++k) {
            schedule.at(static_cast<size_t>(l.dst_addr + r * l.dst_row_stride + k)) =
                isa::schedule_entry(
                    &prog.image.at(static_cast<size_t>(l.ext_addr + r * l.ext_row_stride + k * n)));
          }
        }
      }
    } else if (op == isa::Opcode::kStore) {
      const isa::StoreInstr st = isa::decode_store(in);
      w->store_bytes += st.rows * st.row_words * n;
    } else if (op == isa::Opcode::kCompute) {
      const isa::ComputeInstr c = isa::decode_compute(in);
      ++w->computes;
      if (c.mode == isa::ComputeMode::kConv && c.packed_rows != 0) {
        PackedConvWalk walk{c.in_h,
                            c.in_w,
                            c.out_h,
                            c.out_w,
                            c.in_groups,
                            static_cast<int>(c.kernel_h),
                            static_cast<int>(c.kernel_w),
                            static_cast<int>(c.stride_h),
                            static_cast<int>(c.stride_w),
                            static_cast<int>(c.pad_top),
                            static_cast<int>(c.pad_left)};
        std::vector<int64_t> bases;
        for (int64_t k = 0; k < c.packed_rows; ++k) {
          const isa::ScheduleEntry& e = schedule.at(static_cast<size_t>(c.cache_base + k));
          bases.push_back((e.ky * c.kernel_w + e.kx) * c.in_groups + e.g);
        }
        w->beats += packed_conv_beats(walk, bases);
        w->dense_beats += c.out_h * c.out_w * c.kernel_h * c.kernel_w * c.in_groups;
      } else if (c.mode == isa::ComputeMode::kConv) {
        int64_t rows = 0, cols = 0;
        for (int64_t oy = 0; oy < c.out_h; ++oy) {
          rows += inside(oy, c.in_h, c.kernel_h, c.stride_h, c.pad_top);
        }
        for (int64_t ox = 0; ox < c.out_w; ++ox) {
          cols += inside(ox, c.in_w, c.kernel_w, c.stride_w, c.pad_left);
        }
        w->beats += rows * cols * c.in_groups;
        w->dense_beats += c.out_h * c.out_w * c.kernel_h * c.kernel_w * c.in_groups;
      } else if (c.mode == isa::ComputeMode::kFc) {
        w->beats += c.out_h * c.in_groups;
        w->dense_beats += c.out_h * c.in_groups;
      } else if (c.mode == isa::ComputeMode::kDepthwise) {
        // B beats per window, padded taps included (they meet a zero operand).
        const int64_t b = c.pool_out_h * c.pool_out_w * prog.target.depthwise_weight_words();
        w->beats += b;
        w->dense_beats += b;
      }
    }
  }
  return work;
}

std::string listing(const Program& prog) {
  const HwTarget& t = prog.target;
  std::string s;
  s += fmt::format("# Strata program for network '{}', batch {}\n", prog.network, prog.batch);
  s += fmt::format(
      "# target '{}': P {} N {}, {} banks x {} words, PE cache {} words, {} "
      "parameter channels, AXI {} bits\n",
      t.name, t.pes, t.lanes, t.banks, t.bank_depth, t.pe_cache_depth, t.param_depth,
      t.axi_data_width);
  s += "#\n# memory image regions:\n";
  for (const MemRegion& r : prog.regions) {
    s += fmt::format("#   {:<14} 0x{:08x}  {:>9} bytes\n", r.name, r.offset, r.size);
  }
  const char* layouts[] = {"map [row][group][col]", "reordered [row][group][out col]",
                           "flattened features"};
  s += fmt::format("# input {}: {}, {} word{} per pixel\n", shape_text(prog.input.shape),
                   layouts[static_cast<int>(prog.input.layout)], prog.input.groups,
                   prog.input.groups == 1 ? "" : "s");
  const char* out_layouts[] = {"map [group][row][col] per image",
                               "neuron o of image i at byte o*N + i",
                               "map [row][group][col] per image (kept in external memory)"};
  for (size_t j = 0; j < prog.outputs.size(); ++j) {
    const OutputPlacement& o = prog.outputs[j];
    const std::string which =
        prog.outputs.size() == 1 ? std::string() : fmt::format(" {} '{}'", j, o.layer);
    s += fmt::format("# output{} {}: {}\n", which, shape_text(o.shape),
                     out_layouts[static_cast<int>(o.layout)]);
  }
  s += "#\n# ops (tag = first layer index):\n";
  for (const CompiledOp& op : prog.ops) {
    s += fmt::format("#   tag {:>3}  {:<24} {}\n", op.tag, op.name, op.detail);
  }
  // Where each op's maps live, how it runs and the external bytes it moves.
  const std::vector<OpWork> work = op_work(prog);
  s += fmt::format("#\n# placement ({} image{}):\n", prog.batch, prog.batch == 1 ? "" : "s");
  s += fmt::format("#   {:<24} {:<10} {:<10} {:<22} {:>12} {:>12}\n", "op", "input", "output",
                   "runs", "load B", "store B");
  for (size_t k = 0; k < prog.ops.size(); ++k) {
    const CompiledOp& op = prog.ops[k];
    s += fmt::format("#   {:<24} {:<10} {:<10} {:<22} {:>12} {:>12}\n", op.name, op.input_at,
                     op.output_at, op.tiling, work[k].load_bytes, work[k].store_bytes);
  }
  // A dense program: what a sparse build would run; a sparse one: what it runs.
  const std::vector<OpPacking> packing = op_packing(prog);
  s += fmt::format(
      "#\n# sparse packing of the weights ({}; rows: PE-array beats per output "
      "pixel, all passes):\n",
      prog.target.sparse ? "as this program runs them"
                         : "as a sparse build would "
                           "run them");
  s += fmt::format("#   {:<24} {:>11} {:>11} {:>11} {:>9}\n", "op", "zero slots", "dense rows",
                   "packed rows", "speed-up");
  for (size_t k = 0; k < prog.ops.size(); ++k) {
    const OpPacking& q = packing[k];
    if (q.dense_rows == 0) {
      s += fmt::format("#   {:<24} {:>11} {:>11} {:>11} {:>9}\n", prog.ops[k].name, "-", "-", "-",
                       "-");
      continue;
    }
    s += fmt::format("#   {:<24} {:>10.1f}% {:>11} {:>11} {:>8.2f}x\n", prog.ops[k].name,
                     100.0 * static_cast<double>(q.zero_slots) / static_cast<double>(q.slots),
                     q.dense_rows, q.packed_rows,
                     static_cast<double>(q.dense_rows) / static_cast<double>(q.packed_rows));
  }
  if (!prog.notes.empty()) {
    s += "#\n# notes:\n";
    for (const std::string& note : prog.notes) s += "#   " + note + "\n";
  }
  s += fmt::format("#\n# dependency units: L2C {}, C2S {}, C2L {}, S2C {}, S2L {}\n#\n",
                   prog.units[0], prog.units[1], prog.units[2], prog.units[3], prog.units[4]);
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    s += fmt::format("{:>5}  0x{:06x}  {}\n", i, i * isa::kInstrBytes,
                     isa::disassemble(prog.instructions[i]));
  }
  return s;
}

}  // namespace strata
