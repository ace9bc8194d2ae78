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
