"""One BLAS thread for the ranking's small solves and its own threaded product.

A threaded BLAS on a busy two-core machine was measured at 400 ms for a 385×385 solve
that takes 2 ms on one thread, and :meth:`hermes.ranking.matrix.Matrix.product` runs its
own threads, each of which must not start more. ``threadpool_limits`` finds the loaded
BLAS libraries by scanning every shared library of the process, 0.6 ms each time — twice
per ranking after a click; the controller here scans once. numpy's BLAS is loaded with
numpy, before any ranking, so a scan made at the first ranking finds it.

OpenBLAS starts its own thread pool when numpy loads, and its workers spin before they
sleep: 0.15 CPU s of a start-up (numpy's import 0.24 CPU s instead of 0.09 on two cores).
A server that imports numpy before it can answer (``hermes serve``: sqlite-utils and the
plugins load it) loads it inside :func:`blas_pool_deferred`, on one BLAS thread, and starts
the pool OpenBLAS would have started at the first call that may use it
(:func:`start_blas_pool`): every product runs on as many threads as without the deferral.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import OpenBLASController, ThreadpoolController

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
            _release()
        _HELD += 1
    try:
        yield
    finally:
        with _LOCK:
            _HELD -= 1
            if _HELD == 0 and _LIMIT is not None:
                _LIMIT.restore_original_limits()
                _LIMIT = None
                _release()


def _release() -> None:
    """threadpoolctl lets one thread at a time set OpenBLAS's count and ignores every other
    thread's while that one lives: in a server whose first ranking ran on a worker thread that
    stays, every later limit (on other threads) was silently dropped. The lock above is what
    serialises the limits here."""
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear()


#: what OpenBLAS reads its thread count from when it loads (the first one set wins)
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_DEFERRED = False  # numpy was loaded on one BLAS thread: start_blas_pool starts the rest


@contextmanager
def blas_pool_deferred() -> Iterator[None]:
    """numpy loaded inside this block starts OpenBLAS on one thread (``OPENBLAS_NUM_THREADS=1``
    while it lasts: child processes started after it get the environment as it was), unless
    numpy is loaded already or the person set the thread count themselves; the pool is then
    started by :func:`start_blas_pool`."""
    global _DEFERRED
    if "numpy" in sys.modules or any(name in os.environ for name in BLAS_ENV):
        yield
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]
        _DEFERRED = _DEFERRED or "numpy" in sys.modules


def start_blas_pool() -> None:
    """Give OpenBLAS the threads it starts with when nothing limits it (the number of CPUs
    it may run on, as it counts them itself), if numpy was loaded under
    :func:`blas_pool_deferred`; else nothing. Call it before anything that may use BLAS."""
    global _DEFERRED
    if not _DEFERRED:
        return
    with _LOCK:
        if not _DEFERRED:
            return
        _DEFERRED = False
        # a scan of its own: one_blas_thread's is made at the first ranking, as without this
        for library in ThreadpoolController().select(internal_api="openblas").lib_controllers:
            library.set_num_threads(_processors(library))
        _release()  # not this thread's for good


def _processors(library) -> int:
    """The CPUs OpenBLAS counts for its pool when nothing limits it (it takes that many
    threads, up to its build's maximum, which its ``set_num_threads`` applies too): its own
    ``openblas_get_num_procs``, else the CPUs this process may run on."""
    count = getattr(library, "_get_symbol", lambda name: None)("openblas_get_num_procs")
    if count is not None:
        return int(count())
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
