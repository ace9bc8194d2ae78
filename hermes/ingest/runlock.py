"""One ingest per database at a time, across processes, and what the running one is doing.

Two ingests of one database at once would each fetch the same feeds and embed what the
other stored (the CPU bill doubles), so :func:`ingest_run` holds an exclusive lock on
``<database>-ingest.lock`` (``filelock``: an OS lock the kernel drops when the process
dies, so a crashed run never leaves it stuck). A second run waits for it, or with
``wait=False`` raises :class:`IngestBusy` naming the one that runs.

While it runs, the holder keeps ``<database>-ingest.json`` up to date: who runs (pid,
start), the stage and how far it is, and when it ends the last run's outcome. Any process
reads it (the web UI's progress bar, ``list_feeds``, a waiting ``hermes ingest``) without
touching the lock.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

from hermes.storage.records import now_iso

from ..contract import fail
from ..errors import HermesError
from ..files import write_atomic

#: progress is written at most this often (a 2,000-item embed ticks 30 times a minute)
WRITE_EVERY = 0.5


#: the exit status of an ingest that found another one running (EX_TEMPFAIL: try later)
BUSY_EXIT = 75


class IngestBusy(HermesError):
    """Another process holds this database's ingest lock; ``running`` is what it reported."""

    def __init__(self, message: str, running: dict | None):
        super().__init__(message)
        self.running = running


def database_file(db) -> Path | None:
    """The file behind a connection (None for an in-memory database)."""
    try:
        name = db.execute("PRAGMA database_list").fetchone()[2]
    except Exception:  # noqa: BLE001 - a closed or foreign connection: no file to lock by
        return None
    return Path(name) if name else None


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + "-ingest.lock")


def status_path(database: Path) -> Path:
    return database.with_name(database.name + "-ingest.json")


def _alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


def read_status(database: Path | None) -> dict:
    """``{"running": {...} | None, "last": {...} | None}``; a run whose process is gone is
    not running (it crashed or was killed: the next run completes its work)."""
    empty = {"running": None, "last": None}
    if database is None:
        return empty
    try:
        data = json.loads(status_path(database).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict):
        return empty
    running = data.get("running") if isinstance(data.get("running"), dict) else None
    if running and not _alive(running.get("pid")):
        running = None
    last = data.get("last") if isinstance(data.get("last"), dict) else None
    return {"running": running, "last": last}


def describe(running: dict | None) -> str:
    """``pid 123, fetching feeds 3 of 8, started 10:02:11`` for messages."""
    if not running:
        return "no ingest is running"
    stage = {"fetch": "fetching feeds", "embed": "embedding items"}.get(running.get("stage"), "starting")
    done, total = running.get("done"), running.get("total")
    step = f" {done} of {total}" if total else ""
    return f"pid {running.get('pid')}, {stage}{step}, started {running.get('started', '?')}"


class _Status:
    """The lock holder's writer of the status file (atomic replace, throttled)."""

    def __init__(self, database: Path, mode: str):
        self.path = status_path(database)
        previous = read_status(database)
        self.state = {
            "running": {
                "pid": os.getpid(),
                "started": now_iso(),
                "mode": mode,
                "stage": "start",
                "done": 0,
                "total": 0,
            },
            "last": previous["last"],
        }
        self._written = 0.0
        self.write(force=True)

    def progress(self, stage: str, done: int, total: int) -> None:
        running = self.state["running"]
        changed = running["stage"] != stage or done == total
        running.update(stage=stage, done=done, total=total)
        self.write(force=changed)

    def finish(self, outcome: dict) -> None:
        started = self.state["running"]["started"]
        self.state = {
            "running": None,
            "last": {"started": started, "finished": now_iso(), "pid": os.getpid(), **outcome},
        }
        self.write(force=True)

    def write(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < WRITE_EVERY:
            return
        self._written = now
        _write_status(self.path, self.state)


def _write_status(path: Path, state: dict) -> None:
    try:
        write_atomic(path, json.dumps(state).encode(), mode=0o600)
    except OSError:  # status is a courtesy: a read-only directory must not stop ingest
        pass


def record_failure(database: Path, outcome: dict) -> None:
    """Keep ``outcome`` (``ok: false``) as the last run's, for a run that failed before it
    could say so itself (a child that could not even start: every other process reads the
    failure from here). The running one, if any, is kept."""
    current = read_status(database)
    _write_status(
        status_path(database), {"running": current["running"], "last": {"finished": now_iso(), **outcome, "ok": False}}
    )


@contextmanager
def ingest_run(db, *, wait: bool = True, mode: str = "all", on_wait=None):
    """Hold the database's ingest lock for the block; yields a status writer with
    ``progress(stage, done, total)`` and ``finish(outcome)`` (or None for an in-memory db).

    :param wait: wait for a running ingest to end (True) or raise :class:`IngestBusy`.
    :param on_wait: called once with the running ingest's status before waiting.
    """
    database = database_file(db)
    if database is None:
        yield None
        return
    # Here, not at the top: filelock loads only for an ingest (the feed list and the web's
    # status line read the status file without it).
    import filelock

    # private like the database beside it (README, Configuration: data directory)
    lock = filelock.FileLock(str(lock_path(database)), mode=0o600)
    try:
        lock.acquire(blocking=False)
    except filelock.Timeout:
        running = read_status(database)["running"]
        if not wait:
            raise IngestBusy(f"another hermes ingest is running on {database} ({describe(running)})", running) from None
        if on_wait:
            on_wait(running)
        lock.acquire()
    except OSError as exc:
        raise HermesError(f"cannot create the ingest lock beside {database}: {exc}") from exc
    try:
        status = _Status(database, mode)
        try:
            yield status
        finally:
            if status.state["running"] is not None:  # left early (an error, Ctrl-C)
                status.finish(fail("interrupted before the end"))
    finally:
        lock.release()


__all__ = ["IngestBusy", "database_file", "describe", "ingest_run", "read_status", "record_failure"]
