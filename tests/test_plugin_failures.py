"""A broken plugin is named, and hermes goes on without it where it can: an installed
plugin that fails to import is skipped with one warning line on stderr (every command keeps
working), a scorer that raises is left out of the ranking with a warning naming it, a
malformed component is refused saying what is wrong, and a tool with an unbounded string
parameter is refused by name."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Annotated

import numpy as np
import pytest
from process_support import child_env, hermes_command
from pydantic import Field
from typer.testing import CliRunner

from hermes import Component, Result, hookimpl, ok, plugins, tool
from hermes.contract import CandidateQuery
from hermes.embed import get_embedder
from hermes.errors import HermesError
from hermes.ranking import matrix as matrix_mod
from hermes.ranking import rank as rank_mod
from hermes.ranking.rank import rank
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools


def broken_distribution(site) -> None:
    """An installed distribution ``hermes-broken`` whose ``broken`` entry point fails to
    import, as the trial's plugin did."""
    (site / "hermes_broken").mkdir(parents=True)
    (site / "hermes_broken" / "__init__.py").write_text("import nonexistent_module_xyz\n")
    info = site / "hermes_broken-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-broken\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[hermes]\nbroken = hermes_broken\n")


@pytest.fixture
def broken(hermes_home, tmp_path, monkeypatch):
    site = tmp_path / "site"
    broken_distribution(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("HERMES_LOAD_ENTRYPOINTS", "1")
    plugins.pm_cache_clear()
    yield site
    plugins.pm_cache_clear()


# --- a plugin that fails to load -------------------------------------------------------------


def test_a_plugin_that_fails_to_import_is_skipped_with_one_line_on_stderr(broken, capsys):
    pm = plugins.get_plugin_manager()
    assert pm.get_plugin("broken") is None and pm.get_plugin("feeds") is not None
    out, err = capsys.readouterr()
    assert out == ""  # stdout carries the MCP stdio stream
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert "plugin 'broken' (hermes-broken 0.1.0) failed to load and is skipped" in line
    assert "ModuleNotFoundError: No module named 'nonexistent_module_xyz'" in line
    assert "pip uninstall hermes-broken" in line
    assert "HERMES_PLUGINS=" in line and "feeds" in line.split("HERMES_PLUGINS=")[1]


def test_hermes_plugins_lists_the_failed_plugin_with_its_error(broken):
    runner = CliRunner()
    from hermes.cli.app import build_app

    text = runner.invoke(build_app(), ["plugins"]).output
    assert "broken  (hermes_broken, hermes-broken 0.1.0)" in text
    assert "failed to load: ModuleNotFoundError: No module named 'nonexistent_module_xyz'" in text
    assert "feeds  (hermes_feeds" in text
    found = {p["name"]: p for p in json.loads(runner.invoke(build_app(), ["plugins", "--json"]).output)}
    assert "nonexistent_module_xyz" in found["broken"]["error"] and found["feeds"]["error"] is None


def test_the_allow_list_leaves_a_broken_plugin_out_silently(broken, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PLUGINS", "signals,scorers,default_embedder")
    plugins.pm_cache_clear()
    plugins.get_plugin_manager()
    assert plugins.load_failures() == [] and capsys.readouterr().err == ""


def test_hermes_version_works_with_a_broken_plugin_installed(tmp_path):
    site = tmp_path / "site"
    broken_distribution(site)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        [*hermes_command(), "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(home, HERMES_LOAD_ENTRYPOINTS="1", PYTHONPATH=str(site)),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hermes ") and "broken" not in done.stdout
    assert done.stderr == ""  # --version loads no plugin (issue 36): nothing to warn about
    done = subprocess.run(
        [*hermes_command(), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(home, HERMES_LOAD_ENTRYPOINTS="1", PYTHONPATH=str(site)),
    )
    assert done.returncode == 0 and "feed" in done.stdout, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "plugin 'broken'" in done.stderr


# --- a scorer that fails --------------------------------------------------------------------


class Boom:
    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        raise KeyError("boom")


class Short:
    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        return Component("three", "boost", np.zeros(3))


class Nan:
    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        return Component("nan", "boost", np.full(len(item_ids), np.nan))


@pytest.fixture
def persona(db, add_items):
    add_items([{"title": f"graph networks {i}", "summary": "graphs"} for i in range(5)])
    return create_user(db, "ann", "graph neural networks")


def test_a_scorer_that_raises_is_left_out_and_named(db, pm, persona, caplog):
    pm.register(Boom(), name="boom")
    ranking = rank(db, persona, CandidateQuery(since_days=None))
    assert len(ranking.item_ids) == 5 and "profile" in ranking.components
    assert "plugin 'boom' failed in hermes_score and was left out: KeyError: 'boom'" in caplog.text
    result = call_tool(db, collect_tools()["list_feed"], {"user": "ann", "since_days": None})
    assert result["ok"] and not result.get("server_error")
    assert "Warning: plugin 'boom' failed in hermes_score" in result["message"]


def test_a_scorer_with_the_wrong_number_of_scores_says_what_is_wrong(db, pm, persona, caplog):
    pm.register(Short(), name="short")
    ranking = rank(db, persona, CandidateQuery(since_days=None))
    assert len(ranking.item_ids) == 5 and "three" not in ranking.components  # left out
    assert (
        "plugin 'short' returned a malformed component from hermes_score and was left "
        "out: 'three' has 3 scores; expected 5 scores"
    ) in caplog.text
    result = call_tool(db, collect_tools()["list_feed"], {"user": "ann", "since_days": None})
    assert result["ok"] and "plugin 'short'" in result["message"]
    assert "expected 5 scores" in result["message"]


def test_a_scorer_with_nan_scores_is_named(db, pm, persona, caplog):
    pm.register(Nan(), name="nan")
    assert len(rank(db, persona, CandidateQuery(since_days=None)).item_ids) == 5
    assert re.search(r"plugin 'nan' .*'nan' has 5 NaN score\(s\) of 5", caplog.text)


def test_a_scorer_failing_only_on_the_exact_pass_keeps_its_first_scores(db, pm, add_items, monkeypatch, caplog):
    """int8 storage scores twice: a plugin that fails on the second pass keeps the blend of
    the first, and is asked once more at most."""
    calls = []

    class Second:
        @hookimpl
        def hermes_score(self, db, user, item_ids, vectors, context):
            calls.append(context.exact is not None)
            if context.exact is not None:
                raise ValueError("no exact rows for me")
            return Component("second", "boost", np.arange(len(item_ids), dtype=float))

    add_items([{"title": f"graph networks {i}"} for i in range(6)])
    user = create_user(db, "ann", "graph neural networks")
    monkeypatch.setenv("HERMES_MATRIX", "int8")
    matrix_mod.clear_cache()  # a new process's matrix, in int8 storage
    pm.register(Second(), name="second")
    ranking = rank(db, user, CandidateQuery(since_days=None))
    assert rank_mod.get_matrix(db, get_embedder().name, get_embedder().dimension).storage == "int8"
    matrix_mod.clear_cache()
    assert calls == [False, True]
    assert "second" in ranking.contributions and len(ranking.item_ids) == 6
    assert "plugin 'second' failed in hermes_score" in caplog.text


# --- a tool without limits --------------------------------------------------------------------


class Said(Result):
    text: str = ""


@tool("loose", result=Said)
def say(db, text: Annotated[str, Field(description="anything")]) -> dict:
    """Say it."""
    return ok(text, text=text)


class Loose:
    @hookimpl
    def hermes_register_tools(self):
        return [say]


def test_a_tool_with_a_string_parameter_without_max_length_is_refused(hermes_plugin):
    hermes_plugin(Loose(), name="loose")
    with pytest.raises(
        HermesError,
        match=r"plugin 'loose': tool 'say' has string parameter\(s\) "
        r"text without a max_length",
    ):
        collect_tools()
