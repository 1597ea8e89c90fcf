// SPDX-License-Identifier: Apache-2.0
// AXI4 slave memory model for Verilated benches.
//
// Attaches to a model's AXI4 master ports, named m_axi_<signal> (AR, R, AW,
// W, B; IDs, INCR bursts), and follows the cycle discipline of
// sim_fixture.hpp: drive() at the drive point (sets ARREADY, AWREADY, WREADY,
// R and B), sample() at the sample point after settle() (records the
// handshakes that fire at the coming edge and checks the protocol).
//
// Behaviour:
//   - byte-addressed sparse memory (SparseMemory, 4 KB pages; unwritten
//     bytes read as a background function of the address, 0 by default);
//   - read data is captured at the AR handshake and returned read_latency
//     cycles later, one beat per r_interval cycles at most (default 1; W
//     likewise with w_interval), several bursts outstanding
//     (max_reads); with interleave, beats of bursts with different IDs are
//     mixed in random order (same-ID bursts stay in order, as AXI requires);
//   - a write burst is committed to memory when its B response is presented,
//     write_latency cycles after its last W beat; W beats may arrive before
//     their AW; B responses in AW order;
//   - random stalls: ARREADY / AWREADY / WREADY low, R beats and B held back,
//     each with its own probability per cycle;
//   - error injection: address regions that answer SLVERR or DECERR to reads
//     and/or writes (a failed write changes nothing);
//   - protocol checks, each a failure (bench_check.hpp) with the cycle:
//     INCR only, full-width beats, aligned addresses, burst length <=
//     max_burst, no burst crossing a 4 KB boundary, WLAST exactly on each
//     burst's last beat, VALID held and payload stable until READY on AR, AW
//     and W, no W beat without a burst to belong to at the end (check_idle());
//   - counters (AxiMemStats): beats, bytes, bursts, busy cycles, first AR and
//     first / last R cycle per ID, first / last W cycle, most bursts outstanding.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "bench_check.hpp"

namespace strata::tb {

// ---------------------------------------------------------------------------
// Port access: bytes of a Verilated port of any width (CData..QData, VlWide).

template <class T>
requires std::is_integral_v<T>
void port_set_bytes(T& port, const uint8_t* bytes, int count) {
  uint64_t v = 0;
  for (int i = 0; i < count; ++i) v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  port = static_cast<T>(v);
}

template <class T>
requires std::is_integral_v<T>
void port_get_bytes(const T& port, uint8_t* bytes, int count) {
  const auto v = static_cast<uint64_t>(port);
  for (int i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(v >> (8 * i));
}

template <std::size_t W>
void port_set_bytes(VlWide<W>& port, const uint8_t* bytes, int count) {
  for (std::size_t w = 0; w < W; ++w) port[w] = 0;
  for (int i = 0; i < count; ++i) port[i / 4] |= static_cast<uint32_t>(bytes[i]) << (8 * (i % 4));
}

template <std::size_t W>
void port_get_bytes(const VlWide<W>& port, uint8_t* bytes, int count) {
  for (int i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(port[i / 4] >> (8 * (i % 4)));
}

template <class T>
requires std::is_integral_v<T>
constexpr int port_bytes(const T&) { return sizeof(T); }
template <std::size_t W>
constexpr int port_bytes(const VlWide<W>&) {
  return static_cast<int>(4 * W);
}

// ---------------------------------------------------------------------------

// Byte-addressed sparse memory in 4 KB pages.
class SparseMemory {
 public:
  static constexpr uint64_t kPage = 4096;

  uint8_t read(uint64_t addr) const {
    const auto it = pages_.find(addr / kPage);
    if (it == pages_.end()) return background_ ? background_(addr) : 0;
    return (*it->second)[addr % kPage];
  }
  void write(uint64_t addr, uint8_t value) { page(addr)[addr % kPage] = value; }
  void write_block(uint64_t addr, const std::vector<uint8_t>& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) write(addr + i, bytes[i]);
  }
  std::vector<uint8_t> read_block(uint64_t addr, std::size_t count) const {
    std::vector<uint8_t> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = read(addr + i);
    return out;
  }
  // Value of bytes never written (default 0).
  void set_background(std::function<uint8_t(uint64_t)> f) { background_ = std::move(f); }
  // Page numbers holding written data, ascending.
  std::vector<uint64_t> pages() const {
    std::vector<uint64_t> out;
    for (const auto& [p, _] : pages_) out.push_back(p);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::array<uint8_t, kPage>& page(uint64_t addr) {
    auto& p = pages_[addr / kPage];
    if (!p) {
      p = std::make_unique<std::array<uint8_t, kPage>>();
      const uint64_t base = addr / kPage * kPage;
      for (uint64_t i = 0; i < kPage; ++i) (*p)[i] = background_ ? background_(base + i) : 0;
    }
    return *p;
  }

  std::unordered_map<uint64_t, std::unique_ptr<std::array<uint8_t, kPage>>> pages_;
  std::function<uint8_t(uint64_t)> background_;
};

struct AxiMemConfig {
  unsigned read_latency = 60;  // cycles from the AR handshake to the first R beat
  unsigned write_latency = 4;  // cycles from a burst's last W beat to its B
  unsigned max_reads = 64;     // read bursts accepted and not finished (ARREADY low beyond)
  unsigned max_writes = 64;    // write bursts accepted and not answered
  unsigned max_burst = 16;     // longest legal burst (beats)
  unsigned r_interval = 1;     // bandwidth: at most one R beat every r_interval cycles
  unsigned w_interval = 1;     // ... one W beat (WREADY) every w_interval cycles
  double ar_stall = 0.0;       // probability of ARREADY low in a cycle
  double aw_stall = 0.0;       // ... AWREADY
  double w_stall = 0.0;        // ... WREADY
  double r_gap = 0.0;          // probability that a ready R beat is held back a cycle
  double b_gap = 0.0;          // ... a ready B response
  bool interleave = false;     // mix R beats of bursts with different IDs
};

enum class AxiResp : uint8_t { kOkay = 0, kExOkay = 1, kSlvErr = 2, kDecErr = 3 };

// Bytes [begin, end) answer `resp` to reads and/or writes that touch them.
struct ErrorRegion {
  uint64_t begin = 0;
  uint64_t end = 0;
  AxiResp resp = AxiResp::kSlvErr;
  bool reads = true;
  bool writes = true;
};

struct AxiMemStats {
  uint64_t read_bursts = 0, read_beats = 0, read_bytes = 0;
  uint64_t write_bursts = 0, write_beats = 0, write_bytes = 0;  // bytes with WSTRB set
  uint64_t r_busy_cycles = 0;                                   // cycles with an R handshake
  uint64_t w_busy_cycles = 0;                                   // cycles with a W handshake
  unsigned max_reads_outstanding = 0;
  unsigned max_writes_outstanding = 0;
  std::map<uint32_t, uint64_t> first_ar_cycle;   // per ID
  std::map<uint32_t, uint64_t> first_r_cycle;    // per ID
  std::map<uint32_t, uint64_t> last_r_cycle;     // per ID
  uint64_t first_w_cycle = 0, last_w_cycle = 0;  // of W handshakes (valid when write_beats > 0)
  std::map<uint32_t, uint64_t> beats_by_id;      // R beats per ID
};

template <class Model>
class AxiMemModel {
 public:
  AxiMemModel(Model& dut, SparseMemory& mem, std::mt19937_64& rng, AxiMemConfig cfg = {})
      : dut_(dut), mem_(mem), rng_(rng), cfg_(cfg), beat_bytes_(port_bytes(dut.m_axi_rdata)) {}

  AxiMemConfig& config() { return cfg_; }
  const AxiMemStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  void add_error_region(const ErrorRegion& r) { errors_.push_back(r); }
  void clear_error_regions() { errors_.clear(); }
  int beat_bytes() const { return beat_bytes_; }
  uint64_t cycle() const { return cycle_; }
  int protocol_errors() const { return protocol_errors_; }
  // Where protocol violations are reported (bench_check.hpp).
  void set_failure_handler(FailureHandler handler) { on_failure_ = std::move(handler); }
  std::size_t reads_outstanding() const { return reads_.size(); }
  std::size_t writes_outstanding() const { return writes_.size() + bq_.size(); }

  // Drive point: this cycle's slave outputs.
  void drive() {
    auto& d = dut_;
    d.m_axi_arready = reads_.size() < cfg_.max_reads && !chance(cfg_.ar_stall);
    d.m_axi_awready = writes_.size() < cfg_.max_writes && !chance(cfg_.aw_stall);
    d.m_axi_wready = !chance(cfg_.w_stall) && cycle_ >= next_w_cycle_;
    drive_r();
    drive_b();
  }

  // Sample point (after settle): handshakes of this cycle, protocol checks.
  void sample() {
    auto& d = dut_;
    check_stable(ar_prev_, d.m_axi_arvalid, d.m_axi_arready, ar_payload(), "AR");
    check_stable(aw_prev_, d.m_axi_awvalid, d.m_axi_awready, aw_payload(), "AW");
    check_stable(w_prev_, d.m_axi_wvalid, d.m_axi_wready, w_payload(), "W");
    if (d.m_axi_arvalid && d.m_axi_arready) accept_ar();
    if (d.m_axi_awvalid && d.m_axi_awready) accept_aw();
    if (d.m_axi_wvalid && d.m_axi_wready) accept_w();
    if (d.m_axi_rvalid) {
      if (d.m_axi_rready) {
        finish_r_beat();
        r_hold_ = false;
      } else {
        r_hold_ = true;
      }
    }
    if (d.m_axi_bvalid) {
      if (d.m_axi_bready) {
        bq_.pop_front();
        b_hold_ = false;
      } else {
        b_hold_ = true;
      }
    }
    match_writes();
    ++cycle_;
  }

  // At the end of a test: nothing may be half done.
  void check_idle() {
    if (!w_early_.empty()) {
      fail(std::to_string(w_early_.size()) + " W beats without a write burst");
    }
    for (const auto& w : writes_) {
      fail("write burst at 0x" + hex(w.addr) + " has " + std::to_string(w.got) + " of " +
           std::to_string(w.beats) + " W beats");
    }
  }

 private:
  struct ReadBurst {
    uint64_t seq;
    uint32_t id;
    uint64_t addr;
    unsigned beats;
    unsigned sent = 0;
    uint64_t ready_cycle;
    std::vector<uint8_t> data;
    AxiResp resp;
  };
  struct WriteBurst {
    uint32_t id;
    uint64_t addr;
    unsigned beats;
    unsigned got = 0;
    std::vector<uint8_t> data, strb;
    AxiResp resp = AxiResp::kOkay;
  };
  struct WBeat {
    std::vector<uint8_t> data, strb;
    bool last;
  };
  struct BResp {
    uint32_t id;
    AxiResp resp;
    uint64_t ready_cycle;
    bool committed = false;
    WriteBurst burst;
  };
  struct Prev {
    bool waiting = false;
    std::vector<uint8_t> payload;
  };

  bool chance(double p) {
    return p > 0.0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p;
  }

  static std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
  }

  void fail(const std::string& what) {
    // Every violation counts; the first few are reported (a stuck bus would
    // repeat the same one every cycle).
    if (++protocol_errors_ <= 10) {
      report_failure(on_failure_,
                     "AXI protocol (memory model, cycle " + std::to_string(cycle_) + "): " + what);
    }
  }

  AxiResp region_resp(uint64_t begin, uint64_t end, bool is_read) const {
    for (const auto& r : errors_) {
      if ((is_read ? r.reads : r.writes) && begin < r.end && r.begin < end) return r.resp;
    }
    return AxiResp::kOkay;
  }

  void check_burst(const char* ch, uint64_t addr, unsigned len, unsigned size, unsigned burst) {
    const unsigned beats = len + 1;
    if (burst != 1) fail(std::string(ch) + " burst type " + std::to_string(burst) + " is not INCR");
    if ((1u << size) != static_cast<unsigned>(beat_bytes_)) {
      fail(std::string(ch) + " size " + std::to_string(size) + " is not full width");
    }
    if (addr % beat_bytes_ != 0) fail(std::string(ch) + " address 0x" + hex(addr) + " unaligned");
    if (beats > cfg_.max_burst) {
      fail(std::string(ch) + " burst of " + std::to_string(beats) + " beats > " +
           std::to_string(cfg_.max_burst));
    }
    const uint64_t last = addr + uint64_t{beats} * beat_bytes_ - 1;
    if (addr / 4096 != last / 4096) {
      fail(std::string(ch) + " burst 0x" + hex(addr) + "..0x" + hex(last) + " crosses 4 KB");
    }
  }

  template <class T>
  static void append(std::vector<uint8_t>& v, const T& port) {
    std::vector<uint8_t> b(port_bytes(port));
    port_get_bytes(port, b.data(), static_cast<int>(b.size()));
    v.insert(v.end(), b.begin(), b.end());
  }

  std::vector<uint8_t> ar_payload() const {
    std::vector<uint8_t> p;
    append(p, dut_.m_axi_araddr);
    p.push_back(dut_.m_axi_arlen);
    p.push_back(dut_.m_axi_arsize);
    p.push_back(dut_.m_axi_arburst);
    p.push_back(static_cast<uint8_t>(dut_.m_axi_arid));
    return p;
  }
  std::vector<uint8_t> aw_payload() const {
    std::vector<uint8_t> p;
    append(p, dut_.m_axi_awaddr);
    p.push_back(dut_.m_axi_awlen);
    p.push_back(dut_.m_axi_awsize);
    p.push_back(dut_.m_axi_awburst);
    p.push_back(static_cast<uint8_t>(dut_.m_axi_awid));
    return p;
  }
  std::vector<uint8_t> w_payload() const {
    std::vector<uint8_t> p;
    append(p, dut_.m_axi_wdata);
    append(p, dut_.m_axi_wstrb);
    p.push_back(dut_.m_axi_wlast);
    return p;
  }

  void check_stable(Prev& prev, bool valid, bool ready, std::vector<uint8_t> payload,
                    const char* ch) {
    if (prev.waiting) {
      if (!valid)
        fail(std::string(ch) + "VALID dropped before READY");
      else if (payload != prev.payload)
        fail(std::string(ch) + " payload changed before READY");
    }
    prev.waiting = valid && !ready;
    prev.payload = std::move(payload);
  }

  void accept_ar() {
    auto& d = dut_;
    ReadBurst b;
    b.seq = next_seq_++;
    b.id = static_cast<uint32_t>(d.m_axi_arid);
    b.addr = static_cast<uint64_t>(d.m_axi_araddr);
    b.beats = static_cast<unsigned>(d.m_axi_arlen) + 1;
    check_burst("AR", b.addr, d.m_axi_arlen, d.m_axi_arsize, d.m_axi_arburst);
    const uint64_t bytes = uint64_t{b.beats} * beat_bytes_;
    b.data = mem_.read_block(b.addr, bytes);  // captured now: worst-case ordering
    b.resp = region_resp(b.addr, b.addr + bytes, true);
    b.ready_cycle = cycle_ + cfg_.read_latency;
    reads_.push_back(std::move(b));
    ++stats_.read_bursts;
    stats_.max_reads_outstanding =
        std::max<unsigned>(stats_.max_reads_outstanding, static_cast<unsigned>(reads_.size()));
    stats_.first_ar_cycle.try_emplace(reads_.back().id, cycle_);
  }

  void drive_r() {
    auto& d = dut_;
    if (!r_hold_) {
      r_cur_.reset();
      // Candidates: bursts whose data is due; per ID only the oldest.
      std::vector<uint64_t> cand;
      std::vector<uint32_t> seen;
      for (const auto& b : reads_) {
        if (std::find(seen.begin(), seen.end(), b.id) != seen.end()) continue;
        seen.push_back(b.id);
        if (b.ready_cycle <= cycle_) cand.push_back(b.seq);
        if (!cfg_.interleave) break;  // strictly in acceptance order
      }
      // Without interleaving a started burst finishes first; with it, any due burst.
      if (!cand.empty() && cycle_ >= next_r_cycle_ && !chance(cfg_.r_gap)) {
        std::size_t pick = 0;
        if (cfg_.interleave) {
          pick = std::uniform_int_distribution<std::size_t>(0, cand.size() - 1)(rng_);
        }
        r_cur_ = cand[pick];
      }
    }
    d.m_axi_rvalid = 0;
    d.m_axi_rlast = 0;
    if (!r_cur_) return;
    const ReadBurst& b = *find_read(*r_cur_);
    d.m_axi_rvalid = 1;
    d.m_axi_rid = b.id;
    port_set_bytes(d.m_axi_rdata, b.data.data() + uint64_t{b.sent} * beat_bytes_, beat_bytes_);
    d.m_axi_rresp = static_cast<uint8_t>(b.resp);
    d.m_axi_rlast = b.sent + 1 == b.beats;
  }

  typename std::deque<ReadBurst>::iterator find_read(uint64_t seq) {
    return std::find_if(reads_.begin(), reads_.end(), [&](const auto& b) { return b.seq == seq; });
  }

  void finish_r_beat() {
    auto it = find_read(*r_cur_);
    ++it->sent;
    ++stats_.read_beats;
    stats_.read_bytes += beat_bytes_;
    ++stats_.r_busy_cycles;
    next_r_cycle_ = cycle_ + cfg_.r_interval;
    ++stats_.beats_by_id[it->id];
    stats_.first_r_cycle.try_emplace(it->id, cycle_);
    stats_.last_r_cycle[it->id] = cycle_;
    if (it->sent == it->beats) reads_.erase(it);
    r_cur_.reset();
  }

  void accept_aw() {
    auto& d = dut_;
    WriteBurst w;
    w.id = static_cast<uint32_t>(d.m_axi_awid);
    w.addr = static_cast<uint64_t>(d.m_axi_awaddr);
    w.beats = static_cast<unsigned>(d.m_axi_awlen) + 1;
    check_burst("AW", w.addr, d.m_axi_awlen, d.m_axi_awsize, d.m_axi_awburst);
    w.resp = region_resp(w.addr, w.addr + uint64_t{w.beats} * beat_bytes_, false);
    writes_.push_back(std::move(w));
    ++stats_.write_bursts;
    stats_.max_writes_outstanding = std::max<unsigned>(
        stats_.max_writes_outstanding, static_cast<unsigned>(writes_.size() + bq_.size()));
  }

  void accept_w() {
    auto& d = dut_;
    WBeat beat;
    append(beat.data, d.m_axi_wdata);
    append(beat.strb, d.m_axi_wstrb);
    beat.last = d.m_axi_wlast;
    w_early_.push_back(std::move(beat));
    if (stats_.write_beats == 0) stats_.first_w_cycle = cycle_;
    stats_.last_w_cycle = cycle_;
    ++stats_.write_beats;
    ++stats_.w_busy_cycles;
    next_w_cycle_ = cycle_ + cfg_.w_interval;
  }

  // W beats go to the oldest write burst still missing data.
  void match_writes() {
    while (!w_early_.empty()) {
      auto it = std::find_if(writes_.begin(), writes_.end(),
                             [](const WriteBurst& w) { return w.got < w.beats; });
      if (it == writes_.end()) return;
      WBeat beat = std::move(w_early_.front());
      w_early_.pop_front();
      const bool want_last = it->got + 1 == it->beats;
      if (beat.last != want_last) {
        fail("WLAST " + std::to_string(beat.last) + " on beat " + std::to_string(it->got) +
             " of a " + std::to_string(it->beats) + "-beat burst at 0x" + hex(it->addr));
      }
      for (int i = 0; i < beat_bytes_; ++i) {
        const bool en = (beat.strb[i / 8] >> (i % 8)) & 1;
        it->data.push_back(beat.data[i]);
        it->strb.push_back(en);
        if (en) ++stats_.write_bytes;
      }
      ++it->got;
      if (it->got == it->beats) {
        // Bursts complete in AW order (the oldest incomplete one gets the data).
        bq_.push_back({it->id, it->resp, cycle_ + cfg_.write_latency, false, *it});
        writes_.erase(it);
      }
    }
  }

  void drive_b() {
    auto& d = dut_;
    d.m_axi_bvalid = 0;
    if (bq_.empty()) return;
    BResp& b = bq_.front();
    if (!b_hold_ && (b.ready_cycle > cycle_ || chance(cfg_.b_gap))) return;
    if (!b.committed) {
      b.committed = true;
      if (b.resp == AxiResp::kOkay) {
        for (std::size_t i = 0; i < b.burst.data.size(); ++i) {
          if (b.burst.strb[i]) mem_.write(b.burst.addr + i, b.burst.data[i]);
        }
      }
    }
    d.m_axi_bvalid = 1;
    d.m_axi_bid = b.id;
    d.m_axi_bresp = static_cast<uint8_t>(b.resp);
  }

  Model& dut_;
  SparseMemory& mem_;
  std::mt19937_64& rng_;
  AxiMemConfig cfg_;
  int beat_bytes_;
  AxiMemStats stats_;
  std::vector<ErrorRegion> errors_;
  std::deque<ReadBurst> reads_;
  std::deque<WriteBurst> writes_;
  std::deque<WBeat> w_early_;
  std::deque<BResp> bq_;
  std::optional<uint64_t> r_cur_;
  bool r_hold_ = false;
  bool b_hold_ = false;
  Prev ar_prev_, aw_prev_, w_prev_;
  uint64_t next_seq_ = 0;
  uint64_t next_r_cycle_ = 0, next_w_cycle_ = 0;  // bandwidth limits
  uint64_t cycle_ = 0;
  int protocol_errors_ = 0;
  FailureHandler on_failure_;
};

}  // namespace strata::tb
