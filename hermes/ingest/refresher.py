"""The background refresh of ``hermes web`` and ``hermes serve``: feeds stay fresh without
cron.

A daemon thread sleeps until the next feed is due (:mod:`.schedule`), then asks the
resident ingest worker (:mod:`.worker`, a child process at low CPU priority) to run the
refresh: ``hermes ingest --due`` in a process that keeps the embedding model loaded between
refreshes. A child, not a thread: fetching, parsing and embedding then never hold this
process's GIL, so pages and tool calls answer while it works. The worker exits after
:data:`IDLE_UNLOAD` seconds without a refresh, which returns the model's memory, and is
started again by the next one; one that died (killed, out of memory) is started again too,
and a refresh it was running when it died is run once more in the new one. One refresh
runs at a time (the loop's thread runs them). The ingest lock (:mod:`.runlock`) keeps it
from running beside another ingest of the same database; its status file is where this
process reads the progress from.

A refresh that fails (the worker cannot start, crashes twice, or answers without a summary)
is retried after :data:`FIRST_RETRY`, doubling with each failure in a row up to
:data:`MAX_RETRY` (it was retried about once a second), and is recorded as the last run's
outcome, so every face (``list_feeds``, ``hermes feeds list``, the web pages) says
refreshing fails and why.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .. import config
from ..facekit.faces import EMBED_PENDING, EMBED_REFRESHED, INGEST, REFRESHED, Say
from ..storage.db import get_db
from .runlock import BUSY_EXIT, database_file, read_status, record_failure
from .schedule import feed_schedule, iso, next_due, next_refresh, seconds_until
from .worker import IDLE_UNLOAD

log = logging.getLogger(__name__)

#: niceness of the ingest child: pages and tool calls come first
NICENESS = 10
#: the first look after start-up waits this long (the server comes up first)
START_DELAY = 2.0
#: seconds before the first retry of a failed refresh; each failure in a row doubles it
FIRST_RETRY = 30.0
#: the longest wait between retries of a failing refresh
MAX_RETRY = 3600.0

_active: dict[str, Refresher] = {}
_active_lock = threading.Lock()


def active(database: str | os.PathLike | None) -> Refresher | None:
    """The refresher keeping ``database`` fresh in this process, if any."""
    if database is None:
        return None
    with _active_lock:
        return _active.get(str(Path(database).resolve()))


def ingest_command(database: str, every: float, *, due: bool) -> list[str]:
    # -P: the working directory does not go first on the child's import path. Without it a
    # server started from a folder holding a "hermes" directory (a checkout's parent, a home
    # with ~/hermes, where MCP hosts start servers) imported that instead, and every
    # refresh failed with an ImportError.
    command = [sys.executable, "-P", "-m", "hermes.cli", "ingest", "--db", database, "--json", "--no-wait"]
    if due:
        command += ["--due", "--every", f"{every:g}s"]
    return command


def worker_command(database: str, idle: float) -> list[str]:
    """The resident worker's argv (``-P``: as :func:`ingest_command`)."""
    return [sys.executable, "-P", "-m", "hermes.ingest.worker", "--db", database, "--idle", f"{idle:g}"]


class WorkerDied(Exception):
    """The resident worker ended before answering (``code``: its exit status)."""

    def __init__(self, code: int | None, err: bytes):
        super().__init__(code)
        self.code, self.err = code, err


class Refresher:
    """Keeps one database's feeds fresh from a long-running process.

    :param every: seconds between fetches of a feed (``[ingest] every``); 0 refreshes only
        when asked (:meth:`refresh_now`, the web UI's "Refresh now").
    :param command: builds the argv of a one-off child per refresh (``hermes ingest --due``:
        :func:`ingest_command`; tests substitute their own); None (the default): the
        resident worker, started with ``worker(database, idle)``.
    :param idle: seconds the resident worker waits for the next refresh before it exits.
    """

    def __init__(
        self,
        database: str | os.PathLike,
        every: float,
        *,
        command=None,
        start_delay: float = START_DELAY,
        worker=worker_command,
        idle: float = IDLE_UNLOAD,
    ):
        self.database = str(Path(database).resolve())
        self.every = float(every)
        self.command = command
        self.worker_command = worker
        self.idle = float(idle)
        self.start_delay = start_delay
        self._worker: subprocess.Popen | None = None  # the resident worker, between refreshes too
        self._worker_err = None  # its stderr (a file: a pipe nobody reads would fill and block it)
        self.workers_started = 0
        self.last_worker: dict | None = None  # {pid, served} of the worker's last answer
        self._refresh_lock = threading.Lock()  # one refresh at a time, whoever calls _run
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._manual = False
        self._child: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None
        self._state_lock = threading.Lock()
        self.last_error: str | None = None
        self.next_at: datetime | None = None
        self.failures = 0  # failed refreshes in a row
        self.retry_at: datetime | None = None  # the backoff after them
        self.first_retry, self.max_retry = FIRST_RETRY, MAX_RETRY

    # --- control ---------------------------------------------------------------------------

    def start(self) -> Refresher:
        with _active_lock:
            _active[self.database] = self
        self._thread = threading.Thread(target=self._loop, name="hermes-refresh", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        with self._state_lock:
            child = self._child
        if child is not None and child.poll() is None:
            child.terminate()  # the ingest is safe to stop: the next run completes it
        if self._thread is not None:
            self._thread.join(timeout)
        self._end_worker()
        with _active_lock:
            if _active.get(self.database) is self:
                del _active[self.database]

    def refresh_now(self) -> tuple[bool, str]:
        """Ask for a refresh of every feed now. (False, why) when one is already running."""
        running = read_status(Path(self.database))["running"]
        if running or self.busy:
            return False, "A refresh is already running; its progress is shown on the Feeds page."
        with self._state_lock:
            self._manual = True
        self._wake.set()
        return True, "Refresh started: every feed is being fetched now."

    @property
    def busy(self) -> bool:
        with self._state_lock:
            return self._manual or (self._child is not None and self._child.poll() is None)

    def state(self) -> dict:
        """What the UI and ``list_feeds`` show: interval, next run, the running one, the last."""
        status = read_status(Path(self.database))
        return {
            "background": self.every > 0,
            "every": self.every,
            "next": iso(self.next_at) if self.every > 0 else None,
            "running": status["running"],
            "last": status["last"],
            "requested": self.busy and not status["running"],
            "error": self.last_error,
            "failures": self.failures,
        }

    # --- the loop ------------------------------------------------------------------------------

    def _loop(self) -> None:
        self._wake.wait(self.start_delay)  # "Refresh now" or stop() cut it short
        self._wake.clear()
        while not self._stop.is_set():
            # A manual request stays set ("requested") until its child has started: a page
            # polling in between must not read "nothing running, nothing asked" and stop.
            with self._state_lock:
                manual = self._manual
            try:
                when = self._when_due()
                if manual or (when is not None and when <= datetime.now(UTC)):
                    self._run(due=not manual)  # clears the request once the child runs
                    when = self._when_due()
            except Exception as exc:  # the loop must outlive any one failure
                log.exception("background refresh failed")
                self._failed(f"{type(exc).__name__}: {exc}")
                with self._state_lock:
                    self._manual = False
                when = self.retry_at
            self.next_at = when
            self._wake.wait(seconds_until(when, self.every) if self.every > 0 else None)
            self._wake.clear()

    def _when_due(self) -> datetime | None:
        """When the next scheduled refresh runs: when a feed is due, but not before the
        backoff after failed refreshes ends ("Refresh now" does not wait for it)."""
        if self.every <= 0:
            return None
        when = self._next_due()
        if when is not None and self.retry_at is not None:
            when = max(when, self.retry_at)
        return when

    def _failed(self, message: str) -> None:
        """Count a failed refresh, set the backoff, and record why for every face."""
        self.failures += 1
        delay = min(self.max_retry, self.first_retry * 2 ** min(self.failures - 1, 30))
        self.retry_at = datetime.now(UTC) + timedelta(seconds=delay)
        self.last_error = message
        record_failure(
            Path(self.database),
            {"message": message, "by": "background refresh", "failures": self.failures, "retry_at": iso(self.retry_at)},
        )
        log.warning("background refresh: %s (%d in a row; next try in %.0f s)", message, self.failures, delay)

    def _next_due(self) -> datetime | None:
        db = get_db(self.database, migrate=False)
        try:
            return next_refresh(db, self.every)
        finally:
            db.conn.close()

    def _run(self, *, due: bool) -> None:
        with self._refresh_lock:
            if self.command is None:
                code, out, err = self._ask_worker(due=due)
            else:
                code, out, err = self._run_child(due=due)
        if code is None:
            return  # stopped meanwhile
        if code == BUSY_EXIT:
            # another ingest of this database runs (a cron job, the person's): this turn is
            # skipped, which is no failure to warn about (it was logged every few seconds)
            log.info("background refresh: another hermes ingest is running; skipped this turn")
            return
        if code == 0 or _completed(out):
            # a run that fetched every feed it could is no failed refresh, even when some
            # feeds failed (each feed backs off on its own, and its row says why)
            self.failures, self.retry_at, self.last_error = 0, None, None
            return
        self._failed(_failure(code, out, err))

    def _run_child(self, *, due: bool) -> tuple[int | None, bytes, bytes]:
        """A one-off child per refresh (``command``)."""
        argv = self.command(self.database, self.every, due=due)
        # stdin/stdout never shared: under `hermes serve` (stdio) they are the MCP stream.
        child = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy()
        )
        with self._state_lock:
            self._child = child
            self._manual = False
        _lower_priority(child)
        out, err = child.communicate()
        with self._state_lock:
            self._child = None
        return child.returncode, out, err

    # --- the resident worker ---------------------------------------------------------------

    def _ask_worker(self, *, due: bool) -> tuple[int | None, bytes, bytes]:
        """Run one refresh in the resident worker: (exit status, ``--json`` answer, stderr).

        A worker found dead (it exited idle, or was killed) is started again first; one that
        dies while running the refresh is started again and the refresh run once more in it
        (the ingest is safe to repeat: what was stored stays and is not stored twice)."""
        request = (json.dumps({"due": due, "every": self.every}) + "\n").encode("utf-8")
        for attempt in (1, 2):
            if self._stop.is_set():
                return None, b"", b""
            worker = self._live_worker()
            self._clear_stderr()  # what it says now is about this refresh
            with self._state_lock:
                self._child = worker
                self._manual = False
            try:
                try:
                    worker.stdin.write(request)
                    worker.stdin.flush()
                except (BrokenPipeError, OSError):
                    pass  # it ended meanwhile: readline says so
                line = worker.stdout.readline()
                if not line:
                    worker.wait()
                    raise WorkerDied(worker.returncode, self._worker_stderr())
                reply = json.loads(line)
                self.last_worker = reply.get("worker")
                return int(reply["code"]), json.dumps(reply.get("answer")).encode("utf-8"), b""
            except WorkerDied as died:
                self._end_worker()
                if self._stop.is_set():
                    return None, b"", b""
                log.warning("background refresh: the ingest worker ended (status %s); starting it again", died.code)
                if attempt == 2:
                    return (died.code if died.code not in (None, 0) else 1), b"", died.err
            finally:
                with self._state_lock:
                    self._child = None
        raise AssertionError("unreachable")

    def _live_worker(self) -> subprocess.Popen:
        worker = self._worker
        if worker is not None and worker.poll() is None:
            return worker
        self._end_worker()  # an idle exit or a death: its pipes and stderr file go
        self._worker_err = tempfile.TemporaryFile(prefix="hermes-refresh-")  # noqa: SIM115 - lives with the worker
        # stdin/stdout are the worker's own pipes: under `hermes serve` (stdio) this
        # process's are the MCP stream.
        worker = subprocess.Popen(
            self.worker_command(self.database, self.idle),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._worker_err,
            env=os.environ.copy(),
        )
        _lower_priority(worker)
        self._worker = worker
        self.workers_started += 1
        return worker

    def _clear_stderr(self) -> None:
        if self._worker_err is not None:
            try:
                self._worker_err.seek(0)
                self._worker_err.truncate()
            except (OSError, ValueError):
                pass

    def _worker_stderr(self) -> bytes:
        if self._worker_err is None:
            return b""
        try:
            self._worker_err.seek(0)
            return self._worker_err.read()[-4000:]
        except (OSError, ValueError):
            return b""

    def _end_worker(self) -> None:
        """Stop the resident worker (closing its stdin ends it; terminate if it is busy)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            if worker.poll() is None:
                try:
                    worker.stdin.close()
                except OSError:
                    pass
                try:
                    worker.wait(2)
                except subprocess.TimeoutExpired:
                    worker.terminate()
                    try:
                        worker.wait(5)
                    except subprocess.TimeoutExpired:
                        worker.kill()
                        worker.wait()
            for stream in (worker.stdin, worker.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if self._worker_err is not None:
            self._worker_err.close()
            self._worker_err = None


def _lower_priority(child: subprocess.Popen) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, child.pid, NICENESS)
    except (AttributeError, OSError):  # not on this platform, or it already ended
        pass


def _completed(out: bytes) -> bool:
    """Whether the child's ``--json`` answer is the summary of a run that went through."""
    try:
        answer = json.loads(out.decode("utf-8", "replace"))
    except ValueError:
        return False
    return isinstance(answer, dict) and isinstance(answer.get("feeds_by_status"), dict)


def _failure(code: int, out: bytes, err: bytes) -> str:
    try:
        message = json.loads(out.decode("utf-8", "replace")).get("message")
    except (ValueError, AttributeError):
        message = None
    text = message or err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    text = text if isinstance(text, str) else text[0]
    return f"the last refresh exited with status {code}: {text[:300]}".rstrip(": ")


def failing(last: dict | None) -> dict | None:
    """``{message, failures, retry_at, since, words}`` when the last refresh failed (the
    background refresh's child, or a person's ``hermes ingest``), else None; ``words`` is
    the sentence every face shows."""
    if not isinstance(last, dict) or last.get("ok") is not False:
        return None
    failures = last.get("failures")
    failure = {
        "message": str(last.get("message") or "the last refresh failed")[:500],
        "failures": failures if isinstance(failures, int) and failures > 0 else 1,
        "retry_at": last.get("retry_at"),
        "since": last.get("finished"),
    }
    times = f" ({failure['failures']} times in a row)" if failure["failures"] > 1 else ""
    retry = f"; next try {failure['retry_at']}" if failure["retry_at"] else ""
    return {**failure, "words": f"Refreshing fails{times}: {failure['message']}{retry}."}


def refresh_state(db) -> dict:
    """When the feeds were and will be refreshed, for ``list_feeds`` and the web UI:
    ``{background, every, next, running, last, last_refresh, failing}`` plus ``due`` (feed
    id -> when it is due); ``last_refresh`` is the later of the last run's end and the last
    fetch; ``failing`` (:func:`failing`) says why the last refresh failed.

    ``background`` says whether a refresh runs in this process (``hermes web`` / ``serve``);
    without one, ``next`` is None: a person or cron runs ``hermes ingest``."""
    database = database_file(db)
    here = active(database)
    every = here.every if here is not None else config.settings().ingest_every
    state = (
        here.state()
        if here is not None
        else {
            "background": False,
            "every": every,
            "next": None,
            "requested": False,
            "error": None,
            **read_status(database),
        }
    )
    now = datetime.now(UTC)
    fetched = db.execute("SELECT max(last_fetched) FROM feeds").fetchone()[0]
    state["failing"] = failing(state.get("last"))
    # a failed run refreshed nothing: "Refreshed 1 min ago" would hide it
    finished = None if state["failing"] else (state.get("last") or {}).get("finished")
    state["last_refresh"] = max(filter(None, [finished, fetched]), default=None)
    if state["background"] and state["next"] is None:
        when = next_refresh(db, every)
        state["next"] = iso(max(when, now)) if when else None
    # overdue (or never fetched) reads as "now"
    state["due"] = {f["id"]: iso(max(next_due(f, every), now)) for f in feed_schedule(db)} if every > 0 else {}
    return state


def refreshes(db) -> bool:
    """Whether this process fetches ``db``'s feeds on its own: the background refresh of
    ``hermes serve`` or ``hermes web`` (not ``--no-refresh``'s, which runs only when asked)."""
    here = active(database_file(db))
    return here is not None and here.every > 0


def new_items(db) -> Say:
    """How new items arrive, in each face's words, true for this process (:func:`refreshes`):
    what every "nothing yet" message says (an empty feed, digest, search or archive)."""
    return REFRESHED if refreshes(db) else INGEST


def embedding(db) -> Say:
    """How stored items not embedded yet get embedded, as :func:`new_items` says it."""
    return EMBED_REFRESHED if refreshes(db) else EMBED_PENDING


def start_background(db_path) -> Refresher | None:
    """Start the background refresh of ``db_path`` (``--db`` / ``HERMES_DB`` / default);
    None when ``[ingest] every`` is off."""
    every = config.settings().ingest_every
    if every <= 0:
        return None
    return Refresher(config.db_path(db_path), every).start()


def start_manual(db_path) -> Refresher:
    """A refresher that runs only when asked (``hermes web --no-refresh``'s Refresh now)."""
    return Refresher(config.db_path(db_path), 0).start()


__all__ = [
    "Refresher",
    "active",
    "embedding",
    "failing",
    "ingest_command",
    "new_items",
    "refresh_state",
    "refreshes",
    "start_background",
    "start_manual",
    "worker_command",
]
