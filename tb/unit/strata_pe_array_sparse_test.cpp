// strata_pe_array with Sparse = 1: P PEs with DIFFERENT pruned weights share
// one broadcast stream of activation windows, so the packed cycle sequence must
// be common to all of them (seeds/002's inter-tile step: a dense cycle is
// skipped only when it is empty in every tile). The reference packer packs
// all PEs' schedules together; every PE's result must equal its dense dot
// product (strata::fc_acc), and the common schedule must still save cycles.
#include <Vstrata_pe_array.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <vector>

#include "pe_bench_util.hpp"
#include "stager_packer.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {
namespace {

using Cfg = ComputeConfig;
static_assert(Cfg::kSparse, "this bench is for strata_pe_array with Sparse = 1");
constexpr int N = Cfg::kLanes;
constexpr int P = Cfg::kPes;

class StrataPeArraySparse : public ComputeBench<Vstrata_pe_array> {
 protected:
  // Packs P schedules together, runs `outputs` windows sequences, compares
  // every PE with its dense result; returns the common packed length.
  int run_sparsity(double sparsity, int t_dense, int outputs, double gap, double stall) {
    std::vector<Schedule> w;
    for (int p = 0; p < P; ++p) w.push_back(random_schedule(t_dense, sparsity));
    const Packed pk = pack_schedules(w, N);
    std::vector<CacheWrite> writes;
    for (int p = 0; p < P; ++p) {
      EXPECT_EQ(unpack_schedule(pk, p, t_dense, N), w[p]) << "packer lost a weight of PE " << p;
      for (int k = 0; k < pk.cycles(); ++k) {
        writes.push_back({uint64_t{1} << p, static_cast<uint32_t>(k),
                          CacheWord{pk.value[p][k], pk.sel[p][k]}});
      }
    }
    load(writes);

    std::vector<ComputeBeat> beats;
    std::vector<Result> want;
    const std::vector<int8_t> zeros(N, 0);
    for (int o = 0; o < outputs; ++o) {
      Schedule act(t_dense);
      for (auto& row : act) row = rand_vec(N);
      std::vector<int32_t> bias(P);
      for (auto& b : bias) b = static_cast<int32_t>(rand_int(-(1 << 24), 1 << 24));
      for (int k = 0; k < pk.cycles(); ++k) {
        const int b = pk.base[k];
        ComputeBeat beat;
        beat.op = act[b];
        const auto& next = b + 1 < t_dense ? act[b + 1] : zeros;
        beat.op.insert(beat.op.end(), next.begin(), next.end());
        beat.addr = static_cast<uint32_t>(k);
        beat.first = k == 0;
        beat.last = k == pk.cycles() - 1;
        beat.bias = bias;
        beats.push_back(beat);
      }
      const int64_t len = int64_t{t_dense} * N;
      Tensor<int8_t> in({len});
      for (int t = 0; t < t_dense; ++t) {
        for (int n = 0; n < N; ++n) in[int64_t{t} * N + n] = act[t][n];
      }
      Result r(P);
      for (int p = 0; p < P; ++p) {
        Tensor<int8_t> wt({1, len});
        for (int t = 0; t < t_dense; ++t) {
          for (int n = 0; n < N; ++n) wt[int64_t{t} * N + n] = w[p][t][n];
        }
        r[p] = fc_acc(in, wt, Tensor<int32_t>({1}, {bias[p]}))[0];
      }
      want.push_back(r);
    }
    RunOptions opt;
    opt.gap = gap;
    opt.stall = stall;
    RunStats st;
    const auto got = run(beats, want.size(), opt, &st);
    expect_results(got, want, [&](size_t i, int p) {
      return fmt::format("sparsity {:.0f}%, output {}, PE {}", sparsity * 100, i, p);
    });
    EXPECT_FALSE(m().err_o);
    if (gap == 0.0 && stall == 0.0) {
      EXPECT_EQ(st.cycles, static_cast<uint64_t>(outputs) * pk.cycles() + Cfg::kLatency);
    }
    std::cout << fmt::format("[ STAGER   ] {} PEs, sparsity {:3.0f}%: {} dense cycles -> {} "
                             "packed (common to all PEs)\n",
                             P, sparsity * 100, t_dense, pk.cycles());
    return pk.cycles();
  }
};

TEST_F(StrataPeArraySparse, DenseWeightsKeepEveryCycle) {
  EXPECT_EQ(run_sparsity(0.0, 48, 250, 0.2, 0.2), 48);
}

TEST_F(StrataPeArraySparse, HalfSparseMatchesDense) {
  EXPECT_LE(run_sparsity(0.5, 48, 250, 0.3, 0.3), 48);
}

// The skip must suit every PE at once, so it saves less than for one PE, but
// at 90 % zeros nearly every second dense cycle still goes.
TEST_F(StrataPeArraySparse, NinetyPercentSparseSavesCyclesForAllPes) {
  EXPECT_LE(run_sparsity(0.9, 64, 250, 0.0, 0.0), 64 * 6 / 10);
}

}  // namespace
}  // namespace strata::tb
