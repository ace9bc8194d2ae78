"""hermes: a self-hosted personal feed engine for researchers.

What a plugin author needs is importable from here — ``from hermes import hookimpl, tool,
Result, Component`` — and loaded on first use (PEP 562), so ``import hermes`` stays cheap.
"""

import importlib

# The one place the version lives: pyproject.toml reads it, `hermes --version` prints it, and
# CHANGELOG.md has a heading for it.
__version__ = "0.1.0"

#: public name -> the module that holds it
_EXPORTS = {
    "hookimpl": "hermes.hookspecs",
    "hookspec": "hermes.hookspecs",
    "tool": "hermes.contract",
    "Tool": "hermes.contract",
    "Result": "hermes.contract",
    "Answer": "hermes.contract",
    "Signal": "hermes.contract",
    "Migration": "hermes.contract",
    "Prompt": "hermes.contract",
    "CandidateQuery": "hermes.contract",
    "Component": "hermes.contract",
    "ScoringContext": "hermes.contract",
    "Embedder": "hermes.contract",
    "UNTRUSTED": "hermes.contract",
    "ok": "hermes.contract",
    "fail": "hermes.contract",
    "HermesError": "hermes.errors",
    "InvalidInput": "hermes.errors",
    "NotFound": "hermes.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS])
