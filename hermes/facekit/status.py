"""Telling a waiting person what hermes is doing.

The core marks its slow steps (loading the embedding model, embedding a persona's
interests) with :func:`step`; a face that has a person waiting installs a listener with
:func:`listen` (the CLI shows a spinner on a terminal, a line on stderr otherwise). Without
a listener — the MCP server, the web app, tests — a step costs nothing and shows nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

Listener = Callable[[str], AbstractContextManager]

_listener: Listener | None = None
_lock = threading.Lock()


@contextmanager
def listen(listener: Listener | None) -> Iterator[None]:
    """Show every :func:`step` of the block through ``listener(message)``, a context
    manager entered for the step's duration."""
    global _listener
    with _lock:
        previous, _listener = _listener, listener
    try:
        yield
    finally:
        with _lock:
            _listener = previous


def step(message: str) -> AbstractContextManager:
    """``with step("loading the embedding model"): …`` — shown while the block runs."""
    listener = _listener
    return listener(message) if listener is not None else nullcontext()
