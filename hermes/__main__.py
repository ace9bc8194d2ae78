"""``python -m hermes``: the same command line as ``hermes``."""

from hermes.cli.app import main

main()
