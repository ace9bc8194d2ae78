"""The layers of docs/architecture.md ("Layers"), checked on the imports themselves.

From the top: the faces (``hermes.cli``, ``hermes.web``, the MCP server) → the plugins
(``hermes.builtins`` and every package of ``plugins/``) → the engine (everything else of
``hermes``: ranking, ingest, embedding, text, graph … and the face toolkit
``hermes.facekit`` that faces and plugins share) → storage (``hermes.storage``,
``hermes.storage.records``) → the base (the plugin machinery and the settings, which storage uses
for its hooks and its file) → the contract (``hermes.contract`` and its leaves). A module
imports only from its own layer or below — every import counts, at the top, inside a
function or under ``TYPE_CHECKING`` (the source is parsed, nothing is imported).

One allowance, derived from the graph rather than listed: an engine module that imports
nothing of hermes but the contract (pure text helpers such as ``hermes.text.authors``,
``hermes.facekit.faces``' words) is a leaf that storage may use too.
"""

from __future__ import annotations

from pathlib import Path

from test_architecture import imports, modules

#: bottom to top
ORDER = ("contract", "base", "storage", "engine", "plugins", "faces")
FACES = ("hermes.cli", "hermes.web", "hermes.mcp_server", "hermes.mcp_unreadable", "hermes.__main__")
PLUGINS = ("hermes.builtins",)  # and every hermes_* package (plugins/)
STORAGE = ("hermes.storage", "hermes.storage.records")
BASE = ("hermes.plugins", "hermes.hookspecs", "hermes.config")
CONTRACT = ("hermes.contract", "hermes.clock", "hermes.errors", "hermes.arguments")


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layer(module: str) -> str:
    if module.startswith("hermes_") or _under(module, PLUGINS):
        return "plugins"
    for name, prefixes in (("faces", FACES), ("storage", STORAGE), ("base", BASE), ("contract", CONTRACT)):
        if _under(module, prefixes):
            return name
    return "engine"


def edges(known: dict[str, Path]) -> dict[str, list[tuple[str, int]]]:
    """``module -> [(imported hermes module, line)]``, every import included."""
    return {m: [(t, node.lineno) for t, node, _ in imports(m, p, known, typing=True)] for m, p in known.items()}


def violations(known: dict[str, Path]) -> list[str]:
    graph = edges(known)
    leaves = {m for m, out in graph.items() if layer(m) == "engine" and all(layer(t) == "contract" for t, _ in out)}
    found = []
    for module, out in sorted(graph.items()):
        here = ORDER.index(layer(module))
        for target, line in out:
            if ORDER.index(layer(target)) <= here:
                continue
            if target in leaves and layer(module) != "contract":
                continue
            found.append(f"{known[module]}:{line}: {module} ({layer(module)}) imports {target} ({layer(target)})")
    return found


def test_every_import_goes_down_the_layers():
    found = violations(modules())
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_the_layers_are_what_the_docs_say():
    assert layer("hermes.cli.core") == layer("hermes.web.pages") == layer("hermes.mcp_server") == "faces"
    assert layer("hermes_corpus.routes") == layer("hermes.builtins.clicks") == "plugins"
    assert layer("hermes.facekit.terminal") == layer("hermes.ranking.rank") == "engine"
    assert layer("hermes.storage.clicks") == layer("hermes.storage.records") == "storage"
    assert layer("hermes.plugins") == "base" and layer("hermes.contract") == "contract"


def test_the_contract_imports_only_the_contract():
    """The ground floor: the contract imports nothing of hermes but its leaves (the clock,
    the errors, the argument checks), and those import nothing above them."""
    known = modules()
    graph = edges(known)
    for module in (m for m in known if layer(m) == "contract"):
        assert {t for t, _ in graph[module]} <= set(CONTRACT), module
    assert {t for t, _ in graph["hermes.clock"]} == set()


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    known = {}
    for module, text in files.items():
        path = tmp_path / (module.replace(".", "_") + ".py")
        path.write_text(text, encoding="utf-8")
        known[module] = path
    return known


def test_the_check_sees_imports_in_functions_and_for_typing(tmp_path):
    """A plugin reaching a face from inside a function, an engine module naming a plugin for
    an annotation only, storage importing the engine: each is found."""
    known = _tree(
        tmp_path,
        {
            "hermes_fake.cli": "def run():\n    from hermes.cli.support import die\n",
            "hermes.cli.support": "",
            "hermes.ranking.fake": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hermes_fake.cli import run\n"
            ),
            "hermes.storage.fake": "from hermes.ranking import fake\n",
            "hermes.ranking": "",
            "hermes.contract": "from hermes.storage.records import now_iso\n",
            "hermes.storage.records": "",
            "hermes.text.clip": "",
            "hermes.storage.ok": "from hermes.text.clip import clip\nfrom hermes.contract import ok\n",
        },
    )
    found = "\n".join(violations(known))
    assert "hermes_fake.cli (plugins) imports hermes.cli.support (faces)" in found
    assert "hermes.ranking.fake (engine) imports hermes_fake.cli (plugins)" in found
    assert "hermes.storage.fake (storage) imports hermes.ranking.fake (engine)" in found
    assert "hermes.contract (contract) imports hermes.storage.records (storage)" in found
    assert "hermes.storage.ok" not in found  # a leaf of the engine, and the contract below
