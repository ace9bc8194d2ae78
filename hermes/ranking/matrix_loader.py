"""Reading the embedding matrix: from the on-disk snapshot, then from SQLite.

Every embedding write gets a higher ``items.embed_seq``, so a refresh (:func:`refresh`)
reads only rows newer than what the matrix holds. A fresh process starts from the snapshot
(:mod:`hermes.ranking.matrix_store`) when one is valid (:func:`first_load`), then reads only
what is newer. Keys are read when an item's embedding is written; an item whose tags change
later is re-read when it is re-embedded. A load reads SQLite a chunk at a time (and in int8
storage quantises each chunk: the float32 matrix is never held whole).
"""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import Future

import numpy as np

from hermes.text.authors import parse_stored
from hermes.text.tags import parse_tags

from . import matrix_store
from .matrix_rows import Matrix
from .preferences import author_keys, source_key, tag_key, type_key

#: ``[ranking] matrix = "auto"`` keeps the matrix in int8 (:mod:`hermes.ranking.quantized`)
#: from this many embedded items up; below it, float32. Chosen on benchmarks/bench_rank.py
#: (benchmarks/results/ranking.md, "int8 storage"): see the figures there.
INT8_FROM_ROWS = 400_000
STORAGES = ("float32", "int8")


def first_load(
    db, path: str, model: str, dimension: int, wanted: str, latest: int, *, speculate: bool = False
) -> Matrix:
    """The matrix a process starts from: its snapshot when one is valid, else empty (the
    caller reads SQLite). One index scan (:func:`matrix_store.fingerprint`) serves both the
    storage choice (``auto`` goes by the count) and the snapshot's check; it runs on a
    thread meanwhile (both wait outside the GIL). The snapshot read is the one whose own
    count picks its storage, and is dropped if the scan disagrees.

    ``speculate``: the snapshot is returned before the scan answers (made on a connection of
    its own), with the check left in :attr:`Matrix.pending` for
    :func:`hermes.ranking.matrix.confirm` — the ranking runs while it scans (at a million
    items the scan took 67 CPU ms, as long as reading the snapshot's arrays: issue 36)."""
    if path.startswith(":memory:"):
        return Matrix(model, dimension, choose_storage(path, wanted, 0))
    # apart only when the caller's connection has nothing uncommitted the scan must see
    speculate = speculate and not getattr(getattr(db, "conn", db), "in_transaction", True)
    scan = (
        _meanwhile(_fingerprint_apart, path, latest) if speculate else _meanwhile(matrix_store.fingerprint, db, latest)
    )
    guess = next(
        (
            s
            for s in STORAGES
            if (at := matrix_store.stored_count(path, model, s))
            and at[0] == latest
            and choose_storage(path, wanted, at[1]) == s
        ),
        None,
    )
    if speculate and guess is not None:
        matrix = matrix_store.load(db, path, model, dimension, Matrix, guess, check=False)
        if matrix is not None:
            # the same count then picks the same storage: the guess's
            stored = matrix.fingerprint
            matrix.pending = lambda: scan.result() == stored
            return matrix
    matrix = (
        matrix_store.load(db, path, model, dimension, Matrix, guess, lambda: (latest, *scan.result()))
        if guess is not None
        else None
    )
    known = (latest, *scan.result())
    storage = choose_storage(path, wanted, known[1])
    if matrix is not None and matrix.storage == storage:
        return matrix
    if storage != guess:  # the guessed snapshot was stale: the other may not be
        matrix = matrix_store.load(db, path, model, dimension, Matrix, storage, known)
    return matrix or Matrix(model, dimension, storage)


def _fingerprint_apart(path: str, seq: int) -> tuple[int, int]:
    """:func:`matrix_store.fingerprint` on a connection of its own: the ranking's stays free
    for the queries it makes meanwhile."""
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = 1")
        return matrix_store.fingerprint(conn, seq)
    finally:
        conn.close()


def _meanwhile(fn, *args) -> Future:
    """``fn(*args)`` on a thread of its own; its answer (or exception) is the future's."""
    future: Future = Future()

    def run():
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 — handed to whoever reads the result
            future.set_exception(exc)

    threading.Thread(target=run, name="hermes-matrix-fingerprint", daemon=True).start()
    return future


def choose_storage(path: str, wanted: str, count: int) -> str:
    """``wanted`` (``[ranking] matrix``), with ``"auto"`` resolved by ``count``, the number
    of embedded items (:data:`INT8_FROM_ROWS`). An in-memory database keeps float32: int8
    storage reads its exact rows back through a connection of its own."""
    if path.startswith(":memory:"):
        return "float32"
    if wanted != "auto":
        return wanted
    return "int8" if count >= INT8_FROM_ROWS else "float32"


def refresh(db, matrix: Matrix, latest: int) -> int:
    """Absorb rows embedded after ``matrix.seq``; return how many were read."""
    fresh = matrix.n == 0
    # The most rows this can add (an index-only count): the buffers are sized once, and the
    # rows are then read in chunks, so a load never holds the whole result set twice.
    upper = db.execute(
        "SELECT count(*) FROM items WHERE embed_seq > ? AND embed_seq <= ?", [matrix.seq, latest]
    ).fetchone()[0]
    matrix._reserve(matrix.n + upper)
    # A first load scans the table in rowid order ("+": no index): twice as fast as walking
    # the embed_seq index into random table pages. Row order inside the matrix is free.
    seq = "+embed_seq" if fresh else "embed_seq"
    # An undated item (published NULL: no readable date on a feed's first fetch) gets NaN,
    # which no recency window, however wide, contains.
    cursor = db.execute(
        f"""SELECT id, embedding, CAST(strftime('%s', published) AS REAL),
                   content_type, feed_id, tags, embed_seq, authors, keyphrases
            FROM items
            WHERE {seq} > ? AND {seq} <= ? AND embedding_model = ?
            {"" if fresh else "ORDER BY embed_seq"}""",
        [matrix.seq, latest, matrix.model],
    )
    read = 0
    memo: dict = {}  # feeds repeat the same tags
    while chunk := cursor.fetchmany(CHUNK):
        _absorb_chunk(matrix, chunk, memo, fresh)
        read += len(chunk)
    matrix.commit_keys()
    matrix.seal()
    matrix.seq = max(matrix.seq, latest)
    return read


CHUNK = 20_000


def _absorb_chunk(matrix: Matrix, rows: list, memo: dict, fresh: bool) -> None:
    n = len(rows)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(n, matrix.dimension)
    published = np.fromiter((np.nan if r[2] is None else r[2] for r in rows), dtype=np.float64, count=n)
    names: dict[str, int] = {}  # distinct key string -> code
    at: list[int] = []
    codes: list[int] = []
    parsed: dict[str, list] = {}
    for k, r in enumerate(rows):
        keys = [type_key(r[3])] if r[3] else []
        if r[4] is not None:
            keys.append(source_key(r[4]))
        if r[5] and r[5] != "[]":
            tags = parsed.get((r[5], r[8]))
            if tags is None:
                tags = parsed[(r[5], r[8])] = _topics(_tag_keys(r[5], memo), r[8])
            keys.extend(tags)
        if r[7] and r[7] != "[]":
            keys.extend(_author_keys(r[7], memo))
        for key in keys:
            at.append(k)
            codes.append(names.setdefault(key, len(names)))
    matrix.absorb(
        ids, vecs, published, np.array(at, dtype=np.int64), np.array(codes, dtype=np.int64), list(names), fresh=fresh
    )


def _tag_keys(raw: str, memo: dict) -> list[str]:
    keys = []
    for tag in parse_tags(raw):
        key = memo.get(tag) if isinstance(tag, str) else None
        if key is None:
            key = tag_key(tag)
            if isinstance(tag, str):
                memo[tag] = key
        if key and key not in keys:
            keys.append(key)
    return keys


def _topics(keys: list[str], keyphrases: str | None) -> list[str]:
    """``keys`` with the keyphrases' ``tag:`` keys turned into ``topic:`` keys."""
    if not keyphrases or keyphrases == "[]":
        return keys
    derived = {tag_key(k) for k in parse_tags(keyphrases)}
    return ["topic:" + k[4:] if k in derived else k for k in keys]


def _author_keys(raw: str, memo: dict) -> list[str]:
    keys = memo.get(("authors", raw))
    if keys is None:
        keys = memo[("authors", raw)] = author_keys(parse_stored(raw))
    return keys
