"""A persona taught by the person's own library: each entry of a BibTeX, RIS or CSL-JSON file
(:mod:`.library_formats`) becomes a like with click source ``bootstrap``.

An entry is first looked for in the archive — by arXiv id (any version), DOI, URL, then its
title, compared as letters and digits only, LaTeX read and accents folded — and an entry
not found there is stored as an item of its own the way ``save_item`` stores one (no feed,
embedded, tagged by the tagger plugins, its DOI kept beside it for the exports), from what
the file says: no network fetch, so a file can never make hermes reach anything.

What the library calls each paper is kept for the corpus exports (:func:`_name`): its cite
key, which the person's LaTeX cites, a BibTeX title's brace protection, and the entry's type
(a book, a chapter, a thesis …, :data:`~.library_formats.CSL_TYPES`).

A second import of the same file adds nothing: a stored entry is found again, and an item
the persona already rated keeps its click — a like stays, and a dislike given since (the
person changed their mind) is never turned back into a like.

Large libraries are normal: the new items are embedded a batch at a time, each batch
written in one transaction with its likes, so an interrupted import keeps what it stored
and the next run picks up the rest; :data:`PROGRESS` is told how far it got.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable

import sqlite_utils

from hermes.clock import PRECISION
from hermes.embed import get_embedder
from hermes.errors import InvalidInput
from hermes.facekit.faces import plural
from hermes.ingest.store import embedding_text, insert_items, store_embeddings
from hermes.ingest.tagging import apply_proposals, embed_for_tags, propose
from hermes.storage.clicks import click_labels, record_click
from hermes.storage.records import require_user
from hermes.storage.transactions import write_transaction
from hermes.text.clip import clip
from hermes.text.latex import readable

from .library_formats import Entry, Read, read

#: characters of file text one import takes (a 2,000-paper Zotero export with abstracts is
#: about 3 MB)
IMPORT_MAX_CHARS = 10_000_000
#: entries one import takes; a larger library is imported in parts
IMPORT_MAX_ENTRIES = 20_000
#: new items embedded and written per transaction
BATCH = 64
#: a title shorter than this (letters and digits) is not matched by title alone:
#: "Introduction" or "Erratum" name many papers
MIN_TITLE_KEY = 20
#: ``progress(done, total)`` for the entries being stored; the CLI sets it for its bar
PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar("hermes_library_progress", default=None)


def title_key(title: str | None) -> str:
    """A title as it is compared: LaTeX read (:func:`hermes.text.latex.readable`), accents
    folded, case ignored, letters and digits only."""
    text = unicodedata.normalize("NFKD", readable(title or ""))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(re.findall(r"[^\W_]+", text))


@dataclass
class Archive:
    """The archive's items by every key an entry may be found by, read once per import."""

    arxiv: dict[str, int] = field(default_factory=dict)
    doi: dict[str, int] = field(default_factory=dict)
    url: dict[str, int] = field(default_factory=dict)
    title: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, db: sqlite_utils.Database) -> "Archive":
        found = cls()
        for item_id, arxiv, guid, url, title in db.execute(
            "SELECT id, arxiv_id, guid, url, title FROM items ORDER BY id DESC"
        ):
            # oldest last, so the oldest item of a duplicated key wins (as save_item's does)
            found.add(item_id, arxiv=arxiv, doi=_doi_of(guid, url), url=url, title=title)
        if "corpus_item_dois" in db.table_names():  # the corpus plugin's: a saved paper's DOI
            for item_id, doi in db.execute("SELECT item_id, doi FROM corpus_item_dois ORDER BY item_id DESC"):
                found.doi[doi.lower()] = item_id
        return found

    def add(self, item_id: int, *, arxiv=None, doi=None, url=None, title=None) -> None:
        if arxiv:
            self.arxiv[arxiv] = item_id
        if doi:
            self.doi[doi.lower()] = item_id
        if url:
            self.url[url] = item_id
        key = title_key(title)
        if len(key) >= MIN_TITLE_KEY:
            self.title[key] = item_id

    def find(self, entry: Entry) -> tuple[int, str] | None:
        """``(item id, how it was found)`` or None."""
        for how, table, value in (
            ("arxiv", self.arxiv, entry.arxiv),
            ("doi", self.doi, (entry.doi or "").lower()),
            ("url", self.url, entry.url),
            ("title", self.title, title_key(entry.title)),
        ):
            if value and value in table:
                return table[value], how
        return None


_DOI_IN = re.compile(r"(?:^doi:|doi\.org/)(10\.\d{4,9}/\S+)", re.I)


def _doi_of(guid: str | None, url: str | None) -> str | None:
    for text in (guid, url):
        m = _DOI_IN.search(text or "")
        if m:
            return m.group(1).rstrip(".,;")
    return None


@dataclass
class Imported:
    user: str
    format: str
    entries: int = 0  # entries read
    matched: dict[str, int] = field(default_factory=dict)  # by how: arxiv, doi, url, title
    created: int = 0  # entries stored as new items
    liked: int = 0  # new likes written
    already_liked: int = 0
    kept_dislikes: int = 0  # items the persona had disliked: left disliked
    duplicates: int = 0  # entries naming an item an earlier entry named
    refused: list[dict] = field(default_factory=list)
    new_items: list[dict] = field(default_factory=list)  # the entries not in the archive


def import_library(db: sqlite_utils.Database, name, text: str, fmt: str = "auto", *, embedder=None) -> Imported:
    """Import the library in ``text`` for persona ``name`` (see the module docstring).

    :raises NotFound: an unknown persona.
    :raises InvalidInput: the text is too long, in no known format, or holds no entry that
        can be read (the refusals name their lines).
    """
    user = require_user(db, name)
    if len(text) > IMPORT_MAX_CHARS:
        raise InvalidInput(
            f"the file is {len(text):,} characters, over the {IMPORT_MAX_CHARS:,} "
            "one import takes; export the library in parts (by collection or year)"
        )
    got = read(text, fmt)
    if len(got.entries) > IMPORT_MAX_ENTRIES:
        raise InvalidInput(
            f"the file has {len(got.entries):,} entries, over the "
            f"{IMPORT_MAX_ENTRIES:,} one import takes; export it in parts"
        )
    refused = [{"line": r.line, "key": r.key, "reason": r.reason} for r in got.refused]
    if not got.entries:
        raise InvalidInput(_nothing_read(got))
    out = Imported(user=user["name"], format=got.format, entries=len(got.entries), refused=refused)
    archive = Archive.load(db)
    rated = click_labels(db, user["id"])
    seen: set[int] = set()
    matched: list[int] = []
    published: list[tuple[int, Entry]] = []  # a matched item and the entry that cites it
    new: dict[str, Entry] = {}  # by title key: one item for two entries of one paper
    for entry in got.entries:
        hit = archive.find(entry)
        if hit is None:
            key = title_key(entry.title) or entry.title
            if key in new:
                out.duplicates += 1
            else:
                new[key] = entry
            continue
        item_id, how = hit
        out.matched[how] = out.matched.get(how, 0) + 1
        if item_id in seen:
            out.duplicates += 1
            continue
        seen.add(item_id)
        matched.append(item_id)
        published.append((item_id, entry))
    progress = PROGRESS.get()
    total = len(matched) + len(new)
    # the corpus plugin's tables, where it is loaded: where each paper was published, and
    # what the library calls it (its cite key, its title's brace protection)
    tables = set(db.table_names())
    dois = {"corpus_item_dois", "corpus_item_citation"} <= tables
    named = "corpus_item_library" in tables
    with write_transaction(db):
        _like(db, user, matched, rated, out)
        for item_id, entry in published:
            if dois:
                # a feed's preprint the library knows as published: the exports cite the journal
                # version (its DOI, journal and year) as the person's reference manager does
                _cite(db, item_id, entry)
            if named:
                _name(db, item_id, entry, got.format)
    if progress:
        progress(len(matched), total)
    pending = list(new.values())
    if pending:
        embedder = embedder or get_embedder()
        for start in range(0, len(pending), BATCH):
            _store(db, user, pending[start : start + BATCH], embedder, (dois, named, got.format), rated, out)
            if progress:
                progress(len(matched) + min(start + BATCH, len(pending)), total)
    out.new_items = [_unmatched(e) for e in pending]
    return out


def _like(db, user: dict, item_ids: list[int], rated: dict, out: Imported) -> None:
    for item_id in item_ids:
        before = rated.get(item_id)
        if before == "like":
            out.already_liked += 1
        elif before == "dislike":
            out.kept_dislikes += 1
        else:
            record_click(db, user["id"], item_id, True, "bootstrap")
            rated[item_id] = "like"
            out.liked += 1


def _store(db, user: dict, entries: list[Entry], embedder, kept: tuple, rated: dict, out: Imported) -> None:
    """Embed ``entries`` (before the transaction: a model failure stores nothing of this
    batch), then store each as an item with its like, in one transaction. ``kept``: whether
    the corpus's citation and library tables are there, and the file's format."""
    dois, named, fmt = kept
    rows = [_item(e) for e in entries]
    try:
        vectors, tokens = embed_for_tags(embedder, [embedding_text(r["title"], r["summary"]) for r in rows])
    except Exception as exc:  # the model failing to load or run: say what was kept
        raise InvalidInput(
            f"could not embed the library's entries ({type(exc).__name__}: {exc}); "
            f"{plural(out.liked, 'like')} were recorded before it, and importing "
            "the file again continues from there"
        ) from exc
    with write_transaction(db):
        ids = []
        for entry, row, vector in zip(entries, rows, vectors, strict=True):
            # Another process may have stored the same paper since the archive was read:
            # then the insert is skipped and that item is the one liked.
            fresh = insert_items(db, None, [row])
            if fresh:
                store_embeddings(db, embedder.name, fresh, [vector])
                out.created += 1
                if dois:
                    _cite(db, fresh[0], entry)
            ids.append(fresh[0] if fresh else _stored_id(db, row))
            if named and ids[-1] is not None:
                _name(db, ids[-1], entry, fmt)
        created = [{**row, "id": i} for row, i in zip(rows, ids, strict=True)]
        # Tagged like a saved item, in the same transaction (the tagger plugins' proposals).
        apply_proposals(db, propose(created, vectors, tokens), fresh=set(ids))
        _like(db, user, [i for i in ids if i is not None], rated, out)


#: the citation fields an import before ``corpus:006_item_type`` did not keep: a book's
#: edition, a thesis's or report's kind, and for those a thesis's school or a report's
#: institution (its publisher)
_LATER_FIELDS = ("edition", "genre")
_LATER_PUBLISHER = ("thesis", "report")


def _cite(db, item_id: int, entry: Entry) -> None:
    """Where ``entry`` was published, for item ``item_id``: its DOI and its citation
    (journal, volume, issue, pages, publisher, edition, genre, year), each only where the
    item has none yet — the first library to name a paper's journal version is kept, and
    what a save found is never overwritten. Only :data:`_LATER_FIELDS` (and a thesis's or
    report's publisher) that an item's citation lacks are filled in from an entry naming the
    same publication (the same container, or none), so importing a library again after
    upgrading gives them."""
    if entry.doi:
        db.execute("INSERT OR IGNORE INTO corpus_item_dois (item_id, doi) VALUES (?, ?)", [item_id, entry.doi])
    if entry.citation:
        cited = {**entry.citation, **({"year": entry.published[:4]} if entry.published else {})}
        fields = (*_LATER_FIELDS, "publisher") if entry.csl_type in _LATER_PUBLISHER else _LATER_FIELDS
        later = [name for name in fields if name in cited]
        update = ", ".join(
            f"{n} = CASE WHEN {n} IS NULL AND container IS excluded.container THEN excluded.{n} ELSE {n} END"
            for n in later
        )
        db.execute(
            f"INSERT INTO corpus_item_citation (item_id, {', '.join(cited)}) VALUES (?{', ?' * len(cited)}) "
            f"ON CONFLICT (item_id) DO {f'UPDATE SET {update}' if later else 'NOTHING'}",
            [item_id, *cited.values()],
        )


def _name(db, item_id: int, entry: Entry, fmt: str) -> None:
    """What the library calls item ``item_id``, for the exports: its cite key
    (:attr:`Entry.cite_key`), from a BibTeX file its title's brace protection
    (:attr:`Entry.title_spans`), and its type (:attr:`Entry.csl_type`). The latest library to
    name the item wins (a key renamed in the reference manager and imported again is the one
    the person's LaTeX cites now, a ``@misc`` made a ``@book`` there is a book); a file that
    cannot say (a key it lacks, a RIS or CSL-JSON title, an entry of no type hermes keeps)
    leaves what an earlier import said. A second import of the same file writes the same row."""
    spans = json.dumps(entry.title_spans, ensure_ascii=False) if entry.title_spans else None
    bibtex = fmt == "bibtex"
    if entry.cite_key is None and spans is None and entry.csl_type is None and not bibtex:
        return
    db.execute(
        """INSERT INTO corpus_item_library (item_id, key, title_spans, csl_type) VALUES (?, ?, ?, ?)
           ON CONFLICT (item_id) DO UPDATE SET key = coalesce(excluded.key, key),
             title_spans = CASE WHEN ? THEN excluded.title_spans ELSE coalesce(excluded.title_spans, title_spans) END,
             csl_type = coalesce(excluded.csl_type, csl_type)""",
        [item_id, entry.cite_key, spans, entry.csl_type, bibtex],
    )


def _stored_id(db, row: dict) -> int | None:
    if row["arxiv_id"]:
        found = db.execute("SELECT id FROM items WHERE arxiv_id = ?", [row["arxiv_id"]]).fetchone()
        if found:
            return found[0]
    found = db.execute("SELECT id FROM items WHERE guid = ?", [row["guid"]]).fetchone()
    return found[0] if found else None


def _item(e: Entry) -> dict:
    """An entry as an item (:data:`hermes.ingest.store.ITEM_FIELDS`): its guid and URL the
    ones a feed or ``save_item`` would give the same paper."""
    if e.arxiv:
        guid, url = f"arxiv:{e.arxiv}", e.url or f"https://arxiv.org/abs/{e.arxiv}"
    elif e.doi:
        guid, url = f"doi:{e.doi.lower()}", e.url or f"https://doi.org/{e.doi}"
    elif e.url:
        guid, url = e.url, e.url
    else:
        digest = hashlib.sha256(title_key(e.title).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        guid, url = f"library:{digest}", None
    published, dated_by = _stored_date(e.published)
    return {
        "guid": guid,
        "url": url,
        "title": e.title,
        "summary": e.abstract,
        "author": ", ".join(e.authors)[:2000] or None,
        "authors": e.authors,
        "published": published,
        "dated_by": dated_by,
        "content_type": e.content_type,
        "tags": e.tags,
        "enclosure": None,
        "arxiv_id": e.arxiv,
        "doi": e.doi,
        "citation": e.citation,
    }


def _stored_date(published: str | None) -> tuple[str | None, str | None]:
    """An entry's date as the items table keeps it: a timestamp (it sorts with the others)
    and, for a year or a month alone, ``dated_by`` saying so ("year only", "month only"), so every
    face and export gives the date no more precisely than the library did."""
    if not published or "T" in published:
        return published, None
    source = {n: name for name, n in PRECISION.items()}[len(published)]
    return f"{(published + '-01-01')[:10]}T00:00:00+00:00", source


def _unmatched(e: Entry) -> dict:
    ids = [f"arXiv {e.arxiv}" if e.arxiv else "", f"DOI {e.doi}" if e.doi else ""]
    named = " or ".join(filter(None, ids))
    reason = (
        f"no item in the archive has {named} or this title"
        if named
        else "no item in the archive has this title (the entry names no arXiv id or DOI)"
    )
    return {
        "line": e.line,
        "key": e.key,
        "title": clip(e.title, 120),
        "arxiv": e.arxiv,
        "doi": e.doi,
        "reason": reason + "; stored as an item of its own",
    }


def _nothing_read(got: Read) -> str:
    if not got.refused:
        return f"the {got.format} file holds no entries"
    first = "; ".join(f"line {r.line}: {r.reason}" for r in got.refused[:3])
    more = f" (and {len(got.refused) - 3} more)" if len(got.refused) > 3 else ""
    return (
        f"no entry of the {got.format} file could be read, so nothing was imported: "
        f"{first}{more}; fix those entries (or export the library again) and import it again"
    )
