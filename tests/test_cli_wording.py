"""The CLI speaks its own words (issue 17): a refused argument is named as the command spells
it, reasons are printed whole, help text keeps its setting names, and feedback says what
the person's action actually changed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.storage.records import create_user


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


@pytest.fixture
def world(db, db_path, add_items):
    ids = add_items(
        [
            {
                "title": f"Paper {k} on quantum codes, their decoders and thresholds",
                "tags": ["quant-ph"],
                "url": f"https://e.org/{k}",
            }
            for k in range(3)
        ]
    )
    create_user(db, "ada", "quantum error correction")
    return db, db_path, ids


# --- a refused argument is named as the command spells it ---------------------------------


@pytest.mark.parametrize(
    "args, named",
    [
        # an option: its long flag
        (["corpus", "items", "ada", "--facet", "bogus"], "--facet must be one of"),
        (["persona", "create", "bob", "--interests", ""], "--interests must be"),
        # an argument: its metavar
        (["note", "ada", 1, ""], "TEXT must be"),
        # a tool parameter the command names differently (item_id is the ITEM the person typed)
        (["note", "ada", 0, "a note"], "ITEM must be"),
        (["like", "ada", 0], "ITEM must be"),
    ],
    ids=["option", "option-create", "argument", "renamed-argument", "list-argument"],
)
def test_a_refused_argument_is_named_as_the_command_spells_it(world, args, named):
    _, path, _ = world
    result = run(*args, "--db", path)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {named}"), result.stderr
    assert "item_id" not in result.stderr


def test_a_number_too_large_for_sqlite_does_not_name_a_tool_the_command_does_not_show(world):
    _, path, _ = world
    result = run("explain", "ada", 99999999999999999999, "--db", path)
    assert result.exit_code == 1, result.output
    assert "a number given is too large: ids and counts are below" in result.stderr
    assert "explain_item" not in result.stderr


def test_the_same_refusal_over_mcp_names_the_tool_parameter(db, world):
    from hermes.tools import call_tool, collect_tools

    said = call_tool(db, collect_tools()["corpus_items"], {"user": "ada", "facet": "bogus"}, face="mcp")["message"]
    assert said.startswith("facet must be one of")


# --- reasons are evidence: printed whole, wrapped to the terminal -------------------------


def _reasons_whole_and_wrapped(output: str, reasons: list[str], columns: int, indent: str):
    flat = " ".join(output.split())
    for reason in reasons:
        assert len(reason) > columns  # the case that needs wrapping
        assert " ".join(reason.split()) in flat, (reason, output)
    lines = output.splitlines()
    for k, line in enumerate(lines):
        if line.lstrip().startswith("why: "):
            assert line.startswith(indent + "why: ")
            assert len(line) <= columns, line
            # the reason's further lines keep the item's indentation, up to the address
            for more in lines[k + 1 :]:
                if more.lstrip().startswith("https://"):
                    break
                assert more.startswith(indent) and len(more) <= columns, more
    assert "…" not in output.replace("(--below-bar lists them)", "")


def test_feed_prints_each_reason_whole_wrapped_to_the_terminal(world, monkeypatch):
    _, path, ids = world
    assert run("like", "ada", ids[0], "--db", path).exit_code == 0
    as_json = run("feed", "ada", "--all", "--below-bar", "--json", "--db", path)
    reasons = [i["reason"] for i in json.loads(as_json.stdout)["items"]]
    assert reasons and max(map(len, reasons)) > 110  # longer than the old cut
    monkeypatch.setenv("COLUMNS", "60")
    out = run("feed", "ada", "--all", "--below-bar", "--db", path)
    assert out.exit_code == 0, out.output
    _reasons_whole_and_wrapped(out.stdout, reasons, 60, "     ")


def test_digest_prints_each_reason_whole_wrapped_to_the_terminal(world, monkeypatch):
    _, path, ids = world
    assert run("like", "ada", ids[0], "--db", path).exit_code == 0
    as_json = json.loads(run("digest", "ada", "--below-bar", "--json", "--db", path).stdout)
    reasons = [i["reason"] for t in as_json["topics"] for i in t["items"]]
    reasons += [i["reason"] for i in as_json["unclustered"] + as_json["below_bar"]["items"]]
    assert reasons and max(map(len, reasons)) > 160  # longer than the old cut
    monkeypatch.setenv("COLUMNS", "70")
    out = run("digest", "ada", "--below-bar", "--db", path)
    assert out.exit_code == 0, out.output
    _reasons_whole_and_wrapped(out.stdout.split("Ranking:")[0], reasons, 70, "       ")


# --- help text is shown as written -----------------------------------------------------------


def _prose(output: str) -> str:
    """Help output as running text: line breaks gone."""
    return " ".join(output.split())


def test_help_keeps_the_config_setting_names(monkeypatch):
    """``[ingest] every`` is a setting: it survives into every help text that names it, as
    written (no markup escape), however often the same app prints its help."""
    monkeypatch.setenv("COLUMNS", "100")
    app = build_app()
    for _ in range(2):  # the same app twice: flowed once, never escaped
        web = CliRunner().invoke(app, ["web", "--help"])
        assert web.exit_code == 0
        assert "in the background ([ingest] every; --no-refresh turns that off)" in _prose(web.output)
        root = _prose(CliRunner().invoke(app, ["--help"]).output)
        assert "keeping the feeds fresh in the background ([ingest] every;" in root
        assert "([ingest] every; --no-refresh" in _prose(CliRunner().invoke(app, ["serve", "--help"]).output)
        ingest = _prose(CliRunner().invoke(app, ["ingest", "--help"]).output)
        assert "(default: [ingest] every in config.toml, 1h)" in ingest
        assert "\\[" not in web.output + root + ingest


def test_the_command_list_flows_each_description_as_one_paragraph(monkeypatch):
    listing = CliRunner().invoke(build_app(), ["--help"], max_content_width=200, terminal_width=200).output
    line = next(row for row in listing.splitlines() if row.startswith("  web "))
    assert "persona, keeping the feeds fresh in the background" in line  # not cut at the docstring's line break


# --- feedback says what the action changed ---------------------------------------------------


def test_a_repeated_like_says_it_was_already_liked(world):
    db, path, ids = world
    first = run("like", "ada", ids[0], "--db", path)
    assert first.stdout.startswith(f"Recorded a like of item {ids[0]} for ada (1 click in total)")
    again = run("like", "ada", ids[0], "--db", path)
    assert again.exit_code == 0
    assert again.stdout.startswith(
        f"Item {ids[0]} was already liked by ada; the like stands unchanged (1 click in total)"
    )
    turned = run("dislike", "ada", ids[0], "--db", path)
    assert f"Recorded a dislike of item {ids[0]} for ada, replacing its like" in turned.stdout
    # one click per item whatever was said, through the one write path
    assert db.execute("SELECT label, source FROM clicks").fetchall() == [("dislike", "ui")]
    as_json = json.loads(run("like", "ada", ids[0], "--json", "--db", path).stdout)
    assert as_json["results"][0]["click"]["previous"] == "dislike"


def test_save_and_unsave_speak_of_saving_and_say_when_nothing_changed(world):
    _, path, ids = world
    never = run("unsave", "ada", ids[1], "--db", path)
    assert never.exit_code == 0 and never.stdout.startswith(f"Item {ids[1]} was not saved;")
    saved = run("save", "ada", ids[1], "--db", path).stdout
    assert saved.startswith(f"Item {ids[1]} saved;")
    assert run("save", "ada", ids[1], "--db", path).stdout.startswith(f"Item {ids[1]} was already saved;")
    assert run("unsave", "ada", ids[1], "--db", path).stdout.startswith(f"Item {ids[1]} unsaved;")
    for out in (never.stdout, saved):
        assert "favorite" not in out and "already was" not in out


def test_the_favorite_tool_keeps_its_own_word_over_mcp(db, world):
    from hermes.tools import call_tool, collect_tools

    _, _, ids = world
    favorite = collect_tools()["favorite"]
    said = call_tool(db, favorite, {"user": "ada", "item_id": ids[2]}, face="mcp")["message"]
    assert said.startswith(f"Item {ids[2]} favorited;")
    said = call_tool(db, favorite, {"user": "ada", "item_id": ids[0], "on": False}, face="mcp")["message"]
    assert said.startswith(f"Item {ids[0]} was not favorited;")


@pytest.mark.parametrize(
    "args, said, tool_word",
    [
        # a library refusal (the export is not a tool call): since=99 is --since 99
        (["corpus", "export", "ada", "--since", 99], "error: --since 99 is beyond the current revision", "since="),
        # a tool's own refusal: content_type is the command's --type
        (
            ["persona", "search", "ada", "--type", "podcast"],
            'error: --type "podcast" is no content type',
            "content_type",
        ),
    ],
    ids=["library", "tool"],
)
def test_a_refusal_written_with_a_parameter_name_names_the_option(world, args, said, tool_word):
    _, path, _ = world
    result = run(*args, "--db", path)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(said), result.stderr
    assert tool_word not in result.stderr


def test_a_refusal_json_lists_each_problem_by_the_tools_parameter(world):
    """``--json``: the envelope says which parameter each problem is about (the tool's name
    for it, as MCP's), the problem in the command's words."""
    _, path, _ = world
    result = run("persona", "search", "ada", "--type", "podcast", "--json", "--db", path)
    assert result.exit_code == 1
    answer = json.loads(result.stdout)
    [error] = answer["errors"]
    assert error["field"] == "content_type"
    assert error["problem"].startswith('--type "podcast" is no content type')
    assert answer["message"] == error["problem"]


def test_each_face_writes_a_refusal_from_its_structure_not_its_prose():
    """A face names the parameter a problem is about in its own words; the tool's words
    around it stay as written, a parameter name that is also an English word ("since") and
    the tool's name for a parameter in prose included: nothing rewrites the sentence."""
    from hermes.arguments import MCP_WORDING, Wording, refuse

    refused = refuse("since", "is beyond the revision since the last export; since=0 is everything", got=3, given=True)
    cli = Wording({"since": "--since"}, typed="shell")
    web = Wording({"since": "The revision"}, typed="form")
    assert refused.worded(MCP_WORDING) == "since=3 is beyond the revision since the last export; since=0 is everything"
    assert refused.worded(cli) == "--since 3 is beyond the revision since the last export; since=0 is everything"
    assert refused.worded(web).startswith("The revision 3 is beyond the revision since the last export")
    assert refused.errors(cli) == [{"field": "since", "problem": refused.worded(cli)}]


def test_a_content_type_refusal_names_the_option_at_the_cli_and_the_label_on_the_web(db, world):
    from hermes.tools import call_tool, collect_tools
    from hermes.web.access import Tools

    tool = collect_tools()["search_feed"]
    mcp = call_tool(db, tool, {"user": "ada", "query": "", "content_type": "podcast"}, face="mcp")
    assert mcp["message"].startswith('content_type="podcast" is no content type in the archive')
    assert mcp["errors"] == [{"field": "content_type", "problem": mcp["message"]}]
    web = Tools().call(db, "search_feed", {"content_type": "The type"}, user="ada", query="", content_type="podcast")
    assert web["message"].startswith('The type "podcast" is no content type in the archive'), web
    assert web["errors"][0]["field"] == "content_type"


def test_null_is_said_over_mcp_only(db, world):
    """An optional parameter accepts null over MCP; at the shell an option left out is its
    default and a form's empty field is no value, so neither says "null"."""
    from hermes.arguments import MCP_WORDING, Wording
    from hermes.tools import collect_tools

    prop = collect_tools()["list_feed"].input_schema()["properties"]["since_days"]
    assert MCP_WORDING.expects(prop).endswith(" or null")
    assert "null" not in Wording(typed="shell").expects(prop)
    assert "null" not in Wording(typed="form").expects(prop)
