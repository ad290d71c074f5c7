# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
# Each installs what is missing into .venv (pinned by requirements.txt), then does its job.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

# `make run`, `smoke`, `claims` and `test` end with their wall time, counted from make's
# start (installing and linting included), whatever the command's exit status: the time
# the README quotes (in the form "make smoke: 1 min 56 s").
MAKE_START := $(shell date +%s)
timed = @echo '$(1)'; $(1); rc=$$?; s=$$(( $$(date +%s) - $(MAKE_START) )); \
	if [ $$s -ge 60 ]; then echo "make $@: $$((s / 60)) min $$((s % 60)) s"; \
	else echo "make $@: $$s s"; fi; exit $$rc

.PHONY: install run smoke claims test lint format benchmark bench ui clean

$(STAMP): requirements.txt pyproject.toml $(wildcard plugins/*/pyproject.toml)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

# --decide: claims still undecided after the suite's seeds get more seeds, read through
# confidence sequences, for at most DECIDE_BUDGET of wall time (docs/design.md, "Deciding")
DECIDE_BUDGET ?= 2m

run: install  ## every paper plugin on its real and synthetic data, tracked in mlflow/
	$(call timed,$(BIN)/harness run suites/all.yaml -j $(JOBS) --decide --decide-budget $(DECIDE_BUDGET))

smoke: install  ## each plugin's smallest meaningful configuration (well under 2 minutes)
	$(call timed,$(BIN)/harness run suites/smoke.yaml -j $(JOBS))

# Each paper plugin's committed evidence: the exports of the runs behind its claims
EVIDENCE := $(foreach p,$(notdir $(wildcard plugins/*)),plugins/$(p)/results/$(p).parquet)

claims: install  ## the verdict of every claim of suites/all.yaml from the committed evidence (no run)
	$(call timed,$(BIN)/harness claims suites/all.yaml $(foreach f,$(EVIDENCE),--results $(f)) --format markdown)

test: install lint  ## the whole test suite (core and plugins); pytest's "no tests" is not a failure
	@echo "Note: the crash tests (tests/runs/test_executors.py) segfault on purpose: each 'Fatal Python error: Segmentation fault' traceback in this log follows a line saying it is expected."
	$(call timed,$(BIN)/pytest -q || [ $$? -eq 5 ])

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The harness's own figures and the plugins' are measured in separate processes: with torch
# and PennyLane imported into the same pytest process (the simulator benchmarks), the
# harness's per-cell overhead read 6.3-8.8 ms instead of 1.5 ms (measured, same machine).
benchmark: install  ## speed targets of every issue, measured with pytest-benchmark
	$(BIN)/pytest -q tests harness benchmarks --benchmark-enable --benchmark-only -p no:randomly; a=$$?; \
	$(BIN)/pytest -q plugins --benchmark-enable --benchmark-only -p no:randomly; b=$$?; \
	test $$a -eq 0 -a $$b -eq 0

# benchopt, for the whole-command comparison of `make bench` only: its own environment, so that
# nothing of it pins a package of the harness's (issue 31)
BENCHOPT_VENV := .venv-benchopt
$(BENCHOPT_VENV)/.installed:
	test -x $(BENCHOPT_VENV)/bin/python || $(PYTHON) -m venv $(BENCHOPT_VENV)
	$(BENCHOPT_VENV)/bin/python -m pip install --quiet benchopt==1.10.0
	touch $@

bench: install $(BENCHOPT_VENV)/.installed  ## the speed tables (issues 20 and 31: per-cell, start-up, reports, against benchopt, cost as work grows; margin-qml simulator vs PennyLane), every goal checked (about 8 min; quiet machine)
	$(BIN)/pytest -q benchmarks --benchmark-enable -p no:randomly -s; a=$$?; \
	$(BIN)/pytest -q plugins/margin-qml/benchmarks plugins/margin-qml/tests/test_batched.py::test_retained_heap_stops_the_page_faults_of_a_training_step --benchmark-enable -p no:randomly -s; b=$$?; \
	$(BIN)/pytest -q plugins/ftrl-shocks/benchmarks plugins/equivariant-ntk/benchmarks plugins/els-diffusion/benchmarks --benchmark-enable -p no:randomly -s; c=$$?; \
	test $$a -eq 0 -a $$b -eq 0 -a $$c -eq 0

ui: install
	$(BIN)/harness ui

clean:
	rm -rf reports .pytest_cache .benchmarks
