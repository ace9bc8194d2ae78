"""``python -m hermes.cli``: the ``hermes`` command without its console script."""

from .app import main

main()
