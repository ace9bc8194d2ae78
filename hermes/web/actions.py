"""What the buttons do: like / dislike, read / unread, open, save, highlight, mark all
read, the density preference — each a POST (checked by the CSRF middleware), each undoable.

Every action goes through the tool path with source ``ui`` (a person pressed the button): a
like or dislike through ``record_feedback``, taking one back through ``remove_feedback``,
read state, opens and favorites through the corpus tools. Every answer carries an ``undo``: the POST that puts
things back (the change log records a removal as a tombstone). A script gets JSON and the
page stays put; without script the answer is a redirect back to the same place
(``#item-N``) with the message and its Undo button. The JSON of a rating or a read also
carries the feed page's figures it changed (the header's clicks and weight, the unread counts),
rendered as a reload renders them.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from hermes.facekit.faces import plural
from hermes.storage.records import item_title, item_url
from hermes.text.clip import clip
from hermes.text.latex import readable

from ..ranking.rank import rank
from ..storage.clicks import label_of
from .access import Tools, opened, require_item_id, require_persona
from .forms import ITEM_LABEL, Refusal, as_typed, bad, local_path, read
from .render import DENSITIES, DENSITY_COOKIE, done, macro_text, page_url, render, wants_json
from .sanitize import safe_url
from .views import (
    candidate_query,
    feed_view,
    feeds_with_unread,
    header_figures,
    in_window,
    rated_among,
    read_among,
)

#: how a refusal names the on / off field of a button
ON_LABEL = {"on": "The on / off choice"}


def _title(db, item_id: int) -> str:
    # shown to a person (a toast): LaTeX as Unicode, like the card it names
    return clip(readable(item_title(db, item_id) or f"item {item_id}"), 80)


def _undo(action: str, user: dict, label: str = "Undo", **fields) -> dict:
    return {
        "action": action,
        "label": label,
        "fields": {"user": user["name"], **{k: str(v) for k, v in fields.items()}},
    }


async def _in_thread(form, act):
    """``act()`` in a worker thread; a refusal (an item or persona that is gone) answers a
    page that links back to the page the button was on."""
    try:
        return await run_in_threadpool(act)
    except HTTPException as exc:
        if isinstance(exc, Refusal):
            raise
        raise Refusal(exc.status_code, exc.detail, local_path(form.get("next"), "/")) from None


async def _item_action(request: Request, work):
    """Parse ``user``/``item_id``/``next``, run ``work(db, tools, user, item_id, form)`` in a
    thread (it returns the answer's fields: ``message``, ``kind``, ``undo``, state), answer."""
    form = await request.form()

    def act():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, form.get("user"))
            item_id = require_item_id(db, form.get("item_id"))
            return user, item_id, work(db, tools, user, item_id, form)

    user, item_id, answer = await _in_thread(form, act)
    back = local_path(form.get("next"), page_url("feed", user["name"]))
    return done(request, back, answer.pop("message"), item_id=item_id, **answer)


def _feed_figures(request: Request, db, user: dict, back: str) -> dict | None:
    """The figures a rating or a read changes on the feed page it was made on — the clicks
    and the weight they get in the header, the unread count of each feed — rendered as a
    reload would render them, by the name of the element that shows each (``data-figure``).
    None off the feed page, and without script (the redirect renders the page anew)."""
    view = feed_view(back)
    if view is None or view.user != user["name"] or not wants_json(request):
        return None
    view = in_window(db, user, view, request.cookies)
    # the weight is the blend's over this view's candidates (it is 0 where behaviour cannot
    # tell them apart), so the view is ranked again, as the page was
    ranking = rank(db, user, candidate_query(db, view), limit=1)
    figures = {"stats": macro_text(request, "_macros.html", "feed_stats", **header_figures(ranking))}
    for f in feeds_with_unread(db, user, view):
        figures[f"unread-{f['id']}"] = str(f["unread"])
    return figures


def _label(value: str | None) -> str:
    return {"like": "1", "dislike": "0"}.get(value or "", "none")


async def click(request: Request):
    def work(db, tools, user, item_id, form):
        choice = read(form, "liked", labels={"liked": "The rating"}, required=("liked",)).liked
        before = label_of(db, user["id"], item_id)
        if choice == "none":
            tools.require(db, "feeds", "remove_feedback", user=user["name"], item_id=item_id)
            after, message, kind = None, f"Rating taken back: {_title(db, item_id)}", "ok"
        else:
            liked = choice == "like"
            tools.require(db, "feeds", "record_feedback", user=user["name"], item_id=item_id, liked=liked)
            after = "like" if liked else "dislike"
            message = f"{'✓ More' if liked else '✗ Less'} like this: {_title(db, item_id)}"
            kind = after
        return {
            "message": message,
            "kind": kind,
            "clicked": after,
            "undo": _undo("/click", user, item_id=item_id, liked=_label(before)),
            "figures": _feed_figures(request, db, user, local_path(form.get("next"), "")),
        }

    return await _item_action(request, work)


async def mark_read(request: Request):
    """Mark read (``on=1``, reading progress 1.0) or unread again (``on=0``)."""

    def work(db, tools, user, item_id, form):
        on = read(form, "on", labels=ON_LABEL).on
        if on:
            # A person saying "I read it" is a reading session (as an open is); only the bulk
            # "mark these read" is not.
            tools.require(
                db, "corpus", "record_progress", user=user["name"], item_id=item_id, fraction=1.0, new_session=True
            )
            message = f"Marked read: {_title(db, item_id)}"
        else:
            tools.require(db, "corpus", "mark_unread", user=user["name"], item_id=item_id)
            message = f"Unread again: {_title(db, item_id)}"
        return {
            "message": message,
            "read": on,
            "undo": _undo("/read", user, item_id=item_id, on=0 if on else 1),
            "figures": _feed_figures(request, db, user, local_path(form.get("next"), "")),
        }

    return await _item_action(request, work)


async def open_item(request: Request):
    """The title link: record that the item was opened (it is read now), then go to it.

    A POST, because it writes; the answer is a page that moves on to the item's address
    (a redirect would be stopped by the ``form-action 'self'`` policy)."""
    form = await request.form()

    def act():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, form.get("user"))
            item_id = require_item_id(db, form.get("item_id"))
            url = safe_url(item_url(db, item_id))
            if url is None:
                bad("this item has no web address to open")
            if tools.has("record_progress"):
                # An open is a reading session: it counts towards re-reads.
                tools.require(
                    db, "corpus", "record_progress", user=user["name"], item_id=item_id, fraction=1.0, new_session=True
                )
            figures = _feed_figures(request, db, user, local_path(form.get("next"), ""))
            return user, item_id, url, _title(db, item_id), figures

    user, item_id, url, title, figures = await _in_thread(form, act)

    if wants_json(request):
        return done(
            request,
            "",
            f"Opened, marked read: {title}",
            item_id=item_id,
            read=True,
            url=url,
            undo=_undo("/read", user, item_id=item_id, on=0),
            figures=figures,
        )
    return render(request, "open.html", {"url": url, "title": title, "user": user, "page": "feed"})


async def favorite(request: Request):
    def work(db, tools, user, item_id, form):
        on = read(form, "on", labels=ON_LABEL).on
        tools.require(db, "corpus", "favorite", user=user["name"], item_id=item_id, on=on)
        return {
            "message": f"{'Saved' if on else 'Unsaved'}: {_title(db, item_id)}",
            "saved": on,
            "undo": _undo("/favorite", user, item_id=item_id, on=0 if on else 1),
        }

    return await _item_action(request, work)


async def highlight(request: Request):
    def work(db, tools, user, item_id, form):
        note = as_typed(form, "note") or None
        result = tools.require(
            db,
            "corpus",
            "add_highlight",
            {"text": "The highlighted passage", "note": "The note"},
            user=user["name"],
            item_id=item_id,
            text=as_typed(form, "text"),
            note=note,
        )
        return {
            "message": f"Highlight saved{' with a note' if note else ''}: {_title(db, item_id)}",
            "read": result.get("facet") == "experienced",
            "undo": None,
        }

    return await _item_action(request, work)


async def read_all(request: Request):
    """Mark every item of a view read (``on=1``), or take that back (``on=0``, the undo).

    "Mark these read" lists the page's unread, unrated items as the page was loaded; an item
    rated since is left out here (it has left the unread view, and the person did not mean
    it), so the button does what it says with or without script. One read since is already
    read, and is not counted either."""
    form = await request.form()
    on = read(form, "on", labels=ON_LABEL).on
    ids = list(dict.fromkeys(read(form, "item_ids", labels=ITEM_LABEL).item_ids))
    if not ids:
        bad("no items to mark: this view is empty")

    def act():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, form.get("user"))
            for item_id in ids:
                require_item_id(db, item_id)
            already = read_among(db, user, ids)
            rated = rated_among(db, user, ids) if on else set()
            changed = [i for i in ids if (i not in already) == on and i not in rated]
            for item_id in changed:
                if on:
                    tools.require(
                        db,
                        "corpus",
                        "record_progress",
                        user=user["name"],
                        item_id=item_id,
                        fraction=1.0,
                        new_session=False,
                    )
                else:
                    tools.require(db, "corpus", "mark_unread", user=user["name"], item_id=item_id)
            figures = _feed_figures(request, db, user, local_path(form.get("next"), ""))
        return user, changed, len(rated - already), figures

    user, changed, skipped, figures = await _in_thread(form, act)
    n = len(changed)
    message = f"Marked {plural(n, 'item')} read" if on else f"{plural(n, 'item')} unread again"
    if skipped:
        message += f" (not the {skipped} you rated)"
    undo = _undo("/read-all", user, item_ids=",".join(map(str, changed)), on=0 if on else 1) if changed else None
    back = local_path(form.get("next"), page_url("feed", user["name"]))
    return done(request, back, message, undo=undo, item_ids=changed, read=on, figures=figures)


async def prefs(request: Request):
    """The reading density (a cookie: how the page looks, not data)."""
    form = await request.form()
    value = form.get("density")
    if value not in DENSITIES:
        bad(f"density must be one of {', '.join(DENSITIES)}, got {str(value)[:40]!r}")
    response = RedirectResponse(local_path(form.get("next"), "/"), status_code=303)
    response.set_cookie(DENSITY_COOKIE, value, max_age=365 * 86400, httponly=True, samesite="strict")
    return response


def routes() -> list[Route]:
    return [
        Route("/click", click, methods=["POST"]),
        Route("/read", mark_read, methods=["POST"]),
        Route("/open", open_item, methods=["POST"]),
        Route("/favorite", favorite, methods=["POST"]),
        Route("/highlight", highlight, methods=["POST"]),
        Route("/read-all", read_all, methods=["POST"]),
        Route("/prefs", prefs, methods=["POST"]),
    ]
