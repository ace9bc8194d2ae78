"""The CLI speaks its own words (issue 17): a refused argument is named as the command spells
it, reasons are printed whole, help text keeps its setting names, and feedback says what
the person's action actually changed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.records import create_user


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


@pytest.fixture
def world(db, db_path, add_items):
    ids = add_items([{"title": f"Paper {k} on quantum codes", "tags": ["quant-ph"],
                      "url": f"https://e.org/{k}"} for k in range(3)])
    create_user(db, "ada", "quantum error correction")
    return db, db_path, ids


# --- a refused argument is named as the command spells it ---------------------------------

@pytest.mark.parametrize("args, named", [
    # an option: its long flag
    (["corpus", "items", "ada", "--facet", "bogus"], "--facet must be one of"),
    (["persona", "create", "bob", "--interests", ""], "--interests must be"),
    # an argument: its metavar
    (["note", "ada", 1, ""], "TEXT must be"),
    # a tool parameter the command names differently (item_id is the ITEM the person typed)
    (["note", "ada", 0, "a note"], "ITEM must be"),
    (["like", "ada", 0], "ITEM must be"),
], ids=["option", "option-create", "argument", "renamed-argument", "list-argument"])
def test_a_refused_argument_is_named_as_the_command_spells_it(world, args, named):
    _, path, _ = world
    result = run(*args, "--db", path)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {named}"), result.stderr
    assert "item_id" not in result.stderr


def test_the_same_refusal_over_mcp_names_the_tool_parameter(db, world):
    from hermes.tools import call_tool, collect_tools

    said = call_tool(db, collect_tools()["corpus_items"], {"user": "ada", "facet": "bogus"},
                     face="mcp")["message"]
    assert said.startswith("facet must be one of")
