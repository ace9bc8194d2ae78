"""The persona tool group: one function per tool, made a tool by :func:`hermes.contract.tool`.

Every tool returns the envelope and never raises for a user mistake (an unknown persona, a
bad value): the tool boundary turns those into ``ok: false`` with the tool's success keys
present and empty. Nothing is written on a refused call.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote

from pydantic import Field

from hermes.answers import ANSWER_BUDGET, fitting, left_out_words
from hermes.arguments import refuse_file_path, spelled
from hermes.contract import NAME_MAX, Result, fail, failure, ok, tool
from hermes.errors import HermesError, InvalidInput
from hermes.facekit.faces import CREATE_PERSONA, Say, plural, typed
from hermes.ingest.refresher import new_items
from hermes.ranking.interests import split_unwanted
from hermes.storage.clicks import ClickSource as StoredClickSource
from hermes.storage.clicks import click_counts, click_counts_by_persona
from hermes.storage.records import file_of, list_personas, require_user
from hermes.tools import User, caller

from . import bootstrap as _bootstrap
from . import library, personas, search, status
from .answers import (
    AtOdds,
    Brief,
    Loss,
    NewEntry,
    Persona,
    RecentClick,
    RefusedEntry,
    SearchHit,
    TagCount,
    Tally,
    TypeCount,
    UserRow,
)

GROUP = "persona"

# What a reader can do next, in the words of each face (hermes.facekit.faces).
NEW_TEXT = Say(
    mcp="give the new text, or clear=true to forget the interests",
    cli="give the new text",
    web="write what this persona wants to read",
)


def after_create(name: str) -> str:
    """What to do with a new persona, in two pieces of advice: under ``hermes serve --tools
    persona`` the first still names bootstrap_persona, the second the feed's commands."""
    warm = Say(
        mcp="Next: bootstrap_persona to warm it from its interests",
        cli=f"Next: `hermes persona bootstrap {typed(name)}` warms it from its interests",
        web="Its feed is below",
    )
    train = Say(
        mcp="or list_feed / search_feed and record_feedback",
        cli=f"`hermes feed {typed(name)} -i` trains it with single keys",
        web="✓ and ✗ teach it",
    )
    return f"{warm}; {train}"


USE_TAGS = Say(
    mcp="pick the ones that fit and pass them (in your own words) as interests to create_persona or update_persona",
    cli="pick the ones that fit and write them (in your own words) into --interests of "
    "`hermes persona create` or `hermes persona update`",
    web="pick the ones that fit and write them into the interests",
)
OLD_TEXT = Say(mcp=" (previous_interests holds the old text)", cli="", web="")
SEE_LIKED_TAGS = Say(mcp=" (see liked_tags)", cli="", web="")
TAKE_BACK_RATING = Say(
    mcp="if those dislikes were not meant, take them back with remove_feedback, or say in the "
    "interests text what you do not want",
    cli="if those dislikes were not meant, take them back with `hermes unrate PERSONA ITEM_ID`, "
    "or say in the interests what you do not want",
    web="if those dislikes were not meant, find the items with Search and press Unrate, or say "
    "in the interests what you do not want",
)


def not_wanted(name: str, parts: list[str]) -> str:
    """The sentence that says which parts of an interests text the ranking leaves out
    (:func:`hermes.ranking.interests.split_unwanted`), and how to see less of a topic; ""
    when there are none. Embedded as interests, "I do not care about weather" pulled weather
    up."""
    if not parts:
        return ""
    quoted = "; ".join(f"“{p}”" for p in parts)
    how = Say(
        mcp="record_feedback with liked=false on such an item pushes its kind down",
        cli=f"`hermes dislike {typed(name)} ID` on such an item pushes its kind down",
        web="✗ on such an item pushes its kind down",
    )
    return (
        f" Not ranked as interests, since they say what not to show: {quoted}; the "
        f"ranking reads what the text asks for, and {how}."
    )


def show_effect(name: str) -> Say:
    return Say(
        mcp="profile_status shows the effect",
        cli=f"`hermes persona show {typed(name)}` shows the effect",
        web="the feed is ranked with them now",
    )


def after_rename(old: str, new: str) -> Say:
    """What still names the persona by its old name. Hermes keys everything it owns by id
    (a folder kept with `hermes corpus sync` too: it records the id); these live outside
    hermes, so it cannot follow them."""
    feed = f"/feed/{quote(old, safe='')}.atom"
    return Say(
        mcp=f"use {new!r} from now on; tell the person that web bookmarks and the Atom feed "
        f"{feed} name {old!r} and need the new name",
        cli=f"scripts, web bookmarks and a feed reader subscribed to {feed} name {old!r} and need the new name",
        web=f"bookmarks and a feed reader subscribed to {feed} name {old!r} and need the new name",
    )


NOT_CONFIRMED = Say(mcp="confirm is false", cli="no --yes", web="not confirmed")


def _confirm_how(tool: str, of_source: str | None = None) -> Say:
    same = f" (and source={of_source!r})" if of_source else ""
    return Say(
        mcp=f"Call {tool} again with confirm=true{same} to do it.",
        cli="Rerun with --yes to do it.",
        web="Press the button again to confirm.",
    )


NewName = Annotated[
    str,
    Field(
        description="Short, unique: letters, digits, spaces, _.@+-",
        min_length=1,
        max_length=NAME_MAX,
    ),
]
Interests = Annotated[
    str,
    Field(
        description="What it wants to read, e.g. 'graph neural networks, protein folding'.",
        min_length=1,
        max_length=personas.INTERESTS_MAX,
    ),
]
Confirm = bool
ClickSource = Annotated[
    StoredClickSource | None,
    Field(
        description="Only this source's: bootstrap (library imports, bootstrap_persona), ui "
        "(web, CLI), agent (MCP); omitted: all.",
    ),
]


class Users(Result):
    users: list[UserRow] = []


class PersonaResult(Result):
    persona: Persona = {}
    #: false when the same call had made it already (nothing changed)
    created: bool = False


class Proposal(Result):
    tags: list[TagCount] = []
    content_types: list[TypeCount] = []
    suggested_interests: str = ""


class PersonaUpdate(Result):
    persona: Persona = {}
    changed: bool = False


class ProfileStatus(Result):
    user: str = ""
    interests: str = ""
    clicks: int = 0
    likes: int = 0
    dislikes: int = 0
    clicks_by_source: dict[str, int] = {}
    blend_weight: float = 0.0
    blend: str = ""
    liked_tags: list[Tally] = []
    disliked_tags: list[Tally] = []
    liked_topics: list[Tally] = []
    disliked_topics: list[Tally] = []
    liked_types: list[Tally] = []
    disliked_types: list[Tally] = []
    liked_sources: list[Tally] = []
    disliked_sources: list[Tally] = []
    classifier_active: bool = False
    classifier_reason: str = ""
    recent_clicks: list[RecentClick] = []
    #: disliked tags and topics the interests text names: the clicks contradict the text
    disliked_but_asked_for: list[AtOdds] = []


class SearchResults(Result):
    results: list[SearchHit] = []
    count: int = 0
    #: results left out to keep the answer within its budget
    left_out: int = 0


class Deletion(Result):
    deleted: Loss = {}
    would_delete: Loss = {}
    #: what is (or would be) deleted, in words ("persona 'ann', 3 clicks (2 likes, 1 dislike)")
    loss: str = ""


class Bootstrap(Result):
    liked: list[Brief] = []
    disliked: list[Brief] = []
    #: true when every click the persona has is from bootstrap: nothing was done again
    already_warmed: bool = False


@tool(GROUP, result=Users, read_only=True, idempotent=True, title="List personas")
def list_users(db) -> dict:
    """Every persona with its interests and like and dislike counts."""
    counts = click_counts_by_persona(db)
    none = {"clicks": 0, "likes": 0, "dislikes": 0}
    users = [
        {"name": u["name"], "interests": u["interests"], "created": u["created"], **counts.get(u["id"], none)}
        for u in list_personas(db)
    ]
    where = file_of(db)
    if not users:
        return ok(f"no personas yet in {where}; {CREATE_PERSONA}", users=[])
    return ok(f"{plural(len(users), 'persona')} in {where}", users=users)


# Idempotent: a client retrying after a time-out finds its persona made (ok, created: false);
# only a different text for a taken name is refused (docs/plugin_hooks.md, "isError").
@tool(GROUP, result=PersonaResult, idempotent=True)
def create_persona(db, name: NewName, interests: Interests) -> dict:
    """Create a persona: a unique short name and its interests in plain words. The same call
    again is ok."""
    refuse_file_path("interests", interests)
    found = _same_persona(db, name, interests)
    if found is not None:
        left_out = split_unwanted(found["interests"])[1]
        return ok(
            f"persona {found['name']!r} already exists with exactly these interests; "
            f"nothing changed. {after_create(found['name'])}",
            persona={"name": found["name"], "interests": found["interests"], "not_wanted": left_out},
            created=False,
        )
    user = personas.create_persona(db, name, interests)
    left_out = split_unwanted(user["interests"])[1]
    return ok(
        f"created persona {user['name']!r}.{not_wanted(user['name'], left_out)} {after_create(user['name'])}",
        persona={"name": user["name"], "interests": user["interests"], "not_wanted": left_out},
        created=True,
    )


def _same_persona(db, name, interests) -> dict | None:
    """The persona this create_persona call already made: its name (ignoring case) and
    exactly its interests text; None otherwise, and the create decides (or refuses)."""
    try:
        taken = personas.same_name(db, personas.validate_name(name))
        if taken is None:
            return None
        user = require_user(db, taken)
        return user if user["interests"] == personas.validate_interests(interests) else None
    except HermesError:  # a bad name or text: the create refuses it in its own words
        return None


@tool(GROUP, result=Proposal, read_only=True, idempotent=True, untrusted=True, title="Common tags")
def propose_interests(
    db,
    limit: Annotated[int, Field(ge=1, le=100)] = 12,
) -> dict:
    """The archive's most common tags and its content types: help for writing interests."""
    tags = [
        {"tag": tag, "count": n}
        for tag, n in db.execute(
            """SELECT lower(j.value) AS tag, count(DISTINCT items.id) AS n
               FROM items, json_each(items.tags) AS j
               WHERE j.type = 'text' AND trim(j.value) != ''
               GROUP BY tag ORDER BY n DESC, tag LIMIT ?""",
            [limit],
        )
    ]
    types = [
        {"content_type": t, "count": n}
        for t, n in db.execute("SELECT content_type, count(*) FROM items GROUP BY content_type ORDER BY 2 DESC, 1")
    ]
    if not tags:
        message = f"the archive has no tagged items yet, so write the interests in your own words; {new_items(db)}"
        return ok(message, tags=[], content_types=types, suggested_interests="")
    suggestion = ", ".join(t["tag"] for t in tags[:8])
    return ok(
        f"the {plural(len(tags), 'most common tag')} in the archive; {USE_TAGS}",
        tags=tags,
        content_types=types,
        suggested_interests=suggestion,
    )


# Not destructive (hermes.contract.Tool.destructive): the answer returns the old text
# (previous_interests), which a second call puts back; the clicks are kept.
@tool(GROUP, result=PersonaUpdate, idempotent=True)
def update_persona(
    db,
    name: User,
    interests: Annotated[str, Field(description="The new text.", max_length=personas.INTERESTS_MAX)] = "",
    clear: Annotated[bool, Field(description="true forgets the interests.")] = False,
) -> dict:
    """Replace a persona's interests text, or forget it (clear=true); the old text is returned
    and clicks are kept."""
    # "" is no text given (a plain string keeps maxLength where a form reads it, not in anyOf)
    if clear and interests.strip():
        raise InvalidInput(
            f"update_persona takes either {spelled('interests')} (the new text) "
            f"or {spelled('clear')}=true (forget the interests), not both"
        )
    if not clear and not interests.strip():
        raise InvalidInput(f"{spelled('interests')} is empty; {NEW_TEXT}")
    refuse_file_path("interests", interests)
    user, previous = personas.update_interests(db, name, None if clear else interests)
    left_out = split_unwanted(user["interests"])[1]
    payload = {
        "name": user["name"],
        "interests": user["interests"],
        "previous_interests": previous,
        "not_wanted": left_out,
    }
    if previous == user["interests"]:
        return ok(
            f"persona {user['name']!r} already has "
            + ("no interests text" if clear else "exactly these interests")
            + "; nothing changed",
            persona=payload,
            changed=False,
        )
    if clear:
        return ok(
            f"forgot the interests of {user['name']!r}{OLD_TEXT}: the ranking learns from its "
            f"{plural(click_counts(db, user['id'])['clicks'], 'click')} alone "
            "until it has interests again",
            persona=payload,
            changed=True,
        )
    return ok(
        f"updated the interests of {user['name']!r}; the next ranking uses them"
        f"{OLD_TEXT}.{not_wanted(user['name'], left_out)}".rstrip("."),
        persona=payload,
        changed=True,
    )


# Not destructive (hermes.contract.Tool.destructive): nothing is lost, and renaming it back
# restores what names it outside hermes (the answer says what, see after_rename). A second
# call changes nothing more, so it is idempotent.
@tool(GROUP, result=PersonaUpdate, idempotent=True)
def rename_persona(db, name: User, new_name: NewName) -> dict:
    """Rename a persona, keeping all it has."""
    user, previous = personas.rename_persona(db, name, new_name)
    payload = {"name": user["name"], "interests": user["interests"], "previous_name": previous}
    if previous == user["name"]:
        return ok(f"persona {previous!r} already has this name; nothing changed", persona=payload, changed=False)
    clicks = click_counts(db, user["id"])["clicks"]
    # Asked of the database: its lower() is the one lookups use (it folds ASCII only).
    message = (
        f"renamed persona {previous!r} to {user['name']!r}; its interests, "
        f"{plural(clicks, 'click')} and corpus are kept."
    )
    if personas.same_name(db, previous) != user["name"]:  # else lookups still find the old name
        message += f" {after_rename(previous, user['name']).sentence()}."
    return ok(message, persona=payload, changed=True)


@tool(GROUP, result=ProfileStatus, read_only=True, idempotent=True, untrusted=True, title="What a persona learned")
def profile_status(db, user: User) -> dict:
    """What a persona taught the ranking: clicks and their weight, rated tags, topics, types
    and sources, the classifier's state."""
    s = status.profile_status(db, user)
    # Counted, not listed: tags are feed text (untrusted), kept in the liked_tags payload.
    liked = f"{len(s['liked_tags'])}{SEE_LIKED_TAGS}" if s["liked_tags"] else "none yet"
    classifier = s["classifier_reason"] if s["classifier_active"] else f"inactive: {s['classifier_reason']}"
    message = (
        f"{s['user']}: {plural(s['clicks'], 'click')} ({plural(s['likes'], 'like')}, "
        f"{plural(s['dislikes'], 'dislike')}); "
        f"{s['blend']}; liked tags: {liked}; classifier {classifier}"
    )
    if s["disliked_but_asked_for"]:
        n = len(s["disliked_but_asked_for"])
        message += (
            f". {plural(n, 'tag or topic')} the interests text asks for "
            f"{'was' if n == 1 else 'were'} disliked (disliked_but_asked_for): the clicks weigh "
            f"{round(100 * s['blend_weight'])}% and pull against the text; "
            f"{TAKE_BACK_RATING}."
        )
    return ok(message, **s)


# Read-only for the user's data; ranking may persist the interests-vector cache.
@tool(GROUP, result=SearchResults, read_only=True, idempotent=True, untrusted=True, title="Search the archive")
def search_feed(
    db,
    user: User,
    query: Annotated[
        str,
        Field(
            description="All must occur ('graph' finds 'graphs'); may be empty with a filter.",
            max_length=search.QUERY_MAX,
        ),
    ],
    tag: Annotated[
        str | None,
        Field(
            description="Only this tag, e.g. 'cs.LG'.",
            max_length=200,
        ),
    ] = None,
    content_type: Annotated[
        str | None,
        Field(
            description="Only this type: paper, podcast…",
            max_length=50,
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=search.SEARCH_MAX)] = 10,
    author: Annotated[
        str | None,
        Field(
            description="Only by this person ('Furtak', 'L. Furtak').",
            max_length=200,
        ),
    ] = None,
) -> dict:
    """Search the whole archive (any age) by words in title or summary, or by tag, type or
    author; by the persona's score among the results."""
    results, message = search.search(db, user, query, tag, content_type, limit, author=author)
    kept = fitting(results, ANSWER_BUDGET, rest=1000)
    if kept < len(results):
        message += (
            f" {left_out_words(len(results) - kept, ANSWER_BUDGET)} (the lowest ranked): "
            "more words or a filter narrow the search."
        )
    return ok(message, results=results[:kept], count=kept, left_out=len(results) - kept)


def _nonzero(rows: dict[str, int]) -> dict[str, int]:
    return {table: n for table, n in rows.items() if n or table == "clicks"}


def destroy(db, name, confirm, *, persona: bool, of_source: str | None = None) -> dict:
    """``delete_persona`` (``persona=True``) or ``reset_feedback`` (with ``of_source``: of that
    source's clicks only), for every face (the confirmation advice and the signal source follow
    the face: :mod:`hermes.facekit.faces`)."""
    try:
        return _destroy(db, name, confirm, persona=persona, of_source=of_source)
    except HermesError as exc:
        return failure(exc, {"deleted": {}, "would_delete": {}, "loss": ""})


def _destroy(db, name, confirm, *, persona: bool, of_source: str | None) -> dict:
    user, tables, counts, clicks = personas.plan(db, name, persona=persona, of_source=of_source)
    loss = personas.describe_loss(user, counts, clicks, persona=persona, of_source=of_source)
    would = {"persona": user["name"] if persona else None, **clicks, "rows": _nonzero(counts)}
    tool = "delete_persona" if persona else "reset_feedback"
    if not persona and not clicks["clicks"] and not counts["items"]:
        # nothing to take back is no refusal and needs no confirmation (a trial's second
        # "reset --source bootstrap" was told to rerun with --yes to delete 0 clicks)
        none = f"no {of_source} clicks" if of_source else "no clicks"
        nothing = {"persona": None, **clicks, "rows": {"clicks": 0}}
        return ok(
            f"Persona {user['name']!r} has {none}: nothing to reset.", deleted=nothing, would_delete=nothing, loss=""
        )
    kept = "" if persona else " " + _capital(personas.describe_kept(db, user, of_source=of_source)) + "."
    if not confirm:
        return fail(
            f"nothing changed ({NOT_CONFIRMED}): this would permanently delete {loss}.{kept} "
            f"{_confirm_how(tool, of_source)}",
            deleted={},
            would_delete=would,
            loss=loss,
        )
    removed = personas.delete_owned(db, user, tables, persona=persona, source=caller(), of_source=of_source)
    deleted = {"persona": user["name"] if persona else None, **clicks, "rows": _nonzero(removed)}
    return ok(f"Deleted {loss}.{kept}", deleted=deleted, would_delete={}, loss=loss)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@tool(GROUP, result=Deletion, destructive=True, idempotent=True)
def delete_persona(db, name: User, confirm: Confirm = False) -> dict:
    """Delete a persona and everything it has. Needs confirm=true."""
    return destroy(db, name, confirm, persona=True)


@tool(GROUP, result=Deletion, destructive=True, idempotent=True, title="Reset feedback")
def reset_feedback(db, name: User, confirm: Confirm = False, source: ClickSource = None) -> dict:
    """Delete a persona's likes and dislikes (or one source's), keeping it and its interests.
    Needs confirm=true."""
    return destroy(db, name, confirm, persona=False, of_source=source)


@tool(GROUP, result=Bootstrap, idempotent=True, untrusted=True, title="Warm up a persona")
def bootstrap_persona(
    db,
    name: User,
    n_like: Annotated[int, Field(ge=0, le=_bootstrap.BOOTSTRAP_MAX)] = 5,
    n_dislike: Annotated[int, Field(ge=0, le=_bootstrap.BOOTSTRAP_MAX)] = 5,
) -> dict:
    """Warm up a persona with no feedback: like the items closest to its interests, dislike the
    farthest. Again: nothing changes."""
    warmed = _bootstrap.warmed(db, name) if n_like + n_dislike else 0
    if warmed:
        who = require_user(db, name)["name"]
        return ok(
            f"{who!r} is already warmed: its {plural(warmed, 'click')} all come from "
            f"bootstrap; nothing changed. {show_effect(who).sentence()}; "
            f"{_bootstrap.undo(who)}.",
            liked=[],
            disliked=[],
            already_warmed=True,
        )
    done = _bootstrap.bootstrap_persona(db, name, n_like, n_dislike)
    who, n_liked, n_disliked = done["user"], len(done["liked"]), len(done["disliked"])
    fewer = [
        f"{n_liked} of {n_like} likes" if n_liked < n_like else "",
        f"{n_disliked} of {n_dislike} dislikes" if n_disliked < n_dislike else "",
    ]
    fewer = " and ".join(filter(None, fewer))
    did = [
        f"liked the {plural(n_liked, 'item')} closest to them" if n_like else "",
        f"disliked the {plural(n_disliked, 'item')} farthest" if n_dislike else "",
    ]
    return ok(
        f"Warmed {who!r} from its interests: "
        + " and ".join(filter(None, did))
        + (f" ({fewer}: only strong or good matches are liked and only items with no match disliked)" if fewer else "")
        + " (click source "
        f"'bootstrap'; {_bootstrap.listed()}). Rated items leave the unread feed "
        f"({_bootstrap.see_rated(who)}); a dislike also counts against the item's source and "
        f"tags, so their other items rank lower. {show_effect(who).sentence()}; "
        f"{_bootstrap.undo(who)}.",
        liked=done["liked"],
        disliked=done["disliked"],
    )


class LibraryImport(Result):
    format: str = ""
    entries: int = 0
    matched: int = 0
    matched_by: dict[str, int] = {}
    created: int = 0
    liked: int = 0
    already_liked: int = 0
    kept_dislikes: int = 0
    duplicates: int = 0
    n_refused: int = 0
    #: the first few refused entries: ``line``, ``key``, ``reason``
    refused: list[RefusedEntry] = []
    n_unmatched: int = 0
    #: the first few entries not in the archive (stored as items of their own), with why
    unmatched: list[NewEntry] = []


def _listed_new(n: int) -> Say:
    return Say(mcp=f"unmatched lists the first {n}", cli="listed below", web="listed below")


#: how many refused and unmatched entries an answer lists (the counts are always complete)
LISTED = 10
_SEE_REFUSED = Say(mcp=": see refused", cli="", web="")
HOW = {"arxiv": "arXiv id", "doi": "DOI", "url": "URL", "title": "title"}


# Idempotent: a second import of the same file finds every entry again and adds nothing.
@tool(GROUP, result=LibraryImport, idempotent=True, untrusted=True, title="Import a library")
def import_library(
    db,
    name: User,
    text: Annotated[
        str,
        Field(
            description="The file's text (not a path).",
            min_length=1,
            max_length=library.IMPORT_MAX_CHARS,
        ),
    ],
    format: Annotated[
        Literal["auto", "bibtex", "ris", "csl-json"],
        Field(
            description="auto (default) tells them apart.",
        ),
    ] = "auto",
) -> dict:
    """Teach a persona from a BibTeX, RIS or CSL-JSON library: each entry becomes a like (found
    in the archive, else stored)."""
    refuse_file_path("text", text)
    done = library.import_library(db, name, text, format)
    matched = sum(done.matched.values())
    how = ", ".join(f"{n} by {HOW[k]}" for k, n in done.matched.items() if n)
    parts = [
        f"{plural(matched, 'entry', 'entries') if matched else 'none'} found in the archive"
        + (f" ({how})" if how else ""),
        f"{plural(done.created, 'entry', 'entries')} stored as new items "
        f"({_listed_new(min(LISTED, len(done.new_items)))}; no unread feed lists them, and "
        "taking the bootstrap clicks back deletes them unless something else holds them)"
        if done.created
        else "",
    ]
    rated = [
        f"{plural(done.liked, 'new like')} (click source 'bootstrap')",
        f"{done.already_liked} already liked" if done.already_liked else "",
        f"{plural(done.kept_dislikes, 'item')} the persona had disliked kept disliked" if done.kept_dislikes else "",
        f"{plural(done.duplicates, 'duplicate entry', 'duplicate entries')} counted once" if done.duplicates else "",
    ]
    message = (
        f"Imported {plural(done.entries, 'entry', 'entries')} of the {done.format} "
        f"library into {done.user!r}: " + "; ".join(filter(None, parts)) + ". " + ", ".join(filter(None, rated)) + "."
    )
    if done.refused:
        lines = ", ".join(str(r["line"]) for r in done.refused[:LISTED])
        one = len(done.refused) == 1
        message += (
            f" {plural(len(done.refused), 'entry', 'entries')} could not be read and "
            f"{'was' if one else 'were'} left out ({'line' if one else 'lines'} "
            f"{lines}{' …' if len(done.refused) > LISTED else ''}{_SEE_REFUSED}); fix "
            f"{'it' if one else 'them'} and import the file again: what is in already is not added twice."
        )
    message += f" {show_effect(done.user).sentence()}; {_bootstrap.undo(done.user)}."
    return ok(
        message,
        format=done.format,
        entries=done.entries,
        matched=matched,
        matched_by=done.matched,
        created=done.created,
        liked=done.liked,
        already_liked=done.already_liked,
        kept_dislikes=done.kept_dislikes,
        duplicates=done.duplicates,
        n_refused=len(done.refused),
        refused=done.refused[:LISTED],
        n_unmatched=len(done.new_items),
        unmatched=done.new_items[:LISTED],
    )
