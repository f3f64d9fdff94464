# Two commands: `make lab` opens your own copy of the learner workbook (my-workbook/), `make test` runs every
# test (notebooks included; it never reads my-workbook/), after `make check` (lint, format and types).
# Both create .venv when needed: `make lab` installs labkit with its `lab` extra only (what the workbook
# needs), `make test` with its `test` extra (the lab's packages and the test tools).
# `make lab PORT=8899` serves JupyterLab on that port (and fails if it is taken); without PORT, JupyterLab's default.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# One stamp per extra (STAMP: test). The test extra includes the lab's, so installing it stamps both: `make lab` after
# `make test` installs nothing, `make test` after `make lab` installs the test tools.
STAMP := $(VENV)/.installed-stamp
LAB_STAMP := $(VENV)/.lab-stamp
# Set only on make's command line: a PORT in the environment (some hosts set one for their own server) is ignored.
PORT :=
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 120
# The learner edition has no stored outputs: check that every cell runs, compare nothing.
NBVAL_LAX := --nbval-lax --nbval-current-env --nbval-cell-timeout 120

.PHONY: pyodide-setup lite lab lab-fr update-workbook update-workbook-fr check test test-fast install notebooks bench clean real-server real-model fuzz adapters-matrix

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP) $(LAB_STAMP)

$(LAB_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[lab]"
	touch $(LAB_STAMP)

# Your copy of the learner edition, my-workbook/ (untracked), is made from workbook/ on first use and
# never overwritten; JupyterLab's printed address opens its chapter 1. See scripts/lab.py.
lab: $(LAB_STAMP)
	$(BIN)/python scripts/lab.py $(if $(PORT),--port="$(PORT)")

# The French edition: your copy my-workbook-fr/, made from workbook-fr/ with the same rules.
lab-fr: $(LAB_STAMP)
	$(BIN)/python scripts/lab.py --language fr $(if $(PORT),--port="$(PORT)")

update-workbook-fr:
	$(PYTHON) scripts/lab.py --language fr update

# New or changed chapters of workbook/ go into my-workbook/: over an untouched copy, or beside
# yours as NAME.updated.ipynb, never over your work.
update-workbook:
	$(PYTHON) scripts/lab.py update

# The lint, format and type gate (a few seconds): ruff's format check and lint over the package, the tests, the
# scripts and the benchmarks, then mypy over labkit/ (its settings are in pyproject.toml, [tool.mypy]).
CHECKED := labkit tests scripts benchmarks _labkit_console.py conftest.py
check: $(STAMP)
	$(BIN)/ruff format --check $(CHECKED)
	$(BIN)/ruff check $(CHECKED)
	$(BIN)/mypy

test: check
	$(BIN)/python -m pytest tests notebooks notebooks-fr $(NBVAL)
	$(BIN)/python -m pytest workbook workbook-fr $(NBVAL_LAX)

# The unit, scenario and console tests, in parallel, without the notebooks, the browser, the real
# servers, fresh installs or the long generated searches: what to run before every commit. `make test`
# runs these too, and everything else.
SLOW_TESTS := test_real_server test_browser test_binder test_coldstart test_learner_copy test_workbook_generated \
	test_guard_checker test_chapter10_mistakes test_explain test_helper_inputs test_live_server test_french test_lite
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests -q -n auto -m "not slow" $(foreach t,$(SLOW_TESTS),--ignore=tests/$(t).py)

# The generated parity test with many more scripts than `make test` runs (2,000 by default, each under every
# loop, plain and streaming), from a new seed each time; the seed is printed first, and again on a failure.
# `make fuzz SEED=123 EXAMPLES=500` replays one seed. See tests/test_parity_generated.py.
EXAMPLES ?= 2000
SEED ?= $(shell $(PYTHON) -c 'import random; print(random.randrange(2**32))')
fuzz: $(STAMP)
	@echo "fuzz: $(EXAMPLES) generated scripts per loop, hypothesis seed $(SEED)"
	@LABKIT_PARITY_EXAMPLES=$(EXAMPLES) $(BIN)/python -m pytest tests/test_parity_generated.py -q -p no:cacheprovider \
		--hypothesis-seed=$(SEED) --hypothesis-show-statistics \
		-k every_loop || { echo "fuzz: FAILED with hypothesis seed $(SEED); replay: make fuzz SEED=$(SEED) EXAMPLES=$(EXAMPLES)"; exit 1; }

# The adapter tests (with the generated parity test, 100 scripts) against the oldest and the newest release of each
# framework that pyproject.toml allows, each in a throwaway venv (a few minutes per release); one line per release.
# `make adapters-matrix RUNTIME=maf VERSION=1.22.0` tries one release.
adapters-matrix: $(STAMP)
	$(BIN)/python scripts/adapters_matrix.py $(RUNTIME) $(VERSION)

# Compare labkit with a bare loop and the peer frameworks; prints the table and writes docs/benchmarks.md.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	$(BIN)/python -m benchmarks

# Build llama.cpp's server and llama-cpp-python's server once (10 to 30 minutes on 2 cores), cached
# outside the repository; `make test` then also runs every scenario against them (tests/test_real_server.py).
real-server:
	scripts/build_real_server.sh

# Fetch Pyodide (npm) and labkit's dependencies as Pyodide wheels, cached outside the repository; `make test`
# then also runs every scenario on Pyodide under Node.js (tests/test_pyodide.py).
pyodide-setup: $(STAMP)
	scripts/pyodide_setup.sh $(BIN)/python

# The JupyterLite edition, the workbook in the browser with nothing to install: a static site in build/lite/ (untracked;
# copy it to any static host). Its build tools are locked in lite/requirements.txt and installed into a venv of their
# own, .venv-lite/ (so `make lab`'s JupyterLab never loads the Pyodide kernel's extension); Pyodide and the wheels the
# browser loads come from `make pyodide-setup`'s cache. The build itself fetches nothing. See scripts/build_lite.py.
LITE_VENV := .venv-lite
LITE_STAMP := $(LITE_VENV)/.installed-stamp
lite: pyodide-setup $(LITE_STAMP)
	$(LITE_VENV)/bin/python scripts/build_lite.py

$(LITE_STAMP): lite/requirements.txt
	$(PYTHON) -m venv $(LITE_VENV)
	$(LITE_VENV)/bin/python -m pip install --quiet -r lite/requirements.txt
	touch $(LITE_STAMP)

# After `make real-server`: serve the tiny reviewer model (it reads, finishes, answers) on llama-server at
# http://127.0.0.1:$(PORT)/v1 until Ctrl+C, for appendix A and `labkit run complete --live`.
real-model:
	$(PYTHON) scripts/real_model.py $(or $(PORT),8080)

# After editing a chapter: regenerate its navigation, re-execute the chapters to store their
# outputs, regenerate the learner edition in workbook/ and the list of predictions in
# docs/predictions.md (it prints any prediction that breaks the rule; the tests enforce it).
notebooks: $(STAMP)
	$(BIN)/python scripts/build_navigation.py
	$(BIN)/python scripts/execute_notebooks.py
	$(BIN)/python scripts/build_workbook.py
	$(BIN)/python scripts/build_messages.py
	$(BIN)/python scripts/build_french.py
	$(BIN)/python scripts/execute_notebooks.py notebooks-fr/[0-9][0-9]_*.ipynb notebooks-fr/appendix_*.ipynb
	-$(BIN)/python scripts/build_french.py stale
	-$(BIN)/python scripts/list_predictions.py

clean:
	rm -rf $(VENV) $(LITE_VENV) .pytest_cache
