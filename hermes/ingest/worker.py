"""The background refresh's resident ingest worker: one child process of ``hermes web`` /
``serve`` that loads the embedding model once and runs each refresh it is asked for.

The refresher (:mod:`.refresher`) starts it with ``python -P -m hermes.ingest.worker --db
DATABASE --idle SECONDS`` and writes one request a line on its stdin, ``{"due": true,
"every": 3600}``; the worker runs that ingest (what ``hermes ingest [--due --every ...]
--json --no-wait`` runs) and answers one line on its stdout, ``{"code": 0, "answer":
{...}}``: ``code`` the exit status that command would have (0, 1 when a feed failed, 75
when another ingest of the database runs), ``answer`` its ``--json`` answer.

A child, not a thread, as before: fetching, parsing and embedding never hold the server's
GIL, so pages answer while it works. Resident, unlike before: a refresh that comes within
``--idle`` seconds of the last one finds the model loaded (a cold ``hermes ingest`` pays
1.3-3 CPU s of start-up and model load a time, issue 36). After ``--idle`` seconds without
a request, or when its stdin closes, the worker exits, which returns the model's memory;
the refresher starts a new one for the next refresh.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys

#: seconds without a request after which the worker exits (the model's memory returned)
IDLE_UNLOAD = 600.0


def _answer(database: str, due: bool, every: float) -> tuple[int, dict]:
    """One ingest run, as ``hermes ingest --json --no-wait [--due --every]`` reports it."""
    # Here, not at the top: the refresher imports this module (for IDLE_UNLOAD) in the
    # server's process, which must not load httpx, feedparser and the pipeline for it.
    from ..contract import fail, ok
    from ..errors import HermesError
    from ..storage.db import get_db
    from .pipeline import run_ingest
    from .runlock import BUSY_EXIT, IngestBusy

    db = get_db(database)
    try:
        try:
            summary = run_ingest(db, due_every=every if due else None, wait=False)
        except IngestBusy as exc:
            return BUSY_EXIT, fail(str(exc), busy=True, feeds=[])
        except HermesError as exc:
            if getattr(exc, "summary", None) is not None:
                return 1, fail(str(exc), feeds=list(exc.summary))
            return 1, fail(str(exc))
    finally:
        db.conn.close()
    counts = {k: sum(1 for s in summary if s["status"] == k) for k in ("new", "unchanged", "failed", "skipped")}
    new_items = sum(s["new"] for s in summary)
    message = (
        f"{new_items} new items from {len(summary)} feeds ({counts['new']} with new items, "
        f"{counts['unchanged']} unchanged, {counts['failed']} failed, {counts['skipped']} skipped); "
        f"{summary.embedded} embedded" + summary.skipped_words()
    )
    failed = counts["failed"] > 0
    answer = (fail if failed else ok)(
        message,
        new_items=new_items,
        embedded=summary.embedded,
        tagged=summary.tagged,
        feeds_by_status=counts,
        not_due=summary.not_due,
        feeds=list(summary),
    )
    return (1 if failed else 0), answer


def serve(database: str, idle: float, requests: int, replies) -> None:
    """Answer the JSON lines read from the descriptor ``requests`` on ``replies`` (a binary
    file) until it ends or ``idle`` seconds pass without a request."""
    pending, served = b"", 0
    while True:
        if b"\n" not in pending:
            ready, _, _ = select.select([requests], [], [], idle if idle > 0 else None)
            if not ready:
                return  # idle: exit, and the model's memory with it
            chunk = os.read(requests, 65536)
            if not chunk:
                return  # the refresher closed our stdin (it stopped)
            pending += chunk
            continue
        line, pending = pending.split(b"\n", 1)
        try:
            request = json.loads(line)
            code, answer = _answer(database, bool(request.get("due")), float(request.get("every") or 0))
        except Exception as exc:  # noqa: BLE001 - answered, so the refresher records why
            code, answer = 1, {"message": f"{type(exc).__name__}: {exc}"}  # read as a failure
        served += 1
        reply = {"code": code, "answer": answer, "worker": {"pid": os.getpid(), "served": served}}
        replies.write((json.dumps(reply, default=str) + "\n").encode("utf-8"))
        replies.flush()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m hermes.ingest.worker", description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--idle", type=float, default=IDLE_UNLOAD)
    args = ap.parse_args(argv)
    # The replies get a descriptor of their own; anything else written to stdout (a library's
    # print) goes to stderr and cannot break the protocol.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(args.db, args.idle, sys.stdin.fileno(), replies)


if __name__ == "__main__":
    main()
