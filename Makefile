# Two set-up commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Where torch comes from. PyPI's Linux torch is the CUDA build (several GB with its nvidia-*
# packages) and hermes embeds on the CPU, so the CPU build is asked for first; when that index
# cannot be reached the install falls back to the default index and says so.
# `make install TORCH_INDEX=` takes the default index's build; a CUDA index
# (e.g. https://download.pytorch.org/whl/cu128) takes that build.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# The torch requirement exactly as pyproject.toml pins it (one place).
TORCH_PIN = $(shell $(PY) -c 'import tomllib; print(next(d for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"] if d.startswith("torch")))')

# PYTHONWARNINGS: setuptools prints an "Editable installation" notice on every editable install
# of a layout like this one; it is not a packaging problem (the wheel build prints nothing).
$(BIN)/hermes: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@$(MAKE) --no-print-directory torch
	@# Before the rename to hermes-feed-engine this project was the distribution "hermes":
	@# remove that one from an existing venv (it owns the same files).
	@$(BIN)/pip uninstall -q -y hermes 2>/dev/null || true
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/hermes
	@$(BIN)/python -c 'from importlib.metadata import version; print("torch", version("torch"), "installed")'
	@echo "hermes is $(abspath $(BIN))/hermes: run it by that path, or put it on PATH for this shell with"
	@echo "    . $(VENV)/bin/activate        (or 'make link' for a symlink in ~/.local/bin)"

# torch alone, from TORCH_INDEX, before the rest; when that index does not answer, say so and
# let the next step take torch from the default index.
TORCH_LOG ?= $(VENV)/torch-install.log
torch:
	@if [ -n "$(TORCH_INDEX)" ]; then \
		echo "torch: asking $(TORCH_INDEX) for $(TORCH_PIN)"; \
		$(BIN)/pip install -q --no-deps --retries 1 --timeout 30 --index-url "$(TORCH_INDEX)" "$(TORCH_PIN)" 2>"$(TORCH_LOG)" \
		|| echo "note: $(TORCH_INDEX) gave no $(TORCH_PIN) (details in $(TORCH_LOG)), so torch comes from the default index (on Linux: the CUDA build, several GB)"; \
	fi

install: $(BIN)/hermes

# A symlink to the venv's hermes in a directory on PATH (~/.local/bin by default).
LINK_DIR ?= $(HOME)/.local/bin
link: install
	mkdir -p $(LINK_DIR)
	ln -sf $(abspath $(BIN))/hermes $(LINK_DIR)/hermes
	@case ":$$PATH:" in *":$(LINK_DIR):"*) echo "hermes -> $(LINK_DIR)/hermes";; \
		*) echo "hermes -> $(LINK_DIR)/hermes (that directory is not on PATH: add it in your shell's profile)";; esac

demo: install
	HERMES_HOME=$${HERMES_HOME:-$$PWD/.demo} $(BIN)/hermes demo

# The whole suite on every core (pytest-xdist; `make test PYTEST_ARGS=` runs it in one process),
# no test longer than 600 s (pytest-timeout, pyproject.toml), the 15 slowest named at the end.
PYTEST_ARGS ?= -n auto
test: install browser tex
	$(BIN)/python -m pytest -q $(PYTEST_ARGS) --durations=15

# The public API's annotations (hermes.contract, hookspecs, plugins, clock: pyproject.toml's
# [tool.mypy] files), as a plugin author's type checker reads them.
typecheck: install
	$(BIN)/python -m mypy

# The wheel and sdist (dist/), built the way a release is: sdist first, the wheel from it.
# A stale build/ or *.egg-info/ would leak files the configuration does not declare.
dist: install
	rm -rf dist build *.egg-info
	$(BIN)/python -m build -q --outdir dist .

# CI: the wheel carries every package file (.ci/wheel_contents.py), then, installed alone with
# its dependencies in a fresh venv and run from outside the checkout, it works: demo, MCP
# server, web UI (.ci/wheel_smoke.py). torch comes the way `make install` gets it. No .pyc
# compiling of the installed packages (torch alone has thousands of modules): the check does
# not need it.
wheel-check: dist
	$(BIN)/python .ci/wheel_contents.py dist
	@set -e; dir=$$(mktemp -d "$${TMPDIR:-/tmp}/hermes-wheel-check.XXXXXX"); trap 'rm -rf "$$dir"' EXIT; \
	echo "fresh venv in $$dir"; \
	export PIP_NO_COMPILE=1; \
	start=$$(date +%s); \
	$(PY) -m venv "$$dir/venv"; \
	$(MAKE) --no-print-directory torch BIN="$$dir/venv/bin" TORCH_LOG="$$dir/torch-install.log"; \
	"$$dir/venv/bin/pip" install -q dist/*.whl; \
	echo "wheel and dependencies installed in $$(( $$(date +%s) - start )) s"; \
	cd "$$dir" && "$$dir/venv/bin/python" -I "$(CURDIR)/.ci/wheel_smoke.py"

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

# Debian's TeX Live for the export's compile test: a BibTeX export must compile with pdflatex
# + bibtex in the standard styles and with biber + biblatex, which no parser check shows.
# Installed when missing, as the browser is (about 160 MB, 2-3 minutes once per machine).
TEX_PACKAGES = texlive-latex-base texlive-latex-recommended texlive-fonts-recommended biber texlive-bibtex-extra
tex:
	@if command -v pdflatex >/dev/null 2>&1 && command -v biber >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's TeX Live for the export compile test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) >/dev/null; \
	else \
		echo "note: no pdflatex / biber, so the export compile test will be skipped (apt-get install $(TEX_PACKAGES))"; \
	fi

.PHONY: install torch link demo test typecheck dist wheel-check browser tex
