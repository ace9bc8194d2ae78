"""The feeds tool group: the ranked feed, feedback, explanations and subscriptions.

Each tool is a function of ``db`` plus ``Annotated`` arguments, made a tool by
:func:`hermes.contract.tool` (its docstring is the description an agent reads; the hints are
the checked schema). Fetching and parsing (httpx, feedparser) load only when a tool fetches
(:mod:`.subscriptions`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from hermes.answers import (
    ANSWER_BUDGET,
    FEED_BUDGET,
    FeedText,
    FeedTexts,
    ItemExplanation,
    MaybeFeedText,
    RankedItem,
    compact,
    fitting,
    left_out_words,
    over,
)
from hermes.config import settings
from hermes.contract import MAX_DAYS, Answer, CandidateQuery, Result, fail, ok, tool
from hermes.facekit.faces import RATE_HELD, SHOW_BELOW, SHOW_CLOSEST, Say, plural, typed
from hermes.ingest.refresher import embedding, new_items
from hermes.ranking.explain import explain, why_not_in
from hermes.ranking.explain_words import held_by_clicks, rank_line, weight_note
from hermes.ranking.feed_window import wider_window
from hermes.ranking.page import ranked_page
from hermes.storage.records import require_item, require_user
from hermes.text.clip import clip
from hermes.tools import ItemId, User

from .subscriptions import (
    check_web_url,
    feed_by_url,
    feed_rows,
    orphaned_count,
    probe,
    probe_to_subscribe,
    refresh_summary,
    removal_plan,
    rename,
    subscribe,
    unsubscribe,
)
from .suggest import suggest

GROUP = "feeds"
UrlArg = Annotated[str, Field(description="An http(s) RSS, Atom or RDF feed URL.", min_length=1, max_length=2000)]
SUMMARY_CHARS = 300
#: how far ``list_feed`` pages: ``offset`` + ``limit`` items are ranked for a page
MAX_OFFSET = 10_000


# The objects the answers are made of, typed for the output schema (a tool returns dicts).


class FeedRow(Answer):
    """A subscribed feed (``list_feeds``)."""

    id: int
    url: str
    title: MaybeFeedText
    folder: str | None
    site_url: str | None
    item_count: int
    last_fetched: str | None
    #: set when the last try failed; error_count says how many tries in a row did
    last_error: str | None
    error_count: int
    next_fetch: str | None
    subscribed_by: str | None


class PreviewEntry(Answer):
    title: MaybeFeedText
    url: str | None
    published: str | None
    content_type: str | None
    tags: FeedTexts
    summary: FeedText


class Suggestion(Answer):
    """A curated feed to subscribe to (``add_feed(url)``)."""

    title: str
    url: str
    area: str | None = None
    content_type: str | None = None
    description: str | None = None
    tags: list[str] = []
    score: float
    reason: str


class FeedPage(Result):
    user: str = ""
    items: list[RankedItem] = []
    #: how many unread items of the window clear the persona's bar, and how many do not
    above_bar: int = 0
    below_bar: int = 0
    #: items of this page left out to keep the answer within its budget (offset continues)
    left_out: int = 0


class Explanation(Result):
    user: str = ""
    item_id: int = 0
    match: str = ""
    reason: str = ""
    explanation: ItemExplanation = {}
    #: for an item outside the window asked for but in the whole archive's feed: how to
    #: rank it there
    advice: str = ""


class FeedAdded(Result):
    feed: dict[str, Any] = {}
    #: true when the feed was subscribed before this call (nothing changed: not an error)
    already_subscribed: bool = False


class FeedPreview(Result):
    feed: dict[str, Any] = {}
    entries: list[PreviewEntry] = []


class FeedList(Result):
    feeds: list[FeedRow] = []
    orphaned_items: int = 0
    refresh: dict[str, Any] = {}


class FeedRenamed(Result):
    feed: dict[str, Any] = {}


class FeedRemoval(Result):
    feed: dict[str, Any] = {}
    removed: bool = False


class Suggestions(Result):
    user: str = ""
    suggestions: list[Suggestion] = []


# What a reader can do next, in the words of each face (hermes.facekit.faces).
WIDEN = Say(
    mcp="Widen since_days (null = the whole archive)",
    cli="Widen the window with --since-days N, or --all for the whole archive",
    web="Choose a longer period above, or all",
)
ADD_FEEDS = Say(
    mcp="add feeds (add_feed)",
    cli="add feeds with `hermes feeds add URL`",
    web="add feeds on the Feeds page",
)
BAR_ADVICE = Say(
    mcp="widen since_days, add feeds on the persona's topics (add_feed), or like items with record_feedback",
    cli="widen the window (--since-days N or --all), add feeds on the persona's "
    "topics (`hermes feeds add URL`), or like items (`hermes like USER ITEM`)",
    web="choose a longer period, add feeds on your topics on the Feeds page, or ✓ items you like",
)
SUBSCRIBE = Say(
    mcp="add_feed subscribes", cli="`hermes feeds add URL` subscribes", web="Add feed on the Feeds page subscribes"
)
NO_FEEDS = Say(
    mcp="Use add_feed with a feed URL, or suggest_feeds",
    cli="Add one with `hermes feeds add URL`",
    web="Add one with Add feed below",
)
NOT_CONFIRMED = Say(mcp="confirm is false", cli="no --yes", web="not confirmed")
CONFIRM_REMOVE = Say(
    mcp="Call again with confirm=true to remove it",
    cli="Rerun with --yes to remove it",
    web="Press Remove feed to remove it",
)
SUBSCRIBE_SUGGESTED = Say(
    mcp="subscribe with add_feed(url)",
    cli="subscribe with `hermes feeds add URL`",
    web="subscribe with Add feed on the Feeds page",
)
PAGE_BACK = Say(mcp="Use a smaller offset", cli="Use a smaller --offset", web="Go back a page")


def below_from(above: int) -> Say:
    """Where the items below the bar start when the page held only items above it (asked
    for with below_bar: the hint keeps it, or the next page lists nothing)."""
    return Say(
        mcp=f"this page holds no room for them: offset={above} with below_bar=true lists them",
        cli=f"this page holds no room for them: --below-bar --offset {above} lists them",
        web="the next pages list them",
    )


ADD_BY_URL = Say(
    mcp="add a feed by URL with add_feed",
    cli="add a feed with `hermes feeds add URL`",
    web="add a feed on the Feeds page",
)


def short_text(text: str | None, limit: int = SUMMARY_CHARS) -> str:
    """Whitespace collapsed, then clipped to ``limit`` characters."""
    return clip(" ".join((text or "").split()), limit)


SinceDays = Annotated[int | None, Field(description="The last N days; null: all.", ge=1, le=MAX_DAYS)]


@tool(GROUP, result=FeedPage, read_only=True, idempotent=True, untrusted=True)
def list_feed(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    since_days: SinceDays = 7,
    below_bar: Annotated[bool, Field(description="Also list the weak and none matches.")] = False,
    offset: Annotated[int, Field(description="Skip this many (next page: offset=limit).", ge=0, le=MAX_OFFSET)] = 0,
    detail: Annotated[bool, Field(description="Add summary, evidence, components.")] = False,
    removed_feeds: Annotated[bool, Field(description="Also items of removed feeds.")] = False,
) -> dict:
    """A persona's ranked feed of unread items, with match and why: those that clear its bar
    (strong or good) by score, then (below_bar) the rest by score."""
    persona = require_user(db, user)
    window = None if since_days is None else float(since_days)
    ranking, page = ranked_page(
        db,
        persona,
        CandidateQuery(since_days=window, exclude_read=True, removed_feeds=removed_feeds),
        limit=limit,
        offset=offset,
        below_bar=below_bar,
    )
    items = []
    for pos, row, why in ((s.position, s.row, s.why) for s in page):
        items.append(
            {
                "id": row["id"],
                "rank": pos + 1,
                "title": row["title"],
                "url": row["url"],
                "source": row["source"],
                "published": row["published"],
                "date_source": row["date_source"],
                "content_type": row["content_type"],
                "enclosure": row["enclosure"],
                "tags": row["tags"],
                "summary": short_text(row["summary"]),
                "score": round(float(ranking.scores[pos]), 4),
                "match": why["match"],
                "reason": why["reason"],
                "evidence": why["evidence"],
                "components": {name: round(float(v[pos]), 3) for name, v in ranking.contributions.items()},
            }
        )
        if not detail:  # compact by default: what choosing needs, one explain_item from the rest
            compact(items[-1])
    budget = ANSWER_BUDGET if detail else FEED_BUDGET
    # An agent's context: a budget whatever the clicks (the evidence and reasons grow with
    # them): a page that would pass it ends early, and offset continues where it ends.
    kept = fitting(items, budget, rest=400)  # the message and counts: about 300
    result = _page(ranking, persona, window, offset, below_bar, db, items[:kept], len(items) - kept, budget)
    while result["items"] and over(result, budget):  # a message longer than allowed for
        kept -= 1
        result = _page(ranking, persona, window, offset, below_bar, db, items[:kept], len(items) - kept, budget)
    return result


def _wider(db, persona, window) -> Say:
    """What a wider window holds, over MCP: a count and the call that shows it (the CLI
    said "The last 365 days have 18 unread items"; an agent read only "Widen since_days"),
    else the advice to widen."""
    offer = wider_window(db, persona, window)
    if offer is None:
        return WIDEN
    days, n = offer
    scope = "The whole archive has" if days is None else f"The last {plural(round(days), 'day')} have"
    held = f"{scope} {plural(n, 'unread item')}"
    # (the CLI and the web offer the wider window on a line of their own)
    return Say(
        mcp=f"{held}: since_days={'null' if days is None else round(days)} shows them", cli=WIDEN.cli, web=WIDEN.web
    )


def _page(ranking, persona, window, offset, below_bar, db, items, cut, budget) -> dict:
    """list_feed's answer for the ``items`` of the page (``cut`` more left out)."""
    more = f" {left_out_words(cut, budget)}: offset={items[-1]['rank'] if items else offset} continues." if cut else ""
    scope = "the whole archive" if window is None else f"the last {plural(round(window), 'day')}"
    counts = {"above_bar": ranking.n_above_bar, "below_bar": ranking.n_below_bar}
    name = persona["name"]
    if not ranking.n_candidates:
        # Here, not at the top: the ingest store (its tagging and parsing modules) loads only
        # for an empty page, not for every `hermes feed` (issue 36).
        from hermes.ingest.store import not_embedded

        pending = not_embedded(db)
        if pending:  # an interrupted ingest: stored, not rankable until embedded
            return ok(
                f"No unread items for {name} in {scope} yet: "
                f"{plural(pending, 'item')} {'is' if pending == 1 else 'are'} stored but "
                f"not embedded yet, so nothing ranks them; {embedding(db)}."
                + (f" {WIDEN} for the items already embedded." if window is not None else ""),
                user=name,
                items=[],
                left_out=0,
                **counts,
            )
        widen = f"{_wider(db, persona, window)}, or " if window is not None else ""
        return ok(
            f"No unread items for {name} in {scope}. {widen}{ADD_FEEDS}; {new_items(db)}.",
            user=name,
            items=[],
            left_out=0,
            **counts,
        )
    below = counts["below_bar"]
    if offset and not items and (below_bar or counts["above_bar"]):  # paged past the end
        last = ranking.n_candidates if below_bar else counts["above_bar"]
        return ok(
            f"Nothing from rank {offset + 1} on: {name}'s feed over {scope} has "
            f"{plural(last, 'item')}" + ("" if below_bar else " that clear the bar") + f". {PAGE_BACK}.",
            user=name,
            items=[],
            left_out=0,
            **counts,
        )
    if not counts["above_bar"]:
        message = (
            f"Nothing in {scope} clears {name}'s bar: none of the "
            f"{plural(ranking.n_candidates, 'unread item')} there is a strong or good "
            f"match ({_level_counts(ranking)}). "
            + held_by_clicks(ranking.n_vetoed, ranking.n_clicks)
            + ("The items listed are the closest anyway; " if below_bar else f"{SHOW_CLOSEST}; ")
            + (f"{RATE_HELD.naming(name)}." if ranking.n_vetoed else f"{BAR_ADVICE.naming(name)}.")
        )
        return ok(message + more, user=name, items=items, left_out=cut, **counts)
    above = counts["above_bar"]
    n_shown = sum(1 for i in items if i["match"] in ("strong", "good"))
    n_listed = len(items) - n_shown
    page = (
        f" (ranks {items[0]['rank']}–{items[-1]['rank']} shown)"
        if offset and items
        else f" (the best {n_shown} shown)"
        if above > n_shown
        else ""
    )
    head = (
        f"{plural(above, 'item')} from {scope} {'clears' if above == 1 else 'clear'} "
        f"{name}'s bar"
        + page
        + f", best first; {plural(below, 'more item')} below the bar"
        + (
            f" ({n_listed} of them on this page)"
            if offset and n_listed
            else f" (the first {n_listed} listed after them)"
            if n_listed and n_listed < below
            else " (listed after them)"
            if n_listed
            else f" ({SHOW_BELOW})"
            if below and not below_bar
            else f" ({below_from(above)})"
            if below and not offset
            else ""
        )
        + f". {plural(ranking.n_clicks, 'click')} so far; behaviour weighs "
        f"{ranking.blend_weight:.0%}{weight_note(ranking.n_clicks, ranking.blend_weight)}."
    )
    return ok(head + more, user=name, items=items, left_out=cut, **counts)


def _level_counts(ranking) -> str:
    return ", ".join(f"{n} {level}" for level, n in reversed(ranking.level_counts.items()) if n)


# Not read-only: the explanation is stored (the explanations table, which delete_persona and
# reset_feedback count as the persona's data); not destructive: it only replaces a cache.
@tool(GROUP, result=Explanation, idempotent=True, untrusted=True)
def explain_item(db, user: User, item_id: ItemId, since_days: SinceDays = 7) -> dict:
    """Why an item ranks where it does for a persona, as list_feed ranks it: match, evidence,
    components, reason."""
    persona = require_user(db, user)
    require_item(db, item_id)
    window = None if since_days is None else float(since_days)
    explanation = explain(db, persona, item_id, since_days=window)
    advice = ""
    if (
        window is not None
        and not explanation.get("in_pool", True)
        and why_not_in(db, persona, CandidateQuery(since_days=None, exclude_read=True), item_id) is None
    ):
        advice = f"{_rank_in_archive(persona['name'], item_id)}."
    return ok(
        f"{rank_line(explanation)}: a {explanation['match']} match ('reason' says why).{' ' + advice if advice else ''}",
        user=persona["name"],
        item_id=item_id,
        match=explanation["match"],
        reason=explanation["reason"],
        explanation=said_once(explanation),
        advice=advice,
    )


def said_once(explanation: dict) -> dict:
    """The explanation as ``explain_item`` answers it: each figure once (the stored one said
    its evidence up to three times; a median answer on the MCP trial's archive went from 5.0
    to 3.7 kB). A top part's evidence is the ``evidence`` of its kind (profile: interest,
    affinity: liked, classifier: classifier, preference: tags, authors and sources), as the
    digest gives it; ``matched_tags`` is ``evidence``'s tags, authors, sources and topics;
    the profile's closest interest and its similarity are ``evidence.interest``'s; the
    classifier's reason is ``classifier_reason``; ``user`` is the answer's."""
    out = {k: v for k, v in explanation.items() if k not in ("matched_tags", "user")}
    if "top" in out:
        out["top"] = [{k: v for k, v in t.items() if k != "evidence"} for t in out["top"]]
    interest = (explanation.get("evidence") or {}).get("interest") or {}
    said = {
        "profile": {"closest_interest": interest.get("clause"), "similarity": interest.get("similarity")},
        "classifier": {"reason": explanation.get("classifier_reason")},
    }
    out["components"] = {
        name: {k: v for k, v in part.items() if k not in said.get(name, {}) or said[name][k] != v}
        for name, part in (explanation.get("components") or {}).items()
    }
    return out


def _rank_in_archive(name: str, item_id: int) -> Say:
    """How to explain an item where the feed of the whole archive ranks it (it is unread but
    outside the window asked for)."""
    return Say(
        mcp="Call explain_item with since_days=null to rank it in the whole archive, as "
        "list_feed with since_days=null lists it",
        cli=f"`hermes explain {typed(name)} {item_id} --all` ranks it in the whole "
        f"archive, as `hermes feed {typed(name)} --all` lists it",
        web="Choose all above the feed to rank it in the whole archive",
    )


@tool(GROUP, result=FeedAdded, idempotent=True, open_world=True, untrusted=True)
def add_feed(
    db,
    url: UrlArg,
    title: Annotated[str | None, Field(description="A display title; default: the feed's own.", max_length=200)] = None,
) -> dict:
    """Subscribe to a feed URL once a fetch shows it parses; its items come with the next
    refresh. Private addresses are refused."""
    url = check_web_url(url)
    # Whoever calls the tool — an agent over MCP, or the web form, which a page on another
    # site could drive — the feed is an agent's: guarded now and at every ingest.
    return subscribe(
        db,
        url,
        title,
        subscribed_by="agent",
        probe_fn=lambda u: probe_to_subscribe(u, allow_private=settings().allow_private),
    )


@tool(GROUP, result=FeedPreview, read_only=True, idempotent=True, open_world=True, untrusted=True)
def preview_feed(
    db,
    url: UrlArg,
    limit: Annotated[int, Field(ge=1, le=20)] = 5,
) -> dict:
    """Fetch a feed URL and show its recent entries, subscribing and storing nothing."""
    url = check_web_url(url)
    parsed = probe(url, allow_private=settings().allow_private)
    existing = feed_by_url(db, url)
    entries = [
        {
            "title": e["title"],
            "url": e["url"],
            "published": e["published"],
            "content_type": e["content_type"],
            "tags": e["tags"],
            "summary": short_text(e["summary"]),
        }
        for e in parsed["entries"][:limit]
    ]
    note = f"already subscribed as feed {existing['id']}" if existing else f"not subscribed; {SUBSCRIBE}"
    # The feed's own title stays out of the message (it is in feed.title): feed text is
    # untrusted data, and the message is the tool speaking.
    return ok(
        f"Previewed {url[:200]}: {plural(parsed['n_entries'], 'entry', 'entries')}, showing {len(entries)} ({note}).",
        feed={
            "url": url,
            "title": parsed["title"],
            "n_entries": parsed["n_entries"],
            "subscribed_as": existing["id"] if existing else None,
        },
        entries=entries,
    )


@tool(GROUP, result=FeedList, read_only=True, idempotent=True, untrusted=True)
def list_feeds(db) -> dict:
    """The subscribed feeds: id, title, url, folder, items, last fetch and error, next fetch."""
    feeds = feed_rows(db)
    orphans = orphaned_count(db)
    refresh, said = refresh_summary(db, feeds)
    failing = sum(1 for f in feeds if f["last_error"])
    extra = f"; {plural(orphans, 'item')} remain from removed feeds" if orphans else ""
    if not feeds:
        return ok(f"No feeds subscribed. {NO_FEEDS}{extra}.", feeds=[], orphaned_items=orphans, refresh=refresh)
    return ok(
        f"{plural(len(feeds), 'feed')} ({failing} failing on their last fetch){extra}. {said}",
        feeds=feeds,
        orphaned_items=orphans,
        refresh=refresh,
    )


# Not destructive (hermes.contract.Tool.destructive): renaming it back restores the old title.
@tool(GROUP, result=FeedRenamed, idempotent=True)
def rename_feed(
    db,
    feed_id: Annotated[int, Field(description="From list_feeds.", ge=1)],
    title: Annotated[str, Field(description="The new title.", min_length=1, max_length=200)],
) -> dict:
    """Change a feed's display title (fetching never overwrites it)."""
    feed = rename(db, feed_id, title)
    # quoted, not repr(): repr doubled a LaTeX title's backslashes, which no face could read
    return ok(f"Feed {feed['id']} is now called '{feed['title']}'.", feed=feed)


@tool(GROUP, result=FeedRemoval, destructive=True, idempotent=True, untrusted=True)
def remove_feed(
    db,
    feed_id: Annotated[int, Field(description="From list_feeds.", ge=1)],
    confirm: bool = False,
) -> dict:
    """Unsubscribe from a feed; its items and ratings stay. Needs confirm=true."""
    plan = removal_plan(db, feed_id)
    # By id and URL: the title usually comes from the feed itself (untrusted text) and is
    # in the feed payload, not in the tool's own words.
    what = f"feed {plan['feed']['id']} ({plan['feed']['url'][:200]})"
    if not confirm:
        kept = _kept_words(plan, "would keep")
        return fail(
            f"Nothing removed ({NOT_CONFIRMED}). Removing would unsubscribe {what}: "
            f"it would no longer be fetched{', and the ' + kept if kept else ''}. "
            f"{CONFIRM_REMOVE}.",
            feed=plan["feed"],
            removed=False,
        )
    unsubscribe(db, feed_id)
    kept = _kept_words(plan, "keeps", " (searchable, in your corpus, left out of your feed and digest)")
    them = "it" if plan["item_count"] == 1 and not plan["click_count"] else "them"
    back = f" The {kept}; subscribing the same URL again gives {them} back to it." if kept else ""
    return ok(f"Removed {what}.{back}", feed=plan["feed"], removed=True)


def _kept_words(plan: dict, verb: str, note: str = "") -> str:
    """What the archive keeps of a removed feed ("" when it stored no items): only what there
    is, so a feed never fetched is not said to leave 0 items and 0 clicks behind."""
    if not plan["item_count"]:
        return ""
    clicks = f" and {plural(plan['click_count'], 'click')}" if plan["click_count"] else ""
    return f"archive {verb} its {plural(plan['item_count'], 'item')}{note}{clicks}"


@tool(GROUP, result=Suggestions, read_only=True, idempotent=True)
def suggest_feeds(
    db,
    user: User,
    limit: Annotated[int, Field(ge=1, le=30)] = 8,
) -> dict:
    """Feeds to subscribe to from a curated list, scored against the persona's liked tags and
    interests."""
    persona = require_user(db, user)
    found = suggest(db, persona, limit=limit)
    if not found:
        return ok(
            f"No curated feed matches {persona['name']}'s interests or liked tags yet (or "
            f"all matching ones are subscribed). Like a few items, or {ADD_BY_URL}.",
            user=persona["name"],
            suggestions=[],
        )
    return ok(
        f"{plural(len(found), 'curated feed')} for {persona['name']}, best match first; {SUBSCRIBE_SUGGESTED}.",
        user=persona["name"],
        suggestions=found,
    )
