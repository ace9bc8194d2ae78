"""What a command imports before it runs (issue 36, "Every command"): `hermes --version`
loads no plugin and none of numpy, sqlite-utils, pydantic or the model; the plugins' commands are added
when a command or the help looks them up, so `--help` still lists every one of them, an
installed plugin's included, and a core command starts without importing a plugin.
Checked on ``sys.modules`` of a child process, never on the clock."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Annotated

import pytest
from process_support import child_env
from pydantic import Field
from typer.testing import CliRunner

from hermes import HermesError, Result, hookimpl, ok, plugins, tool
from hermes.cli.app import build_app

#: run the command line given as a child's arguments, as the console script does
COMMAND = """
import json, sys
from hermes.cli.app import main
sys.argv = ["hermes", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
"""
#: ... then print which of these modules it imported
PROBE = (
    COMMAND
    + """
watched = {watched!r}
print("\\nMODULES " + json.dumps(sorted(m for m in watched if m in sys.modules)))
"""
)
HEAVY = [
    "numpy",
    "sqlite_utils",
    "torch",
    "sentence_transformers",
    "onnxruntime",
    "tokenizers",
    "feedparser",
    "httpx",
    "filelock",
    "mcp",
    "starlette",
    "sklearn",
    "pluggy",
    "pydantic",
    "hermes.contract",
    "hermes.plugins",
    "hermes.tools",
    "hermes.storage.db",
    "hermes.ingest.refresher",
]
#: typer's rich help, and typer itself: `hermes --version` is answered before typer loads,
#: and every help is click's plain one (`typer.rich_utils` imports rich's markdown, pygments,
#: its traceback: half of what `hermes --help` cost)
RICH_HELP = ["typer.rich_utils", "rich", "rich.markdown", "rich.traceback", "pygments", "markdown_it"]
PLUGIN_PACKAGES = [
    "hermes_feeds",
    "hermes_persona",
    "hermes_digest",
    "hermes_corpus",
    "hermes.builtins.scorers",
    "hermes_hello",
]


def listed_commands(help_text: str) -> list[str]:
    """The command names ``--help`` lists (click's plain help: a ``Commands:`` section, one
    entry per line indented by two spaces, its description's next lines further)."""
    section = help_text.split("\nCommands:\n", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "]


def run(home, *args, **env) -> tuple[subprocess.CompletedProcess, list[str]]:
    code = PROBE.format(watched=[*HEAVY, *PLUGIN_PACKAGES, *RICH_HELP, "typer", "hermes.config"])
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=child_env(home, **env)
    )
    out, _, modules = done.stdout.rpartition("\nMODULES ")
    assert modules, done.stderr
    return subprocess.CompletedProcess(done.args, done.returncode, out, done.stderr), json.loads(modules)


def hello_distribution(site) -> None:
    """An installed plugin ``hermes-hello`` adding the command ``hello`` (entry point)."""
    (site / "hermes_hello").mkdir(parents=True)
    (site / "hermes_hello" / "__init__.py").write_text(
        "from hermes import hookimpl\n\n"
        "@hookimpl\n"
        "def hermes_register_commands(app):\n"
        "    @app.command('hello')\n"
        "    def hello():\n"
        "        '''Say hello from an installed plugin.'''\n"
        "        print('hello from hermes-hello')\n"
    )
    info = site / "hermes_hello-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-hello\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[hermes]\nhello = hermes_hello\n")


def test_version_loads_no_plugin_and_no_heavy_library(tmp_path):
    done, loaded = run(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.startswith("hermes "), done.stderr
    assert loaded == [], f"`hermes --version` imported {loaded}"


def test_version_through_typer_says_the_same(tmp_path):
    """`hermes --version` alone is answered before typer loads; with any other argument
    (`--db X --version`) typer's eager option answers, in the same words."""
    fast, loaded = run(tmp_path, "--version")
    typed, through = run(tmp_path, "--db", str(tmp_path / "x.db"), "--version")
    assert typed.returncode == 0 and "typer" in through
    assert fast.stdout == typed.stdout == "hermes 0.1.0\n"
    assert not (tmp_path / "x.db").exists()


def test_help_is_clicks_plain_help_without_rich(tmp_path):
    """The root's and a command's help: click's plain layout (sections, no panels), every
    command listed with the first paragraph of its help, and none of rich loaded."""
    done, loaded = run(tmp_path, "--help", COLUMNS="100")
    assert done.returncode == 0, done.stderr
    assert not set(loaded) & set(RICH_HELP), loaded
    assert done.stdout.startswith("Usage: hermes [OPTIONS] COMMAND [ARGS]...\n")
    assert "\nOptions:\n" in done.stdout and "╭" not in done.stdout and "│" not in done.stdout
    listing = " ".join(done.stdout.split("\nCommands:\n", 1)[1].split())
    # the first paragraph, not click's first sentence cut at 45 characters with "..."
    assert "plugins List every plugin: its distribution and version, the hooks and tools it provides, or why" in listing
    assert "..." not in listing
    feed, loaded = run(tmp_path, "feed", "--help", COLUMNS="100")
    assert feed.returncode == 0 and "Usage: hermes feed [OPTIONS] USER" in feed.stdout, feed.stderr
    assert "\nArguments:\n" in feed.stdout and "│" not in feed.stdout
    assert not set(loaded) & set(RICH_HELP), loaded


def test_a_core_command_starts_without_importing_a_plugin(tmp_path):
    done, loaded = run(tmp_path, "ingest", "--help")
    assert done.returncode == 0 and "--watch" in done.stdout, done.stderr
    assert not set(loaded) & {*PLUGIN_PACKAGES, "numpy", "sqlite_utils", "feedparser"}, loaded


def test_hermes_feed_loads_what_its_ranking_needs_not_the_plugins_other_commands(tmp_path, db, db_path, add_items):
    """`hermes feed` adds the feeds plugin's commands and imports its tools module, not what
    the plugin's other tools and commands use (issue 36): the ingest store and its parser (an
    empty page's count of items waiting for an embedding, a probed feed), the OPML module
    with xml (the OPML commands, a folder), the page link finder (html.parser) and the
    terminal triage of `feed -i` (webbrowser)."""
    from hermes.storage.records import create_user

    add_items([{"title": "galaxy surveys"}, {"title": "quantum codes"}])
    create_user(db, "ann", "galaxy surveys")
    watched = [
        "hermes.ingest.store",
        "hermes.ingest.parse",
        "hermes.ingest.tagging",
        "hermes_feeds.opml",
        "hermes_feeds.discover",
        "xml.etree.ElementTree",
        "html.parser",
        "hermes_feeds.triage",
        "webbrowser",
        "hermes_feeds.tools",
    ]
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(watched=watched), "--db", str(db_path), "feed", "ann"],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(tmp_path / "child"),
    )
    out, _, modules = done.stdout.rpartition("\nMODULES ")
    assert "galaxy surveys" in out, done.stderr
    assert json.loads(modules) == ["hermes_feeds.tools"]


#: run the command line in a child, then print what its start-up did beyond the imports
START_UP = (
    COMMAND
    + """
import gc
from pydantic import BaseModel
from hermes.contract import Answer
def every(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every(sub)
print("\\nSTART " + json.dumps({"built": sorted(c.__qualname__ for c in every(Answer) if c.__pydantic_complete__),
                               "answers": len(list(every(Answer))), "numpy.ma": "numpy.ma" in sys.modules,
                               "arguments": sorted(c.__qualname__ for c in every(BaseModel)
                                                   if c.__qualname__.endswith("_arguments") and c.__pydantic_complete__),
                               "threshold": gc.get_threshold()[0]}))
"""
)


def test_hermes_feed_builds_no_answer_model_nor_numpy_ma_and_collects_less_often(tmp_path, db, db_path, add_items):
    """What `hermes feed` spent beyond its imports (issue 36): the answers' pydantic models are
    built when a schema asks for them (a command prints the dict a tool returned), a tool's
    argument model at its first call (the other tools' never), the
    archive's typical figure is np.median's without numpy.ma, and the collector runs every
    50,000 allocations, not 700 (130 collections were 10% of the command)."""
    from hermes.cli.app import GC_THRESHOLD
    from hermes.storage.records import create_user

    add_items([{"title": f"galaxy surveys {i}"} for i in range(120)])
    create_user(db, "ann", "galaxy surveys")
    done = subprocess.run(
        [sys.executable, "-c", START_UP, "--db", str(db_path), "feed", "ann"],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(tmp_path / "child"),
    )
    out, _, found = done.stdout.rpartition("\nSTART ")
    assert "galaxy surveys" in out, done.stderr
    found = json.loads(found)
    assert found["answers"] > 20 and found["built"] == [], found
    assert found["arguments"] == ["list_feed_arguments"]  # the feeds plugin's ten tools' others: not built
    assert found["numpy.ma"] is False
    assert found["threshold"] == GC_THRESHOLD > 700


#: register every plugin in a child, then print which of these modules that imported
REGISTER = """
import json, sys
from hermes import plugins
pm = plugins.get_plugin_manager()
print(json.dumps({{"plugins": sorted(name for name, _ in pm.list_name_plugin()), "failed": pm.failed,
                  "loaded": sorted(m for m in {watched!r} if m in sys.modules)}}))
"""


def test_registering_the_plugins_loads_no_database_library_nor_any_command(tmp_path):
    """`hermes serve` registers the plugins before its `tools/list`, and every command before
    it runs (issue 36): registering imports each plugin's hooks, not what they call. No
    sqlite-utils (its readers import it for their annotations only; the database opened
    brings it), no typer (a plugin's commands load when they are added), no ingest text
    stack (nh3: loaded when an item is tagged)."""
    watched = [
        "sqlite_utils",
        "typer",
        "nh3",
        "feedparser",
        "httpx",
        "torch",
        "onnxruntime",
        "tokenizers",
        "mcp",
        "hermes.storage.db",
        "hermes.onnx_embed.cli",
        "hermes.ingest.text",
        "hermes_feeds.tools",
    ]
    done = subprocess.run(
        [sys.executable, "-c", REGISTER.format(watched=watched)],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["plugins"] == sorted(plugins.DEFAULT_PLUGINS) and found["failed"] == []
    assert found["loaded"] == [], f"registering the plugins imported {found['loaded']}"


def test_help_lists_every_command_an_installed_plugins_too(tmp_path):
    site = tmp_path / "site"
    hello_distribution(site)
    done, loaded = run(tmp_path, "--help", HERMES_LOAD_ENTRYPOINTS="1", PYTHONPATH=str(site), COLUMNS="120")
    assert done.returncode == 0, done.stderr
    listed = set(listed_commands(done.stdout))
    for command in (
        "plugins",
        "ingest",
        "serve",
        "web",
        "demo",
        "tags",
        "model",  # core, built-ins
        "feed",
        "feeds",
        "persona",
        "digest",
        "topics",
        "corpus",
        "read",  # plugins
        "hello",
    ):  # the installed plugin, through its entry point
        assert command in listed, (command, done.stdout)
    assert "hermes_hello" in loaded
    assert not set(loaded) & {"torch", "onnxruntime", "mcp", "starlette"}, loaded
    hello, _ = run(tmp_path, "hello", HERMES_LOAD_ENTRYPOINTS="1", PYTHONPATH=str(site))
    assert hello.returncode == 0 and "hello from hermes-hello" in hello.stdout, hello.stderr


class Said(Result):
    text: str = ""


@tool("brokentools", result=Said)
def unbounded_tool(db, text: Annotated[str, Field(description="any length")]) -> dict:
    """A tool with a string parameter without max_length: the tool check refuses it."""
    return ok("never", text=text)


class BrokenTools:
    @hookimpl
    def hermes_register_tools(self):
        return [unbounded_tool]

    @hookimpl
    def hermes_register_commands(self, app):
        @app.command("broken-hello")
        def broken_hello():
            print("ran")


@pytest.fixture
def fresh_plugins():
    plugins.pm_cache_clear()
    yield plugins.registered_plugins()
    plugins.pm_cache_clear()


def test_a_command_of_a_plugin_the_tool_check_leaves_out_says_so(fresh_plugins, capsys):
    """The command tree comes before the tool check (it needs the plugins' packages only);
    running a command of a plugin whose tools break the contract names the plugin instead."""
    fresh_plugins.register(BrokenTools(), name="broken_tools")
    listing = CliRunner().invoke(build_app(), ["--help"])
    assert "broken-hello" in listing.output and not fresh_plugins.tools_checked
    done = CliRunner().invoke(build_app(), ["broken-hello"])
    assert done.exit_code == 1 and "ran" not in done.output
    assert "'broken-hello' comes from the plugin 'broken_tools', which failed to load" in done.stderr
    assert "max_length" in done.stderr
    assert plugins.get_plugin_manager().get_plugin("broken_tools") is None


def test_the_tool_check_runs_once_and_before_any_hook_is_used(fresh_plugins):
    assert not fresh_plugins.tools_checked
    pm = plugins.get_plugin_manager()
    assert pm is fresh_plugins and pm.tools_checked
    assert plugins.get_plugin_manager() is pm


def test_the_tools_are_collected_as_the_objects_the_check_built_their_models_for(fresh_plugins):
    """`hermes serve` lists every tool's schema, and every command collects the tools again:
    the check's tool objects (their argument models built) are the ones collected each time,
    not fresh copies that build every model again."""
    from hermes.tools import collect_tools

    plugins.get_plugin_manager()
    first, again = collect_tools(), collect_tools()
    assert first and all(again[name] is tool for name, tool in first.items())
    assert all(tool.plugin for tool in first.values())
    # the argument model the tool decorator built comes along: no tool builds another
    from hermes_feeds.tools import list_feed

    from hermes.builtins.clicks import record_feedback

    for defined in (list_feed, record_feedback):
        assert first[defined.name].argument_model is defined.argument_model


def test_finding_a_shipped_tool_builds_no_tools_schema(fresh_plugins):
    """`hermes feed` finds `list_feed` without building the JSON schema of any shipped tool
    (the click plugin's before it, its own): the suite checks their bounds
    (test_every_shipped_plugins_tools_pass_the_tool_check), a command does not again."""
    from hermes.tools import find_tool

    plugins.get_plugin_manager()
    plugins._unbounded_strings.cache_clear()
    assert find_tool("list_feed") is not None
    assert plugins._unbounded_strings.cache_info().misses == 0


def test_a_plugin_hermes_does_not_ship_is_still_checked_when_collected(fresh_plugins):
    from hermes.tools import collect_tools

    plugins.get_plugin_manager()
    fresh_plugins.register(BrokenTools(), name="broken_tools")  # after the start-up check
    with pytest.raises(HermesError, match="broken_tools.*max_length"):
        collect_tools()
