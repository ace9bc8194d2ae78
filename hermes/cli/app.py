"""The ``hermes`` command's entry point (``hermes.cli.app:main``, the console script).

``hermes --version`` is answered here, before typer or anything else loads (issue 36: typer
alone costs three times a bare interpreter's start); every other command line goes to the
typer app, :mod:`.root`, imported then.
"""

from __future__ import annotations

import sys

from hermes import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # what `--version` prints through typer (root._version)
        sys.stdout.write(f"hermes {__version__}\n")
        return
    # Here, not at the top: typer, the settings and the commands load for a command only.
    from .root import main as run

    run()


def build_app():
    """The typer app (:func:`hermes.cli.root.build_app`)."""
    # Here, not at the top: typer and the commands load when the app is built, not for --version.
    from .root import build_app as build

    return build()


if __name__ == "__main__":
    main()
