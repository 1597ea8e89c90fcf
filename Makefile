# SPDX-License-Identifier: Apache-2.0
# Strata: the short commands a user types. CMake does the real work in build/.
#   make demo    cifar10_quick: golden model, RTL (checked), per-layer cycles table [TRACE=1];
#                builds only the strata command with the fast model on a fresh build directory
#   make test    build everything and run the whole test suite (ctest)
#   make setup   install what a fresh Debian 12 machine lacks (idempotent)
#   make lint    Verilator -Wall lint of rtl/
#   make wave TEST=<Suite.Test>   run one bench test with an FST trace
#   make regress [SEEDS=N] [LABELS=..] [SHARD=i/n] [COVERAGE=1]   nightly regression
#   make perf    the figures of docs/performance.md (bench JSON + utilisation plot)
#   make models  torchvision resnet18, mobilenet_v2, mnasnet0_5, squeezenet1_0, densenet121, shufflenet_v2_x0_5,
#                alexnet, mobilenet_v3_small, efficientnet_b0; detectors yolov3_tiny (416), yolov8n (320)
#                (random weights) -> ONNX -> strata import
#   make sanitize   the software tests built with ASan + UBSan (in $(BUILD)-asan)
#   make fuzz [FUZZ_TIME=s] [FUZZERS=..]   libFuzzer harnesses of sw/fuzz, each for FUZZ_TIME s
#   make bitstream BOARD=ulx3s   the SoC's bitstream for the ULX3S (docs/board.md)
.PHONY: all setup build test demo lint wave clean regen-data perf

BUILD   ?= build
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
STRATA  := $(BUILD)/sw/strata
DEMO_NET := examples/cifar10_quick.yaml
DEMO_DIR := $(BUILD)/examples/cifar10_quick

all: build

setup:
	@scripts/setup.sh

# The full build: the strata command with every Verilated model (the checked
# and fast models of config/default.yaml, one per further configuration of
# STRATA_RTL_CONFIGS, the cascade models), the benches and the test suite.
FULL_CONFIG := -DSTRATA_CLI_MODELS=all -DBUILD_TESTING=ON
# What make demo configures a fresh build directory with: the strata command
# with the fast model of config/default.yaml alone, no tests (sim/CMakeLists.txt).
DEMO_CONFIG := -DSTRATA_CLI_MODELS=fast -DBUILD_TESTING=OFF

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(FULL_CONFIG) $(CMAKE_FLAGS)

# A build directory that make demo configured is configured back to the full
# build first; the models and tests it lacks are then built.
build: setup $(BUILD)/CMakeCache.txt
	@grep -qx 'STRATA_CLI_MODELS:STRING=all' $(BUILD)/CMakeCache.txt && \
	  grep -qx 'BUILD_TESTING:BOOL=ON' $(BUILD)/CMakeCache.txt || \
	  { echo "cmake -S . -B $(BUILD) $(FULL_CONFIG)"; cmake -S . -B $(BUILD) $(FULL_CONFIG); }
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# make demo [TRACE=1]: golden model, then the Verilated accelerator checked
# element by element against it, then the per-layer benchmark (both scheduling
# modes). TRACE=1 also writes an FST of the RTL run (GTKWave layout:
# tb/waves/strata_top.gtkw).
TRACE ?= 0
DEMO_FST := $(BUILD)/waves/demo_cifar10_quick.fst

# It builds only what it runs: the strata command with the accelerator model
# it drives (the fast one; --check compares its output with the golden model).
# A fresh build directory is configured for that alone (DEMO_CONFIG): 3 min
# 45 s from a fresh clone on two cores (docs/cli.md); make build adds
# everything else. In a build directory configured otherwise, strata links
# whatever models that directory has.
demo: setup
	test -f $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(DEMO_CONFIG) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target strata
	$(STRATA) gen $(DEMO_NET) --seed 1 --out $(DEMO_DIR)
	$(STRATA) info $(DEMO_NET) --weights $(DEMO_DIR)
	$(STRATA) run $(DEMO_NET) --weights $(DEMO_DIR) \
	  --input $(DEMO_DIR)/input.npy --output $(BUILD)/demo_golden.npy
	$(STRATA) run $(DEMO_NET) --weights $(DEMO_DIR) --backend rtl --check \
	  --input $(DEMO_DIR)/input.npy --output $(BUILD)/demo_output.npy \
	  $(if $(filter-out 0,$(TRACE)),--trace $(DEMO_FST))
	cmp $(BUILD)/demo_golden.npy $(BUILD)/demo_output.npy
	@echo "RTL output file identical to the golden model's"
	$(STRATA) bench $(DEMO_NET) --weights $(DEMO_DIR) --input $(DEMO_DIR)/input.npy \
	  --json $(BUILD)/demo_bench.json

# docs/performance.md: cifar10_quick benchmarks (both scheduling modes) at
# batch 1 and 8, and the per-layer utilisation plot made from their JSON.
PERF_DIR := $(BUILD)/perf
perf: build
	$(STRATA) gen $(DEMO_NET) --seed 1 --out $(DEMO_DIR)
	mkdir -p $(PERF_DIR)
	$(STRATA) bench $(DEMO_NET) --weights $(DEMO_DIR) --batch 1 --json $(PERF_DIR)/cifar10_quick_b1.json
	$(STRATA) bench $(DEMO_NET) --weights $(DEMO_DIR) --batch 8 --json $(PERF_DIR)/cifar10_quick_b8.json
	/usr/bin/python3 scripts/plot_utilization.py docs/performance_utilization.png \
	  $(PERF_DIR)/cifar10_quick_b1.json $(PERF_DIR)/cifar10_quick_b8.json

# torchvision's resnet18, mobilenet_v2, mnasnet0_5, squeezenet1_0, densenet121, shufflenet_v2_x0_5,
# alexnet, mobilenet_v3_small and efficientnet_b0 at 224 x 224, randomly initialised
# (nothing is downloaded), exported to ONNX with synthetic calibration images,
# then imported (docs/performance.md, "Imported networks"). Not part of make test.
MODELS_DIR := $(BUILD)/models
MODELS := resnet18 mobilenet_v2 mnasnet0_5 squeezenet1_0 densenet121 shufflenet_v2_x0_5 alexnet \
          mobilenet_v3_small efficientnet_b0
.PHONY: models
models: export STRATA_SETUP_MODELS := 1
models: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target strata
	/usr/bin/python3 scripts/export_torchvision.py $(MODELS_DIR)
	for m in $(MODELS); do $(STRATA) import $(MODELS_DIR)/$$m.onnx \
	  --calibration $(MODELS_DIR)/calibration.npy --out $(MODELS_DIR) || exit 1; done
	for m in $(MODELS); do $(STRATA) info $(MODELS_DIR)/$$m.yaml || exit 1; done
	/usr/bin/python3 scripts/export_detectors.py $(MODELS_DIR)
	$(STRATA) import $(MODELS_DIR)/yolov3_tiny.onnx --calibration $(MODELS_DIR)/calibration_416.npy \
	  --out $(MODELS_DIR)/yolov3_tiny_416
	$(STRATA) import $(MODELS_DIR)/yolov8n.onnx --calibration $(MODELS_DIR)/calibration_320.npy \
	  --out $(MODELS_DIR)/yolov8n_320

lint: build
	cd $(BUILD) && ctest -L lint --output-on-failure

# Run one testbench test with tracing; TEST is a gtest name (Suite.Test).
wave: build
	@test -n "$(TEST)" || { echo "usage: make wave TEST=<Suite.Test>"; exit 2; }
	@scripts/wave.sh $(BUILD) "$(TEST)"

# Re-create the committed data (digits model, reference vectors). Needs PyTorch.
regen-data:
	STRATA_SETUP_TRAIN=1 scripts/setup.sh
	/usr/bin/python3 scripts/train_digits.py
	/usr/bin/python3 scripts/prune_digits.py
	/usr/bin/python3 scripts/train_small_models.py
	/usr/bin/python3 scripts/make_reference_vectors.py

clean:
	rm -rf $(BUILD)

# FPGA synthesis (docs/fpga.md): Yosys, and nextpnr-ecp5 place and route for ecp5.
#   make synth [TARGET=ecp5|xilinx|gowin] [TOP=<module>] [CONFIG=<yaml>] [PARAMS="Name=value ..."]
#              [PNR_SEEDS=1,2,3]   (ecp5: a nextpnr seed sweep, each grade's fastest run kept)
# Writes $(BUILD)/synth/<target>/report.md and report.json.
.PHONY: synth
synth:
	STRATA_SETUP_FPGA=1 scripts/setup.sh
	scripts/synth.sh --target $(or $(TARGET),ecp5) $(if $(TOP),--top $(TOP)) \
	  $(if $(CONFIG),--config $(CONFIG)) $(if $(PARAMS),--params "$(PARAMS)") \
	  $(if $(PNR_SEEDS),--seeds $(PNR_SEEDS)) --out $(BUILD)/synth/$(or $(TARGET),ecp5)
# The test suite holds synth-labelled tests: `make test` installs the FPGA tools too,
# and the SoC simulation's LiteX and RISC-V compiler (docs/board.md).
test: export STRATA_SETUP_FPGA := 1
test: export STRATA_SETUP_SOC := 1

# A bitstream of the SoC around the accelerator (docs/board.md): LiteX, the
# accelerator's netlist from Yosys's slang front end, nextpnr-ecp5 at speed
# grade 6; it fails when a clock misses its constraint. Writes
# $(BUILD)/soc/ulx3s/gateware/radiona_ulx3s.bit and .svf, and report.md.
#   make bitstream BOARD=ulx3s [SEED=1]
.PHONY: bitstream
BOARD ?= ulx3s
SEED ?= 1
bitstream: export STRATA_SETUP_FPGA := 1
bitstream: export STRATA_SETUP_SOC := 1
bitstream: setup
	@test "$(BOARD)" = ulx3s || { echo "make bitstream: BOARD=ulx3s is the board this flow builds (docs/board.md)"; exit 2; }
	.venv/bin/python soc/strata_soc.py --target ulx3s --output-dir $(BUILD)/soc/ulx3s \
	  --build --seed $(SEED)

# Nightly regression (docs/regression.md): every test labelled random runs
# with SEEDS seeds, the others once; JUnit, summary.md and failing_seeds.txt in
# $(REGRESS_OUT)/latest/. COVERAGE=1 builds and runs $(BUILD)-cov (Verilator
# line/toggle coverage, HTML report); SHARD=i/n runs one of n parts (merge the
# parts with scripts/regress --merge); RERUN=<failing_seeds.txt> re-runs a list.
#   make regress [SEEDS=N] [LABELS=unit,network] [SHARD=i/n] [COVERAGE=1]
#                [BASE_SEED=B] [RERUN=file]
# Labels sanitize and fuzz (in the default list) add two kinds of run from
# builds of their own: the software tests (label unit) of $(BUILD)-asan under
# ASan + UBSan, and each libFuzzer harness for REGRESS_FUZZ_TIME seconds from
# its committed seeds.
.PHONY: regress
REGRESS_BUILD = $(if $(filter 1,$(COVERAGE)),$(BUILD)-cov,$(BUILD))
REGRESS_OUT ?= $(BUILD)/regress
REGRESS_DEFAULT_LABELS := unit,network,lint,sanitize,fuzz
REGRESS_LABELS = $(or $(LABELS),$(REGRESS_DEFAULT_LABELS))
REGRESS_FUZZ_TIME ?= 60
regress_wants = $(filter $(1) all,$(subst $(comma), ,$(REGRESS_LABELS)))
comma := ,
regress: export STRATA_SETUP_FUZZ = $(if $(call regress_wants,fuzz),1,0)
# Per seed, the nightly draws more random networks than make test: with the
# default 5 seeds, 20,400 whole networks (docs/regression.md).
regress: export STRATA_RANDOM_TINY ?= 1000
regress: export STRATA_RANDOM_ANY_SIZE ?= 500
regress: export STRATA_RANDOM_SPARSE ?= 1000
regress: export STRATA_RANDOM_RTL_TINY ?= 200
regress: export STRATA_RANDOM_RTL_SPARSE ?= 200
regress: export STRATA_RANDOM_RTL_P4N4 ?= 200
regress: export STRATA_RANDOM_RTL_ANY_SIZE ?= 20
regress: export STRATA_RANDOM_CONFIGS ?= 600
regress: export STRATA_RANDOM_RTL_CONFIGS ?= 100
# The cycle model against the RTL on the large examples (docs/planner.md).
regress: export STRATA_CYCLE_MODEL_LARGE ?= 1
# The SoC simulation on cifar10_quick and imagenet_small (docs/board.md).
regress: export STRATA_SOC_LARGE ?= 1
regress: export STRATA_SETUP_SOC := 1
regress: setup $(if $(call regress_wants,sanitize),sanitize-build) \
                 $(if $(call regress_wants,fuzz),fuzz-build)
	cmake -S . -B $(REGRESS_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DSTRATA_COVERAGE=$(if $(filter 1,$(COVERAGE)),ON,OFF) \
	  -DSTRATA_CHAIN_CONFIGS=p4n4 $(FULL_CONFIG) $(CMAKE_FLAGS)
	cmake --build $(REGRESS_BUILD) -j $(JOBS)
	/usr/bin/python3 scripts/regress --build $(REGRESS_BUILD) --out $(REGRESS_OUT) \
	  --jobs $(JOBS) $(if $(SEEDS),--seeds $(SEEDS)) --labels $(REGRESS_LABELS) \
	  $(if $(SHARD),--shard $(SHARD)) $(if $(BASE_SEED),--base-seed $(BASE_SEED)) \
	  $(if $(filter 1,$(COVERAGE)),--coverage) $(if $(RERUN),--rerun $(RERUN)) \
	  $(if $(call regress_wants,sanitize),--extra-test \
	    'sanitize_unit:sanitize:cd $(ASAN_BUILD) && ctest -L unit -j $(JOBS) --output-on-failure') \
	  $(if $(call regress_wants,fuzz),$(foreach h,$(FUZZERS),--extra-test \
	    'fuzz_$(h):fuzz:sw/fuzz/run.sh $(FUZZ_BUILD) $(h) $(REGRESS_FUZZ_TIME) --fresh'))

# Sanitizer build (docs/regression.md): strata_core, the strata tool and the
# software tests with ASan + UBSan, without the RTL, in $(BUILD)-asan.
#   make sanitize    build it and run its unit tests
.PHONY: sanitize sanitize-build
ASAN_BUILD := $(BUILD)-asan
sanitize-build: setup
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_SANITIZE=ON \
	  -DSTRATA_BUILD_RTL=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
sanitize: sanitize-build
	cd $(ASAN_BUILD) && ctest -L unit -j $(JOBS) --output-on-failure

# Fuzzing (docs/regression.md): the libFuzzer harnesses of sw/fuzz, built with
# clang in $(BUILD)-fuzz, each run for FUZZ_TIME seconds on its seeds
# (tests/fuzz/<harness>/) and its working corpus ($(BUILD)-fuzz/fuzz/corpus/).
# A finding is saved under $(BUILD)-fuzz/fuzz/artifacts/<harness>/ and makes
# the target fail (after the other harnesses have run).
#   make fuzz [FUZZ_TIME=600] [FUZZERS="npy network_yaml compile_run"]
.PHONY: fuzz fuzz-build
FUZZ_BUILD := $(BUILD)-fuzz
FUZZERS ?= npy network_yaml compile_run
FUZZ_TIME ?= 600
fuzz-build: export STRATA_SETUP_FUZZ = 1
fuzz-build: setup
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DSTRATA_FUZZ=ON -DSTRATA_BUILD_RTL=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
fuzz: fuzz-build
	@status=0; for h in $(FUZZERS); do \
	  sw/fuzz/run.sh $(FUZZ_BUILD) $$h $(FUZZ_TIME) || status=1; done; exit $$status
