"""The ``hermes`` command line: the app and its core commands (:mod:`.app`, :mod:`.core`)
and what every command shares, plugins' commands included, is :mod:`hermes.facekit.terminal`."""
