"""The embedding matrix of each (database file, embedding model), kept for the process.

:func:`get_matrix` loads it once (:mod:`hermes.ranking.matrix_loader`: the snapshot, then
SQLite) and brings it up to date at every call — one indexed ``max(embed_seq)`` when nothing
changed. The class and its views live in :mod:`hermes.ranking.matrix_rows` and are named
here too, for the code that imports them from this module.
"""

from __future__ import annotations

import threading

from .. import config
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
        latest = db.execute("SELECT max(embed_seq) FROM items").fetchone()[0] or 0
        if matrix is not None and latest < matrix.seq:  # file replaced or rolled back
            matrix = None
        if matrix is not None and wanted != "auto" and matrix.storage != wanted:
            matrix = None  # the setting changed under a running process
        if matrix is None:
            matrix = matrix_loader.first_load(db, path, model, dimension, wanted, latest)
            if matrix.storage == "int8":
                matrix.exact = ExactRows(path, model, dimension)
            matrix.db_path = path
            _CACHE[key] = matrix
        if latest > matrix.seq:
            read = matrix_loader.refresh(db, matrix, latest)
            if read >= matrix_store.MIN_ROWS:
                matrix_store.save_later(db, path, matrix)
            if matrix.storage == "int8":
                release_free_memory()  # the chunks' float32 rows and key lists
        return matrix


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()
