"""The shape of the code: no import cycle in the core, imports at the top, one contract.

Walks the source with :mod:`ast` (nothing is imported). An import inside a function is
allowed only when it keeps a third-party library out of the processes that do not need it
(``hermes serve`` must list tools without torch, the CLI starts without the MCP SDK …),
which the test checks on the imports, and the comment just above it says which. The layer
order is checked in ``test_layers.py``.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: package name -> its source directory
PACKAGES = {
    "hermes": ROOT / "hermes",
    **{f"hermes_{p.name}": p for p in (ROOT / "plugins").iterdir() if (p / "__init__.py").exists()},
}


def modules() -> dict[str, Path]:
    found = {}
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> ast.Module:
    """A source file's syntax tree (parsed once per test process; callers do not change it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, child.end_lineno + 1))
    return lines


@functools.lru_cache(maxsize=None)
def _statements(path: Path) -> tuple[tuple[ast.stmt, bool, bool], ...]:
    """Every import statement of a file: ``(node, inside a function, for typing only)``."""
    tree = parse(path)
    typing_only = _type_checking_lines(tree)
    in_function: set[int] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(range(node.lineno, node.end_lineno + 1))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
    return tuple((n, n.lineno in in_function, n.lineno in typing_only) for n in sorted(found, key=lambda n: n.lineno))


def imports(module: str, path: Path, known: dict[str, Path], typing: bool = False) -> list[tuple[str, ast.stmt, bool]]:
    """``(imported hermes module, node, inside a function)`` for every runtime import (and
    those made for annotations only with ``typing``)."""
    out = []
    for node, lazy, typing_only in _statements(path):
        if typing_only and not typing:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = _absolute(node, module, path.name == "__init__.py")
            # ``from pkg import sub`` imports the submodule when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            if target in known:
                out.append((target, node, lazy))
    return out


def graph(known: dict[str, Path] | None = None) -> dict[str, set[str]]:
    known = modules() if known is None else known
    return {m: {t for t, _, lazy in imports(m, p, known) if not lazy} for m, p in known.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_core_has_no_cycle_even_through_late_or_typing_imports():
    """An import inside a function or under TYPE_CHECKING still ties two modules: the
    contract imported records for the clock and the matrix for an annotation, records
    imported embed in a function, which closed contract → records → embed → plugins →
    hookspecs → contract (issue 35)."""
    known = {m: p for m, p in modules().items() if m.split(".")[0] == "hermes"}
    edges = {m: {t for t, _, _ in imports(m, p, known, typing=True)} for m, p in known.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _top_level_externals(path: Path) -> set[str]:
    """The third-party packages a module imports when it is imported (not in a function,
    not for typing)."""
    tree = parse(path)
    late = _type_checking_lines(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            late.update(range(node.lineno, node.end_lineno + 1))
    found = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in late:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {n.split(".")[0] for n in names}
    return {
        n
        for n in found
        if n not in sys.stdlib_module_names and n != "__future__" and n != "hermes" and not n.startswith("hermes_")
    }


def loads(known: dict[str, Path]):
    """``loads(module)``: what importing ``module`` loads — itself, every hermes module it
    imports at the top (and they at theirs), and their third-party packages."""
    top = graph(known)
    memo: dict[str, set[str]] = {}

    def visit(module: str, seen: set[str]) -> set[str]:
        if module in memo:
            return memo[module]
        seen.add(module)
        out = {module} | _top_level_externals(known[module])
        for target in top[module]:
            if target not in seen:
                out |= visit(target, seen)
        memo[module] = out
        return out

    return lambda module: visit(module, set())


def late_imports_without_a_reason(known: dict[str, Path]) -> list[str]:
    """In-function imports of hermes modules that defer nothing, or say nothing about it."""
    load = loads(known)
    wasted: set[str] = set()
    for module, path in known.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        root = module.split(".")[0] if module.startswith("hermes_") else module
        for target, node, lazy in imports(module, path, known):
            if not lazy:
                continue
            deferred = load(target) - load(module) - load(root)
            k = node.lineno - 2
            while k >= 0 and lines[k].strip().startswith(("from ", "import ")):
                k -= 1  # one comment may explain a block of imports
            where = f"{path.name}:{node.lineno} imports {target}"
            if not deferred:
                wasted.add(f"{where}, which loads nothing {root} does not load anyway")
            elif k < 0 or not lines[k].strip().startswith("#"):
                wasted.add(f"{where} (it defers {', '.join(sorted(deferred)[:3])} …) without a comment")
    return sorted(wasted)


def test_imports_inside_functions_defer_something():
    """An in-function import of a hermes module must keep something out of the processes that
    do not need it: importing the module at the top would load a module or library that the
    importing module does not load anyway — for a plugin, that loading the plugin does not
    load anyway. Checked on the imports, not on the comment's words (a comment in opml.py said
    "the ingest package loads httpx" above an import that loaded nothing new). The comment
    right above says what and why."""
    wasted = late_imports_without_a_reason(modules())
    assert not wasted, "in-function imports that defer nothing or say nothing:\n" + "\n".join(wasted)


def test_the_deferral_check_sees_a_wasted_late_import(tmp_path):
    """``loads`` follows top-level imports only (a module that imports httpx in a function
    loads no httpx), and a plugin module's late import of what its plugin loads anyway defers
    nothing."""
    files = {
        "hermes.a": "import numpy\nfrom hermes import b\n",
        "hermes.b": "import os\ndef f():\n    import httpx\n",
        "hermes_p": "from hermes_p import x\nfrom hermes import a\n",
        "hermes_p.x": (
            "def f():\n    # Here, not at the top: numpy loads only for f.\n"
            "    from hermes.a import g\n"
            "def h():\n    from hermes_p import y\n"
        ),
        "hermes_p.y": "import httpx\n",
    }
    known = {}
    for module, text in files.items():
        known[module] = tmp_path / f"{module}.py"
        known[module].write_text(text, encoding="utf-8")
    load = loads(known)
    assert load("hermes.a") == {"hermes.a", "numpy", "hermes.b"} and load("hermes.b") == {"hermes.b"}
    assert late_imports_without_a_reason(known) == [
        "hermes_p.x.py:3 imports hermes.a, which loads nothing hermes_p does not load anyway",
        "hermes_p.x.py:5 imports hermes_p.y (it defers hermes_p.y, httpx …) without a comment",
    ]


def test_the_hook_specs_import_only_the_contract():
    known = modules()
    path = known["hermes.hookspecs"]
    assert {t for t, _, _ in imports("hermes.hookspecs", path, known)} == {"hermes.contract"}


def test_the_core_never_imports_a_plugin():
    known = modules()
    for module, path in known.items():
        if module.startswith("hermes."):
            plugins = {t for t, _, _ in imports(module, path, known) if t.startswith("hermes_")}
            assert not plugins, f"{module} imports {plugins}"


def test_plugin_authors_import_from_hermes_and_import_hermes_stays_cheap():
    code = (
        "import sys, hermes\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('hermes'))\n"
        "from hermes import hookimpl, Tool, Component, CandidateQuery, Signal, Migration, "
        "ScoringContext, Embedder, ok, fail, UNTRUSTED\n"
        "import hermes.contract, hermes.hookspecs, hermes.tools\n"
        "assert Tool is hermes.contract.Tool and hookimpl is hermes.hookspecs.hookimpl\n"
        "assert ok is hermes.contract.ok\n"
        "print(','.join(loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hermes"  # nothing but the package itself on `import hermes`


def test_an_unknown_name_is_an_attribute_error():
    import hermes

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hermes.nope  # noqa: B018


def test_the_readme_layout_names_every_module_and_nothing_else():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Project layout", 1)[1].split("```", 2)[1]
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.py|/)?", section))
    core = ROOT / "hermes"
    missing = []
    for path in sorted(core.rglob("*.py")):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        if path.stem not in words and path.name not in words:
            missing.append(str(path.relative_to(ROOT)))
    for directory in sorted(p for p in core.iterdir() if (p / "__init__.py").exists()):
        if f"{directory.name}/" not in words:
            missing.append(f"{directory.relative_to(ROOT)}/")
    assert not missing, f"README's Project layout does not name: {missing}"
    named = {w[:-1] for w in words if w.endswith("/")} | {w[:-3] for w in words if w.endswith(".py")}
    stale = sorted(
        n
        for n in named - {"hermes", "plugins", "tests", "benchmarks", "feeds", "persona", "digest", "corpus"}
        if not list(core.rglob(f"{n}.py")) and not (core / n).is_dir()
    )
    assert not stale, f"README's Project layout names what no longer exists: {stale}"
