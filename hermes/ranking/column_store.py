"""Per-row score columns kept on disk, so a fresh process does not recompute them.

A ranking over a large archive spends most of a fresh process's first call computing
columns over every row of the matrix: the profile's similarities to the interests, BM25
of the interests text, the behaviour components. Each depends only on the matrix's
contents and on what the persona wrote or clicked, so the process that computed one leaves
it in ``<database>-matrix/columns/`` and the next process that needs the same column reads
it instead (a CLI command is a fresh process every time).

A column is filed under a hash of what it was computed from: the matrix's contents (its
model, storage, embedding sequence and row order: :meth:`Matrix.layout`) and the caller's
key (the persona, its text or clicks, the scorer's settings). A changed archive, text or
click therefore finds nothing and computes afresh: a file is never adapted, only used
whole or not at all. Like the matrix snapshot it is a cache — deleting it is always safe,
and any error reading or writing it is ignored.

Only archives of at least :data:`MIN_ROWS` rows use it (below, computing is as fast as
reading). Each kind of column (``profile``, ``bm25``, ``behaviour``…) keeps its
:data:`MAX_FILES` most recently used files: a click makes new behaviour columns, and they
must not push out the profile a persona's text keeps for weeks.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
from pathlib import Path

import numpy as np

from .. import config

log = logging.getLogger(__name__)

#: archives smaller than this compute their columns (faster than a file read)
MIN_ROWS = 20_000
#: files kept per kind of column (the least recently used go first): at a million rows a
#: column is 4–12 MB
MAX_FILES = 6
#: bump when what a column holds changes meaning
VERSION = 1

#: seconds between a column's computation and its writing (see :func:`save_later`)
DELAY = 1.0

_LOCK = threading.Lock()
_WRITING = threading.Lock()
_PENDING: dict = {}  # slot (or path) -> (path, column)
_TIMER: threading.Timer | None = None
_REGISTERED = False


def folder(matrix) -> Path | None:
    """``<database>-matrix/columns``, or ``None`` for an in-memory database."""
    path = getattr(matrix, "db_path", "")
    if not path or path.startswith(":memory:"):
        return None
    return Path(f"{path}-matrix") / "columns"


def path_of(matrix, kind: str, key) -> Path | None:
    """Where the ``kind`` column for ``key`` over ``matrix``'s current contents is filed,
    or ``None`` when this matrix does not use the disk."""
    where = folder(matrix)
    if where is None or len(matrix) < MIN_ROWS:
        return None
    name = hashlib.sha256(repr((VERSION, matrix.layout(), key)).encode()).hexdigest()[:32]
    return where / f"{kind}-{name}.npy"


def load(matrix, kind: str, key) -> np.ndarray | None:
    """The stored column for ``key`` (one value, or one row of values, per matrix row), or
    ``None`` when there is none (or it cannot be read)."""
    path = path_of(matrix, kind, key)
    if path is None or not path.exists():
        return None
    try:
        # mapped, not read: the ranking copies what it uses of it anyway (a first call at a
        # million rows read ~40 MB of columns and then copied them again), and the mapping
        # stays valid if a newer file replaces or a prune deletes this one
        column = np.asarray(np.load(path, mmap_mode="r", allow_pickle=False))
        if len(column) != len(matrix):
            return None
        os.utime(path)  # recently used: pruned last
        return column
    except Exception as exc:  # a cache: never let it break ranking
        log.debug("ignoring stored column %s: %s", path, exc)
        return None


def save_later(matrix, kind: str, key, column: np.ndarray, slot=None) -> None:
    """File ``column`` (never modified afterwards by the caller) a moment later, off the
    ranking's path: :data:`DELAY` seconds on, or when the process exits, whichever comes
    first. A newer column for the same ``slot`` (e.g. a persona's behaviour after its next
    click) replaces one not yet written, so a burst of clicks writes only its last state —
    writing after every click cost a tenth of the call after a click at 100k items."""
    global _TIMER
    path = path_of(matrix, kind, key)
    if path is None:
        return
    with _LOCK:
        _PENDING[(matrix.db_path, kind, slot) if slot is not None else path] = (path, column)
        if _TIMER is None:
            _TIMER = threading.Timer(DELAY, flush)
            _TIMER.daemon = True  # the exit hook writes what is left, not a waiting thread
            _TIMER.start()
            _at_exit()


def flush() -> None:
    """Write every pending column now (at exit, after :data:`DELAY`, and for tests)."""
    global _TIMER
    with _WRITING:  # one writer at a time: the exit hook waits for the timer's write
        with _LOCK:
            pending = list(_PENDING.values())
            _PENDING.clear()
            _TIMER = None
        for path, column in pending:
            _write(path, column)


def _at_exit() -> None:
    global _REGISTERED
    if not _REGISTERED:
        atexit.register(flush)
        _REGISTERED = True


def _write(path: Path, column: np.ndarray) -> None:
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        config.private_dir(path.parent)
        with open(tmp, "wb") as f:
            np.save(f, column, allow_pickle=False)
        os.replace(tmp, path)
        _prune(path.parent, path.name.partition("-")[0])
    except Exception as exc:
        log.debug("could not store column %s: %s", path, exc)
        tmp.unlink(missing_ok=True)


def _prune(where: Path, kind: str) -> None:
    files = []
    for path in where.glob(f"{kind}-*.npy"):
        try:
            files.append((path.stat().st_mtime, path))
        except OSError:  # removed by another process meanwhile
            continue
    for _, path in sorted(files, reverse=True)[MAX_FILES:]:
        path.unlink(missing_ok=True)
