"""Start-up checks of the plugin manager: a misspelled hook fails loudly, hook calls can be
traced, and ``hermes plugins`` says where each plugin comes from."""

from __future__ import annotations

import json
import types

import pytest
from typer.testing import CliRunner

from hermes import plugins
from hermes.errors import HermesError
from hermes.hookspecs import hookimpl


@pytest.fixture
def fresh(monkeypatch):
    """Rebuild the plugin manager for the test, and again afterwards."""
    plugins.pm_cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    plugins.pm_cache_clear()


def test_a_misspelled_hook_fails_at_start_up(fresh):
    typo = types.ModuleType("hermes_typo")

    @hookimpl
    def hermes_scroe(db, user, item_ids, vectors, context):  # sic: hermes_score
        return None

    typo.hermes_scroe = hermes_scroe
    fresh.setitem(__import__("sys").modules, "hermes_typo", typo)
    fresh.setitem(plugins.DEFAULT_PLUGINS, "typo", "hermes_typo")
    with pytest.raises(HermesError, match=r"plugin 'typo' implements a hook that does not exist.*hermes_scroe"):
        plugins.get_plugin_manager()


def test_hook_calls_are_traced_on_stderr_when_asked(fresh, capsys):
    fresh.setenv("HERMES_TRACE_PLUGINS", "1")
    plugins.get_plugin_manager().hook.hermes_register_signals()
    captured = capsys.readouterr()
    assert "hermes_register_signals" in captured.err and captured.out == ""


def test_no_trace_by_default(fresh, capsys):
    fresh.delenv("HERMES_TRACE_PLUGINS", raising=False)
    plugins.get_plugin_manager().hook.hermes_register_signals()
    assert "hermes_register_signals" not in capsys.readouterr().err


def test_plugins_command_names_the_distribution_and_version():
    from hermes import __version__
    from hermes.cli.app import build_app

    found = {p["name"]: p for p in json.loads(CliRunner().invoke(build_app(), ["plugins", "--json"]).output)}
    assert found["feeds"]["distribution"] and found["feeds"]["version"] == __version__
    text = CliRunner().invoke(build_app(), ["plugins"]).output
    assert f"feeds  (hermes_feeds, {found['feeds']['distribution']} {__version__})" in text


def test_no_embedder_names_the_built_in_plugin_left_out(monkeypatch):
    """``HERMES_PLUGINS=feeds`` alone left out the embedder: a traceback ending in
    "RuntimeError: no plugin provides an embedder"; now a HermesError (one CLI line)."""
    import pytest

    from hermes import embed
    from hermes.errors import HermesError

    class Manager:
        embedder = None  # none chosen yet

        class hook:  # pluggy's attribute name
            @staticmethod
            def hermes_embedder():
                return None

    monkeypatch.setattr(embed, "get_plugin_manager", lambda: Manager())
    with pytest.raises(HermesError, match="'default_embedder' is left out"):
        embed.get_embedder()


def test_the_installed_entry_points_are_read_once_a_command(fresh):
    """`hermes feed` asks whether every command is declared, then registers the plugins:
    one read of every distribution's entry points serves both (issue 36)."""
    reads = []
    real = plugins.entry_points
    fresh.setenv("HERMES_LOAD_ENTRYPOINTS", "1")
    fresh.setattr(plugins, "entry_points", lambda **kw: reads.append(kw) or real(**kw))
    plugins.declared_plugin_commands()
    plugins.registered_plugins()
    assert reads == [{"group": "hermes"}]
