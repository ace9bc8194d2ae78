"""The clicks table is written and read by hermes.storage.clicks only (issue 35): its
readers answer what the faces, plugins and engine asked with their own SQL before."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hermes.errors import InvalidInput
from hermes.storage import clicks
from hermes.storage.records import create_user, feed_row

ROOT = Path(__file__).resolve().parent.parent
#: SQL on the table (upper-case keywords, as hermes writes SQL; prose says "from clicks")
SQL = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE)\s+clicks\b")


def test_only_the_clicks_module_writes_sql_on_clicks():
    """No string of SQL on the clicks table outside storage/clicks.py (and the migrations,
    which create it): the web face, the plugins and the engine call its readers."""
    found = []
    for path in sorted([*(ROOT / "hermes").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("hermes/storage/clicks.py", "hermes/storage/migrations.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if SQL.search(text):
                found.append(f"{rel}:{node.lineno}")
    assert not found, found


def test_the_readers(db, add_items):
    ann, bob = create_user(db, "ann", "x"), create_user(db, "bob", "y")
    a, b, c = add_items([{"title": "a"}, {"title": "b"}, {"title": "c"}])
    clicks.record_click(db, ann["id"], a, True, "ui")
    clicks.record_click(db, ann["id"], b, False, "agent")
    clicks.record_click(db, ann["id"], c, True, "bootstrap")
    clicks.record_click(db, bob["id"], a, False, "ui")
    uid = ann["id"]
    assert clicks.label_of(db, uid, a) == "like" and clicks.label_of(db, bob["id"], b) is None
    assert clicks.click_on(db, uid, c) == {"label": "like", "source": "bootstrap"}
    assert clicks.click_labels(db, uid) == {a: "like", b: "dislike", c: "like"}
    assert clicks.click_labels(db, uid, [b, 999]) == {b: "dislike"} and clicks.click_labels(db, uid, []) == {}
    assert sorted(clicks.clicked_items(db, uid)) == [a, b, c]
    assert clicks.click_history(db, uid) == [(a, True, "ui"), (b, False, "agent"), (c, True, "bootstrap")]
    assert clicks.user_clicks(db, uid) == [(a, True), (b, False), (c, True)]
    assert clicks.liked_by(db, uid) == {a: "ui", c: "bootstrap"}
    assert clicks.click_count(db, uid) == 3
    assert clicks.click_counts(db, uid) == {"clicks": 3, "likes": 2, "dislikes": 1}
    assert clicks.click_counts_by_persona(db) == {
        uid: {"clicks": 3, "likes": 2, "dislikes": 1},
        bob["id"]: {"clicks": 1, "likes": 0, "dislikes": 1},
    }
    assert clicks.clicks_by_source(db, uid) == {"ui": 1, "agent": 1, "bootstrap": 1}
    assert [r["item_id"] for r in clicks.recent_clicks(db, uid, 2)] == [c, b]
    feed_id = db.execute("SELECT feed_id FROM items WHERE id = ?", [a]).fetchone()[0]
    assert feed_row(db, feed_id)["id"] == feed_id
    assert clicks.clicks_on_feed(db, feed_id) == 4
    assert clicks.remove_click(db, uid, a, "ui") == "like" and clicks.remove_click(db, uid, a, "ui") is None
    assert clicks.remove_all_clicks(db, uid, "ui") == 2 and clicks.click_count(db, uid) == 0


def test_the_same_answer_again_changes_nothing(db, add_items, monkeypatch):
    """A trial's repeated like answered "unchanged" while its row was replaced (id 1 -> 6, a
    new time): the same answer from the same source keeps the click and tells no observer;
    the same answer from another source (the person confirming a library like) is written."""
    ann = create_user(db, "ann", "x")
    (a,) = add_items([{"title": "a"}])
    first = clicks.record_click(db, ann["id"], a, True, "ui")
    told = []
    real = clicks.record_signal
    monkeypatch.setattr(clicks, "record_signal", lambda *args: told.append(args) or real(*args))
    again = clicks.record_click(db, ann["id"], a, True, "ui")
    assert (again["id"], again["created"], again["previous"]) == (first["id"], first["created"], "like")
    assert told == [] and clicks.click_count(db, ann["id"]) == 1
    theirs = clicks.record_click(db, ann["id"], a, True, "agent")
    assert len(told) == 1 and theirs["previous"] == "like"
    assert clicks.click_on(db, ann["id"], a) == {"label": "like", "source": "agent"}
    flipped = clicks.record_click(db, ann["id"], a, False, "agent")
    assert flipped["previous"] == "like" and clicks.label_of(db, ann["id"], a) == "dislike"


def test_removing_one_sources_clicks_tells_the_observers_of_each(db, add_items, monkeypatch):
    """``persona reset --source bootstrap``: only that source's clicks go, each through the
    signal path (the score caches listen there), and the counts say what would go first."""
    ann = create_user(db, "ann", "x")
    a, b, c = add_items([{"title": "a"}, {"title": "b"}, {"title": "c"}])
    clicks.record_click(db, ann["id"], a, True, "bootstrap")
    clicks.record_click(db, ann["id"], b, False, "bootstrap")
    clicks.record_click(db, ann["id"], c, True, "ui")
    assert clicks.click_counts(db, ann["id"], of_source="bootstrap") == {"clicks": 2, "likes": 1, "dislikes": 1}
    told = []
    real = clicks.record_signal
    monkeypatch.setattr(clicks, "record_signal", lambda *args: told.append(args[1]) or real(*args))
    assert clicks.remove_all_clicks(db, ann["id"], "ui", of_source="bootstrap") == 2
    assert sorted(s.item_id for s in told) == [a, b] and {s.op for s in told} == {"delete"}
    assert clicks.click_history(db, ann["id"]) == [(c, True, "ui")]
    with pytest.raises(InvalidInput, match="expected one of ui, agent, bootstrap"):
        clicks.remove_all_clicks(db, ann["id"], "ui", of_source="zotero")
    assert clicks.click_count(db, ann["id"]) == 1
