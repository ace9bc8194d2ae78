"""Friction a fresh-eyes user trial found in the CLI and the digest: each message says what
is true and names what the person can do in that face."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner
from web_support import client

from hermes.cli.app import build_app
from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools


def run(*args):
    return CliRunner().invoke(build_app(), [str(a) for a in args])


def _store_unembedded(db, n: int) -> None:
    """What an interrupted ingest leaves: items stored, no embedding yet."""
    from hermes.ingest.store import insert_items

    db.execute("INSERT OR IGNORE INTO feeds (url, title) VALUES ('https://e.org/f.xml', 'F')")
    feed_id = db.execute("SELECT id FROM feeds").fetchone()[0]
    insert_items(
        db,
        feed_id,
        [
            {
                "guid": f"g{k}",
                "title": f"Paper {k}",
                "summary": "",
                "tags": [],
                "content_type": "article",
                "published": None,
                "url": None,
                "arxiv_id": None,
                "authors": [],
            }
            for k in range(n)
        ],
    )


# --- 1. an interrupted ingest: items stored but not embedded -------------------------------


def test_feed_says_items_wait_for_embedding_after_an_interrupted_ingest(db, db_path):
    _store_unembedded(db, 4)
    create_user(db, "cm", "interpretability")
    result = run("feed", "cm", "--all", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "4 items are stored but not embedded yet" in result.output
    assert f"run `hermes --db {db_path} ingest` to embed them" in result.output
    assert "add feeds" not in result.output


def test_list_feed_and_the_web_feed_say_it_in_their_own_words(db, db_path):
    _store_unembedded(db, 3)
    create_user(db, "cm", "interpretability")
    said = call_tool(db, collect_tools()["list_feed"], {"user": "cm", "since_days": None}, face="mcp")["message"]
    assert "3 items are stored but not embedded yet" in said
    assert "the next `hermes ingest`" in said and "run `hermes ingest`" not in said
    with client(db_path) as c:
        page = c.get("/feed?user=cm&days=all").text
    assert "3 items are stored but not embedded yet" in page
    assert "Refresh now" in page


# --- 2. a bare group command prints its help once ------------------------------------------


@pytest.mark.parametrize("group", ["corpus", "feeds", "persona", "model", "tags"])
def test_a_bare_group_command_prints_its_help_once(group):
    result = run(group)
    assert result.exit_code == 0, result.output
    assert result.output.count("Usage:") == 1, result.output
    assert f"hermes {group}" in result.output


def test_bare_hermes_prints_its_help_once():
    result = run()
    assert result.output.count("Usage:") == 1, result.output


# --- 3. an empty interests text names the CLI's option and command -------------------------


def test_blank_interests_name_the_option_and_the_tags_command(db_path):
    result = run("persona", "create", "blank", "--interests", "   ", "--db", db_path)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --interests is empty"), result.stderr
    assert f"`hermes --db {db_path} persona tags`" in " ".join(result.stderr.split())
    assert "propose_interests" not in result.stderr


def test_blank_interests_over_mcp_name_the_tool(db):
    said = call_tool(db, collect_tools()["create_persona"], {"name": "b", "interests": "  "}, face="mcp")["message"]
    assert said.startswith("interests is empty") and "propose_interests" in said


# --- 4. several words are one query ---------------------------------------------------------


def test_persona_search_takes_several_words_as_one_query(db, db_path, add_items):
    add_items(
        [
            {"title": "Sparse autoencoders find features"},
            {"title": "Sparse coding of images"},
            {"title": "Autoencoders for speech"},
        ]
    )
    create_user(db, "interp", "interpretability")
    result = run("persona", "search", "interp", "sparse", "autoencoders", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "Sparse autoencoders find features" in result.output
    assert "Sparse coding" not in result.output and "for speech" not in result.output
    quoted = run("persona", "search", "interp", "sparse autoencoders", "--db", db_path)
    assert quoted.output == result.output


# --- 5. explain names the window the item was listed in -------------------------------------


def test_explain_of_an_old_item_says_how_to_rank_it_in_the_whole_archive(db, db_path, add_items):
    (old,) = add_items([{"title": "An old paper on circuits", "days_ago": 40}])
    create_user(db, "interp", "circuits")
    assert f"[{old}]" in run("feed", "interp", "--all", "--below-bar", "--db", db_path).output
    # `feed --all` kept the whole archive as the window: the 7-day one is asked for
    result = run("explain", "interp", old, "--since-days", "7", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "Not among the unread items of the last 7 days" in result.output
    assert f"`hermes explain interp {old} --all` ranks it in the whole archive" in result.output
    assert "since_days" not in result.output
    widened = run("explain", "interp", old, "--all", "--db", db_path)
    assert "Ranks 1 of 1" in widened.output and "--all` ranks it" not in widened.output


def test_explain_over_mcp_names_since_days(db, add_items):
    (old,) = add_items([{"title": "An old paper on circuits", "days_ago": 40}])
    create_user(db, "interp", "circuits")
    said = call_tool(db, collect_tools()["explain_item"], {"user": "interp", "item_id": old}, face="mcp")["message"]
    assert "Call explain_item with since_days=null" in said


# --- 6. a digest numbers items in the order shown and says how many each topic shows -------


def _entry(rank: int, title: str) -> dict:
    return {
        "id": rank,
        "rank": rank,
        "title": title,
        "published": "2026-01-01",
        "source": "S",
        "reason": "Good match.",
        "url": None,
    }


def test_digest_numbers_items_in_reading_order_and_says_how_many_are_shown():
    from hermes_digest.render import render_digest

    result = {
        "window_days": 7,
        "message": "m",
        "topics": [
            {"label": "Circuits", "n_total": 12, "items": [_entry(1, "A"), _entry(3, "B")]},
            {"label": "Probes", "n_total": 1, "items": [_entry(2, "C")]},
        ],
        "unclustered": [_entry(4, "D")],
    }
    lines: list[str] = []
    render_digest(result, "interp", lines.append)
    # the reading order, and each item's id as `hermes like` / `hermes explain` take it
    numbered = [m.group(0).strip() for line in lines if (m := re.match(r"^ +\d+\. \[\d+\] \w", line))]
    assert numbered == ["1. [1] A", "2. [3] B", "3. [2] C", "4. [4] D"]
    assert any("Circuits" in line and line.endswith("  (12 items, 2 shown)") for line in lines)
    assert any("Probes" in line and line.endswith("  (1 item)") for line in lines)


def test_the_cli_digest_numbers_in_the_order_shown(db, db_path, add_items, no_bar):
    add_items(
        [{"title": f"Orchard {i}", "tags": ["apple", "pear"]} for i in range(3)]
        + [{"title": f"Wool {i}", "tags": ["wool", "yarn"]} for i in range(3)]
    )
    create_user(db, "ann", "apples and pears, wool")
    result = run("digest", "ann", "--per-topic", "1", "--db", db_path)
    assert result.exit_code == 0, result.output
    numbers = [int(m.group(1)) for m in re.finditer(r"^ +(\d+)\. \[\d+\] [OW]", result.output, re.M)]
    assert numbers == list(range(1, len(numbers) + 1)) and numbers, result.output
    assert "3 items, 1 shown" in result.output


# --- 7. advice after a command names the persona typed, quoted for the shell ---------------


@pytest.mark.parametrize("name, typed", [("ann", "ann"), ("Ann Lee", "'Ann Lee'")])
def test_advice_after_create_uses_the_name_typed(db_path, name, typed):
    result = run("persona", "create", name, "--interests", "lensing", "--db", db_path)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"`hermes --db {db_path} persona bootstrap {typed}`" in said
    assert f"`hermes --db {db_path} feed {typed} -i`" in said
    assert "NAME" not in said
    again = run("persona", "create", name, "--interests", "x", "--db", db_path)
    assert f"`hermes --db {db_path} persona update {typed} --interests TEXT`" in " ".join(again.stderr.split())


def test_advice_after_bootstrap_uses_the_name(db, db_path, add_items, split_bar):
    add_items([{"title": "Paper 0 on lensing"}] + [{"title": f"Paper {k}"} for k in range(1, 4)])
    create_user(db, "ann", "lensing")
    result = run("persona", "bootstrap", "ann", "--likes", "1", "--dislikes", "1", "--db", db_path)
    assert f"`hermes --db {db_path} persona show ann`" in result.output and "NAME" not in result.output
    # a second bootstrap finds the work done (issue 34: idempotent), and says how to undo it
    again = run("persona", "bootstrap", "ann", "--db", db_path)
    assert again.exit_code == 0 and "already warmed" in again.output, again.output
    assert f"`hermes --db {db_path} persona reset ann --source bootstrap --yes`" in again.output, again.output


# --- 8. a repeated like says the truth: nothing is added ------------------------------------


def test_a_repeated_like_says_it_stands_unchanged_and_the_count_does_not_move(db, db_path, add_items):
    ids = add_items([{"title": "A"}, {"title": "B"}])
    create_user(db, "interp", "circuits")
    run("like", "interp", ids[0], "--db", db_path)
    run("like", "interp", ids[1], "--db", db_path)
    again = run("like", "interp", ids[0], "--db", db_path)
    assert again.stdout.startswith(
        f"Item {ids[0]} was already liked by interp; the like stands unchanged (2 clicks in total)"
    ), again.stdout
    assert "recorded again" not in again.stdout
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 2


# --- 9. a skipped feed says why: the server's pause, or its failures in a row ----------------


def test_a_skipped_feed_says_it_failed_so_many_times_in_a_row(db, db_path, tmp_path):
    db.execute("INSERT INTO feeds (url, title) VALUES (?, 'gone')", [str(tmp_path / "gone.xml")])
    for _ in range(2):
        run("ingest", "--db", db_path)
    third = run("ingest", "--db", db_path)
    line = next(row for row in third.output.splitlines() if "skipped" in row)
    assert "the feed failed 2 times in a row (last: " in line, line
    assert "or the feed failed repeatedly" not in line


def test_a_skipped_feed_says_the_server_asked_for_a_pause(db, db_path):
    from ingest_server import FeedServer

    with FeedServer() as server:
        url = server.add("/busy.xml", status=429, headers={"Retry-After": "3600"})
        db.execute("INSERT INTO feeds (url, title, subscribed_by) VALUES (?, 'busy', 'user')", [url])
        run("ingest", "--db", db_path)
        second = run("ingest", "--db", db_path)
    line = next(row for row in second.output.splitlines() if "skipped" in row)
    assert "the server asked for a pause (HTTP 429" in line and "1 failure in a row" in line, line
    assert "or the feed failed repeatedly" not in line


# --- 10. bootstrap says what it did, where the items went, and how to undo it --------------


def test_bootstrap_says_what_it_rated_that_rated_items_leave_the_feed_and_how_to_undo(
    db, db_path, add_items, split_bar
):
    add_items(
        [{"title": f"Paper {k} on lensing"} for k in range(3)]
        + [{"title": f"Notes {k} on sourdough"} for k in range(3)]
    )
    create_user(db, "ann", "lensing")
    result = run("persona", "bootstrap", "ann", "--likes", "2", "--dislikes", "2", "--db", db_path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Warmed 'ann' from its interests (click source 'bootstrap'):"
    # a short list: what was liked, what was disliked, then a line each on where and undo
    assert lines[1] == "Liked, the 2 items closest to them:" and lines[4] == "Disliked, the 2 items farthest:"
    # (short lines of hermes's own words: the --db given, which every command named keeps, aside)
    assert len(lines) == 11 and all(len(line.replace(f" --db {db_path}", "")) <= 120 for line in lines)
    out = " ".join(result.output.split())
    assert f"`hermes --db {db_path} persona show ann` shows the effect" in out
    out = out.replace(f" --db {db_path}", "")
    assert "Rated items leave `hermes feed ann`" in out
    assert "`hermes persona search ann WORDS` still finds them, marked [liked]/[disliked]" in out
    assert "counts against the item's source and tags" in out
    assert "`hermes persona reset ann --source bootstrap --yes` takes every bootstrap click back" in out
    rated = dict(db.execute("SELECT item_id, label FROM clicks").fetchall())
    listed = {int(m.group(2)): m.group(1) for m in re.finditer(r"^  ([+-]) \[(\d+)\]", result.output, re.M)}
    assert listed == {i: "+" if label == "like" else "-" for i, label in rated.items()}
    for word in ("reset_feedback", "record_feedback", "list_feed", "search_feed"):
        assert word not in out


def test_bootstrap_over_mcp_names_the_tools(db, add_items, split_bar):
    add_items([{"title": "Paper 0 on lensing"}] + [{"title": f"Paper {k}"} for k in range(1, 4)])
    create_user(db, "ann", "lensing")
    said = call_tool(db, collect_tools()["bootstrap_persona"], {"name": "ann", "n_like": 1, "n_dislike": 1}, face="mcp")
    assert "reset_feedback with confirm=true" in said["message"]
    assert "list_feed leaves them out" in said["message"] and "hermes" not in said["message"]


def test_digest_says_items_wait_for_embedding_after_an_interrupted_ingest(db, db_path):
    _store_unembedded(db, 2)
    create_user(db, "cm", "interpretability")
    result = run("digest", "cm", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "2 items are stored but not embedded yet" in result.output
    assert f"run `hermes --db {db_path} ingest` to embed them" in " ".join(result.output.split())


def test_the_default_window_also_says_how_to_widen_it(db, db_path):
    _store_unembedded(db, 1)
    create_user(db, "cm", "interpretability")
    result = run("feed", "cm", "--db", db_path)
    assert "1 item is stored but not embedded yet" in result.output
    assert "--all for the whole archive" in result.output


def test_unrate_takes_a_rating_back_and_the_item_returns_to_the_feed(db, db_path, add_items):
    """The CLI's per-item undo (the web's undo, `u` in triage): bootstrap's advice needs it."""
    create_user(db, "ann", "quantum error correction")
    [a, b] = add_items([{"title": "Surface codes", "summary": "qubits"}, {"title": "Sourdough", "summary": "flour"}])
    assert run("like", "ann", str(a), "--db", str(db_path)).exit_code == 0
    assert f"[{a}]" not in run("feed", "ann", "--all", "--db", str(db_path)).output
    out = run("unrate", "ann", str(a), str(b), "--db", str(db_path))
    assert out.exit_code == 0, out.output
    assert f"Took back ann's like of item {a} (0 clicks left)" in out.output
    assert f"Item {b} had no like or dislike from ann; nothing changed" in out.output
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0
    assert f"[{a}]" in run("feed", "ann", "--all", "--below-bar", "--db", str(db_path)).output
    refused = run("unrate", "nobody", str(a), "--db", str(db_path))
    assert refused.exit_code == 1 and "unknown persona" in refused.output


def test_unrate_with_a_bad_id_among_good_ones_does_the_good_ones_and_says_so(db, db_path, add_items):
    """As `like` does: each item answered, the unknown one an error, exit 1; a bad id first
    or in the middle stops nothing (the trial saw 12 taken back silently, 22 left liked)."""
    create_user(db, "ann", "quantum error correction")
    [a, b] = add_items([{"title": "Surface codes"}, {"title": "Sourdough"}])
    assert run("like", "ann", str(a), str(b), "--db", str(db_path)).exit_code == 0
    out = run("unrate", "ann", "9999", str(a), str(b), "--db", str(db_path))
    assert out.exit_code == 1
    assert "unknown item 9999" in out.output
    assert f"like of item {a}" in out.output and f"like of item {b}" in out.output
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0
    doc = json.loads(run("unrate", "ann", "9999", str(a), "--json", "--db", str(db_path)).stdout)
    assert [(r["item_id"], r["ok"]) for r in doc["results"]] == [(9999, False), (a, True)]
