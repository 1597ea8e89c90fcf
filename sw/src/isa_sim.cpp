// SPDX-License-Identifier: Apache-2.0
// The ISA simulator (isa_sim.hpp): a functional model executed in program
// order that records, per instruction and per step, which on-chip words and
// external bytes it reads and writes; then a model of the three engines, their
// queues and the five semaphores replays those steps in both dependency modes
// to find deadlocks and unordered conflicting accesses (vector clocks).
#include "strata/isa_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <tuple>
#include <utility>

#include "strata/error.hpp"
#include "strata/numerics.hpp"
#include "strata/target_rules.hpp"
#include "strata/tensor.hpp"

namespace strata {
namespace {

using isa::ComputeDst;
using isa::ComputeMode;
using isa::Edge;
using isa::Engine;
using isa::Header;
using isa::Instruction;
using isa::LoadDst;
using isa::Opcode;
using isa::PoolOp;

// A stop of the run with an error code (caught in IsaSim::run).
struct Fault {
  SimError code;
  std::string message;
};

[[noreturn]] void fault(SimError code, std::string message) {
  throw Fault{code, std::move(message)};
}

void require(bool ok, SimError code, const std::string& message) {
  if (!ok) fault(code, message);
}

// The target rules (strata/target_rules.hpp): the first one `s` breaks stops the
// run with UNSUPPORTED and the table's message.
void require_rules(const RuleSubject& s, const HwTarget& t) {
  if (auto v = first_violation(s, t)) fault(SimError::kUnsupported, v->message);
}

// ---- access traces -------------------------------------------------------------------------

enum class Mem : uint8_t { kBank, kCache, kParam, kExt, kTable };

struct Access {
  Mem mem;
  uint32_t id;  // bank or PE index
  bool write;
  uint64_t begin;  // words (bank, cache, table), channels (param) or bytes (external)
  uint64_t end;
};

struct Step {
  std::vector<Access> accesses;
  int64_t releases = 0;  // result rows completed by this step (rel0 units in fine mode)
};

struct Trace {
  int64_t index = 0;
  Engine engine = Engine::kLoad;
  Opcode opcode = Opcode::kLoad;
  Header hdr;
  std::vector<Step> steps;
};

// The bytes of external memory one shadow entry of the dependency model
// stands for: the greatest common divisor of every external access's start
// and end, so every access covers whole entries and two accesses share an
// entry exactly when they share a byte, whatever the bus width and word size.
uint64_t external_granule(const std::vector<Trace>& traces) {
  uint64_t g = 0;
  for (const Trace& tr : traces) {
    for (const Step& step : tr.steps) {
      for (const Access& a : step.accesses) {
        if (a.mem == Mem::kExt) g = std::gcd(g, std::gcd(a.begin, a.end));
      }
    }
  }
  return g == 0 ? 1 : g;
}

// ---- the machine ---------------------------------------------------------------------------

struct Param {
  int32_t bias = 0;
  uint16_t mult = 0;
  uint8_t shift = 0;
};

// The last input row of pooling window row r (p: the padding above), clipped to the input.
int64_t pool_last_row(int64_t r, int64_t k, int64_t s, int64_t p, int64_t in) {
  return std::min(in - 1, r * s - p + k - 1);
}

// The pooling window of a COMPUTE instruction, padding per side.
PoolWindow pool_window_of(const isa::ComputeInstr& c) {
  return PoolWindow{static_cast<int>(c.pool_k), static_cast<int>(c.pool_s),
                    Pads{static_cast<int>(c.pool_pad_top), static_cast<int>(c.pool_pad_left),
                         static_cast<int>(c.pool_pad_bottom), static_cast<int>(c.pool_pad_right)},
                    c.pool_ceil};
}

class Machine {
 public:
  Machine(const HwTarget& t, std::vector<uint8_t>& mem, const SimOptions& o, SimResult& res)
      : t_(t),
        n_(t.lanes),
        p_(t.pes),
        mem_(mem),
        res_(res),
        banks_(static_cast<size_t>(t.banks) * t.bank_depth * t.lanes),
        caches_(static_cast<size_t>(t.pes) * t.pe_cache_depth * t.lanes),
        params_(static_cast<size_t>(t.param_depth)),
        bank_written_(static_cast<size_t>(t.banks) * t.bank_depth),
        cache_written_(static_cast<size_t>(t.pes) * t.pe_cache_depth),
        param_written_(static_cast<size_t>(t.param_depth)),
        tables_(static_cast<size_t>(t.table_words() * t.lanes)),
        table_written_(static_cast<size_t>(t.table_words())),
        cascade_in_(o.cascade_in),
        cascade_out_(o.cascade_out) {
    if (t.sparse) {  // the control planes and the schedule (docs/isa.md, LOAD CONTROL)
      controls_.assign(static_cast<size_t>(t.pes + 1) * t.pe_cache_depth * t.lanes, 0);
      control_written_.assign(static_cast<size_t>(t.pes + 1) * t.pe_cache_depth, false);
    }
    if (o.onchip_seed != 0) {
      std::mt19937_64 rng(o.onchip_seed);
      for (int8_t& b : banks_) b = static_cast<int8_t>(rng());
      for (int8_t& b : caches_) b = static_cast<int8_t>(rng());
      // The PE control planes; the schedule stays zero (tap (0, 0) of group 0,
      // an entry every packed CONV can run), so an instruction's legality does
      // not depend on the seed.
      const size_t planes = static_cast<size_t>(t.pes) * t.pe_cache_depth * t.lanes;
      for (size_t i = 0; i < std::min(planes, controls_.size()); ++i) {
        controls_[i] = static_cast<uint8_t>(rng());
      }
      for (Param& q : params_) {
        q.bias = static_cast<int32_t>(rng() % 2001) - 1000;
        q.mult = static_cast<uint16_t>(rng());
        q.shift = static_cast<uint8_t>(rng() % (kMaxShift + 1));
      }
      for (int8_t& b : tables_) b = static_cast<int8_t>(rng());
    }
  }

  void load(const Instruction& in, Trace& tr, InstrStats& st);
  void store(const Instruction& in, Trace& tr, InstrStats& st);
  void compute(const Instruction& in, Trace& tr, InstrStats& st);

 private:
  int8_t* bank_word(int64_t b, int64_t a) { return &banks_[(b * t_.bank_depth + a) * n_]; }
  int8_t* cache_word(int64_t p, int64_t a) { return &caches_[(p * t_.pe_cache_depth + a) * n_]; }
  // Sparse builds: PE p's control word at cache address a; p = P: the schedule entry.
  uint8_t* control_word(int64_t p, int64_t a) {
    return &controls_[(p * t_.pe_cache_depth + a) * n_];
  }

  void note_bank_read(int64_t b, int64_t a, int64_t words) {
    for (int64_t i = 0; i < words; ++i) {
      if (!bank_written_[b * t_.bank_depth + a + i]) ++res_.uninitialized_reads;
    }
  }
  void note_cache_read(int64_t p, int64_t a, int64_t words) {
    for (int64_t i = 0; i < words; ++i) {
      if (!cache_written_[p * t_.pe_cache_depth + a + i]) ++res_.uninitialized_reads;
    }
  }
  void mark_bank(int64_t b, int64_t a, int64_t words) {
    std::fill_n(bank_written_.begin() + b * t_.bank_depth + a, words, true);
  }
  void mark_cache(int64_t p, int64_t a, int64_t words) {
    std::fill_n(cache_written_.begin() + p * t_.pe_cache_depth + a, words, true);
  }

  // External range [addr, addr + bytes) of a transfer (aligned and addressable:
  // the target rules): present in the memory, else the AXI slave's DECERR.
  void check_ext(uint64_t addr, uint64_t stride, uint64_t rows, uint64_t row_bytes, bool write) {
    const uint64_t end = addr + (rows - 1) * stride + row_bytes;
    require(end <= mem_.size(), write ? SimError::kAxiWrite : SimError::kAxiRead,
            fmt::format("external range [0x{:x}, 0x{:x}) is past the end of memory (0x{:x} bytes): "
                        "the AXI slave answers DECERR",
                        addr, end, mem_.size()));
  }

  void execute_conv(const isa::ComputeInstr& c, Trace& tr, InstrStats& st);
  void execute_packed_conv(const isa::ComputeInstr& c, Trace& tr, InstrStats& st);
  void finish_conv(const isa::ComputeInstr& c, const Tensor<int8_t>& out,
                   const std::vector<int32_t>& raw, int64_t operand_words, int64_t operand_memories,
                   int64_t beats, Trace& tr, InstrStats& st);
  // Partial sums (docs/isa.md, COMPUTE, "Partial sums"). Pixel i's (FC: neuron
  // i's) int32 accumulators are the 4 words at `base` + 4 i .. + 3 of a bank,
  // word k holding byte k (least significant first) of every one, byte p PE p's.
  // acc_in: PE pe's partial sum of pixel i, from bank acc_id at acc_base.
  int64_t partial_sum(const isa::ComputeInstr& c, int64_t i, int64_t pe) {
    uint32_t v = 0;
    for (int64_t k = 0; k < 4; ++k) {
      v |= uint32_t{static_cast<uint8_t>(bank_word(c.acc_id, c.acc_base + 4 * i + k)[pe])}
           << (8 * k);
    }
    return static_cast<int32_t>(v);
  }
  // acc_out: the P accumulators `acc` (wrapped to int32) as the 4 words at
  // `addr` .. addr + 3 of bank dst_id.
  void write_partial_sums(const isa::ComputeInstr& c, int64_t addr, const int32_t* acc) {
    for (int64_t k = 0; k < 4; ++k) {
      int8_t* w = bank_word(c.dst_id, addr + k);
      for (int64_t pe = 0; pe < n_; ++pe) {
        const uint32_t v = pe < p_ ? static_cast<uint32_t>(acc[pe]) : 0;
        w[pe] = static_cast<int8_t>(static_cast<uint8_t>(v >> (8 * k)));
      }
    }
    mark_bank(c.dst_id, addr, 4);
  }
  // The accumulator wrapped to int32, as the hardware keeps it (counted when it wraps).
  int32_t wrap_acc(int64_t acc) {
    if (acc < INT32_MIN || acc > INT32_MAX) ++res_.acc_wraps;
    return static_cast<int32_t>(static_cast<uint32_t>(acc));
  }
  // The cycles a pixel (FC: neuron) of `beats` beats takes beyond them with
  // partial sums: acc_in's 4 word reads, and acc_out's 4 result words (the
  // result path takes one a cycle).
  static int64_t acc_extra_cycles(const isa::ComputeInstr& c, int64_t beats) {
    const int64_t busy = beats + (c.acc_in ? 4 : 0);
    return (c.acc_out ? std::max<int64_t>(busy, 4) : busy) - beats;
  }
  // The parameter RAM is read unless both the start (bias) and the
  // requantisation are replaced by partial sums.
  static bool reads_params(const isa::ComputeInstr& c) { return !(c.acc_in && c.acc_out); }
  void requantize_pixel(const isa::ComputeInstr& c, const std::vector<int64_t>& acc,
                        Tensor<int8_t>& out, int64_t oy, int64_t ox);
  // The requantised, clamped value v through the COMPUTE's activation table
  // (act_table_en), or v itself.
  int8_t lookup(const isa::ComputeInstr& c, int8_t v) const {
    if (!c.act_table_en) return v;
    return tables_[static_cast<size_t>(c.act_table * 256 + (int{v} + 128))];
  }
  // The table words a COMPUTE reads (race checking), added to step s; counts
  // a read of a word no LOAD TABLE wrote.
  void note_table(const isa::ComputeInstr& c, Step& s) {
    if (!c.act_table_en) return;
    const int64_t first = c.act_table * 256 / n_, end = ((c.act_table + 1) * 256 + n_ - 1) / n_;
    for (int64_t w = first; w < end; ++w) {
      if (!table_written_[static_cast<size_t>(w)]) ++res_.uninitialized_reads;
    }
    s.accesses.push_back(
        {Mem::kTable, 0, false, static_cast<uint64_t>(first), static_cast<uint64_t>(end)});
  }
  void execute_fc(const isa::ComputeInstr& c, Trace& tr, InstrStats& st);
  void execute_pool(const isa::ComputeInstr& c, Trace& tr, InstrStats& st);
  void execute_depthwise(const isa::ComputeInstr& c, Trace& tr, InstrStats& st);
  void write_result_row(const isa::ComputeInstr& c, int64_t row_addr, const Tensor<int8_t>& map,
                        int64_t r, Step& step);

  const HwTarget& t_;
  const int64_t n_;
  const int64_t p_;
  std::vector<uint8_t>& mem_;
  SimResult& res_;
  std::vector<int8_t> banks_;
  std::vector<int8_t> caches_;
  std::vector<Param> params_;
  std::vector<bool> bank_written_;
  std::vector<bool> cache_written_;
  std::vector<bool> param_written_;
  std::vector<uint8_t> controls_;  // sparse: (P + 1) x depth words of N bytes
  std::vector<bool> control_written_;
  std::vector<int8_t> tables_;       // act_tables x 256 entries (whole N-byte words)
  std::vector<bool> table_written_;  // per word
  std::deque<CascadeTransfer>* cascade_in_;
  std::vector<CascadeTransfer>* cascade_out_;
};

void Machine::load(const Instruction& in, Trace& tr, InstrStats& st) {
  const isa::LoadInstr l = isa::decode_load(in);
  const uint64_t kind = in.raw(isa::load::kDstKind);
  require(l.rows >= 1 && l.row_words >= 1, SimError::kIllegalInstr,
          fmt::format("LOAD with rows = {} and row_words = {} (both must be >= 1)", l.rows,
                      l.row_words));
  require(isa::load_dst_name(kind) != nullptr, SimError::kIllegalInstr,
          fmt::format("LOAD dst_kind {} is not defined", kind));
  const bool control = l.dst_kind == LoadDst::kControl;
  require(!control || t_.sparse, SimError::kIllegalInstr,
          "LOAD dst_kind CONTROL on a dense build (it exists on sparse builds only)");
  const bool param = l.dst_kind == LoadDst::kParam;
  const bool table = l.dst_kind == LoadDst::kTable;
  require(!table || l.dst_id == 0, SimError::kIllegalInstr,
          fmt::format("LOAD TABLE with dst_id = {} (must be 0)", l.dst_id));
  require(!l.dst_pe_step || l.dst_kind == LoadDst::kPeCache || control, SimError::kIllegalInstr,
          fmt::format("LOAD dst_pe_step with dst_kind {} (PE_CACHE, CONTROL only)",
                      isa::load_dst_name(kind)));
  require(!param || l.dst_id == 0, SimError::kIllegalInstr,
          fmt::format("LOAD PARAM with dst_id = {} (must be 0)", l.dst_id));
  const uint64_t src_kind = in.raw(isa::load::kSrcKind);
  require(isa::load_src_name(src_kind) != nullptr, SimError::kIllegalInstr,
          fmt::format("LOAD src_kind {} is not defined", src_kind));
  const bool cascade = l.src_kind == isa::LoadSrc::kCascade;
  require(!cascade || (l.ext_addr == 0 && l.ext_row_stride == 0), SimError::kIllegalInstr,
          "LOAD CASCADE with ext_addr or ext_row_stride not zero");
  const int64_t entry = param ? 8 : n_;
  const int64_t row_bytes = l.row_words * entry;
  require_rules(l, t_);
  // A cascade LOAD reads its rows from the transfer: each row whole beats
  // (a PARAM row's last beat padded, as on the bus).
  const int64_t beat = t_.beat_bytes();
  const int64_t cas_row = (row_bytes + beat - 1) / beat * beat;
  CascadeTransfer transfer;
  if (cascade) {
    require(cascade_in_ != nullptr && !cascade_in_->empty(), SimError::kCascade,
            "LOAD CASCADE: no transfer on the cascade input (the hardware waits for one)");
    transfer = std::move(cascade_in_->front());
    cascade_in_->pop_front();
    require(transfer.link_id == l.link_id, SimError::kCascade,
            fmt::format("LOAD CASCADE expects link id {}, the transfer has {}", l.link_id,
                        transfer.link_id));
    require(static_cast<int64_t>(transfer.bytes.size()) == l.rows * cas_row, SimError::kCascade,
            fmt::format("LOAD CASCADE takes {} bytes, the transfer has {} (its TLAST is not on "
                        "the LOAD's last beat)",
                        l.rows * cas_row, transfer.bytes.size()));
  } else {
    check_ext(static_cast<uint64_t>(l.ext_addr), static_cast<uint64_t>(l.ext_row_stride),
              static_cast<uint64_t>(l.rows), static_cast<uint64_t>(row_bytes), false);
  }
  // Byte `off` of row r of the source.
  const auto src_byte = [&](int64_t r, int64_t off) -> const uint8_t* {
    if (cascade) return &transfer.bytes[static_cast<size_t>(r * cas_row + off)];
    return &mem_[static_cast<size_t>(l.ext_addr + r * l.ext_row_stride + off)];
  };

  if (control) {  // every word is checked before any is written
    for (int64_t r = 0; r < l.rows; ++r) {
      for (int64_t w = 0; w < l.row_words; ++w) {
        const uint8_t* e = src_byte(r, w * n_);
        const bool schedule = !l.dst_pe_step && l.dst_id == p_;
        const int b =
            schedule ? isa::schedule_word_bad_byte(e, n_) : isa::control_word_bad_byte(e, n_);
        require(b < 0, SimError::kUnsupported,
                fmt::format("LOAD CONTROL row {} word {}: byte {} = 0x{:02x} sets bits a {} word "
                            "does not have",
                            r, w, b, e[b < 0 ? 0 : b], schedule ? "schedule" : "control"));
      }
    }
  }
  if (param) {  // every entry is checked before any is written
    for (int64_t r = 0; r < l.rows; ++r) {
      for (int64_t w = 0; w < l.row_words; ++w) {
        const uint8_t* e = src_byte(r, w * 8);
        require_rules(ParamEntry{l.dst_addr + r * l.dst_row_stride + w, e[6], e[7]}, t_);
      }
    }
  }
  tr.steps.resize(static_cast<size_t>(l.rows));
  for (int64_t r = 0; r < l.rows; ++r) {
    const uint64_t src = static_cast<uint64_t>(l.ext_addr + r * l.ext_row_stride);
    Step& s = tr.steps[static_cast<size_t>(r)];
    if (!cascade) {
      s.accesses.push_back({Mem::kExt, 0, false, src, src + static_cast<uint64_t>(row_bytes)});
    }
    s.releases = 1;
    if (param) {
      const int64_t ch = l.dst_addr + r * l.dst_row_stride;
      for (int64_t w = 0; w < l.row_words; ++w) {
        const uint8_t* e = src_byte(r, w * 8);
        Param& q = params_[ch + w];
        q.bias = static_cast<int32_t>(uint32_t{e[0]} | uint32_t{e[1]} << 8 | uint32_t{e[2]} << 16 |
                                      uint32_t{e[3]} << 24);
        q.mult = static_cast<uint16_t>(e[4] | e[5] << 8);
        q.shift = e[6];
        param_written_[ch + w] = true;
      }
      s.accesses.push_back({Mem::kParam, 0, true, static_cast<uint64_t>(ch),
                            static_cast<uint64_t>(ch + l.row_words)});
      continue;
    }
    if (table) {  // table t's entry i: byte (t * 256 + i) % N of word (t * 256 + i) / N
      const int64_t w0 = l.dst_addr + r * l.dst_row_stride;
      std::copy_n(reinterpret_cast<const int8_t*>(src_byte(r, 0)), row_bytes,
                  &tables_[static_cast<size_t>(w0 * n_)]);
      std::fill_n(table_written_.begin() + w0, l.row_words, true);
      s.accesses.push_back({Mem::kTable, 0, true, static_cast<uint64_t>(w0),
                            static_cast<uint64_t>(w0 + l.row_words)});
      continue;
    }
    int64_t pe = l.dst_id;
    int64_t addr = l.dst_addr + r * l.dst_row_stride;
    if (l.dst_pe_step) {
      pe = (l.dst_id + r) % p_;
      addr = l.dst_addr + (r / p_) * l.dst_row_stride;
    }
    if (control) {
      std::copy_n(src_byte(r, 0), row_bytes, control_word(pe, addr));
      std::fill_n(control_written_.begin() + pe * t_.pe_cache_depth + addr, l.row_words, true);
      s.accesses.push_back({Mem::kCache, static_cast<uint32_t>(pe), true,
                            static_cast<uint64_t>(addr),
                            static_cast<uint64_t>(addr + l.row_words)});
      continue;
    }
    int8_t* dst = l.dst_kind == LoadDst::kBank ? bank_word(l.dst_id, addr) : cache_word(pe, addr);
    std::copy_n(reinterpret_cast<const int8_t*>(src_byte(r, 0)), row_bytes, dst);
    if (l.dst_kind == LoadDst::kBank) {
      mark_bank(l.dst_id, addr, l.row_words);
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(l.dst_id), true,
                            static_cast<uint64_t>(addr),
                            static_cast<uint64_t>(addr + l.row_words)});
    } else {
      mark_cache(pe, addr, l.row_words);
      s.accesses.push_back({Mem::kCache, static_cast<uint32_t>(pe), true,
                            static_cast<uint64_t>(addr),
                            static_cast<uint64_t>(addr + l.row_words)});
    }
  }
  st.words = l.rows * l.row_words;
  st.ext_bytes = cascade ? 0 : l.rows * row_bytes;
}

void Machine::store(const Instruction& in, Trace& tr, InstrStats& st) {
  const isa::StoreInstr s = isa::decode_store(in);
  require(s.rows >= 1 && s.row_words >= 1, SimError::kIllegalInstr,
          fmt::format("STORE with rows = {} and row_words = {} (both must be >= 1)", s.rows,
                      s.row_words));
  const uint64_t dst_kind = in.raw(isa::store::kDstKind);
  require(isa::store_dst_name(dst_kind) != nullptr, SimError::kIllegalInstr,
          fmt::format("STORE dst_kind {} is not defined", dst_kind));
  const bool cascade = s.dst_kind == isa::StoreDst::kCascade;
  require(!cascade || (s.ext_addr == 0 && s.ext_row_stride == 0), SimError::kIllegalInstr,
          "STORE CASCADE with ext_addr or ext_row_stride not zero");
  require_rules(s, t_);
  const int64_t row_bytes = s.row_words * n_;
  CascadeTransfer transfer;
  transfer.link_id = static_cast<uint16_t>(s.link_id);
  if (!cascade) {
    check_ext(static_cast<uint64_t>(s.ext_addr), static_cast<uint64_t>(s.ext_row_stride),
              static_cast<uint64_t>(s.rows), static_cast<uint64_t>(row_bytes), true);
  }
  tr.steps.resize(static_cast<size_t>(s.rows));
  for (int64_t r = 0; r < s.rows; ++r) {
    const int64_t addr = s.src_addr + r * s.src_row_stride;
    const uint64_t dst = static_cast<uint64_t>(s.ext_addr + r * s.ext_row_stride);
    note_bank_read(s.src_id, addr, s.row_words);
    const int8_t* src = bank_word(s.src_id, addr);
    Step& step = tr.steps[static_cast<size_t>(r)];
    step.accesses.push_back({Mem::kBank, static_cast<uint32_t>(s.src_id), false,
                             static_cast<uint64_t>(addr),
                             static_cast<uint64_t>(addr + s.row_words)});
    if (cascade) {
      const auto* b = reinterpret_cast<const uint8_t*>(src);
      transfer.bytes.insert(transfer.bytes.end(), b, b + row_bytes);
    } else {
      std::copy_n(src, row_bytes, reinterpret_cast<int8_t*>(&mem_[dst]));
      step.accesses.push_back({Mem::kExt, 0, true, dst, dst + static_cast<uint64_t>(row_bytes)});
    }
    step.releases = 1;
  }
  if (cascade && cascade_out_ != nullptr) cascade_out_->push_back(std::move(transfer));
  st.words = s.rows * s.row_words;
  st.ext_bytes = cascade ? 0 : s.rows * row_bytes;
}

// Writes result row r of `map` [P][R][C] to the destination at `row_addr`.
void Machine::write_result_row(const isa::ComputeInstr& c, int64_t row_addr,
                               const Tensor<int8_t>& map, int64_t r, Step& step) {
  const int64_t cols = map.dim(2);
  const bool bank = c.dst_kind == ComputeDst::kBank;
  for (int64_t x = 0; x < cols; ++x) {
    int8_t* w = bank ? bank_word(c.dst_id, row_addr + x) : cache_word(c.dst_id, row_addr + x);
    for (int64_t lane = 0; lane < n_; ++lane) w[lane] = map(lane, r, x);
  }
  if (bank) {
    mark_bank(c.dst_id, row_addr, cols);
    step.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.dst_id), true,
                             static_cast<uint64_t>(row_addr),
                             static_cast<uint64_t>(row_addr + cols)});
  } else {
    mark_cache(c.dst_id, row_addr, cols);
    step.accesses.push_back({Mem::kCache, static_cast<uint32_t>(c.dst_id), true,
                             static_cast<uint64_t>(row_addr),
                             static_cast<uint64_t>(row_addr + cols)});
  }
}

void Machine::compute(const Instruction& in, Trace& tr, InstrStats& st) {
  const isa::ComputeInstr c = isa::decode_compute(in);
  const uint64_t mode = in.raw(isa::compute::kMode);
  const uint64_t dst = in.raw(isa::compute::kDstKind);
  require(isa::compute_mode_name(mode) != nullptr, SimError::kIllegalInstr,
          fmt::format("COMPUTE mode {} is not defined", mode));
  require(isa::compute_dst_name(dst) != nullptr, SimError::kIllegalInstr,
          fmt::format("COMPUTE dst_kind {} is not defined", dst));
  require_rules(c, t_);
  switch (c.mode) {
    case ComputeMode::kConv:
      if (c.packed_rows != 0) {
        execute_packed_conv(c, tr, st);
      } else {
        execute_conv(c, tr, st);
      }
      break;
    case ComputeMode::kFc:
      execute_fc(c, tr, st);
      break;
    case ComputeMode::kPool:
      execute_pool(c, tr, st);
      break;
    case ComputeMode::kDepthwise:
      execute_depthwise(c, tr, st);
      break;
  }
}

// The execute_* functions run instructions that obey every target rule
// (Machine::compute checked them).
// The end of a CONV, dense or packed: pooling of the requantised map `out`,
// one step per convolution output row (its input rows; the operands, words
// [cache_base, cache_base + operand_words) of memories 0 .. operand_memories - 1
// (the PE caches, and for a packed CONV the schedule), and the parameters at
// the first and the last), result rows written when complete.
// With acc_out, `raw` holds the wrapped accumulators [out_h][out_w][P] (not
// pooled), each pixel written as 4 words; with acc_in, each step also reads its
// row's partial sums.
void Machine::finish_conv(const isa::ComputeInstr& c, const Tensor<int8_t>& out,
                          const std::vector<int32_t>& raw, int64_t operand_words,
                          int64_t operand_memories, int64_t beats, Trace& tr, InstrStats& st) {
  const int64_t oh = c.out_h;
  const int64_t rows = c.pool_en ? c.pool_out_h : c.out_h;
  const int64_t cols = c.pool_en ? c.pool_out_w : c.out_w;
  Tensor<int8_t> result = out;
  if (c.pool_en) {
    const PoolWindow g = pool_window_of(c);
    result = clamp(c.pool_op == PoolOp::kAvg ? avgpool(out, g) : maxpool(out, g),
                   static_cast<int>(c.post_lo), static_cast<int>(c.post_hi));
  }
  tr.steps.resize(static_cast<size_t>(oh));
  for (int64_t oy = 0; oy < oh; ++oy) {
    Step& s = tr.steps[static_cast<size_t>(oy)];
    const int64_t y0 = oy * c.stride_h - c.pad_top;
    const int64_t r0 = std::max<int64_t>(0, y0), r1 = std::min(c.in_h, y0 + c.kernel_h);
    for (int64_t g = 0; g < c.in_groups && r1 > r0; ++g) {
      const int64_t a = c.in_base + (g * c.in_h + r0) * c.in_w;
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.in_id), false,
                            static_cast<uint64_t>(a),
                            static_cast<uint64_t>(a + (r1 - r0) * c.in_w)});
    }
    if (oy == 0 || oy == oh - 1) {  // operands read throughout: first and last step suffice
      for (int64_t m = 0; m < operand_memories; ++m) {
        s.accesses.push_back({Mem::kCache, static_cast<uint32_t>(m), false,
                              static_cast<uint64_t>(c.cache_base),
                              static_cast<uint64_t>(c.cache_base + operand_words)});
      }
      if (reads_params(c)) {
        s.accesses.push_back({Mem::kParam, 0, false, static_cast<uint64_t>(c.param_base),
                              static_cast<uint64_t>(c.param_base + p_)});
      }
      note_table(c, s);
    }
    if (c.acc_in) {  // the row's partial sums, 4 words per pixel
      const int64_t a = c.acc_base + 4 * oy * c.out_w;
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.acc_id), false,
                            static_cast<uint64_t>(a), static_cast<uint64_t>(a + 4 * c.out_w)});
    }
  }
  if (c.acc_out) {  // rule compute.acc_out: no pooling, a bank
    for (int64_t oy = 0; oy < oh; ++oy) {
      Step& s = tr.steps[static_cast<size_t>(oy)];
      const int64_t a = c.dst_base + oy * c.dst_row_stride;
      for (int64_t ox = 0; ox < c.out_w; ++ox) {
        write_partial_sums(c, a + 4 * ox, &raw[static_cast<size_t>((oy * c.out_w + ox) * p_)]);
      }
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.dst_id), true,
                            static_cast<uint64_t>(a), static_cast<uint64_t>(a + 4 * c.out_w)});
      ++s.releases;
    }
    st.beats = beats;
    st.words = 4 * oh * c.out_w;
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t done = c.pool_en ? pool_last_row(r, c.pool_k, c.pool_s, c.pool_pad_top, oh) : r;
    Step& s = tr.steps[static_cast<size_t>(done)];
    write_result_row(c, c.dst_base + r * c.dst_row_stride, result, r, s);
    ++s.releases;
  }
  st.beats = beats;
  st.words = rows * cols;
}

// Requantises output pixel (oy, ox) of every PE from its accumulator.
void Machine::requantize_pixel(const isa::ComputeInstr& c, const std::vector<int64_t>& acc,
                               Tensor<int8_t>& out, int64_t oy, int64_t ox) {
  for (int64_t pe = 0; pe < p_; ++pe) {
    const Param& q = params_[c.param_base + pe];
    const int32_t wrapped = wrap_acc(acc[pe]);
    out(pe, oy, ox) = lookup(c, requantize(wrapped, q.mult, q.shift, static_cast<int>(c.clamp_lo),
                                           static_cast<int>(c.clamp_hi)));
  }
}

void Machine::execute_conv(const isa::ComputeInstr& c, Trace& tr, InstrStats& st) {
  const int64_t g_count = c.in_groups;
  const int64_t oh = c.out_h, ow = c.out_w;
  const int64_t taps = c.kernel_h * c.kernel_w * g_count;

  // Accumulate every output pixel: only taps inside the image (padding filter).
  // Each starts at its bias, or with acc_in at its partial sums; with acc_out
  // its wrapped accumulators are the result (raw), else it is requantised.
  Tensor<int8_t> out({n_, oh, ow});
  std::vector<int32_t> raw(c.acc_out ? static_cast<size_t>(oh * ow * p_) : 0);
  int64_t beats = 0;
  if (reads_params(c)) {
    for (int64_t ch = 0; ch < p_; ++ch) {
      if (!param_written_[c.param_base + ch]) ++res_.uninitialized_reads;
    }
  }
  if (c.acc_in) note_bank_read(c.acc_id, c.acc_base, 4 * oh * ow);
  for (int64_t pe = 0; pe < p_; ++pe) note_cache_read(pe, c.cache_base, taps);
  std::vector<int64_t> acc(static_cast<size_t>(p_));
  for (int64_t oy = 0; oy < oh; ++oy) {
    const int64_t y0 = oy * c.stride_h - c.pad_top;
    const int64_t ky0 = std::max<int64_t>(0, -y0), ky1 = std::min(c.kernel_h, c.in_h - y0);
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t x0 = ox * c.stride_w - c.pad_left;
      const int64_t kx0 = std::max<int64_t>(0, -x0), kx1 = std::min(c.kernel_w, c.in_w - x0);
      const int64_t pixel = oy * ow + ox;
      for (int64_t pe = 0; pe < p_; ++pe) {
        acc[pe] = c.acc_in ? partial_sum(c, pixel, pe) : params_[c.param_base + pe].bias;
      }
      const int64_t pixel_start = beats;
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        for (int64_t kx = kx0; kx < kx1; ++kx) {
          for (int64_t g = 0; g < g_count; ++g) {
            const int64_t a = c.in_base + (g * c.in_h + y0 + ky) * c.in_w + x0 + kx;
            const int8_t* x = bank_word(c.in_id, a);
            const int64_t wa = c.cache_base + (ky * c.kernel_w + kx) * g_count + g;
            for (int64_t pe = 0; pe < p_; ++pe) {
              const int8_t* w = cache_word(pe, wa);
              int64_t dot = 0;
              for (int64_t lane = 0; lane < n_; ++lane) dot += int64_t{w[lane]} * x[lane];
              acc[pe] += dot;
            }
            ++beats;
          }
        }
      }
      st.acc_cycles += acc_extra_cycles(c, beats - pixel_start);
      if (c.acc_out) {
        for (int64_t pe = 0; pe < p_; ++pe)
          raw[static_cast<size_t>(pixel * p_ + pe)] = wrap_acc(acc[pe]);
      } else {
        requantize_pixel(c, acc, out, oy, ox);
      }
    }
    for (int64_t g = 0; g < g_count; ++g) {
      note_bank_read(c.in_id, c.in_base + (g * c.in_h + y0 + ky0) * c.in_w, (ky1 - ky0) * c.in_w);
    }
  }
  finish_conv(c, out, raw, taps, p_, beats, tr, st);
}

// A packed CONV (sparse builds, docs/isa.md and docs/sparsity.md): every
// output pixel runs the packed_rows rows at cache_base. Row k's schedule entry
// names the tap (ky, kx) and input group g of its window's first word,
// act[base]; the second, act[base + 1], is the next dense row (the next group,
// else the next tap), or zeros past the last. Words in the padding are zeros,
// and a row whose two words both lie there is skipped. PE p's lane m multiplies its
// weight by the activation its select code picks, and the row's sum goes to
// the accumulator its dest names (PE p, p - 1 or p + 1 around the ring).
void Machine::execute_packed_conv(const isa::ComputeInstr& c, Trace& tr, InstrStats& st) {
  const int64_t g_count = c.in_groups, kh = c.kernel_h, kw = c.kernel_w;
  const int64_t oh = c.out_h, ow = c.out_w, rows_k = c.packed_rows;
  std::vector<isa::ScheduleEntry> sched(static_cast<size_t>(rows_k));
  int64_t prev_t = -1;
  for (int64_t k = 0; k < rows_k; ++k) {
    const int64_t a = c.cache_base + k;
    for (int64_t pe = 0; pe <= p_; ++pe) {
      if (!control_written_[pe * t_.pe_cache_depth + a]) ++res_.uninitialized_reads;
    }
    isa::ScheduleEntry& en = sched[static_cast<size_t>(k)];
    en = isa::schedule_entry(control_word(p_, a));
    require(en.ky < kh && en.kx < kw && en.g < g_count, SimError::kUnsupported,
            fmt::format("packed CONV: the schedule entry of row {} names tap ({}, {}) group {}, "
                        "outside the {}x{} kernel's {} groups",
                        k, en.ky, en.kx, en.g, kh, kw, g_count));
    // Rows in dense order let the RTL walker find a pixel's rows by tap
    // (strata_packed_walker); the packer emits them so.
    const int64_t t = (en.ky * kw + en.kx) * g_count + en.g;
    require(k == 0 || t > prev_t, SimError::kUnsupported,
            fmt::format("packed CONV: the schedule entry of row {} names dense row {}, not after "
                        "row {}'s dense row {} (the rows must follow the dense order)",
                        k, t, k - 1, prev_t));
    prev_t = t;
  }
  for (int64_t ch = 0; ch < p_; ++ch) {
    if (!param_written_[c.param_base + ch]) ++res_.uninitialized_reads;
  }
  for (int64_t pe = 0; pe < p_; ++pe) note_cache_read(pe, c.cache_base, rows_k);

  const std::vector<int8_t> zeros(static_cast<size_t>(n_), 0);
  Tensor<int8_t> out({n_, oh, ow});
  std::vector<int64_t> acc(static_cast<size_t>(p_));
  int64_t beats = 0;
  for (int64_t oy = 0; oy < oh; ++oy) {
    const int64_t y0 = oy * c.stride_h - c.pad_top;
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t x0 = ox * c.stride_w - c.pad_left;
      const auto inside = [&](int64_t ky, int64_t kx) {
        const int64_t y = y0 + ky, x = x0 + kx;
        return y >= 0 && y < c.in_h && x >= 0 && x < c.in_w;
      };
      const auto word = [&](int64_t ky, int64_t kx, int64_t g) -> const int8_t* {
        if (!inside(ky, kx)) return zeros.data();
        return bank_word(c.in_id, c.in_base + (g * c.in_h + y0 + ky) * c.in_w + x0 + kx);
      };
      for (int64_t pe = 0; pe < p_; ++pe) acc[pe] = params_[c.param_base + pe].bias;
      const int64_t pixel_start = beats;
      for (int64_t k = 0; k < rows_k; ++k) {
        const isa::ScheduleEntry& en = sched[static_cast<size_t>(k)];
        const int8_t* cur = word(en.ky, en.kx, en.g);
        const int8_t* next = zeros.data();
        bool next_inside = false;
        if (en.g + 1 < g_count) {
          next = word(en.ky, en.kx, en.g + 1);
          next_inside = inside(en.ky, en.kx);
        } else if (en.kx + 1 < kw) {
          next = word(en.ky, en.kx + 1, 0);
          next_inside = inside(en.ky, en.kx + 1);
        } else if (en.ky + 1 < kh) {
          next = word(en.ky + 1, 0, 0);
          next_inside = inside(en.ky + 1, 0);
        }
        // A row whose two words both lie in the padding adds nothing and is
        // skipped, as the dense schedule skips a padded tap.
        if (!inside(en.ky, en.kx) && !next_inside) continue;
        ++beats;
        const int64_t a = c.cache_base + k;
        for (int64_t pe = 0; pe < p_; ++pe) {
          const int8_t* w = cache_word(pe, a);
          const uint8_t* ctl = control_word(pe, a);
          int64_t dot = 0;
          for (int64_t m = 0; m < n_; ++m) {
            int8_t x = 0;
            switch (isa::control_select(ctl, m)) {
              case 0:
                x = cur[m];
                break;  // SelCur
              case 1:
                x = next[m];
                break;  // SelNext: lookahead
              case 2:
                x = next[(m + 1) % n_];
                break;  // SelUp: lookaside from lane m + 1
              default:
                x = next[(m + n_ - 1) % n_];
                break;  // SelDown: from lane m - 1
            }
            dot += int64_t{w[m]} * x;
          }
          const int dest = isa::control_dest(ctl);
          acc[dest == isa::kDestOwn    ? pe
              : dest == isa::kDestPrev ? (pe + p_ - 1) % p_
                                       : (pe + 1) % p_] += dot;
        }
      }
      // A pixel at which every row was skipped still takes one beat: the one
      // that opens and closes its accumulation (all its words zeros).
      if (beats == pixel_start) ++beats;
      requantize_pixel(c, acc, out, oy, ox);
    }
    const int64_t r0 = std::max<int64_t>(0, y0), r1 = std::min(c.in_h, y0 + kh);
    for (int64_t g = 0; g < g_count; ++g) {
      if (r1 > r0)
        note_bank_read(c.in_id, c.in_base + (g * c.in_h + r0) * c.in_w, (r1 - r0) * c.in_w);
    }
  }
  finish_conv(c, out, {}, rows_k, p_ + 1, beats, tr, st);  // no partial sums (compute.acc_mode)
}

void Machine::execute_fc(const isa::ComputeInstr& c, Trace& tr, InstrStats& st) {
  const int64_t g_count = c.in_groups;
  // PE_TRANSPOSE: neuron o goes to byte (dst_lane + o) % N of word dst_base + (dst_lane + o) / N
  // (dst_lane is 0: the PE caches are written in whole words, rule fc.transpose_lane).
  const int64_t out_words = (c.dst_lane + c.out_h + n_ - 1) / n_;
  note_bank_read(c.in_id, c.in_base, c.out_h * g_count);
  for (int64_t pe = 0; pe < p_; ++pe) note_cache_read(pe, c.cache_base, g_count);

  // Neuron o of PE pe starts at its bias, or with acc_in at its partial sum; with
  // acc_out its wrapped accumulator is the result (raw), else it is requantised.
  std::vector<int8_t> results(static_cast<size_t>(c.out_h * p_));
  std::vector<int32_t> raw(c.acc_out ? static_cast<size_t>(c.out_h * p_) : 0);
  if (c.acc_in) note_bank_read(c.acc_id, c.acc_base, 4 * c.out_h);
  for (int64_t o = 0; o < c.out_h; ++o) {
    if (reads_params(c) && !param_written_[c.param_base + o]) ++res_.uninitialized_reads;
    const Param& q = params_[c.param_base + o];
    for (int64_t pe = 0; pe < p_; ++pe) {
      int64_t acc = c.acc_in ? partial_sum(c, o, pe) : q.bias;
      for (int64_t t = 0; t < g_count; ++t) {
        const int8_t* w = bank_word(c.in_id, c.in_base + o * g_count + t);
        const int8_t* x = cache_word(pe, c.cache_base + t);
        for (int64_t lane = 0; lane < n_; ++lane) acc += int64_t{w[lane]} * x[lane];
      }
      const int32_t wrapped = wrap_acc(acc);
      if (c.acc_out) {
        raw[static_cast<size_t>(o * p_ + pe)] = wrapped;
        continue;
      }
      results[o * p_ + pe] =
          lookup(c, requantize(wrapped, q.mult, q.shift, static_cast<int>(c.clamp_lo),
                               static_cast<int>(c.clamp_hi)));
    }
    st.acc_cycles += acc_extra_cycles(c, g_count);
  }
  tr.steps.resize(static_cast<size_t>(c.out_h));
  for (int64_t o = 0; o < c.out_h; ++o) {
    Step& s = tr.steps[static_cast<size_t>(o)];
    const int64_t wa = c.in_base + o * g_count;
    s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.in_id), false,
                          static_cast<uint64_t>(wa), static_cast<uint64_t>(wa + g_count)});
    if (reads_params(c)) {
      s.accesses.push_back({Mem::kParam, 0, false, static_cast<uint64_t>(c.param_base + o),
                            static_cast<uint64_t>(c.param_base + o + 1)});
    }
    if (c.acc_in) {
      const int64_t a = c.acc_base + 4 * o;
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.acc_id), false,
                            static_cast<uint64_t>(a), static_cast<uint64_t>(a + 4)});
    }
    if (o == 0 || o == c.out_h - 1) {
      note_table(c, s);
      for (int64_t pe = 0; pe < p_; ++pe) {
        s.accesses.push_back({Mem::kCache, static_cast<uint32_t>(pe), false,
                              static_cast<uint64_t>(c.cache_base),
                              static_cast<uint64_t>(c.cache_base + g_count)});
      }
    }
    if (c.acc_out) {  // rule compute.acc_out: a bank
      const int64_t a = c.dst_base + 4 * o;
      write_partial_sums(c, a, &raw[static_cast<size_t>(o * p_)]);
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.dst_id), true,
                            static_cast<uint64_t>(a), static_cast<uint64_t>(a + 4)});
    } else if (c.dst_kind == ComputeDst::kBank) {
      int8_t* w = bank_word(c.dst_id, c.dst_base + o);
      for (int64_t lane = 0; lane < n_; ++lane) w[lane] = lane < p_ ? results[o * p_ + lane] : 0;
      mark_bank(c.dst_id, c.dst_base + o, 1);
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.dst_id), true,
                            static_cast<uint64_t>(c.dst_base + o),
                            static_cast<uint64_t>(c.dst_base + o + 1)});
    } else {
      const int64_t at = c.dst_lane + o;
      const int64_t word = c.dst_base + at / n_;
      for (int64_t pe = 0; pe < p_; ++pe) {
        int8_t* w = cache_word(pe, word);
        w[at % n_] = results[o * p_ + pe];
        if (o == c.out_h - 1) std::fill(w + at % n_ + 1, w + n_, int8_t{0});
        mark_cache(pe, word, 1);
        s.accesses.push_back({Mem::kCache, static_cast<uint32_t>(pe), true,
                              static_cast<uint64_t>(word), static_cast<uint64_t>(word + 1)});
      }
    }
    s.releases = 1;
  }
  st.beats = c.out_h * g_count;
  st.words = c.acc_out ? 4 * c.out_h : c.dst_kind == ComputeDst::kBank ? c.out_h : out_words * p_;
}

void Machine::execute_pool(const isa::ComputeInstr& c, Trace& tr, InstrStats& st) {
  const int64_t g_count = c.in_groups;
  const int64_t plane = c.in_h * c.in_w;
  const int64_t rows = c.pool_out_h, cols = c.pool_out_w;
  const PoolWindow geo = pool_window_of(c);
  tr.steps.resize(static_cast<size_t>(g_count * c.in_h));
  for (int64_t g = 0; g < g_count; ++g) {
    const int64_t base = c.in_base + g * plane;
    note_bank_read(c.in_id, base, plane);
    Tensor<int8_t> map({n_, c.in_h, c.in_w});
    for (int64_t y = 0; y < c.in_h; ++y) {
      for (int64_t x = 0; x < c.in_w; ++x) {
        const int8_t* w = bank_word(c.in_id, base + y * c.in_w + x);
        for (int64_t lane = 0; lane < n_; ++lane) map(lane, y, x) = w[lane];
      }
      Step& s = tr.steps[static_cast<size_t>(g * c.in_h + y)];
      s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.in_id), false,
                            static_cast<uint64_t>(base + y * c.in_w),
                            static_cast<uint64_t>(base + (y + 1) * c.in_w)});
    }
    const Tensor<int8_t> pooled =
        clamp(c.pool_op == PoolOp::kAvg ? avgpool(map, geo) : maxpool(map, geo),
              static_cast<int>(c.post_lo), static_cast<int>(c.post_hi));
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t done = pool_last_row(r, c.pool_k, c.pool_s, c.pool_pad_top, c.in_h);
      Step& s = tr.steps[static_cast<size_t>(g * c.in_h + done)];
      write_result_row(c, c.dst_base + g * c.dst_group_stride + r * c.dst_row_stride, pooled, r, s);
      ++s.releases;
    }
  }
  st.pool_words = g_count * plane;
  st.words = g_count * rows * cols;
}

// PE p computes channel p of the one input group: its weight of tap
// t = ky * max_pool_kernel + kx is byte t % N of cache word cache_base + t / N;
// padded taps contribute nothing. Steps: one per input row; result row r is
// written once input row pool_last_row(r) is in.
void Machine::execute_depthwise(const isa::ComputeInstr& c, Trace& tr, InstrStats& st) {
  const int64_t kmax = t_.max_pool_kernel;
  const int64_t words = t_.depthwise_weight_words();
  const int64_t rows = c.pool_out_h, cols = c.pool_out_w;
  note_bank_read(c.in_id, c.in_base, c.in_h * c.in_w);
  for (int64_t pe = 0; pe < p_; ++pe) {
    note_cache_read(pe, c.cache_base, words);
    if (!param_written_[c.param_base + pe]) ++res_.uninitialized_reads;
  }
  Tensor<int8_t> out({n_, rows, cols});
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t y0 = r * c.pool_s - c.pool_pad_top;
    for (int64_t x = 0; x < cols; ++x) {
      const int64_t x0 = x * c.pool_s - c.pool_pad_left;
      for (int64_t pe = 0; pe < p_; ++pe) {
        int64_t acc = params_[c.param_base + pe].bias;
        for (int64_t ky = 0; ky < c.pool_k; ++ky) {
          const int64_t iy = y0 + ky;
          if (iy < 0 || iy >= c.in_h) continue;
          for (int64_t kx = 0; kx < c.pool_k; ++kx) {
            const int64_t ix = x0 + kx;
            if (ix < 0 || ix >= c.in_w) continue;
            const int64_t tap = ky * kmax + kx;
            const int8_t w = cache_word(pe, c.cache_base + tap / n_)[tap % n_];
            acc += int64_t{w} * bank_word(c.in_id, c.in_base + iy * c.in_w + ix)[pe];
          }
        }
        const Param& q = params_[c.param_base + pe];
        if (acc < INT32_MIN || acc > INT32_MAX) ++res_.acc_wraps;
        const auto wrapped = static_cast<int32_t>(static_cast<uint32_t>(acc));
        out(pe, r, x) = lookup(c, requantize(wrapped, q.mult, q.shift, static_cast<int>(c.clamp_lo),
                                             static_cast<int>(c.clamp_hi)));
      }
    }
  }

  tr.steps.resize(static_cast<size_t>(c.in_h));
  for (int64_t y = 0; y < c.in_h; ++y) {
    Step& s = tr.steps[static_cast<size_t>(y)];
    const int64_t a = c.in_base + y * c.in_w;
    s.accesses.push_back({Mem::kBank, static_cast<uint32_t>(c.in_id), false,
                          static_cast<uint64_t>(a), static_cast<uint64_t>(a + c.in_w)});
    if (y == 0 || y == c.in_h - 1) {  // operands read throughout: first and last step suffice
      for (int64_t pe = 0; pe < p_; ++pe) {
        s.accesses.push_back({Mem::kCache, static_cast<uint32_t>(pe), false,
                              static_cast<uint64_t>(c.cache_base),
                              static_cast<uint64_t>(c.cache_base + words)});
      }
      s.accesses.push_back({Mem::kParam, 0, false, static_cast<uint64_t>(c.param_base),
                            static_cast<uint64_t>(c.param_base + p_)});
      note_table(c, s);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t done = pool_last_row(r, c.pool_k, c.pool_s, c.pool_pad_top, c.in_h);
    Step& s = tr.steps[static_cast<size_t>(done)];
    write_result_row(c, c.dst_base + r * c.dst_row_stride, out, r, s);
    ++s.releases;
  }
  st.beats = rows * cols * words;
  st.pool_words = c.in_h * c.in_w;
  st.words = rows * cols;
}

// ---- dependency model ----------------------------------------------------------------------

// The agents of the vector clocks: the three engines, and the store engine's
// external writes. A STORE's writes complete when their responses arrive,
// which may be after the STORE has finished and after its S2C releases; only
// its S2L release waits for them (docs/isa.md, Dependencies). So they are
// events of an agent of their own (the writes keep AXI order among
// themselves), which an S2L release joins and no other release does: a LOAD
// of stored bytes is ordered only through S2L (or a chain that starts with
// it).
constexpr int kWrites = isa::kEngines;
constexpr int kAgents = isa::kEngines + 1;
using Clock = std::array<int64_t, kAgents>;

struct Shadow {
  int32_t w_instr = -1;
  int32_t w_event = -1;
  int8_t w_engine = -1;
  std::array<int32_t, isa::kEngines> r_event{-1, -1, -1};
  std::array<int32_t, isa::kEngines> r_instr{-1, -1, -1};
};

class DependencyModel {
 public:
  DependencyModel(const HwTarget& t, const std::vector<Trace>& traces, size_t ext_bytes, bool fine,
                  int queue_depth)
      : t_(t),
        traces_(traces),
        fine_(fine),
        depth_(queue_depth),
        bank_(static_cast<size_t>(t.banks) * t.bank_depth),
        cache_(static_cast<size_t>(t.pes + 1) * t.pe_cache_depth),  // + the schedule (index P)
        param_(static_cast<size_t>(t.param_depth)),
        table_(static_cast<size_t>(t.table_words())),
        granule_(external_granule(traces)),
        ext_(ext_bytes / granule_ + 1) {
    for (size_t i = 0; i < traces.size(); ++i) {
      queues_[static_cast<int>(traces[i].engine)].push_back(i);
    }
  }

  DependencyCheck run();

 private:
  struct EngineState {
    size_t pos = 0;  // index into the engine's queue
    int phase = 0;   // 0 waiting to start, 1 executing steps, 2 finishing
    size_t step = 0;
    int64_t acquired0 = 0;
    int64_t released0 = 0;
    int32_t event = -1;
    Clock clock{-1, -1, -1, -1};
    int64_t in_flight = 0;  // fetched, not finished
  };

  bool advance(int e);
  bool can_take(std::optional<Edge> edge, int64_t units) const {
    return units == 0 || (edge && sem_[static_cast<int>(*edge)] >= units);
  }
  void acquire(int e, std::optional<Edge> edge, int64_t units);
  void release(int e, std::optional<Edge> edge, int64_t units);
  void perform(int e, const Trace& tr, const Step& step);
  void touch(int agent, const Clock& clk, int32_t now, const Trace& tr, Shadow& s, bool write,
             const Access& a, uint64_t addr);
  std::string waiting_text(int e) const;

  const HwTarget& t_;
  const std::vector<Trace>& traces_;
  const bool fine_;
  const int depth_;
  std::array<std::vector<size_t>, isa::kEngines> queues_;
  std::array<EngineState, isa::kEngines> eng_;
  Clock writes_clock_{-1, -1, -1, -1};  // the store engine's external writes (kWrites)
  int32_t writes_event_ = -1;
  size_t fetched_ = 0;  // traces handed to the queues (program order)
  std::array<int64_t, isa::kEdges> sem_{};
  std::array<std::vector<Clock>, isa::kEdges> release_clock_;
  std::vector<Shadow> bank_, cache_, param_, table_;
  const uint64_t granule_;  // bytes of external memory per entry of ext_
  std::vector<Shadow> ext_;
  DependencyCheck out_;
  std::set<std::tuple<std::string, int64_t, int64_t>> race_keys_;
};

void DependencyModel::acquire(int e, std::optional<Edge> edge, int64_t units) {
  if (units == 0) return;
  const int k = static_cast<int>(*edge);
  sem_[k] -= units;
  out_.acquired[k] += units;
  const Clock& c = release_clock_[k][static_cast<size_t>(out_.acquired[k] - 1)];
  Clock& mine = eng_[e].clock;
  for (int i = 0; i < kAgents; ++i) mine[i] = std::max(mine[i], c[i]);
}

void DependencyModel::release(int e, std::optional<Edge> edge, int64_t units) {
  if (units == 0) return;
  const int k = static_cast<int>(*edge);
  Clock clk = eng_[e].clock;
  if (*edge == Edge::kS2L) {  // after every write response of the STOREs so far
    for (int i = 0; i < kAgents; ++i) clk[i] = std::max(clk[i], writes_clock_[i]);
  }
  for (int64_t i = 0; i < units; ++i) release_clock_[k].push_back(clk);
  sem_[k] += units;
  out_.released[k] += units;
  out_.max_outstanding[k] = std::max(out_.max_outstanding[k], sem_[k]);
}

std::string memory_name(const Access& a) {
  switch (a.mem) {
    case Mem::kBank:
      return fmt::format("bank {}", a.id);
    case Mem::kCache:
      return fmt::format("pe {} cache", a.id);  // id P: the packed-row schedule
    case Mem::kParam:
      return "param";
    case Mem::kExt:
      return "external";
    case Mem::kTable:
      return "activation tables";
  }
  return "?";
}

void DependencyModel::touch(int agent, const Clock& clk, int32_t now, const Trace& tr, Shadow& s,
                            bool write, const Access& a, uint64_t addr) {
  const auto record = [&](const char* kind, int32_t first) {
    const std::string memory = memory_name(a);
    const auto key = std::make_tuple(std::string(kind) + " " + memory, int64_t{first}, tr.index);
    if (race_keys_.insert(key).second) {
      ++out_.race_count;
      if (out_.races.size() < kMaxRacesKept) {
        out_.races.push_back(Race{kind, memory, addr, first, tr.index});
      }
    }
  };
  if (s.w_engine >= 0 && s.w_engine != agent && clk[s.w_engine] < s.w_event) {
    record(write ? "WAW" : "RAW", s.w_instr);
  }
  if (!write) {
    s.r_event[agent] = now;
    s.r_instr[agent] = static_cast<int32_t>(tr.index);
    return;
  }
  for (int other = 0; other < isa::kEngines; ++other) {
    if (other != agent && s.r_event[other] >= 0 && clk[other] < s.r_event[other]) {
      record("WAR", s.r_instr[other]);
    }
  }
  s.w_engine = static_cast<int8_t>(agent);
  s.w_event = now;
  s.w_instr = static_cast<int32_t>(tr.index);
  s.r_event = {-1, -1, -1};
}

void DependencyModel::perform(int e, const Trace& tr, const Step& step) {
  EngineState& st = eng_[e];
  ++st.event;
  st.clock[e] = st.event;
  for (const Access& a : step.accesses) {
    // A STORE's external writes are issued now (after what the STORE waited
    // for) and complete as events of the writes agent.
    const bool bus_write = a.mem == Mem::kExt && a.write;
    if (bus_write) {
      for (int i = 0; i < kAgents; ++i) writes_clock_[i] = std::max(writes_clock_[i], st.clock[i]);
      writes_clock_[kWrites] = ++writes_event_;
    }
    const int agent = bus_write ? kWrites : e;
    const Clock& clk = bus_write ? writes_clock_ : st.clock;
    const int32_t now = bus_write ? writes_event_ : st.event;
    for (uint64_t i = a.begin; i < a.end;) {
      switch (a.mem) {
        case Mem::kBank:
          touch(agent, clk, now, tr, bank_[a.id * t_.bank_depth + i], a.write, a, i);
          ++i;
          break;
        case Mem::kCache:
          touch(agent, clk, now, tr, cache_[a.id * t_.pe_cache_depth + i], a.write, a, i);
          ++i;
          break;
        case Mem::kParam:
          touch(agent, clk, now, tr, param_[i], a.write, a, i);
          ++i;
          break;
        case Mem::kTable:
          touch(agent, clk, now, tr, table_[i], a.write, a, i);
          ++i;
          break;
        case Mem::kExt:
          touch(agent, clk, now, tr, ext_[i / granule_], a.write, a, i);
          i += granule_;
          break;
      }
    }
  }
}

bool DependencyModel::advance(int e) {
  EngineState& st = eng_[e];
  const auto& queue = queues_[e];
  if (st.pos >= queue.size()) return false;
  const size_t k = queue[st.pos];
  if (k >= fetched_) return false;
  const Trace& tr = traces_[k];
  const Header& h = tr.hdr;
  const isa::EdgeSlots slots = isa::edge_slots(tr.opcode);
  switch (st.phase) {
    case 0: {
      const int64_t first = fine_ ? h.acq0_first : h.acq0;
      if (!can_take(slots.acq0, first) || !can_take(slots.acq1, h.acq1)) return false;
      acquire(e, slots.acq1, h.acq1);
      acquire(e, slots.acq0, first);
      st.acquired0 = first;
      st.released0 = 0;
      st.step = 0;
      st.phase = tr.steps.empty() ? 2 : 1;
      return true;
    }
    case 1: {
      if (fine_ && st.step > 0) {
        const int64_t need = std::min(h.acq0_step, h.acq0 - st.acquired0);
        if (!can_take(slots.acq0, need)) return false;
        acquire(e, slots.acq0, need);
        st.acquired0 += need;
      }
      const Step& step = tr.steps[st.step];
      perform(e, tr, step);
      if (fine_) {
        const int64_t n = std::min(step.releases, h.rel0 - st.released0);
        release(e, slots.rel0, n);
        st.released0 += n;
      }
      if (++st.step == tr.steps.size()) st.phase = 2;
      return true;
    }
    default: {
      const int64_t rest = h.acq0 - st.acquired0;
      if (!can_take(slots.acq0, rest)) return false;
      acquire(e, slots.acq0, rest);
      st.acquired0 = h.acq0;
      release(e, slots.rel0, h.rel0 - st.released0);
      release(e, slots.rel1, h.rel1);
      st.phase = 0;
      ++st.pos;
      --st.in_flight;
      return true;
    }
  }
}

std::string DependencyModel::waiting_text(int e) const {
  const EngineState& st = eng_[e];
  const auto& queue = queues_[e];
  if (st.pos >= queue.size()) return fmt::format("{} idle", isa::engine_name(Engine(e)));
  const Trace& tr = traces_[queue[st.pos]];
  if (queue[st.pos] >= fetched_) {
    return fmt::format("{}: instruction {} not fetched (the fetcher is blocked)",
                       isa::engine_name(Engine(e)), tr.index);
  }
  const isa::EdgeSlots slots = isa::edge_slots(tr.opcode);
  const auto sem = [&](std::optional<Edge> edge) {
    return edge ? sem_[static_cast<int>(*edge)] : 0;
  };
  const auto name = [](std::optional<Edge> edge) { return edge ? isa::edge_name(*edge) : "-"; };
  return fmt::format(
      "{}: instruction {} waits for acq0 {} / acq1 {} units of {} / {} "
      "(semaphores hold {} / {})",
      isa::engine_name(Engine(e)), tr.index, tr.hdr.acq0 - st.acquired0,
      st.phase == 0 ? tr.hdr.acq1 : 0, name(slots.acq0), name(slots.acq1), sem(slots.acq0),
      sem(slots.acq1));
}

DependencyCheck DependencyModel::run() {
  out_.ran = true;
  for (;;) {
    while (fetched_ < traces_.size()) {
      EngineState& st = eng_[static_cast<int>(traces_[fetched_].engine)];
      if (st.in_flight >= depth_) break;
      ++st.in_flight;
      ++fetched_;
    }
    bool progress = false;
    for (int e = 0; e < isa::kEngines; ++e) {
      while (advance(e)) progress = true;
    }
    if (progress) continue;
    bool done = fetched_ == traces_.size();
    for (int e = 0; e < isa::kEngines; ++e) done = done && eng_[e].pos == queues_[e].size();
    if (done) break;
    out_.deadlock = true;
    int64_t earliest = -1;
    std::vector<std::string> parts;
    for (int e = 0; e < isa::kEngines; ++e) {
      if (eng_[e].pos < queues_[e].size()) {
        const int64_t idx = traces_[queues_[e][eng_[e].pos]].index;
        if (earliest < 0 || idx < earliest) earliest = idx;
      }
      parts.push_back(waiting_text(e));
    }
    out_.deadlock_index = earliest;
    out_.deadlock_detail = fmt::format("{}", fmt::join(parts, "; "));
    break;
  }
  return out_;
}

}  // namespace

const char* sim_error_name(SimError e) {
  switch (e) {
    case SimError::kNone:
      return "NONE";
    case SimError::kIllegalInstr:
      return "ILLEGAL_INSTR";
    case SimError::kUnsupported:
      return "UNSUPPORTED";
    case SimError::kAxiRead:
      return "AXI_READ";
    case SimError::kAxiWrite:
      return "AXI_WRITE";
    case SimError::kBusyStart:
      return "BUSY_START";
    case SimError::kNoEnd:
      return "NO_END";
    case SimError::kDeadlock:
      return "DEADLOCK";
    case SimError::kCascade:
      return "CASCADE";
    case SimError::kChainStop:
      return "CHAIN_STOP";
  }
  return "?";
}

IsaSim::IsaSim(HwTarget target) : target_(std::move(target)) { target_.validate(); }

namespace {

// Header rules every opcode shares (ILLEGAL_INSTR).
void check_header(const Instruction& in, Opcode op) {
  const Header h = isa::decode_header(in);
  const isa::EdgeSlots slots = isa::edge_slots(op);
  const char* name = isa::opcode_name(static_cast<uint64_t>(op));
  const auto zero = [&](std::optional<Edge> slot, int64_t v, const char* field) {
    require(slot.has_value() || v == 0, SimError::kIllegalInstr,
            fmt::format("{} has {} = {} (must be 0: {} has no such dependency edge)", name, field,
                        v, name));
  };
  zero(slots.acq0, h.acq0, "acq0");
  zero(slots.acq0, h.acq0_first, "acq0_first");
  zero(slots.acq0, h.acq0_step, "acq0_step");
  zero(slots.acq1, h.acq1, "acq1");
  zero(slots.rel0, h.rel0, "rel0");
  zero(slots.rel1, h.rel1, "rel1");
  require(h.acq0_first <= h.acq0, SimError::kIllegalInstr,
          fmt::format("{} has acq0_first = {} > acq0 = {}", name, h.acq0_first, h.acq0));
}

void check_config(const isa::ConfigInstr& c, const HwTarget& t) {
  const auto equal = [&](const char* what, int64_t got, int64_t want) {
    require(
        got == want, SimError::kUnsupported,
        fmt::format("program compiled for {} = {}, this configuration has {}", what, got, want));
  };
  const auto at_most = [&](const char* what, int64_t got, int64_t have) {
    require(got <= have, SimError::kUnsupported,
            fmt::format("program compiled for {} = {}, this configuration has only {}", what, got,
                        have));
  };
  equal("version", c.version, t.version);
  equal("P", c.pes, t.pes);
  equal("N", c.lanes, t.lanes);
  at_most("banks", c.banks, t.banks);
  at_most("bank_depth", c.bank_depth, t.bank_depth);
  at_most("pe_cache_depth", c.pe_cache_depth, t.pe_cache_depth);
  at_most("param_depth", c.param_depth, t.param_depth);
  require(c.act_tables <= t.act_tables, SimError::kUnsupported,
          t.act_tables == 0
              ? fmt::format("program uses {} activation tables, this configuration has no table "
                            "unit (act_tables = 0)",
                            c.act_tables)
              : fmt::format("program compiled for act_tables = {}, this configuration has only {}",
                            c.act_tables, t.act_tables));
  require((c.sparse != 0) == t.sparse, SimError::kUnsupported,
          c.sparse != 0 ? std::string("program compiled for a sparse build, this configuration is "
                                      "dense")
                        : std::string("program compiled for a dense build, this configuration is "
                                      "sparse"));
}

}  // namespace

SimResult IsaSim::run(std::vector<uint8_t>& memory, const SimOptions& options) const {
  if (options.instr_base % isa::kInstrBytes != 0) {
    throw Error(fmt::format("instr_base 0x{:x} is not 64-byte aligned", options.instr_base));
  }
  if (options.queue_depth < 1) throw Error("queue_depth must be at least 1");
  SimResult res;
  Machine machine(target_, memory, options, res);
  std::vector<Trace> traces;
  // Fetch: every instruction up to END is checked in program order (as the
  // fetcher does); LOAD, COMPUTE and STORE are queued per engine.
  struct Pending {
    Instruction in;
    Opcode op = Opcode::kLoad;
    size_t stat = 0;  // its entry in res.stats
  };
  std::vector<Pending> pending;
  int64_t index = 0;
  try {
    for (;; ++index) {
      require(
          index < options.instr_limit, SimError::kNoEnd,
          fmt::format("{} instructions fetched without an END (INSTR_LIMIT)", options.instr_limit));
      const uint64_t addr = options.instr_base + static_cast<uint64_t>(index) * isa::kInstrBytes;
      require(addr + isa::kInstrBytes <= memory.size(), SimError::kAxiRead,
              fmt::format("instruction fetch at 0x{:x} is past the end of memory (0x{:x} bytes)",
                          addr, memory.size()));
      const Instruction in = Instruction::from_bytes(&memory[addr]);
      const uint64_t op_value = in.opcode_value();
      const char* op_name = isa::opcode_name(op_value);
      require(op_name != nullptr && op_value != static_cast<uint64_t>(Opcode::kIllegal),
              SimError::kIllegalInstr, fmt::format("opcode {} is not an instruction", op_value));
      require(in.reserved_bits_clear(), SimError::kIllegalInstr,
              fmt::format("{} has reserved bits set", op_name));
      const auto op = static_cast<Opcode>(op_value);
      check_header(in, op);
      require(index > 0 || op == Opcode::kConfig, SimError::kIllegalInstr,
              fmt::format("the first instruction is {}, not CONFIG", op_name));
      InstrStats st;
      st.index = index;
      st.opcode = op;
      st.tag = in.get(isa::hdr::kTag);
      if (op == Opcode::kConfig) {
        check_config(isa::decode_config(in), target_);
        res.stats.push_back(st);
        continue;
      }
      if (op == Opcode::kEnd) {
        res.stats.push_back(st);
        break;
      }
      pending.push_back({in, op, res.stats.size()});
      res.stats.push_back(st);
    }
  } catch (const Fault& f) {
    res.error = f.code;
    res.error_index = index;
    res.message = f.message;
    res.instructions = index;
    return res;
  }

  // Execute in an order the semaphores allow, as completion-granular hardware
  // would: repeatedly the earliest engine head (program order) whose
  // acquisitions are all available, releasing its units when done. The
  // compiler may place an instruction ahead of the producers it waits for
  // (docs/compiler.md, dispatch order), so program order itself need not be
  // a legal sequential order. If no head can start (a deadlock, which the
  // dependency model reports), the rest runs in program order; without
  // check_dependencies (a data reference that ignores the semaphores) all of
  // it does.
  std::array<std::vector<size_t>, isa::kEngines> queue;
  for (size_t i = 0; i < pending.size(); ++i) {
    queue[static_cast<int>(*isa::engine_of(pending[i].op))].push_back(i);
  }
  std::array<size_t, isa::kEngines> head{};
  std::array<int64_t, isa::kEdges> sem{};
  int64_t current = -1;
  try {
    for (size_t done = 0; done < pending.size(); ++done) {
      size_t pick = pending.size();
      size_t fallback = pending.size();
      for (int e = 0; e < isa::kEngines; ++e) {
        if (head[e] == queue[e].size()) continue;
        const size_t i = queue[e][head[e]];
        fallback = std::min(fallback, i);
        const isa::Header h = isa::decode_header(pending[i].in);
        const isa::EdgeSlots sl = isa::edge_slots(pending[i].op);
        const bool ok0 = h.acq0 == 0 || (sl.acq0 && sem[static_cast<int>(*sl.acq0)] >= h.acq0);
        const bool ok1 = h.acq1 == 0 || (sl.acq1 && sem[static_cast<int>(*sl.acq1)] >= h.acq1);
        if (ok0 && ok1) pick = std::min(pick, i);
      }
      if (pick == pending.size() || !options.check_dependencies) pick = fallback;
      const Pending& pd = pending[pick];
      const int e = static_cast<int>(*isa::engine_of(pd.op));
      ++head[e];
      InstrStats& st = res.stats[pd.stat];
      current = st.index;
      const isa::Header h = isa::decode_header(pd.in);
      const isa::EdgeSlots sl = isa::edge_slots(pd.op);
      if (sl.acq0) sem[static_cast<int>(*sl.acq0)] -= h.acq0;
      if (sl.acq1) sem[static_cast<int>(*sl.acq1)] -= h.acq1;
      Trace tr;
      tr.index = st.index;
      tr.opcode = pd.op;
      tr.engine = *isa::engine_of(pd.op);
      tr.hdr = h;
      switch (pd.op) {
        case Opcode::kLoad:
          machine.load(pd.in, tr, st);
          break;
        case Opcode::kStore:
          machine.store(pd.in, tr, st);
          break;
        default:
          machine.compute(pd.in, tr, st);
          break;
      }
      if (sl.rel0) sem[static_cast<int>(*sl.rel0)] += h.rel0;
      if (sl.rel1) sem[static_cast<int>(*sl.rel1)] += h.rel1;
      st.step_releases.reserve(tr.steps.size());
      for (const Step& step : tr.steps)
        st.step_releases.push_back(static_cast<int32_t>(step.releases));
      res.beats += st.beats;
      traces.push_back(std::move(tr));
    }
  } catch (const Fault& f) {
    res.error = f.code;
    res.error_index = current;
    res.message = f.message;
    res.instructions = index + 1;
    return res;
  }
  // The dependency model takes the traces in program order.
  std::sort(traces.begin(), traces.end(),
            [](const Trace& a, const Trace& b) { return a.index < b.index; });
  res.instructions = index + 1;
  if (options.check_dependencies) {
    res.completion =
        DependencyModel(target_, traces, memory.size(), false, options.queue_depth).run();
    res.fine = DependencyModel(target_, traces, memory.size(), true, options.queue_depth).run();
    const DependencyCheck& chosen = options.fine_grain ? res.fine : res.completion;
    if (chosen.deadlock) {
      res.error = SimError::kDeadlock;
      res.error_index = chosen.deadlock_index;
      res.message =
          fmt::format("{} mode deadlock: {}", options.fine_grain ? "fine-grained" : "completion",
                      chosen.deadlock_detail);
    }
  }
  return res;
}

std::string describe_problems(const SimResult& r) {
  std::vector<std::string> lines;
  if (!r.ok()) {
    lines.push_back(fmt::format("error {} at instruction {}: {}", sim_error_name(r.error),
                                r.error_index, r.message));
  }
  const std::pair<const char*, const DependencyCheck*> modes[] = {{"completion", &r.completion},
                                                                  {"fine-grained", &r.fine}};
  for (const auto& [mode, d] : modes) {
    if (!d->ran) continue;
    if (d->deadlock) {
      lines.push_back(fmt::format("{} mode: deadlock at instruction {}: {}", mode,
                                  d->deadlock_index, d->deadlock_detail));
    }
    for (const Race& race : d->races) {
      lines.push_back(
          fmt::format("{} mode: {} race on {} address {}: instruction {} and {} are "
                      "not ordered by the semaphores",
                      mode, race.kind, race.memory, race.address, race.first, race.second));
    }
    if (d->race_count > static_cast<int64_t>(d->races.size())) {
      lines.push_back(fmt::format("{} mode: {} races in all", mode, d->race_count));
    }
    if (!d->deadlock && !d->balanced()) {
      for (int e = 0; e < isa::kEdges; ++e) {
        if (d->released[e] != d->acquired[e]) {
          lines.push_back(fmt::format("{} mode: edge {} released {} units, acquired {}", mode,
                                      isa::edge_name(Edge(e)), d->released[e], d->acquired[e]));
        }
      }
    }
  }
  return fmt::format("{}", fmt::join(lines, "\n"));
}

std::vector<Tensor<int8_t>> run_isa_backend(const Network& net, const HwTarget& target,
                                            const Tensor<int8_t>& input, IsaRunSummary* summary) {
  const Shape& want = net.input_shape;
  const bool batched = input.rank() == 4;
  const bool ok =
      input.shape() == want || (batched && input.dim(0) >= 1 &&
                                Shape(input.shape().begin() + 1, input.shape().end()) == want);
  if (!ok) {
    throw Error(fmt::format("input has shape [{}], network '{}' expects [{}] or [N, {}]",
                            fmt::join(input.shape(), ", "), net.name, fmt::join(want, ", "),
                            fmt::join(want, ", ")));
  }
  const int64_t count = batched ? input.dim(0) : 1;
  const int64_t per_image = shape_elements(want);
  std::vector<Tensor<int8_t>> result;
  for (size_t j = 0; j < net.output_count(); ++j) {
    Shape shape = net.output_shape(j);
    if (batched) shape.insert(shape.begin(), count);
    result.emplace_back(shape);
  }
  IsaRunSummary sum;
  std::map<int, Program> programs;
  const IsaSim sim(target);
  for (int64_t first = 0; first < count; first += target.pes) {
    const int batch = static_cast<int>(std::min<int64_t>(target.pes, count - first));
    auto it = programs.find(batch);
    const bool fresh = it == programs.end();
    if (fresh) {
      CompileOptions o;
      o.batch = batch;
      it = programs.emplace(batch, compile(net, target, o)).first;
      sum.image_bytes =
          std::max<int64_t>(sum.image_bytes, static_cast<int64_t>(it->second.image.size()));
    }
    const Program& prog = it->second;
    std::vector<uint8_t> memory = prog.image;
    for (int i = 0; i < batch; ++i) {
      const int8_t* src = input.data() + (first + i) * per_image;
      write_input(prog, memory, i, Tensor<int8_t>(want, std::vector<int8_t>(src, src + per_image)));
    }
    SimOptions options;
    // Every batch follows the semaphores, which the checked mode does: program
    // order is not a sequential order once the compiler moves a compute ahead
    // of the loads its later steps need (docs/compiler.md, Program order).
    options.check_dependencies = true;
    const SimResult r = sim.run(memory, options);
    const bool clean = r.ok() && r.completion.clean() && r.fine.clean() && r.completion.balanced();
    if (!clean) {
      throw Error(fmt::format("ISA simulation of network '{}' (images {}..{}) failed:\n{}",
                              net.name, first, first + batch - 1, describe_problems(r)));
    }
    for (size_t j = 0; j < result.size(); ++j) {
      for (int i = 0; i < batch; ++i) {
        const Tensor<int8_t> out = read_output(prog, memory, i, j);
        std::copy(out.values().begin(), out.values().end(),
                  result[j].values().begin() + (first + i) * out.size());
      }
    }
    ++sum.runs;
    sum.instructions += r.instructions;
    sum.beats += r.beats;
  }
  sum.programs = static_cast<int64_t>(programs.size());
  if (summary != nullptr) *summary = sum;
  return result;
}

}  // namespace strata
