"""``python -m hermes`` is the ``hermes`` command (the background refresh runs its ingest so)."""

from .cli import main

if __name__ == "__main__":
    main()
