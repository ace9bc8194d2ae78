"""One BLAS thread for the ranking's small solves and its own threaded product.

A threaded BLAS on a busy two-core machine was measured at 400 ms for a 385×385 solve
that takes 2 ms on one thread, and :meth:`hermes.ranking.matrix.Matrix.product` runs its
own threads, each of which must not start more. ``threadpool_limits`` finds the loaded
BLAS libraries by scanning every shared library of the process, 0.6 ms each time — twice
per ranking after a click; the controller here scans once. numpy's BLAS is loaded with
numpy, before any ranking, so a scan made at the first ranking finds it.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_LOCK = threading.Lock()
_CONTROLLER: ThreadpoolController | None = None


_HELD = 0  # threads inside one_blas_thread
_LIMIT = None


@contextmanager
def one_blas_thread():
    """A context manager: BLAS limited to one thread inside it, restored after. Threads may
    overlap (a ranking beside the exact scores computed after a click): the first in sets
    the limit and the last out restores it (two limiters restoring each other's saved
    settings out of order would leave the wrong one)."""
    global _CONTROLLER, _HELD, _LIMIT
    with _LOCK:
        if _CONTROLLER is None:
            _CONTROLLER = ThreadpoolController()
        if _HELD == 0:
            _LIMIT = _CONTROLLER.limit(limits=1, user_api="blas")
        _HELD += 1
    try:
        yield
    finally:
        with _LOCK:
            _HELD -= 1
            if _HELD == 0 and _LIMIT is not None:
                _LIMIT.restore_original_limits()
                _LIMIT = None
