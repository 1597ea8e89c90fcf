// SPDX-License-Identifier: Apache-2.0
// The bench reports (strata/bench_report.hpp) on figures made up here, no RTL:
// the comparison with the golden model and where it names a mismatch, the
// JSON fields and their sums, the tables, and the cascade report.
#include "strata/bench_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/network.hpp"

namespace strata {
namespace {

const std::string kCifar = std::string(STRATA_SOURCE_DIR) + "/examples/cifar10_quick.yaml";

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Network cifar() {
  Network net = load_network(kCifar, LoadOptions{"", false});
  GenOptions g;
  generate_parameters(net, g, random_images(net.input_shape, g.images, g.seed));
  return net;
}

// A run of `shape` whose op k took 100 * (k + 1) cycles, 10 of them stalled on memory.
RtlResult made_up_run(const Program& shape, bool fine) {
  RtlResult r;
  r.fine = fine;
  r.runs = 1;
  r.model = "fast";
  r.seconds = 0.5;
  r.work = op_work(shape);
  for (size_t k = 0; k < shape.ops.size(); ++k) {
    PerfCounts c{};
    c[perf_index(csr::kPerfCycles)] = 100 * (k + 1) * (fine ? 1 : 2);
    c[perf_index(csr::kPerfStallLoadMem)] = 10;
    r.per_op.push_back(c);
    for (size_t i = 0; i < c.size(); ++i) r.counters[i] += c[i];
  }
  return r;
}

TEST(BenchReport, CheckAgainstGoldenNamesTheFirstMismatch) {
  const Tensor<int8_t> want({2, 3, 4}, std::vector<int8_t>(24, 5));
  RtlResult r;
  r.outputs = {want, want};
  check_against_golden(r, {want, want});
  EXPECT_EQ(r.mismatches, 0);
  r.outputs[1][13] = 7;  // channel 1, row 0, column 1
  r.outputs[1][20] = 7;
  check_against_golden(r, {want, want});
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.first_mismatch,
            "image 1, output channel 1, row 0, column 1 (element 13): expected 5, got 7");
  r.outputs.pop_back();
  EXPECT_THROW(check_against_golden(r, {want, want}), Error);
  r.outputs = {Tensor<int8_t>({2, 4, 3}), want};
  EXPECT_THROW(check_against_golden(r, {want, want}), Error);
}

TEST(BenchReport, JsonFieldsAddUp) {
  const Network net = cifar();
  const HwTarget target = HwTarget::defaults();
  const Program shape = compile(net, target, {});
  BenchReport report{net,
                     target,
                     shape,
                     {"generated", "random", "both", 60, 0.0, 1},
                     1,
                     {made_up_run(shape, true), made_up_run(shape, false)},
                     {1234, 2345},
                     std::nullopt};
  const nlohmann::ordered_json j = bench_json(report);
  const uint64_t n = shape.ops.size();
  EXPECT_EQ(j.at("cycles").get<uint64_t>(), 50 * n * (n + 1));
  EXPECT_EQ(j.at("macs").get<int64_t>(), net.macs());
  EXPECT_DOUBLE_EQ(j.at("fine_speedup").get<double>(), 2.0);
  EXPECT_EQ(j.at("predicted_cycles").get<int64_t>(), 1234);
  EXPECT_EQ(j.at("modes").at("completion").at("predicted_cycles").get<int64_t>(), 2345);
  EXPECT_EQ(j.at("modes").at("fine").at("stalls").at("load_mem").get<uint64_t>(), 10 * n);
  EXPECT_EQ(j.at("config").at("mode"), "fine");
  EXPECT_EQ(j.at("layers").size(), n);
  EXPECT_FALSE(j.contains("sparse"));
  uint64_t layer_cycles = 0;
  for (const auto& l : j.at("layers")) {
    layer_cycles += l.at("cycles").get<uint64_t>();
    EXPECT_EQ(l.at("bound_cycles").get<int64_t>(),
              std::max(l.at("beats").get<int64_t>(), l.at("memory_cycles").get<int64_t>()));
  }
  EXPECT_EQ(layer_cycles, j.at("cycles").get<uint64_t>());
  EXPECT_EQ(bench_mismatch(report), "");
  report.results[1].mismatches = 1;
  report.results[1].first_mismatch = "image 0, somewhere";
  EXPECT_EQ(bench_mismatch(report),
            "RTL output differs from the golden model in 1 element (completion mode); first: "
            "image 0, somewhere");
}

TEST(BenchReport, TableHasEveryLayerAndMode) {
  const Network net = cifar();
  const HwTarget target = HwTarget::defaults();
  const Program shape = compile(net, target, {});
  const BenchReport report{net,   target,
                           shape, {"generated", "random", "fine", 60, 0.0, 1},
                           1,     {made_up_run(shape, true)},
                           {100}, std::nullopt};
  const std::string t = bench_table(report);
  for (const CompiledOp& op : shape.ops) EXPECT_TRUE(contains(t, op.name)) << op.name;
  EXPECT_TRUE(contains(t, "fine-grained (CTRL.FINE_GRAIN = 1) mode, per layer")) << t;
  EXPECT_TRUE(contains(t, "    total")) << t;
  EXPECT_TRUE(contains(t, "padded taps skipped")) << t;
  EXPECT_TRUE(contains(t, "simulation (fine mode): fast model")) << t;
  EXPECT_FALSE(contains(t, "completion")) << t;
  EXPECT_FALSE(contains(t, "sparse build")) << t;
}

TEST(BenchReport, ChainReport) {
  const Network net = cifar();
  const HwTarget target = HwTarget::defaults();
  ChainBenchReport report{net, target, {"generated", "random", "fine", 60, 0.0, 1}, true, 2,
                          20,  {}};
  for (int k : {1, 2}) {
    ChainMeasure m;
    m.instances = k;
    m.chain = compile_chain(net, target, k);
    m.cycles = 1000 / static_cast<uint64_t>(k);
    m.image_start = {0, 100};
    m.image_done = {600, 1000 / static_cast<uint64_t>(k)};
    m.stage_busy.assign(4, 100);
    report.measures.push_back(std::move(m));
  }
  const nlohmann::ordered_json j = chain_bench_json(report);
  ASSERT_EQ(j.at("runs").size(), 2u);
  EXPECT_DOUBLE_EQ(j.at("runs")[1].at("speedup").get<double>(), 2.0);
  EXPECT_EQ(j.at("runs")[1].at("stages").size(), 2u);
  EXPECT_EQ(j.at("runs")[0].at("latency_first").get<uint64_t>(), 600u);
  const std::string t = chain_bench_table(report);
  EXPECT_TRUE(contains(t, "cascade: 2 stages")) << t;
  EXPECT_TRUE(contains(t, "20 output elements of each run compared")) << t;
  EXPECT_TRUE(contains(chain_partition(report.measures[0].chain, net), "cascade: 1 stage,"));
}

}  // namespace
}  // namespace strata
