"""The persona tool group: one plain function per tool, ``fn(db, ...) -> dict``.

Every function returns the envelope of :mod:`hermes.tools` and never raises for a user
mistake (an unknown persona, a bad value): :func:`envelope` turns those into ``ok: false``
with the tool's success keys present and empty. Nothing is written on a refused call.
"""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import Field

from hermes.records import file_of
from hermes.errors import HermesError, InvalidInput
from hermes.faces import CREATE_PERSONA, INGEST, Say, plural
from hermes.tools import caller, envelope, fail, int_arg, ok

from . import bootstrap as _bootstrap
from . import personas, search, status

EMPTY = {
    "list_users": {"users": []},
    "create_persona": {"persona": {}},
    "propose_interests": {"tags": [], "content_types": [], "suggested_interests": ""},
    "update_persona": {"persona": {}, "changed": False},
    "profile_status": dict(status.EMPTY),
    "search_feed": {"results": [], "count": 0},
    "delete_persona": {"deleted": {}, "would_delete": {}},
    "reset_feedback": {"deleted": {}, "would_delete": {}},
    "bootstrap_persona": {"liked": [], "disliked": []},
}

_envelope = envelope(EMPTY)

# What a reader can do next, in the words of each face (hermes.faces).
AFTER_CREATE = Say(
    mcp="Next: bootstrap_persona to warm it from its interests, or list_feed / search_feed and "
        "record_feedback",
    cli="Next: `hermes persona bootstrap NAME` warms it from its interests; `hermes feed NAME "
        "-i` trains it with single keys",
    web="Its feed is below; ✓ and ✗ teach it",
)
USE_TAGS = Say(
    mcp="pick the ones that fit and pass them (in your own words) as interests to "
        "create_persona or update_persona",
    cli="pick the ones that fit and write them (in your own words) into --interests of "
        "`hermes persona create` or `hermes persona update`",
    web="pick the ones that fit and write them into the interests",
)
OLD_TEXT = Say(mcp=" (previous_interests holds the old text)", cli="", web="")
SEE_LIKED_TAGS = Say(mcp=" (see liked_tags)", cli="", web="")
SHOW_EFFECT = Say(mcp="profile_status shows the effect", cli="`hermes persona show NAME` shows the effect",
                  web="the feed is ranked with them now")
NOT_CONFIRMED = Say(mcp="confirm is false", cli="no --yes", web="not confirmed")


def _confirm_how(tool: str) -> Say:
    return Say(mcp=f"Call {tool} again with confirm=true to do it.",
               cli="Rerun with --yes to do it.",
               web="Press the button again to confirm.")


PersonaName = Annotated[str, Field(
    description="The persona's name exactly as list_users shows it, e.g. 'alice'.",
    min_length=1, max_length=personas.NAME_MAX,
)]
NewName = Annotated[str, Field(
    description="A short unique name: starts with a letter or digit; letters, digits, spaces "
                "and _ . @ + - only; at most 64 characters. Example: 'alice'.",
    min_length=1, max_length=personas.NAME_MAX,
)]
Interests = Annotated[str, Field(
    description="What this persona wants to read, in plain words: topics, methods, fields "
                "(at most 4000 characters). Example: 'graph neural networks, protein folding, "
                "reinforcement learning for robotics'.",
    min_length=1, max_length=personas.INTERESTS_MAX,
)]
Confirm = Annotated[bool, Field(
    description="Must be true to actually delete. With false nothing changes and the result "
                "lists exactly what would be lost.",
)]


def _str_arg(value, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a persona name (a string), got {type(value).__name__}")
    return value


def _confirm_arg(confirm) -> bool:
    # Defence in depth: a model sending the string "false" must not delete anything.
    if not isinstance(confirm, bool):
        raise InvalidInput(f"confirm must be true or false, got {confirm!r}")
    return confirm


@_envelope
def list_users(db) -> dict:
    rows = db.execute(
        """SELECT u.name, u.interests, u.created,
                  count(c.id), coalesce(sum(c.label = 'like'), 0), coalesce(sum(c.label = 'dislike'), 0)
           FROM users u LEFT JOIN clicks c ON c.user_id = u.id
           GROUP BY u.id ORDER BY u.name"""
    ).fetchall()
    users = [
        {"name": name, "interests": interests, "created": created, "clicks": n,
         "likes": likes, "dislikes": dislikes}
        for name, interests, created, n, likes, dislikes in rows
    ]
    where = file_of(db)
    if not users:
        return ok(f"no personas yet in {where}; {CREATE_PERSONA}", users=[])
    return ok(f"{plural(len(users), 'persona')} in {where}", users=users)


@_envelope
def create_persona(db, name: NewName, interests: Interests) -> dict:
    user = personas.create_persona(db, name, interests)
    return ok(
        f"created persona {user['name']!r}. {AFTER_CREATE}",
        persona={"name": user["name"], "interests": user["interests"]},
    )


@_envelope
def propose_interests(
    db,
    limit: Annotated[int, Field(description="How many tags to return (1-100).", ge=1, le=100)] = 12,
) -> dict:
    limit = int_arg("limit", limit, 1, 100)
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
        for t, n in db.execute(
            "SELECT content_type, count(*) FROM items GROUP BY content_type ORDER BY 2 DESC, 1"
        )
    ]
    if not tags:
        message = (
            f"the archive has no tagged items yet ({INGEST}); write the interests in your own "
            "words instead"
        )
        return ok(message, tags=[], content_types=types, suggested_interests="")
    suggestion = ", ".join(t["tag"] for t in tags[:8])
    return ok(
        f"the {plural(len(tags), 'most common tag')} in the archive; {USE_TAGS}",
        tags=tags, content_types=types, suggested_interests=suggestion,
    )


@_envelope
def update_persona(db, name: PersonaName, interests: Interests) -> dict:
    user, previous = personas.update_interests(db, name, interests)
    payload = {"name": user["name"], "interests": user["interests"], "previous_interests": previous}
    if previous == user["interests"]:
        return ok(f"persona {user['name']!r} already has exactly these interests; nothing changed",
                  persona=payload, changed=False)
    return ok(f"updated the interests of {user['name']!r}; the next ranking uses them{OLD_TEXT}",
              persona=payload, changed=True)


@_envelope
def profile_status(db, user: PersonaName) -> dict:
    s = status.profile_status(db, user)
    # Counted, not listed: tags are feed text (untrusted), kept in the liked_tags payload.
    liked = f"{len(s['liked_tags'])}{SEE_LIKED_TAGS}" if s["liked_tags"] else "none yet"
    classifier = s["classifier_reason"] if s["classifier_active"] else f"inactive: {s['classifier_reason']}"
    message = (
        f"{s['user']}: {plural(s['clicks'], 'click')} ({s['likes']} likes, {s['dislikes']} dislikes); "
        f"{s['blend']}; liked tags: {liked}; classifier {classifier}"
    )
    return ok(message, **s)


@_envelope
def search_feed(
    db,
    user: PersonaName,
    query: Annotated[str, Field(
        description="Words to find in titles and summaries; every word must occur (case-"
                    "insensitive, matched literally). May be empty when tag or content_type is given.",
        max_length=search.QUERY_MAX,
    )],
    tag: Annotated[Optional[str], Field(
        description="Only items with this tag (case-insensitive), e.g. 'cs.LG'. propose_interests lists common tags.",
        max_length=200,
    )] = None,
    content_type: Annotated[Optional[str], Field(
        description="Only items of this type, e.g. 'paper', 'article', 'podcast', 'video'.",
        max_length=50,
    )] = None,
    limit: Annotated[int, Field(description="How many results (1-50).", ge=1, le=search.SEARCH_MAX)] = 10,
) -> dict:
    results, message = search.search(db, user, query, tag, content_type, limit)
    return ok(message, results=results, count=len(results))


def _nonzero(rows: dict[str, int]) -> dict[str, int]:
    return {table: n for table, n in rows.items() if n or table == "clicks"}


def destroy(db, name, confirm, *, persona: bool) -> dict:
    """``delete_persona`` (``persona=True``) or ``reset_feedback``, for every face (the
    confirmation advice and the signal source follow the face: :mod:`hermes.faces`)."""
    try:
        return _destroy(db, name, confirm, persona=persona)
    except HermesError as exc:
        return fail(str(exc), deleted={}, would_delete={})


def _destroy(db, name, confirm, *, persona: bool) -> dict:
    name = _str_arg(name, "name")
    confirm = _confirm_arg(confirm)
    user, tables, counts, clicks = personas.plan(db, name, persona=persona)
    loss = personas.describe_loss(user, counts, clicks, persona=persona)
    would = {"persona": user["name"] if persona else None, **clicks, "rows": _nonzero(counts)}
    tool = "delete_persona" if persona else "reset_feedback"
    if not confirm:
        return fail(
            f"nothing changed ({NOT_CONFIRMED}): this would permanently delete {loss}. "
            f"{_confirm_how(tool)}",
            deleted={}, would_delete=would,
        )
    removed = personas.delete_owned(db, user, tables, persona=persona, source=caller())
    deleted = {"persona": user["name"] if persona else None, **clicks, "rows": _nonzero(removed)}
    kept = "" if persona else f"; persona {user['name']!r} and its interests are kept"
    return ok(f"deleted {loss}{kept}", deleted=deleted, would_delete={})


def delete_persona(db, name: PersonaName, confirm: Confirm) -> dict:
    return destroy(db, name, confirm, persona=True)


def reset_feedback(db, name: PersonaName, confirm: Confirm) -> dict:
    return destroy(db, name, confirm, persona=False)


@_envelope
def bootstrap_persona(
    db,
    name: PersonaName,
    n_like: Annotated[int, Field(description="How many of the closest items to like (0-50).",
                                 ge=0, le=_bootstrap.BOOTSTRAP_MAX)] = 5,
    n_dislike: Annotated[int, Field(description="How many of the farthest items to dislike (0-50).",
                                    ge=0, le=_bootstrap.BOOTSTRAP_MAX)] = 5,
) -> dict:
    done = _bootstrap.bootstrap_persona(db, name, n_like, n_dislike)
    return ok(
        f"warmed {done['user']!r} from its interests: liked {len(done['liked'])} and disliked "
        f"{plural(len(done['disliked']), 'item')} (click source 'bootstrap'); {SHOW_EFFECT}",
        liked=done["liked"], disliked=done["disliked"],
    )
