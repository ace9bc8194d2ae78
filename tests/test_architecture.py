"""The shape of the code: no import cycle in the core, imports at the top, one contract.

Walks the source with :mod:`ast` (nothing is imported). An import inside a function is
allowed only when it keeps a heavy library out of the processes that do not need it
(``hermes serve`` must list tools without torch, the CLI starts without the MCP SDK …), and
then the comment just above it says so.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: package name -> its source directory
PACKAGES = {"hermes": ROOT / "hermes", **{f"hermes_{p.name}": p for p in (ROOT / "plugins").iterdir()
                                          if (p / "__init__.py").exists()}}
#: the words a "why this import is here" comment must contain one of
WHY = ("load only", "loads only", "not at the top", "not at module level")


def modules() -> dict[str, Path]:
    found = {}
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


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


def imports(module: str, path: Path, known: dict[str, Path],
            typing: bool = False) -> list[tuple[str, ast.stmt, bool]]:
    """``(imported hermes module, node, inside a function)`` for every runtime import (and
    those made for annotations only with ``typing``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if typing else _type_checking_lines(tree)
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(range(node.lineno, node.end_lineno + 1))
    out = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path.name == "__init__.py")
            # ``from pkg import sub`` imports the submodule when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            if target in known:
                out.append((target, node, node.lineno in in_function))
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: {t for t, _, lazy in imports(m, p, known) if not lazy} for m, p in known.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
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


def test_the_contract_is_the_ground_floor():
    """The contract imports nothing of hermes but leaves: the clock, the errors and the
    argument checks (which import only the errors)."""
    known = modules()
    leaves = {"hermes.clock", "hermes.errors", "hermes.arguments"}
    found = {t for t, _, _ in imports("hermes.contract", known["hermes.contract"], known,
                                      typing=True)}
    assert found <= leaves, sorted(found - leaves)
    for leaf in leaves:
        below = {t for t, _, _ in imports(leaf, known[leaf], known, typing=True)}
        assert below <= {"hermes.errors"}, (leaf, sorted(below))


def test_imports_inside_functions_say_why():
    """An in-function import of a hermes module must keep a heavy library out of processes
    that do not need it, and the comment right above it says which."""
    known = modules()
    unexplained: set[str] = set()
    for module, path in known.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for target, node, lazy in imports(module, path, known):
            if not lazy:
                continue
            k = node.lineno - 2
            while k >= 0 and lines[k].strip().startswith(("from ", "import ")):
                k -= 1  # one comment may explain a block of imports
            comment = []  # the comment lines right above the import (block)
            while k >= 0 and lines[k].strip().startswith("#"):
                comment.insert(0, lines[k].strip())
                k -= 1
            if not any(word in " ".join(comment) for word in WHY):
                unexplained.add(f"{path.relative_to(ROOT)}:{node.lineno} imports {target}")
    assert not unexplained, "in-function imports without a reason:\n" + "\n".join(sorted(unexplained))


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
    code = ("import sys, hermes\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('hermes'))\n"
            "from hermes import hookimpl, Tool, Component, CandidateQuery, Signal, Migration, "
            "ScoringContext, Embedder, ok, fail, UNTRUSTED\n"
            "import hermes.contract, hermes.hookspecs, hermes.tools\n"
            "assert Tool is hermes.contract.Tool and hookimpl is hermes.hookspecs.hookimpl\n"
            "assert ok is hermes.contract.ok\n"
            "print(','.join(loaded))")
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
    stale = sorted(n for n in named - {"hermes", "plugins", "tests", "benchmarks", "feeds", "persona",
                                         "digest", "corpus"}
                   if not list(core.rglob(f"{n}.py")) and not (core / n).is_dir())
    assert not stale, f"README's Project layout names what no longer exists: {stale}"
