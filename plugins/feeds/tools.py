"""The feeds tool group: every tool is a plain function of ``db`` plus typed arguments.

The MCP server derives each tool's JSON schema from these signatures, so every argument is
``Annotated`` with a description and its limits. Fetching and parsing (httpx, feedparser)
load only when a tool fetches (:mod:`.subscriptions`).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from pydantic import Field

from hermes.config import settings
from hermes.contract import CandidateQuery
from hermes.errors import InvalidInput
from hermes.ranking.explain import explain, explain_ranked, rank_line
from hermes.ranking.rank import clamp_limit, rank
from hermes.records import item_rows, require_item, require_user
from hermes.storage.signals import record_click
from hermes.text import clip
from hermes.tools import envelope, fail, ok

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

# The success-path payload keys of each tool with empty values (kept present on failure).
EMPTY = {
    "list_feed": {"user": "", "items": [], "above_bar": 0, "below_bar": 0},
    "record_feedback": {"click": {}, "n_clicks": 0},
    "explain_item": {"user": "", "item_id": 0, "match": "", "reason": "", "explanation": {}},
    "add_feed": {"feed": {}},
    "preview_feed": {"feed": {}, "entries": []},
    "list_feeds": {"feeds": [], "orphaned_items": 0},
    "remove_feed": {"feed": {}, "removed": False},
    "suggest_feeds": {"user": "", "suggestions": []},
}

_envelope = envelope(EMPTY)




def short_text(text: str | None, limit: int = SUMMARY_CHARS) -> str:
    """Whitespace collapsed, then clipped to ``limit`` characters."""
    return clip(" ".join((text or "").split()), limit)


def _since(since_days) -> float | None:
    if since_days is None:
        return None
    if isinstance(since_days, bool) or not isinstance(since_days, (int, float)) or since_days <= 0:
        raise InvalidInput(f"since_days must be a positive number of days or null, got {since_days!r}")
    return float(since_days)


SinceArg = Annotated[int | None, Field(
    description="Only items published in the last N days; null searches the whole archive.",
    ge=1, le=36500)]


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


@_envelope
def list_feed(
    db,
    user: UserArg,
    limit: Annotated[int, Field(description="How many items to return (1-100).", ge=1, le=100)] = 20,
    since_days: SinceArg = 7,
    below_bar: Annotated[bool, Field(
        description="Also return the items whose match is weak or none (below the persona's "
                    "bar), after the ones that clear it.")] = False,
) -> dict:
    """The persona's ranked feed: unread items that clear its bar, best first, each with its
    match and the reason it ranks; ``below_bar`` counts the others."""
    persona = require_user(db, user)
    window = _since(since_days)
    limit = clamp_limit(limit, maximum=100)
    ranking = rank(db, persona, CandidateQuery(since_days=window), limit=limit, bar_first=True)
    shown = [pos for pos in range(len(ranking.item_ids)) if below_bar or ranking.above_bar(pos)]
    rows = item_rows(db, ranking.item_ids[np.array(shown, dtype=np.int64)])
    shown = [pos for pos in shown if int(ranking.item_ids[pos]) in rows]  # deleted meanwhile
    items = []
    for pos, why in zip(shown, explain_ranked(db, persona, ranking, shown, window)):
        row = rows[int(ranking.item_ids[pos])]
        items.append({
            "id": row["id"],
            "rank": pos + 1,
            "title": row["title"],
            "url": row["url"],
            "source": row["source"],
            "published": row["published"],
            "content_type": row["content_type"],
            "tags": row["tags"],
            "summary": short_text(row["summary"]),
            "score": round(float(ranking.scores[pos]), 4),
            "match": why["match"],
            "reason": why["reason"],
            "evidence": why["evidence"],
            "components": {name: round(float(v[pos]), 3)
                           for name, v in ranking.contributions.items()},
        })
    scope = "the whole archive" if window is None else f"the last {since_days:g} days"
    counts = {"above_bar": ranking.n_above_bar, "below_bar": ranking.n_below_bar}
    name = persona["name"]
    if not ranking.n_candidates:
        return ok(f"No unread items for {name} in {scope}. Widen since_days (null = "
                  "whole archive), or add feeds (add_feed) and wait for the next ingest.",
                  user=name, items=[], **counts)
    below = counts["below_bar"]
    if not counts["above_bar"]:
        message = (f"Nothing in {scope} clears {name}'s bar: none of the "
                   f"{_n(ranking.n_candidates, 'unread item')} there is a strong or good "
                   f"match ({_level_counts(ranking)}). "
                   + ("The items below are the closest anyway. " if below_bar else
                      "below_bar=true lists the closest anyway; ")
                   + "widen since_days, add feeds on the persona's topics, or like items "
                     "with record_feedback.")
        return ok(message, user=name, items=items, **counts)
    above = counts["above_bar"]
    n_shown = sum(1 for i in items if i["match"] in ("strong", "good"))
    n_listed = len(items) - n_shown
    head = (f"{_n(above, 'item')} from {scope} {'clears' if above == 1 else 'clear'} "
            f"{name}'s bar" + (f" (the best {n_shown} shown)" if above > n_shown else "")
            + f", best first; {_n(below, 'more item')} below the bar"
            + (f" (the first {n_listed} listed after them)" if n_listed and n_listed < below
               else " (listed after them)" if n_listed else
               " (below_bar=true lists them)" if below and not below_bar else "")
            + f". {_n(ranking.n_clicks, 'click')} so far; behaviour weighs "
              f"{ranking.blend_weight:.0%}.")
    return ok(head, user=name, items=items, **counts)


def _level_counts(ranking) -> str:
    return ", ".join(f"{n} {level}" for level, n in reversed(ranking.level_counts.items()) if n)


@_envelope
def record_feedback(
    db,
    user: UserArg,
    item_id: ItemArg,
    liked: Annotated[bool, Field(description="true = the persona liked the item, false = disliked it.")],
) -> dict:
    """Store a like or dislike from an agent (click source ``agent``)."""
    persona = require_user(db, user)
    item = require_item(db, item_id)
    click = record_click(db, persona["id"], item["id"], liked, source="agent")
    n = db.execute("SELECT count(*) FROM clicks WHERE user_id = ?", [persona["id"]]).fetchone()[0]
    what = "like" if liked else "dislike"
    return ok(f"Recorded a {what} of item {item['id']} for {persona['name']} ({n} clicks in "
              "total); the next list_feed uses it.", click=click, n_clicks=n)


@_envelope
def explain_item(db, user: UserArg, item_id: ItemArg, since_days: SinceArg = 7) -> dict:
    """Why an item ranks where it does for a persona, in the feed of the same window."""
    persona = require_user(db, user)
    require_item(db, item_id)
    window = _since(since_days)
    explanation = explain(db, persona, item_id, since_days=window)
    return ok(f"{rank_line(explanation)}. {explanation['reason']}",
              user=persona["name"], item_id=item_id, match=explanation["match"],
              reason=explanation["reason"], explanation=explanation)


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
    limit = clamp_limit(limit, maximum=20)
    parsed = probe(url, allow_private=settings().allow_private)
    existing = feed_by_url(db, url)
    entries = [
        {"title": e["title"], "url": e["url"], "published": e["published"],
         "content_type": e["content_type"], "tags": e["tags"], "summary": short_text(e["summary"])}
        for e in parsed["entries"][:limit]
    ]
    note = (f"already subscribed as feed {existing['id']}" if existing
            else "not subscribed; add_feed subscribes")
    # The feed's own title stays out of the message (it is in feed.title): feed text is
    # untrusted data, and the message is the tool speaking.
    return ok(f"Previewed {url[:200]}: {parsed['n_entries']} entries, showing {len(entries)} "
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
    extra = f"; {orphans} items remain from removed feeds" if orphans else ""
    if not feeds:
        return ok(f"No feeds subscribed. Use add_feed with a feed URL, or suggest_feeds{extra}.",
                  feeds=[], orphaned_items=orphans)
    return ok(f"{len(feeds)} feeds ({failing} failing on their last fetch){extra}.",
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
        return fail(f"Nothing removed (confirm is false). Removing would unsubscribe {what}: "
                    f"it would no longer be fetched; its {plan['item_count']} items stay in the "
                    f"archive and its {plan['click_count']} clicks are kept. Call again with "
                    "confirm=true to remove it.", feed=plan["feed"], removed=False)
    unsubscribe(db, feed_id)
    return ok(f"Removed {what}. Its {plan['item_count']} items stay in the archive "
              f"(still ranked and searchable) and its {plan['click_count']} clicks are kept.",
              feed=plan["feed"], removed=True)


@_envelope
def suggest_feeds(
    db,
    user: UserArg,
    limit: Annotated[int, Field(description="How many suggestions to return (1-30).", ge=1, le=30)] = 8,
) -> dict:
    """Curated feeds (shipped with hermes) matching the persona's liked tags and interests."""
    persona = require_user(db, user)
    found = suggest(db, persona, limit=clamp_limit(limit, maximum=30))
    if not found:
        return ok(f"No curated feed matches {persona['name']}'s interests or liked tags yet (or "
                  "all matching ones are subscribed). Like a few items, or add a feed by URL "
                  "with add_feed.", user=persona["name"], suggestions=[])
    return ok(f"{len(found)} curated feeds for {persona['name']}, best match first; subscribe "
              "with add_feed(url).", user=persona["name"], suggestions=found)
