"""Running ``hermes`` as a child process in tests and the hardening scripts: the command,
its environment, a free loopback port, and a server that is up before the test goes on."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def hermes_command() -> list[str]:
    script = Path(sys.executable).with_name("hermes")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes.cli"]


def sigint_as_on_a_terminal() -> None:
    """``preexec_fn`` of a child that a test interrupts with Ctrl-C: a suite started in the
    background (``make test &``, some CI runners) runs with SIGINT ignored, and a child
    inherits that; a person's terminal delivers it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def child_env(home: Path, **extra) -> dict:
    """The environment of a ``hermes`` child: its own data directory, the hash embedder, no
    third-party plugins. An ``extra`` value of ``None`` removes that variable (e.g.
    ``HERMES_EMBEDDER=None`` to run with the real model configured)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(
        HERMES_HOME=str(home),
        HERMES_EMBEDDER="hash",
        HERMES_LOAD_ENTRYPOINTS="0",
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    env.update({k: str(v) for k, v in extra.items() if v is not None})
    for k in [k for k, v in extra.items() if v is None]:
        env.pop(k, None)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(proc: subprocess.Popen, port: int, timeout: float = 60) -> None:
    """Return once 127.0.0.1:``port`` accepts connections; raise with the child's stderr if it
    exits first or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {proc.stderr.read().decode()}") from None
            time.sleep(0.1)


@contextmanager
def running_hermes(args: list[str], port: int, env: dict, cwd=None):
    """``hermes ARGS`` serving on ``port`` for the duration of the block (started in ``cwd``)."""
    proc = subprocess.Popen(
        [*hermes_command(), *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(proc, port)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()
