"""``GET /feed/<persona>.atom``: the persona's ranked feed as an Atom feed, so the reader a
person already uses can subscribe to hermes' ranking.

Titles and summaries are shown as a page shows them (LaTeX as Unicode, :mod:`hermes.text.latex`).
Read-only (a GET writes nothing) and served like every page: on loopback unless ``hermes
web`` was told otherwise. Entries are the unread, unrated items of the last week that clear
the persona's bar (match strong or good), best first, each with its reason.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import quote, urlencode
from xml.etree import ElementTree as ET

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from hermes.text.latex import readable

from ..clock import read_stamp
from ..contract import CandidateQuery
from .access import opened, ranked_items, require_persona
from .render import playable, readable_preview
from .sanitize import safe_url

ATOM = "http://www.w3.org/2005/Atom"
WINDOW_DAYS = 7
MAX_ENTRIES = 50


#: what XML 1.0 cannot hold at all, escaped or not (its Char production): control characters
#: but tab and newlines, U+FFFE and U+FFFF, and lone surrogates. One of them in an item's text
#: or a persona's interests made the whole feed not well-formed for every reader.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value) -> str:
    """``value`` as text XML can carry: what it cannot is left out."""
    return _NOT_XML.sub("", str(value))


def _sub(parent, tag: str, text: str | None = None, **attrs) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_text(text)
    return element


def _stamp(value: str | None) -> str:
    when = read_stamp(value) or datetime.now(UTC)
    return when.astimezone(UTC).isoformat(timespec="seconds")


def _authors(item: dict) -> list[str]:
    """The item's people (``authors``, else the feed's one ``author`` text), each once."""
    names = [str(n).strip() for n in (item.get("authors") or []) if str(n or "").strip()]
    if not names and str(item.get("author") or "").strip():
        names = [str(item["author"]).strip()]
    return list(dict.fromkeys(names))


def build_atom(user: dict, items: list[dict], base: str) -> bytes:
    ET.register_namespace("", ATOM)
    root = ET.Element(f"{{{ATOM}}}feed")
    _sub(root, "title", f"hermes · {user['name']}")
    interests = (user["interests"] or "").strip()
    _sub(
        root,
        "subtitle",
        (
            f"Ranked for {user['name']}: {interests}"
            if interests
            else f"Ranked for {user['name']} by its likes and dislikes"
        )[:500],
    )
    own = f"{base}/feed/{quote(user['name'], safe='')}.atom"
    _sub(root, "id", own)
    _sub(root, "link", rel="self", href=own, type="application/atom+xml")
    _sub(root, "link", rel="alternate", href=f"{base}/feed?{urlencode({'user': user['name']})}", type="text/html")
    _sub(root, "updated", max((_stamp(i.get("published")) for i in items), default=_stamp(None)))
    _sub(root, "generator", "hermes")
    # RFC 4287 4.1.1: a feed whose entries do not all name an author names one itself; the
    # ranking is hermes', whoever wrote the items (an entry's own authors still come first)
    _sub(_sub(root, "author"), "name", "hermes")
    for item in items:
        entry = _sub(root, "entry")
        # A feed reader shows the title as text, as a page does: LaTeX as Unicode.
        _sub(entry, "title", readable(item.get("title")) or "(untitled)")
        _sub(entry, "id", f"urn:hermes:item:{item['id']}")
        # RFC 4287 4.1.1.1: an entry without atom:content has an alternate link. An episode
        # whose feed gave no <link> has its media file as the alternate; an item with neither
        # carries its text as content.
        url = safe_url(item.get("url")) or playable(item.get("enclosure"))
        if url:
            _sub(entry, "link", rel="alternate", href=url)
        media = item.get("enclosure") or {}
        if safe_url(media.get("url")):  # a podcast's episode, for a reader that plays it
            _sub(
                entry,
                "link",
                rel="enclosure",
                href=safe_url(media["url"]),
                **({"type": media["type"]} if media.get("type") else {}),
                **({"length": str(media["length"])} if media.get("length") else {}),
            )
        _sub(entry, "updated", _stamp(item.get("published")))
        _sub(entry, "published", _stamp(item.get("published")))
        for name in _authors(item):  # one atom:author per person
            _sub(_sub(entry, "author"), "name", name)
        for tag in (item.get("tags") or [])[:10]:
            _sub(entry, "category", term=tag)
        # Plain text only: the reader shows it as text, no feed HTML is passed on.
        summary = f"#{item['rank']} for {user['name']} — why: {readable(item['reason'])}"
        if item.get("source"):
            summary += f"\nFrom {item['source']}."
        if item.get("summary"):
            summary += "\n\n" + readable_preview(item["summary"], 1200)
        _sub(entry, "summary", summary, type="text")
        if not url:
            _sub(entry, "content", summary, type="text")
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="utf-8")


async def persona_feed(request: Request):
    name = request.path_params["persona"]

    def build():
        with opened(request) as db:
            user = require_persona(db, name)
            items, _ = ranked_items(
                db,
                user,
                CandidateQuery(since_days=WINDOW_DAYS, exclude_read=True),
                limit=MAX_ENTRIES,
                pool=f"unread items of the last {WINDOW_DAYS} days",
            )
        return build_atom(user, items, str(request.base_url).rstrip("/"))

    body = await run_in_threadpool(build)
    return Response(body, media_type="application/atom+xml; charset=utf-8")
