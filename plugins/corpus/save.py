"""Saving an item that no feed brought: ``hermes save USER REF`` and the ``save_item`` tool.

An item already in the database (the same arXiv id in any version, the same DOI, the same
page) is only favorited, which puts it in the persona's saved facet; nothing is fetched. An
arXiv id or DOI counts as stored only when its record came from arXiv or the resolver: an
item of another feed that merely links it is looked up first (:func:`existing_item`), and
when arXiv cannot be reached, a paper such a feed brought under the arXiv id is saved as the
archive has it, the answer saying it was not checked (``unconfirmed``). Otherwise one fetch of its metadata (:mod:`.metadata`), then its embedding is computed,
then one write transaction inserts the item with its embedding and records the favorite.
A failed fetch or embedding raises before that transaction, so an offline or failed save
stores nothing at all, and exports, recall and ranking only ever see complete items.
"""

from __future__ import annotations

import sqlite_utils

from hermes.embed import get_embedder
from hermes.facekit.faces import Say, typed
from hermes.ingest.errors import FetchError
from hermes.ingest.guard import REFUSED, refused_here
from hermes.ingest.provenance import speaks_for_papers
from hermes.ingest.store import embedding_text, insert_items, store_embeddings
from hermes.ingest.tagging import apply_proposals, embed_for_tags, propose
from hermes.storage.records import require_user
from hermes.storage.transactions import write_transaction
from hermes.text.clip import clip

from . import signals
from .metadata import LookupFailed, Ref, identify, lookup
from .settings import corpus_settings


def existing_item(db: sqlite_utils.Database, ref: Ref, *, confirmed: bool = True) -> int | None:
    """The id of an item already stored for ``ref``, if any. ``confirmed``: only an item
    whose record came from the paper's own source (arXiv's feeds or API, the DOI resolver):
    an item that merely links an arXiv id or a DOI (a blog's post, an agent's feed) is no
    reason to answer "already stored" without asking them (:mod:`hermes.ingest.provenance`)."""
    if ref.kind == "arxiv":
        rows = db.execute(
            "SELECT i.id, i.feed_id, f.url FROM items i LEFT JOIN feeds f ON f.id = i.feed_id WHERE i.arxiv_id = ?",
            [ref.value],
        ).fetchall()
        return next(
            (r[0] for r in rows if not confirmed or r[1] is None or (r[2] is not None and speaks_for_papers(r[2]))),
            None,
        )
    if ref.kind == "doi":
        # Saved by this DOI, or an arXiv paper saved earlier whose record named it (its
        # journal version); unconfirmed, also an item whose link is the DOI's.
        doi = ref.value.lower()
        sql = (
            "SELECT id FROM items WHERE lower(guid) = ? OR id IN "
            "(SELECT item_id FROM corpus_item_dois WHERE lower(doi) = ?)"
        )
        args = [f"doi:{doi}", doi]
        if not confirmed:
            sql += " OR lower(url) IN (?, ?)"
            args += [f"https://doi.org/{doi}", f"https://dx.doi.org/{doi}"]
        sql += " ORDER BY id"
    else:
        sql, args = "SELECT id FROM items WHERE url = ? OR guid = ? ORDER BY id", [ref.value, ref.value]
    row = db.execute(sql, args).fetchone()
    return row[0] if row else None


def _embed(item: dict, embedder):
    """``(vectors, tokens)``: tokens for the tagger plugins from the same model pass."""
    try:
        return embed_for_tags(embedder, [embedding_text(item["title"], item["summary"])])
    except Exception as exc:  # the model failing to load or run: say so, store nothing
        raise LookupFailed(
            f"could not embed “{clip(item['title'] or '', 80)}” ({type(exc).__name__}: {exc}); nothing was stored"
        ) from exc


def _refused(exc: LookupFailed, ref: Ref, user: str, ref_text: str, cfg) -> LookupFailed | None:
    """The guard's refusal in the words ``add_feed`` uses (:func:`refused_here`: both ways
    out for the person), or None when ``exc`` is another failed lookup.

    The metadata layer reports every failed fetch as :class:`LookupFailed`, raised while
    handling the fetcher's error; that error (``__context__``) says whether the guard
    refused, and only its kind, so nothing is learnt of what listens at the address."""
    cause = exc.__context__
    if not (isinstance(cause, FetchError) and str(cause) == REFUSED):
        return None
    address = {"arxiv": cfg.arxiv_api, "doi": cfg.doi_resolver}.get(ref.kind, ref.value)
    what = typed(ref_text) if len(ref_text) <= 200 else "REF"
    return LookupFailed(
        refused_here(address, f"save it at the terminal: hermes save {typed(user)} {what}") + "; nothing was stored"
    )


def _unreachable(exc: LookupFailed, user: str, ref_text: str) -> LookupFailed | None:
    """A lookup that reached no server (offline, a name that does not resolve, a time-out)
    with what the person can do about it, or None when ``exc`` is another failed lookup: a
    server that answered said something a retry would not change."""
    cause = exc.__context__
    if not (isinstance(cause, FetchError) and (cause.kind == "connection failed" or str(cause).startswith("timeout"))):
        return None
    what = typed(ref_text) if len(ref_text) <= 200 else "REF"
    who = typed(user)
    step = Say(
        cli=f"try `hermes save {who} {what}` again once you are online; or, without the network, "
        f"list the paper in a .bib, .ris or CSL-JSON file and run `hermes persona import {who} FILE` "
        "(its entries become likes, not saves)",
        mcp="try save_item again once the network is back, or import_library the paper's BibTeX entry "
        "(it becomes a like, not a save)",
        web="try again once this computer is online",
    )
    return LookupFailed(f"{exc}; nothing was stored: {step}")


def _looked_up(db, ref: Ref, user: str, ref_text: str, *, allow_private: bool) -> tuple[dict | None, int | None]:
    """``(item, None)``: the record of ``ref`` from its source, or ``(None, item_id)``: the
    source could not be reached and a feed brought a paper under this arXiv id, one its
    source has not confirmed (:func:`existing_item`), which is then saved as the archive
    has it (no more than ``favorite`` on that item would do; the answer says so). Otherwise
    the failed lookup, in words that say what to do."""
    cfg = corpus_settings()
    try:
        return lookup(ref, arxiv_api=cfg.arxiv_api, doi_resolver=cfg.doi_resolver, allow_private=allow_private), None
    except LookupFailed as exc:
        unreachable = _unreachable(exc, user, ref_text)
        # an arXiv id only: an item that merely links a DOI (a post) is not the paper
        held = existing_item(db, ref, confirmed=False) if unreachable and ref.kind == "arxiv" else None
        if held is None:
            raise (_refused(exc, ref, user, ref_text, cfg) or unreachable or exc) from None
        return None, held


def save(db: sqlite_utils.Database, user, ref_text: str, *, allow_private: bool, source: str, embedder=None) -> dict:
    """Save ``ref_text`` (arXiv id, DOI or URL) for ``user``; return what happened.

    :param allow_private: False applies the private-address guard to every fetch (agent
        calls unless the user lifted it); a person at the CLI is trusted.
    :raises HermesError: bad reference, unknown persona, failed lookup or embedding.
    """
    ref = identify(ref_text)
    u = require_user(db, user)
    item_id = existing_item(db, ref)
    created = unconfirmed = False
    if item_id is None:
        item, item_id = _looked_up(db, ref, u["name"], ref_text, allow_private=allow_private)
        unconfirmed = item_id is not None
    if item_id is None:
        embedder = embedder or get_embedder()
        vectors, tokens = _embed(item, embedder)
        with write_transaction(db):
            # Another process may have stored the same item since we looked: then the
            # insert is skipped and that item is the one marked saved.
            new = insert_items(db, None, [item])
            if new:
                store_embeddings(db, embedder.name, new, vectors)
                item_id, created = new[0], True
                if item.get("doi"):
                    db.execute(
                        "INSERT OR REPLACE INTO corpus_item_dois (item_id, doi) VALUES (?, ?)", [item_id, item["doi"]]
                    )
                # Tagged like an ingested item, in the same transaction (the tagger
                # plugins' proposals, kept where they recur).
                apply_proposals(db, propose([{**item, "id": item_id}], vectors, tokens), fresh={item_id})
            else:
                # or the lookup confirmed an item a feed had linked: that one is saved
                item_id = (
                    existing_item(db, ref, confirmed=False)
                    or db.execute(
                        "SELECT id FROM items WHERE guid = ? OR (url = ? AND title = ?)",
                        [item["guid"], item.get("url"), item["title"]],
                    ).fetchone()[0]
                )
            marked = signals.favorite(db, u["id"], item_id, True, source=source)
    else:
        marked = signals.favorite(db, u["id"], item_id, True, source=source)
    row = db.execute("SELECT title, url, arxiv_id FROM items WHERE id = ?", [item_id]).fetchone()
    facet = db.execute(
        "SELECT facet FROM corpus_membership WHERE user_id = ? AND item_id = ?", [u["id"], item_id]
    ).fetchone()
    return {
        "user": u["name"],
        "item_id": item_id,
        "title": row[0],
        "url": row[1],
        "arxiv_id": row[2],
        "ref": ref.kind,
        "created": created,
        "unconfirmed": unconfirmed,
        "facet": facet[0] if facet else None,
        "changes": marked["changes"],
    }
