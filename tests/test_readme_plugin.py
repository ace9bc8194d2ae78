"""The plugin example in README.md works as printed: its tool is served, its scorer counts."""

from __future__ import annotations

import re
import types
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_plugin() -> types.ModuleType:
    block = re.search(r"```python\n(# hermes_short/__init__\.py.*?)```", README.read_text(), re.S)
    assert block, "README lost its plugin example"
    module = types.ModuleType("hermes_short")
    exec(compile(block.group(1), "README.md", "exec"), module.__dict__)
    return module


def test_readme_plugin_adds_a_tool_and_a_scorer(pm, db, add_items):
    from hermes.ranking.rank import rank
    from hermes.storage.records import create_user
    from hermes.tools import call_tool, collect_tools

    add_items(
        [{"title": "A very long title about graph neural networks and their many uses"}, {"title": "Graph networks"}]
    )
    user = create_user(db, "ann", "graph neural networks")
    plain = rank(db, user)
    pm.register(readme_plugin(), name="short")
    assert collect_tools()["count_items"].plugin == "short"
    result = call_tool(db, collect_tools()["count_items"], {"feed_id": 1})
    assert result["ok"] and result["count"] == 2
    boosted = rank(db, user)
    assert "short_titles" in boosted.components and "short_titles" not in plain.components
