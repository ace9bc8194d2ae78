"""Reference records: what leaves hermes about each corpus item.

One record per item of the chosen facets, in the order the items entered them (membership
revision, oldest first), with what a reference manager or a notes vault needs: a stable
key (the person's library's where an import named the item, :func:`_unique_keys`), title,
authors as a list, year, URL, arXiv id, DOI, abstract, tags, facet, strength, dates, the
source (the feed's title) and media (an episode's enclosure), the persona's highlights and
notes, a library's BibTeX title protection (``title_spans``) and its type of the entry
(``csl_type``: ``book``, ``chapter``, ``thesis`` …, None where no library said). The exporters
(:mod:`.export`) and the vault sync (:mod:`.sync`) format these records; nothing else reads
the corpus tables for them.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import NamedTuple

import sqlite_utils

from hermes.arguments import refuse
from hermes.clock import as_precise
from hermes.errors import InvalidInput
from hermes.ingest.parse import arxiv_year
from hermes.text.authors import (
    ORGANISATION_WORDS,
    is_organisation,
    is_suffix,
    parse_stored,
    split_name,
    without_honorifics,
)

from .membership import FACETS, revision_state
from .settings import corpus_settings
from .strength import strength

FACET_CHOICES = ("all", *FACETS)

_DOI_IN = re.compile(r"(?:^doi:|doi\.org/)(10\.\d{4,9}/\S+)", re.I)
_KEY_UNSAFE = re.compile(r"[^a-z0-9.]+")
#: lower-case name parts that begin a family name ("Johannes van der Waals")
PARTICLES = frozenset("van von der den de del della di da du la le dos das ter ten zu y".split())
#: the DOI DataCite registered for every arXiv paper
ARXIV_DOI = "10.48550/arXiv.{}"
# arXiv spells a subject class of these archives in capitals (cs.LG, astro-ph.GA, stat.ML);
# the longer ones (physics.optics, cond-mat.mes-hall) and bare archives (quant-ph) are lower.
_ARXIV_CATEGORY = re.compile(r"(astro-ph|cs|econ|eess|math|nlin|q-bio|q-fin|stat)\.([a-z]{2})")


def facets_of(choice: str) -> tuple[str, ...]:
    """``all`` / ``experienced`` / ``saved`` → the facets it covers."""
    if choice == "all":
        return FACETS
    if choice in FACETS:
        return (choice,)
    raise InvalidInput(
        f"unknown facet {choice!r}; use 'experienced' (read or captured), 'saved' (favorited, not yet read) or 'all'"
    )


def doi_of(guid: str | None, url: str | None) -> str | None:
    """The DOI an item is known by: a ``doi:`` guid (items saved by DOI) or a doi.org URL."""
    for text in (guid, url):
        m = _DOI_IN.search(text or "")
        if m:
            return m.group(1).rstrip(".,;")
    return None


def item_doi(stored: str | None, guid: str | None, url: str | None, arxiv: str | None) -> str | None:
    """The DOI an export gives: the one a save stored (an arXiv paper's journal version),
    the item's own (:func:`doi_of`), else for an arXiv paper arXiv's DataCite DOI, which
    every arXiv paper has."""
    return stored or doi_of(guid, url) or (ARXIV_DOI.format(arxiv) if arxiv else None)


def citation_key(arxiv: str | None, doi: str | None, guid: str) -> str:
    """A key that stays the same across exports, so a re-import matches the earlier entry:
    ``arxiv-2401.12345`` (no version: every version is one paper), ``doi-10.1000-xyz``, else
    ``hermes-`` and a hash of the item's guid. Only ``[a-z0-9.-]``: legal in BibTeX keys,
    CSL ids and file names."""
    if arxiv:
        return "arxiv-" + _KEY_UNSAFE.sub("-", arxiv.lower()).strip("-")
    if doi:
        return "doi-" + _KEY_UNSAFE.sub("-", doi.lower()).strip("-")
    return "hermes-" + hashlib.sha256(guid.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def arxiv_category(tag: str) -> str:
    """A stored tag as arXiv spells it when it is an arXiv category: tags are stored
    case-folded (:func:`hermes.text.tags.normalize_tag`), so ``cs.lg`` → ``cs.LG``."""
    m = _ARXIV_CATEGORY.fullmatch(tag) if isinstance(tag, str) else None
    return f"{m.group(1)}.{m.group(2).upper()}" if m else tag


def person(name: str, source: str | None = None) -> dict:
    """A name as CSL-JSON parts: ``{given, family}``, with ``non-dropping-particle`` for
    "van der" and ``suffix`` for "Jr." or "IV" (nameparser reads them), or ``{literal}``
    for a one-word name or an organisation's (a lab, a show, a pseudonym: "heise online";
    with ``source``, the feed's title, a name that is the feed's own brand: "Giant Bomb"
    of "Giant Bombcast"). A leading honorific ("Dr.", "Prof.") is dropped."""
    name = " ".join(name.split())
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
        given = without_honorifics(given)
        return {"family": family, "given": given} if given else {"literal": family}
    name = without_honorifics(name)
    if " " not in name or is_organisation(name) or _brand_of(name, source):
        return {"literal": name}
    return dict(_parts(name))


@lru_cache(maxsize=65536)
def _parts(name: str) -> tuple[tuple[str, str], ...]:
    """``name`` split into given names, particle, family name and suffix. hermes's own
    rules (:func:`hermes.text.authors.split_name`) for most names; nameparser for one with a
    suffix or a title it knows ("Sir", "Bishop"), where rules by hand went wrong ("Jr"
    taken for a surname). Measured on the fixtures' 148 author names the two agree on every
    name of two words or more; nameparser takes ~200 µs a name, the rules ~5 µs."""
    words = name.split(" ")
    if any(is_suffix(w) for w in words) or words[0].casefold().strip(".") in _titles():
        from nameparser import HumanName

        parsed = HumanName(name)
        given = " ".join(filter(None, [parsed.first, parsed.middle])) or parsed.title
        family, suffix = parsed.last, parsed.suffix
    else:
        (given, family), suffix = split_name(name), ""
    if not family:  # "Queen Latifah": a title and one name
        family, given = given, ""
    words = family.split(" ")
    k = 0
    while k < len(words) - 1 and words[k] in PARTICLES:
        k += 1
    parts = {
        "given": given,
        "family": " ".join(words[k:]),
        "non-dropping-particle": " ".join(words[:k]),
        "suffix": suffix,
    }
    return tuple((key, value) for key, value in parts.items() if value)


@lru_cache(maxsize=1)
def _titles() -> frozenset[str]:
    # Here, not at the top: nameparser loads (~40 ms) only when an export splits a name.
    from nameparser.config import CONSTANTS

    return frozenset(CONSTANTS.titles)


def _brand_of(name: str, source: str | None) -> bool:
    """Whether ``name`` is the feed's own name or the start of one of its words ("Giant
    Bomb", "Giant Bombcast"), or the feed's name less its article and the words that say what
    it is (:data:`hermes.text.authors.ORGANISATION_WORDS`): "Fermi Sea" of "The Fermi Sea
    Podcast", whose ``itunes:author`` every episode inherits, "Google Research" of "Google
    Research Blog". A show's or a publication's name, not a person ("Sea, Fermi" in a trial's
    BibTeX). A person's blog names them whole ("Simon Willison's Weblog"). A show named for
    its host alone ("Lex Fridman Podcast") is cited by the show's name too: printed as
    written, where a person's form of a show's name printed "F. Sea"."""
    if not source:
        return False
    found = re.search(rf"(?<!\w){re.escape(name)}(\w*)", source, re.I)
    if found and (found.group(1) or source.casefold() == name.casefold()):
        return True
    return _titled(source).casefold() == name.casefold()


#: what may part a feed's name from the words that say what it is ("Fermi Sea: The Podcast")
_TITLE_PUNCTUATION = ".,:;|-\u2013\u2014"


def _titled(source: str) -> str:
    """A feed's name without a leading "The" and the organisation words after it: "The
    Fermi Sea Podcast" → "Fermi Sea"."""
    words = source.split()
    if len(words) > 1 and words[0].casefold() == "the":
        words = words[1:]
    while len(words) > 1 and words[-1].casefold().strip(_TITLE_PUNCTUATION) in ORGANISATION_WORDS | {""}:
        words = words[:-1]
    return " ".join(words).strip(_TITLE_PUNCTUATION)


def inverted(name: str, source: str | None = None) -> str:
    """ "Family, Given" (with its particle), or "Family, Given, Suffix", the form RIS reads
    unambiguously."""
    p = person(name, source)
    if "literal" in p:
        return p["literal"]
    family = " ".join(filter(None, [p.get("non-dropping-particle"), p["family"]]))
    return ", ".join(filter(None, [family, p.get("given"), p.get("suffix")]))


_SQL = """
    SELECT m.item_id, m.facet, m.revision, m.added,
           i.guid, i.url, coalesce(i.title, ''), coalesce(i.summary, ''), i.authors, i.published,
           coalesce(i.content_type, 'article'), coalesce(i.tags, '[]'), i.arxiv_id,
           coalesce(p.max_fraction, 0), coalesce(p.opens, 0), p.first_seen, p.last_seen,
           EXISTS (SELECT 1 FROM corpus_favorites f WHERE f.user_id = m.user_id AND f.item_id = m.item_id),
           fd.title, i.enclosure, i.dated_by, i.feed_id, i.keyphrases
    FROM corpus_membership m
    LEFT JOIN items i ON i.id = m.item_id
    LEFT JOIN feeds fd ON fd.id = i.feed_id
    LEFT JOIN corpus_progress p ON p.user_id = m.user_id AND p.item_id = m.item_id
    WHERE m.user_id = ? AND m.facet IN ({facets})
    ORDER BY m.revision
"""


def _unique_keys(rows, named: dict[int, str]) -> dict[int, str]:
    """Keys for every member item (rows of ``item_id, guid, url, arxiv_id``), unique
    as BibTeX and biber judge keys (case ignored), and the same for the same items in every
    export. ``named``: the library's key of an item an import named (``corpus_item_library``),
    which the person's LaTeX cites.

    The library's keys are handed out first, by item id: two items claiming one key (two
    libraries, or two entries matched to two items) leave it to the lower id, and the other
    gets its generated key. Then every other item gets :func:`citation_key`; one taken
    already (two items sharing a DOI, the same article in two journal feeds; a library key
    of that form is not stored, but a table written by hand may hold one) gets
    ``-i<item_id>`` after it, so the lowest item id keeps the plain key."""
    keys: dict[int, str] = {}
    taken: set[str] = set()
    ordered = sorted(rows, key=lambda r: r[0])
    for row in ordered:
        key = named.get(row[0])
        if key and key.casefold() not in taken:
            keys[row[0]] = key
            taken.add(key.casefold())
    for item_id, guid, url, arxiv in ordered:
        if item_id in keys:
            continue
        key = base = citation_key(arxiv, doi_of(guid, url), guid or f"item:{item_id}")
        n = 0
        while key.casefold() in taken:  # once, unless a library's key is a suffixed one too
            key = f"{base}-i{item_id}" + (f"-{n}" if n else "")
            n += 1
        keys[item_id] = key
        taken.add(key.casefold())
    return keys


def member_keys(
    db: sqlite_utils.Database, user_id: int, facets: tuple[str, ...], *, libraries: bool = True
) -> dict[int, str]:
    """The key of every item in ``facets``, as :func:`load` gives them; with ``libraries``
    False the ones hermes generates, as it did before any library named an item."""
    rows = db.execute(
        f"""SELECT DISTINCT m.item_id, i.guid, i.url, i.arxiv_id FROM corpus_membership m
            LEFT JOIN items i ON i.id = m.item_id
            WHERE m.user_id = ? AND m.facet IN ({", ".join("?" * len(facets))})""",
        [user_id, *facets],
    ).fetchall()
    named = {i: n.key for i, n in library_names(db).items() if n.key} if libraries else {}
    return _unique_keys(rows, named)


class Named(NamedTuple):
    """What an imported library calls an item (a row of ``corpus_item_library``)."""

    key: str | None
    #: ``(text as read, protected)`` as the library import reads a BibTeX title
    title_spans: list | None
    #: the entry's type in CSL's vocabulary (``book``, ``chapter``, ``paper-conference``, …)
    csl_type: str | None


def library_names(db: sqlite_utils.Database) -> dict[int, Named]:
    """What imported libraries call items (``corpus_item_library``), by item id."""
    return {
        item_id: Named(key, [tuple(s) for s in json.loads(spans)] if spans else None, csl_type)
        for item_id, key, spans, csl_type in db.execute(
            "SELECT item_id, key, title_spans, csl_type FROM corpus_item_library"
        )
    }


_UNNAMED = Named(None, None, None)


def source_of(feed_title: str | None, arxiv: str | None) -> str | None:
    """Where an item was published, for a citation: its feed's title (a blog, a show, a
    journal). None for an arXiv paper (its listing feed is not where it was published; the
    exports name arXiv) and for an item whose feed was removed (no feeds row is left)."""
    title = " ".join((feed_title or "").split())
    return title if title and not arxiv else None


def media_of(enclosure: str | None) -> dict | None:
    """The stored enclosure as ``{url, type, duration}`` (duration in seconds or None), for
    an episode's citation; None when there is none or it cannot be read."""
    try:
        found = json.loads(enclosure) if enclosure else None
    except ValueError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("url"), str):
        return None
    seconds = found.get("duration")
    return {
        "url": found["url"],
        "type": found.get("type") or "",
        "duration": seconds if isinstance(seconds, int) and seconds > 0 else None,
    }


def _captures(db, user_id: int, item_ids: set[int]) -> tuple[dict, dict]:
    highlights: dict[int, list] = {}
    notes: dict[int, list] = {}
    for hid, item_id, text, note, created in db.execute(
        "SELECT id, item_id, text, note, created FROM corpus_highlights WHERE user_id = ? ORDER BY id", [user_id]
    ):
        if item_id in item_ids:
            highlights.setdefault(item_id, []).append({"id": hid, "text": text, "comment": note, "created": created})
    for nid, item_id, text, created in db.execute(
        "SELECT id, item_id, text, created FROM corpus_notes WHERE user_id = ? ORDER BY id", [user_id]
    ):
        if item_id in item_ids:
            notes.setdefault(item_id, []).append({"id": nid, "text": text, "created": created})
    return highlights, notes


def load(
    db: sqlite_utils.Database,
    user_id: int,
    facets: tuple[str, ...],
    *,
    since: int = 0,
    item_ids: set[int] | None = None,
) -> list[dict]:
    """The records of the items that entered ``facets`` after revision ``since`` and are still
    there (all of them for ``since=0``), oldest membership first; only ``item_ids`` if given."""
    cfg = corpus_settings()
    rows = db.execute(_SQL.format(facets=", ".join("?" * len(facets))), [user_id, *facets]).fetchall()
    names = library_names(db)
    keys = _unique_keys([(r[0], r[4], r[5], r[12]) for r in rows], {i: n.key for i, n in names.items() if n.key})
    rows = [r for r in rows if r[2] > since and (item_ids is None or r[0] in item_ids)]
    highlights, notes = _captures(db, user_id, {r[0] for r in rows})
    stored_dois = dict(db.execute("SELECT item_id, doi FROM corpus_item_dois"))
    citations = _citations(db, {r[0] for r in rows})
    out = []
    for (
        item_id,
        facet,
        revision,
        added,
        guid,
        url,
        title,
        summary,
        author,
        published,
        ctype,
        tags,
        arxiv,
        frac,
        opens,
        first,
        last,
        fav,
        feed_title,
        enclosure,
        dated_by,
        feed_id,
        keyphrases,
    ) in rows:
        hs, ns = highlights.get(item_id, []), notes.get(item_id, [])
        seen = [t for t in (first, last, *(c["created"] for c in hs + ns)) if t]
        doi = item_doi(stored_dois.get(item_id), guid, url, arxiv)
        score = (
            round(strength(frac, len(hs) + len(ns), bool(fav), opens, cfg)[0], 2) if facet == "experienced" else None
        )
        published = as_precise(published, dated_by)  # dated_by is the date_source there
        out.append(
            {
                "item_id": item_id,
                "key": keys[item_id],
                "facet": facet,
                "revision": revision,
                "added": added,
                "title": title or url or f"item {item_id}",
                "authors": parse_stored(author),
                "published": published,
                # the published version's year where a library gave one (its journal's), else
                # the date's or the arXiv id's
                "year": citations.get(item_id, {}).get("year")
                or cited_year(published, arxiv, from_feed=feed_id is not None, dated_by=dated_by),
                "url": url,
                "arxiv": arxiv,
                "doi": doi,
                "abstract": summary,
                "content_type": ctype,
                "source": source_of(feed_title, arxiv),
                "media": media_of(enclosure),
                "tags": [arxiv_category(t) for t in json.loads(tags)],
                # which of the tags the keyphrase tagger added (hermes_item_tags), not a feed
                # or the person: the citation exports leave them out (fields.subject_tags)
                "keyphrases": [arxiv_category(t) for t in json.loads(keyphrases or "[]")],
                "strength": score,
                "favorited": bool(fav),
                "read_fraction": round(frac, 2),
                "first_seen": min(seen) if seen else added,
                "last_seen": max(seen) if seen else added,
                "highlights": hs,
                "notes": ns,
                "citation": citations.get(item_id, {}),
                # the library's title with its brace protection (BibTeX), where it had some
                "title_spans": names.get(item_id, _UNNAMED).title_spans,
                # the library's type of the entry, which the exports cite it as
                "csl_type": names.get(item_id, _UNNAMED).csl_type,
            }
        )
    return out


def cited_year(published: str | None, arxiv: str | None, *, from_feed: bool, dated_by: str | None) -> str | None:
    """The year a reference is cited by. A feed's date is the listing's, of the version it
    lists (a paper replaced years later is listed again): there the arXiv id's year, its first
    version's, wins. An item stored from what its source says of the paper — a library
    entry's own year (its journal version may be years from the preprint), a DOI's or
    arXiv's record — is cited by that date; the arXiv id's year is the fallback only when
    nothing dates it (a trial's year = {2019} with eprint 2105.… exported as 2021)."""
    stated = (published or "")[:4] or None
    if stated and not from_feed and dated_by != "first seen":
        return stated
    return arxiv_year(arxiv) or stated


_CITATION = ("container", "volume", "issue", "pages", "publisher", "edition", "genre", "year")


def _citations(db: sqlite_utils.Database, item_ids: set[int]) -> dict[int, dict[str, str]]:
    """Where imported library entries were published (``corpus_item_citation``), by item:
    the fields the entry gave, the others left out."""
    if not item_ids:
        return {}
    out = {}
    ids = sorted(item_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for row in db.execute(
            f"SELECT item_id, {', '.join(_CITATION)} FROM corpus_item_citation "
            f"WHERE item_id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            out[row[0]] = {k: v for k, v in zip(_CITATION, row[1:], strict=True) if v}
    return out


def tombstones(db: sqlite_utils.Database, user_id: int, facets: tuple[str, ...], since: int) -> list[dict]:
    """Items that left ``facets`` after revision ``since`` and are in none of them now:
    ``{item_id, key, facet, revision}`` (the last removal), for the formats that carry
    deletions. Only what the retained log still holds (see ``truncated``)."""
    marks = ", ".join("?" * len(facets))
    rows = db.execute(
        f"""SELECT l.item_id, l.facet, max(l.revision), i.guid, i.url, i.arxiv_id
            FROM corpus_log l LEFT JOIN items i ON i.id = l.item_id
            WHERE l.user_id = ? AND l.kind = 'removed' AND l.facet IN ({marks}) AND l.revision > ?
              AND NOT EXISTS (SELECT 1 FROM corpus_membership m WHERE m.user_id = l.user_id
                              AND m.item_id = l.item_id AND m.facet IN ({marks}))
            GROUP BY l.item_id ORDER BY max(l.revision)""",
        [user_id, *facets, since, *facets],
    ).fetchall()
    names = library_names(db) if rows else {}
    return [
        {
            "item_id": r[0],
            "facet": r[1],
            "revision": r[2],
            "key": names.get(r[0], _UNNAMED).key or citation_key(r[5], doi_of(r[3], r[4]), r[3] or f"item:{r[0]}"),
        }
        for r in rows
    ]


def check_since(db: sqlite_utils.Database, user_id: int, since) -> tuple[int, bool]:
    """Validate ``since``; return ``(current revision, truncated)`` where truncated means
    removals after ``since`` may be missing because the log was trimmed past it."""
    revision, trimmed = revision_state(db, user_id)
    if since < 0:
        raise InvalidInput(f"since must be >= 0 (0 = everything), got {since}")
    if since > revision:
        raise refuse(
            "since",
            f"is beyond the current revision {revision}; pass a revision an earlier export reported, or 0 for everything",
            got=since,
            given=True,
        )
    return revision, 0 < since < trimmed
