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

__all__ = ["CandidateVectors", "EntryShare", "Matrix", "clear_cache", "db_file", "get_matrix"]

_CACHE: dict[tuple[str, str], Matrix] = {}
_LOCK = threading.Lock()


def db_file(db) -> str:
    return db.execute("PRAGMA database_list").fetchone()[2] or f":memory:{id(db.conn)}"


def get_matrix(db, model: str, dimension: int) -> Matrix:
    """The up-to-date matrix of items embedded by ``model``."""
    path = db_file(db)
    key = (path, model)
    wanted = config.settings().matrix_storage
    with _LOCK:
        matrix = _CACHE.get(key)
        latest, removed = _state(db)
        if matrix is not None and latest < matrix.seq:  # file replaced or rolled back
            matrix = None
        if matrix is not None and removed != getattr(matrix, "removed", None):  # items deleted: their rows go
            matrix = None
        if matrix is not None and wanted != "auto" and matrix.storage != wanted:
            matrix = None  # the setting changed under a running process
        if matrix is None:
            matrix = matrix_loader.first_load(db, path, model, dimension, wanted, latest)
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
