"""The persona page: its interests text and what the ranking leaves out of it, and the
forms that change the interests, rename the persona, reset its feedback (all of it, or a
library import's alone: ``reset_feedback``'s source) and delete it — the last two after a page
that says what would be lost (the tool's own answer with ``confirm=false``, which changes
nothing).

Every change goes through the persona tools (:class:`.access.Tools`), the one write path
the CLI and MCP use too."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import Route

from hermes.text.clip import clip

from ..ranking.interests import split_unwanted
from .access import Tools, opened, require_persona
from .forms import MAX_TEXT, as_typed, bad
from .render import FLASH_MAX, page_url, redirect, render

#: the two confirmed actions: the tool, what the page and its button say, where a person
#: goes once it is done (a deleted persona has no page of its own any more)
DESTRUCTIVE = {
    "reset": {
        "tool": "reset_feedback",
        "title": "Reset the feedback of",
        "button": "Reset feedback",
        "what": "Its likes and dislikes are deleted; the persona and its interests text "
        "are kept, and its feed is ranked by the interests alone again.",
    },
    "delete": {
        "tool": "delete_persona",
        "title": "Delete",
        "button": "Delete persona",
        "what": "The persona is deleted with everything it has taught the ranking. The feeds and their items stay.",
    },
}

#: a reset of one click source's clicks (``?source=bootstrap``: a library import taken back),
#: worded for that source; what it deletes is the tool's preview for the source, as for the
#: others
RESET_OF_SOURCE = {
    "bootstrap": {
        "title": "Take back the library import of",
        "button": "Take back the import",
        "what": "Only the clicks a library import or bootstrap made go, with the library "
        "entries nothing else refers to; the persona, its interests text and the clicks "
        "given in the web, the CLI or by an agent are kept.",
    },
    "": {
        "title": "Reset the {source} clicks of",
        "button": "Reset the {source} clicks",
        "what": "Only the clicks of that source go; the persona, its interests text and its other clicks are kept.",
    },
}


def _context(request: Request, name, **extra) -> dict:
    tools = Tools()
    with opened(request) as db:
        user = require_persona(db, name)
        # what the clicks taught, as profile_status tells an agent (None without the tool):
        # its counts head the page too
        taught = tools.call(db, "profile_status", user=user["name"])
    taught = taught if taught and taught.get("ok") else None
    counts = {k: (taught or {}).get(k, 0) for k in ("clicks", "likes", "dislikes")}
    by_source = (taught or {}).get("clicks_by_source") or {}
    return {
        "user": user,
        "page": "persona",
        **counts,
        # a library import's or bootstrap's clicks: the start-over panel offers to take
        # back those alone (reset_feedback's source)
        "bootstrap_clicks": by_source.get("bootstrap", 0),
        "taught": taught,
        # what the ranking leaves out of the text, as update_persona reports it: shown
        # for as long as the text says it, not only in the message after saving
        "not_wanted": split_unwanted(user["interests"] or "")[1],
        "interests_max": tools.text_limit("update_persona", "interests", MAX_TEXT),
        "can": {
            "interests": tools.has("update_persona"),
            "rename": tools.has("rename_persona"),
            "reset": tools.has("reset_feedback"),
            "delete": tools.has("delete_persona"),
        },
        "missing": None if tools.has("update_persona") else tools.missing("persona", "update_persona"),
        "form": {},
        "form_error": None,
        "error_for": None,
        **extra,
    }


async def persona(request: Request):
    name = request.query_params.get("user")
    return render(request, "persona.html", await run_in_threadpool(_context, request, name))


async def _again(request: Request, name: str, form: str, typed: dict, message: str):
    """The persona page again (status 400) with what was typed, and why it was refused next
    to the form it was typed in (an interests text is writing a person should not lose)."""
    context = await run_in_threadpool(
        _context, request, name, form=typed, error_for=form, form_error=message[:1].upper() + message[1:]
    )
    return render(request, "persona.html", context, status=400)


def _write(request: Request, name: str, tool: str, labels: dict | None = None, **arguments) -> dict:
    with opened(request) as db:
        user = require_persona(db, name)
        return Tools().require(db, "persona", tool, labels, name=user["name"], **arguments)


async def update_interests(request: Request):
    return await _change(request, "interests", "The interests text", "update_persona", typed_max=MAX_TEXT * 4)


async def rename(request: Request):
    return await _change(request, "new_name", "The new name", "rename_persona", section="rename", typed_max=200)


async def _change(request: Request, field: str, label: str, tool: str, *, section: str | None = None, typed_max: int):
    """One form field through ``tool`` (its parameter of the same name), then back to the
    persona page — under the persona's new name after a rename; a refusal is said beside
    the form, with what was typed."""
    form = await request.form()
    name = str(form.get("user") or "")
    typed = {field: str(form.get(field) or "")[:typed_max]}
    try:
        result = await run_in_threadpool(_write, request, name, tool, {field: label}, **{field: as_typed(form, field)})
    except HTTPException as exc:
        if exc.status_code != 400:
            raise
        return await _again(request, name, section or field, typed, exc.detail)
    user = (result.get("persona") or {}).get("name") or name
    return redirect(
        request, page_url("persona", user), _sentence(result.get("message")), "ok" if result.get("changed") else "info"
    )


def _sentence(message: str | None) -> str:
    """A tool's message as a toast says it: a sentence, with its capital and full stop,
    clipped to what the one-time message holds (the page shows the rest, e.g. the parts of
    the interests left out)."""
    text = (message or "Done").strip()
    text = text[:1].upper() + text[1:]
    return clip(text if text.endswith((".", "!", "?")) else text + ".", FLASH_MAX)


def _action(request: Request, source: str = "") -> dict:
    """The action the path names; a reset with ``source`` (the query's or the form's) is of
    that source's clicks only, worded for it (the tool refuses a source it does not know)."""
    action = DESTRUCTIVE.get(request.path_params["action"])
    if action is None:
        bad("there is no such persona page: the persona page lists what can be done", 404)
    if not source or action["tool"] != "reset_feedback":
        return action
    worded = RESET_OF_SOURCE.get(source, RESET_OF_SOURCE[""])
    return {**action, **{k: v.format(source=source[:40]) for k, v in worded.items()}, "source": source}


def _source(values) -> str:
    return str(values.get("source") or "")[:100]


async def confirm(request: Request):
    """What resetting or deleting would remove, asked of the tool with ``confirm=false``
    (it changes nothing), and the button that does it."""
    action = _action(request, _source(request.query_params))
    of_source = {"source": action["source"]} if action.get("source") else {}

    def view():
        tools = Tools()
        with opened(request) as db:
            user = require_persona(db, request.query_params.get("user"))
            preview = tools.call(db, action["tool"], name=user["name"], confirm=False, **of_source)
        if preview is None:
            bad(tools.missing("persona", action["tool"]), 503)
        if preview.get("errors"):  # a source the tool does not know: its refusal, no button
            bad(preview.get("message") or "refused")
        if preview.get("ok"):  # nothing to delete: the tool says so, and there is no button to press
            return {"user": user, "nothing": preview.get("message")}
        return {
            "user": user,
            "page": "persona",
            "action": action,
            "action_path": request.url.path,
            "loss": _loss(preview),
            "would": preview.get("would_delete") or {},
        }

    context = await run_in_threadpool(view)
    if "nothing" in context:  # back to the persona page, saying why no button is offered
        return redirect(request, page_url("persona", context["user"]["name"]), _sentence(context["nothing"]), "info")
    return render(request, "persona_confirm.html", context)


def _loss(preview: dict) -> str:
    """ "This permanently deletes …" from the tool's unconfirmed answer (its ``loss``); a
    refusal (the persona just went away, say) says its message as it is."""
    if not preview.get("loss"):
        return _sentence(preview.get("message"))
    return f"This permanently deletes {preview['loss']}."


async def destroy(request: Request):
    """Reset (with ``source``: that source's clicks only) or delete, once the confirmation
    page's button sent ``confirm=yes``."""
    form = await request.form()
    action = _action(request, _source(form))
    if form.get("confirm") != "yes":
        bad(f"not confirmed: use the {action['button']} button on the page that says what would be lost")
    of_source = {"source": action["source"]} if action.get("source") else {}
    result = await run_in_threadpool(
        _write, request, str(form.get("user") or ""), action["tool"], confirm=True, **of_source
    )
    name = str(form.get("user") or "")
    if action["tool"] == "delete_persona":
        return redirect(request, "/", _sentence(result.get("message")))
    return redirect(request, page_url("persona", name), _sentence(result.get("message")))


def routes() -> list[Route]:
    return [
        Route("/persona", persona, methods=["GET"]),
        Route("/persona/interests", update_interests, methods=["POST"]),
        Route("/persona/rename", rename, methods=["POST"]),
        Route("/persona/{action:str}", confirm, methods=["GET"]),
        Route("/persona/{action:str}", destroy, methods=["POST"]),
    ]


__all__ = ["routes"]
