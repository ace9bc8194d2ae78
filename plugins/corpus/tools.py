"""The corpus tools: reading signals in, the persona's corpus out.

Each tool validates (at the tool boundary), reads or writes, and returns the envelope; a user
mistake raises :class:`hermes.errors.NotFound` / :class:`~hermes.errors.InvalidInput`, which
the tool boundary turns into ``ok: false`` and the HTTP routes (:mod:`.routes`, through
:meth:`hermes.contract.Tool.invoke`) into 404 / 400. A refused call writes nothing.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hermes.answers import ANSWER_BUDGET, FeedText, MaybeFeedText, fitting, left_out_words
from hermes.contract import Answer, Result, fail, ok, tool
from hermes.facekit.faces import Say, plural
from hermes.storage.records import require_items, require_user
from hermes.storage.transactions import write_transaction
from hermes.text.clip import clip
from hermes.tools import ItemId, ItemIds, User, caller

from . import entities, membership, signals, strength

GROUP = "corpus"
Facet = Annotated[
    Literal["experienced", "saved"],
    Field(description=("experienced: read, highlighted or noted; saved: saved for later, not read.")),
]
ConfirmDelete = bool


# The objects the answers are made of, typed for the output schema (a tool returns dicts).


class Change(Answer):
    """An item added to or removed from a facet, at a revision of the persona's corpus."""

    revision: int
    kind: Literal["added", "removed"]
    facet: Literal["experienced", "saved"]
    item_id: int


class CorpusItem(Answer):
    item_id: int
    title: FeedText
    url: str | None
    content_type: str | None
    published: str | None
    #: the corpus revision at which it entered the facet
    revision: int
    added: str | None


class StrengthParts(Answer):
    heard: float
    captures: float
    favorite: float
    reopens: float


class StrongItem(Answer):
    item_id: int
    title: FeedText
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


class TopEntity(Answer):
    entity: FeedText
    kind: str
    item_count: int


class EntityItem(Answer):
    item_id: int
    #: null for an item no longer stored (the view joins the archive)
    title: MaybeFeedText
    first_seen: str | None
    last_seen: str | None


class Entity(TopEntity):
    first_seen: str | None
    last_seen: str | None
    items: list[EntityItem]


class RecalledHighlight(Answer):
    highlight_id: int
    text: str
    note: str | None


class RecalledNote(Answer):
    note_id: int
    text: str


class RecalledItem(Answer):
    item_id: int
    title: FeedText
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


# What a reader can do next, in the words of each face (hermes.facekit.faces).
CONFIRM_DELETE = Say(
    mcp="call again with confirm=true to delete it",
    cli="there is no CLI command to delete it; use the delete tool over MCP",
    web="press Delete again to delete it",
)
REREAD_ITEMS = Say(
    mcp="re-read corpus_items for the full state",
    cli="`hermes corpus items USER` shows the full state",
    web="the Corpus page shows the full state",
)
# A favorite is "saved" for a person: the commands are `hermes save` / `unsave`, the button Save.
SAVED = Say(mcp="favorited", cli="saved", web="saved")
UNSAVED = Say(mcp="unfavorited", cli="unsaved", web="unsaved")


def _more(next_since: int) -> Say:
    return Say(mcp=f"call again with since={next_since}", cli=f"rerun with --since {next_since}", web="press More")


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
    #: items left out to keep the answer within its budget
    left_out: int = 0


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
    #: items left out to keep the answer within its budget
    left_out: int = 0


def _where(db, user_id: int, item_id: int, changes: list[dict]) -> dict:
    """Where the item stands after a write: its facet and the persona's revision."""
    facet = db.execute(
        "SELECT facet FROM corpus_membership WHERE user_id = ? AND item_id = ?", [user_id, item_id]
    ).fetchone()
    revision, _ = membership.revision_state(db, user_id)
    return {"item_id": item_id, "facet": facet[0] if facet else None, "revision": revision, "changes": changes}


def _describe(changes: list[dict]) -> str:
    if not changes:
        return "membership unchanged"
    return "; ".join(
        f"{c['kind']} {'to' if c['kind'] == 'added' else 'from'} {c['facet']} (revision {c['revision']})"
        for c in changes
    )


# --- writes ------------------------------------------------------------------------------


@tool(GROUP, result=Progress)
def record_progress(
    db,
    user: User,
    item_id: ItemId,
    fraction: Annotated[float, Field(ge=0, le=1, description=("0 to 1, the highest kept; 0.3+: experienced."))],
    new_session: Annotated[bool, Field(description=("false: the same reading goes on."))] = True,
) -> dict:
    """Record how much of an item a persona read or played (mark_read: all of it)."""
    r = signals.record_progress(db, user, item_id, fraction, new_session=new_session, source=caller())
    u = require_user(db, r["user"])
    return ok(
        f"Recorded {r['fraction']:.0%} of item {r['item_id']} for {r['user']} "
        f"(max {r['max_fraction']:.0%}, {r['reopens']} re-reads); {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        max_fraction=r["max_fraction"],
        reopens=r["reopens"],
    )


@tool(GROUP, result=Highlight)
def add_highlight(
    db,
    user: User,
    item_id: ItemId,
    text: Annotated[str, Field(min_length=1, max_length=signals.MAX_TEXT, description="The passage, quoted.")],
    note: Annotated[str | None, Field(max_length=signals.MAX_TEXT, description="A comment on it.")] = None,
) -> dict:
    """Keep a passage of an item (and a comment) for a persona; the item becomes experienced."""
    r = signals.add_highlight(db, user, item_id, text, note, source=caller())
    u = require_user(db, r["user"])
    return ok(
        f"Saved highlight {r['highlight_id']} on item {r['item_id']}; {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        highlight_id=r["highlight_id"],
    )


def _delete(what: str, db, user, row_id, confirm) -> dict:
    key = f"{what}_id"
    if not confirm:
        row = (signals.get_highlight if what == "highlight" else signals.get_note)(db, user, row_id)
        u = require_user(db, user)
        # The seed's dry run: an error (nothing was done) naming exactly what would be lost.
        return fail(
            f"Would delete {what} {row['id']} on item {row['item_id']}: {row['text'][:200]!r}. "
            f"Nothing was deleted; {CONFIRM_DELETE}.",
            **_where(db, u["id"], row["item_id"], []),
            **{key: row["id"]},
            text=row["text"],
            deleted=False,
        )
    fn = signals.delete_highlight if what == "highlight" else signals.delete_note
    r = fn(db, user, row_id, source=caller())
    u = require_user(db, r["user"])
    return ok(
        f"Deleted {what} {r[key]} on item {r['item_id']}; {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        **{key: r[key]},
        text=r["text"],
        deleted=True,
    )


@tool(GROUP, result=HighlightDeletion, destructive=True)
def delete_highlight(
    db,
    user: User,
    highlight_id: Annotated[int, Field(ge=1)],
    confirm: ConfirmDelete = False,
) -> dict:
    """Delete a persona's highlight (ids: add_highlight, recall). Needs confirm=true."""
    return _delete("highlight", db, user, highlight_id, confirm)


@tool(GROUP, result=Note)
def add_note(
    db,
    user: User,
    item_id: ItemId,
    text: Annotated[
        str, Field(min_length=1, max_length=signals.MAX_TEXT, description="What the persona took from it.")
    ],
) -> dict:
    """Write a persona's note on an item; the item becomes experienced."""
    r = signals.add_note(db, user, item_id, text, source=caller())
    u = require_user(db, r["user"])
    return ok(
        f"Saved note {r['note_id']} on item {r['item_id']}; {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        note_id=r["note_id"],
    )


@tool(GROUP, result=NoteDeletion, destructive=True)
def delete_note(
    db,
    user: User,
    note_id: Annotated[int, Field(ge=1)],
    confirm: ConfirmDelete = False,
) -> dict:
    """Delete a persona's note (ids: add_note, recall). Needs confirm=true."""
    return _delete("note", db, user, note_id, confirm)


# Not destructive (hermes.contract.Tool.destructive): on=true saves again what on=false unsaved.
@tool(GROUP, result=Favorite, idempotent=True, title="Save for later")
def favorite(
    db,
    user: User,
    item_id: ItemId,
    on: Annotated[bool, Field(description="false: no longer saved.")] = True,
) -> dict:
    """Save an archive item to read later: a bookmark, not a like (on=false unsaves). Others:
    save_item."""
    r = signals.favorite(db, user, item_id, on, source=caller())
    u = require_user(db, r["user"])
    if r["changed"]:
        state = SAVED if on else UNSAVED
    else:  # nothing to do: say what the item already was
        state = f"was already {SAVED}" if on else f"was not {SAVED}"
    return ok(
        f"Item {r['item_id']} {state}; {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        favorited=on,
        changed=r["changed"],
    )


class ReadItem(Answer):
    item_id: int = 0
    #: false when the item was read in full already
    changed: bool = False
    facet: str | None = None


class Read(Progress):
    #: false when the item was read in full already (nothing changed)
    changed: bool = False
    #: for a list of item ids: each one, in the order given
    items: list[ReadItem] = []


# One write path: record_progress's, with fraction 1 in the reading already counted (not a
# new opening), so a second call changes nothing.
@tool(GROUP, result=Read, idempotent=True)
def mark_read(db, user: User, item_id: ItemIds) -> dict:
    """Mark an item (or a list) read in full (record_progress, fraction=1): it becomes
    experienced."""
    u = require_user(db, user)
    if isinstance(item_id, list):
        return _read_many(db, u, list(dict.fromkeys(item_id)))
    changed, r = _read_one(db, u, item_id)
    state = "is read" if changed else "was already read"
    return ok(
        f"Item {r['item_id']} {state} for {r['user']}; {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        max_fraction=r["max_fraction"],
        reopens=r["reopens"],
        changed=changed,
    )


def _read_one(db, u: dict, item_id: int) -> tuple[bool, dict]:
    before = db.execute(
        "SELECT max_fraction FROM corpus_progress WHERE user_id = ? AND item_id = ?", [u["id"], item_id]
    ).fetchone()
    r = signals.record_progress(db, u["name"], item_id, 1.0, new_session=False, source=caller())
    return before is None or before[0] < 1.0, r


def _read_many(db, u: dict, item_ids: list[int]) -> dict:
    """Several items read in one transaction: all of them, or none when one id is unknown
    (the refusal names every such id)."""
    require_items(db, item_ids, "nothing was marked read")
    with write_transaction(db):
        done = [(i, *_read_one(db, u, i)) for i in item_ids]
    marks = ",".join("?" * len(item_ids))
    facets = dict(
        db.execute(
            f"SELECT item_id, facet FROM corpus_membership WHERE user_id = ? AND item_id IN ({marks})",
            [u["id"], *item_ids],
        )
    )
    items = [{"item_id": i, "changed": changed, "facet": facets.get(i)} for i, changed, _ in done]
    fresh = sum(1 for i in items if i["changed"])
    revision, _ = membership.revision_state(db, u["id"])
    return ok(
        f"Marked {plural(fresh, 'item')} read for {u['name']}"
        + (f"; {plural(len(items) - fresh, 'item')} already read" if fresh < len(items) else "")
        + ".",
        items=items,
        changed=bool(fresh),
        revision=revision,
    )


# Not destructive: mark_read reads it again (its opens, highlights, notes and saving are kept;
# only a partial fraction, say 0.4, comes back as 1).
@tool(GROUP, result=Unread, idempotent=True)
def mark_unread(db, user: User, item_id: ItemId) -> dict:
    """Undo 'read': the item's reading progress goes back to 0 (highlights, notes, saving
    kept)."""
    r = signals.mark_unread(db, user, item_id, source=caller())
    u = require_user(db, r["user"])
    already = "" if r["changed"] else " (no reading progress was recorded)"
    return ok(
        f"Item {r['item_id']} is unread again for {r['user']}{already}; {_describe(r['changes'])}.",
        **_where(db, u["id"], r["item_id"], r["changes"]),
        changed=r["changed"],
    )


# --- reads -------------------------------------------------------------------------------


@tool(GROUP, result=Summary, read_only=True, idempotent=True, untrusted=True)
def corpus(db, user: User) -> dict:
    """A persona's corpus in numbers: read (experienced) and saved items, top topics."""
    u = require_user(db, user)
    top = entities.top_entities(db, u["id"])  # outside the snapshot: the tag graph may persist itself
    with membership._read_snapshot(db):
        revision, _ = membership.revision_state(db, u["id"])
        counts = membership.facet_counts(db, u["id"])
    return ok(
        f"{u['name']}: {counts['experienced']} experienced, {counts['saved']} saved for later (revision {revision}).",
        user=u["name"],
        revision=revision,
        experienced_count=counts["experienced"],
        saved_count=counts["saved"],
        top_entities=top,
    )


@tool(GROUP, result=Items, read_only=True, idempotent=True, untrusted=True)
def corpus_items(
    db,
    user: User,
    facet: Facet = "experienced",
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
) -> dict:
    """The items a persona read (experienced) or saved, newest first."""
    u = require_user(db, user)
    rows = db.execute(
        """SELECT m.item_id, coalesce(i.title, ''), i.url, i.content_type, i.published, m.revision, m.added
           FROM corpus_membership m LEFT JOIN items i ON i.id = m.item_id
           WHERE m.user_id = ? AND m.facet = ? ORDER BY m.revision DESC LIMIT ?""",
        [u["id"], facet, limit],
    ).fetchall()
    total = membership.facet_counts(db, u["id"])[facet]
    items = [
        {
            "item_id": r[0],
            "title": r[1],
            "url": r[2],
            "content_type": r[3],
            "published": r[4],
            "revision": r[5],
            "added": r[6],
        }
        for r in rows
    ]
    label = "read or captured" if facet == "experienced" else "saved for later, not yet read"
    kept = fitting(items, ANSWER_BUDGET, rest=800)
    cut = f" {left_out_words(len(items) - kept, ANSWER_BUDGET)} (the oldest)." if kept < len(items) else ""
    return ok(
        f"{plural(total, facet + ' item')} ({label}) for {u['name']}; showing {kept}, newest first.{cut}",
        user=u["name"],
        facet=facet,
        items=items[:kept],
        total=total,
        left_out=len(items) - kept,
    )


@tool(GROUP, result=Changes, read_only=True, idempotent=True)
def corpus_changes(
    db,
    user: User,
    since: Annotated[int, Field(ge=0, description="The last call's revision (0: from the start).")] = 0,
    limit: Annotated[int, Field(ge=1, le=1000)] = 200,
) -> dict:
    """What entered or left a persona's read and saved items after a revision (to sync)."""
    u = require_user(db, user)
    r = membership.changes_since(db, u["id"], since, limit)
    note = f" Some changes after that revision were trimmed from the log: {REREAD_ITEMS}." if r["truncated"] else ""
    more = f" More follow: {_more(r['next_since'])}." if r["has_more"] else ""
    return ok(
        f"{plural(len(r['changes']), 'change')} after revision {since}; current revision {r['revision']}.{note}{more}",
        user=u["name"],
        since=since,
        **r,
    )


@tool(GROUP, result=Ranked, read_only=True, idempotent=True, untrusted=True)
def corpus_ranked(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=200)] = 10,
) -> dict:
    """A persona's read items by strength (0-1: read, highlights, notes, saved, re-reads)."""
    u = require_user(db, user)
    items = strength.ranked(db, u["id"], limit)
    return ok(
        f"{plural(len(items), 'experienced item')} of {u['name']} by strength (0-1).", user=u["name"], items=items
    )


@tool(GROUP, result=Entities, read_only=True, idempotent=True, untrusted=True)
def corpus_entities(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
) -> dict:
    """The tags, topics and authors of what a persona read, with their items."""
    u = require_user(db, user)
    found = entities.entity_view(db, u["id"], limit=limit, items_per_entity=10)
    return ok(
        f"{len(found)} {'entity' if len(found) == 1 else 'entities'} (tags, topics, "
        f"authors) across {u['name']}'s experienced items.",
        user=u["name"],
        entities=found,
    )


@tool(GROUP, result=Recall, read_only=True, idempotent=True, untrusted=True)
def recall(
    db,
    user: User,
    query: Annotated[str, Field(min_length=1, max_length=500, description="Words that must all occur.")],
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> dict:
    """What has the persona learned about X? Searches what it read or captured: titles,
    summaries, its highlights and notes."""
    u = require_user(db, user)
    items = [_recalled(i) for i in entities.recall(db, u["id"], query, limit)]
    kept = fitting(items, ANSWER_BUDGET, rest=1000)
    cut = (
        f" {left_out_words(len(items) - kept, ANSWER_BUDGET)}: more words narrow the search."
        if kept < len(items)
        else ""
    )
    return ok(
        f"Found {plural(len(items), 'item')} matching {query[:100]!r} among what {u['name']} read or captured.{cut}",
        user=u["name"],
        query=query,
        items=items[:kept],
        left_out=len(items) - kept,
    )


#: what recall shows of one item: its first highlights and notes, each clipped (an item may
#: hold many of 10,000 characters; the budget must hold at least one item whole)
RECALLED_ROWS, RECALLED_CHARS = 10, 1000


def _recalled(item: dict) -> dict:
    def short(rows):
        return [
            {**r, **{k: clip(r[k], RECALLED_CHARS) for k in ("text", "note") if r.get(k)}} for r in rows[:RECALLED_ROWS]
        ]

    return {**item, "highlights": short(item["highlights"]), "notes": short(item["notes"])}
