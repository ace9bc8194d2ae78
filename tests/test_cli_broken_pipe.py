"""A command whose stdout closes early (``hermes feed ann | head -1``) stops quietly with the
status a shell expects of a pipe's writer (SIGPIPE: 141), as git and ls do — not exit 1
with nothing said (click's own handling of EPIPE), nor a traceback."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess

import pytest
from process_support import child_env, hermes_command

from hermes.storage.records import create_user

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGPIPE") or not hasattr(fcntl, "F_SETPIPE_SZ"), reason="Linux pipes and SIGPIPE"
)


@pytest.fixture
def long_feed(db, db_path, add_items, hermes_home):
    create_user(db, "ann", "apples")
    add_items(
        [
            {"title": f"Apple orchard report {n} " + "apples " * 40, "summary": "apples and pears " * 100}
            for n in range(100)
        ]
    )
    db.conn.close()
    return db_path


def _first_line_then_close(args: list[str], home) -> tuple[bytes, int, bytes]:
    read_end, write_end = os.pipe()
    # Buffered as at a shell (PYTHONUNBUFFERED writes straight to the file, and a write the
    # pipe takes only part of is cut short without a word) and a one-page pipe: the command's 27 kB (62 kB with --json) do not fit, so it is still
    # writing when the reader goes away, however fast it runs
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(
        [*hermes_command(), *args], stdout=write_end, stderr=subprocess.PIPE, env=child_env(home, PYTHONUNBUFFERED=None)
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        first = out.readline()  # then the reader goes away, as `head -1` does
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return first, proc.returncode, err


def test_a_closed_stdout_ends_the_command_as_sigpipe_quietly(long_feed, hermes_home):
    first, code, err = _first_line_then_close(
        ["feed", "ann", "--all", "--below-bar", "--limit", "100", "--db", str(long_feed)], hermes_home
    )
    assert first.strip(), err.decode()
    # killed by SIGPIPE (a shell reports 141), or 141 where it could not be raised
    assert code in (-signal.SIGPIPE, 128 + signal.SIGPIPE), (code, err.decode())
    assert err == b"", err.decode()  # nothing said: the reader chose to stop reading


def test_the_json_document_too(long_feed, hermes_home):
    first, code, err = _first_line_then_close(
        ["feed", "ann", "--all", "--below-bar", "--limit", "100", "--json", "--db", str(long_feed)], hermes_home
    )
    assert first.strip()
    assert code in (-signal.SIGPIPE, 128 + signal.SIGPIPE), (code, err.decode())
    assert err == b"", err.decode()
