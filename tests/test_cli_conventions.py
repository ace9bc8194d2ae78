"""One CLI: every mistake is one ``error:`` line and exit 1 (usage errors included), every
empty answer exits 0, every bounded option rejects the same way the tools do, and the help
reads like a conventional CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.storage.records import create_user


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output and "Usage:" not in result.output
    return lines[0]


@pytest.mark.parametrize(
    "args, says",
    [
        (["nosuch"], "no such command 'nosuch' (see `hermes --help`)"),
        (["feed"], "missing argument 'USER' (see `hermes feed --help`)"),
        (["feed", "ann", "--bogus"], "no such option: --bogus"),
        (["like", "ann", "abc"], "ITEM must be a whole number, such as an item id `hermes feed USER` prints"),
        (["ingest", "--feed", "x"], "--feed must be a whole number"),
        (["persona", "create", "ann"], "missing option '--interests'"),
    ],
)
def test_usage_errors_are_one_error_line_and_exit_1(db_path, args, says):
    assert says in one_error_line(run(*args, "--db", db_path))


@pytest.mark.parametrize(
    "args, says",
    [
        # a tool's option has no bounds of its own: the tool refuses, in the command's words
        (["feed", "ann", "--limit", "abc"], '--limit must be a whole number from 1 to 100, got "abc".'),
        (["feed", "ann", "--limit", "0"], "--limit must be a whole number from 1 to 100"),
        (["feed", "ann", "--limit", "101"], "--limit must be a whole number from 1 to 100"),
        (
            ["feed", "ann", "--since-days", "99999999"],
            "--since-days must be a whole number from 1 to 36500, got",
        ),  # no "or null"
        (["digest", "ann", "--days", "0"], "--days must be a whole number from 1 to 36500"),
        (["digest", "ann", "--per-topic", "51"], "--per-topic must be a whole number from 1 to 50"),
        (["topics", "--limit", "0"], "--limit must be a whole number from 1 to 500"),
        (["persona", "bootstrap", "ann", "--likes", "99"], "--likes must be a whole number from 0 to 50"),
        (["persona", "search", "ann", "x", "--limit", "51"], "--limit must be a whole number from 1 to 50"),
        (["persona", "tags", "--limit", "101"], "--limit must be a whole number from 1 to 100"),
        (["corpus", "items", "ann", "--limit", "501"], "--limit must be a whole number from 1 to 500"),
        (["corpus", "recall", "ann", "x", "--limit", "0"], "--limit must be a whole number from 1 to 50"),
        (["feeds", "preview", "x.xml", "--limit", "21"], "--limit must be a whole number from 1 to 20"),
        (["feeds", "preview", "x.xml", "--limit", "two"], '--limit must be a whole number from 1 to 20, got "two"'),
        (["corpus", "export", "ann", "--since", "-1"], "--since must be a whole number of at least 0, got -1"),
        (["feed", "ann", "--offset", "-1"], "--offset must be a whole number from 0 to 10000"),
    ],
)
def test_limits_are_rejected_the_same_way_everywhere(db, db_path, args, says):
    assert says in one_error_line(run("--db", db_path, *args))


@pytest.mark.parametrize(
    "args, says",
    [
        # an option no tool takes: its own small model, validated and worded as a tool's arguments
        (
            ["serve", "--transport", "http", "--port", "0"],
            "error: --port must be a whole number from 1 to 65535, got 0.",
        ),
        (["serve", "--port", "abc"], 'error: --port must be a whole number from 1 to 65535, got "abc".'),
        (["web", "--port", "0"], "error: --port must be a whole number from 1 to 65535, got 0."),
        (["web", "--port", "65536"], "error: --port must be a whole number from 1 to 65535, got 65536."),
        (["tags", "rebuild", "--batch", "0"], "error: --batch must be a whole number from 1 to 512, got 0."),
        (["tags", "rebuild", "--batch", "x"], 'error: --batch must be a whole number from 1 to 512, got "x".'),
    ],
)
def test_an_option_no_tool_takes_is_refused_as_a_tools_argument_is(db, db_path, args, says):
    assert one_error_line(run("--db", db_path, *args)) == says


def test_an_option_no_tool_takes_is_refused_under_json_with_its_errors(db, db_path):
    """The refusal's envelope a tool's has: the message and ``errors: [{field, problem}]``."""
    result = run("--db", db_path, "tags", "rebuild", "--batch", "0", "--json")
    assert result.exit_code == 1
    said = "--batch must be a whole number from 1 to 512, got 0."
    assert json.loads(result.stdout) == {"ok": False, "message": said, "errors": [{"field": "batch", "problem": said}]}


def test_the_tools_reject_out_of_range_limits_too(db, add_items):
    """Reject, never clamp: a direct call (or an MCP client skipping the schema) gets the same
    answer the CLI gives."""
    from hermes_feeds.tools import list_feed
    from hermes_persona.tools import propose_interests, search_feed

    add_items([{"title": "x"}])
    create_user(db, "ann", "x")
    for result in (
        list_feed(db, "ann", limit=500),
        search_feed(db, "ann", "x", limit=500),
        propose_interests(db, limit=500),
    ):
        assert result["ok"] is False and "limit must be a whole number from 1 to" in result["message"]


def test_a_large_window_is_said_in_days(db, add_items):
    from hermes_feeds.tools import list_feed

    create_user(db, "ann", "x")
    result = list_feed(db, "ann", since_days=36500)
    assert "the last 36500 days" in result["message"] and "e+" not in result["message"]


@pytest.mark.parametrize(
    "args",
    [
        ["feed", "ann"],
        ["digest", "ann"],
        ["topics"],
        ["corpus", "ranked", "ann"],
        ["corpus", "items", "ann"],
        ["corpus", "recall", "ann", "nothing"],
        ["persona", "search", "ann", "zzz"],
        ["feeds", "list"],
    ],
)
def test_empty_results_exit_0_and_say_so(db, db_path, args):
    create_user(db, "ann", "anything")
    result = run(*args, "--db", db_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip(), "an empty answer still says something"
    doc = run(*args, "--json", "--db", db_path)
    assert doc.exit_code == 0 and json.loads(doc.stdout)


def test_empty_feed_names_cli_options_not_tool_parameters(db, db_path):
    create_user(db, "ann", "anything")
    out = run("feed", "ann", "--db", db_path).stdout
    assert "--since-days N" in out and "--all" in out and f"hermes --db {db_path} feeds add URL" in out
    assert "since_days" not in out and "add_feed" not in out
    whole = run("feed", "ann", "--all", "--db", db_path).stdout
    assert "--since-days" not in whole  # nothing wider than the whole archive


def test_help_reads_like_a_conventional_cli(db_path):
    app_help = run("feed", "--help").stdout
    assert "Usage: hermes feed [OPTIONS] USER" in app_help
    assert "{user}" not in app_help and "<bool>" not in app_help
    serve_help = " ".join(run("serve", "--help").stdout.split())
    assert "feeds, persona, digest, corpus" in serve_help
    optional = run("persona", "search", "--help").stdout
    assert "NAME [WORDS]" in optional


def test_plurals(db, db_path, add_items):
    add_items([{"title": "only one"}])
    create_user(db, "ann", "only one")  # the item clears ann's bar
    out = run("feed", "ann", "--db", db_path).stdout
    assert "1 item from the last 7 days clears ann's bar" in out and "1 items" not in out
    listed = run("feeds", "list", "--db", db_path).stdout
    # its item was stored without a fetch of this subscription: not "never fetched" beside it
    assert "1 item ·" in listed and "not fetched since it was subscribed" in listed
    assert "last fetched never" not in listed
    assert "subscribed · ok" not in listed  # no health claimed for a fetch that never was


def test_no_arguments_shows_help_and_exits_0():
    result = run()
    assert result.exit_code == 0 and "Usage: hermes" in result.stdout
    group = run("feeds")
    assert group.exit_code == 0 and "import-opml" in group.stdout


def test_json_refusals_are_still_one_document(db_path):
    result = run("feed", "ann", "--json", "--limit", "0", "--db", db_path)
    assert result.exit_code == 1 and json.loads(result.stdout)["ok"] is False
    missing = run("persona", "show", "ann", "--json", "--db", db_path)
    assert missing.exit_code == 1 and "no hermes database" in json.loads(missing.stdout)["message"]


def test_the_readme_names_every_exit_status_that_is_not_1():
    """A script author reads the statuses in the README: the busy one of ``--no-wait`` and
    Ctrl-C's are there, next to "every mistake exits 1"."""
    from pathlib import Path

    from hermes.ingest.runlock import BUSY_EXIT

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    cli = readme.split("## The CLI", 1)[1].split("| command |", 1)[0]
    assert "exit status 1" in cli
    for status, why in [(BUSY_EXIT, "--no-wait"), (130, "Ctrl-C")]:
        assert f"{status} " in cli and why in cli, (status, why)
