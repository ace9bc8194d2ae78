"""The corpus tools: reading signals in, the persona's corpus out.

Each ``view_*`` function validates, reads, and returns ``(message, payload)`` or raises
:class:`hermes.errors.NotFound` / :class:`~hermes.errors.InvalidInput`; the HTTP routes map
those to 404 / 400. Each tool wraps one of them in the result envelope, so a tool never
raises for a user mistake and a refused call writes nothing.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hermes.errors import HermesError, InvalidInput
from hermes.faces import Say
from hermes.records import require_user
from hermes.tools import caller, fail, int_arg, ok

from . import entities, membership, signals, strength

User = Annotated[str, Field(description="Persona name (see list_users), e.g. 'alice'.")]
ItemId = Annotated[int, Field(ge=1, description="Item id from list_feed, search_feed or corpus_items.")]

WRITE_EMPTY = {"item_id": None, "facet": None, "revision": None, "changes": []}
EMPTY = {
    "record_progress": {**WRITE_EMPTY, "max_fraction": None, "reopens": 0},
    "add_highlight": {**WRITE_EMPTY, "highlight_id": None},
    "delete_highlight": {**WRITE_EMPTY, "highlight_id": None, "text": None, "deleted": False},
    "add_note": {**WRITE_EMPTY, "note_id": None},
    "delete_note": {**WRITE_EMPTY, "note_id": None, "text": None, "deleted": False},
    "favorite": {**WRITE_EMPTY, "favorited": None, "changed": False},
    "corpus": {"user": None, "revision": None, "experienced_count": 0, "saved_count": 0,
               "top_entities": []},
    "corpus_items": {"user": None, "facet": None, "items": [], "total": 0},
    "corpus_changes": {"user": None, "since": None, "changes": [], "revision": None,
                       "truncated": False, "has_more": False, "next_since": None},
    "corpus_ranked": {"user": None, "items": []},
    "corpus_entities": {"user": None, "entities": []},
    "recall": {"user": None, "query": None, "items": []},
}


# What a reader can do next, in the words of each face (hermes.faces).
CONFIRM_DELETE = Say(mcp="call again with confirm=true to delete it",
                     cli="there is no CLI command to delete it; use the delete tool over MCP",
                     web="press Delete again to delete it")
REREAD_ITEMS = Say(mcp="re-read corpus_items for the full state",
                   cli="`hermes corpus items USER` shows the full state",
                   web="the Corpus page shows the full state")


def _more(next_since: int) -> Say:
    return Say(mcp=f"call again with since={next_since}",
               cli=f"rerun with --since {next_since}",
               web="press More")


def _guard(name: str, fn, *args, empty: dict | None = None) -> dict:
    try:
        message, payload = fn(*args)
    except HermesError as exc:
        return fail(str(exc), **(empty or EMPTY)[name])
    return ok(message, **payload)




def _bool(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false, got {value!r}")
    return value


def _where(db, user_id: int, item_id: int, changes: list[dict]) -> dict:
    """Where the item stands after a write: its facet and the persona's revision."""
    facet = db.execute(
        "SELECT facet FROM corpus_membership WHERE user_id = ? AND item_id = ?", [user_id, item_id]
    ).fetchone()
    revision, _ = membership.revision_state(db, user_id)
    return {"item_id": item_id, "facet": facet[0] if facet else None, "revision": revision,
            "changes": changes}


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _describe(changes: list[dict]) -> str:
    if not changes:
        return "membership unchanged"
    return "; ".join(f"{c['kind']} {'to' if c['kind'] == 'added' else 'from'} {c['facet']} "
                     f"(revision {c['revision']})" for c in changes)


# --- writes ------------------------------------------------------------------------------

def view_record_progress(db, user, item_id, fraction, new_session=True):
    r = signals.record_progress(db, user, item_id, fraction, new_session=new_session,
                                source=caller())
    u = require_user(db, r["user"])
    return (f"Recorded {r['fraction']:.0%} of item {r['item_id']} for {r['user']} "
            f"(max {r['max_fraction']:.0%}, {r['reopens']} re-reads); {_describe(r['changes'])}.",
            {**_where(db, u["id"], r["item_id"], r["changes"]),
             "max_fraction": r["max_fraction"], "reopens": r["reopens"]})


def record_progress(
    db,
    user: User,
    item_id: ItemId,
    fraction: Annotated[float, Field(ge=0, le=1, description=(
        "How much of the item was read or played, 0 to 1 (0.5 = half). The highest value "
        "is kept; reaching 0.3 makes the item count as read (experienced)."))],
    new_session: Annotated[bool, Field(description=(
        "True (default) when the persona opened the item for this reading; opening it again "
        "later counts as a re-read. False for a progress update within the same reading."))] = True,
) -> dict:
    """Record reading or playback progress on an item."""
    return _guard("record_progress", view_record_progress, db, user, item_id, fraction, new_session)


def view_add_highlight(db, user, item_id, text, note=None):
    r = signals.add_highlight(db, user, item_id, text, note, source=caller())
    u = require_user(db, r["user"])
    return (f"Saved highlight {r['highlight_id']} on item {r['item_id']}; {_describe(r['changes'])}.",
            {**_where(db, u["id"], r["item_id"], r["changes"]), "highlight_id": r["highlight_id"]})


def add_highlight(
    db,
    user: User,
    item_id: ItemId,
    text: Annotated[str, Field(min_length=1, max_length=signals.MAX_TEXT,
                               description="The passage to keep, quoted from the item.")],
    note: Annotated[str | None, Field(max_length=signals.MAX_TEXT,
                                      description="Optional comment on the passage.")] = None,
) -> dict:
    """Keep a passage of an item; the item becomes experienced."""
    return _guard("add_highlight", view_add_highlight, db, user, item_id, text, note)


def _view_delete(what: str, db, user, row_id, confirm):
    _bool(confirm, "confirm")
    key = f"{what}_id"
    if not confirm:
        row = (signals.get_highlight if what == "highlight" else signals.get_note)(db, user, row_id)
        u = require_user(db, user)
        return (f"Would delete {what} {row['id']} on item {row['item_id']}: {row['text'][:200]!r}. "
                f"Nothing was deleted; {CONFIRM_DELETE}.",
                {**_where(db, u["id"], row["item_id"], []), key: row["id"], "text": row["text"],
                 "deleted": False})
    fn = signals.delete_highlight if what == "highlight" else signals.delete_note
    r = fn(db, user, row_id, source=caller())
    u = require_user(db, r["user"])
    return (f"Deleted {what} {r[key]} on item {r['item_id']}; {_describe(r['changes'])}.",
            {**_where(db, u["id"], r["item_id"], r["changes"]), key: r[key], "text": r["text"],
             "deleted": True})


def view_delete_highlight(db, user, highlight_id, confirm=False):
    return _view_delete("highlight", db, user, highlight_id, confirm)


def delete_highlight(
    db,
    user: User,
    highlight_id: Annotated[int, Field(ge=1, description="The highlight's id (from add_highlight or recall).")],
    confirm: Annotated[bool, Field(description=(
        "False (default) only shows what would be deleted; true deletes the highlight."))] = False,
) -> dict:
    """Delete one of the persona's highlights (asks for confirm=true first)."""
    return _guard("delete_highlight", view_delete_highlight, db, user, highlight_id, confirm)


def view_add_note(db, user, item_id, text):
    r = signals.add_note(db, user, item_id, text, source=caller())
    u = require_user(db, r["user"])
    return (f"Saved note {r['note_id']} on item {r['item_id']}; {_describe(r['changes'])}.",
            {**_where(db, u["id"], r["item_id"], r["changes"]), "note_id": r["note_id"]})


def add_note(
    db,
    user: User,
    item_id: ItemId,
    text: Annotated[str, Field(min_length=1, max_length=signals.MAX_TEXT,
                               description="The note: what the persona took from the item.")],
) -> dict:
    """Write a note on an item; the item becomes experienced."""
    return _guard("add_note", view_add_note, db, user, item_id, text)


def view_delete_note(db, user, note_id, confirm=False):
    return _view_delete("note", db, user, note_id, confirm)


def delete_note(
    db,
    user: User,
    note_id: Annotated[int, Field(ge=1, description="The note's id (from add_note or recall).")],
    confirm: Annotated[bool, Field(description=(
        "False (default) only shows what would be deleted; true deletes the note."))] = False,
) -> dict:
    """Delete one of the persona's notes (asks for confirm=true first)."""
    return _guard("delete_note", view_delete_note, db, user, note_id, confirm)


def view_favorite(db, user, item_id, on=True):
    r = signals.favorite(db, user, item_id, on, source=caller())
    u = require_user(db, r["user"])
    state = "favorited" if on else "unfavorited"
    already = "" if r["changed"] else " (it already was)"
    return (f"Item {r['item_id']} {state}{already}; {_describe(r['changes'])}.",
            {**_where(db, u["id"], r["item_id"], r["changes"]), "favorited": on,
             "changed": r["changed"]})


def favorite(
    db,
    user: User,
    item_id: ItemId,
    on: Annotated[bool, Field(description="True to save the item for later, false to remove the favorite.")] = True,
) -> dict:
    """Save an item for later (or remove the favorite). A favorite alone does not mark it read."""
    return _guard("favorite", view_favorite, db, user, item_id, on)


# --- reads -------------------------------------------------------------------------------

def view_corpus(db, user):
    u = require_user(db, user)
    top = entities.top_entities(db, u["id"])  # outside the snapshot: the tag graph may persist itself
    with membership._read_snapshot(db):
        revision, _ = membership.revision_state(db, u["id"])
        counts = membership.facet_counts(db, u["id"])
    return (f"{u['name']}: {counts['experienced']} experienced, {counts['saved']} saved for later "
            f"(revision {revision}).",
            {"user": u["name"], "revision": revision, "experienced_count": counts["experienced"],
             "saved_count": counts["saved"], "top_entities": top})


def corpus(db, user: User) -> dict:
    """Summary of a persona's corpus: revision, how many items were read or captured
    (experienced) and saved for later, and the most frequent topics."""
    return _guard("corpus", view_corpus, db, user)


def view_corpus_items(db, user, facet="experienced", limit=50):
    membership.check_facet(facet)
    limit = int_arg("limit", limit, 1, 500)
    u = require_user(db, user)
    rows = db.execute(
        """SELECT m.item_id, coalesce(i.title, ''), i.url, i.content_type, i.published, m.revision, m.added
           FROM corpus_membership m LEFT JOIN items i ON i.id = m.item_id
           WHERE m.user_id = ? AND m.facet = ? ORDER BY m.revision DESC LIMIT ?""",
        [u["id"], facet, limit],
    ).fetchall()
    total = membership.facet_counts(db, u["id"])[facet]
    items = [{"item_id": r[0], "title": r[1], "url": r[2], "content_type": r[3], "published": r[4],
              "revision": r[5], "added": r[6]} for r in rows]
    label = "read or captured" if facet == "experienced" else "saved for later, not yet read"
    return (f"{_n(total, facet + ' item')} ({label}) for {u['name']}; showing {len(items)}, newest first.",
            {"user": u["name"], "facet": facet, "items": items, "total": total})


def corpus_items(
    db,
    user: User,
    facet: Annotated[str, Field(description=(
        "'experienced' = items read (past 30%) or highlighted/noted; 'saved' = favorited but "
        "not yet read."))] = "experienced",
    limit: Annotated[int, Field(ge=1, le=500, description="Maximum items to return.")] = 50,
) -> dict:
    """List the items in one facet of a persona's corpus, most recently added first."""
    return _guard("corpus_items", view_corpus_items, db, user, facet, limit)


def view_corpus_changes(db, user, since=0, limit=200):
    limit = int_arg("limit", limit, 1, 1000)
    u = require_user(db, user)
    r = membership.changes_since(db, u["id"], since, limit)
    note = (f" Some changes after that revision were trimmed from the log: {REREAD_ITEMS}."
            if r["truncated"] else "")
    more = f" More follow: {_more(r['next_since'])}." if r["has_more"] else ""
    return (f"{_n(len(r['changes']), 'change')} after revision {since}; current revision "
            f"{r['revision']}.{note}{more}",
            {"user": u["name"], "since": since, **r})


def corpus_changes(
    db,
    user: User,
    since: Annotated[int, Field(ge=0, description=(
        "Return changes after this revision (0 = from the start). Use the 'revision' of your "
        "previous call to get only what changed since."))] = 0,
    limit: Annotated[int, Field(ge=1, le=1000, description="Maximum changes to return.")] = 200,
) -> dict:
    """What changed in a persona's corpus since a revision: additions and removals
    (tombstones) per facet, the current revision, and truncated=true if part of that span
    is no longer in the log."""
    return _guard("corpus_changes", view_corpus_changes, db, user, since, limit)


def view_corpus_ranked(db, user, limit=10):
    limit = int_arg("limit", limit, 1, 200)
    u = require_user(db, user)
    items = strength.ranked(db, u["id"], limit)
    return (f"{_n(len(items), 'experienced item')} of {u['name']} by strength (0-1).",
            {"user": u["name"], "items": items})


def corpus_ranked(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=200, description="Maximum items to return.")] = 10,
) -> dict:
    """A persona's experienced items, strongest first. Strength (0-1) grows with how much
    was read, highlights and notes, a favorite, and re-reads."""
    return _guard("corpus_ranked", view_corpus_ranked, db, user, limit)


def view_corpus_entities(db, user, limit=20):
    limit = int_arg("limit", limit, 1, 200)
    u = require_user(db, user)
    found = entities.entity_view(db, u["id"], limit=limit, items_per_entity=10)
    return (f"{_n(len(found), 'topic')} across {u['name']}'s experienced items.",
            {"user": u["name"], "entities": found})


def corpus_entities(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=200, description="Maximum topics to return.")] = 20,
) -> dict:
    """The topics (tags) of a persona's experienced items, each with its items and when the
    persona first and last read about it; most items first."""
    return _guard("corpus_entities", view_corpus_entities, db, user, limit)


def view_recall(db, user, query, limit=10):
    limit = int_arg("limit", limit, 1, 50)
    u = require_user(db, user)
    items = entities.recall(db, u["id"], query, limit)
    return (f"Found {_n(len(items), 'item')} matching {query!r} among what {u['name']} read or captured.",
            {"user": u["name"], "query": query, "items": items})


def recall(
    db,
    user: User,
    query: Annotated[str, Field(min_length=1, max_length=500, description=(
        "Words to look for; every word must appear in the item's title, summary, or the "
        "persona's highlights or notes on it."))],
    limit: Annotated[int, Field(ge=1, le=50, description="Maximum items to return.")] = 10,
) -> dict:
    """What has this persona learned about X? Searches only items the persona read or
    captured (never items merely saved for later), including its highlights and notes."""
    return _guard("recall", view_recall, db, user, query, limit)
