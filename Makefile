# armbench: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
# Python may cache what it compiles (a machine that says not to makes each pytest process rewrite
# every test module's asserts again: about 4 s of CPU each).
export PYTHONDONTWRITEBYTECODE :=
VENV := .venv
BIN := $(VENV)/bin
WHEEL_CHECK ?= /tmp/armbench-wheel-check
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: setup setup-demo demo demo-oracle oracle oracle-web oracle-loaded wheel-check lint test parity docs test-fast test-local bench nightly nightly-live data local-model clean

# The committed recording of a real local model on the GPU sets, both arms: what `make demo`
# replays and what `make nightly` regresses against.
RECORDING := results/recordings/local-qwen2.5-coder-0.5b-gpus
RECORDED_PLAN := --arm all --set design,heldout --domain gpus
# A second recording, on the World Bank API replica and its three typed tools: the gate covers an
# API as well as a website.
WB_RECORDING := results/recordings/local-qwen2.5-coder-0.5b-worldbank
WB_RECORDED_PLAN := --arm all --set design,heldout --domain worldbank
LOCAL_MODEL := local/qwen2.5-coder-0.5b
LOCAL_STAMP := $(VENV)/.local-model-installed
# `make nightly-live MODEL=openai/gpt-4o-mini`: any LiteLLM model string, with its key in the environment.
MODEL ?= openai/gpt-4o-mini

# llama.cpp built for any x86-64 with AVX2, not -march=native: its AMX kernels crash in batched
# decoding on these VMs. --no-cache-dir: a cached native wheel would otherwise be reused.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

# setup-demo: armbench and what it needs to run (about 950 MB); setup adds the test and lint tools,
# Ray and inspect_ai (1.5 GB in all), which `make test` needs.
setup: $(STAMP)
setup-demo: $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	bash .ci/system-packages
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: setup-demo
	@echo "armbench demo, two run sets, every tool running for real against local replicas:"
	@echo "1. the oracle, a scripted reference policy (not a model) playing every question's stored solution"
	@echo "   in each arm, over the design and first held-out sets of all ten domains (make oracle: every set):"
	@echo "   what a perfect agent scores, so every question is solvable;"
	@echo "2. a real language model ($(LOCAL_MODEL), Qwen2.5-Coder-0.5B-Instruct Q4_K_M) on the GPU sets,"
	@echo "   replayed from the committed recording $(RECORDING)."
	rm -rf results/demo results/demo-oracle
	$(BIN)/bench run --model scripted/oracle --arm all --set design,heldout --domain all --out results/demo-oracle --quiet > /dev/null
	$(BIN)/bench run --model replay/$(RECORDING) $(RECORDED_PLAN) --out results/demo --quiet > /dev/null
	@# PNGs of results/demo/report.html and a question's page
	$(BIN)/bench report results/demo --screenshots > /dev/null
	$(BIN)/bench regress --baseline $(RECORDING) results/demo
	@echo
	@echo "=== 1. The oracle (a scripted reference policy, not a model): every question solvable in each arm ==="
	@$(BIN)/bench report results/demo-oracle
	@echo
	@echo "=== 2. $(LOCAL_MODEL), replayed from its recording (model time as recorded) ==="
	@$(BIN)/bench report results/demo
	@echo
	@echo "Run it live: make local-model, then $(BIN)/bench run --model $(LOCAL_MODEL) $(RECORDED_PLAN)"
	@echo "Or any LiteLLM model with its key: OPENAI_API_KEY=... $(BIN)/bench run --model openai/gpt-4o-mini --set heldout"

# The oracle (a scripted reference policy, not a model) plays every stored solution through the real
# tools; `bench run` exits 1 unless every run is correct, naming the runs that were not.

demo-oracle: setup-demo
	rm -rf results/demo-oracle
	$(BIN)/bench run --model scripted/oracle --arm all --set all --domain all --out results/demo-oracle

# Every domain's questions, both arms (CI runs it on a moved port base).
oracle: setup-demo
	rm -rf results/oracle
	$(BIN)/bench run --model scripted/oracle --arm all --set all --domain all --out results/oracle --quiet

# The real web's frictions met: every domain's questions, both arms, under `real` without its rate
# limit (docs/profiles/real-unthrottled.yaml: retried 503s, the consent page, the page cap, chrome
# and drift, latencies at 1/100). CI runs it.
oracle-web: setup-demo
	rm -rf results/oracle-web
	$(BIN)/bench run --model scripted/oracle --arm all --set all --domain all --web docs/profiles/real-unthrottled.yaml \
		--concurrency 4 --out results/oracle-web --quiet

# Load never changes a grade: every domain, arm and set three times at --concurrency 16, every run
# correct with no infra error, however few cores the machine has (CI runs it too).
oracle-loaded: setup-demo
	rm -rf results/oracle-loaded
	$(BIN)/bench run --model scripted/oracle --arm all --set all --domain all --runs 3 --concurrency 16 \
		--out results/oracle-loaded --quiet

# The package as a user installs it: the wheel into a fresh venv (its dependencies only, none of
# the project's), then `bench` from an empty folder, with the question bank and the replicas' data
# the wheel carries; the oracle exits 1 unless every run is correct. CI runs it.
wheel-check: setup-demo
	rm -rf build dist $(WHEEL_CHECK)
	$(BIN)/python -m pip wheel . --no-deps --quiet --wheel-dir dist
	$(PYTHON) -m venv $(WHEEL_CHECK)/venv
	$(WHEEL_CHECK)/venv/bin/python -m pip install --quiet dist/armbench-*.whl
	mkdir -p $(WHEEL_CHECK)/empty
	cd $(WHEEL_CHECK)/empty && $(WHEEL_CHECK)/venv/bin/bench run --model scripted/oracle --domain gpus --arm tooled \
		--set heldout --quiet
	rm -rf build dist $(WHEEL_CHECK)

# The layer contract (pyproject's [tool.importlinter]: layers, independent domains, no cycles) and ruff.
lint: setup
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check armbench tests benchmarks

# The suite on TEST_WORKERS pytest-xdist processes (each test's replicas on ports of its own: a
# taken default base moves), and beside them the Ray tests, whose cluster mostly waits; their
# output follows the suite's. Whole modules go to the workers in conftest's order (the modules with
# most `slow` tests first): each module's fixtures start once, and no long test is met last.
# 3 workers: the fastest on this 2-core machine, quiet (2 and 4 each took 15-20 s longer): one more
# keeps both cores busy while a worker waits, and each worker collects the whole suite and starts
# its own warm replicas and Chromium.
TEST_WORKERS ?= 3
RAY_TEST_LOG := .pytest_cache/ray-tests.log
# The Ray tests' process collects only the modules that mark tests `ray` (not all 2,400 tests), and
# the suite's workers skip the modules all of whose tests are `ray` (importing Ray, 0.7 s each).
RAY_TEST_FILES = $(shell grep -rl --include='test_*.py' 'pytest.mark.ray' tests)
RAY_ONLY_FILES = $(shell grep -rl --include='test_*.py' '^pytestmark = pytest.mark.ray' tests)
# The fuzz tests (tests/fuzz/hostile.py) draw all their examples in CI and a quarter of them
# elsewhere (make test, make test-fast): `make test FUZZ=full` draws them all.
FUZZ ?= $(if $(CI),full,quick)
test test-fast: export ARMBENCH_FUZZ = $(FUZZ)
test: setup
	@mkdir -p .pytest_cache
	@$(BIN)/python -m pytest -m ray $(RAY_TEST_FILES) > $(RAY_TEST_LOG) 2>&1 & ray=$$!; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
		-m "not local and not ray and not crawl and not docs" $(addprefix --ignore=,$(RAY_ONLY_FILES)); suite=$$?; \
	wait $$ray; ray=$$?; echo "the Ray tests:"; cat $(RAY_TEST_LOG); [ $$suite -eq 0 ] && [ $$ray -eq 0 ]

# Site-tool parity: every domain's whole replica site read with its site reader holds the rows and
# values its typed tool does (what `bench domain check NAME` does for one domain). A check of the
# data, like `make oracle`, so CI runs it beside `make test` rather than inside it.
parity: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m crawl

# The docs site (mkdocs.yml): built with --strict, so a broken link or anchor fails it, into a scratch
# folder; then every command the docs show, run as written (tests/test_docs.py, marked `docs`; the
# own-table walkthrough and the Python API example are followed by tests `make test` runs).
DOCS_SITE ?= /tmp/armbench-site
docs: setup
	$(BIN)/mkdocs build --strict --site-dir $(DOCS_SITE)
	rm -rf $(DOCS_SITE)
	$(BIN)/python -m pytest -m docs tests/test_docs.py

# The edit-test loop: the suite without the tests marked `slow` (whole run sets, `bench` subprocesses,
# kills), `ray`, `crawl` or `docs`; `make test` runs all but the crawls and the docs' commands, which
# `make parity` and `make docs` run.
test-fast: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not local and not ray and not slow and not crawl and not docs" \
		$(addprefix --ignore=,$(RAY_ONLY_FILES))

# The tests marked `local` run the real local model; `make test` leaves them out (it has no model).
test-local: setup local-model
	$(BIN)/python -m pytest -m local

# Each benchmark prints its figures and records its headline ones; the last line prints them as one
# table, each with its target and ok or over, under the machine's load average.
BENCH_FIGURES := .pytest_cache/bench-figures.jsonl
bench: export ARMBENCH_BENCH_FIGURES = $(CURDIR)/$(BENCH_FIGURES)
bench: setup
	@mkdir -p .pytest_cache && rm -f $(BENCH_FIGURES)
	$(BIN)/python benchmarks/gpu_query_latency.py
	$(BIN)/python benchmarks/harness_overhead.py
	$(BIN)/python benchmarks/browser_latency.py
	$(BIN)/python benchmarks/web_profiles.py
	$(BIN)/python benchmarks/sandbox_startup.py
	$(BIN)/python benchmarks/run_engine.py
	$(BIN)/python benchmarks/ray_executor.py
	$(BIN)/python benchmarks/worldbank_latency.py
	$(BIN)/python benchmarks/replica_gate.py
	$(BIN)/python benchmarks/report_scale.py
	$(BIN)/python benchmarks/cli_latency.py
	$(BIN)/python benchmarks/table_domain.py
	$(BIN)/python benchmarks/stored_calls.py
	$(BIN)/python benchmarks/local_model.py $(RECORDING)
	@echo; $(BIN)/python benchmarks/figures.py

# The nightly gate, free and deterministic: replay the committed recordings against today's code
# and replicas; any divergence, flipped grade, extra infra error or cost rise fails it (exit 1).
nightly: setup-demo
	rm -rf results/nightly/replay results/nightly/replay-worldbank
	$(BIN)/bench run --model replay/$(RECORDING) $(RECORDED_PLAN) --out results/nightly/replay --quiet
	$(BIN)/bench regress --baseline $(RECORDING) results/nightly/replay
	$(BIN)/bench run --model replay/$(WB_RECORDING) $(WB_RECORDED_PLAN) --out results/nightly/replay-worldbank --quiet
	$(BIN)/bench regress --baseline $(WB_RECORDING) results/nightly/replay-worldbank

# The nightly live run (needs the model's API key); regressed against results/baselines/live when
# one is committed.
nightly-live: setup-demo
	rm -rf results/nightly/live
	$(BIN)/bench run --model $(MODEL) --arm all --set heldout --runs 3 --max-cost 10 --out results/nightly/live --quiet
	if [ -d results/baselines/live ]; then $(BIN)/bench regress --baseline results/baselines/live results/nightly/live; \
	else echo "no live baseline committed (results/baselines/live): nothing to regress against"; fi

local-model: setup-demo $(LOCAL_STAMP)
	$(BIN)/python -m armbench.models.weights

$(LOCAL_STAMP): $(DEMO_STAMP)
	bash .ci/system-packages --local-model
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --no-cache-dir -e '.[local]'
	touch $(LOCAL_STAMP)

data: setup-demo
	$(BIN)/bench data build

clean:
	rm -rf $(VENV) results/demo results/demo-oracle results/oracle results/nightly .pytest_cache
