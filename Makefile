# Two commands: `make lab` opens the workbook, `make test` runs every test (notebooks included).
# Both create .venv and install labkit with its teaching and test extras when needed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
CHAPTER1 := notebooks/01_a_loop_needs_an_owner.ipynb
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 120

.PHONY: lab test install notebooks bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab $(CHAPTER1)

test: $(STAMP)
	$(BIN)/python -m pytest tests notebooks $(NBVAL)

# Compare labkit with a bare loop and the peer frameworks; prints the table and writes docs/benchmarks.md.
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	$(BIN)/python -m benchmarks

# Re-execute the chapter notebooks and store their outputs (after editing a notebook).
notebooks: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py

clean:
	rm -rf $(VENV) .pytest_cache
