"""The feeds tool group: every tool is a plain function of ``db`` plus typed arguments.

The MCP server derives each tool's JSON schema from these signatures, so every argument is
``Annotated`` with a description and its limits. Fetching and parsing (httpx, feedparser)
load only when a tool fetches (:mod:`.subscriptions`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hermes.config import settings
from hermes.contract import CandidateQuery
from hermes.errors import InvalidInput
from hermes.faces import Say, plural
from hermes.ranking.explain import explain
from hermes.ranking.rank import rank
from hermes.records import item_rows, require_item, require_user
from hermes.storage.signals import record_click
from hermes.text import clip
from hermes.tools import caller, envelope, fail, int_arg, ok

from .subscriptions import (
    check_web_url,
    feed_by_url,
    feed_rows,
    orphaned_count,
    probe,
    removal_plan,
    subscribe,
    unsubscribe,
)
from .suggest import suggest

UserArg = Annotated[str, Field(description="Persona name, as listed by list_users.",
                               min_length=1, max_length=200)]
ItemArg = Annotated[int, Field(description="Item id from list_feed or search_feed.", ge=1)]
UrlArg = Annotated[str, Field(description="The feed's address: an http:// or https:// URL of an "
                                          "RSS, Atom or RDF feed.", min_length=1, max_length=2000)]
SUMMARY_CHARS = 300
MAX_DAYS = 36500  # a century: "the whole archive" without an unbounded timestamp

# The success-path payload keys of each tool with empty values (kept present on failure).
EMPTY = {
    "list_feed": {"user": "", "items": []},
    "record_feedback": {"click": {}, "n_clicks": 0},
    "explain_item": {"user": "", "item_id": 0, "reason": "", "explanation": {}},
    "add_feed": {"feed": {}},
    "preview_feed": {"feed": {}, "entries": []},
    "list_feeds": {"feeds": [], "orphaned_items": 0},
    "remove_feed": {"feed": {}, "removed": False},
    "suggest_feeds": {"user": "", "suggestions": []},
}

_envelope = envelope(EMPTY)

# What a reader can do next, in the words of each face (hermes.faces).
WIDEN = Say(mcp="Widen since_days (null = the whole archive)",
            cli="Widen the window with --since-days N, or --all for the whole archive",
            web="Choose a longer period above, or all")
ADD_FEEDS = Say(mcp="add feeds (add_feed) and wait for the next ingest",
                cli="add feeds with `hermes feeds add URL` and run `hermes ingest`",
                web="add feeds on the Feeds page")
NEXT_RANKING = Say(mcp="the next list_feed uses it", cli="the next `hermes feed` uses it",
                   web="the feed is ranked with it from now on")
SUBSCRIBE = Say(mcp="add_feed subscribes", cli="`hermes feeds add URL` subscribes",
                web="Add feed on the Feeds page subscribes")
NO_FEEDS = Say(mcp="Use add_feed with a feed URL, or suggest_feeds",
               cli="Add one with `hermes feeds add URL`",
               web="Add one with Add feed below")
NOT_CONFIRMED = Say(mcp="confirm is false", cli="no --yes", web="not confirmed")
CONFIRM_REMOVE = Say(mcp="Call again with confirm=true to remove it",
                     cli="Rerun with --yes to remove it",
                     web="Press Remove feed to remove it")
SUBSCRIBE_SUGGESTED = Say(mcp="subscribe with add_feed(url)",
                          cli="subscribe with `hermes feeds add URL`",
                          web="subscribe with Add feed on the Feeds page")
ADD_BY_URL = Say(mcp="add a feed by URL with add_feed", cli="add a feed with `hermes feeds add URL`",
                 web="add a feed on the Feeds page")


def short_text(text: str | None, limit: int = SUMMARY_CHARS) -> str:
    """Whitespace collapsed, then clipped to ``limit`` characters."""
    return clip(" ".join((text or "").split()), limit)


#: What the built-in components mean, for the one-line reasons (plugins' own names are shown as is).
COMPONENT_LABELS = {
    "profile": "matches the interests text",
    "preference": "tags/sources you liked",
    "classifier": "resembles items you liked",
    "affinity": "close to items you liked",
}


def reason_of(contributions: dict[str, float], top: int = 2) -> str:
    """The components that pushed an item up most, e.g.
    ``"profile +1.21 (matches the interests text), preference +0.40 (tags/sources you liked)"``."""
    pushing = sorted(((v, k) for k, v in contributions.items() if v > 0.005), reverse=True)[:top]
    if not pushing:
        return "no component pushes it up; it ranks on what counts least against it"
    return ", ".join(
        f"{name} {value:+.2f}" + (f" ({COMPONENT_LABELS[name]})" if name in COMPONENT_LABELS else "")
        for value, name in pushing
    )


def _since(since_days) -> float | None:
    if since_days is None:
        return None
    if (isinstance(since_days, bool) or not isinstance(since_days, (int, float))
            or not 0 < since_days <= MAX_DAYS):
        raise InvalidInput(f"since_days must be a number of days from 1 to {MAX_DAYS} or null, "
                           f"got {since_days!r}")
    return float(since_days)


@_envelope
def list_feed(
    db,
    user: UserArg,
    limit: Annotated[int, Field(description="How many items to return (1-100).", ge=1, le=100)] = 20,
    since_days: Annotated[int | None, Field(
        description="Only items published in the last N days; null searches the whole archive.",
        ge=1, le=MAX_DAYS)] = 7,
) -> dict:
    """The persona's ranked feed: unread items, best first, each with the reason it ranks."""
    persona = require_user(db, user)
    window = _since(since_days)
    limit = int_arg("limit", limit, 1, 100)
    ranking = rank(db, persona, CandidateQuery(since_days=window), limit=limit)
    rows = item_rows(db, ranking.item_ids)
    items = []
    for pos, item_id in enumerate(ranking.item_ids.tolist()):
        row = rows.get(item_id)
        if row is None:  # deleted after the matrix was loaded: skip rather than fail
            continue
        parts = {name: round(float(v[pos]), 3) for name, v in ranking.contributions.items()}
        items.append({
            "id": item_id,
            "rank": pos + 1,
            "title": row["title"],
            "url": row["url"],
            "source": row["source"],
            "published": row["published"],
            "content_type": row["content_type"],
            "tags": row["tags"],
            "summary": short_text(row["summary"]),
            "score": round(float(ranking.scores[pos]), 4),
            "components": parts,
            "reason": reason_of(parts),
        })
    scope = "the whole archive" if window is None else f"the last {plural(round(window), 'day')}"
    if not items:
        widen = f"{WIDEN}, or " if window is not None else ""
        return ok(f"No unread items for {persona['name']} in {scope}. {widen}{ADD_FEEDS}.",
                  user=persona["name"], items=[])
    return ok(f"{plural(len(items), 'item')} for {persona['name']} from {scope}, best first "
              f"({plural(ranking.n_clicks, 'click')} so far; behaviour weighs "
              f"{ranking.blend_weight:.0%}).",
              user=persona["name"], items=items)


@_envelope
def record_feedback(
    db,
    user: UserArg,
    item_id: ItemArg,
    liked: Annotated[bool, Field(description="true = the persona liked the item, false = disliked it.")],
) -> dict:
    """Store a like or dislike: click source ``agent`` over MCP, ``ui`` from a person."""
    persona = require_user(db, user)
    item = require_item(db, item_id)
    click = record_click(db, persona["id"], item["id"], liked, source=caller())
    n = db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [persona["id"]]).fetchone()[0]
    what = "like" if liked else "dislike"
    return ok(f"Recorded a {what} of item {item['id']} for {persona['name']} "
              f"({plural(n, 'click')} in total); {NEXT_RANKING}.", click=click, n_clicks=n)


@_envelope
def explain_item(db, user: UserArg, item_id: ItemArg) -> dict:
    """Why an item ranks where it does for a persona."""
    persona = require_user(db, user)
    require_item(db, item_id)
    explanation = explain(db, persona, item_id)
    reason = explanation.get("reason") or explanation.get("summary") or ""
    return ok(f"Why item {item_id} ranks for {persona['name']}: {reason}".rstrip(": "),
              user=persona["name"], item_id=item_id, reason=reason, explanation=explanation)


@_envelope
def add_feed(
    db,
    url: UrlArg,
    title: Annotated[str | None, Field(
        description="Optional display title; default: the feed's own title.", max_length=200)] = None,
) -> dict:
    """Subscribe to a feed after checking (one fetch) that it parses. Does not ingest."""
    url = check_web_url(url)
    return subscribe(db, url, title, probe_fn=lambda u: probe(u, allow_private=settings().allow_private))


@_envelope
def preview_feed(
    db,
    url: UrlArg,
    limit: Annotated[int, Field(description="How many recent entries to show (1-20).", ge=1, le=20)] = 5,
) -> dict:
    """Fetch a feed and show its recent entries without subscribing (nothing is stored)."""
    url = check_web_url(url)
    limit = int_arg("limit", limit, 1, 20)
    parsed = probe(url, allow_private=settings().allow_private)
    existing = feed_by_url(db, url)
    entries = [
        {"title": e["title"], "url": e["url"], "published": e["published"],
         "content_type": e["content_type"], "tags": e["tags"], "summary": short_text(e["summary"])}
        for e in parsed["entries"][:limit]
    ]
    note = (f"already subscribed as feed {existing['id']}" if existing
            else f"not subscribed; {SUBSCRIBE}")
    # The feed's own title stays out of the message (it is in feed.title): feed text is
    # untrusted data, and the message is the tool speaking.
    return ok(f"Previewed {url[:200]}: {plural(parsed['n_entries'], 'entry', 'entries')}, "
              f"showing {len(entries)} "
              f"({note}).",
              feed={"url": url, "title": parsed["title"], "n_entries": parsed["n_entries"],
                    "subscribed_as": existing["id"] if existing else None},
              entries=entries)


@_envelope
def list_feeds(db) -> dict:
    """Every subscribed feed with its item count and fetch health."""
    feeds = feed_rows(db)
    orphans = orphaned_count(db)
    failing = sum(1 for f in feeds if f["last_error"])
    extra = f"; {plural(orphans, 'item')} remain from removed feeds" if orphans else ""
    if not feeds:
        return ok(f"No feeds subscribed. {NO_FEEDS}{extra}.", feeds=[], orphaned_items=orphans)
    return ok(f"{plural(len(feeds), 'feed')} ({failing} failing on their last fetch){extra}.",
              feeds=feeds, orphaned_items=orphans)


@_envelope
def remove_feed(
    db,
    feed_id: Annotated[int, Field(description="The feed's id, from list_feeds.", ge=1)],
    confirm: Annotated[bool, Field(
        description="Must be true to actually remove. With false nothing changes and the "
                    "answer says what would be removed.")],
) -> dict:
    """Unsubscribe from a feed; its items and every click on them are kept."""
    plan = removal_plan(db, feed_id)
    # By id and URL: the title usually comes from the feed itself (untrusted text) and is
    # in the feed payload, not in the tool's own words.
    what = f"feed {plan['feed']['id']} ({plan['feed']['url'][:200]})"
    if confirm is not True:
        return fail(f"Nothing removed ({NOT_CONFIRMED}). Removing would unsubscribe {what}: "
                    f"it would no longer be fetched, and the archive would keep its "
                    f"{plural(plan['item_count'], 'item')} and {plural(plan['click_count'], 'click')}. "
                    f"{CONFIRM_REMOVE}.",
                    feed=plan["feed"], removed=False)
    unsubscribe(db, feed_id)
    return ok(f"Removed {what}. The archive keeps its {plural(plan['item_count'], 'item')} (still "
              f"ranked and searchable) and {plural(plan['click_count'], 'click')}.",
              feed=plan["feed"], removed=True)


@_envelope
def suggest_feeds(
    db,
    user: UserArg,
    limit: Annotated[int, Field(description="How many suggestions to return (1-30).", ge=1, le=30)] = 8,
) -> dict:
    """Curated feeds (shipped with hermes) matching the persona's liked tags and interests."""
    persona = require_user(db, user)
    found = suggest(db, persona, limit=int_arg("limit", limit, 1, 30))
    if not found:
        return ok(f"No curated feed matches {persona['name']}'s interests or liked tags yet (or "
                  f"all matching ones are subscribed). Like a few items, or {ADD_BY_URL}.",
                  user=persona["name"], suggestions=[])
    return ok(f"{plural(len(found), 'curated feed')} for {persona['name']}, best match first; "
              f"{SUBSCRIBE_SUGGESTED}.", user=persona["name"], suggestions=found)
