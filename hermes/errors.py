"""Errors a user or an agent can act on. Their message is the whole story."""


class HermesError(Exception):
    """A user mistake or an environmental problem with a clear, one-line message."""


class NotFound(HermesError):
    """An unknown persona, item, feed or plugin."""


class InvalidInput(HermesError):
    """A value outside what the operation accepts (bad enum, out-of-range number)."""
