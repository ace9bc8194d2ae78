"""OPML import and export of subscriptions (``hermes feeds import-opml`` / ``export-opml``).

Built and read with :mod:`xml.etree.ElementTree`, so every title and URL is escaped by the
serialiser, never pasted into markup. Reading uses Python's expat (2.4+ refuses
entity-expansion bombs; ElementTree never fetches external entities).
"""

from __future__ import annotations

import re
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

from hermes.errors import InvalidInput
from hermes.ingest.parse import ParseError, parse_feed
from hermes.ingest.text import safe_url
from hermes.storage.transactions import write_transaction

MAX_OPML_BYTES = 10 * 1024 * 1024
#: folders nested deeper than this are read as the deepest of them: a path of thousands of
#: names is no filing a person made
MAX_FOLDER_DEPTH = 16


#: how a feed's nested folders are stored in ``feeds.folder`` and shown: outermost first
FOLDER_SEP = " / "


#: what stands in for a literal " / " inside one folder's name (U+FF0F FULLWIDTH SOLIDUS with
#: its spaces), so that name stays one folder and is not read back as two nested ones
SEP_IN_NAME = " \uff0f "


@dataclass(frozen=True)
class Outline:
    """One feed of an OPML file: its ``xmlUrl``, its name, the folder path it sits in
    (``None`` at the top level) and its ``htmlUrl`` (an http(s) site link, else ``None``)."""

    url: str
    title: str | None = None
    folder: str | None = None
    site_url: str | None = None


@dataclass
class OpmlList:
    """What :func:`read_opml` found: ``outlines`` (each feed once), ``repeats`` (one
    ``{url, folder, kept_in}`` per later entry of a feed already listed) and ``renamed``
    (``{name, stored}`` per folder name whose `` / `` became :data:`SEP_IN_NAME`)."""

    outlines: list[Outline]
    repeats: list[dict]
    renamed: list[dict]


def read_opml(path: str | Path) -> OpmlList:
    """Every outline with an ``xmlUrl``, at any nesting depth, in document order; a feed
    listed again (however spelled) is kept where it is first listed and the later entry
    counted in ``repeats``.

    A feed's folder is the path of the outlines without ``xmlUrl`` around it, outermost first
    and joined by :data:`FOLDER_SEP` (``Science / Physics``), so nested folders survive an
    export -> import round trip; a `` / `` inside one folder's name becomes
    :data:`SEP_IN_NAME`. Names come from ``text`` (what OPML readers display), else
    ``title``. ``feed://`` and ``feed:https://`` addresses are read as http(s)."""
    # Here, not at the top: the ingest package loads httpx, which loads only when a feed is
    # fetched or read.
    from hermes.ingest.feedlist import same_feed_key

    root = _parse(Path(path).expanduser())
    found: list[Outline] = []
    first: dict[str, Outline] = {}
    repeats, renamed = [], {}
    body = root.find("body") if root.find("body") is not None else root
    # A stack, not recursion: a file nested 5,000 deep ended in a RecursionError.
    stack = [(outline, ()) for outline in reversed(body.findall("outline"))]
    while stack:
        outline, folders = stack.pop()
        attrs = _attributes(outline)
        url = without_feed_scheme(attrs.get("xmlurl") or "")
        name = _name(attrs)
        folder = FOLDER_SEP.join(folders) or None
        key = same_feed_key(url) if url else ""
        if url and key in first:
            repeats.append({"url": url, "folder": folder, "kept_in": first[key].folder})
        elif url:
            first[key] = Outline(url, name, folder, _site(attrs.get("htmlurl")))
            found.append(first[key])
        if not url and name and FOLDER_SEP in name:
            renamed.setdefault(name, name.replace(FOLDER_SEP, SEP_IN_NAME))
        inner = (
            folders
            if url or not name or len(folders) >= MAX_FOLDER_DEPTH
            else (*folders, name.replace(FOLDER_SEP, SEP_IN_NAME))
        )
        stack += [(child, inner) for child in reversed(outline.findall("outline"))]
    return OpmlList(found, repeats, [{"name": k, "stored": v} for k, v in renamed.items()])


def _attributes(outline: ET.Element) -> dict[str, str]:
    """An outline's attributes by lower-case name: readers write ``xmlUrl``, ``xmlurl`` and
    ``xmlURL`` (an ``xmlURL`` was ignored: "0 feeds added", and no reason given)."""
    found: dict[str, str] = {}
    for name, value in outline.attrib.items():
        found.setdefault(name.lower(), value)
    return found


def without_feed_scheme(url: str) -> str:
    """``feed://host/path`` as ``http://host/path`` and ``feed:https://…`` as ``https://…``
    (the two spellings of the ``feed`` pseudo-scheme some readers write); others as given."""
    url = url.strip()
    if url[:5].lower() != "feed:":
        return url
    rest = url[5:]
    return "http:" + rest if rest.startswith("//") else rest


def _parse(path: Path) -> ET.Element:
    try:
        if path.stat().st_size > MAX_OPML_BYTES:
            raise InvalidInput(f"{path}: larger than {MAX_OPML_BYTES // (1024 * 1024)} MB; not an OPML file?")
        root = _parsed(path.read_bytes())
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
    return root


#: a "&" that begins no entity or character reference: invalid XML, which some readers
#: write all the same in an outline's URL ("…?a=1&b=2", a Miniflux export)
_RAW_AMPERSAND = re.compile(rb"&(?!(?:[A-Za-z_][\w.-]*|#[0-9]+|#x[0-9A-Fa-f]+);)")


def _parsed(data: bytes) -> ET.Element:
    """The OPML document's root. A file refused only for a raw "&" is read with each one
    escaped, the way the reader that wrote it meant it: one such URL rejected the whole file."""
    try:
        return ET.fromstring(data)
    except ET.ParseError as refused:
        repaired = _RAW_AMPERSAND.sub(b"&amp;", data)
        if repaired == data:
            raise
        try:
            return ET.fromstring(repaired)
        except ET.ParseError:
            raise refused from None  # broken otherwise too: say where it first broke


def _name(attrs: dict[str, str]) -> str | None:
    """The outline's ``text``, else its ``title`` (a blank ``text=" "`` is no name), with
    whitespace collapsed: a folder name is one line of the folder path."""
    for key in ("text", "title"):
        name = " ".join((attrs.get(key) or "").split())
        if name:
            return name
    return None


def _site(url: str | None) -> str | None:
    """An ``htmlUrl`` worth keeping: only http(s), since the web page links it."""
    return safe_url(url)


def subscribe_outlines(db, outlines: list[Outline]) -> dict:
    """Subscribe the outlines not subscribed yet (however spelled), in their folders, as the
    user's; a feed subscribed already moves into the folder the file gives it (one at the
    file's top level keeps its folder) and keeps its title. Returns ``added`` (ids),
    ``already`` (how many were subscribed) and ``moved`` (``{id, folder, was}``)."""
    # Here, not at the top: the ingest modules load httpx, which loads only when a feed is
    # fetched or read.
    from hermes.ingest.feedlist import add_feeds, find_feed

    moved, fresh = [], []
    with write_transaction(db):
        for outline in outlines:
            existing = find_feed(db, outline.url)
            if existing is None:
                fresh.append(outline)
                continue
            was, site = db.execute("SELECT folder, site_url FROM feeds WHERE id = ?", [existing["id"]]).fetchone()
            if outline.folder and outline.folder != was:
                moved.append({"id": existing["id"], "folder": outline.folder, "was": was})
            db.execute(
                "UPDATE feeds SET folder = ?, site_url = ? WHERE id = ?",
                [outline.folder or was, site or outline.site_url, existing["id"]],
            )
        added = add_feeds(db, [(o.url, o.title, o.folder, o.site_url) for o in fresh])
    return {"added": added, "already": len(outlines) - len(added), "moved": moved}


def is_web_url(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def local_feed_problem(url: str) -> str | None:
    """Why a local-path or ``file://`` OPML entry may not be subscribed, or ``None`` when the
    file exists on this machine and parses as a feed (what ``export-opml`` wrote for a local
    feed). Defence in depth: an OPML file from someone else cannot make ``hermes ingest``
    read files that are not feeds."""
    # Here, not at the top: httpx loads only when a feed is fetched.
    from hermes.ingest.locations import is_local, local_path

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
    from hermes.ingest.locations import is_local, local_path

    if is_local(url):
        return local_path(url).expanduser().resolve().as_uri()
    return url


def build_opml(feeds: list[dict], title: str = "hermes subscriptions") -> bytes:
    """An OPML 2.0 document listing ``feeds`` (dicts with ``url``, ``title`` and optionally
    ``folder`` and ``site_url``): each folder path as nested outlines (``text`` and
    ``title``: its name), each feed as an outline of type ``rss`` with ``text`` and
    ``title`` (its name), ``xmlUrl`` and, when known, ``htmlUrl``."""
    opml = ET.Element("opml", version="2.0")
    head = ET.SubElement(opml, "head")
    ET.SubElement(head, "title").text = title
    ET.SubElement(head, "dateCreated").text = format_datetime(datetime.now(UTC))
    body = ET.SubElement(opml, "body")
    folders: dict[tuple[str, ...], ET.Element] = {(): body}
    for feed in feeds:
        name = feed.get("title") or feed["url"]
        attrs = {"type": "rss", "text": name, "title": name, "xmlUrl": as_opml_url(feed["url"])}
        if feed.get("site_url"):
            attrs["htmlUrl"] = feed["site_url"]
        ET.SubElement(_folder(folders, feed.get("folder")), "outline", attrs)
    ET.indent(opml)
    return ET.tostring(opml, encoding="utf-8", xml_declaration=True) + b"\n"


def folder_parts(folder: str | None) -> tuple[str, ...]:
    """A stored folder path as its names, outermost first (empty at the top level)."""
    return tuple(part.strip() for part in (folder or "").split(FOLDER_SEP) if part.strip())


def _folder(folders: dict, folder: str | None) -> ET.Element:
    """The outline of ``folder`` (made, with its parents, on first use)."""
    parts = folder_parts(folder)
    for depth in range(1, len(parts) + 1):
        if parts[:depth] not in folders:
            name = parts[depth - 1]
            folders[parts[:depth]] = ET.SubElement(
                folders[parts[: depth - 1]], "outline", {"text": name, "title": name}
            )
    return folders[parts]
