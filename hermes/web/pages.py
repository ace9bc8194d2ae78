"""The pages of the web UI (every one a GET that changes nothing).

Reads go through the core (the ranking, ``require_user``) and the collected tools; the
buttons' actions are in :mod:`.actions`, the feeds page in :mod:`.feeds_page`, the persona
page in :mod:`.persona_page`, the Atom feed in :mod:`.atom`. A tool group that is disabled
or missing turns into a notice on the page, never a crash.
"""

from __future__ import annotations

from dataclasses import replace

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import Route

from hermes.facekit.faces import RATE_HELD, plural
from hermes.ranking.explain_words import held_by_clicks
from hermes.ranking.feed_window import wider_window
from hermes.storage.records import archive_size, feed_row, item_rows, list_personas

from ..errors import HermesError
from ..ingest.refresher import refresh_state
from ..ingest.store import not_embedded
from ..ranking.explain import explain
from ..ranking.explain_words import rank_line
from ..storage.clicks import click_counts_by_persona, label_of
from . import actions, atom, feeds_page, persona_page
from .access import (
    Tools,
    corpus_status,
    item_ids_of,
    opened,
    ranked_items,
    require_item_id,
    require_persona,
    visitor,
)
from .feed_health import refresh_failures
from .forms import DEFAULT_DAYS, MAX_DAYS, MAX_TEXT, as_typed, bad
from .render import page_url, redirect, render
from .views import (
    View,
    candidate_query,
    feeds_with_unread,
    header_figures,
    in_window,
    parse_view,
    read_among,
    remembers_window,
    window_cookie,
    with_wider,
)

SEARCH_LIMIT = 50


# --- personas -----------------------------------------------------------------------------------


def _personas(db, tools: Tools) -> tuple[list[dict], str | None]:
    counts = click_counts_by_persona(db)
    people = [{**u, "clicks": counts.get(u["id"], {}).get("clicks", 0)} for u in list_personas(db)]
    note = None if tools.has("create_persona") else tools.missing("persona", "create_persona")
    return people, note


def archive_line(size: dict) -> str:
    """What the archive holds, true of every item: "242 items from 6 feeds, 5 saved or
    imported from a library" (a home page counted a library's items as the feeds')."""
    parts = [f"{plural(size['from_feeds'], 'item')} from {plural(size['feeds'], 'feed')}"]
    if size["added"]:
        parts.append(f"{size['added']} saved or imported from a library")
    if size["orphaned"]:
        parts.append(f"{size['orphaned']} kept from feeds since removed")
    return ", ".join(parts) + "."


def _home_context(request: Request, **extra) -> dict:
    tools = Tools()
    with opened(request) as db:
        people, note = _personas(db, tools)
        size = archive_size(db)
    return {
        "people": people,
        "create_note": note,
        "n_items": size["items"],
        "n_feeds": size["feeds"],
        "archive_line": archive_line(size),
        "page": "home",
        "interests_max": tools.text_limit("create_persona", "interests", MAX_TEXT),
        **extra,
    }


async def home(request: Request):
    return render(request, "personas.html", await run_in_threadpool(_home_context, request))


async def create_persona(request: Request):
    """Create a persona; a refusal shows the form again with what was typed (an interests
    text can be long: losing it to a bare error page costs the person the writing)."""
    form = await request.form()
    typed = {"name": str(form.get("name") or "")[:200], "interests": str(form.get("interests") or "")[: MAX_TEXT * 4]}
    tools = Tools()
    name = as_typed(form, "name")
    try:

        def act():
            with opened(request) as db:
                return tools.require(
                    db,
                    "persona",
                    "create_persona",
                    {"name": "The persona's name", "interests": "The interests text"},
                    name=name,
                    interests=as_typed(form, "interests"),
                )

        result = await run_in_threadpool(act)
    except HTTPException as exc:
        if exc.status_code != 400:
            raise
        return await _personas_again(request, typed, exc.detail)
    return redirect(request, page_url("feed", name), result.get("message") or f"Created {name}.")


async def _personas_again(request: Request, typed: dict, message: str):
    """The personas page again (status 400) with what was typed and why it was refused."""
    context = await run_in_threadpool(_home_context, request, form=typed, form_error=message[:1].upper() + message[1:])
    return render(request, "personas.html", context, status=400)


# --- the feed -----------------------------------------------------------------------------------


async def feed(request: Request):
    asked = parse_view(request.query_params)

    def build():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, asked.user)
            view = in_window(db, user, asked, request.cookies)
            if view.feed is not None and feed_row(db, view.feed) is None:
                raise HTTPException(
                    404,
                    f"There is no feed {view.feed}: the Feeds page lists your feeds, and All feeds shows every item.",
                )
            items, ranking = ranked_items(
                db,
                user,
                candidate_query(db, view),
                limit=view.limit,
                offset=view.offset,
                pool=view.scope(),
                below_bar=view.below,
            )
            for item in items:
                item["explain_url"] = view.explain_url(item["id"])
            status = corpus_status(db, tools, user)
            shown = [i["id"] for i in items]
            status["experienced"] = (read_among(db, user, shown) if view.show_read else set()) | (
                status["experienced"] - set(shown)
            )
            n_items = archive_size(db)["items"]
            n_pending = 0 if ranking.n_candidates else not_embedded(db)
            # a feed with nothing unread in the window but some outside it says so and links
            # the window that has them, as an empty window offers one (below)
            feeds = with_wider(db, user, view, feeds_with_unread(db, user, view))
            refresh = refresh_state(db)
            failures = refresh_failures(db, refresh)
            # an empty window of a non-empty archive: the narrowest wider one that has items
            # (of the one feed the view shows: the feeds list's own)
            offer = None
            if not items and view.page == 1 and n_items:
                if not view.filtered:
                    offer = wider_window(db, user, view.days)
                elif view.feed is not None and not (view.tag or view.author or view.topic):
                    offer = next((f["wider"] for f in feeds if f["id"] == view.feed), None)
        held = held_by_clicks(ranking.n_vetoed, ranking.n_clicks)
        return {
            "user": user,
            "items": items,
            "failures": failures,
            "view": view,
            "days": view.days,
            "offer": offer,
            "limit": view.limit,
            "status": status,
            **header_figures(ranking),
            "n_items": n_items,
            "n_pending": n_pending,
            # without "below", the pages run through the items that clear the bar only
            "total": ranking.n_candidates if view.below else ranking.n_above_bar,
            "n_candidates": ranking.n_candidates,
            "n_above": ranking.n_above_bar,
            "n_below": ranking.n_below_bar,
            # an empty bar the click classifier holds: the advice is to rate, not to widen
            "held_advice": f"{held}{RATE_HELD.sentence()}." if held else "",
            "feeds": feeds,
            "feed_name": next((f["title"] for f in feeds if f["id"] == view.feed), None),
            "refresh": refresh,
            "page": "feed",
        }

    context = await run_in_threadpool(build)
    response = render(request, "feed.html", context)
    if remembers_window(context["view"]):
        response.set_cookie(
            window_cookie(context["user"]), context["view"].window, max_age=365 * 86400, httponly=True, samesite="lax"
        )
    return response


async def search(request: Request):
    """The whole archive, in the persona's order: the ``search_feed`` tool's path."""
    params = request.query_params
    query = str(params.get("q") or "").strip()  # as typed: search_feed's model checks it

    def build():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            status = corpus_status(db, tools, user)
            context = {
                "user": user,
                "q": query,
                "items": [],
                "status": status,
                "message": None,
                "page": "search",
                "limit": SEARCH_LIMIT,
            }
            if not query:
                return context
            result = tools.call(
                db, "search_feed", {"query": "The search"}, user=user["name"], query=query, limit=SEARCH_LIMIT
            )
            if result is None:
                return {**context, "message": tools.missing("persona", "search_feed")}
            if not result.get("ok"):
                return {**context, "message": result.get("message")}
            found = result.get("results") or []
            rows = item_rows(db, [r["id"] for r in found])
            items = []
            for r in found:
                item = {
                    **rows.get(r["id"], {}),
                    "rank": r.get("rank"),
                    "clicked": {"like": "liked ✓", "dislike": "disliked ✗"}.get(r.get("rated")),
                }
                if item.get("id"):
                    items.append(item)
            status["experienced"] |= read_among(db, user, [i["id"] for i in items])
        return {**context, "items": items, "message": result.get("message")}

    return render(request, "search.html", await run_in_threadpool(build))


async def explanation(request: Request):
    """Everything the ranking knows about one item for one persona (computed, not stored),
    ranked among the candidates of the feed view it was opened from (the same window, read
    state and filters), and saying which those are."""
    view = parse_view(request.query_params)

    def build():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, view.user)
            item_id = require_item_id(db, request.query_params.get("item_id"), back=view.url())
            try:
                payload = explain(db, user, item_id, query=candidate_query(db, view), pool=view.scope(), store=False)
            except HermesError as exc:
                bad(str(exc))
            item = item_rows(db, [item_id])[item_id]
            clicked = label_of(db, user["id"], item_id)
            status = corpus_status(db, tools, user)
            status["experienced"] |= read_among(db, user, [item_id])
        item["clicked"] = {"like": "liked ✓", "dislike": "disliked ✗"}.get(clicked)
        other = replace(view, days=None if view.days is not None else DEFAULT_DAYS)
        return {
            "user": user,
            "item": item,
            "x": payload,
            "status": status,
            "view": view,
            "rank_line": rank_line(payload),
            "other": other,
            "other_url": other.explain_url(item_id),
            "page": "feed",
        }

    return render(request, "explain.html", await run_in_threadpool(build))


# --- digest, corpus, help ------------------------------------------------------------------------


async def digest(request: Request):
    params = request.query_params

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            # as typed: the digest tool's model reads and checks them (a refusal: a 400 page)
            asked = tools.read(
                "digest",
                {"below_bar": "below"},
                user=user["name"],
                days=params.get("days") or DEFAULT_DAYS,
                per_topic=params.get("per_topic") or None,
                below_bar=params.get("below") or False,
            )
            result = None if asked is None else tools.call(db, "digest", **asked)
            status = corpus_status(db, tools, user)
        days, per_topic, below = (
            (asked["days"], asked["per_topic"], asked["below_bar"]) if asked else (DEFAULT_DAYS, None, False)
        )
        # what the digest ranked: its window, read items included (it leaves out rated ones only)
        ranked_in = View(user=user["name"], days=days, show_read=True)
        listed = _digest_items(result)
        for item in listed:
            item["explain_url"] = ranked_in.explain_url(item["id"])
        return {
            "user": user,
            "result": result,
            "days": days,
            "max_days": MAX_DAYS,
            "per_topic": per_topic,
            "below_shown": below,
            "status": status,
            "saved_section": _section(result, "saved"),
            "below": _section(result, "below_bar"),
            # a saved item the topics already show is named there, not drawn twice
            "listed_above": {item["id"] for item in listed},
            "missing": None if result is not None else tools.missing("digest", "digest"),
            "page": "digest",
        }

    return render(request, "digest.html", await run_in_threadpool(view))


def _digest_items(result: dict | None) -> list[dict]:
    if not result:
        return []
    return (
        [i for t in result.get("topics") or [] for i in t.get("items") or []]
        + list(result.get("unclustered") or [])
        + _section(result, "below_bar")["items"]
    )


def _section(result: dict | None, key: str) -> dict:
    """The digest's ``saved`` or ``below_bar`` section with its ``items`` and ``n_total``
    present. A failed digest carries the section empty (``{}``), where a template's
    ``section["items"]`` falls back to the dict's ``items`` method."""
    section = (result or {}).get(key) or {}
    items = list(section.get("items") or [])
    return {**section, "items": items, "n_total": section.get("n_total") or len(items)}


async def corpus(request: Request):
    params = request.query_params

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            if not tools.has("corpus"):
                return {"user": user, "missing": tools.missing("corpus", "corpus"), "page": "corpus"}
            name = user["name"]
            summary = tools.call(db, "corpus", user=name)
            revision = int((summary or {}).get("revision") or 0)
            ranked = tools.call(db, "corpus_ranked", user=name, limit=100)
            saved = tools.call(db, "corpus_items", user=name, facet="saved")
            experienced = tools.call(db, "corpus_items", user=name, facet="experienced")
            changes = tools.call(db, "corpus_changes", user=name, since=max(0, revision - 30))
            titles = _titles(
                db,
                [
                    *item_ids_of(ranked),
                    *item_ids_of(saved),
                    *item_ids_of(experienced),
                    *item_ids_of(changes, "changes"),
                ],
            )
        return {
            "user": user,
            "summary": summary,
            "ranked": ranked,
            "saved": saved,
            "experienced": experienced,
            "changes": changes,
            "titles": titles,
            "exports": tools.has("export_corpus"),
            "missing": None,
            "page": "corpus",
        }

    return render(request, "corpus.html", await run_in_threadpool(view))


def _titles(db, ids: list[int]) -> dict[int, dict]:
    return item_rows(db, sorted(set(ids)))


async def keys(request: Request):
    """The keyboard shortcuts (what ``?`` shows; a page of its own without script)."""
    user = request.query_params.get("user")

    def view():
        with opened(request) as db:
            return {"user": require_persona(db, user) if user else visitor(request, db), "page": "keys"}

    return render(request, "keys.html", await run_in_threadpool(view))


def routes() -> list[Route]:
    return [
        Route("/", home, methods=["GET"]),
        Route("/personas", create_persona, methods=["POST"]),
        Route("/feed", feed, methods=["GET"]),
        Route("/feed/{persona}.atom", atom.persona_feed, methods=["GET"]),
        Route("/search", search, methods=["GET"]),
        Route("/digest", digest, methods=["GET"]),
        Route("/explain", explanation, methods=["GET"]),
        Route("/corpus", corpus, methods=["GET"]),
        Route("/keys", keys, methods=["GET"]),
        *feeds_page.routes(),
        *persona_page.routes(),
        *actions.routes(),
    ]


__all__ = ["routes"]
