"""Bad input: a clear ok:false, nothing written, no revision bump."""

from __future__ import annotations

import math

import pytest
from hermes_corpus import signals as cs

from hermes.errors import InvalidInput, NotFound
from hermes.tools import call_tool, collect_tools

TABLES = (
    "corpus_progress",
    "corpus_highlights",
    "corpus_notes",
    "corpus_favorites",
    "corpus_revision",
    "corpus_log",
    "corpus_membership",
)


def snapshot(db) -> dict:
    return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES}


@pytest.fixture
def setup(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice'), ('bob')")
    a, b = add_items([{"title": "one"}, {"title": "two"}])
    hid = cs.add_highlight(db, "alice", a, "alice's passage")["highlight_id"]
    nid = cs.add_note(db, "alice", a, "alice's note")["note_id"]
    cs.favorite(db, "bob", b)
    return {"db": db, "a": a, "b": b, "hid": hid, "nid": nid}


def call(db, name, **arguments):
    tools = collect_tools({"corpus"})
    result = call_tool(db, tools[name], arguments)
    # A failure keeps every success-path key present (empty).
    assert set(tools[name].empty) <= set(result), name
    return result


BAD_CALLS = [
    (
        "record_progress",
        {"user": "alice", "item_id": "A", "fraction": 1.5},
        "fraction must be a number from 0 to 1, got 1.5",
    ),
    ("record_progress", {"user": "alice", "item_id": "A", "fraction": -0.01}, "from 0 to 1"),
    ("record_progress", {"user": "alice", "item_id": "A", "fraction": math.nan}, "NaN"),
    ("record_progress", {"user": "alice", "item_id": "A", "fraction": math.inf}, "from 0 to 1"),
    ("record_progress", {"user": "alice", "item_id": "A", "fraction": True}, "number"),
    ("record_progress", {"user": "alice", "item_id": 99999, "fraction": 0.5}, "unknown item"),
    ("record_progress", {"user": "nobody", "item_id": "A", "fraction": 0.5}, "unknown persona"),
    ("add_highlight", {"user": "alice", "item_id": "A", "text": "   "}, "empty"),
    ("add_highlight", {"user": "alice", "item_id": 99999, "text": "x"}, "unknown item"),
    ("add_highlight", {"user": "nobody", "item_id": "A", "text": "x"}, "unknown persona"),
    ("add_highlight", {"user": "alice", "item_id": "A", "text": "x" * 10_001}, "at most 10,000 characters"),
    ("add_note", {"user": "alice", "item_id": "A", "text": ""}, "empty"),
    ("add_note", {"user": "nobody", "item_id": "A", "text": "x"}, "unknown persona"),
    ("favorite", {"user": "alice", "item_id": 99999}, "unknown item"),
    ("favorite", {"user": "nobody", "item_id": "A"}, "unknown persona"),
    ("favorite", {"user": "alice", "item_id": "A", "on": "yes"}, "true or false"),
    ("delete_highlight", {"user": "bob", "highlight_id": "H", "confirm": True}, "has no highlight"),
    ("delete_highlight", {"user": "alice", "highlight_id": 99999, "confirm": True}, "has no highlight"),
    ("delete_highlight", {"user": "nobody", "highlight_id": "H", "confirm": True}, "unknown persona"),
    ("delete_note", {"user": "bob", "note_id": "N", "confirm": True}, "has no note"),
    ("corpus", {"user": "nobody"}, "unknown persona"),
    ("corpus_items", {"user": "alice", "facet": "heard"}, 'one of "experienced", "saved"'),
    ("corpus_items", {"user": "alice", "facet": "experienced", "limit": 0}, "limit"),
    ("corpus_changes", {"user": "alice", "since": -1}, "at least 0"),
    ("corpus_changes", {"user": "alice", "since": 3}, "beyond the current revision"),
    ("corpus_changes", {"user": "nobody", "since": 0}, "unknown persona"),
    ("corpus_ranked", {"user": "alice", "limit": 0}, "limit"),
    ("corpus_entities", {"user": "nobody"}, "unknown persona"),
    ("recall", {"user": "alice", "query": "  "}, "empty"),
    ("recall", {"user": "nobody", "query": "x"}, "unknown persona"),
]


@pytest.mark.parametrize(
    "name,arguments,expect", BAD_CALLS, ids=[f"{n}-{k}" for k, (n, _a, _e) in enumerate(BAD_CALLS)]
)
def test_refused_calls_write_nothing(setup, name, arguments, expect):
    db = setup["db"]
    arguments = {
        k: {"A": setup["a"], "H": setup["hid"], "N": setup["nid"]}.get(v, v) if isinstance(v, str) else v
        for k, v in arguments.items()
    }
    before = snapshot(db)
    result = call(db, name, **arguments)
    assert result["ok"] is False, result
    assert expect in result["message"], result["message"]
    assert snapshot(db) == before


def test_deleting_a_highlight_twice(setup):
    db = setup["db"]
    first = call(db, "delete_highlight", user="alice", highlight_id=setup["hid"], confirm=True)
    assert first["ok"] and first["deleted"] is True
    before = snapshot(db)
    second = call(db, "delete_highlight", user="alice", highlight_id=setup["hid"], confirm=True)
    assert second["ok"] is False and "has no highlight" in second["message"]
    assert snapshot(db) == before


def test_delete_without_confirm_only_previews(setup):
    db = setup["db"]
    before = snapshot(db)
    r = call(db, "delete_note", user="alice", note_id=setup["nid"])
    # the seed's dry run: not done (ok false), naming what would be lost
    assert r["ok"] is False and r["deleted"] is False and r["text"] == "alice's note"
    assert "confirm=true" in r["message"]
    assert snapshot(db) == before


def test_a_delete_losing_a_race_rolls_back(setup, monkeypatch):
    """The row vanishes between the ownership check and the write (another process deleted
    it): the write refuses inside the transaction, and nothing — no revision — lands."""
    db = setup["db"]
    real_owned = cs._owned

    def owned_then_deleted(db_, table, what, user, row_id):
        row = real_owned(db_, table, what, user, row_id)
        db_.execute(f"DELETE FROM {table} WHERE id = ?", [row["id"]])  # the other writer
        return row

    monkeypatch.setattr(cs, "_owned", owned_then_deleted)
    before = snapshot(db)
    with pytest.raises(NotFound, match="already deleted"):
        cs.delete_highlight(db, "alice", setup["hid"])
    after = snapshot(db)
    assert after["corpus_revision"] == before["corpus_revision"]
    assert after["corpus_log"] == before["corpus_log"]


def test_python_api_raises_typed_errors(setup):
    db = setup["db"]
    with pytest.raises(InvalidInput):
        cs.record_progress(db, "alice", setup["a"], 0.5, source="browser")
    with pytest.raises(NotFound):
        cs.add_note(db, "nobody", setup["a"], "x")
    # a value of the wrong type is the tool's model's to refuse (the one check, issue 35)
    tools = collect_tools()
    for name, arguments in (("record_progress", {"fraction": float("nan")}), ("favorite", {"on": "1"})):
        result = call_tool(db, tools[name], {"user": "alice", "item_id": setup["a"], **arguments})
        assert result["ok"] is False, result


def test_an_observer_failure_rolls_back_the_signal(setup, pm):
    """hermes_signal_written runs inside the write transaction: if the corpus bookkeeping
    fails, the signal's own rows are not committed either."""
    from hermes.hookspecs import hookimpl

    db = setup["db"]

    class Boom:
        @hookimpl
        def hermes_signal_written(self, db, signal):
            raise RuntimeError("observer failed")

    pm.register(Boom(), name="boom")
    before = snapshot(db)
    with pytest.raises(RuntimeError):
        cs.record_progress(db, "alice", setup["b"], 0.9)
    assert snapshot(db) == before


def test_deleted_ids_are_never_handed_out_again(setup):
    """A client holding a stale highlight id must not be able to delete a newer one."""
    db = setup["db"]
    cs.delete_highlight(db, "alice", setup["hid"])
    cs.delete_note(db, "alice", setup["nid"])
    assert cs.add_highlight(db, "alice", setup["a"], "new")["highlight_id"] != setup["hid"]
    assert cs.add_note(db, "alice", setup["a"], "new")["note_id"] != setup["nid"]
