"""An on-disk snapshot of the embedding matrix, so a fresh process starts fast.

Reading 100k embeddings (and their tags) out of SQLite takes about a second; the CLI, the
MCP server and the web app are all fresh processes. After a load that read at least
:data:`MIN_ROWS` rows from SQLite, the matrix is written to ``<database>-matrix/`` (one
``.npz`` per embedding model, written to a temporary name and renamed, on a background
thread); the next process loads it and reads only rows embedded since.

A snapshot is used only if it still describes the database: the number and the id sum of
the items with ``embed_seq`` up to the snapshot's must match (an index-only query). A
deleted, re-embedded or swapped-in database therefore falls back to reading SQLite. It is
a cache: deleting it is always safe, and any error reading or writing it is ignored.

Next to the arrays it holds the summaries of them that no persona changes (the average
vector and every row's product with it, the per-pair weights and column order of the
preference keys: :meth:`Matrix.derived_for_snapshot`), so a fresh process does not spend its
first ranking recomputing them. A snapshot without them (written by an older version) still
loads; they are then computed on first use.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path

import numpy as np

from .. import config

log = logging.getLogger(__name__)

#: write a snapshot after a load that read at least this many rows from SQLite
MIN_ROWS = 20_000
#: v2: tag keys use hermes.tags.normalize_tag (whitespace collapsed, case-folded)
#: v3: author keys next to the tags; keyphrases as topic keys
VERSION = 4


def snapshot_path(db_path: str, model: str) -> Path | None:
    if not db_path or db_path.startswith(":memory:"):
        return None
    slug = hashlib.sha256(f"{VERSION}\0{model}".encode()).hexdigest()[:16]
    return Path(f"{db_path}-matrix") / f"{slug}.npz"


def fingerprint(db, seq: int) -> tuple[int, int]:
    """(count, sum of ids) of the items embedded up to ``seq`` — answered from the
    ``embed_seq`` index alone."""
    count, total = db.execute(
        "SELECT count(*), coalesce(sum(id), 0) FROM items WHERE embed_seq BETWEEN 1 AND ?", [seq]
    ).fetchone()
    return int(count), int(total)


def load(db, db_path: str, model: str, dimension: int, factory):
    """A matrix restored from the snapshot, or ``None`` (no snapshot, stale, unreadable)."""
    path = snapshot_path(db_path, model)
    if path is None or not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = data["meta"]
            seq, count, total, dim = (int(x) for x in meta)
            if dim != dimension or str(data["model"]) != model or (count, total) != fingerprint(db, seq):
                return None
            matrix = factory(model, dimension)
            ids = data["ids"]
            matrix._ids, matrix._vectors = ids, data["vectors"]
            matrix._published = data["published"]
            matrix.n = len(ids)
            matrix.key_index = {k: i for i, k in enumerate(data["keys"].tolist())}
            matrix.key_rows, matrix.key_cols = data["key_rows"], data["key_cols"]
            matrix.seq = seq
            if "derived_mean" in data.files:  # written since the summaries were added
                matrix.restore_derived(data)
            return matrix
    except Exception as exc:  # a cache: never let it break ranking
        log.debug("ignoring matrix snapshot %s: %s", path, exc)
        return None


def save_later(db, db_path: str, matrix) -> None:
    """Write the snapshot on a background (non-daemon) thread: the ranking that triggered
    it does not wait, and a CLI process finishes the file before it exits."""
    path = snapshot_path(db_path, matrix.model)
    if path is None:
        return
    try:
        # Taken now, on the caller's connection: the arrays and the fingerprint agree.
        count, total = fingerprint(db, matrix.seq)
    except Exception:
        return
    arrays = {
        "meta": np.array([matrix.seq, count, total, matrix.dimension], dtype=np.int64),
        "model": np.array(matrix.model),
        "ids": matrix.ids.copy(), "vectors": matrix.vectors, "published": matrix.published,
        "keys": np.array(list(matrix.key_index), dtype=str),
        "key_rows": matrix.key_rows, "key_cols": matrix.key_cols,
    }
    if count != len(arrays["ids"]):  # items of other models are in the fingerprint
        return
    # The persona-free summaries are computed on the writer thread, from these same arrays
    # (a matrix object over them), by the methods a ranking uses: the same bits.
    held = type(matrix)(matrix.model, matrix.dimension)
    held._ids, held._vectors, held._published = arrays["ids"], arrays["vectors"], arrays["published"]
    held.n = len(arrays["ids"])
    held.key_index = dict(matrix.key_index)
    held.key_rows, held.key_cols = arrays["key_rows"], arrays["key_cols"]
    threading.Thread(target=_write, args=(path, arrays, held), name="hermes-matrix-snapshot").start()


def _write(path: Path, arrays: dict, held=None) -> None:
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
    try:
        if held is not None:
            arrays = {**arrays, **held.derived_for_snapshot()}
        config.private_dir(path.parent)
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    except Exception as exc:
        log.debug("could not write matrix snapshot %s: %s", path, exc)
        tmp.unlink(missing_ok=True)
