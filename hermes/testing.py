"""Pytest fixtures for plugin authors: an isolated hermes home and database, and plugins
registered for one test only.

Use them from a plugin's own tests with one line in its ``conftest.py``::

    pytest_plugins = ["hermes.testing"]

and then::

    def test_my_tool(hermes_db, hermes_plugin):
        hermes_plugin(my_plugin_module, name="mine")
        from hermes.tools import call_tool, collect_tools
        assert call_tool(hermes_db, collect_tools()["my_tool"], {"x": 1})["ok"]

``hermes_home`` points ``HERMES_HOME`` at a temporary directory, selects the fast hash
embedder (no model download, no torch), loads no installed entry points and rebuilds the
plugin manager before and after the test. ``hermes_db`` is a migrated database in that home.
``hermes_plugin(plugin, name=...)`` registers a plugin (a module or an object with
``@hookimpl`` methods) and unregisters it when the test ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from . import plugins
from .ranking import matrix
from .storage.db import get_db


@pytest.fixture
def hermes_home(tmp_path, monkeypatch) -> Iterator[Path]:
    """An isolated hermes home: nothing of the user's data, config or installed plugins."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)  # as hermes makes its data directory
    # A database a command starts gets the starter feeds of <HERMES_HOME>/feeds.toml: none
    # here (the packaged ones are on the network); a test of that rule writes its own.
    (home / "feeds.toml").write_text("# no starter feeds in tests\n", encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("HERMES_DB", "HERMES_PLUGINS", "HERMES_ALLOW_PRIVATE", "HERMES_TRACE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HERMES_EMBEDDER", "hash")
    monkeypatch.setenv("HERMES_LOAD_ENTRYPOINTS", "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    plugins.pm_cache_clear()
    matrix.clear_cache()
    yield home
    plugins.pm_cache_clear()
    matrix.clear_cache()


@pytest.fixture
def hermes_db(hermes_home, tmp_path):
    """A migrated hermes database in the isolated home (closed after the test)."""
    database = get_db(tmp_path / "hermes.db")
    yield database
    database.conn.close()


@pytest.fixture
def hermes_plugin(hermes_home):
    """``register(plugin, name=None)``: register a plugin for this test only."""
    manager = plugins.get_plugin_manager()
    added: list[object] = []

    def register(plugin, name: str | None = None):
        manager.register(plugin, name=name)
        plugins.check(manager)
        added.append(plugin)
        matrix.clear_cache()
        return plugin

    yield register
    for plugin in added:
        if manager.is_registered(plugin):
            manager.unregister(plugin)
    manager.embedder = None
    matrix.clear_cache()
