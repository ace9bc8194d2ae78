"""A plugin whose tools break the tool contract is left out like one that fails to import:
the core's commands, ``hermes serve`` and the other plugins go on, one stderr line names it
with a complete allow-list to paste, and ``hermes plugins`` shows the error. A command
missing because the allow-list left out its built-in plugin says so.

The trial's plugin: a scorer boosting a domain, and a tool whose string parameter has no
``max_length``."""

from __future__ import annotations

import json
import sys
import types
from typing import Annotated

import mcp
import pytest
from pydantic import Field
from typer.testing import CliRunner

from hermes import Result, hookimpl, ok, plugins, tool
from hermes.cli.app import build_app
from hermes.mcp_server import build_server
from hermes.storage.records import create_user
from hermes.tools import collect_tools

DOMAINBOOST = '''
from typing import Annotated
from pydantic import Field
from hermes import Component, Result, hookimpl, ok, tool


class Count(Result):
    count: int = 0


@tool("domainboost", result=Count, read_only=True)
def count_domain_items(db, domain: Annotated[str, Field(description="a domain")]) -> dict:
    """Count a domain's items."""
    return ok("counted", count=0)


@hookimpl
def hermes_register_tools():
    return [count_domain_items]


@hookimpl
def hermes_score(db, user, item_ids, vectors, context):
    return Component("domain", "boost", [float(i % 2) for i in item_ids])
'''


@pytest.fixture
def domainboost(hermes_home, tmp_path, monkeypatch):
    """``hermes-domainboost`` installed, as the trial had it."""
    site = tmp_path / "site"
    (site / "hermes_domainboost").mkdir(parents=True)
    (site / "hermes_domainboost" / "__init__.py").write_text(DOMAINBOOST)
    info = site / "hermes_domainboost-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-domainboost\nVersion: 0.1.0\n")
    (info / "top_level.txt").write_text("hermes_domainboost\n")
    (info / "entry_points.txt").write_text("[hermes]\ndomainboost = hermes_domainboost\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("HERMES_LOAD_ENTRYPOINTS", "1")
    plugins.pm_cache_clear()
    yield site
    plugins.pm_cache_clear()


def test_the_plugin_is_left_out_with_one_line_naming_it_the_problem_and_the_way_out(domainboost, capsys):
    pm = plugins.get_plugin_manager()
    assert pm.get_plugin("domainboost") is None  # its scorer too: no plugin half there
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert (
        "plugin 'domainboost' (hermes-domainboost 0.1.0) failed to load and is skipped: "
        "tool 'count_domain_items' has string parameter(s) domain without a max_length"
    ) in err
    assert "pip uninstall hermes-domainboost" in err
    # the allow-list to paste is complete: every loaded plugin, none left out by accident
    suggested = err.split("HERMES_PLUGINS=")[1].split(",")
    assert suggested == list(plugins.DEFAULT_PLUGINS)


def test_the_other_tools_and_the_core_commands_work(domainboost, db_path, db, add_items):
    add_items([{"title": "graph networks"}])
    create_user(db, "bob", "graph networks")
    tools = collect_tools()
    assert "list_feed" in tools and "count_domain_items" not in tools
    done = CliRunner().invoke(build_app(), ["--db", str(db_path), "feed", "bob"])
    assert done.exit_code == 0, done.output
    assert "graph networks" in done.output


def test_hermes_plugins_shows_the_error(domainboost):
    text = CliRunner().invoke(build_app(), ["plugins"]).output
    assert "domainboost  (hermes_domainboost, hermes-domainboost 0.1.0)" in text
    assert "failed to load: tool 'count_domain_items' has string parameter(s) domain" in text
    found = {p["name"]: p for p in json.loads(CliRunner().invoke(build_app(), ["plugins", "--json"]).stdout)}
    assert "without a max_length" in found["domainboost"]["error"]
    assert found["domainboost"]["tools"] == [] and found["feeds"]["error"] is None


@pytest.mark.anyio
async def test_hermes_serve_does_not_serve_the_broken_tool(domainboost, db_path, db):
    async with mcp.Client(build_server(str(db_path))) as client:
        served = {t.name for t in (await client.list_tools()).tools}
    assert "list_feed" in served and "count_domain_items" not in served


# --- other ways a plugin's tools fail -------------------------------------------------------


class Echoed(Result):
    text: str = ""


@tool("dup", result=Echoed)
def list_feed(db, text: Annotated[str, Field(max_length=10)]) -> dict:
    """A tool with a built-in tool's name."""
    return ok(text, text=text)


def _raises():
    raise KeyError("boom")


class Unknown:
    """A type pydantic cannot describe."""


class Unschemable(Result):
    thing: Unknown | None = None


@tool("dup", result=Unschemable)
def odd_answer(db, text: Annotated[str, Field(max_length=10)]) -> dict:
    """A tool whose answer has a field type pydantic cannot describe."""
    return ok(text)


@pytest.mark.parametrize(
    "tools, problem",
    [
        (lambda: [list_feed], "its tool 'list_feed' has the name of a tool of plugin 'feeds'"),
        (lambda: ["echo"], "it registered 'echo', not a Tool"),
        (_raises, "KeyError: 'boom'"),
        # built at the check, not at import (hermes.contract.Answer): left out all the same
        (lambda: [odd_answer], "PydanticSchemaGenerationError"),
    ],
)
def test_a_plugin_whose_tools_cannot_be_collected_is_left_out(hermes_home, monkeypatch, capsys, tools, problem):
    module = types.ModuleType("hermes_dup")
    module.hermes_register_tools = hookimpl(tools)
    monkeypatch.setitem(sys.modules, "hermes_dup", module)
    monkeypatch.setitem(plugins.DEFAULT_PLUGINS, "dup", "hermes_dup")  # registered last
    plugins.pm_cache_clear()
    try:
        assert plugins.get_plugin_manager().get_plugin("dup") is None
        assert collect_tools()["list_feed"].plugin == "feeds"
        assert "plugin 'dup'" in capsys.readouterr().err
        assert problem in {p["name"]: p for p in plugins.describe_plugins()}["dup"]["error"]
    finally:
        monkeypatch.undo()
        plugins.pm_cache_clear()


# --- a command its plugin was left out of ---------------------------------------------------


def test_a_command_of_a_left_out_built_in_says_which_plugin_and_how_to_list_it(monkeypatch):
    monkeypatch.setenv("HERMES_PLUGINS", "persona")
    plugins.pm_cache_clear()
    done = CliRunner().invoke(build_app(), ["feed", "bob"])
    assert done.exit_code == 1
    fix = "signals,default_embedder,default_candidates,default_keyphrases,scorers,feeds,persona"
    assert done.stderr.strip() == (
        "error: 'feed' comes from the built-in plugin 'feeds', which HERMES_PLUGINS=persona "
        f"leaves out; list it too: HERMES_PLUGINS={fix}"
    )
    assert "no such command 'fed'" in CliRunner().invoke(build_app(), ["fed"]).stderr.lower()
    monkeypatch.setenv("HERMES_PLUGINS", fix)  # pasted as given, the command is back
    plugins.pm_cache_clear()
    assert CliRunner().invoke(build_app(), ["feed", "--help"]).exit_code == 0


def test_the_config_allow_list_is_named_as_such(hermes_home, monkeypatch):
    (hermes_home / "config.toml").write_text('[plugins]\nenabled = ["feeds"]\n')
    plugins.pm_cache_clear()
    done = CliRunner().invoke(build_app(), ["corpus"])
    assert (
        "'corpus' comes from the built-in plugin 'corpus', which [plugins] enabled in "
        "config.toml leaves out" in done.stderr
    )
    assert '"scorers", "feeds", "corpus"]' in done.stderr
