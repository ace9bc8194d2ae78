"""The background refresh's resident ingest worker (issue 36): the model loads once for the
refreshes that follow one another, a worker that died is started again (and the refresh
it was running is run once more), an idle worker exits and returns its memory, and one
refresh runs at a time."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from hermes.embed import HashEmbedder
from hermes.ingest import worker as worker_module
from hermes.ingest.pipeline import add_feeds
from hermes.ingest.refresher import Refresher
from hermes.plugins import get_plugin_manager

FEED = (
    '<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title>'
    "<link>https://example.org/</link>{items}</channel></rss>"
)


def write_feed(path: Path, names: list[str]) -> None:
    items = "".join(
        f"<item><title>Item {n}</title><guid>urn:{n}</guid><link>https://example.org/{n}</link>"
        f"<description>About {n} and more words.</description></item>"
        for n in names
    )
    path.write_text(FEED.format(items=items), encoding="utf-8")


def count(db) -> int:
    return db.execute("SELECT count(*) FROM items WHERE embedding IS NOT NULL").fetchone()[0]


def wait_for(check, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture
def feed(tmp_path, db):
    path = tmp_path / "feed.xml"
    write_feed(path, ["a"])
    add_feeds(db, [(str(path), None)])
    return path


def test_refreshes_in_a_row_are_run_by_one_resident_worker(db_path, db, feed):
    refresher = Refresher(db_path, 3600, start_delay=3600)
    try:
        refresher._run(due=False)
        assert refresher.last_error is None and count(db) == 1
        first = refresher.last_worker
        write_feed(feed, ["a", "b"])
        refresher._run(due=False)
        assert refresher.last_error is None and count(db) == 2
        # the same process answered both: it loaded the embedder once
        assert refresher.workers_started == 1
        assert refresher.last_worker == {"pid": first["pid"], "served": 2}
        assert not refresher.busy  # resident between refreshes, yet no refresh running
    finally:
        refresher.stop()
    assert refresher._worker is None


def test_the_worker_loads_the_model_once_for_many_refreshes(tmp_path, db_path, db, feed):
    """In the worker's own loop: two requests, two ingests with new items, one load."""

    class Counting(HashEmbedder):
        loads = 0
        loaded = False

        def load(self):
            if not self.loaded:
                Counting.loads += 1
                self.loaded = True

        def embed_tokens(self, texts):
            self.load()
            return super().embed_tokens(texts)

    pm = get_plugin_manager()
    saved, pm.embedder = pm.embedder, Counting()
    db.conn.close()
    requests, ours = os.pipe()
    replies = tmp_path / "replies"
    try:
        os.write(ours, b'{"due": false, "every": 3600}\n')
        answered = []

        def second():  # the next refresh comes once the first is answered
            wait_for(lambda: replies.exists() and replies.read_bytes().count(b"\n") == 1)
            write_feed(feed, ["a", "b"])
            os.write(ours, b'{"due": false, "every": 3600}\n')
            os.close(ours)
            answered.append(True)

        helper = threading.Thread(target=second)
        helper.start()
        with open(replies, "wb") as out:
            worker_module.serve(str(db_path), 60, requests, out)
        helper.join()
    finally:
        pm.embedder = saved
        os.close(requests)
    lines = [json.loads(x) for x in replies.read_text().splitlines()]
    assert [x["code"] for x in lines] == [0, 0] and answered
    assert [x["answer"]["new_items"] for x in lines] == [1, 1]
    assert [x["worker"]["served"] for x in lines] == [1, 2]
    assert Counting.loads == 1


def test_a_killed_worker_is_started_again_and_the_next_refresh_succeeds(db_path, db, feed):
    refresher = Refresher(db_path, 3600, start_delay=3600)
    try:
        refresher._run(due=False)
        pid = refresher.last_worker["pid"]
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: refresher._worker.poll() is not None)
        write_feed(feed, ["a", "b"])
        refresher._run(due=False)
        assert refresher.last_error is None and refresher.failures == 0
        assert refresher.workers_started == 2 and refresher.last_worker["pid"] != pid
        assert count(db) == 2
    finally:
        refresher.stop()


def dying_worker(tmp_path: Path, *, times: int):
    """A worker that dies on its first ``times`` requests (one a process), then answers."""
    marks = tmp_path / "deaths"
    code = (
        "import json, os, sys\n"
        f"marks = {str(marks)!r}\n"
        "line = sys.stdin.readline()\n"
        "dead = open(marks).read().count('x') if os.path.exists(marks) else 0\n"
        f"if dead < {times}:\n"
        "    open(marks, 'a').write('x'); sys.stderr.write('MemoryError: the model\\n'); os._exit(9)\n"
        "answer = {'ok': True, 'message': 'done', 'feeds_by_status': {'new': 1}}\n"
        "print(json.dumps({'code': 0, 'answer': answer, 'worker': {'pid': os.getpid(), 'served': 1}}), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    return lambda database, idle: [sys.executable, "-c", code]


def test_a_refresh_whose_worker_dies_is_run_once_more_in_a_new_one(tmp_path, db_path, db):
    refresher = Refresher(db_path, 3600, start_delay=3600, worker=dying_worker(tmp_path, times=1))
    try:
        refresher._run(due=True)
        assert refresher.last_error is None and refresher.failures == 0  # not lost
        assert refresher.workers_started == 2
    finally:
        refresher.stop()


def test_a_worker_that_keeps_dying_is_a_failed_refresh_said_why(tmp_path, db_path, db):
    refresher = Refresher(db_path, 3600, start_delay=3600, worker=dying_worker(tmp_path, times=5))
    try:
        refresher._run(due=True)
        assert refresher.workers_started == 2  # tried twice, not in a loop
        assert refresher.failures == 1 and "status 9" in refresher.last_error
        assert "MemoryError" in refresher.last_error
    finally:
        refresher.stop()


def test_an_idle_worker_exits_and_the_next_refresh_starts_one(db_path, db, feed):
    refresher = Refresher(db_path, 3600, start_delay=3600, idle=0.3)
    try:
        refresher._run(due=False)
        worker = refresher._worker
        wait_for(lambda: worker.poll() is not None)  # idle: exited, its memory returned
        assert worker.returncode == 0
        write_feed(feed, ["a", "b"])
        refresher._run(due=False)
        assert refresher.last_error is None and count(db) == 2
        assert refresher.workers_started == 2
    finally:
        refresher.stop()


def test_one_refresh_at_a_time(tmp_path, db_path, db):
    """Two callers at once (the loop and a test, say): the second waits for the first."""
    log = tmp_path / "log"
    code = (
        "import json, os, sys, time\n"
        "for line in sys.stdin:\n"
        f"    open({str(log)!r}, 'a').write('start\\n'); time.sleep(0.3)\n"
        f"    open({str(log)!r}, 'a').write('end\\n')\n"
        "    answer = {'ok': True, 'message': 'done', 'feeds_by_status': {'new': 1}}\n"
        "    print(json.dumps({'code': 0, 'answer': answer}), flush=True)\n"
    )
    refresher = Refresher(db_path, 3600, start_delay=3600, worker=lambda database, idle: [sys.executable, "-c", code])
    try:
        threads = [threading.Thread(target=refresher._run, kwargs={"due": True}) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        refresher.stop()
    assert log.read_text().split() == ["start", "end", "start", "end"]
    assert refresher.workers_started == 1


def test_the_background_loop_uses_the_worker(db_path, db, feed):
    refresher = Refresher(db_path, 3600, start_delay=0).start()
    try:
        wait_for(lambda: count(db) == 1)
        wait_for(lambda: not refresher.busy)
        assert refresher.workers_started == 1 and refresher._worker.poll() is None
        write_feed(feed, ["a", "b"])
        assert refresher.refresh_now()[0]
        wait_for(lambda: count(db) == 2)
        wait_for(lambda: not refresher.busy)
        assert refresher.workers_started == 1 and refresher.last_worker["served"] == 2
    finally:
        refresher.stop()
    assert refresher._worker is None
