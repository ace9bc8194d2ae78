"""Looking up an item that no feed brought: what ``hermes save`` / ``save_item`` is given
(an arXiv id, a DOI or a web page's URL) and one fetch of its metadata.

- arXiv id → arXiv's API (``[corpus] arxiv_api``), which answers in Atom; feedparser reads
  it and the ingest's own entry normalisation turns it into an item.
- DOI → the DOI resolver (``[corpus] doi_resolver``) with content negotiation for
  CSL-JSON (``Accept: application/vnd.citationstyles.csl+json``), which Crossref, DataCite
  and mEDRA answer.
- URL → the page's title and description (``citation_*`` / Open Graph / ``<title>``).

Every fetch goes through :func:`hermes.ingest.fetch.fetch`: its time limit, size cap and,
for agent calls, its private-address guard. Each function returns an item dict with the
fields of :data:`hermes.ingest.store.ITEM_FIELDS` or raises :class:`LookupFailed`; none
touches the database.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser

from hermes.config import settings
from hermes.errors import HermesError, InvalidInput
from hermes.ingest.fetch import FetchError, fetch
from hermes.ingest.parse import MAX_SUMMARY, MAX_TITLE, ParseError, arxiv_id, normalise_entry, normalise_tags, read_xml
from hermes.ingest.text import canonical_url, plain_text

MAX_METADATA_BYTES = 2 * 1024 * 1024
CSL_ACCEPT = "application/vnd.citationstyles.csl+json"
HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1"

_DOI = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)$", re.I)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)
_ARXIV_BARE = re.compile(r"^(?:arxiv:\s*)?(\d{4}\.\d{4,5}|[a-z][a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?$", re.I)


class LookupFailed(HermesError):
    """The metadata could not be fetched or read; nothing was stored."""


@dataclass(frozen=True)
class Ref:
    kind: str  # "arxiv" | "doi" | "url"
    value: str  # version-less arXiv id, DOI, or canonical URL


def identify(text) -> Ref:
    """What the person or agent gave: an arXiv id (any version, bare or as a URL), a DOI
    (bare, ``doi:`` or a doi.org URL; an arXiv DOI counts as the arXiv id) or a web page."""
    if not text.strip():
        raise InvalidInput("give an arXiv id (2401.12345), a DOI (10.1000/xyz) or an http(s) URL")
    text = text.strip()
    if len(text) > 2000:
        raise InvalidInput("that reference is over 2000 characters; give an arXiv id, a DOI or a URL")
    m = _DOI.match(text)
    if m:
        doi = m.group(1).rstrip(".,;")
        arxiv = _ARXIV_DOI.match(doi)
        found = arxiv and _ARXIV_BARE.match(arxiv.group(1)) and arxiv_id("arxiv:" + arxiv.group(1))
        return Ref("arxiv", found) if found else Ref("doi", doi)
    found = _ARXIV_BARE.match(text) and arxiv_id("arxiv:" + text)
    if found:
        return Ref("arxiv", found)
    scheme = urllib.parse.urlsplit(text).scheme.lower()
    if scheme in ("http", "https"):
        host = (urllib.parse.urlsplit(text).hostname or "").lower()
        if host == "arxiv.org" or host.endswith(".arxiv.org"):
            found = arxiv_id(text)
            if found:
                return Ref("arxiv", found)
        url = canonical_url(text)
        if url:
            return Ref("url", url)
    raise InvalidInput(f"{text[:200]!r} is not an arXiv id (2401.12345), a DOI (10.1000/xyz) or an http(s) URL")


def _get(url: str, accept: str, allow_private: bool, what: str):
    try:
        return fetch(
            url,
            accept=accept,
            allow_private=allow_private,
            timeout=min(settings().fetch_timeout, 30.0),
            max_bytes=MAX_METADATA_BYTES,
        )
    except FetchError as exc:
        raise LookupFailed(f"could not fetch {what} from {url}: {exc}") from None


# --- arXiv ---------------------------------------------------------------------------------


def arxiv_item(arxiv: str, api: str, *, allow_private: bool) -> dict:
    """One paper from arXiv's API (Atom, read with feedparser)."""
    url = f"{api}?{urllib.parse.urlencode({'id_list': arxiv, 'max_results': 1})}"
    res = _get(url, "application/atom+xml", allow_private, f"arXiv's record of {arxiv}")
    try:  # through the entity guard: the answer is a remote server's bytes like any feed's
        parsed, _ = read_xml(res.body or b"")
    except ParseError as exc:
        raise LookupFailed(f"arXiv's API answered for {arxiv} with a document hermes will not read ({exc})") from None
    if not (parsed.get("version") or "").startswith("atom"):
        raise LookupFailed(
            f"arXiv's API answered with something that is not Atom for {arxiv} (from {api}); try again later"
        )
    # An unknown or malformed id gets no entry, or an error entry with an api/errors id.
    entries = [e for e in parsed.entries if "/abs/" in (e.get("id") or "") and e.get("title")]
    if not entries:
        raise LookupFailed(f"arXiv has no paper {arxiv}; check the id (e.g. 2401.12345)")
    entry = entries[0]
    item = normalise_entry(entry, feed_url=api)
    if item["arxiv_id"] != arxiv:
        raise LookupFailed(f"arXiv's API answered for {item['arxiv_id']}, not {arxiv}")
    names = [plain_text(a.get("name")) for a in entry.get("authors") or []]
    item["author"] = ", ".join(n for n in names if n)[:2000] or None
    # <arxiv:doi>: the published version's DOI. Not an item field, so :mod:`.save` stores
    # it beside the item for the exports.
    doi = _DOI.match(plain_text(entry.get("arxiv_doi") or "").split(" ")[0])
    item["doi"] = doi.group(1).rstrip(".,;") if doi else None
    return item


# --- DOI -----------------------------------------------------------------------------------


_CSL_DATES = ("issued", "published-print", "published-online", "created")
_CSL_NAME_PARTS = ("literal", "given", "non-dropping-particle", "family")


def csl_problem(data: dict) -> str | None:
    """What in a CSL-JSON record does not have the shape CSL gives it, or None.

    The resolver is a remote server: a record with ``given`` as a list, ``issued`` as a
    text, ``date-parts`` as an object (…) made the readers below raise, and the agent read
    "save_item failed unexpectedly". Checked first, so the refusal names the field."""
    if data.get("title") is not None and not _text_or_texts(data["title"], empty=True):
        return "its title is not a text"
    for key in ("abstract",):
        if data.get(key) is not None and not isinstance(data[key], str):
            return f"its {key} is not a text"
    authors = data.get("author")
    if authors is not None:
        if not isinstance(authors, list):
            return "its author list is not a list"
        for a in authors:
            bad = [
                k for k in _CSL_NAME_PARTS if isinstance(a, dict) and a.get(k) is not None and not isinstance(a[k], str)
            ]
            if not isinstance(a, dict) or bad:
                return f"an author's {bad[0] if bad else 'entry'} is not a text"
    for key in _CSL_DATES:
        value = data.get(key)
        if value is None:
            continue
        parts = value.get("date-parts") if isinstance(value, dict) else None
        if not isinstance(value, dict) or (
            parts is not None
            and not (
                isinstance(parts, list)
                and all(
                    isinstance(p, list) and all(isinstance(n, (int, str)) and not isinstance(n, bool) for n in p)
                    for p in parts
                )
            )
        ):
            return f'its {key} date is not a CSL date ({{"date-parts": [[year, month, day]]}})'
    for key in ("subject", "categories"):
        if data.get(key) is not None and not _text_or_texts(data[key], empty=True):
            return f"its {key} is not a list of texts"
    return None


def _text_or_texts(value, *, empty: bool = False) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, list) and (empty or bool(value)) and all(isinstance(v, str) for v in value)


def _csl_date(data: dict) -> str | None:
    for key in _CSL_DATES:
        parts = ((data.get(key) or {}).get("date-parts") or [[None]])[0]
        try:
            nums = [int(p) for p in parts if p is not None]
            if nums:
                y, m, d = [*nums, 1, 1][:3]
                return datetime(y, m, d, tzinfo=UTC).isoformat(timespec="seconds")
        except (TypeError, ValueError, OverflowError):
            continue
    return None


def _csl_names(authors) -> str | None:
    names = []
    for a in authors if isinstance(authors, list) else []:
        if not isinstance(a, dict):
            continue
        name = a.get("literal") or " ".join(
            filter(None, [a.get("given"), a.get("non-dropping-particle"), a.get("family")])
        )
        name = plain_text(str(name))
        if name:
            names.append(name)
    return ", ".join(names)[:2000] or None


def _first(value) -> str:
    return str(value[0] if isinstance(value, list) and value else value or "")


def doi_item(doi: str, resolver: str, *, allow_private: bool) -> dict:
    """One work's CSL-JSON from the DOI resolver (content negotiation)."""
    url = resolver.rstrip("/") + "/" + urllib.parse.quote(doi, safe="/:;()._-")
    res = _get(url, CSL_ACCEPT, allow_private, f"the metadata of DOI {doi}")
    try:
        data = json.loads((res.body or b"").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise LookupFailed(
            f"the DOI resolver sent no citation data for {doi} (not CSL-JSON); "
            "check the DOI, or save the article's web page by its URL"
        ) from None
    except RecursionError:  # 2 MB of "[" nest deeper than Python's reader goes
        raise LookupFailed(
            f"the DOI resolver's record of {doi} is nested too deeply to read; nothing was stored"
        ) from None
    problem = csl_problem(data) if isinstance(data, dict) else None
    if problem:
        raise LookupFailed(f"the DOI resolver's record of {doi} is malformed: {problem}; nothing was stored")
    if not isinstance(data, dict) or not _first(data.get("title")).strip():
        raise LookupFailed(f"the DOI resolver's record of {doi} has no title")
    subjects = data.get("subject") or data.get("categories") or []
    return {
        "guid": f"doi:{doi.lower()}",
        "url": f"https://doi.org/{doi}",
        "title": plain_text(_first(data.get("title")), limit=MAX_TITLE),
        "summary": plain_text(str(data.get("abstract") or ""), limit=MAX_SUMMARY),
        "author": _csl_names(data.get("author")),
        # no date in the record: undated (in no recency window), never "today"
        "published": _csl_date(data) or None,
        "content_type": "paper",
        "tags": normalise_tags(subjects if isinstance(subjects, list) else [subjects]),
        "enclosure": None,
        "arxiv_id": None,
    }


# --- a web page ----------------------------------------------------------------------------


class _Head(HTMLParser):
    """Collects ``<title>`` and the ``<meta>`` tags of a page (the body is not needed)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, list[str]] = {}
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "title":
            self._in_title = True
        elif tag == "meta":
            name = (a.get("name") or a.get("property") or "").lower()
            if name and a.get("content"):
                self.meta.setdefault(name, []).append(a["content"])

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def first(self, *names: str) -> str:
        for name in names:
            if self.meta.get(name):
                return self.meta[name][0]
        return ""


def _page_date(value: str) -> str | None:
    value = value.strip().replace("/", "-")
    for candidate in (value, value[:10]):
        try:
            when = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        return when.astimezone(UTC).isoformat(timespec="seconds")
    return None


def page_item(url: str, *, allow_private: bool) -> dict:
    """A web page's title and description (``citation_*``, Open Graph, then ``<title>``)."""
    res = _get(url, HTML_ACCEPT, allow_private, "the page")
    kind = (res.headers.get("content-type") or "").split(";")[0].strip().lower()
    if kind and "html" not in kind:
        raise LookupFailed(f"{url} is not a web page ({kind}); save a paper by its arXiv id or DOI")
    charset = re.search(r"charset=([\w-]+)", res.headers.get("content-type") or "")
    try:
        text = (res.body or b"").decode(charset.group(1) if charset else "utf-8", "replace")
    except (LookupError, UnicodeError):  # unknown, or a codec like idna that cannot replace
        text = (res.body or b"").decode("utf-8", "replace")
    head = _Head()
    try:
        head.feed(text[:MAX_METADATA_BYTES])
        head.close()
    except Exception:  # noqa: BLE001 - hostile markup: keep what was read before it
        pass
    title = plain_text(
        head.first("citation_title", "og:title", "twitter:title", "dc.title") or head.title, limit=MAX_TITLE
    )
    if not title:
        raise LookupFailed(f"{url} has no title to save it under; save a paper by its arXiv id or DOI")
    authors = head.meta.get("citation_author") or head.meta.get("author") or []
    scholarly = bool(head.first("citation_title", "citation_doi"))
    return {
        "guid": url,
        "url": url,
        "title": title,
        "summary": plain_text(
            head.first("citation_abstract", "description", "og:description", "twitter:description"), limit=MAX_SUMMARY
        ),
        "author": ", ".join(filter(None, (plain_text(a) for a in authors)))[:2000] or None,
        "published": _page_date(
            head.first("citation_publication_date", "citation_date", "article:published_time", "dc.date")
        )
        or None,
        "content_type": "paper" if scholarly else "article",
        "tags": normalise_tags(head.meta.get("citation_keywords", []) + head.meta.get("article:tag", [])),
        "enclosure": None,
        "arxiv_id": None,
    }


def lookup(ref: Ref, *, arxiv_api: str, doi_resolver: str, allow_private: bool) -> dict:
    if ref.kind == "arxiv":
        return arxiv_item(ref.value, arxiv_api, allow_private=allow_private)
    if ref.kind == "doi":
        return doi_item(ref.value, doi_resolver, allow_private=allow_private)
    return page_item(ref.value, allow_private=allow_private)
