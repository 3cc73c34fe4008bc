# armbench: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: setup demo test bench data local-model clean

# llama.cpp built for any x86-64 with AVX2, not -march=native: its AMX kernels crash in batched
# decoding on these VMs. --no-cache-dir: a cached native wheel would otherwise be reused.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: setup
	@echo "armbench demo: the GPU design and held-out sets through the browsing and tooled arms, 3 runs each."
	@echo "The model is scripted/oracle: a scripted reference policy that replays each question's"
	@echo "stored tool calls and reads the answer off the tool's result. It is NOT a language model;"
	@echo "it proves the harness, the tool and the questions end to end, offline."
	rm -rf results/demo
	$(BIN)/bench run --model scripted/oracle --arm all --set all --domain gpus --runs 3 --out results/demo
	@echo "To run a real model: $(BIN)/bench run --model openai/gpt-4o-mini --set heldout (needs OPENAI_API_KEY)."

test: setup
	$(BIN)/python -m pytest

# inspect-ai (the optional `bench` extra) is only for the run-engine comparison.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: setup $(BENCH_STAMP)
	$(BIN)/python benchmarks/gpu_query_latency.py
	$(BIN)/python benchmarks/harness_overhead.py
	$(BIN)/python benchmarks/browser_latency.py
	$(BIN)/python benchmarks/sandbox_startup.py
	$(BIN)/python benchmarks/run_engine.py
	$(BIN)/python benchmarks/worldbank_latency.py

local-model: setup
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --no-cache-dir 'llama-cpp-python==0.3.36'
	$(BIN)/python -m harness.models.weights

data: setup
	$(BIN)/bench data build

clean:
	rm -rf $(VENV) results/demo .pytest_cache
