"""The pages of the web UI and the form actions behind their buttons.

Reads go through the core (the ranking, ``require_user``) and the collected tools; clicks go
through :func:`hermes.storage.signals.record_click` with source ``ui`` (the only writer of ``ui``).
Every action is a POST (checked by the CSRF middleware) that redirects back (303) with a
flash message; a GET never changes anything. A tool group that is disabled or missing turns
into a notice on the page, never a crash.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.routing import Route

from ..errors import HermesError
from ..ranking.explain import explain, rank_line
from ..records import item_rows
from ..storage.signals import record_click
from ..text import clip
from .access import (
    Tools,
    corpus_status,
    item_ids_of,
    opened,
    ranked_items,
    require_item_id,
    require_persona,
)
from .forms import DEFAULT_DAYS, bad, local_path, parse_bool, parse_days, parse_int, parse_text
from .render import page_url, redirect, render

DEFAULT_LIMIT = 30


# --- pages ------------------------------------------------------------------------------------

def _personas(db, tools: Tools) -> tuple[list[dict], str | None]:
    rows = db.execute(
        "SELECT u.id, u.name, u.interests, "
        "(SELECT count(*) FROM clicks c WHERE c.user_id = u.id) FROM users u ORDER BY u.name"
    ).fetchall()
    people = [{"id": r[0], "name": r[1], "interests": r[2], "clicks": r[3]} for r in rows]
    note = None if tools.has("create_persona") else tools.missing("persona", "create_persona")
    return people, note


async def home(request: Request):
    def view():
        tools = Tools()
        with opened(request) as db:
            people, note = _personas(db, tools)
            n_items = db.execute("SELECT count(*) FROM items").fetchone()[0]
            n_feeds = db.execute("SELECT count(*) FROM feeds").fetchone()[0]
        return {"people": people, "create_note": note, "n_items": n_items, "n_feeds": n_feeds,
                "page": "home"}

    return render(request, "personas.html", await run_in_threadpool(view))


async def create_persona(request: Request):
    form = await request.form()
    name = parse_text(form.get("name"), "The persona's name", required=True, maximum=200)
    interests = parse_text(form.get("interests"), "The interests text", required=True)

    def act():
        with opened(request) as db:
            return Tools().require(db, "persona", "create_persona", name=name, interests=interests)

    result = await run_in_threadpool(act)
    return redirect(request, page_url("feed", name), result.get("message") or f"Created {name}.")


async def feed(request: Request):
    params = request.query_params
    days = parse_days(params.get("days"))
    limit = parse_int(params.get("limit", DEFAULT_LIMIT), "limit", 1, 200)
    below = parse_bool(params.get("below", "0"), "below")

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            items, ranking = ranked_items(db, user, limit=limit, days=days, below_bar=below)
            status = corpus_status(db, tools, user)
            n_items = db.execute("SELECT count(*) FROM items").fetchone()[0]
        return {"user": user, "items": [i for i in items if i["above_bar"]],
                "below_items": [i for i in items if not i["above_bar"]], "below": below,
                "n_above": ranking.n_above_bar, "n_below": ranking.n_below_bar,
                "n_candidates": ranking.n_candidates, "days": days, "limit": limit,
                "status": status, "n_clicks": ranking.n_clicks,
                "behaviour_weight": ranking.blend_weight, "n_items": n_items, "page": "feed"}

    return render(request, "feed.html", await run_in_threadpool(view))


async def explanation(request: Request):
    """Everything the ranking knows about one item for one persona (computed, not stored),
    ranked within the window the feed showed (``days``, as on the feed page)."""
    params = request.query_params
    days = parse_days(params.get("days"))

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            item_id = require_item_id(db, params.get("item_id"))
            try:
                payload = explain(db, user, item_id, since_days=days, store=False)
            except HermesError as exc:
                bad(str(exc))
            item = item_rows(db, [item_id])[item_id]
            clicked = db.execute("SELECT label FROM clicks WHERE user_id = ? AND item_id = ?",
                                 [user["id"], item_id]).fetchone()
            status = corpus_status(db, tools, user)
        item["clicked"] = {"like": "liked ✓", "dislike": "disliked ✗"}.get(clicked[0]) if clicked else None
        item["match"], item["window"] = payload["match"], "all" if days is None else f"{days:g}"
        return {"user": user, "item": item, "x": payload, "status": status, "days": days,
                "rank_line": rank_line(payload), "page": "feed"}

    return render(request, "explain.html", await run_in_threadpool(view))


async def digest(request: Request):
    params = request.query_params
    days = parse_int(params.get("days", DEFAULT_DAYS), "days", 1, 365)
    per_topic = parse_int(params.get("per_topic", 3), "per_topic", 1, 50)

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            result = tools.call(db, "digest", user=user["name"], days=days, per_topic=per_topic)
            status = corpus_status(db, tools, user)
        return {"user": user, "result": result, "days": days, "per_topic": per_topic,
                "status": status,
                "missing": None if result is not None else tools.missing("digest", "digest"),
                "page": "digest"}

    return render(request, "digest.html", await run_in_threadpool(view))


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
            titles = _titles(db, [*item_ids_of(ranked), *item_ids_of(saved),
                                  *item_ids_of(experienced), *item_ids_of(changes, "changes")])
        return {"user": user, "summary": summary, "ranked": ranked, "saved": saved,
                "experienced": experienced, "changes": changes, "titles": titles,
                "exports": tools.has("export_corpus"), "missing": None, "page": "corpus"}

    return render(request, "corpus.html", await run_in_threadpool(view))


def _titles(db, ids: list[int]) -> dict[int, dict]:
    return item_rows(db, sorted(set(ids)))


async def feeds(request: Request):
    return render(request, "feeds.html", await run_in_threadpool(_feeds_context, request))


def _feeds_context(request: Request, **extra) -> dict:
    tools = Tools()
    with opened(request) as db:
        result = tools.call(db, "list_feeds")
    return {"result": result, "missing": None if result is not None else tools.missing("feeds", "list_feeds"),
            "can_add": tools.has("add_feed"), "can_remove": tools.has("remove_feed"),
            "page": "feeds", "form": {}, "form_error": None, **extra}


async def add_feed(request: Request):
    form = await request.form()
    url = parse_text(form.get("url"), "The feed URL", required=True, maximum=2000)
    title = parse_text(form.get("title"), "The title", required=False, maximum=200) or None
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in {"http", "https"}:
        bad(f"the feed URL must start with http:// or https://, got {url[:80]!r}")

    def act():
        tools = Tools()
        with opened(request) as db:
            result = tools.call(db, "add_feed", url=url, title=title)
        if result is None:
            bad(tools.missing("feeds", "add_feed"), 503)
        return result

    result = await run_in_threadpool(act)
    if not result.get("ok"):
        # Show the form again with what was typed and why it was refused.
        context = await run_in_threadpool(
            _feeds_context, request, form={"url": url, "title": title or ""},
            form_error=result.get("message") or "the feed could not be added")
        return render(request, "feeds.html", context, status=400)
    return redirect(request, "/feeds", result.get("message") or "Feed added.")


async def confirm_remove_feed(request: Request):
    feed_id = request.path_params["feed_id"]

    def view():
        tools = Tools()
        with opened(request) as db:
            row = db.execute("SELECT id, title, url FROM feeds WHERE id = ?", [feed_id]).fetchone()
            if row is None:
                bad(f"unknown feed {feed_id}; see the list of feeds", 404)
            # confirm=False mutates nothing and says exactly what removal would do.
            preview = tools.call(db, "remove_feed", feed_id=feed_id, confirm=False)
        if preview is None:
            bad(tools.missing("feeds", "remove_feed"), 503)
        return {"feed": {"id": row[0], "title": row[1], "url": row[2]},
                "preview": preview.get("message", ""), "page": "feeds"}

    return render(request, "feed_remove.html", await run_in_threadpool(view))


async def remove_feed(request: Request):
    feed_id = request.path_params["feed_id"]
    form = await request.form()
    if form.get("confirm") != "yes":
        bad("removal was not confirmed; use the Remove button on the confirmation page")

    def act():
        with opened(request) as db:
            if db.execute("SELECT 1 FROM feeds WHERE id = ?", [feed_id]).fetchone() is None:
                bad(f"unknown feed {feed_id}; it may have been removed already", 404)
            return Tools().require(db, "feeds", "remove_feed", feed_id=feed_id, confirm=True)

    result = await run_in_threadpool(act)
    return redirect(request, "/feeds", result.get("message") or "Feed removed.")


# --- item actions -------------------------------------------------------------------------------

async def _item_action(request: Request, work):
    """Parse ``user``/``item_id``/``next``, run ``work(db, tools, user, item_id, form)`` in a
    thread, and redirect back to the page the button was on with its message."""
    form = await request.form()

    def act():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, form.get("user"))
            item_id = require_item_id(db, form.get("item_id"))
            return user, work(db, tools, user, item_id, form)

    user, message = await run_in_threadpool(act)
    back = local_path(form.get("next"), page_url("feed", user["name"]))
    return redirect(request, back, message)


def _title(db, item_id: int) -> str:
    row = db.execute("SELECT title FROM items WHERE id = ?", [item_id]).fetchone()
    title = (row[0] if row else "") or f"item {item_id}"
    return clip(title, 80)


async def click(request: Request):
    def work(db, tools, user, item_id, form):
        liked = parse_bool(form.get("liked"), "liked")
        # The web UI is the only writer of source 'ui': a person pressed the button.
        record_click(db, user["id"], item_id, liked, source="ui")
        mark = "✓" if liked else "✗"
        return f"{mark} {_title(db, item_id)}"

    return await _item_action(request, work)


async def mark_read(request: Request):
    def work(db, tools, user, item_id, form):
        tools.require(db, "corpus", "record_progress", user=user["name"], item_id=item_id, fraction=1.0)
        return f"Marked as read: {_title(db, item_id)}"

    return await _item_action(request, work)


async def favorite(request: Request):
    def work(db, tools, user, item_id, form):
        on = parse_bool(form.get("on", "1"), "on")
        tools.require(db, "corpus", "favorite", user=user["name"], item_id=item_id, on=on)
        return f"{'Saved' if on else 'Unsaved'}: {_title(db, item_id)}"

    return await _item_action(request, work)


async def highlight(request: Request):
    def work(db, tools, user, item_id, form):
        text = parse_text(form.get("text"), "The highlighted passage", required=True)
        note = parse_text(form.get("note"), "The note", required=False) or None
        tools.require(db, "corpus", "add_highlight", user=user["name"], item_id=item_id, text=text,
                      note=note)
        return f"Highlight saved{' with a note' if note else ''}: {_title(db, item_id)}"

    return await _item_action(request, work)


def routes() -> list[Route]:
    return [
        Route("/", home, methods=["GET"]),
        Route("/personas", create_persona, methods=["POST"]),
        Route("/feed", feed, methods=["GET"]),
        Route("/digest", digest, methods=["GET"]),
        Route("/explain", explanation, methods=["GET"]),
        Route("/corpus", corpus, methods=["GET"]),
        Route("/feeds", feeds, methods=["GET"]),
        Route("/feeds", add_feed, methods=["POST"]),
        Route("/feeds/{feed_id:int}/remove", confirm_remove_feed, methods=["GET"]),
        Route("/feeds/{feed_id:int}/remove", remove_feed, methods=["POST"]),
        Route("/click", click, methods=["POST"]),
        Route("/read", mark_read, methods=["POST"]),
        Route("/favorite", favorite, methods=["POST"]),
        Route("/highlight", highlight, methods=["POST"]),
    ]
