"""``hermes persona …``: the same tools for a person, errors as one line and a non-zero exit."""

from __future__ import annotations

import json

import pytest
from test_persona_support import archive, snapshot  # noqa: F401
from typer.testing import CliRunner

from hermes.cli.app import build_app


@pytest.fixture
def run(db_path):
    def invoke(*args):
        return CliRunner().invoke(build_app(), ["persona", *args, "--db", str(db_path)])

    return invoke


def one_error_line(result) -> str:
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def test_create_list_show_update(run, archive):
    assert run("create", "alice", "--interests", "graph neural networks").exit_code == 0
    listed = run("list", "--json")
    assert listed.exit_code == 0
    users = json.loads(listed.stdout)["users"]
    assert [u["name"] for u in users] == ["alice"]
    human = run("list")
    assert "alice" in human.stdout and "graph neural networks" in human.stdout

    shown = run("show", "alice", "--json")
    assert json.loads(shown.stdout)["clicks"] == 0
    assert "classifier: inactive" in run("show", "alice").stdout

    updated = run("update", "alice", "--interests", "sourdough")
    assert updated.exit_code == 0 and "updated" in updated.stdout
    assert json.loads(run("list", "--json").stdout)["users"][0]["interests"] == "sourdough"


def test_bootstrap_search_reset_delete(run, db, archive, split_bar):
    run("create", "alice", "--interests", "graph neural networks")
    boot = run("bootstrap", "alice", "--likes", "2", "--dislikes", "1")
    assert boot.exit_code == 0 and boot.stdout.count("\n  + ") == 2 and boot.stdout.count("\n  - ") == 1
    assert db.execute("SELECT DISTINCT source FROM clicks").fetchall() == [("bootstrap",)]

    found = run("search", "alice", "graph", "--json")
    assert found.exit_code == 0 and json.loads(found.stdout)["count"] == 2
    assert "[like" in run("search", "alice", "graph").stdout

    before = snapshot(db)
    line = one_error_line(run("reset", "alice"))
    assert "3 clicks" in line and "--yes" in line
    assert snapshot(db) == before
    reset = run("reset", "alice", "--yes")
    assert reset.exit_code == 0 and db["clicks"].count == 0 and db["users"].count == 1

    line = one_error_line(run("delete", "alice"))
    assert "persona 'alice'" in line and "--yes" in line and db["users"].count == 1
    assert run("delete", "alice", "--yes").exit_code == 0
    assert db["users"].count == 0


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("create", "alice", "--interests", ""), "interests must be a non-empty string"),
        (("create", "a/b", "--interests", "graphs"), "not allowed"),
        (("show", "nobody"), "unknown persona 'nobody'"),
        (("update", "nobody", "--interests", "x"), "unknown persona"),
        (("delete", "nobody", "--yes"), "unknown persona"),
        (("reset", "nobody", "--yes"), "unknown persona"),
        (("bootstrap", "nobody"), "unknown persona"),
        (("search", "nobody", "graph"), "unknown persona"),
        (("bootstrap", "alice", "--likes", "99"), "--likes must be a whole number from 0 to 50"),
    ],
)
def test_errors_are_one_line_and_a_non_zero_exit(run, archive, args, fragment):
    run("create", "bob", "--interests", "graphs")
    assert fragment in one_error_line(run(*args))


def test_a_duplicate_is_an_error(run):
    assert run("create", "alice", "--interests", "graphs").exit_code == 0
    assert "already exists" in one_error_line(run("create", "Alice", "--interests", "x"))


def test_json_errors_are_a_document_and_a_non_zero_exit(run, db):
    result = run("show", "nobody", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and "unknown persona" in doc["message"]
