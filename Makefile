# Two set-up commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

$(BIN)/hermes: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/hermes

install: $(BIN)/hermes

demo: install
	HERMES_HOME=$${HERMES_HOME:-$$PWD/.demo} $(BIN)/hermes demo

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/run_all.py

.PHONY: install demo test bench
