"""Errors a user or an agent can act on. Their message is the whole story."""


class HermesError(Exception):
    """A user mistake or an environmental problem with a clear, one-line message."""


class NotFound(HermesError):
    """An unknown persona, item, feed or plugin."""


class InvalidInput(HermesError):
    """A value outside what the operation accepts (bad enum, out-of-range number)."""


class Unavailable(HermesError):
    """The environment failed, not the caller: a full disk, a lock held too long, a file
    turned read-only. A tool answers ``ok: false`` with ``server_error: true``; the web UI
    answers 500."""
