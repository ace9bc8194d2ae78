"""The built-in plugin declaring the ``click`` signal kind (written by
:func:`hermes.storage.signals.record_click`, the one click write path)."""

from ..hookspecs import hookimpl


@hookimpl
def hermes_register_signals():
    return ["click"]
