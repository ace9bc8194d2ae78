"""Finding the feed an HTML page announces: ``<link rel="alternate" type="application/rss+xml"
href="…">`` in its head, as every blog engine writes it and every feed reader follows it.

Only reads bytes already fetched; the feed it names is fetched through the same guarded
fetch API as any feed URL (:func:`hermes_feeds.subscriptions.probe`).
"""

from __future__ import annotations

import urllib.parse
from html.parser import HTMLParser

FEED_TYPES = (
    "application/rss+xml",
    "application/atom+xml",
    "application/rdf+xml",
    "application/feed+json",
    "application/json",
)
PREFERENCE = {t: k for k, t in enumerate(FEED_TYPES)}  # RSS/Atom before JSON Feed


class _AlternateLinks(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []  # (type, href) in document order

    def handle_starttag(self, tag, attrs):
        if tag != "link":
            return
        attr = {k.lower(): (v or "") for k, v in attrs}
        rels = attr.get("rel", "").lower().split()
        kind = attr.get("type", "").lower().split(";")[0].strip()
        if "alternate" in rels and kind in FEED_TYPES and attr.get("href", "").strip():
            self.found.append((kind, attr["href"].strip()))


def looks_like_html(body: bytes, headers: dict | None = None) -> bool:
    if not body.strip():
        return False
    kind = {k.lower(): v for k, v in (headers or {}).items()}.get("content-type", "").lower()
    if "html" in kind:
        return True
    head = body[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<head" in head


def feed_links(body: bytes, base_url: str, limit: int = 200_000) -> list[str]:
    """The absolute http(s) URLs of the feeds a page links as alternates, best first
    (RSS / Atom / RDF before JSON Feed, then document order)."""
    parser = _AlternateLinks()
    try:
        parser.feed(body[:limit].decode("utf-8", errors="replace"))
        parser.close()
    except Exception:  # noqa: BLE001 - a broken page simply announces nothing
        pass
    ordered = sorted(enumerate(parser.found), key=lambda pair: (PREFERENCE[pair[1][0]], pair[0]))
    urls: list[str] = []
    for _, (_, href) in ordered:
        url = urllib.parse.urljoin(base_url, href)
        if urllib.parse.urlsplit(url).scheme.lower() in ("http", "https") and url not in urls:
            urls.append(url)
    return urls
