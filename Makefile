# Two commands: `make lab` opens the learner workbook (workbook/), `make test` runs every test (notebooks included).
# Both create .venv and install labkit with its teaching and test extras when needed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The learner edition; the instructor edition with answers and outputs is in notebooks/.
CHAPTER1 := workbook/01_a_loop_needs_an_owner.ipynb
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 120
# The learner edition has no stored outputs: check that every cell runs, compare nothing.
NBVAL_LAX := --nbval-lax --nbval-current-env --nbval-cell-timeout 120

.PHONY: lab test install notebooks bench clean real-server

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# --allow-root only when run as root (containers, CI machines); a learner's account needs nothing.
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=. $(if $(filter 0,$(shell id -u)),--allow-root) $(CHAPTER1)

test: $(STAMP)
	$(BIN)/python -m pytest tests notebooks $(NBVAL)
	$(BIN)/python -m pytest workbook $(NBVAL_LAX)

# Compare labkit with a bare loop and the peer frameworks; prints the table and writes docs/benchmarks.md.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	$(BIN)/python -m benchmarks

# Build llama.cpp's server and llama-cpp-python's server once (10 to 30 minutes on 2 cores), cached
# outside the repository; `make test` then also runs every scenario against them (tests/test_real_server.py).
real-server:
	scripts/build_real_server.sh

# After editing a chapter: regenerate its navigation, re-execute the chapters to store their
# outputs, and regenerate the learner edition in workbook/.
notebooks: $(STAMP)
	$(BIN)/python scripts/build_navigation.py
	$(BIN)/python scripts/execute_notebooks.py
	$(BIN)/python scripts/build_workbook.py

clean:
	rm -rf $(VENV) .pytest_cache
