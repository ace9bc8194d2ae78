"""An on-disk snapshot of the embedding matrix, so a fresh process starts fast.

Reading 100k embeddings (and their tags) out of SQLite takes about a second; the CLI, the
MCP server and the web app are all fresh processes. After a load that read at least
:data:`MIN_ROWS` rows from SQLite, the matrix is written to ``<database>-matrix/`` (one file
per embedding model, written to a temporary name and renamed, on a background thread); the
next process loads it and reads only rows embedded since.

The file is the arrays' ``.npy`` records one after another (their names first). A load maps
the large ones from the file (copy-on-write: :func:`read_arrays`'s ``mapped``), so a process
reads only the pages it uses; the small ones are read with ``np.load``. An ``.npz`` (a zip)
was read 2.2–2.9× slower at a million rows (a CRC pass and chunked copies).

A snapshot is used only if it still describes the database: the number and the id sum of
the items with ``embed_seq`` up to the snapshot's must match (an index-only query). A
deleted, re-embedded or swapped-in database therefore falls back to reading SQLite. It is
a cache: deleting it is always safe, and any error reading or writing it is ignored.

Next to the arrays it holds the summaries of them that no persona changes (the average
vector and every row's product with it, the per-pair weights and column order of the
preference keys: :meth:`Matrix.derived_for_snapshot`), so a fresh process does not spend its
first ranking recomputing them.

A matrix in int8 storage (:mod:`hermes.ranking.quantized`) has a snapshot of its own (its
codes and scales instead of the float32 vectors, 388 MB instead of 1.5 GB at a million
items): both kinds can sit side by side, and each process reads the one for its storage.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import threading
from pathlib import Path

import numpy as np

from .. import config
from .quantized import Int8Rows

log = logging.getLogger(__name__)

#: write a snapshot after a load that read at least this many rows from SQLite. At 10,000
#: rows a fresh process read them from SQLite in 0.19–0.31 CPU s and the snapshot in
#: 0.015–0.022 (issue 36, benchmarks/results/cli.md); 20,000 before, so `hermes feed` on a
#: 10,000-item archive re-read every row at every command.
MIN_ROWS = 5_000
#: v2: tag keys use hermes.text.tags.normalize_tag (whitespace collapsed, case-folded)
#: v3: author keys next to the tags; keyphrases as topic keys
#: v5: a stream of .npy records instead of an .npz; the persona-free summaries
#: v6: key pairs as int32, entry shares as uint16 counts (a v5 file is rebuilt, not adapted)
VERSION = 6
SUFFIX = ".arrays"


def snapshot_path(db_path: str, model: str, storage: str = "float32") -> Path | None:
    if not db_path or db_path.startswith(":memory:"):
        return None
    kind = "" if storage == "float32" else f"\0{storage}"  # float32's name as before
    slug = hashlib.sha256(f"{VERSION}\0{model}{kind}".encode()).hexdigest()[:16]
    return Path(f"{db_path}-matrix") / f"{slug}{SUFFIX}"


def read_arrays(path: Path, mapped: bool = False) -> dict[str, np.ndarray]:
    """Every array of a snapshot file, by name. ``mapped``: the large ones are mapped from
    the file copy-on-write (:func:`_mapped`) instead of read."""
    with open(path, "rb") as f:
        names = np.load(f, allow_pickle=False)
        if mapped:
            return _mapped(f, [str(name) for name in names])
        return {str(name): np.load(f, allow_pickle=False) for name in names}


#: arrays at least this large are mapped by :func:`read_arrays` (``mapped``)
MAP_BYTES = 1 << 20


def _mapped(f, names: list[str]) -> dict[str, np.ndarray]:
    """The records after the names, each large plain array a view of one private
    (copy-on-write) mapping of the file: a fresh process reads only the pages it touches. A
    first call at a million items with every score column stored never touches the int8
    codes (388 MB); reading them cost about a third of that call (issue 36). A change to
    such an array stays in the process; a newer snapshot replaces the file under its own
    name, and a mapping stays valid when its file is replaced or deleted (as
    :mod:`column_store`'s mapped columns do)."""
    whole = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    out = {}
    for name in names:
        start = f.tell()
        version = np.lib.format.read_magic(f)
        header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        shape, fortran, dtype = header[version](f) if version in header else ((), False, np.dtype(object))
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if dtype.hasobject or size < MAP_BYTES:
            f.seek(start)
            out[name] = np.load(f, allow_pickle=False)
            continue
        at = f.tell()
        out[name] = np.ndarray(shape, dtype, buffer=whole, offset=at, order="F" if fortran else "C")
        f.seek(at + size)
    return out


def stored_count(db_path: str, model: str, storage: str) -> tuple[int, int] | None:
    """``(seq, count)`` a snapshot of ``storage`` was written at, read from its first record
    (``meta`` comes first) without the arrays; ``None`` when there is none."""
    path = snapshot_path(db_path, model, storage)
    try:
        with open(path, "rb") as f:
            names = np.load(f, allow_pickle=False)
            if not len(names) or str(names[0]) != "meta":
                return None
            seq, count = (int(x) for x in np.load(f, allow_pickle=False)[:2])
            return seq, count
    except Exception:  # no snapshot, or unreadable: the caller reads SQLite
        return None


def fingerprint(db, seq: int) -> tuple[int, int]:
    """(count, sum of ids) of the items embedded up to ``seq`` — answered from the
    ``embed_seq`` index alone."""
    count, total = db.execute(
        "SELECT count(*), coalesce(sum(id), 0) FROM items WHERE embed_seq BETWEEN 1 AND ?", [seq]
    ).fetchone()
    return int(count), int(total)


def load(db, db_path: str, model: str, dimension: int, factory, storage: str = "float32", known=None, check=True):
    """A matrix restored from the snapshot, or ``None`` (no snapshot, stale, unreadable).
    ``known``: ``(seq, count, id sum)`` the caller read (:func:`fingerprint`), or a
    callable answering it once the arrays are read (a scan running meanwhile), used instead
    of a second scan when the snapshot is of that same ``seq``. ``check=False``: not
    compared with the database here; the caller compares the matrix's ``fingerprint`` (the
    snapshot's ``(count, id sum)``) with its own scan."""
    path = snapshot_path(db_path, model, storage)
    if path is None or not path.exists():
        return None
    try:
        data = read_arrays(path, mapped=True)
        seq, count, total, dim = (int(x) for x in data["meta"])
        if dim != dimension or str(data["model"]) != model:
            return None
        if check:
            if callable(known):
                known = known()
            if (count, total) != (known[1:] if known and known[0] == seq else fingerprint(db, seq)):
                return None
        matrix = factory(model, dimension, storage)
        ids = data["ids"]
        matrix._ids = ids
        if storage == "int8":
            matrix._int8 = Int8Rows.from_arrays(data["codes_t"], data["scales"], data["row_sum"])
        else:
            matrix._vectors = data["vectors"]
        matrix._published = data["published"]
        matrix.n = len(ids)
        matrix.key_index = {k: i for i, k in enumerate(data["keys"].tolist())}
        matrix.key_rows, matrix.key_cols = data["key_rows"], data["key_cols"]
        matrix.seq = seq
        matrix.fingerprint = (count, total)
        matrix.restore_derived(data)
        return matrix
    except Exception as exc:  # a cache: never let it break ranking
        log.debug("ignoring matrix snapshot %s: %s", path, exc)
        return None


def save_later(db, db_path: str, matrix) -> None:
    """Write the snapshot on a background (non-daemon) thread: the ranking that triggered
    it does not wait, and a CLI process finishes the file before it exits."""
    path = snapshot_path(db_path, matrix.model, matrix.storage)
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
        "ids": matrix.ids.copy(),
        "published": matrix.published,
        "keys": np.array(list(matrix.key_index), dtype=str),
        "key_rows": matrix.key_rows,
        "key_cols": matrix.key_cols,
    }
    if count != len(arrays["ids"]):  # items of other models are in the fingerprint
        return
    if matrix.storage == "int8":
        arrays["codes_t"], arrays["scales"] = matrix._int8.arrays()
        arrays["row_sum"] = matrix._int8.total.copy()
    else:
        arrays["vectors"] = matrix.vectors
    # The persona-free summaries are computed on the writer thread, from these same arrays
    # (a matrix object over them), by the methods a ranking uses: the same bits.
    held = type(matrix)(matrix.model, matrix.dimension, matrix.storage)
    held._ids, held._published = arrays["ids"], arrays["published"]
    if matrix.storage == "int8":
        held._int8 = Int8Rows.from_arrays(arrays["codes_t"], arrays["scales"], arrays["row_sum"])
    else:
        held._vectors = arrays["vectors"]
    held.n = len(arrays["ids"])
    held.key_index = dict(matrix.key_index)
    # The same contents: the summaries either computes serve both (not held twice). A change
    # to the live matrix gives it a new dict and leaves this one to the writer.
    held._derived = matrix._derived
    held.key_rows, held.key_cols = arrays["key_rows"], arrays["key_cols"]
    if matrix.storage == "int8":
        # A large archive computes them here, before its first ranking needs them: on two
        # threads at once their temporaries (hundreds of MB at a million items) would add up.
        matrix.derived_for_snapshot()
    threading.Thread(target=_write, args=(path, arrays, held), name="hermes-matrix-snapshot").start()


def _write(path: Path, arrays: dict, held=None) -> None:
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        if held is not None:
            arrays = {**arrays, **held.derived_for_snapshot()}
        config.private_dir(path.parent)
        with open(tmp, "wb") as f:
            np.save(f, np.array(list(arrays)), allow_pickle=False)
            for array in arrays.values():
                np.save(f, array, allow_pickle=False)
        os.replace(tmp, path)
        for old in path.parent.glob("*.npz"):  # the previous format's files: never read again
            old.unlink(missing_ok=True)
    except Exception as exc:
        log.debug("could not write matrix snapshot %s: %s", path, exc)
        tmp.unlink(missing_ok=True)
