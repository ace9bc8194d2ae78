"""``hermes feed USER -i`` on a real pseudo-terminal: single keys move, like, dislike, mark
read, save and open; every action goes through the tools with source ``ui``; the list
re-ranks after a click."""

from __future__ import annotations

import pytest
from process_support import child_env, hermes_command

from hermes.storage.records import create_user, require_user

pexpect = pytest.importorskip("pexpect")

TOPICS = [
    ("Surface code decoding with neural networks", ["quant-ph"]),
    ("Quantum error correction thresholds", ["quant-ph"]),
    ("Sourdough starter troubleshooting", ["baking"]),
    ("Bread baking with wild yeast", ["baking"]),
    ("Tomato blight in wet summers", ["garden"]),
]


@pytest.fixture
def triage_db(db, db_path, add_items):
    ids = add_items(
        [
            {"title": t, "tags": tags, "url": f"https://example.org/{k}", "days_ago": 1}
            for k, (t, tags) in enumerate(TOPICS)
        ]
    )
    create_user(db, "ada", "quantum error correction")
    return db, db_path, ids


def spawn(db_path, home, *extra, **env):
    cmd = hermes_command()
    child = pexpect.spawn(
        cmd[0],
        [*cmd[1:], "feed", "ada", "-i", "--all", "--db", str(db_path), *extra],
        env=child_env(home, **env),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    return child


def clicks(db, user="ada"):
    uid = require_user(db, user)["id"]
    return db.execute("SELECT item_id, label, source FROM clicks WHERE user_id = ? ORDER BY id", [uid]).fetchall()


def test_keys_like_dislike_read_save_and_open(triage_db, tmp_path):
    db, db_path, ids = triage_db
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    child = spawn(db_path, tmp_path / "home", BROWSER=str(browser))
    child.expect("j/k or ↓/↑ move")
    first_screen = child.before
    assert "Surface code" in first_screen or "Quantum error" in first_screen

    child.send("l")  # like the top item
    child.expect("liked")
    child.expect("re-ranked")
    child.send("j")
    child.send("d")  # dislike the second one
    child.expect("disliked")
    child.send("r")
    child.expect("marked read")
    child.send("s")
    child.expect("saved for later")
    child.send("o")
    child.expect("opened")
    child.send("x")
    child.expect("unknown key")
    child.send("q")
    child.expect("1 like, 1 dislike, 1 read, 1 saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    got = clicks(db)
    assert [label for _, label, _ in got] == ["like", "dislike"]
    assert {source for _, _, source in got} == {"ui"}  # a person at a terminal
    liked_id = got[0][0]
    assert liked_id in ids
    facets = dict(db.execute("SELECT facet, count(*) FROM corpus_membership GROUP BY facet").fetchall())
    assert facets == {"experienced": 1, "saved": 1}  # r marked one read, s saved another
    assert opened.read_text().startswith("https://example.org/")


def test_the_list_re_ranks_after_a_click(triage_db, tmp_path):
    db, db_path, _ = triage_db
    child = spawn(db_path, tmp_path / "home")
    child.expect("j/k or ↓/↑ move")
    before = child.before
    child.send("l")
    child.expect("re-ranked")
    after = child.before
    child.send("q")
    child.expect(pexpect.EOF)
    # The liked item is clicked now, so it left the unread list and the count dropped.
    assert "5 items for ada" in before and "4 items for ada" in after


def test_u_takes_back_the_last_like_read_and_save(triage_db, tmp_path):
    db, db_path, _ = triage_db
    child = spawn(db_path, tmp_path / "home")
    child.expect("u undo")
    child.send("u")
    child.expect("nothing to undo")
    child.send("l")
    child.expect("re-ranked")
    child.send("u")
    child.expect("undone: like")
    after_undo = child.before
    child.send("r")
    child.expect("marked read")
    child.send("s")
    child.expect("saved for later")
    child.send("u")
    child.expect("undone: save")
    child.send("u")
    child.expect("undone: read")
    child.send("q")
    child.expect("0 likes, 0 dislikes, 0 read, 0 saved")
    child.expect(pexpect.EOF)
    assert clicks(db) == []  # the like was taken back, through the click write path
    assert db.execute("SELECT count(*) FROM corpus_membership").fetchone()[0] == 0
    assert "5 items for ada" in after_undo  # the item is back in the list


def test_interactive_needs_a_terminal(triage_db):
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    _, db_path, _ = triage_db
    result = CliRunner().invoke(build_app(), ["feed", "ada", "-i", "--db", str(db_path)])
    assert result.exit_code == 1 and "needs a terminal" in result.stderr


def test_unknown_persona_is_one_error_line_before_the_screen(triage_db, tmp_path):
    _, db_path, _ = triage_db
    cmd = hermes_command()
    child = pexpect.spawn(
        cmd[0],
        [*cmd[1:], "feed", "nobody", "-i", "--db", str(db_path)],
        env=child_env(tmp_path / "home"),
        encoding="utf-8",
        timeout=60,
    )
    child.expect("error: unknown persona 'nobody'")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
