"""The plugin contract: every hook is documented and exercised here by a test plugin."""

from __future__ import annotations

import inspect
from typing import Annotated

import numpy as np
import pytest
from pydantic import Field

from hermes import hookspecs
from hermes.contract import Component, Migration, Result, Signal, ok, tool
from hermes.errors import InvalidInput, NotFound
from hermes.hookspecs import hookimpl
from hermes.ranking.rank import rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user
from hermes.storage.signals import record_signal
from hermes.tools import call_tool, collect_tools

HOOKS = sorted(n for n in dir(hookspecs) if n.startswith("hermes_"))


def test_every_hook_is_documented():
    for name in HOOKS:
        assert inspect.getdoc(getattr(hookspecs, name)), f"{name} has no docstring contract"


def test_every_hook_has_a_test():
    here = {n for n in globals() if n.startswith("test_hook_")}
    missing = [h for h in HOOKS if f"test_hook_{h}" not in here]
    assert not missing, f"hooks without a test_hook_<name> test: {missing}"


class Shouted(Result):
    text: str = ""


@tool("extra", result=Shouted, read_only=True)
def shout(db, text: Annotated[str, Field(description="what to shout", max_length=100)]) -> dict:
    """Upper-case text."""
    return ok("shouted", text=text.upper())


class ThirdParty:
    @hookimpl
    def hermes_register_tools(self):
        return [shout]

    @hookimpl
    def hermes_register_signals(self):
        return ["poke"]

    @hookimpl
    def hermes_migrations(self):
        def create(db):
            db.execute("CREATE TABLE IF NOT EXISTS pokes (user_id INTEGER, item_id INTEGER)")

        return [Migration("thirdparty:001_pokes", create)]


def test_hook_hermes_register_tools(pm, db):
    pm.register(ThirdParty(), name="thirdparty")
    tools = collect_tools()
    assert tools["shout"].plugin == "thirdparty"
    assert call_tool(db, tools["shout"], {"text": "hi"}) == {"ok": True, "message": "shouted", "text": "HI"}
    assert "shout" not in collect_tools(groups={"feeds"})


def test_tool_errors_keep_the_payload_keys(pm, db):
    pm.register(ThirdParty(), name="thirdparty")
    result = call_tool(db, collect_tools()["shout"], {"text": 3})
    # every key of the payload, the refused argument echoed as it was given (never a made-up "")
    assert result["ok"] is False and result["text"] == 3
    assert result["message"] == "text must be a string of at most 100 characters, got 3."


def test_hook_hermes_migrations(pm, db_path):
    from hermes.storage.db import get_db

    pm.register(ThirdParty(), name="thirdparty")
    database = get_db(db_path)
    assert "pokes" in database.table_names()
    names = [r[0] for r in database.execute("SELECT name FROM _migrations")]
    assert "thirdparty:001_pokes" in names and "core:m002_clicks_source" in names


def test_hook_hermes_register_signals(pm, db):
    pm.register(ThirdParty(), name="thirdparty")
    user = create_user(db, "ann", "x")
    record_signal(db, Signal("poke", user["id"], 1), lambda d: None)
    with pytest.raises(InvalidInput, match="unknown signal kind"):
        record_signal(db, Signal("nope", user["id"], 1), lambda d: None)


def test_hook_hermes_signal_written(pm, db, add_items):
    seen = []

    class Observer:
        @hookimpl
        def hermes_signal_written(self, db, signal):
            seen.append((signal.kind, db.conn.in_transaction))
            if signal.data.get("label") == "dislike":
                raise RuntimeError("observer refuses")

    pm.register(Observer(), name="observer")
    user = create_user(db, "ann", "x")
    [item] = add_items([{"title": "a"}])
    record_click(db, user["id"], item, True, "agent")
    assert seen == [("click", True)]
    with pytest.raises(RuntimeError):
        record_click(db, user["id"], item, False, "agent")
    # the failed observer rolled the click back: the like is still the stored label
    assert db.execute("SELECT label FROM clicks").fetchall() == [("like",)]


def test_hook_hermes_candidates(pm, db, add_items):
    ids = add_items([{"title": f"paper {i}"} for i in range(4)])

    class OnlyEven:
        @hookimpl
        def hermes_candidates(self, db, user, query, matrix):
            return [i for i in matrix.ids.tolist() if i % 2 == 0]

    pm.register(OnlyEven(), name="only_even")
    user = create_user(db, "ann", "paper")
    got = {r["id"] for r in rank_items(db, user, limit=10)}
    assert got == {i for i in ids if i % 2 == 0}


def test_hook_hermes_score(pm, db, add_items):
    ids = add_items([{"title": "graph networks"}, {"title": "graph networks too"}])
    user = create_user(db, "ann", "graph networks")

    class PreferLast:
        @hookimpl
        def hermes_score(self, db, user, item_ids, vectors, context):
            return Component("prefer_last", "boost", (item_ids == max(ids)).astype(float), weight=5.0)

    before = [r["id"] for r in rank_items(db, user, limit=2)]
    pm.register(PreferLast(), name="prefer_last")
    after = [r["id"] for r in rank_items(db, user, limit=2)]
    assert before[0] == min(ids) and after[0] == max(ids)


def test_hook_hermes_embedder(pm):
    from hermes.embed import get_embedder

    class Tiny:
        name, dimension = "tiny", 2

        def embed(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    class Provider:
        @hookimpl
        def hermes_embedder(self):
            return Tiny()

    pm.register(Provider(), name="tiny")
    pm.embedder = None
    assert get_embedder().name == "tiny"


def test_hook_hermes_register_commands(pm):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    class Cmd:
        @hookimpl
        def hermes_register_commands(self, app):
            @app.command("hello")
            def hello():
                print("hello from a plugin")

    pm.register(Cmd(), name="cmd")
    result = CliRunner().invoke(build_app(), ["hello"])
    assert result.exit_code == 0 and "hello from a plugin" in result.output


def test_hook_hermes_register_routes(pm, db_path):
    from starlette.responses import PlainTextResponse
    from starlette.testclient import TestClient

    from hermes.web.app import create_app

    class Routes:
        @hookimpl
        def hermes_register_routes(self, app):
            app.add_route("/plugin-ping", lambda request: PlainTextResponse("pong"))

    pm.register(Routes(), name="routes")
    assert TestClient(create_app(str(db_path))).get("/plugin-ping").text == "pong"


def test_unknown_plugin_in_allow_list_is_a_clear_error(monkeypatch):
    from hermes import plugins

    monkeypatch.setenv("HERMES_PLUGINS", "feeds,nonexistent")
    plugins.pm_cache_clear()
    with pytest.raises(NotFound, match="nonexistent"):
        plugins.get_plugin_manager()


def test_allow_list_disables_the_others(monkeypatch):
    from hermes import plugins

    monkeypatch.setenv("HERMES_PLUGINS", "signals,default_embedder,default_candidates,scorers,feeds")
    plugins.pm_cache_clear()
    names = {n for n, _ in plugins.get_plugin_manager().list_name_plugin()}
    assert "feeds" in names and "corpus" not in names and "digest" not in names


def test_plugins_command_lists_plugins_and_tools():
    import json

    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    result = CliRunner().invoke(build_app(), ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    found = {p["name"]: p for p in json.loads(result.output)}
    assert {"feeds", "persona", "digest", "corpus", "scorers"} <= set(found)
    assert "hermes_score" in found["scorers"]["hooks"]


def test_hook_hermes_item_tags(pm, db, tmp_path):
    """A tagger plugin's proposals are normalised, kept once two items carry them, marked
    as keyphrases, and never displace the feed's own categories."""
    import json

    from hermes.ingest.pipeline import add_feeds, run_ingest

    class Tagger:
        @hookimpl
        def hermes_item_tags(self, item, vector):
            assert vector is not None and len(vector) == 384  # tagged after embedding
            if "graph" in item["title"].lower():
                return ["Graph Neural Networks", "graph neural networks ", "CS.LG", f"only {item['id']}"]
            return None

    pm.register(Tagger(), name="tagger")
    feed = tmp_path / "feed.xml"
    feed.write_text(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        "<item><title>Graph transformers</title><guid>a</guid><category>cs.LG</category></item>"
        "<item><title>Graph pooling</title><guid>c</guid></item>"
        "<item><title>Galaxies</title><guid>b</guid></item></channel></rss>",
        encoding="utf-8",
    )
    add_feeds(db, [(str(feed), None)])
    run_ingest(db)
    rows = {t: (json.loads(g), json.loads(k)) for t, g, k in db.execute("SELECT title, tags, keyphrases FROM items")}
    assert rows == {
        "Graph transformers": (["cs.lg", "graph neural networks"], ["graph neural networks"]),
        "Graph pooling": (["graph neural networks"], ["graph neural networks"]),
        "Galaxies": ([], []),
    }


def test_signal_observers_hand_their_changes_back_through_pluggy(pm, db, add_items):
    """hermes_signal_written returns what it changed; record_signal collects the answers."""
    from hermes.storage.records import create_user

    class Observer:
        @hookimpl
        def hermes_signal_written(self, db, signal):
            return [{"kind": "seen", "item_id": signal.item_id}] if signal.kind == "poke" else None

    pm.register(ThirdParty(), name="thirdparty")
    pm.register(Observer(), name="observer")
    user = create_user(db, "ann", "x")
    recorded = record_signal(db, Signal("poke", user["id"], 7), lambda d: "written")
    assert recorded.result == "written" and recorded.observed == [{"kind": "seen", "item_id": 7}]


def test_hook_hermes_register_prompts(pm, db_path):
    """A plugin's MCP prompt is served when every tool it uses is, and renders its text."""
    import anyio
    import mcp

    from hermes.contract import Prompt
    from hermes.mcp_server import build_server

    class Prompts:
        @hookimpl
        def hermes_register_tools(self):
            return [shout]

        @hookimpl
        def hermes_register_prompts(self):
            return [
                Prompt(
                    "shout_it", "Shout it", "Shout a word.", lambda word: f"Call shout with text={word!r}.", ("shout",)
                )
            ]

    pm.register(Prompts(), name="prompts")

    async def served(groups):
        async with mcp.Client(build_server(str(db_path), groups)) as client:
            names = [p.name for p in (await client.list_prompts()).prompts]
            text = (
                (await client.get_prompt("shout_it", {"word": "hi"})).messages[0].content.text
                if "shout_it" in names
                else None
            )
        return names, text

    names, text = anyio.run(served, None)
    assert "shout_it" in names and text == "Call shout with text='hi'."
    assert "shout_it" not in anyio.run(served, {"feeds"})[0]  # its tool is not served


def test_hook_hermes_config_sections(pm):
    """A declared section's near-miss is refused once the plugins are registered; the
    plugin reads its section through the one typed read, checked by its own model."""
    from pydantic import BaseModel, ConfigDict

    from hermes.config import check_sections, config_toml, settings
    from hermes.errors import HermesError

    class PokeSettings(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        per_day: int = 3

    class Pokes:
        @hookimpl
        def hermes_config_sections(self):
            return ["pokes"]

    pm.register(Pokes(), name="pokes")
    declared = [name for names in pm.hook.hermes_config_sections() for name in names]
    assert "pokes" in declared and "corpus" in declared
    config_toml().parent.mkdir(parents=True, exist_ok=True)
    config_toml().write_text("[pokes]\nper_day = 5\n")
    check_sections(declared)
    assert settings().section("pokes", PokeSettings).per_day == 5
    config_toml().write_text("[poke]\nper_day = 5\n")
    with pytest.raises(HermesError, match=r"did you mean \[pokes\]"):
        check_sections(declared)
