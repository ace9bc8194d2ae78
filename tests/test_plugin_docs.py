"""docs/plugin_hooks.md has a section with an example for every hook, and the fixtures of
:mod:`hermes.testing` work the way that page says a plugin author uses them."""

from __future__ import annotations

import re
from pathlib import Path

from hermes import hookspecs

DOC = Path(__file__).resolve().parents[1] / "docs" / "plugin_hooks.md"
HOOKS = sorted(n for n in dir(hookspecs) if n.startswith("hermes_"))


def sections() -> dict[str, str]:
    parts = re.split(r"^## (\S+)\n", DOC.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_hook_has_a_section_with_an_example():
    found = sections()
    missing = [h for h in HOOKS if h not in found]
    assert not missing, f"docs/plugin_hooks.md has no section for: {missing}"
    for hook in HOOKS:
        assert "```python" in found[hook] and f"def {hook}(" in found[hook], hook
    assert set(found) <= set(HOOKS), f"sections for hooks that do not exist: {set(found) - set(HOOKS)}"


def test_the_tool_example_runs(hermes_db, hermes_plugin):
    import types

    from hermes.storage.records import create_user
    from hermes.tools import call_tool, collect_tools

    code = re.search(r"```python\n(.*?)```", sections()["hermes_register_tools"], re.S).group(1)
    module = types.ModuleType("hermes_mine")
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    hermes_plugin(module, name="mine")
    create_user(hermes_db, "ann", "anything")
    result = call_tool(hermes_db, collect_tools()["echo"], {"user": "ann"})
    assert result == {"ok": True, "message": "hello ann", "user": "ann"}


def test_a_registered_plugin_is_gone_after_its_test(hermes_home):
    from hermes.plugins import get_plugin_manager

    assert get_plugin_manager().get_plugin("mine") is None
