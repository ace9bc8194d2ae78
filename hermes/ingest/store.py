"""Storing normalised items and embedding the ones that lack an embedding.

Insertion and embedding are separate steps on purpose: a crash between them leaves items
without an embedding, and the next run's :func:`embed_pending` completes them.

Dates: an item whose feed gave no readable date (nor its URL) is *undated* when it comes in
a feed's first fetch — it may be years old, so it is in no recency window and shows "date
unknown" — and gets the time it was first seen when it appears in a later fetch, which is
then a fair bound on when it was published, marked ``dated_by = 'first seen'`` so every face
says it is an estimate.

arXiv papers are one item per paper: a cross-listing in another listing adds its categories
to the stored item, and a replaced version (``announce_type: replace``, or a changed title or
abstract) updates the stored text, which is then embedded and tagged again. Only the
paper's own source does (:mod:`.provenance`: arXiv's feeds and API, a local feed file);
another feed's entry naming the paper is held as the paper when it has the paper's title,
else stored as its own item linking to it. Any other
entry is one item per link and title too, whatever its guid (:func:`_stored_as_another_id`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import sqlite_utils

from hermes.storage.records import now_iso
from hermes.text.authors import parse_authors

from ..contract import Embedder
from ..embed import get_embedder, model_lengths, to_blob
from ..storage.ids import next_id, taken
from ..storage.transactions import write_transaction
from .provenance import speaks_for_papers
from .tagging import ITEM_SQL, apply_proposals, embed_for_tags, item_dict, propose, taggers_active
from .text import embedding_text

#: items read at a time and sorted by length (tokens) before they are embedded ``batch_size`` at a time:
#: 16 x 64 = 1,024, so a run of up to that many is sorted as one (in windows of 512, a fresh
#: ingest of 1,000 abstracts padded 0.8 % more tokens and made 55 model calls, not 50; issue
#: 36). Held meanwhile: the texts and their token encodings, ~35 MB for 1,024 abstracts.
LENGTH_WINDOW = 16
ITEM_FIELDS = (
    "guid",
    "url",
    "title",
    "summary",
    "author",
    "authors",
    "published",
    "content_type",
    "tags",
    "enclosure",
    "arxiv_id",
)


@dataclass
class Stored:
    new_ids: list[int] = field(default_factory=list)
    updated_ids: list[int] = field(default_factory=list)
    #: new items without a readable date (stored undated, or dated by first sight)
    undated: int = 0
    #: of them, those dated by when they were first seen (``dated_by = 'first seen'``)
    first_seen: int = 0
    #: on a feed's first fetch, its entries the archive already held (another feed's copy of
    #: a cross-listed paper, a saved page): stored once, so the feed's count is smaller than
    #: its entry count, and the summary says why
    known_elsewhere: int = 0
    #: entries the archive held under a feed since removed (the same feed subscribed under
    #: two addresses, the first one removed): now this feed's items (:func:`_adopt`)
    adopted: int = 0


def insert_items(db: sqlite_utils.Database, feed_id: int | None, items: list[dict]) -> list[int]:
    """Insert items not seen before (by guid or arXiv id); return the new ids in order."""
    return store_items(db, feed_id, items).new_ids


def _row(item: dict) -> dict:
    row = {f: item.get(f) for f in ITEM_FIELDS}
    row["tags"] = json.dumps(list(item.get("tags") or []), ensure_ascii=False)
    # Every way in (feeds, saved papers, pages) stores the list; a caller with only the one
    # string gets it parsed here.
    authors = item.get("authors") or parse_authors(item.get("author") or "")
    row["authors"] = json.dumps(list(authors), ensure_ascii=False)
    row["title"] = row["title"] or ""
    row["summary"] = row["summary"] or ""
    row["content_type"] = row["content_type"] or "article"
    if row["enclosure"] is not None and not isinstance(row["enclosure"], str):
        row["enclosure"] = json.dumps(row["enclosure"])
    return row


def store_items(db: sqlite_utils.Database, feed_id: int | None, items: list[dict]) -> Stored:
    """Insert new items, update known arXiv papers (see the module docstring)."""
    out = Stored()
    fetched = now_iso()
    with write_transaction(db):
        first_fetch = (
            feed_id is None or db.execute("SELECT 1 FROM items WHERE feed_id = ? LIMIT 1", [feed_id]).fetchone() is None
        )
        # entries the archive already had, by item id: looked for only while a removed feed
        # may have left items behind (else every known entry of every refresh cost a query)
        adopting = feed_id is not None and db.execute("SELECT 1 FROM removed_feeds LIMIT 1").fetchone() is not None
        held: list[int] = []
        # an id no item ever had (a note keyed on "item 311" keeps naming its paper after
        # a newer item is deleted: hermes.storage.ids), taken when first needed
        new_id: int | None = None
        feed_url = _feed_url(db, feed_id)
        own = speaks_for_papers(feed_url)
        for item in items:
            row = _row(item)
            if row["arxiv_id"]:
                known = db.execute(
                    "SELECT id, title, summary, tags, authors, feed_id FROM items WHERE arxiv_id = ?", [row["arxiv_id"]]
                ).fetchone()
                if known is not None and (own or _same_title(known[1], row["title"])):
                    if own and _update_paper(db, known[:5], row):
                        out.updated_ids.append(known[0])
                    out.known_elsewhere += first_fetch and known[5] != feed_id
                    held.append(known[0])
                    continue
                if known is not None:
                    row = _linking(row, feed_url)
            other = _stored_as_another_id(db, row)
            if other is not None:
                out.known_elsewhere += first_fetch
                held.append(other)
                continue
            undated = not row["published"]
            first_seen = undated and not first_fetch
            if first_seen:
                row["published"] = fetched
            if new_id is None:
                new_id = next_id(db, "items")
            cols = ["id", "feed_id", "fetched", "dated_by", *ITEM_FIELDS]
            cur = db.execute(
                f"INSERT OR IGNORE INTO items ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [
                    new_id,
                    feed_id,
                    fetched,
                    "first seen" if first_seen else item.get("dated_by"),
                    *(row[f] for f in ITEM_FIELDS),
                ],
            )
            if cur.rowcount:
                out.new_ids.append(new_id)
                new_id += 1
                out.undated += undated
                out.first_seen += first_seen
            else:
                out.known_elsewhere += first_fetch
                if adopting:
                    same = db.execute("SELECT id FROM items WHERE guid = ?", [row["guid"]]).fetchone()
                    held += [same[0]] if same else []
        if out.new_ids:
            taken(db, "items", out.new_ids[-1])
        if adopting and held:
            out.adopted = _adopt(db, feed_id, held)
            if first_fetch:  # counted as held elsewhere above; they are this feed's now
                out.known_elsewhere -= min(out.known_elsewhere, out.adopted)
    return out


def _adopt(db, feed_id: int, item_ids: list[int]) -> int:
    """Make this feed the home of those of ``item_ids`` whose feed was removed; return how
    many. One feed subscribed under two addresses stores each entry once, under the address
    fetched first: when that subscription is removed, its items would stay with a feed no
    longer listed, while the one still subscribed, which carries them, showed none of them."""
    orphaned = []
    for start in range(0, len(item_ids), 500):
        chunk = item_ids[start : start + 500]
        orphaned += db.execute(
            f"SELECT id, embedding IS NOT NULL FROM items WHERE id IN ({','.join('?' * len(chunk))}) "
            "AND feed_id IN (SELECT id FROM removed_feeds) "
            "AND feed_id NOT IN (SELECT id FROM feeds)",
            chunk,
        ).fetchall()
    seq = db.execute("SELECT COALESCE(max(embed_seq), 0) FROM items").fetchone()[0]
    for item_id, embedded in orphaned:
        if embedded:
            # its source key changed: the matrix and the tag graph re-read this item
            seq += 1
            db.execute("UPDATE items SET feed_id = ?, embed_seq = ? WHERE id = ?", [feed_id, seq, item_id])
        else:
            db.execute("UPDATE items SET feed_id = ? WHERE id = ?", [feed_id, item_id])
    return len(orphaned)


def _feed_url(db, feed_id: int | None) -> str | None:
    found = None if feed_id is None else db.execute("SELECT url FROM feeds WHERE id = ?", [feed_id]).fetchone()
    return found[0] if found else None


def _same_title(stored: str, seen: str) -> bool:
    return " ".join((stored or "").split()).casefold() == " ".join((seen or "").split()).casefold()


def _linking(row: dict, feed_url: str | None) -> dict:
    """A feed's entry about a stored arXiv paper, as its own item (a post, an aggregator's
    link) that links to the paper: not the paper, so neither its arXiv id nor its guid
    (:mod:`.provenance`)."""
    return {**row, "arxiv_id": None, "content_type": "article", "guid": f"{feed_url or 'feed'}#{row['guid']}"}


def _stored_as_another_id(db, row: dict) -> int | None:
    """The item the archive holds this entry as under another id (the same link and title),
    or ``None``. A bare guid ("ep-42") is made unique with its feed's URL, so the same feed
    subscribed under two spellings of its address (or an aggregator re-publishing a post
    under its own guid) would otherwise store every entry twice, read items coming back as
    unread."""
    if not row["url"]:
        return None
    known = db.execute(
        "SELECT id FROM items WHERE url = ? AND title = ? AND guid != ? LIMIT 1",
        [row["url"], row["title"], row["guid"]],
    ).fetchone()
    return None if known is None else known[0]


def _update_paper(db, known, row: dict) -> bool:
    """Fold a paper seen again into the stored item; True when something changed."""
    item_id, title, summary, tags, authors = known
    old_tags = json.loads(tags or "[]")
    merged = old_tags + [t for t in json.loads(row["tags"]) if t not in old_tags]
    changes: dict = {}
    if merged != old_tags:
        changes["tags"] = json.dumps(merged, ensure_ascii=False)
    if row["summary"] and (row["title"], row["summary"]) != (title, summary):
        changes.update(title=row["title"] or title, summary=row["summary"])
    if row["authors"] != "[]" and row["authors"] != authors:
        changes.update(authors=row["authors"], author=row["author"])
    if not changes:
        return False
    if "title" in changes or "summary" in changes:
        # The text changed: embed it again (which also re-reads its keys into the matrix)
        # and let the taggers see the new version.
        changes.update(embedding=None, keyphrases=None)
    elif "tags" in changes:
        # Same text, more categories: bump the embedding sequence so the matrix and the tag
        # graph re-read this item's keys.
        seq = db.execute("SELECT COALESCE(max(embed_seq), 0) FROM items").fetchone()[0]
        has_vector = db.execute("SELECT embedding IS NOT NULL FROM items WHERE id = ?", [item_id]).fetchone()[0]
        if has_vector:
            changes["embed_seq"] = seq + 1
    assignments = ", ".join(f"{k} = ?" for k in changes)
    db.execute(f"UPDATE items SET {assignments} WHERE id = ?", [*changes.values(), item_id])
    return True


def not_embedded(db: sqlite_utils.Database) -> int:
    """How many stored items wait for an embedding from the active model (an interrupted
    ingest leaves them): no feed ranks them until the next ingest embeds them (the model
    itself loads only when something is embedded, not for this count)."""
    return db.execute(
        "SELECT count(*) FROM items WHERE embedding IS NULL OR embedding_model IS NOT ?", [get_embedder().name]
    ).fetchone()[0]


def embed_pending(
    db: sqlite_utils.Database,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    progress=None,
    tag: bool = True,
) -> int:
    """Embed every item lacking an embedding from ``embedder``; return how many.

    When ``hermes_item_tags`` plugins are installed (and ``tag``), each batch is tagged from
    the same model pass (its token vectors, when the embedder offers them) and the tags are
    written with the embeddings, so the matrix never sees an embedded item without its tags.
    ``tag=False`` leaves the items untagged (``keyphrases`` NULL: the next ingest tags them)."""
    tagging = tag and taggers_active()
    done = 0
    while True:
        rows = db.execute(
            f"""{ITEM_SQL} WHERE embedding IS NULL OR embedding_model IS NOT ?
               ORDER BY id LIMIT ?""",
            [embedder.name, batch_size * LENGTH_WINDOW],
        ).fetchall()
        if not rows:
            return done
        items = [item_dict(r) for r in rows]
        texts = [embedding_text(i["title"], i["summary"]) for i in items]
        # A batch is padded to its longest text: batches of similar lengths (in tokens, when
        # the embedder says) waste the least model work (arrival order cost ONNX Runtime ~30%
        # here, characters ~15% more than tokens; benchmarks/results/onnx.md).
        lengths = model_lengths(embedder, texts)
        order = sorted(range(len(items)), key=lambda k: -lengths[k])
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            chunk = [items[k] for k in batch]
            vecs, tokens = embed_for_tags(embedder, [texts[k] for k in batch], tag=tagging)
            proposals = propose(chunk, vecs, tokens) if tagging else {}
            with write_transaction(db):
                store_embeddings(db, embedder.name, [i["id"] for i in chunk], vecs)
                apply_proposals(db, proposals, fresh={i["id"] for i in chunk})
            done += len(chunk)
            if progress:
                progress(len(chunk))


def store_embeddings(db: sqlite_utils.Database, model: str, item_ids: list[int], vecs) -> None:
    """Write embeddings, each with the next ``embed_seq`` (the in-memory matrix reads only
    rows newer than the last it saw). Joins an open write transaction."""
    with write_transaction(db):
        seq = db.execute("SELECT COALESCE(max(embed_seq), 0) FROM items").fetchone()[0]
        for k, (item_id, vec) in enumerate(zip(item_ids, vecs, strict=True)):
            db.execute(
                "UPDATE items SET embedding = ?, embedding_model = ?, embed_seq = ? WHERE id = ?",
                [to_blob(vec), model, seq + k + 1, item_id],
            )
