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

test: install browser
	$(BIN)/python -m pytest -q

# Debian's chromium for the end-to-end web test (Playwright drives it through
# executable_path; no browser is ever downloaded by a test tool). Installed when missing and
# we are root with apt-get (CI, a fresh machine); otherwise the browser test skips, saying so.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "note: no chromium binary, so the browser test will be skipped (apt-get install chromium)"; \
	fi

.PHONY: install demo test browser
