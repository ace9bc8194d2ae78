"""Parsing a feed body with feedparser and normalising its entries into item dicts.

Every text field leaves here as plain text: tags stripped, entities decoded, whitespace
collapsed, no markup left that could run as script wherever it is later shown.
"""

from __future__ import annotations

import hashlib
import html
import io
import mimetypes
import re
import urllib.parse
from dataclasses import dataclass
from xml.parsers.expat.errors import XML_ERROR_UNDEFINED_ENTITY
from xml.sax import SAXParseException

from hermes.storage.records import is_media
from hermes.text.authors import fuller, parse_authors
from hermes.text.markup import paired_tags_only
from hermes.text.tags import normalize_tag

from ..errors import HermesError
from .arxiv_text import clean_title, split_bridge, strip_announce_prefix
from .dates import believable, date_from_url, feedparser_module, struct_to_iso, text_date
from .doctype import EntityDeclarations, defuse
from .text import canonical_url, plain_text, safe_url

MAX_TITLE = 500
MAX_SUMMARY = 4000
MAX_TAGS = 30

# arXiv identifiers: new style 0704.0001 / 2401.12345v2, old style hep-th/9901001v1.
_ARXIV_NEW = re.compile(r"(?<!\d)(?<!\d\.)(\d{4}\.\d{4,5})(?:v\d+)?(?!\d)")  # arXiv DOIs: "arXiv.0704.1288"
_ARXIV_OLD = re.compile(r"\b([a-z][a-z-]+(?:\.[A-Za-z]{2})?/\d{7})(?:v\d+)?\b")
_DOI = re.compile(r"(?:doi\.org/|\bdoi:\s*)(10\.\d{4,9}/\S+)", re.I)


class ParseError(HermesError):
    """A body that is not a usable feed; ``str(exc)`` says why."""


@dataclass
class ParsedFeed:
    title: str
    link: str | None
    items: list[dict]
    warning: str | None = None  # feedparser's bozo note for a feed that still parsed
    version: str = ""
    ttl: int | None = None  # seconds the feed asks readers to wait between fetches
    #: entries read but not kept, by reason (:data:`EMPTY_ENTRY`, :data:`REPEATED_ENTRY`)
    skipped: dict[str, int] | None = None


#: why an entry of a feed is not kept (the reasons :func:`skipped_note` words)
EMPTY_ENTRY = "no title, link or text"
REPEATED_ENTRY = "listed twice in the feed"


def skipped_note(skipped: dict[str, int] | None) -> str | None:
    """The one wording of the entries a fetch read but did not keep, for the ingest lines,
    the feed's stored warning and the answers that show it: "1 entry skipped: no title,
    link or text", "3 entries skipped: 2 with no title, link or text, 1 listed twice in the
    feed"; None when none were."""
    counts = {reason: n for reason, n in (skipped or {}).items() if n}
    total = sum(counts.values())
    if not total:
        return None
    head = f"{total} {'entry' if total == 1 else 'entries'} skipped"
    if len(counts) == 1:
        return f"{head}: {next(iter(counts))}"
    return f"{head}: " + ", ".join(
        f"{n} {'with ' if reason == EMPTY_ENTRY else ''}{reason}" for reason, n in counts.items()
    )


def arxiv_id(*candidates: str | None) -> str | None:
    """The version-less arXiv id in the first candidate that names arXiv."""
    for text in candidates:
        if not text or "arxiv" not in text.lower():
            continue
        m = _ARXIV_NEW.search(text) or _ARXIV_OLD.search(text)
        if m:
            return m.group(1)
    return None


def arxiv_year(identifier: str | None) -> str | None:
    """The year an arXiv paper was first submitted, from its id (2611.01234: 2026;
    hep-th/9901001: 1999): a listing's date is that of the version it lists, and a paper
    replaced years later is cited by the year of its first version."""
    if not identifier:
        return None
    m = re.fullmatch(r"(\d{2})\d{2}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/(\d{2})\d{5}", identifier.strip())
    if not m:
        return None
    if m.group(1) is not None:
        return f"20{m.group(1)}"
    yy = int(m.group(2))
    return f"{1900 + yy if yy >= 91 else 2000 + yy}"  # old-style ids ran from 1991 to 2007


def _published(entry, link: str | None, text_dates: dict[str, str]) -> str | None:
    """When the entry was published (ISO UTC): its own date (localized names are read by
    :mod:`hermes.ingest.dates`), else its ``updated`` or ``created`` date, else the
    Published (or Submitted, or Updated) line of an arXiv bridge's text, else a date in its
    URL; ``None`` when there is none (the store decides what that means). An arXiv id
    (2611.01234) names only a month, so it is never read as a date. A date further in the
    future than a day (:func:`~hermes.ingest.dates.believable`) is not believed: the next
    source is read instead."""
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        found = believable(struct_to_iso(entry.get(key)))  # feedparser gives UTC
        if found:
            return found
    for label in ("published", "submitted", "updated"):
        found = believable(text_date(text_dates.get(label)))
        if found:
            return found
    return date_from_url(link) or date_from_url(entry.get("link"))


def _author_line(raw, authors: list[str]) -> str | None:
    """The byline as the feed wrote it, or the parsed names when it carries an e-mail
    address (RSS's "jdoe@example.org (John Doe)": an address is not shown or exported) or
    names fewer people than the entry's text does (:func:`hermes.text.authors.fuller`)."""
    if not raw or ("@" in raw and authors) or len(parse_authors(raw)) < len(authors):
        raw = ", ".join(authors)
    return plain_text(raw, limit=300) or None


def _tags(entry) -> list[str]:
    return normalise_tags(tag.get("term") or tag.get("label") or "" for tag in entry.get("tags") or [])


def normalise_tags(terms) -> list[str]:
    """Plain text, comma lists split, each part normalised (:func:`hermes.text.tags.normalize_tag`:
    whitespace collapsed, case-folded), de-duplicated, at most MAX_TAGS."""
    seen: list[str] = []
    for raw in terms:
        term = plain_text(str(raw or ""))
        for part in [term] if "," not in term else term.split(","):
            part = normalize_tag(part)
            if part and len(part) <= 80 and part not in seen:
                seen.append(part)
    return seen[:MAX_TAGS]


def _enclosure(entry) -> dict | None:
    found = []
    for link in entry.get("enclosures") or []:
        url = safe_url(link.get("href") or link.get("url"))
        if not url:
            continue
        # guessed from the path: "ep.mp3?token=…" is not guessed as a whole URL
        mime = (
            (link.get("type") or "").lower().strip() or mimetypes.guess_type(urllib.parse.urlsplit(url).path)[0] or ""
        )
        length = str(link.get("length") or "").strip()
        found.append({"url": url, "type": mime, "length": int(length) if length.isdigit() else None})
    # Prefer the media file over, say, a PDF attachment.
    found.sort(key=lambda e: not is_media(e))
    seconds = duration_seconds(entry.get("itunes_duration"))
    if found and is_media(found[0]) and seconds:
        found[0]["duration"] = seconds
    return found[0] if found else None


def duration_seconds(text) -> int | None:
    """An episode's ``itunes:duration`` in seconds: "3600", "60:00" or "1:00:00" (fractions
    of a second dropped); ``None`` for anything else (a feed's text decides what it holds)."""
    parts = str(text or "").strip().split(":")
    if not 1 <= len(parts) <= 3 or not all(p.split(".")[0].isdigit() for p in parts):
        return None
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part.split(".")[0])
    return seconds or None


def _content_type(arxiv: str | None, doi: str | None, enclosure: dict | None) -> str:
    if arxiv or doi:
        return "paper"
    kind = (enclosure or {}).get("type", "")
    if kind.startswith("audio/"):
        return "podcast"
    if kind.startswith("video/"):
        return "video"
    return "article"


#: the full text wins over a summary it is this many times longer than (markup included)
FULLER = 1.5


def _raw_summary(entry) -> str:
    """The entry's text: its summary (RSS ``description``, Atom ``summary``), or its full
    content (``content:encoded``, Atom ``content``) when that says clearly more. A teaser
    ("Sparse autoencoders are now st") was all a trial's newsletter and blog posts were
    ranked, searched and shown by, with the whole post in the feed."""
    summary = as_html(entry.get("summary"), entry.get("summary_detail"))
    content = next((as_html(c["value"], c) for c in entry.get("content") or [] if c.get("value")), "")
    return content if len(content) > FULLER * len(summary) else summary


#: the content types feedparser gives a value that is text, not markup: Atom's
#: ``type="text"``, and an RSS title it did not find to be HTML
_TEXT_TYPES = ("text/plain", "text")


def as_html(value: str | None, detail=None) -> str:
    """A feed value as HTML for :func:`.text.plain_text`: HTML as the feed wrote it; text
    (by its ``detail``'s type) with each "<" a character but those of a tag closed again in
    it (:func:`hermes.text.markup.paired_tags_only`): feeds call HTML "text" (the arXiv
    API's ``&lt;b&gt;stellar streams&lt;/b&gt;`` is shown "stellar streams", not
    "‹b>stellar streams‹/b>"), and prose names a tag ("Use the <b> tag sparingly")."""
    kind = ((detail or {}).get("type") or "").lower()
    return paired_tags_only(value or "") if kind in _TEXT_TYPES else value or ""


def _text_and_authors(entry, arxiv: str | None) -> tuple[str, list[str], str | None, dict]:
    """(plain-text summary, authors, announce type, dates written in the text). For arXiv
    items the summary is the abstract alone: rss.arxiv.org's prefix and a bridge's author
    paragraph and trailing Published / Comments / PDF lines are taken off (the authors go to
    the author list, the Published / Updated values to the dates)."""
    raw = _raw_summary(entry)
    from_text, dates = None, {}
    bridge = split_bridge(raw, limit=MAX_SUMMARY) if arxiv else None
    if bridge is not None:
        summary, from_text, dates = bridge.abstract, bridge.authors, bridge.dates
    else:
        summary = plain_text(raw, limit=MAX_SUMMARY)
    summary, announce = strip_announce_prefix(summary)
    announce = (entry.get("arxiv_announce_type") or announce or "").strip().lower() or None
    listed = entry.get("authors") or []
    if not any(isinstance(a, dict) and a.get("name") for a in listed):
        listed = [entry.get("author") or ""]
    authors = fuller(parse_authors(listed), parse_authors(from_text) if from_text else [])
    return summary, authors, announce, dates


def _guid(entry, link: str | None, title: str, summary: str, feed_url: str) -> str:
    raw = (entry.get("id") or "").strip()
    if raw:
        # A bare id like "42" is only unique inside its feed; a URI-ish one is global.
        return raw if ":" in raw else f"{feed_url}#{raw}"
    if link:
        return link
    digest = hashlib.sha256(f"{title}\n{summary}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256:{digest[:32]}"


ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"


def inherited_authors(parsed) -> list[str]:
    """The authors a feed gives every entry that names none: an Atom feed's own
    ``<author>`` (RFC 4287 says it applies to such entries) and a podcast's
    ``<itunes:author>``. Not RSS's ``managingEditor``: an editor's e-mail address, which
    feedparser files in the same list (so a podcast's list is read without e-mail ones)."""
    feed = parsed.get("feed") or {}
    listed = [a for a in feed.get("authors") or [] if isinstance(a, dict) and a.get("name")]
    if str(parsed.get("version") or "").startswith("atom"):
        return parse_authors(listed)
    if ITUNES in (parsed.get("namespaces") or {}).values():
        # feedparser files the <itunes:owner> (the company that publishes the show) in
        # the same list, and one with an e-mail overwrites the <itunes:author> it keeps as
        # the feed's ``author``: the owner is no host unless it is the author too (a
        # trial's episodes were "by ML Hour Media")
        detail = feed.get("publisher_detail") or {}
        owner = (detail.get("name") or "").strip()
        hosts = [a for a in listed if not a.get("email") and a["name"].strip() != owner]
        written = (feed.get("author") or "").strip() if isinstance(feed.get("author"), str) else ""
        if written and "@" not in written and not detail.get("email"):
            hosts = [a for a in hosts if a["name"].strip() != written] + [{"name": written}]
        return parse_authors(hosts)
    return []


#: a ``<guid>`` or ``<id>`` element's text, as the feed wrote it (before feedparser resolves it)
_GUID_TEXT = re.compile(rb"<(?:[\w.-]+:)?(?:guid|id)\b[^>]*>\s*(?:<!\[CDATA\[)?\s*(.*?)\s*(?:\]\]>)?\s*</", re.S | re.I)


def absolute_guids(body: bytes) -> set[str]:
    """The guids (and Atom ids) of a feed's bytes that are absolute http(s) URLs as written:
    only such a guid is an entry's address when it has no ``<link>``. feedparser resolves a
    bare "ep-12" against the feed's URL, an address that leads nowhere."""
    found = set()
    for raw in _GUID_TEXT.findall(body):
        text = html.unescape(raw.decode("utf-8", "replace")).strip()
        if _web_address(text):
            found.add(text)
    return found


def _web_address(text: str) -> bool:
    """Whether ``text`` is an http(s) URL; a malformed one ("http://[::1") is not (urlsplit
    raises on it: feedparser's own test corpus has such a guid)."""
    try:
        return urllib.parse.urlsplit(text).scheme.lower() in ("http", "https")
    except ValueError:
        return False


def _entry_link(entry, absolute: set[str] | None) -> str | None:
    """The entry's ``<link>``; feedparser's stand-in from the guid (``guidislink``) only
    when that guid was itself an absolute http(s) URL (``absolute``: :func:`absolute_guids`)."""
    link = entry.get("link")
    # feedparser keeps ``guidislink`` when an Atom <link> follows the <id>: a link that is
    # not the id, or that a <link> element gives too, is the entry's own
    given = any(lk.get("href") == link and lk.get("rel", "alternate") == "alternate" for lk in entry.get("links") or [])
    if link and entry.get("guidislink") and link == entry.get("id") and not given:
        if absolute is not None and link.strip() not in absolute:
            return None
        if not _web_address(link):
            return None
    return link


def normalise_entry(
    entry,
    *,
    feed_url: str,
    inherited: list[str] | None = None,
    feed_title: str = "",
    absolute: set[str] | None = None,
) -> dict:
    """One feedparser entry → a dict with the fields of ``store.ITEM_FIELDS``;
    ``absolute``: the feed's guids that are absolute URLs (:func:`absolute_guids`), the only
    ones that stand in for a missing ``<link>``;
    ``inherited``: the feed's authors (:func:`inherited_authors`), for an entry naming none;
    ``feed_title``: a name that is the feed's own is no author (a podcast's
    ``itunes:author`` is often the show: "by Dispatch, whom you liked once")."""
    title = plain_text(as_html(entry.get("title"), entry.get("title_detail")), limit=MAX_TITLE)
    raw_link = _entry_link(entry, absolute)
    link = canonical_url(raw_link)
    ident = entry.get("id") or ""
    arxiv = arxiv_id(ident, raw_link, *(link_.get("href") for link_ in entry.get("links") or []))
    summary, authors, announce, text_dates = _text_and_authors(entry, arxiv)
    byline = entry.get("author")
    if not authors and inherited:
        authors, byline = list(inherited), ", ".join(inherited)
    show = " ".join(feed_title.split()).casefold()
    if show and any(a.casefold() == show for a in authors):
        authors = [a for a in authors if a.casefold() != show]
        byline = ", ".join(authors) or None
    if arxiv:
        title = clean_title(title)
    published = _published(entry, link, text_dates)
    doi_match = _DOI.search(
        " ".join(filter(None, [ident, raw_link or "", entry.get("prism_doi") or "", entry.get("dc_identifier") or ""]))
    )
    if arxiv:
        link = f"https://arxiv.org/abs/{arxiv}"
    enclosure = _enclosure(entry)
    if not title:
        title = summary[:120] or (link or "")
    return {
        "guid": f"arxiv:{arxiv}" if arxiv else _guid(entry, link, title, summary, feed_url),
        # An episode without a <link> is opened at its media file, its only address (its
        # title was not a link and `o` did nothing). The guid keeps the link it had.
        "url": link or (enclosure["url"] if is_media(enclosure) else None),
        "title": title,
        "summary": summary,
        "author": _author_line(byline, authors),
        "authors": authors,
        "published": published,
        "content_type": _content_type(arxiv, doi_match and doi_match.group(1), enclosure),
        "tags": _tags(entry),
        "enclosure": enclosure,
        "arxiv_id": arxiv,
        "announce_type": announce,
    }


_SY_PERIOD = {"hourly": 3600, "daily": 86400, "weekly": 7 * 86400, "monthly": 30 * 86400, "yearly": 365 * 86400}


def feed_ttl(feed) -> int | None:
    """How long the feed asks readers to wait between fetches, in seconds: RSS ``<ttl>``
    (minutes), else ``sy:updatePeriod`` / ``sy:updateFrequency`` (a period, how many times
    in it). None when it says nothing usable."""
    try:
        minutes = float(str(feed.get("ttl") or "").strip())
    except ValueError:
        minutes = 0
    if minutes > 0:
        return int(minutes * 60)
    period = _SY_PERIOD.get(str(feed.get("sy_updateperiod") or "").strip().lower())
    if not period:
        return None
    try:
        times = max(1, int(str(feed.get("sy_updatefrequency") or "1").strip()))
    except ValueError:
        times = 1
    return period // times


def _not_a_feed_reason(body: bytes, parsed) -> str | None:
    """Why a body without a recognised feed version is refused; None for a readable
    channel without entries (an old CDF channel, say)."""
    head = body[:2048].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"<!doctype html") or b"<html" in head:
        return "not a feed: the server sent an HTML page"
    if head.startswith((b"{", b"[")):
        return "not a feed: JSON (JSON Feed is not supported; use the site's RSS or Atom feed)"
    exc = parsed.get("bozo_exception")
    if exc is not None:
        return f"not a feed: malformed XML ({_one_line(exc)})"
    feed = parsed.get("feed") or {}
    if feed.get("title") or feed.get("link") or feed.get("subtitle"):
        return None
    return "not a feed: no RSS, Atom or RDF content found"


def _broken(exc) -> bool:
    """Whether feedparser's bozo exception says the XML's structure is broken (a mismatched
    tag, a truncated document, a stray "&"), rather than something its lenient parser is
    built to read right: an HTML entity such as ``&nbsp;`` that XML does not define (most of
    feedparser's own test corpus), or a note about a feed that parsed (a charset it had to
    override, a text/plain content type)."""
    if isinstance(exc, feedparser_module().ThingsNobodyCaresAboutButMe):
        return False
    return not (isinstance(exc, SAXParseException) and exc.getMessage() == XML_ERROR_UNDEFINED_ENTITY)


def _one_line(exc) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return re.sub(r"<unknown>:(\d+):(\d+):", r"line \1, column \2:", line)[:200]


def read_xml(body: bytes, headers: dict[str, str] | None = None):
    """feedparser's reading of ``body`` (with the lower-cased response ``headers``), once
    its entity declarations are removed (:mod:`.doctype`); and whether any were. Every path
    that hands feed bytes to feedparser goes through here. Raises :class:`ParseError` when
    a declaration cannot be removed."""
    try:
        body, defused = defuse(body, headers or {})
    except EntityDeclarations as exc:
        raise ParseError(str(exc)) from None
    # BytesIO, never raw bytes: feedparser tries open() on a bytes argument first, so a body
    # that happens to be a file name would be read from the local disk. Its HTML passes
    # (sanitising, relative links) are off: their sgmllib tokenizer reads "$0<p\le 1$, $0<q"
    # as a <p> tag and drops the text after it (arXiv 0704.0054), and hermes keeps no HTML
    # anyway: every value becomes text through plain_text (nh3 drops all markup, script
    # and style with their content, after literal_less_than kept TeX's "<").
    return feedparser_module().parse(
        io.BytesIO(body), response_headers=headers, resolve_relative_uris=False, sanitize_html=False
    ), defused


def parse_feed(body: bytes, *, url: str, headers: dict | None = None) -> ParsedFeed:
    """Parse ``body`` (the feed's exact bytes) fetched from ``url``.

    ``headers`` (the HTTP response headers) let feedparser honour a declared charset.
    Raises :class:`ParseError` when the body is not a feed or nothing could be read from
    it; a feed with recoverable problems ("bozo") parses, with the problem in ``warning``.
    """
    if not body or not body.strip():
        raise ParseError("empty body")
    response_headers = {k.lower(): v for k, v in (headers or {}).items()}
    response_headers.setdefault("content-location", url)
    # Local files and some servers send no type; without one feedparser flags every feed.
    response_headers.setdefault("content-type", "application/xml")
    parsed, defused = read_xml(body, response_headers)
    entries = parsed.get("entries") or []
    if not parsed.get("version") and not entries:
        reason = _not_a_feed_reason(body, parsed)
        if reason:
            raise ParseError(reason)
    feed = parsed.get("feed") or {}
    items, seen = [], set()
    skipped = {EMPTY_ENTRY: 0, REPEATED_ENTRY: 0}
    inherited = inherited_authors(parsed)
    show = plain_text(as_html(feed.get("title"), feed.get("title_detail")))
    absolute = absolute_guids(body)
    for entry in entries:
        item = normalise_entry(entry, feed_url=url, inherited=inherited, feed_title=show, absolute=absolute)
        if not (item["title"] or item["url"] or item["enclosure"]):
            skipped[EMPTY_ENTRY] += 1  # an empty shell (often the torso of a truncated feed)
            continue
        if item["guid"] in seen:
            skipped[REPEATED_ENTRY] += 1
            continue
        seen.add(item["guid"])
        items.append(item)
    warning = None
    if parsed.get("bozo"):
        # Ill-formed but readable feeds are common (wrong charset, a stray "&"); what they
        # yield is kept and the problem becomes a warning. A document whose structure is
        # broken and that yields no item is no feed: the channel title feedparser's lenient
        # parser glues together from the wreck ("Brokenoops") vouches for nothing.
        exc = parsed.get("bozo_exception")
        warning = _one_line(exc or "ill-formed feed")
        if "no element found" in warning:  # expat's words for a document that stops early
            warning = (
                f"the feed stops before its end ({warning}): it was cut short, so any entries "
                f"after that point are missing; {len(items)} could be read"
            )
        if not items and (_broken(exc) or not (parsed.get("version") and (feed.get("title") or feed.get("link")))):
            raise ParseError(f"malformed feed: {warning}, and no entries could be read")
    if defused and not warning:
        warning = "the feed's DOCTYPE declares XML entities; hermes ignored them"
    return ParsedFeed(
        title=plain_text(as_html(feed.get("title"), feed.get("title_detail")), limit=MAX_TITLE),
        link=canonical_url(feed.get("link")),
        items=items,
        warning=warning,
        version=parsed.get("version") or "",
        ttl=feed_ttl(feed),
        skipped={reason: n for reason, n in skipped.items() if n},
    )


__all__ = [
    "EMPTY_ENTRY",
    "REPEATED_ENTRY",
    "ParseError",
    "ParsedFeed",
    "arxiv_id",
    "normalise_entry",
    "parse_feed",
    "read_xml",
    "skipped_note",
]
