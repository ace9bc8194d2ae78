"""Core storage rules: the click source enum, persona ids never reused."""

import pytest

from hermes.errors import InvalidInput
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


def test_record_click_rejects_a_bad_source(db, add_items):
    user = create_user(db, "ann", "x")
    [item] = add_items([{"title": "a"}])
    with pytest.raises(InvalidInput, match="ui, agent, bootstrap"):
        record_click(db, user["id"], item, True, "webhook")
    assert db.execute("SELECT count(*) FROM clicks").fetchone()[0] == 0


def test_a_deleted_personas_id_is_never_reused(db):
    first = create_user(db, "ann", "x")
    second = create_user(db, "bob", "y")
    db.execute("DELETE FROM users WHERE id = ?", [second["id"]])
    third = create_user(db, "cyd", "z")
    assert third["id"] > second["id"] > first["id"]


def test_a_removed_clicks_id_is_never_handed_out_again(db, add_items):
    """A trial's agent liked item A (click 2), took it back, liked item B: click 2 again."""
    from hermes.storage.clicks import remove_click

    user = create_user(db, "ann", "x")
    a, b, c = add_items([{"title": "a"}, {"title": "b"}, {"title": "c"}])
    first = record_click(db, user["id"], a, True, "agent")["id"]
    second = record_click(db, user["id"], b, True, "agent")["id"]
    remove_click(db, user["id"], b, "agent")
    third = record_click(db, user["id"], c, False, "agent")["id"]
    again = record_click(db, user["id"], a, False, "agent")["id"]  # a changed answer: a new click
    assert first < second < third < again
    assert [r[0] for r in db.execute("SELECT id FROM clicks ORDER BY id")] == [third, again]
