# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
# Each installs what is missing into .venv (pinned by requirements.txt), then does its job.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: install run smoke test lint format benchmark bench ui clean

$(STAMP): requirements.txt pyproject.toml $(wildcard plugins/*/pyproject.toml)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

run: install  ## every paper plugin on its real and synthetic data, tracked in mlflow/
	$(BIN)/harness run suites/all.yaml -j $(JOBS)

smoke: install  ## each plugin's smallest meaningful configuration (well under 2 minutes)
	$(BIN)/harness run suites/smoke.yaml -j $(JOBS)

test: install lint  ## the whole test suite (core and plugins); pytest's "no tests" is not a failure
	$(BIN)/pytest -q || [ $$? -eq 5 ]

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

benchmark: install  ## speed targets of every issue, measured with pytest-benchmark
	$(BIN)/pytest -q --benchmark-enable --benchmark-only -p no:randomly

bench: install  ## the speed tables (issue 20's harness figures, margin-qml's simulator vs PennyLane), every goal checked (about 3 min; quiet machine)
	$(BIN)/pytest -q benchmarks plugins/margin-qml/benchmarks --benchmark-enable -p no:randomly -s

ui: install
	$(BIN)/harness ui

clean:
	rm -rf reports .pytest_cache .benchmarks
