"""``python -m hermes``: the same command line as ``hermes``."""

from hermes.cli import main

main()
