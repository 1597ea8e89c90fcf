// SPDX-License-Identifier: Apache-2.0
// Cascade partitioning (strata/cascade.hpp, docs/cascade.md): every example
// network split into 2..4 stages where its cuts allow, each stage compiled,
// the chain run on the ISA simulator stage after stage and compared element
// by element with the golden model; the cut rules and their errors.
#include "strata/cascade.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/random_network.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

const std::string kExamples = std::string(STRATA_SOURCE_DIR) + "/examples/";

// `f` throws strata::Error whose message contains `part`.
void expect_refused(const std::function<void()>& f, const std::string& part) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    return;
  }
  ADD_FAILURE() << "expected strata::Error containing '" << part << "'";
}

class Cascade : public test::TempDirTest {
 protected:
  Network load(const std::string& name) {
    const std::string yaml = kExamples + name + ".yaml";
    generate_network(yaml, path(name), GenOptions{.seed = 3});
    return load_network(yaml, {path(name), true});
  }
};

// Every example that has cuts: K = 2 .. min(4, cuts + 1), two images each.
TEST_F(Cascade, ChainsOfEveryExampleEqualTheGoldenModel) {
  const HwTarget t = HwTarget::defaults();
  int chains = 0;
  for (const char* name :
       {"cifar10_quick", "lenet5", "strided_net", "residual_net", "inverted_residual_net"}) {
    SCOPED_TRACE(name);
    const Network net = load(name);
    for (int k = 2; k <= 4; ++k) {
      ChainProgram chain;
      try {
        chain = compile_chain(net, t, k);
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("can be cut only after op"), std::string::npos)
            << e.what();
        break;  // fewer cuts than k - 1
      }
      ASSERT_EQ(chain.stages.size(), size_t(k));
      EXPECT_EQ(chain.stages.front().first_layer, 0u);
      EXPECT_EQ(chain.stages.back().end_layer, net.layers.size());
      for (size_t s = 1; s < chain.stages.size(); ++s) {
        EXPECT_EQ(chain.stages[s].first_layer, chain.stages[s - 1].end_layer);
        EXPECT_GT(chain.stages[s - 1].transfers_out, 0);
      }
      EXPECT_GE(chain.balance_bound(), 1.0);
      EXPECT_LE(chain.balance_bound(), double(k) + 1e-9);
      const Tensor<int8_t> batch = random_images(net.input_shape, 2, 11 + k);
      const int64_t per = shape_elements(net.input_shape);
      for (int64_t i = 0; i < 2; ++i) {
        const Tensor<int8_t> img(
            net.input_shape,
            std::vector<int8_t>(batch.data() + i * per, batch.data() + (i + 1) * per));
        const ChainSimResult r = simulate_chain(chain, img);
        ASSERT_TRUE(r.ok()) << "stage " << r.failed_stage << ": " << r.stages.back().message;
        for (const SimResult& s : r.stages) {
          EXPECT_TRUE(s.completion.clean() && s.fine.clean()) << "dependencies of a stage";
        }
        const Tensor<int8_t> want = run_network(net, img);
        ASSERT_EQ(r.output.shape(), want.shape());
        for (int64_t e = 0; e < want.size(); ++e) {
          ASSERT_EQ(r.output[e], want[e]) << k << " stages, element " << e;
        }
      }
      ++chains;
    }
  }
  EXPECT_GE(chains, 4);
}

// Random networks (random_network.hpp) split into 2..4 stages wherever they
// can be: every chain runs on the ISA simulator equal to the golden model,
// with the dependencies of every stage clean in both modes (race-free: in
// fine-grained mode the receiver's computes count their input units in the
// order of its own input LOADs, not of the transfers). A network of several
// outputs is refused (a chain carries one map).
TEST_F(Cascade, RandomNetworkChainsAreExactAndRaceFree) {
  int chains = 0, several = 0;
  for (uint64_t seed = 1; seed <= 480; ++seed) {
    const std::string yaml = write(fmt::format("r{}.yaml", seed), random_network_yaml(seed));
    GeneratedNetwork g;
    try {
      g = load_generated(yaml, seed);
    } catch (const Error&) {
      continue;  // refused by the reader: not this test's subject
    }
    const Shape& shape = g.network.input_shape;
    const int64_t per = shape_elements(shape);
    const Tensor<int8_t> img(shape, std::vector<int8_t>(g.images.data(), g.images.data() + per));
    const Tensor<int8_t> want = run_network(g.network, img);
    if (g.network.output_count() > 1) {
      ++several;
      try {
        compile_chain(g.network, HwTarget::defaults(), 2);
        ADD_FAILURE() << "seed " << seed << ": a chain of a network of several outputs";
      } catch (const Error& e) {
        EXPECT_NE(e.message().find("outputs: a cascade chain carries one map"), std::string::npos)
            << e.message();
      }
      continue;
    }
    for (int k = 2; k <= 4; ++k) {
      ChainProgram chain;
      try {
        chain = compile_chain(g.network, HwTarget::defaults(), k);
      } catch (const Error&) {
        break;  // no more cuts (or a network the compiler refuses)
      }
      ++chains;
      const ChainSimResult r = simulate_chain(chain, img);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ", " << k << " stages: stage " << r.failed_stage
                          << ": " << r.stages.back().message;
      for (size_t st = 0; st < r.stages.size(); ++st) {
        ASSERT_TRUE(r.stages[st].completion.clean() && r.stages[st].fine.clean())
            << "seed " << seed << ", " << k << " stages: stage " << st
            << " has a race or a deadlock";
      }
      ASSERT_EQ(r.output.shape(), want.shape());
      for (int64_t e = 0; e < want.size(); ++e) {
        ASSERT_EQ(r.output[e], want[e]) << "seed " << seed << ", " << k << " stages, element " << e;
      }
    }
  }
  EXPECT_GE(chains, 100);
  EXPECT_GE(several, 50);
}

TEST_F(Cascade, ErrorsAreClear) {
  const HwTarget t = HwTarget::defaults();
  const Network net = load("cifar10_quick");
  expect_refused([&] { compile_chain(net, t, 5); }, "outside 1..4");
  expect_refused([&] { compile_chain(net, t, 0); }, "outside 1..4");
  expect_refused([&] { slice_network(net, 3, 3); }, "not a part");
  const Network res = load("residual_net");
  // A cut inside a residual block: the add reads a layer before the cut.
  bool refused = false;
  for (size_t cut = 1; cut < res.layers.size(); ++cut) {
    try {
      slice_network(res, cut, res.layers.size());
      slice_network(res, 0, cut);
    } catch (const Error& e) {
      refused = true;
      EXPECT_NE(std::string(e.what()).find("before the cut"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(refused) << "some cut of residual_net crosses a shortcut";
  // Too few cuts: the message names them (lenet5: conv+pool, conv+pool, fc, fc, fc), or
  // says that there is none.
  const Network lenet = load("lenet5");
  expect_refused([&] { compile_chain(lenet, t, 4); }, "instances; --instances 4 asked");
  const std::string one = path("one.yaml");
  std::ofstream(one) << "name: one\ninput: [4, 6, 6]\nlayers:\n"
                        "  - {name: c, type: conv, out_channels: 8, kernel: 3}\n";
  generate_network(one, path("one"), GenOptions{.seed = 3});
  const Network single = load_network(one, {path("one"), true});
  expect_refused([&] { compile_chain(single, t, 2); },
                 "network 'one' cannot be cut between its ops, so it runs on one instance only; "
                 "--instances 2 asked");
}

}  // namespace
}  // namespace strata
