"""The embedding matrix of each (database file, embedding model), kept for the process.

:func:`get_matrix` loads it once (:mod:`hermes.ranking.matrix_loader`: the snapshot, then
SQLite) and brings it up to date at every call — one indexed ``max(embed_seq)`` when nothing
changed; a deletion of items (counted in ``meta``: :func:`hermes.storage.records.delete_items`)
makes it load again, so no deleted item keeps a row. The class and its views live in
:mod:`hermes.ranking.matrix_rows` and are named here too, for the code that imports them from
this module.
"""

from __future__ import annotations

import threading

from .. import config
from ..storage.records import REMOVED_KEY
from . import matrix_loader, matrix_store
from .matrix_rows import CandidateVectors, EntryShare, Matrix
from .quantized import ExactRows, release_free_memory

__all__ = ["CandidateVectors", "EntryShare", "Matrix", "clear_cache", "confirm", "db_file", "get_matrix"]

_CACHE: dict[tuple[str, str], Matrix] = {}
_LOCK = threading.Lock()


def db_file(db) -> str:
    return db.execute("PRAGMA database_list").fetchone()[2] or f":memory:{id(db.conn)}"


def get_matrix(db, model: str, dimension: int, *, unconfirmed: bool = False) -> Matrix:
    """The up-to-date matrix of items embedded by ``model``. ``unconfirmed``: a fresh
    process may get its snapshot before the check against the database answers (a ranking
    that calls :func:`confirm` before its result is used); any other call waits for it."""
    path = db_file(db)
    key = (path, model)
    wanted = config.settings().matrix_storage
    with _LOCK:
        matrix = _CACHE.get(key)
        if matrix is not None and matrix.pending is not None and not unconfirmed:
            matrix = _confirmed(matrix)
        latest, removed = _state(db)
        if matrix is not None and latest < matrix.seq:  # file replaced or rolled back
            matrix = None
        if matrix is not None and removed != getattr(matrix, "removed", None):  # items deleted: their rows go
            matrix = None
        if matrix is not None and wanted != "auto" and matrix.storage != wanted:
            matrix = None  # the setting changed under a running process
        if matrix is None:
            matrix = matrix_loader.first_load(db, path, model, dimension, wanted, latest, speculate=unconfirmed)
            if matrix.storage == "int8":
                matrix.exact = ExactRows(path, model, dimension)
            matrix.db_path = path
            matrix.removed = removed
            _CACHE[key] = matrix
        if latest > matrix.seq:
            read = matrix_loader.refresh(db, matrix, latest)
            if read >= matrix_store.MIN_ROWS:
                matrix_store.save_later(db, path, matrix)
            if matrix.storage == "int8":
                release_free_memory()  # the chunks' float32 rows and key lists
        return matrix


def confirm(db, matrix: Matrix) -> bool:
    """Whether ``matrix`` (from ``get_matrix(..., unconfirmed=True)``) stands: ``False`` when
    the snapshot it was restored from turned out not to describe the database (the cache
    then holds the matrix read again, checked: ranking again uses it)."""
    if matrix.pending is not None:
        get_matrix(db, matrix.model, matrix.dimension)
    return not matrix.rejected


def _confirmed(matrix: Matrix) -> Matrix | None:
    """``matrix`` once its pending check passed, else ``None`` (the caller loads again, not
    speculatively: the same stale snapshot is then checked first)."""
    check, matrix.pending = matrix.pending, None
    try:
        ok = bool(check())
    except Exception:  # noqa: BLE001 — the scan failed: do not trust the snapshot
        ok = False
    matrix.rejected = not ok
    return matrix if ok else None


def _state(db) -> tuple[int, str | None]:
    """The highest ``embed_seq`` and the count of item deletions
    (:data:`hermes.storage.records.REMOVED_KEY`), in one indexed query."""
    latest, removed = db.execute(
        "SELECT (SELECT max(embed_seq) FROM items), (SELECT value FROM meta WHERE key = ?)", [REMOVED_KEY]
    ).fetchone()
    return latest or 0, removed


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()
