"""OPML import and export of subscriptions (``hermes feeds import-opml`` / ``export-opml``).

Built and read with :mod:`xml.etree.ElementTree`, so every title and URL is escaped by the
serialiser, never pasted into markup. Reading uses Python's expat (2.4+ refuses
entity-expansion bombs; ElementTree never fetches external entities).
"""

from __future__ import annotations

import urllib.parse
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path

from hermes.errors import InvalidInput

MAX_OPML_BYTES = 10 * 1024 * 1024


def read_opml(path: str | Path) -> list[tuple[str, str | None]]:
    """``(url, title)`` for every outline with an ``xmlUrl``, at any nesting depth, in
    document order, duplicates dropped."""
    path = Path(path).expanduser()
    try:
        if path.stat().st_size > MAX_OPML_BYTES:
            raise InvalidInput(f"{path}: larger than {MAX_OPML_BYTES // (1024 * 1024)} MB; not an OPML file?")
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise InvalidInput(f"no such file: {path}") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a directory, not an OPML file") from None
    except PermissionError:
        raise InvalidInput(f"permission denied: {path}") from None
    except ET.ParseError as exc:
        raise InvalidInput(f"{path}: not valid XML ({exc})") from None
    if root.tag.lower() != "opml":
        raise InvalidInput(f"{path}: not an OPML file (the root element is <{root.tag}>)")
    found, seen = [], set()
    for outline in root.iter("outline"):
        url = (outline.get("xmlUrl") or outline.get("xmlurl") or "").strip()
        if not url or url in seen:
            continue
        seen.add(url)
        title = (outline.get("title") or outline.get("text") or "").strip() or None
        found.append((url, title))
    return found


def is_web_url(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def local_feed_problem(url: str) -> str | None:
    """Why a local-path or ``file://`` OPML entry may not be subscribed, or ``None`` when the
    file exists on this machine and parses as a feed (what ``export-opml`` wrote for a local
    feed). Defence in depth: an OPML file from someone else cannot make ``hermes ingest``
    read files that are not feeds."""
    # Here, not at the top: httpx and feedparser load only when a feed is fetched or read.
    from hermes.ingest.fetch import is_local, local_path
    from hermes.ingest.parse import ParseError, parse_feed

    if not is_local(url):
        return "not an http(s) URL or a local file"
    path = local_path(url)
    try:
        if not path.is_file():
            return "no such feed file on this machine"
        if path.stat().st_size > MAX_OPML_BYTES * 2:
            return "too large to be a feed file"
        parse_feed(path.read_bytes(), url=str(path))
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    except ParseError:
        return "not a feed file"
    return None


def as_opml_url(url: str) -> str:
    """Local feeds as ``file://`` URLs (what OPML readers expect of ``xmlUrl``)."""
    # Here, not at the top: the fetch module loads httpx, which loads only when a feed is fetched.
    from hermes.ingest.fetch import is_local, local_path

    if is_local(url):
        return local_path(url).expanduser().resolve().as_uri()
    return url


def build_opml(feeds: list[dict], title: str = "hermes subscriptions") -> bytes:
    """An OPML 2.0 document listing ``feeds`` (dicts with ``url`` and ``title``)."""
    opml = ET.Element("opml", version="2.0")
    head = ET.SubElement(opml, "head")
    ET.SubElement(head, "title").text = title
    ET.SubElement(head, "dateCreated").text = format_datetime(datetime.now(timezone.utc))
    body = ET.SubElement(opml, "body")
    for feed in feeds:
        name = feed.get("title") or feed["url"]
        attrs = {"type": "rss", "text": name, "title": name, "xmlUrl": as_opml_url(feed["url"])}
        ET.SubElement(body, "outline", attrs)
    ET.indent(opml)
    return ET.tostring(opml, encoding="utf-8", xml_declaration=True) + b"\n"
