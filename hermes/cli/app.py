"""The ``hermes`` command's entry point (``hermes.cli.app:main``, the console script).

``hermes --version`` is answered here, before typer or anything else loads (issue 36: typer
alone costs three times a bare interpreter's start); every other command line goes to the
typer app, :mod:`.root`, imported then.
"""

from __future__ import annotations

import gc
import sys

from hermes import __version__

#: allocations between two young-generation collections in a ``hermes`` process
GC_THRESHOLD = 50_000


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # what `--version` prints through typer (root._version)
        sys.stdout.write(f"hermes {__version__}\n")
        return
    # A command's start-up makes hundreds of thousands of objects that live as long as the
    # process (modules, classes, models) and few cycles: at the default threshold (700) the
    # collector ran ~130 times scanning them, 10% of `hermes feed`'s CPU (issue 36). A
    # cycle is still collected, after 50,000 allocations instead of 700.
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
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
