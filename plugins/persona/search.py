"""``search_feed``: keyword / tag / type / author search over the whole archive, in the
persona's order.

Matching is the built-in candidate filter (``hermes.builtins.default_candidates``: every word must
occur in the title or summary — a whole word through the full-text index, as itself or one
of its inflections ("witness", "witnesses", "witnessed"; not "with", nor "graphene" for
"graph"); any other word literally, ``LIKE`` with ``%``, ``_`` and ``\\`` escaped;
either way a word written with a LaTeX accent is found by its letters, "Schrödinger" or
"Schrodinger" for ``Schr\\"odinger``);
ordering is the one ranking path (:func:`hermes.ranking.rank.rank_items`) with the
recency window and the already-clicked exclusion lifted, because a search should reach the
whole archive, including what the persona rated before.
"""

from __future__ import annotations

import sqlite_utils

from hermes.arguments import refuse
from hermes.contract import CandidateQuery
from hermes.errors import InvalidInput
from hermes.facekit.faces import Say, plural
from hermes.ingest.refresher import new_items
from hermes.ranking.match import LEVELS
from hermes.ranking.rank import items_of, rank
from hermes.storage.clicks import click_labels
from hermes.storage.records import require_user
from hermes.text.authors import matches, parse_stored
from hermes.text.clip import clip

SEARCH_MAX = 50
QUERY_MAX = 500
SUMMARY_CHARS = 300


GIVE_QUERY = Say(
    mcp="give a query (words to find in titles and summaries), a tag, a content_type or an author",
    cli="give WORDS to find in titles and summaries, --tag, --type or --author",
    web="type words to search for",
)
FEEDBACK = Say(
    mcp="Give feedback with record_feedback",
    cli="Give feedback with `hermes like USER ITEM` / `hermes dislike USER ITEM`",
    web="Give feedback with ✓ / ✗",
)
RATED = Say(mcp="'rated'", cli="[liked]/[disliked]", web="✓ / ✗")
TAGS_IN_USE = Say(
    mcp="propose_interests lists the tags in use",
    cli="`hermes persona tags` lists the tags in use",
    web="the tags on the feed's items are the ones in use",
)


def _optional_text(value: str | None) -> str | None:
    return (value or "").strip() or None


def content_types(db: sqlite_utils.Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT content_type FROM items ORDER BY 1")]


def tag_exists(db: sqlite_utils.Database, tag: str) -> bool:
    return (
        db.execute(
            "SELECT 1 FROM items, json_each(items.tags) WHERE lower(json_each.value) = lower(?) LIMIT 1",
            [tag],
        ).fetchone()
        is not None
    )


def ratings(db: sqlite_utils.Database, user_id: int, item_ids: list[int]) -> dict[int, str]:
    return click_labels(db, user_id, item_ids)


def _short(text: str | None) -> str:
    return clip(" ".join((text or "").split()), SUMMARY_CHARS)


def author_exists(db: sqlite_utils.Database, author: str) -> bool:
    """Whether any item lists the person ``author`` names (see :func:`hermes.text.authors.matches`)."""
    # every item's authors, on this no-result path only: a LIKE of the typed surname missed
    # the folded ones ("Luczak" for "Łuczak", "Bjork" for "Björk")
    rows = db.execute("SELECT authors FROM items WHERE authors IS NOT NULL")
    return any(matches(parse_stored(raw), author) for (raw,) in rows)


def search(
    db: sqlite_utils.Database,
    user: str,
    query: str | None,
    tag: str | None = None,
    content_type: str | None = None,
    limit: int = 10,
    author: str | None = None,
) -> tuple[list[dict], str]:
    """(results, message) for arguments the ``search_feed`` tool already checked. Raises
    :class:`InvalidInput` / ``NotFound`` for a call that cannot be answered."""
    query, tag, content_type = _optional_text(query), _optional_text(tag), _optional_text(content_type)
    author = _optional_text(author)
    persona = require_user(db, user)
    if not (query or tag or content_type or author):
        raise InvalidInput(str(GIVE_QUERY))
    if content_type is not None:
        known = content_types(db)
        match = next((k for k in known if k.lower() == content_type.lower()), None)
        if match is None:
            raise refuse(
                "content_type",
                "is no content type in the archive; it holds: "
                + (", ".join(known) if known else f"nothing yet; {new_items(db)}"),
                got=content_type,
                given=True,
            )
        content_type = match

    # a search is of the whole archive: a removed feed's items are found too
    ranking = rank(
        db,
        persona,
        CandidateQuery(
            since_days=None,
            exclude_clicked=False,
            text=query,
            tag=tag,
            content_type=content_type,
            author=author,
            removed_feeds=True,
        ),
        limit=limit,
    )
    found = items_of(db, ranking)
    rated = ratings(db, persona["id"], [item["id"] for item in found])
    # the absolute level of each hit (the feed's match): a search's own scores only order it
    level = {int(i): LEVELS[int(v)] for i, v in zip(ranking.item_ids, ranking.levels, strict=True)}
    results = [
        {
            "id": item["id"],
            "title": item["title"],
            "summary": _short(item["summary"]),
            "url": item["url"],
            "enclosure": item.get("enclosure"),
            "published": item["published"],
            "date_source": item.get("date_source"),
            "content_type": item["content_type"],
            "tags": item["tags"],
            "authors": item["authors"],
            "source": item["source"],
            "rank": item["rank"],
            "score": item["score"],
            "match": level[item["id"]],
            "rated": rated.get(item["id"]),
        }
        for item in found
    ]
    asked = " ".join(
        part
        for part in (
            f"{query!r}" if query else "",
            f"tag {tag!r}" if tag else "",
            f"type {content_type!r}" if content_type else "",
            f"author {author!r}" if author else "",
        )
        if part
    )
    if results:
        total = ranking.n_candidates
        shown = (
            f"the best {len(results)} of {plural(total, 'item')}"
            if total > len(results)
            else plural(len(results), "item")
        )
        message = (
            f"{shown} matching {asked}, in {persona['name']}'s ranking "
            f"order; {RATED} shows earlier feedback. {FEEDBACK.naming(persona['name'])}."
        )
    elif tag and not tag_exists(db, tag):
        message = f"no item is tagged {tag!r}; {TAGS_IN_USE}"
    elif author and not author_exists(db, author):
        message = (
            f"no item lists {author!r} among its authors; give a surname ('Furtak') or "
            "an initial and surname ('L. Furtak')"
        )
    elif not db.execute("SELECT EXISTS (SELECT 1 FROM items)").fetchone()[0]:
        # "try fewer words" would send the agent rewording a search of nothing
        message = f"the archive is empty: nothing has been fetched yet, so no item matches {asked}; {new_items(db)}"
    else:
        message = (
            f"no item matches {asked}; every query word must occur in a title or summary, "
            f"so try fewer or different words"
        )
    return results, message
