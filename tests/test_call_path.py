"""One way to call a tool (issue 35): every face's wrapper is a thin call to
hermes.tools.call_tool, which checks the arguments against the tool's model."""

from __future__ import annotations

from hermes.tools import call_tool, call_tool_status, collect_tools
from hermes.web.access import Tools


def test_the_web_refuses_an_argument_the_tool_does_not_take(db):
    """The web's wrapper used to drop an argument the tool does not take, silently: a page
    that misspells one got the default instead. Now it is refused, naming it, as over MCP."""
    result = Tools().call(db, "list_feeds", bogus=1)
    assert result["ok"] is False
    assert result["message"].startswith('list_feeds has no parameter "bogus"')
    assert result == call_tool(db, collect_tools()["list_feeds"], {"bogus": 1}, face="web")


def test_the_status_follows_the_kind_of_answer(db):
    tools = collect_tools()
    assert call_tool_status(db, tools["list_feeds"], {})[0] == 200
    assert call_tool_status(db, tools["list_feeds"], {"bogus": 1})[0] == 400
    status, result = call_tool_status(db, tools["list_feed"], {"user": "nobody"})
    assert status == 404 and result["ok"] is False


def _is_super(call) -> bool:
    import ast

    return isinstance(call.func, ast.Name) and call.func.id == "super"


def _calls(attribute: str) -> set[str]:
    """The source files of hermes/ and plugins/ that call ``<something>.attribute(...)`` or
    ``attribute(...)`` (parsed, nothing imported)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    found = set()
    for path in [*(root / "hermes").rglob("*.py"), *(root / "plugins").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) and _is_super(f.value):
                    continue  # a class's own dispatch (click's Group.invoke), no tool's
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name == attribute:
                    found.add(path.relative_to(root).as_posix())
    return found


def test_only_the_call_path_invokes_a_tool():
    """No face or route maps a tool's exceptions itself (corpus/routes.py did)."""
    assert _calls("invoke") == {"hermes/contract.py", "hermes/tools.py"}


def test_a_ranked_page_is_explained_in_one_place():
    """The feed faces and the digest take their page from hermes.ranking.page.ranked_page
    (the digest had its own rank -> positions -> rows -> explain block); explain_item
    explains its one item."""
    assert _calls("explain_ranked") == {"hermes/ranking/page.py", "hermes/ranking/explain.py"}
