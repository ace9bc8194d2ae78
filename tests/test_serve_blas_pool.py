"""``hermes serve`` answers ``tools/list`` before OpenBLAS starts its thread pool
(:func:`hermes.ranking.threads.blas_pool_deferred`): numpy loads on one BLAS thread, and the
first tool call gives OpenBLAS the threads it takes in a process that never deferred them.
Each check runs in a fresh interpreter: OpenBLAS reads its thread count once, when it loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from process_support import child_env

#: the OpenBLAS thread count of a fresh process that imports numpy without the deferral
PLAIN = """
import json, numpy
from threadpoolctl import ThreadpoolController
print(json.dumps([lib.num_threads for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers]))
"""

DEFERRED = """
import json, os, sys
from threadpoolctl import ThreadpoolController
from hermes.ranking import threads

def counts():
    return [lib.num_threads for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers]

with threads.blas_pool_deferred():
    import numpy
inside = counts()
env_after = os.environ.get("OPENBLAS_NUM_THREADS")
threads.start_blas_pool()
started = counts()
with threads.one_blas_thread():
    limited = counts()
print(json.dumps({"inside": inside, "env_after": env_after, "started": started, "limited": limited,
                  "after_limit": counts()}))
"""

#: ``hermes serve`` itself, its handlers watched: OpenBLAS's threads and the environment a
#: child would get, at ``tools/list`` and at the first tool call
SERVE = """
import json, os, sys
from threadpoolctl import ThreadpoolController
import hermes.mcp_server as server

seen = {}

def counts():
    return [lib.num_threads for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers]

listing, calling = server.Handlers.list_tools, server.Handlers._call

async def list_tools(self, ctx, params):
    seen["list"] = {"threads": counts(), "env": os.environ.get("OPENBLAS_NUM_THREADS"), "numpy": "numpy" in sys.modules}
    return await listing(self, ctx, params)

def call(self, name, arguments):
    seen.setdefault("call", counts())
    return calling(self, name, arguments)

server.Handlers.list_tools, server.Handlers._call = list_tools, call
sys.argv = ["hermes", "serve", "--db", sys.argv[1], "--no-refresh"]
try:
    from hermes.cli.app import main
    main()
finally:
    sys.stderr.write("SEEN " + json.dumps(seen) + "\\n")
"""

REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_feeds", "arguments": {}}},
]


def clean_env(tmp_path) -> dict:
    env = {**os.environ, **child_env(tmp_path / "home", HERMES_EMBEDDER=None, XDG_CACHE_HOME=tmp_path / "cache")}
    for name in ("HERMES_EMBEDDER", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        env.pop(name, None)
    return env


def run(code: str, env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture
def plain(tmp_path) -> list[int]:
    counts = json.loads(run(PLAIN, clean_env(tmp_path)).stdout)
    if not counts or counts == [1]:
        pytest.skip("numpy's BLAS here is not OpenBLAS with a pool of more than one thread")
    return counts


def test_numpy_loaded_under_the_deferral_starts_openblas_on_one_thread_until_the_pool_is_started(tmp_path, plain):
    seen = json.loads(run(DEFERRED, clean_env(tmp_path)).stdout)
    assert seen["inside"] == [1]
    assert seen["env_after"] is None  # a child started afterwards gets the environment as it was
    assert seen["started"] == plain  # as many threads as a process that never deferred them
    assert seen["limited"] == [1] and seen["after_limit"] == plain  # one_blas_thread still works


def test_a_thread_count_the_person_set_is_left_alone(tmp_path, plain):
    env = {**clean_env(tmp_path), "OPENBLAS_NUM_THREADS": "1"}
    seen = json.loads(run(DEFERRED, env).stdout)
    assert seen["inside"] == seen["started"] == [1] and seen["env_after"] == "1"


def test_hermes_serve_lists_its_tools_before_openblas_starts_its_pool(tmp_path, plain):
    """Fails without the deferral: numpy (sqlite-utils, the plugins) started OpenBLAS's whole
    pool before ``tools/list``, whose workers spin at start-up (0.15 CPU s on two cores)."""
    stdin = "".join(json.dumps(r) + "\n" for r in REQUESTS)
    out = run(SERVE, clean_env(tmp_path), str(tmp_path / "h.db"), stdin=stdin)
    answers = {a["id"]: a for a in map(json.loads, out.stdout.splitlines())}
    assert answers[3]["result"]["structuredContent"]["ok"] is True
    seen = json.loads(out.stderr.rsplit("SEEN ", 1)[1])
    assert seen["list"] == {"threads": [1], "env": None, "numpy": True}
    assert seen["call"] == plain


#: one_blas_thread on a thread that stays alive, then on another thread: threadpoolctl lets
#: one thread at a time set OpenBLAS's count (a server's first ranking ran on a worker that
#: lives on, and every later limit was dropped)
TWO_THREADS = """
import json, threading
import numpy
from threadpoolctl import ThreadpoolController
from hermes.ranking import threads

def counts():
    return [lib.num_threads for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers]

seen, first_done, finish = {}, threading.Event(), threading.Event()

def first():
    with threads.one_blas_thread():
        seen["first"] = counts()
    first_done.set()
    finish.wait()  # the first limiter's thread stays alive, as a server's worker does

def second():
    with threads.one_blas_thread():
        seen["second"] = counts()
    seen["after"] = counts()

a = threading.Thread(target=first)
a.start()
first_done.wait()
b = threading.Thread(target=second)
b.start()
b.join()
finish.set()
a.join()
print(json.dumps(seen))
"""


def test_one_blas_thread_limits_every_thread_while_an_earlier_one_lives(tmp_path, plain):
    seen = json.loads(run(TWO_THREADS, clean_env(tmp_path)).stdout)
    assert seen == {"first": [1], "second": [1], "after": plain}
