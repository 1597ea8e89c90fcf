// SPDX-License-Identifier: Apache-2.0
// Cascade partitioning (strata/cascade.hpp, docs/cascade.md): the network's
// ops, the cuts allowed between them, the partition with the smallest
// largest stage, each stage compiled on its own, and the links: the stage
// before a cut sends its output STOREs as cascade transfers, the stage after
// it takes each transfer with one LOAD CASCADE into the bank words its own
// input LOADs would have filled.
#include "strata/cascade.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "strata/cycle_model.hpp"
#include "strata/error.hpp"

namespace strata {

namespace {

constexpr int kMaxInstances = 4;

bool is_ext_load(const isa::Instruction& in) {
  return in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kLoad) &&
         isa::decode_load(in).src_kind == isa::LoadSrc::kExt;
}
bool is_ext_store(const isa::Instruction& in) {
  return in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kStore) &&
         isa::decode_store(in).dst_kind == isa::StoreDst::kExt;
}

// A map word: channel group g, row y, column x.
struct MapWord {
  int64_t g = 0, y = 0, x = 0;
  auto operator<=>(const MapWord&) const = default;
};

// A bank word.
struct BankWord {
  int64_t bank = 0, addr = 0;
};

// The instructions of a program moved to new ones: the data regions after the
// instructions shift by the change in their size, and every external address
// with them.
void relocate(Program& p, std::vector<isa::Instruction> instructions) {
  const uint64_t old_end = p.instructions.size() * isa::kInstrBytes;
  const uint64_t new_end = instructions.size() * isa::kInstrBytes;
  const auto moved = [&](uint64_t a) { return a >= old_end ? a - old_end + new_end : a; };
  for (isa::Instruction& in : instructions) {
    if (is_ext_load(in)) {
      isa::LoadInstr l = isa::decode_load(in);
      l.ext_addr = static_cast<int64_t>(moved(static_cast<uint64_t>(l.ext_addr)));
      in = isa::encode(l);
    } else if (is_ext_store(in)) {
      isa::StoreInstr s = isa::decode_store(in);
      s.ext_addr = static_cast<int64_t>(moved(static_cast<uint64_t>(s.ext_addr)));
      in = isa::encode(s);
    }
  }
  std::vector<uint8_t> image(new_end + (p.image.size() - old_end), 0);
  std::copy(p.image.begin() + static_cast<std::ptrdiff_t>(old_end), p.image.end(),
            image.begin() + static_cast<std::ptrdiff_t>(new_end));
  for (size_t i = 0; i < instructions.size(); ++i) {
    instructions[i].to_bytes(&image[i * isa::kInstrBytes]);
  }
  for (MemRegion& r : p.regions) {
    r.offset = r.name == "instructions" ? 0 : moved(r.offset);
    if (r.name == "instructions") r.size = new_end;
  }
  for (uint64_t& a : p.input.image_addr) a = moved(a);
  for (OutputPlacement& o : p.outputs) {
    for (uint64_t& a : o.image_addr) a = moved(a);
  }
  for (CompiledOp& op : p.ops) {
    if (op.weight_passes > 0) op.weights_at = moved(op.weights_at);
  }
  p.instructions = std::move(instructions);
  p.image = std::move(image);
}

// Links the stage before a cut (`from`) to the stage after it (`to`): see the
// file header. Throws strata::Error (naming the reason) when the cut map does
// not cross as whole-word transfers.
int link_stages(Program& from, Program& to, int boundary, const std::string& where) {
  const int64_t n = from.target.lanes;
  const auto fail = [&](const std::string& why) {
    throw Error(fmt::format("cascade cut {}: {}", where, why));
  };
  if (from.outputs.front().layout != OutputLayout::kMap) {
    fail("the stage before it does not end in a map");
  }
  if (to.input.layout != InputLayout::kMap) {
    fail("the stage after it does not read a map (a fully-connected layer, or a reordered input)");
  }
  const Shape& ms = from.outputs.front().map_shape;
  const int64_t groups = from.outputs.front().groups, h = ms[1], w = ms[2];
  const auto is_output_store = [&](const isa::Instruction& in) {
    if (!is_ext_store(in)) return false;
    const auto a = static_cast<uint64_t>(isa::decode_store(in).ext_addr);
    const uint64_t base = from.outputs.front().image_addr.at(0);
    return a >= base && a < base + static_cast<uint64_t>(groups * h * w * n);
  };
  // The last output STORE's last row becomes a transfer of its own, which
  // carries that STORE's releases: the receiver's LOAD of it, one row, then
  // releases every input unit once the whole map is written (in fine-grained
  // mode a LOAD releases a unit per row, and the transfers' row order is not
  // the order the receiver's computes count their units in).
  {
    size_t last = from.instructions.size();
    for (size_t i = 0; i < from.instructions.size(); ++i) {
      if (is_output_store(from.instructions[i])) last = i;
    }
    if (last == from.instructions.size()) fail("the stage before it stores no output map");
    const isa::StoreInstr s = isa::decode_store(from.instructions[last]);
    if (s.rows > 1) {
      isa::StoreInstr head = s, tail = s;
      head.rows = s.rows - 1;
      head.hdr.rel0 = head.hdr.rel1 = 0;
      tail.rows = 1;
      tail.ext_addr = s.ext_addr + (s.rows - 1) * s.ext_row_stride;
      tail.src_addr = s.src_addr + (s.rows - 1) * s.src_row_stride;
      tail.hdr.acq0 = tail.hdr.acq1 = tail.hdr.acq0_first = tail.hdr.acq0_step = 0;
      std::vector<isa::Instruction> split = from.instructions;
      split[last] = isa::encode(head);
      split.insert(split.begin() + static_cast<std::ptrdiff_t>(last) + 1, isa::encode(tail));
      relocate(from, std::move(split));
    }
  }
  // The sender: which bank word holds each map word (its output STOREs).
  const uint64_t out_base = from.outputs.front().image_addr.at(0);
  const uint64_t out_end = out_base + static_cast<uint64_t>(groups * h * w * n);
  std::vector<size_t> stores;
  std::map<MapWord, BankWord> held;
  for (size_t i = 0; i < from.instructions.size(); ++i) {
    const isa::Instruction& in = from.instructions[i];
    if (!is_output_store(in)) continue;
    const isa::StoreInstr s = isa::decode_store(in);
    const auto first = static_cast<uint64_t>(s.ext_addr);
    stores.push_back(i);
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t j = 0; j < s.row_words; ++j) {
        const uint64_t a = first + static_cast<uint64_t>(r * s.ext_row_stride + j * n);
        if (a >= out_end) fail("an output STORE reaches past the output map");
        const int64_t word = static_cast<int64_t>((a - out_base) / static_cast<uint64_t>(n));
        held[{word / (h * w), word / w % h, word % w}] = {s.src_id,
                                                          s.src_addr + r * s.src_row_stride + j};
      }
    }
  }
  if (static_cast<int64_t>(held.size()) != groups * h * w) {
    fail("the output STOREs do not write every word of the map once");
  }
  // The receiver: where its input LOADs put each map word ([row][group][col]).
  const uint64_t in_base = to.input.image_addr.at(0);
  const int64_t in_groups = to.input.groups, in_w = to.input.cols;
  const uint64_t in_end = in_base + static_cast<uint64_t>(to.input.rows * in_groups * in_w * n);
  if (in_groups != groups || to.input.rows != h || in_w != w) {
    fail("the two stages do not agree on the map's shape");
  }
  std::vector<size_t> loads;
  std::map<MapWord, BankWord> wanted;
  int64_t rel0 = 0;
  for (size_t i = 0; i < to.instructions.size(); ++i) {
    const isa::Instruction& in = to.instructions[i];
    if (!is_ext_load(in)) continue;
    const isa::LoadInstr l = isa::decode_load(in);
    const auto first = static_cast<uint64_t>(l.ext_addr);
    if (first < in_base || first >= in_end) continue;
    if (l.dst_kind != isa::LoadDst::kBank)
      fail("the stage after it loads its input elsewhere than a bank");
    if (l.hdr.acq0 != 0 || l.hdr.acq1 != 0) {
      fail("the stage after it loads its input in parts that wait for each other (bands)");
    }
    loads.push_back(i);
    rel0 += l.hdr.rel0;
    for (int64_t r = 0; r < l.rows; ++r) {
      for (int64_t j = 0; j < l.row_words; ++j) {
        const uint64_t a = first + static_cast<uint64_t>(r * l.ext_row_stride + j * n);
        const int64_t word = static_cast<int64_t>((a - in_base) / static_cast<uint64_t>(n));
        const MapWord mw{word / w % groups, word / (groups * w), word % w};
        if (!wanted.emplace(mw, BankWord{l.dst_id, l.dst_addr + r * l.dst_row_stride + j}).second) {
          fail("the stage after it loads a map word twice (its input does not fit on chip whole)");
        }
      }
    }
  }
  if (wanted.size() != held.size()) fail("the stage after it does not load the whole map");
  // One transfer per output STORE: the receiver's LOAD puts its rows where
  // its own input LOADs would have.
  std::vector<isa::Instruction> cascade_loads;
  int seq = 0;
  for (size_t i : stores) {
    isa::StoreInstr s = isa::decode_store(from.instructions[i]);
    isa::LoadInstr l;
    l.hdr.tag = isa::decode_header(to.instructions[loads.front()]).tag;
    l.src_kind = isa::LoadSrc::kCascade;
    l.rows = s.rows;
    l.row_words = s.row_words;
    for (int64_t r = 0; r < s.rows; ++r) {
      std::optional<BankWord> row_start;
      for (int64_t j = 0; j < s.row_words; ++j) {
        const uint64_t a = static_cast<uint64_t>(s.ext_addr + r * s.ext_row_stride + j * n);
        const int64_t word = static_cast<int64_t>((a - out_base) / static_cast<uint64_t>(n));
        const BankWord b = wanted.at({word / (h * w), word / w % h, word % w});
        if (!row_start) {
          row_start = b;
        } else if (b.bank != row_start->bank || b.addr != row_start->addr + j) {
          fail("a row the stage before it stores is not one run of bank words after the cut");
        }
      }
      if (r == 0) {
        l.dst_id = row_start->bank;
        l.dst_addr = row_start->addr;
      } else if (r == 1) {
        l.dst_row_stride = row_start->addr - l.dst_addr;
      }
      if (row_start->bank != l.dst_id || row_start->addr != l.dst_addr + r * l.dst_row_stride ||
          l.dst_row_stride < 0) {
        fail("the rows of a STORE of the stage before it land at no constant stride after the cut");
      }
    }
    const int link_id = boundary * 4096 + (seq++ % 4096);
    l.link_id = link_id;
    s.dst_kind = isa::StoreDst::kCascade;
    s.link_id = link_id;
    s.ext_addr = 0;
    s.ext_row_stride = 0;
    from.instructions[i] = isa::encode(s);
    cascade_loads.push_back(isa::encode(l));
  }
  // The input's L2C units leave with the last transfer.
  {
    isa::LoadInstr last = isa::decode_load(cascade_loads.back());
    last.hdr.rel0 = rel0;
    cascade_loads.back() = isa::encode(last);
  }
  std::vector<isa::Instruction> receiver;
  for (size_t i = 0; i < to.instructions.size(); ++i) {
    if (i == loads.front()) {
      receiver.insert(receiver.end(), cascade_loads.begin(), cascade_loads.end());
    }
    if (std::find(loads.begin(), loads.end(), i) == loads.end()) {
      receiver.push_back(to.instructions[i]);
    }
  }
  relocate(to, std::move(receiver));
  for (size_t i = 0; i < from.instructions.size(); ++i) {
    from.instructions[i].to_bytes(&from.image[i * isa::kInstrBytes]);
  }
  return static_cast<int>(stores.size());
}

// The layer span [first, end) of ops [a, b] of a whole-network program.
std::pair<size_t, size_t> layer_span(const Program& p, size_t a, size_t b) {
  size_t lo = std::numeric_limits<size_t>::max(), hi = 0;
  for (size_t o = a; o <= b; ++o) {
    for (size_t l : p.ops[o].layers) {
      lo = std::min(lo, l);
      hi = std::max(hi, l + 1);
    }
  }
  return {lo, hi};
}

}  // namespace

double ChainProgram::balance_bound() const {
  int64_t largest = 0;
  for (const ChainStage& s : stages) largest = std::max(largest, s.predicted_cycles);
  return largest > 0 ? static_cast<double>(predicted_total) / static_cast<double>(largest) : 1.0;
}

Network slice_network(const Network& net, size_t first, size_t end) {
  if (first >= end || end > net.layers.size()) {
    throw Error(fmt::format("layers [{}, {}) are not a part of network '{}' ({} layers)", first,
                            end, net.name, net.layers.size()));
  }
  Network s;
  s.name = fmt::format("{}[{}:{}]", net.name, first, end);
  s.source_file = net.source_file;
  s.weights_dir = net.weights_dir;
  s.input_shape = first == 0 ? net.input_shape : net.layers[first - 1].out_shape;
  for (size_t i = first; i < end; ++i) {
    Layer l = net.layers[i];
    for (int& src : l.inputs) {
      const int before = static_cast<int>(first) - 1;
      if (src == before || (first == 0 && src == kNetworkInput)) {
        src = kNetworkInput;
      } else if (src < before) {
        throw Error(fmt::format("layer '{}' reads '{}', before the cut at layer {}", l.name,
                                src == kNetworkInput ? "the input" : net.layers[src].name, first),
                    ErrorContext{net.source_file, l.line, l.name});
      } else {
        src -= static_cast<int>(first);
      }
    }
    s.layers.push_back(std::move(l));
  }
  for (size_t i = end; i < net.layers.size(); ++i) {
    for (int src : net.layers[i].inputs) {
      if (src < static_cast<int>(end) - 1) {
        throw Error(
            fmt::format("layer '{}' reads '{}', before the cut at layer {}", net.layers[i].name,
                        src == kNetworkInput ? "the input" : net.layers[src].name, end),
            ErrorContext{net.source_file, net.layers[i].line, net.layers[i].name});
      }
    }
  }
  return s;
}

ChainProgram compile_chain(const Network& net, const HwTarget& target, int instances,
                           const CycleModelOptions& cycles) {
  if (instances < 1 || instances > kMaxInstances) {
    throw Error(fmt::format("--instances {} is outside 1..{}", instances, kMaxInstances));
  }
  if (net.output_count() > 1) {
    throw Error(fmt::format("network '{}' has {} outputs: a cascade chain carries one map from "
                            "stage to stage and out of the last, --instances {} asked",
                            net.name, net.output_count(), instances),
                ErrorContext{net.source_file, 0, ""});
  }
  ChainProgram chain;
  chain.network = net.name;
  const Program whole = compile(net, target);
  chain.predicted_total = predict_cycles(whole, cycles).cycles;
  const size_t ops = whole.ops.size();
  // Cuts after op o: one map crosses, and the two sides compile and link.
  for (size_t o = 0; o + 1 < ops && instances > 1; ++o) {
    const auto [lo, cut] = layer_span(whole, 0, o);
    const auto [cut2, hi] = layer_span(whole, o + 1, ops - 1);
    if (lo != 0 || cut2 != cut || hi != net.layers.size()) continue;
    try {
      Program a = compile(slice_network(net, 0, cut), target);
      CompileOptions after;
      after.reorder = Reorder::kNever;
      Program b = compile(slice_network(net, cut, net.layers.size()), target, after);
      link_stages(a, b, 1, "probe");
      chain.cut_candidates.push_back(o);
    } catch (const Error&) {
      // Not a cut: the reason is reported only if too few remain.
    }
  }
  if (static_cast<int>(chain.cut_candidates.size()) < instances - 1) {
    const size_t cuts = chain.cut_candidates.size();
    std::vector<std::string> after;
    for (size_t o : chain.cut_candidates) after.push_back(fmt::format("'{}'", whole.ops[o].name));
    const std::string where =
        cuts == 0 ? "cannot be cut between its ops, so it runs on one instance only"
                  : fmt::format("can be cut only after op{} {}, so on at most {} instances",
                                cuts == 1 ? "" : "s", fmt::join(after, ", "), cuts + 1);
    throw Error(
        fmt::format("network '{}' {}; --instances {} asked (docs/cascade.md, "
                    "Partitioning)",
                    net.name, where, instances));
  }
  // The predicted cycles of ops [a, b] run as a stage: the cycle model of
  // their layers compiled on their own (the map at a cut read from and
  // written to external memory, as the link's ends stand in for it).
  std::map<std::pair<size_t, size_t>, int64_t> stage_cycles;
  const auto stage_prediction = [&](size_t a, size_t b) {
    const auto it = stage_cycles.find({a, b});
    if (it != stage_cycles.end()) return it->second;
    const auto [lo, hi] = layer_span(whole, a, b);
    CompileOptions opts;
    if (a > 0) opts.reorder = Reorder::kNever;
    const int64_t c =
        predict_cycles(compile(slice_network(net, lo, hi), target, opts), cycles).cycles;
    stage_cycles[{a, b}] = c;
    return c;
  };
  // The partition whose largest stage is smallest: every choice of cuts.
  std::vector<size_t> best;
  int64_t best_max = std::numeric_limits<int64_t>::max();
  const size_t c = chain.cut_candidates.size();
  const int need = instances - 1;
  std::vector<size_t> pick(static_cast<size_t>(need));
  const auto stage_max = [&](const std::vector<size_t>& cuts) {
    int64_t m = 0;
    size_t first = 0;
    for (size_t k = 0; k <= cuts.size(); ++k) {
      const size_t last = k < cuts.size() ? cuts[k] : ops - 1;
      m = std::max(m, stage_prediction(first, last));
      first = last + 1;
    }
    return m;
  };
  const auto search = [&](auto&& self, size_t from, int depth) -> void {
    if (depth == need) {
      // A partition whose stage does not compile on its own is not one.
      try {
        const int64_t m = stage_max(pick);
        if (m < best_max) {
          best_max = m;
          best = pick;
        }
      } catch (const Error&) {
      }
      return;
    }
    for (size_t i = from; i < c; ++i) {
      pick[static_cast<size_t>(depth)] = chain.cut_candidates[i];
      self(self, i + 1, depth + 1);
    }
  };
  if (need > 0) {
    search(search, 0, 0);
    if (best.empty()) {
      throw Error(
          fmt::format("network '{}': no {} stages of its allowed cuts compile on their "
                      "own (docs/cascade.md, Partitioning)",
                      net.name, instances));
    }
  }
  // Compile the stages and link each cut.
  size_t first_op = 0;
  for (int k = 0; k < instances; ++k) {
    const size_t last_op = k + 1 < instances ? best[static_cast<size_t>(k)] : ops - 1;
    ChainStage st;
    const auto [lo, hi] = layer_span(whole, first_op, last_op);
    st.first_layer = lo;
    st.end_layer = hi;
    for (size_t o = first_op; o <= last_op; ++o) st.ops.push_back(o);
    st.predicted_cycles =
        instances > 1 ? stage_prediction(first_op, last_op) : chain.predicted_total;
    CompileOptions opts;
    if (k > 0) opts.reorder = Reorder::kNever;
    st.program = compile(slice_network(net, lo, hi), target, opts);
    chain.stages.push_back(std::move(st));
    first_op = last_op + 1;
  }
  for (int k = 0; k + 1 < instances; ++k) {
    ChainStage& a = chain.stages[static_cast<size_t>(k)];
    ChainStage& b = chain.stages[static_cast<size_t>(k + 1)];
    a.transfers_out =
        link_stages(a.program, b.program, k + 1,
                    fmt::format("after layer '{}'", net.layers[a.end_layer - 1].name));
  }
  return chain;
}

ChainSimResult simulate_chain(const ChainProgram& chain, const Tensor<int8_t>& input) {
  ChainSimResult res;
  std::vector<std::deque<CascadeTransfer>> links(chain.stages.size() + 1);
  std::vector<CascadeTransfer> sent;
  for (size_t k = 0; k < chain.stages.size(); ++k) {
    const Program& p = chain.stages[k].program;
    std::vector<uint8_t> memory = p.image;
    if (k == 0) write_input(p, memory, 0, input);
    SimOptions o;
    o.cascade_in = &links[k];
    sent.clear();
    o.cascade_out = &sent;
    res.stages.push_back(IsaSim(p.target).run(memory, o));
    links[k + 1].assign(sent.begin(), sent.end());
    if (!res.stages.back().ok()) {
      res.failed_stage = static_cast<int>(k);
      return res;
    }
    if (k + 1 == chain.stages.size()) res.output = read_output(p, memory, 0);
  }
  return res;
}

}  // namespace strata
