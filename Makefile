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
	$(VENV)/bin/trnsim specs
	@echo
	@echo "The presets above come from configs/ (each number with its source)."
	@echo "Try: $(VENV)/bin/trnsim specs --json   or   $(VENV)/bin/trnsim specs --chip configs/chips/trn2.yaml"

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
