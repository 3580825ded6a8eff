# tomacs developer entry points. `make setup` then `make test` is all CI does.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Real benchmark copies live beside the checkout; tests that need them skip with a reason otherwise.
export TOMACS_DATA ?= $(abspath ../shared/data)
export HF_HUB_OFFLINE ?= 1
export WANDB_MODE ?= offline

.PHONY: setup test lint format calibrate quickstart clean

setup: $(BIN)/tomacs

$(BIN)/tomacs: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(BIN)/tomacs

# pytest exits 5 when it collected no test: that must fail, never pass silently.
test: setup
	$(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

lint: setup
	$(BIN)/ruff check .

format: setup
	$(BIN)/ruff format .

calibrate: setup
	$(BIN)/tomacs calibrate

quickstart: setup
	$(BIN)/tomacs train method=complete attack=gt50

clean:
	rm -rf outputs .pytest_cache .ruff_cache
