"""The persona tool group: one plain function per tool, ``fn(db, ...) -> dict``.

Every function returns the envelope of :mod:`hermes.tools` and never raises for a user
mistake (an unknown persona, a bad value): :func:`envelope` turns those into ``ok: false``
with the tool's success keys present and empty. Nothing is written on a refused call.
"""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import Field

from hermes.errors import HermesError, InvalidInput
from hermes.tools import envelope, fail, failure, ok

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
    if not users:
        return ok("no personas yet; create one with create_persona(name, interests)", users=[])
    return ok(f"{len(users)} persona(s)", users=users)


@_envelope
def create_persona(db, name: NewName, interests: Interests) -> dict:
    user = personas.create_persona(db, name, interests)
    return ok(
        f"created persona {user['name']!r}. Next: bootstrap_persona to warm it from its "
        "interests, or list_feed / search_feed and record_feedback",
        persona={"name": user["name"], "interests": user["interests"]},
    )


@_envelope
def propose_interests(
    db,
    limit: Annotated[int, Field(description="How many tags to return (1-100).", ge=1, le=100)] = 12,
) -> dict:
    limit, note = search.clamp(limit, 100)
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
            "the archive has no tagged items yet (run hermes ingest); write the interests in "
            "your own words instead" + note
        )
        return ok(message, tags=[], content_types=types, suggested_interests="")
    suggestion = ", ".join(t["tag"] for t in tags[:8])
    return ok(
        f"the {len(tags)} most common tags in the archive{note}; pick the ones that fit and "
        "pass them (in your own words) as interests to create_persona or update_persona",
        tags=tags, content_types=types, suggested_interests=suggestion,
    )


@_envelope
def update_persona(db, name: PersonaName, interests: Interests) -> dict:
    user, previous = personas.update_interests(db, name, interests)
    payload = {"name": user["name"], "interests": user["interests"], "previous_interests": previous}
    if previous == user["interests"]:
        return ok(f"persona {user['name']!r} already has exactly these interests; nothing changed",
                  persona=payload, changed=False)
    return ok(f"updated the interests of {user['name']!r}; the next ranking uses them "
              "(previous_interests holds the old text)", persona=payload, changed=True)


@_envelope
def profile_status(db, user: PersonaName) -> dict:
    s = status.profile_status(db, user)
    # Counted, not listed: tags are feed text (untrusted), kept in the liked_tags payload.
    liked = f"{len(s['liked_tags'])} (see liked_tags)" if s["liked_tags"] else "none yet"
    classifier = s["classifier_reason"] if s["classifier_active"] else f"inactive: {s['classifier_reason']}"
    message = (
        f"{s['user']}: {s['clicks']} click(s) ({s['likes']} likes, {s['dislikes']} dislikes); "
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


def destroy(db, name, confirm, *, persona: bool, source: str, how_to_confirm: str = "") -> dict:
    """``delete_persona`` (``persona=True``) or ``reset_feedback``, for the tools and the CLI."""
    try:
        return _destroy(db, name, confirm, persona=persona, source=source, how_to_confirm=how_to_confirm)
    except HermesError as exc:
        return failure(exc, {"deleted": {}, "would_delete": {}})


def _destroy(db, name, confirm, *, persona: bool, source: str, how_to_confirm: str) -> dict:
    name = _str_arg(name, "name")
    confirm = _confirm_arg(confirm)
    user, tables, counts, clicks = personas.plan(db, name, persona=persona)
    loss = personas.describe_loss(user, counts, clicks, persona=persona)
    would = {"persona": user["name"] if persona else None, **clicks, "rows": _nonzero(counts)}
    tool = "delete_persona" if persona else "reset_feedback"
    if not confirm:
        how_to_confirm = how_to_confirm or f"Call {tool} again with confirm=true to do it."
        return fail(
            f"nothing changed: {tool} would permanently delete {loss}. {how_to_confirm}",
            deleted={}, would_delete=would,
        )
    removed = personas.delete_owned(db, user, tables, persona=persona, source=source)
    deleted = {"persona": user["name"] if persona else None, **clicks, "rows": _nonzero(removed)}
    kept = "" if persona else f"; persona {user['name']!r} and its interests are kept"
    return ok(f"deleted {loss}{kept}", deleted=deleted, would_delete={})


def delete_persona(db, name: PersonaName, confirm: Confirm) -> dict:
    return destroy(db, name, confirm, persona=True, source="agent")


def reset_feedback(db, name: PersonaName, confirm: Confirm) -> dict:
    return destroy(db, name, confirm, persona=False, source="agent")


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
        f"{len(done['disliked'])} item(s) (click source 'bootstrap'); profile_status shows the effect",
        liked=done["liked"], disliked=done["disliked"],
    )
