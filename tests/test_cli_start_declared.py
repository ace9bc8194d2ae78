"""`hermes --help` lists the plugins' commands as the built-in plugins declare them (issue 36):
each plugin's ``COMMANDS`` / ``COMMAND_GROUPS``, read from its file without importing it
(:func:`hermes.plugins.declared_commands`), so the help loads no plugin, no hook contract,
no pydantic, numpy or sqlite-utils; a plugin's command registers that plugin's commands only.
Checked on ``sys.modules`` of a child process and on the help's text, never on the clock."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import types

import pytest
import typer
from process_support import child_env
from test_cli_start import listed_commands
from typer.core import TyperGroup
from typer.testing import CliRunner

from hermes import plugins
from hermes.cli.app import build_app

PROBE = """
import json, sys
from hermes.cli.app import main
sys.argv = ["hermes", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""
#: what `hermes --help` must not import: the plugins' packages (their tools, their CLI), the
#: hook contract and what comes with it
NOT_FOR_HELP = [
    "numpy",
    "sqlite_utils",
    "pydantic",
    "hermes.contract",
    "hermes.hookspecs",
    "hermes.tools",
    "hermes.storage.db",
    "hermes_feeds",
    "hermes_persona",
    "hermes_digest",
    "hermes_corpus",
    "hermes.builtins.clicks",
    "hermes.builtins.scorers",
    "hermes.builtins.default_embedder",
]


def run(home, *args, **env) -> tuple[subprocess.CompletedProcess, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, env=child_env(home, **env)
    )
    out, _, modules = done.stdout.rpartition("\nMODULES ")
    assert modules, done.stderr
    return subprocess.CompletedProcess(done.args, done.returncode, out, done.stderr), set(json.loads(modules))


def registered(module_name: str) -> dict[str, tuple[str, bool]]:
    """What plugin module ``module_name``'s hook adds: ``{name: (first paragraph of its help as
    the help shows it, is a group)}``."""
    import importlib

    register = getattr(importlib.import_module(module_name), "hermes_register_commands", None)
    if register is None:
        return {}
    scratch = typer.Typer()
    scratch.callback()(lambda: None)
    register(app=scratch)
    return {
        name: (
            " ".join(inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].split()),
            isinstance(command, TyperGroup),
        )
        for name, command in typer.main.get_command(scratch).commands.items()
    }


@pytest.mark.parametrize("module_name", list(plugins.DEFAULT_PLUGINS.values()))
def test_every_built_in_declares_the_commands_its_hook_adds(module_name):
    declared = plugins.declared_commands(module_name)
    assert declared is not None, f"{module_name} adds commands without declaring them"
    assert list(declared.items()) == list(registered(module_name).items())


def test_help_imports_no_plugin_and_no_heavy_library(tmp_path):
    done, loaded = run(tmp_path, "--help", COLUMNS="120")
    assert done.returncode == 0, done.stderr
    assert not loaded & set(NOT_FOR_HELP), sorted(loaded & set(NOT_FOR_HELP))
    assert not [m for m in loaded if m.startswith("hermes_") or m.endswith(".tools")]
    assert listed_commands(done.stdout) == [
        "plugins",
        "ingest",
        "serve",
        "web",
        "demo",  # the core's commands
        "read",
        "save",
        "unsave",
        "note",
        "highlight",
        "digest",
        "topics",  # corpus, digest
        "feed",
        "like",
        "dislike",
        "unrate",
        "explain",  # feeds
        "tags",
        "corpus",
        "persona",
        "feeds",
        "model",
    ], done.stdout  # groups


def test_the_declared_help_is_the_registered_plugins_help(monkeypatch):
    """The same text, character for character, whether the plugins are registered first (a
    test's own plugin, an installed one) or their declarations are read."""
    monkeypatch.setenv("COLUMNS", "100")
    plugins.pm_cache_clear()
    try:
        declared = CliRunner().invoke(build_app(), ["--help"])
        assert declared.exit_code == 0 and not plugins.registered_plugins.cache_info().currsize
        plugins.registered_plugins()
        assert CliRunner().invoke(build_app(), ["--help"]).output == declared.output
        monkeypatch.setenv("HERMES_PLUGINS", "signals,default_embedder,scorers,persona,digest")
        plugins.pm_cache_clear()
        fewer = CliRunner().invoke(build_app(), ["--help"]).output
        listed = listed_commands(fewer)
        assert "persona" in listed and "digest" in listed and "feeds" not in listed
        plugins.registered_plugins()
        assert CliRunner().invoke(build_app(), ["--help"]).output == fewer
    finally:
        plugins.pm_cache_clear()


def test_a_plugins_command_registers_that_plugins_commands_only(tmp_path):
    done, loaded = run(tmp_path, "digest", "--help")
    assert done.returncode == 0 and "--per-topic" in done.stdout, done.stderr
    assert "hermes_digest.cli" in loaded
    assert not {"hermes_feeds.cli", "hermes_persona.cli", "hermes_corpus.cli"} & loaded
    assert not [m for m in loaded if m.startswith("hermes_") and m.endswith(".tools")], loaded


def test_a_plugin_without_declarations_is_registered_to_list_its_commands(tmp_path):
    module = tmp_path / "hermes_undeclared.py"
    module.write_text(
        "from hermes import hookimpl\n\n"
        "@hookimpl\ndef hermes_register_commands(app):\n"
        "    @app.command('hi')\n    def hi():\n        '''Say hi.'''\n"
    )
    quiet = tmp_path / "hermes_quiet.py"
    quiet.write_text("def helper():\n    return 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert plugins.declared_commands("hermes_undeclared") is None
        assert plugins.declared_commands("hermes_quiet") == {}
        assert plugins.declared_commands("hermes_nowhere") is None
    finally:
        sys.path.remove(str(tmp_path))


def test_a_registered_plugins_commands_are_listed_after_all(monkeypatch):
    """A plugin registered in the process (not declared anywhere) is in the help."""
    plugin = types.ModuleType("hermes_waving")

    @plugins.pluggy.HookimplMarker("hermes")
    def hermes_register_commands(app):
        @app.command("wave")
        def wave():
            """Wave from a registered plugin."""

    plugin.hermes_register_commands = hermes_register_commands
    plugins.pm_cache_clear()
    try:
        plugins.registered_plugins().register(plugin, name="waving")
        assert "Wave from a registered plugin." in CliRunner().invoke(build_app(), ["--help"]).output
    finally:
        plugins.pm_cache_clear()


# --- a command collects the tool it calls --------------------------------------------------

TOOL_PROBE = """
import json, sys
from hermes import plugins
from hermes.tools import find_tool
plugins.get_plugin_manager()
assert find_tool("list_feed").plugin == "feeds"
print(json.dumps(sorted(m for m in sys.modules if m.startswith("hermes_"))))
"""


def test_the_shipped_plugins_tools_are_not_collected_to_check_them(tmp_path):
    """With only the plugins hermes ships, the start-up check collects no tool (the suite
    checks them: the next test), and a command's tool is found without the other plugins'
    tools modules."""
    done = subprocess.run(
        [sys.executable, "-c", TOOL_PROBE], capture_output=True, text=True, timeout=120, env=child_env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "hermes_feeds.tools" in loaded
    assert not {"hermes_persona.tools", "hermes_digest.tools", "hermes_corpus.tools"} & loaded, loaded


def test_every_shipped_plugins_tools_pass_the_tool_check():
    """What the start-up check takes on trust (:data:`hermes.plugins.SHIPPED`), checked here:
    every tool of every shipped plugin is a Tool with a bounded string parameter each and a
    name of its own; and :func:`hermes.tools.find_tool` finds what :func:`collect_tools` does."""
    from hermes.tools import collect_tools, find_tool

    pm = plugins.get_plugin_manager()
    taken: dict = {}
    for impl in pm.hook.hermes_register_tools.get_hookimpls():
        assert plugins.shipped(pm, impl.plugin_name), impl.plugin_name
        taken.update((t.name, t) for t in plugins.plugin_tools(impl, taken))
    assert not pm.failed
    collected = collect_tools()
    assert set(collected) == set(taken)
    assert all(find_tool(name) is tool for name, tool in collected.items())
    assert find_tool("no_such_tool") is None
