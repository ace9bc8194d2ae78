"""The pages of the web UI and the form actions behind their buttons.

Reads go through the core (``rank_items``, ``require_user``) and the collected tools; clicks
go through :func:`hermes.signals.record_click` with source ``ui`` (the only writer of ``ui``).
Every action is a POST (checked by the CSRF middleware) that redirects back (303) with a
flash message; a GET never changes anything. A tool group that is disabled or missing turns
into a notice on the page, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import math
from contextlib import contextmanager
from datetime import datetime, timezone
from urllib.parse import quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from . import csrf

FLASH_COOKIE = "hermes_flash"
MAX_TEXT = 5000
DEFAULT_DAYS = 7
DEFAULT_LIMIT = 30
# Which plugin group provides a tool, for the "not available" notices.
TOOL_GROUPS = {
    "list_users": "persona", "create_persona": "persona", "profile_status": "persona",
    "digest": "digest",
    "record_progress": "corpus", "favorite": "corpus", "add_highlight": "corpus",
    "corpus": "corpus", "corpus_items": "corpus", "corpus_ranked": "corpus",
    "corpus_changes": "corpus",
    "list_feeds": "feeds", "add_feed": "feeds", "remove_feed": "feeds",
}


# --- small helpers ---------------------------------------------------------------------------

def bad(message: str, status: int = 400):
    raise HTTPException(status, message)


def parse_int(value, what: str, lo: int, hi: int) -> int:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        bad(f"{what} must be a whole number, got {str(value)[:40]!r}")
    if not lo <= number <= hi:
        bad(f"{what} must be between {lo} and {hi}, got {number}")
    return number


def parse_bool(value, what: str) -> bool:
    text = str(value).strip().lower() if value is not None else ""
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    bad(f"{what} must be yes or no, got {text[:40]!r}")


def parse_days(value) -> float | None:
    """``days`` query value: a number of days, or ``all`` for the whole archive."""
    if value in (None, ""):
        return DEFAULT_DAYS
    if str(value).strip().lower() == "all":
        return None
    return parse_int(value, "days", 1, 36500)


def parse_text(value, what: str, *, required: bool, maximum: int = MAX_TEXT) -> str:
    text = (value or "").strip() if isinstance(value, str) else ""
    if required and not text:
        bad(f"{what} is empty; write something first")
    if len(text) > maximum:
        bad(f"{what} is too long ({len(text)} characters; at most {maximum})")
    return text


def local_path(value, default: str) -> str:
    """A redirect target on this server only (no open redirect to another site)."""
    if (isinstance(value, str) and value.startswith("/") and not value.startswith("//")
            and "\\" not in value and not any(ord(c) < 32 for c in value)):
        return value
    return default


def page_url(page: str, user: str, **params) -> str:
    query = {"user": user, **{k: v for k, v in params.items() if v is not None}}
    return f"/{page}?{urlencode(query)}"


@contextmanager
def opened(request: Request):
    from .app import request_db

    db = request_db(request)
    try:
        yield db
    finally:
        db.conn.close()


def require_persona(db, name) -> dict:
    from ..errors import HermesError, NotFound
    from ..signals import require_user

    if not name:
        bad("choose a persona first (the user parameter is missing)")
    try:
        return require_user(db, str(name))
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except HermesError as exc:
        bad(str(exc))


def require_item_id(db, value) -> int:
    from ..errors import NotFound
    from ..signals import require_item

    item_id = parse_int(value, "item_id", 1, 2**62)
    try:
        require_item(db, item_id)
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return item_id


class Tools:
    """The collected tools, called with only the arguments each one accepts."""

    def __init__(self):
        from ..tools import collect_tools

        try:
            self.tools = collect_tools()
        except Exception:  # a broken plugin must not take the UI down with it
            self.tools = {}

    def has(self, name: str) -> bool:
        return name in self.tools

    def missing(self, name: str) -> str:
        group = TOOL_GROUPS.get(name, name)
        return (f"The {group} tools are not available (the {group!r} plugin is disabled or "
                f"not installed), so {name} cannot run here.")

    def call(self, db, name: str, /, **arguments) -> dict | None:
        """The tool's result, or ``None`` when no plugin provides it."""
        from ..tools import call_tool

        tool = self.tools.get(name)
        if tool is None:
            return None
        accepted = {p.name for p in tool.arguments()}
        return call_tool(db, tool, {k: v for k, v in arguments.items() if k in accepted})

    def require(self, db, name: str, /, **arguments) -> dict:
        """For actions: 503 when the tool is missing, 400 with its message when it fails."""
        result = self.call(db, name, **arguments)
        if result is None:
            bad(self.missing(name), 503)
        if not result.get("ok"):
            bad(result.get("message") or f"{name} failed")
        return result


def item_ids_of(result: dict | None, key: str = "items") -> list[int]:
    out = []
    for entry in (result or {}).get(key) or []:
        value = entry.get("item_id", entry.get("id")) if isinstance(entry, dict) else entry
        if isinstance(value, int):
            out.append(value)
    return out


#: How a ranking component reads in the fallback reason (when no explanation is available).
COMPONENT_PHRASES = {
    "profile": "close to the interests text",
    "preference": "tags or sources liked before",
    "classifier": "resembles liked items",
}


def reason_for(db, user: dict, item_id: int, components: dict[str, float]) -> str:
    """The one-line reason an item ranks: the explanation module's when it has one, else
    the ranking components that pushed it up. Never fatal."""
    try:
        from .. import explain as explain_mod
    except ImportError:
        explain_mod = None
    if explain_mod is not None:
        try:
            explanation = explain_mod.explain(db, user, item_id)
        except Exception:
            explanation = None
        if isinstance(explanation, dict):
            for key in ("reason", "summary", "text"):
                if isinstance(explanation.get(key), str) and explanation[key].strip():
                    return explanation[key].strip()
        elif isinstance(explanation, str) and explanation.strip():
            return explanation.strip()
    helping = sorted(((v, n) for n, v in components.items() if v > 0.005),
                     key=lambda vn: (-vn[0], vn[1]))
    if not helping:
        return "no signal favours it strongly; one of the best-ranked unread items"
    return "; ".join(f"{COMPONENT_PHRASES.get(n, n)} ({v:+.2f})" for v, n in helping[:2])


def ranked_items(db, user: dict, *, limit: int, days: float | None) -> tuple[list[dict], object]:
    """The persona's ranked unread items with their reasons (the one ranking path)."""
    from ..rank import CandidateQuery, item_rows, rank

    ranking = rank(db, user, CandidateQuery(since_days=days, exclude_clicked=True), limit=limit)
    rows = item_rows(db, ranking.item_ids)
    items = []
    for position, item_id in enumerate(int(i) for i in ranking.item_ids):
        item = dict(rows[item_id])
        components = {name: float(values[position])
                      for name, values in ranking.contributions.items()
                      if name not in ranking.components or ranking.components[name].active}
        item["rank"] = position + 1
        item["score"] = float(ranking.scores[position])
        item["reason"] = reason_for(db, user, item_id, components)
        items.append(item)
    return items, ranking


# --- flash messages ----------------------------------------------------------------------------

def set_flash(request: Request, response, message: str, kind: str = "ok") -> None:
    raw = f"{kind}:{message[:300]}".encode()
    value = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    signed = csrf.sign(request.app.state.secret_fn(), value)
    response.set_cookie(FLASH_COOKIE, signed, max_age=60, httponly=True, samesite="strict")


def pop_flash(request: Request) -> dict | None:
    value = csrf.unsign(request.app.state.secret_fn(), request.cookies.get(FLASH_COOKIE))
    if not value:
        return None
    try:
        kind, _, message = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return {"kind": kind, "message": message}


def render(request: Request, name: str, context: dict, status: int = 200):
    flash = pop_flash(request)
    context = {
        "csrf_token": request.scope.get("state", {}).get("csrf_token", ""),
        "flash": flash,
        "path": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        **context,
    }
    response = request.app.state.templates.TemplateResponse(
        request, name, context, status_code=status)
    if flash or FLASH_COOKIE in request.cookies:
        response.delete_cookie(FLASH_COOKIE)
    return response


def redirect(request: Request, to: str, message: str | None = None):
    response = RedirectResponse(to, status_code=303)
    if message:
        set_flash(request, response, message)
    return response


# --- template filters --------------------------------------------------------------------------

def fmt_date(value) -> str:
    """``2026-11-02`` from an ISO timestamp (or the text itself when it is not one)."""
    if not value:
        return ""
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)[:10]
    return when.strftime("%Y-%m-%d")


def fmt_ago(value) -> str:
    if not value:
        return ""
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    seconds = (datetime.now(timezone.utc) - when).total_seconds()
    if seconds < 0:
        return "scheduled"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def fmt_pct(value) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(number) else f"{number:.0%}"


def fmt_num(value, digits: int = 2) -> str:
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return ""


def fmt_signals(row) -> str:
    """``read 100% · 2 highlights · ★`` for a corpus_ranked row."""
    if not isinstance(row, dict):
        return ""

    def n(count, word):
        return f"{count} {word}{'' if count == 1 else 's'}"

    bits = []
    if row.get("max_fraction"):
        bits.append(f"read {fmt_pct(row['max_fraction'])}")
    if row.get("highlights"):
        bits.append(n(row["highlights"], "highlight"))
    if row.get("notes"):
        bits.append(n(row["notes"], "note"))
    if row.get("favorited"):
        bits.append("★ saved")
    if row.get("reopens"):
        bits.append(n(row["reopens"], "re-read"))
    return " · ".join(bits)


FILTERS = {"signals": fmt_signals, "date": fmt_date, "ago": fmt_ago, "pct": fmt_pct, "num": fmt_num,
           "q": lambda v: quote(str(v), safe="")}


# --- pages ------------------------------------------------------------------------------------

def _personas(db, tools: Tools) -> tuple[list[dict], str | None]:
    rows = db.execute(
        "SELECT u.id, u.name, u.interests, "
        "(SELECT count(*) FROM clicks c WHERE c.user_id = u.id) FROM users u ORDER BY u.name"
    ).fetchall()
    people = [{"id": r[0], "name": r[1], "interests": r[2], "clicks": r[3]} for r in rows]
    note = None if tools.has("create_persona") else tools.missing("create_persona")
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
            return Tools().require(db, "create_persona", name=name, interests=interests)

    result = await run_in_threadpool(act)
    return redirect(request, page_url("feed", name), result.get("message") or f"Created {name}.")


async def feed(request: Request):
    params = request.query_params
    days = parse_days(params.get("days"))
    limit = parse_int(params.get("limit", DEFAULT_LIMIT), "limit", 1, 200)

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            items, ranking = ranked_items(db, user, limit=limit, days=days)
            status = corpus_status(db, tools, user)
            n_items = db.execute("SELECT count(*) FROM items").fetchone()[0]
        return {"user": user, "items": items, "days": days, "limit": limit, "status": status,
                "n_clicks": ranking.n_clicks, "behaviour_weight": ranking.blend_weight,
                "n_items": n_items, "page": "feed"}

    return render(request, "feed.html", await run_in_threadpool(view))


def corpus_status(db, tools: Tools, user: dict) -> dict:
    """Which items the persona has read/captured (experienced) or saved, for the badges."""
    if not tools.has("corpus_items"):
        return {"available": False, "note": tools.missing("corpus_items"),
                "experienced": set(), "saved": set(), "favorited": set(), "highlights": {}}
    experienced = tools.call(db, "corpus_items", user=user["name"], facet="experienced", limit=500)
    saved = tools.call(db, "corpus_items", user=user["name"], facet="saved", limit=500)
    ranked = tools.call(db, "corpus_ranked", user=user["name"], limit=200)
    favorited = set(item_ids_of(saved))
    highlights = {}
    for entry in (ranked or {}).get("items") or []:
        if not isinstance(entry, dict):
            continue
        item_id = entry.get("item_id", entry.get("id"))
        if entry.get("favorited"):
            favorited.add(item_id)
        if entry.get("highlights"):
            highlights[item_id] = entry["highlights"]
    return {"available": True, "note": None, "experienced": set(item_ids_of(experienced)),
            "saved": set(item_ids_of(saved)), "favorited": favorited, "highlights": highlights,
            "can_read": tools.has("record_progress"), "can_favorite": tools.has("favorite"),
            "can_highlight": tools.has("add_highlight")}


async def digest(request: Request):
    params = request.query_params
    days = parse_int(params.get("days", DEFAULT_DAYS), "days", 1, 365)

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            result = tools.call(db, "digest", user=user["name"], days=days)
            status = corpus_status(db, tools, user)
        return {"user": user, "result": result, "days": days, "status": status,
                "missing": None if result is not None else tools.missing("digest"),
                "page": "digest"}

    return render(request, "digest.html", await run_in_threadpool(view))


async def corpus(request: Request):
    params = request.query_params

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, params.get("user"))
            if not tools.has("corpus"):
                return {"user": user, "missing": tools.missing("corpus"), "page": "corpus"}
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
                "missing": None, "page": "corpus"}

    return render(request, "corpus.html", await run_in_threadpool(view))


def _titles(db, ids: list[int]) -> dict[int, dict]:
    from ..rank import item_rows

    return item_rows(db, sorted(set(ids)))


async def feeds(request: Request):
    return render(request, "feeds.html", await run_in_threadpool(_feeds_context, request))


def _feeds_context(request: Request, **extra) -> dict:
    tools = Tools()
    with opened(request) as db:
        result = tools.call(db, "list_feeds")
    return {"result": result, "missing": None if result is not None else tools.missing("list_feeds"),
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
            bad(tools.missing("add_feed"), 503)
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
            bad(tools.missing("remove_feed"), 503)
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
            return Tools().require(db, "remove_feed", feed_id=feed_id, confirm=True)

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
    return title if len(title) <= 80 else title[:79] + "…"


async def click(request: Request):
    def work(db, tools, user, item_id, form):
        from ..signals import record_click

        liked = parse_bool(form.get("liked"), "liked")
        # The web UI is the only writer of source 'ui': a person pressed the button.
        record_click(db, user["id"], item_id, liked, source="ui")
        mark = "✓" if liked else "✗"
        return f"{mark} {_title(db, item_id)}"

    return await _item_action(request, work)


async def mark_read(request: Request):
    def work(db, tools, user, item_id, form):
        tools.require(db, "record_progress", user=user["name"], item_id=item_id, fraction=1.0)
        return f"Marked as read: {_title(db, item_id)}"

    return await _item_action(request, work)


async def favorite(request: Request):
    def work(db, tools, user, item_id, form):
        on = parse_bool(form.get("on", "1"), "on")
        tools.require(db, "favorite", user=user["name"], item_id=item_id, on=on)
        return f"{'Saved' if on else 'Unsaved'}: {_title(db, item_id)}"

    return await _item_action(request, work)


async def highlight(request: Request):
    def work(db, tools, user, item_id, form):
        text = parse_text(form.get("text"), "The highlighted passage", required=True)
        note = parse_text(form.get("note"), "The note", required=False) or None
        tools.require(db, "add_highlight", user=user["name"], item_id=item_id, text=text,
                      note=note)
        return f"Highlight saved{' with a note' if note else ''}: {_title(db, item_id)}"

    return await _item_action(request, work)


def routes() -> list[Route]:
    return [
        Route("/", home, methods=["GET"]),
        Route("/personas", create_persona, methods=["POST"]),
        Route("/feed", feed, methods=["GET"]),
        Route("/digest", digest, methods=["GET"]),
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
