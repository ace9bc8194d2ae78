"""An item id is never handed out twice (hermes.storage.ids). A trial's item 311 was "The
slow motion of a random walk…", was deleted with a library reset, and the next import's
paper became 311, "Percolation probabilities…": a note or script keyed on the id then
named the wrong paper. SQLite gives a deleted highest rowid to the next row."""

from __future__ import annotations

from hermes.ingest.store import insert_items
from hermes.storage.records import delete_items


def entry(title: str) -> dict:
    return {"guid": f"library:{title}", "title": title, "summary": "", "tags": []}


def test_the_newest_item_s_id_is_not_given_to_the_next(db):
    (first, newest) = insert_items(db, None, [entry("Percolation on trees"), entry("The slow motion of a walk")])
    assert delete_items(db, [newest]) == 1
    (new,) = insert_items(db, None, [entry("Percolation probabilities")])
    assert new not in (first, newest) and new > newest


def test_a_database_from_before_the_mark_keeps_its_newest_id_too(db):
    """A database whose items came in before the mark was kept has none in ``meta``: the
    delete records the highest id before the row goes."""
    (_, newest) = insert_items(db, None, [entry("a"), entry("b")])
    db.execute("DELETE FROM meta WHERE key = 'items.last_id'")
    delete_items(db, [newest])
    (new,) = insert_items(db, None, [entry("c")])
    assert new == newest + 1


def test_an_entry_already_stored_spends_no_id(db, add_items):
    """A refresh offers every entry of the feed again; those the archive has are ignored and
    take no id, so ids stay dense."""
    (one,) = insert_items(db, None, [entry("a")])
    assert insert_items(db, None, [entry("a"), entry("a")]) == []
    assert insert_items(db, None, [entry("a"), entry("b")]) == [one + 1]
    # a feed's items go the same way
    (fed,) = add_items([{"title": "From a feed"}])
    assert fed == one + 2
    db.execute("DELETE FROM items WHERE id = ?", [fed])  # the newest, gone by any way
    assert insert_items(db, None, [entry("d")]) == [fed + 1]
