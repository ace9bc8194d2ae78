"""The corpus tools: reading signals in, the persona's corpus out.

Each tool validates (at the tool boundary), reads or writes, and returns the envelope; a user
mistake raises :class:`hermes.errors.NotFound` / :class:`~hermes.errors.InvalidInput`, which
the tool boundary turns into ``ok: false`` and the HTTP routes (:mod:`.routes`, through
:meth:`hermes.contract.Tool.invoke`) into 404 / 400. A refused call writes nothing.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from hermes.contract import Result, fail, ok, tool
from hermes.faces import Say
from hermes.records import require_user
from hermes.tools import ItemId, User, caller

from . import entities, membership, signals, strength

GROUP = "corpus"
Facet = Annotated[Literal["experienced", "saved"], Field(description=(
    "'experienced' = read (past 30%) or highlighted/noted; 'saved' = favorited, not yet read."))]


# The objects the answers are made of, typed for the output schema (a tool returns dicts).

class Change(BaseModel):
    """An item added to or removed from a facet, at a revision of the persona's corpus."""

    revision: int
    kind: Literal["added", "removed"]
    facet: Literal["experienced", "saved"]
    item_id: int


class CorpusItem(BaseModel):
    item_id: int
    title: str
    url: str | None
    content_type: str | None
    published: str | None
    #: the corpus revision at which it entered the facet
    revision: int
    added: str | None


class StrengthParts(BaseModel):
    heard: float
    captures: float
    favorite: float
    reopens: float


class StrongItem(BaseModel):
    item_id: int
    title: str
    url: str | None
    #: 0-1: how much was read, highlights and notes, a favorite, re-reads
    strength: float
    parts: StrengthParts
    max_fraction: float | None
    highlights: int
    notes: int
    favorited: bool
    reopens: int
    last_seen: str | None


class TopEntity(BaseModel):
    entity: str
    kind: str
    item_count: int


class EntityItem(BaseModel):
    item_id: int
    #: null for an item no longer stored (the view joins the archive)
    title: str | None
    first_seen: str | None
    last_seen: str | None


class Entity(TopEntity):
    first_seen: str | None
    last_seen: str | None
    items: list[EntityItem]


class RecalledHighlight(BaseModel):
    highlight_id: int
    text: str
    note: str | None


class RecalledNote(BaseModel):
    note_id: int
    text: str


class RecalledItem(BaseModel):
    item_id: int
    title: str
    url: str | None
    #: where the query's words were found: title, summary, highlight, note
    matched_in: list[str]
    highlights: list[RecalledHighlight]
    notes: list[RecalledNote]
    first_seen: str | None
    last_seen: str | None


class Write(Result):
    item_id: int | None = None
    facet: str | None = None
    revision: int | None = None
    changes: list[Change] = []


# What a reader can do next, in the words of each face (hermes.faces).
CONFIRM_DELETE = Say(mcp="call again with confirm=true to delete it",
                     cli="there is no CLI command to delete it; use the delete tool over MCP",
                     web="press Delete again to delete it")
REREAD_ITEMS = Say(mcp="re-read corpus_items for the full state",
                   cli="`hermes corpus items USER` shows the full state",
                   web="the Corpus page shows the full state")
# A favorite is "saved" for a person: the commands are `hermes save` / `unsave`, the button Save.
SAVED = Say(mcp="favorited", cli="saved", web="saved")
UNSAVED = Say(mcp="unfavorited", cli="unsaved", web="unsaved")


def _more(next_since: int) -> Say:
    return Say(mcp=f"call again with since={next_since}",
               cli=f"rerun with --since {next_since}",
               web="press More")




class Progress(Write):
    max_fraction: float | None = None
    reopens: int = 0


class Highlight(Write):
    highlight_id: int | None = None


class HighlightDeletion(Highlight):
    text: str | None = None
    deleted: bool = False


class Note(Write):
    note_id: int | None = None


class NoteDeletion(Note):
    text: str | None = None
    deleted: bool = False


class Favorite(Write):
    favorited: bool | None = None
    changed: bool = False


class Unread(Write):
    changed: bool = False


class Summary(Result):
    user: str | None = None
    revision: int | None = None
    experienced_count: int = 0
    saved_count: int = 0
    top_entities: list[TopEntity] = []


class Items(Result):
    user: str | None = None
    facet: str | None = None
    items: list[CorpusItem] = []
    total: int = 0


class Changes(Result):
    user: str | None = None
    since: int | None = None
    changes: list[Change] = []
    revision: int | None = None
    truncated: bool = False
    has_more: bool = False
    next_since: int | None = None


class Ranked(Result):
    user: str | None = None
    items: list[StrongItem] = []


class Entities(Result):
    user: str | None = None
    entities: list[Entity] = []


class Recall(Result):
    user: str | None = None
    query: str | None = None
    items: list[RecalledItem] = []


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

@tool(GROUP, result=Progress)
def record_progress(
    db,
    user: User,
    item_id: ItemId,
    fraction: Annotated[float, Field(ge=0, le=1, description=(
        "Share read or played, 0 to 1 (0.5 = half). The highest value is kept; 0.3 or more "
        "makes the item experienced."))],
    new_session: Annotated[bool, Field(description=(
        "true (default): the persona opened the item for this reading (opening it again later "
        "counts as a re-read); false: an update within the same reading."))] = True,
) -> dict:
    """Record how much of an item a persona read or played. Returns the item's facet, the
    corpus revision and the membership changes."""
    r = signals.record_progress(db, user, item_id, fraction, new_session=new_session,
                                source=caller())
    u = require_user(db, r["user"])
    return ok(f"Recorded {r['fraction']:.0%} of item {r['item_id']} for {r['user']} "
              f"(max {r['max_fraction']:.0%}, {r['reopens']} re-reads); {_describe(r['changes'])}.",
              **_where(db, u["id"], r["item_id"], r["changes"]),
              max_fraction=r["max_fraction"], reopens=r["reopens"])


@tool(GROUP, result=Highlight)
def add_highlight(
    db,
    user: User,
    item_id: ItemId,
    text: Annotated[str, Field(min_length=1, max_length=signals.MAX_TEXT,
                               description="The passage to keep, quoted from the item.")],
    note: Annotated[str | None, Field(max_length=signals.MAX_TEXT,
                                      description="Optional comment on the passage.")] = None,
) -> dict:
    """Save a highlighted passage (and optional comment) from an item for a persona; the item
    becomes experienced. Returns highlight_id."""
    r = signals.add_highlight(db, user, item_id, text, note, source=caller())
    u = require_user(db, r["user"])
    return ok(f"Saved highlight {r['highlight_id']} on item {r['item_id']}; {_describe(r['changes'])}.",
              **_where(db, u["id"], r["item_id"], r["changes"]), highlight_id=r["highlight_id"])


def _delete(what: str, db, user, row_id, confirm) -> dict:
    key = f"{what}_id"
    if not confirm:
        row = (signals.get_highlight if what == "highlight" else signals.get_note)(db, user, row_id)
        u = require_user(db, user)
        # The seed's dry run: an error (nothing was done) naming exactly what would be lost.
        return fail(f"Would delete {what} {row['id']} on item {row['item_id']}: {row['text'][:200]!r}. "
                    f"Nothing was deleted; {CONFIRM_DELETE}.",
                  **_where(db, u["id"], row["item_id"], []), **{key: row["id"]}, text=row["text"],
                  deleted=False)
    fn = signals.delete_highlight if what == "highlight" else signals.delete_note
    r = fn(db, user, row_id, source=caller())
    u = require_user(db, r["user"])
    return ok(f"Deleted {what} {r[key]} on item {r['item_id']}; {_describe(r['changes'])}.",
              **_where(db, u["id"], r["item_id"], r["changes"]), **{key: r[key]}, text=r["text"],
              deleted=True)


@tool(GROUP, result=HighlightDeletion, destructive=True)
def delete_highlight(
    db,
    user: User,
    highlight_id: Annotated[int, Field(ge=1, description="The highlight's id (from add_highlight or recall).")],
    confirm: Annotated[bool, Field(description=(
        "true deletes; false (default) only shows what would be deleted."))] = False,
) -> dict:
    """Delete one of a persona's highlights by id (needs confirm=true)."""
    return _delete("highlight", db, user, highlight_id, confirm)


@tool(GROUP, result=Note)
def add_note(
    db,
    user: User,
    item_id: ItemId,
    text: Annotated[str, Field(min_length=1, max_length=signals.MAX_TEXT,
                               description="The note: what the persona took from the item.")],
) -> dict:
    """Write a note about an item for a persona; the item becomes experienced. Returns
    note_id."""
    r = signals.add_note(db, user, item_id, text, source=caller())
    u = require_user(db, r["user"])
    return ok(f"Saved note {r['note_id']} on item {r['item_id']}; {_describe(r['changes'])}.",
              **_where(db, u["id"], r["item_id"], r["changes"]), note_id=r["note_id"])


@tool(GROUP, result=NoteDeletion, destructive=True)
def delete_note(
    db,
    user: User,
    note_id: Annotated[int, Field(ge=1, description="The note's id (from add_note or recall).")],
    confirm: Annotated[bool, Field(description=(
        "true deletes; false (default) only shows what would be deleted."))] = False,
) -> dict:
    """Delete one of a persona's notes by id (needs confirm=true)."""
    return _delete("note", db, user, note_id, confirm)


# Destructive: on=false removes the favorite.
@tool(GROUP, result=Favorite, destructive=True, idempotent=True, title="Save for later (favorite)")
def favorite(
    db,
    user: User,
    item_id: ItemId,
    on: Annotated[bool, Field(description="true saves the item for later, false removes the favorite.")] = True,
) -> dict:
    """Save an item for later (or remove the favorite). A favorite alone puts the item in the
    'saved' facet, not in 'experienced'."""
    r = signals.favorite(db, user, item_id, on, source=caller())
    u = require_user(db, r["user"])
    if r["changed"]:
        state = SAVED if on else UNSAVED
    else:  # nothing to do: say what the item already was
        state = f"was already {SAVED}" if on else f"was not {SAVED}"
    return ok(f"Item {r['item_id']} {state}; {_describe(r['changes'])}.",
              **_where(db, u["id"], r["item_id"], r["changes"]), favorited=on, changed=r["changed"])


# Destructive: the reading progress recorded is removed.
@tool(GROUP, result=Unread, destructive=True, idempotent=True)
def mark_unread(db, user: User, item_id: ItemId) -> dict:
    """Take back 'read' for an item (an undo): its reading progress goes back to 0 so it
    leaves the experienced items unless the persona highlighted or noted it. Opens,
    highlights, notes and the favorite are kept."""
    r = signals.mark_unread(db, user, item_id, source=caller())
    u = require_user(db, r["user"])
    already = "" if r["changed"] else " (no reading progress was recorded)"
    return ok(f"Item {r['item_id']} is unread again for {r['user']}{already}; "
              f"{_describe(r['changes'])}.",
              **_where(db, u["id"], r["item_id"], r["changes"]), changed=r["changed"])


# --- reads -------------------------------------------------------------------------------

@tool(GROUP, result=Summary, read_only=True, idempotent=True, untrusted=True)
def corpus(db, user: User) -> dict:
    """Summary of a persona's corpus: revision, counts of experienced (read or captured) and
    saved-for-later items, and the top topics."""
    u = require_user(db, user)
    top = entities.top_entities(db, u["id"])  # outside the snapshot: the tag graph may persist itself
    with membership._read_snapshot(db):
        revision, _ = membership.revision_state(db, u["id"])
        counts = membership.facet_counts(db, u["id"])
    return ok(f"{u['name']}: {counts['experienced']} experienced, {counts['saved']} saved for later "
              f"(revision {revision}).",
              user=u["name"], revision=revision, experienced_count=counts["experienced"],
              saved_count=counts["saved"], top_entities=top)


@tool(GROUP, result=Items, read_only=True, idempotent=True, untrusted=True)
def corpus_items(
    db,
    user: User,
    facet: Facet = "experienced",
    limit: Annotated[int, Field(ge=1, le=500, description="Most items to return.")] = 50,
) -> dict:
    """A persona's corpus items in one facet, newest first."""
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
    return ok(f"{_n(total, facet + ' item')} ({label}) for {u['name']}; showing {len(items)}, newest first.",
              user=u["name"], facet=facet, items=items, total=total)


@tool(GROUP, result=Changes, read_only=True, idempotent=True)
def corpus_changes(
    db,
    user: User,
    since: Annotated[int, Field(ge=0, description=(
        "Changes after this revision (0 = from the start); pass the 'revision' of your last call."))] = 0,
    limit: Annotated[int, Field(ge=1, le=1000, description="Most changes to return.")] = 200,
) -> dict:
    """Changes to a persona's corpus after a revision: items added to or removed from each
    facet, the current revision, and truncated=true if older changes were trimmed."""
    u = require_user(db, user)
    r = membership.changes_since(db, u["id"], since, limit)
    note = (f" Some changes after that revision were trimmed from the log: {REREAD_ITEMS}."
            if r["truncated"] else "")
    more = f" More follow: {_more(r['next_since'])}." if r["has_more"] else ""
    return ok(f"{_n(len(r['changes']), 'change')} after revision {since}; current revision "
              f"{r['revision']}.{note}{more}",
              user=u["name"], since=since, **r)


@tool(GROUP, result=Ranked, read_only=True, idempotent=True, untrusted=True)
def corpus_ranked(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=200, description="Most items to return.")] = 10,
) -> dict:
    """A persona's experienced items by strength (0-1), strongest first: how much was read,
    highlights and notes, a favorite, re-reads."""
    u = require_user(db, user)
    items = strength.ranked(db, u["id"], limit)
    return ok(f"{_n(len(items), 'experienced item')} of {u['name']} by strength (0-1).",
              user=u["name"], items=items)


@tool(GROUP, result=Entities, read_only=True, idempotent=True, untrusted=True)
def corpus_entities(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=200, description="Most entities to return.")] = 20,
) -> dict:
    """Tags, topics and authors of the items a persona read or captured (kind: tag, topic,
    author), each with its items and first/last seen dates; most items first."""
    u = require_user(db, user)
    found = entities.entity_view(db, u["id"], limit=limit, items_per_entity=10)
    return ok(f"{len(found)} {'entity' if len(found) == 1 else 'entities'} (tags, topics, "
              f"authors) across {u['name']}'s experienced items.",
              user=u["name"], entities=found)


@tool(GROUP, result=Recall, read_only=True, idempotent=True, untrusted=True)
def recall(
    db,
    user: User,
    query: Annotated[str, Field(min_length=1, max_length=500, description=(
        "Words that must all appear in the item's title, summary, or the persona's "
        "highlights or notes on it."))],
    limit: Annotated[int, Field(ge=1, le=50, description="Most items to return.")] = 10,
) -> dict:
    """What has this persona learned about X? Searches what it read or captured (never items
    merely saved), across titles, summaries, highlights and notes."""
    u = require_user(db, user)
    items = entities.recall(db, u["id"], query, limit)
    return ok(f"Found {_n(len(items), 'item')} matching {query[:100]!r} among what {u['name']} "
              "read or captured.", user=u["name"], query=query, items=items)

