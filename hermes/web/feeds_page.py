"""The feeds page: subscriptions with their health and schedule, add / rename / remove, and
the refresh (when the last was, when the next is, "Refresh now" with its progress)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hermes.facekit.faces import plural
from hermes.storage.records import feed_row

from ..ingest.refresher import active, refresh_state
from .access import Tools, opened, visitor
from .feed_health import next_step, refresh_failures
from .forms import as_typed, bad, path_id
from .render import done, redirect, render, with_user


async def feeds(request: Request):
    return render(request, "feeds.html", await run_in_threadpool(_feeds_context, request))


def _back(request: Request, anchor: str = "") -> str:
    """The Feeds page an action returns to, for the persona it came from (its forms name
    the persona :func:`.access.visitor` found)."""
    return with_user("/feeds", request.query_params.get("user"), anchor)


def _feeds_context(request: Request, **extra) -> dict:
    tools = Tools()
    with opened(request) as db:
        user = visitor(request, db)
        result = tools.call(db, "list_feeds")
        refresh = (result or {}).get("refresh") or {}
        failures = refresh_failures(db, refresh)
    steps = {f["id"]: next_step(f, refresh) for f in (result or {}).get("feeds") or [] if f.get("last_error")}
    return {
        "result": result,
        "failures": failures,
        "steps": steps,
        "missing": None if result is not None else tools.missing("feeds", "list_feeds"),
        "can_add": tools.has("add_feed"),
        "can_remove": tools.has("remove_feed"),
        "can_rename": tools.has("rename_feed"),
        "refresh": refresh,
        "page": "feeds",
        "user": user,
        "form": {},
        "form_error": None,
        **extra,
    }


async def add_feed(request: Request):
    form = await request.form()
    typed = {"url": str(form.get("url") or "")[:2000], "title": str(form.get("title") or "")[:200]}
    url, title = as_typed(form, "url"), as_typed(form, "title") or None
    try:
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme not in {"http", "https"}:
            bad(
                f"the feed URL must start with http:// or https://, got {url[:80]!r} (a feed "
                "file on this computer is subscribed at the terminal: hermes feeds add PATH)"
            )
    except HTTPException as exc:  # a mistyped value: said next to the form, not on a bare page
        return await _form_again(request, typed, exc.detail)

    def act():
        tools = Tools()
        with opened(request) as db:
            # Here, not at the top: the ingest modules load httpx, which loads only when a
            # feed is fetched or read (as add_feed is about to).
            from ..ingest.feedlist import find_feed

            # A feed this page lists already is said so before any fetch: the tool hears of
            # it only after the private-address guard let the fetch through (an agent must
            # not learn which LAN addresses are feeds), which answered a person's loopback
            # feed with "refused: private address" (a trial's finding).
            existing = find_feed(db, url)
            if existing:
                return {"ok": True, "already_subscribed": True, "feed": existing}
            result = tools.call(db, "add_feed", {"url": "The feed URL", "title": "The title"}, url=url, title=title)
        if result is None:
            bad(tools.missing("feeds", "add_feed"), 503)
        return result

    result = await run_in_threadpool(act)
    if result.get("server_error"):  # a full disk, a bug: not something to retype
        bad(result.get("message") or "the feed could not be added", 500)
    if not result.get("ok"):
        return await _form_again(request, typed, result.get("message") or "the feed could not be added")
    feed = result.get("feed") or {}
    if result.get("already_subscribed"):
        name = f" “{feed['title']}”" if feed.get("title") else ""
        return redirect(
            request,
            _back(request, f"#feed-{feed.get('id')}"),
            f"Already subscribed: feed {feed.get('id')}{name} has this URL; nothing changed.",
        )
    # Here, not at the top: the ingest modules load httpx, which loads only when a feed is
    # fetched or read (as add_feed just did).
    from ..ingest.feedlist import taken_back

    back = taken_back(feed, show=lambda value: f"“{value}”")
    return redirect(
        request,
        _back(request),
        f"Feed {feed.get('id')} added: its items arrive with the "
        f"next refresh (Refresh now fetches it at once).{' ' + back if back else ''}",
    )


async def _form_again(request: Request, typed: dict, message: str):
    """The feeds page again (status 400) with what was typed and why it was refused."""
    context = await run_in_threadpool(_feeds_context, request, form=typed, form_error=message[:1].upper() + message[1:])
    return render(request, "feeds.html", context, status=400)


def _known_feed(db, feed_id: int) -> dict:
    feed = feed_row(db, feed_id)
    if feed is None:
        bad(f"unknown feed {feed_id}; it may have been removed (see the list of feeds)", 404)
    return feed


async def rename_feed(request: Request):
    feed_id = path_id(request, "feed_id", "feed")
    form = await request.form()
    title = as_typed(form, "title")

    def act():
        with opened(request) as db:
            _known_feed(db, feed_id)
            return Tools().require(db, "feeds", "rename_feed", {"title": "The new title"}, feed_id=feed_id, title=title)

    result = await run_in_threadpool(act)
    return redirect(
        request, _back(request, f"#feed-{feed_id}"), f"Renamed feed {feed_id} to “{result['feed']['title']}”."
    )


async def confirm_remove_feed(request: Request):
    feed_id = path_id(request, "feed_id", "feed")

    def view():
        tools = Tools()
        with opened(request) as db:
            feed = _known_feed(db, feed_id)
            # confirm=False mutates nothing and says exactly what removal would do.
            preview = tools.call(db, "remove_feed", feed_id=feed_id, confirm=False)
            user = visitor(request, db)
        if preview is None:
            bad(tools.missing("feeds", "remove_feed"), 503)
        plan = preview.get("feed") or {}
        return {
            "feed": feed,
            "items": plan.get("item_count", 0),
            "clicks": plan.get("click_count", 0),
            "page": "feeds",
            "user": user,
        }

    return render(request, "feed_remove.html", await run_in_threadpool(view))


async def remove_feed(request: Request):
    feed_id = path_id(request, "feed_id", "feed")
    form = await request.form()
    if form.get("confirm") != "yes":
        bad("removal was not confirmed; use the Remove button on the confirmation page")

    def act():
        with opened(request) as db:
            feed = _known_feed(db, feed_id)
            result = Tools().require(db, "feeds", "remove_feed", feed_id=feed_id, confirm=True)
            return {**feed, **(result.get("feed") or {})}

    feed = await run_in_threadpool(act)
    return redirect(request, _back(request), f"Removed “{feed['title'] or feed['url']}”{_kept(feed)}.")


def _kept(feed: dict) -> str:
    """What the archive keeps of a removed feed, said only when there is something: a feed
    never fetched has no items (nor ratings) to keep."""
    items, clicks = feed.get("item_count") or 0, feed.get("click_count") or 0
    if not items:
        return ""
    rated = f" and your {plural(clicks, 'rating')} of them" if clicks else ""
    return f": its {plural(items, 'item')}{rated} {'is' if items == 1 and not clicks else 'are'} kept"


def _refresher(request: Request):
    return active(request.app.state.db_path)


async def refresh_now(request: Request):
    """The "Refresh now" button: every feed, now, in the background."""
    refresher = _refresher(request)
    if refresher is None:
        bad(
            "this server does not refresh feeds (it was not started by `hermes web`); "
            "run `hermes ingest` in a terminal",
            503,
        )
    started, message = refresher.refresh_now()
    back = _back(request, "#refresh" if started else "")
    return done(request, back, message, kind="ok" if started else "info", started=started)


async def refresh_status(request: Request):
    """The refresh state as JSON (the progress bar polls it), with ``failures``: how many
    feeds the last refresh could not fetch and where the Feeds page shows why. Read-only."""

    def read():
        with opened(request) as db:
            state = refresh_state(db)
            state["failures"] = refresh_failures(db, state)
        state.pop("due", None)
        return state

    return JSONResponse({"ok": True, **await run_in_threadpool(read)})


def routes() -> list[Route]:
    return [
        Route("/feeds", feeds, methods=["GET"]),
        Route("/feeds", add_feed, methods=["POST"]),
        Route("/feeds/{feed_id:int}/rename", rename_feed, methods=["POST"]),
        Route("/feeds/{feed_id:int}/remove", confirm_remove_feed, methods=["GET"]),
        Route("/feeds/{feed_id:int}/remove", remove_feed, methods=["POST"]),
        Route("/refresh", refresh_now, methods=["POST"]),
        Route("/api/refresh", refresh_status, methods=["GET"]),
    ]
