"""hermes uses its dependencies' public APIs only (issue 35): a private module or name
(``feedparser.datetimes._parse_date``, scikit-learn's ``_stop_words``) can change in any
release without notice, and hermes keeps its own state in its own types, not as attributes
set on another library's object (``pm._hermes_embedder`` on pluggy's manager)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from hermes import plugins

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.glob("hermes/**/*.py"), *ROOT.glob("plugins/**/*.py")])
OURS = ("hermes", "hermes_feeds", "hermes_persona", "hermes_digest", "hermes_corpus")
# Being replaced by other work of issue 35 (the faces' terminal helpers, the MCP server):
# drop a name here once its module no longer needs it.
NOT_YET = {"typer"}


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line module.name`` of every private module or name of a dependency imported."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top in OURS or top in NOT_YET or top in sys.stdlib_module_names:
                continue
            names = [f"{node.module}.{a.name}" for a in node.names]
            found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names if _private(n)]
        elif isinstance(node, ast.Import):
            found += [
                f"{path.relative_to(root)}:{node.lineno} {a.name}"
                for a in node.names
                if a.name.split(".")[0] not in OURS + tuple(NOT_YET) and _private(a.name)
            ]
    return found


def test_no_private_module_or_name_of_a_dependency_is_imported():
    assert [hit for path in SOURCES for hit in private_imports(path)] == []


def test_the_checker_sees_a_private_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from feedparser.datetimes import _parse_date\nimport sklearn.feature_extraction._stop_words\n")
    assert private_imports(probe, tmp_path) == [
        "probe.py:1 feedparser.datetimes._parse_date",
        "probe.py:2 sklearn.feature_extraction._stop_words",
    ]


def test_hermes_keeps_its_state_on_its_own_plugin_manager(hermes_home):
    from hermes.embed import get_embedder

    pm = plugins.get_plugin_manager()
    assert isinstance(pm, plugins.PluginManager) and pm.failed == []
    assert pm.embedder is None
    assert get_embedder() is pm.embedder is get_embedder()  # chosen once, then kept
    assert not [name for name in vars(pm) if name.startswith("_hermes")]
