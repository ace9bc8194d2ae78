"""``hermes feeds rename ID TITLE``: the CLI face of the rename_feed tool."""

from __future__ import annotations

import json

from feeds_cli_support import run
from feeds_support import SAMPLE_ENTRIES, rss


def _subscribed(tmp_path, db_path):
    path = tmp_path / "quantum.xml"
    path.write_bytes(rss("Quantum & Friends", SAMPLE_ENTRIES))
    assert run("feeds", "add", path, "--db", db_path).exit_code == 0


def test_rename_sets_the_title_that_list_shows(tmp_path, db_path):
    _subscribed(tmp_path, db_path)
    result = run("feeds", "rename", "1", "  Lab   reading ", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Feed 1 is now called 'Lab reading'."
    assert "[1] Lab reading" in run("feeds", "list", "--db", db_path).output


def test_rename_json_gives_the_tool_envelope(tmp_path, db_path):
    _subscribed(tmp_path, db_path)
    doc = json.loads(run("feeds", "rename", "1", "Lab", "--json", "--db", db_path).stdout)
    assert doc["ok"] and doc["feed"]["id"] == 1 and doc["feed"]["title"] == "Lab"


def test_rename_unknown_feed_is_one_error_line(tmp_path, db_path):
    _subscribed(tmp_path, db_path)
    result = run("feeds", "rename", "7", "Lab", "--db", db_path)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: unknown feed 7") and " feeds list` shows" in result.stderr
    doc = json.loads(run("feeds", "rename", "7", "Lab", "--json", "--db", db_path).stdout)
    assert doc["ok"] is False and "unknown feed 7" in doc["message"]


def test_rename_refuses_an_empty_title_and_keeps_the_old_one(tmp_path, db_path):
    _subscribed(tmp_path, db_path)
    for title in ("", "   "):
        result = run("feeds", "rename", "1", title, "--db", db_path)
        assert result.exit_code == 1 and result.stderr.startswith("error: ")
        assert "title" in result.stderr.lower()
    assert "[1] Quantum & Friends" in run("feeds", "list", "--db", db_path).output


def test_a_latex_title_reads_as_the_faces_show_it(tmp_path, db_path):
    """repr() doubled the backslash ("$\\\\alpha$"), which the terminal then could not read."""
    _subscribed(tmp_path, db_path)
    result = run("feeds", "rename", "1", r"Notes on $\alpha$-divergence", "--db", db_path)
    assert result.output.strip() == "Feed 1 is now called 'Notes on α-divergence'."
    doc = json.loads(run("feeds", "rename", "1", r"On $\alpha$", "--json", "--db", db_path).stdout)
    assert doc["message"] == r"Feed 1 is now called 'On $\alpha$'."
