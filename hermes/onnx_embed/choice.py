"""Which path embeds a call: ONNX Runtime (cold in a fraction of a second) or
sentence-transformers (the reference; with native bf16 the faster one for large batches).

``HERMES_EMBED_BACKEND`` or ``[embed] backend`` in ``config.toml``: ``auto`` (default),
``onnx`` or ``torch``. ``auto`` takes sentence-transformers when it is already loaded in
the process, when ONNX Runtime is not installed or its model cannot be made, and, on a CPU
with native bf16, for a run that finishes sooner through it in total, the load of each path
not yet loaded in this process counted (:func:`run_cost`): in a fresh process from
:data:`BF16_BULK_TEXTS` texts (``HERMES_EMBED_TORCH_FROM`` or ``[embed] torch_from``), in a
process that holds ONNX Runtime loaded already (the refresh worker, a server) only from
more (:data:`ONNX_LOAD_CPU` more seconds to save). ONNX Runtime everywhere else. While such
a run waits for
sentence-transformers to finish loading (ahead of it, :func:`hermes.embed.prewarm`), its
batches go through ONNX Runtime when this process has it loaded already (a resident server
that ranked with it): the same vectors, and no seconds spent idle; a run never loads both.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading

import numpy as np

from .. import config
from ..embed import MiniLMEmbedder, use_bf16
from ..errors import HermesError
from .runtime import OnnxMiniLMEmbedder

log = logging.getLogger(__name__)

BACKENDS = ("auto", "onnx", "torch")
# Break-even of "import and load torch (~8.5 CPU s), then bf16 at ~2x ONNX Runtime's fp32 per
# text (AMX)" against "ONNX Runtime now (~1.7 CPU s beyond the texts)", for abstract-length
# texts on 2 cores: 257 texts in CPU time, 232 in wall time, and at 256 texts ONNX Runtime
# was the faster in all three rounds (benchmarks/results/onnx.md, round 4). Near the
# break-even ONNX Runtime is preferred: less than half the memory, first items sooner.
BF16_BULK_TEXTS = 300
#: CPU seconds to load each path in a process that has neither (imports, session or
#: weights, the first text): ONNX Runtime 0.7-1.1, torch and sentence-transformers 8.5-11.9
#: (benchmarks/results/ingest.md, 2 Dec 07:20; onnx.md)
ONNX_LOAD_CPU = 1.0
TORCH_LOAD_CPU = 10.0
#: ONNX Runtime's CPU seconds per abstract-length text (fp32; 0.074-0.079 in onnx.md).
#: torch's, on a CPU with native bf16, is what makes a fresh process's break-even
#: ``torch_from`` texts: (TORCH_LOAD_CPU - ONNX_LOAD_CPU) / torch_from less.
ONNX_PER_TEXT_CPU = 0.075


def run_cost(path: str, n_texts: int, *, loaded: bool, torch_from: int = BF16_BULK_TEXTS) -> float:
    """Estimated CPU seconds for ``path`` (``"onnx"`` / ``"torch"`` with native bf16) to
    embed ``n_texts`` texts, its load counted unless ``loaded`` in this process already."""
    saved = (TORCH_LOAD_CPU - ONNX_LOAD_CPU) / torch_from  # torch's saving per text
    if path == "onnx":
        return (0.0 if loaded else ONNX_LOAD_CPU) + n_texts * ONNX_PER_TEXT_CPU
    return (0.0 if loaded else TORCH_LOAD_CPU) + n_texts * (ONNX_PER_TEXT_CPU - saved)


def backend_setting() -> str:
    """``HERMES_EMBED_BACKEND``, then ``[embed] backend`` in config.toml, then ``auto``."""
    value = os.environ.get("HERMES_EMBED_BACKEND")
    if value is None:
        value = config.settings().embed_backend
    value = str(value).strip().lower()
    if value not in BACKENDS:
        raise HermesError(
            f"unknown embedding backend {value!r} (HERMES_EMBED_BACKEND or "
            f"[embed] backend in config.toml); use one of: {', '.join(BACKENDS)}"
        )
    return value


def torch_from_setting() -> int:
    """``HERMES_EMBED_TORCH_FROM``, then ``[embed] torch_from`` in config.toml, then
    :data:`BF16_BULK_TEXTS`: the size of a run from which ``auto`` loads torch (bf16 CPUs)."""
    value = os.environ.get("HERMES_EMBED_TORCH_FROM")
    if value is None:
        value = config.settings().embed_torch_from or BF16_BULK_TEXTS
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if number < 1:
        raise HermesError(
            f"[embed] torch_from (or HERMES_EMBED_TORCH_FROM) must be a whole number of texts, 1 or more; got {value!r}"
        )
    return number


def onnx_installed() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


class DefaultEmbedder:
    """all-MiniLM-L6-v2 through whichever path suits the call; both give the same vectors."""

    name = MiniLMEmbedder.name
    dimension = MiniLMEmbedder.dimension
    english_only = MiniLMEmbedder.english_only

    def __init__(self, backend: str | None = None):
        self.reference = MiniLMEmbedder()
        self.onnx = OnnxMiniLMEmbedder()
        self._backend = backend
        self._torch_from: int | None = None
        self._onnx_error: str | None = None
        self._run: tuple[str, int] | None = None  # (path, texts left) of an announced run
        self._lock = threading.Lock()

    def backend(self) -> str:
        if self._backend is None:
            self._backend = backend_setting()
        return self._backend

    def torch_from(self) -> int:
        """How many texts a run needs for ``auto`` to load torch (where bf16 is native)."""
        if self._torch_from is None:
            self._torch_from = torch_from_setting()
        return self._torch_from

    def expect(self, n_texts: int) -> str | None:
        """The caller is about to embed ``n_texts`` texts in several calls (an ingest run):
        choose once for the whole run; returns the path chosen (None: nothing to embed)."""
        with self._lock:
            self._run = (self.choose(n_texts), n_texts) if n_texts > 0 else None
            return self._run[0] if self._run else None

    def choose(self, n_texts: int) -> str:
        """``"onnx"`` or ``"torch"`` for ``n_texts`` texts: with ``auto``, the one that
        finishes them sooner in total, counting the load of a path not loaded yet (torch
        only where bf16 is native: elsewhere it is never the faster)."""
        setting = self.backend()
        if setting != "auto":
            return setting
        if self.reference._model is not None or self._onnx_error or not onnx_installed():
            return "torch"
        if use_bf16():
            torch_from = self.torch_from()
            onnx = run_cost("onnx", n_texts, loaded=self._onnx_paid(), torch_from=torch_from)
            if run_cost("torch", n_texts, loaded=False, torch_from=torch_from) <= onnx + 1e-9:
                return "torch"
        return "onnx"

    def _onnx_paid(self) -> bool:
        """Whether ONNX Runtime's load is paid in this process: loaded, or loading now (an
        ingest's first feed announced a small run and :func:`hermes.embed.prewarm` started
        it; loading torch as well for the feeds after it put both paths in one run)."""
        if getattr(self.onnx, "loaded", False):
            return True
        lock = getattr(self.onnx, "_lock", None)
        return bool(lock is not None and lock.locked())

    def load(self) -> None:
        """Load the model the next call would use, ahead of it — the announced run's path
        (:meth:`expect`), else a small call's: :func:`hermes.embed.prewarm` overlaps this
        with an ingest's downloads, and loading the other path would be wasted seconds."""
        with self._lock:
            path = self._run[0] if self._run else self.choose(1)
        if path == "onnx":
            try:
                self.onnx.load()
                return
            except Exception:  # noqa: BLE001 — embed() reports it and falls back
                return
        self.reference.load()

    def reference_loading(self) -> bool:
        """Whether another thread is loading sentence-transformers right now and ONNX
        Runtime, already loaded in this process, can embed at once. Only then: loading ONNX
        Runtime for the seconds torch takes to load put both model paths in one ingest
        (issue 36: a first ingest loads one), and its batches competed with torch's imports
        for the same cores."""
        if not getattr(self.reference, "loading", False) or not onnx_installed():
            return False
        return bool(getattr(self.onnx, "loaded", False))

    def token_counts(self, texts: list[str]) -> list[int]:
        """Each text's length in tokens (both paths give the same ids; the ``tokenizers``
        package counts them without loading either model)."""
        return self.onnx.token_counts(texts)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._call("embed", texts)

    def embed_tokens(self, texts: list[str]):
        """:meth:`embed` plus the token vectors of the same pass (for the keyphrase tagger),
        through the same path."""
        return self._call("embed_tokens", texts)

    def _call(self, method: str, texts: list[str]):
        with self._lock:
            if self._run:
                path, left = self._run
                self._run = (path, left - len(texts)) if left > len(texts) else None
            else:
                path = self.choose(len(texts))
            if self._onnx_error and self.backend() == "auto":
                path = "torch"
            elif path == "torch" and self.backend() == "auto" and self.reference_loading():
                # sentence-transformers is still loading (seconds of imports, started ahead
                # by prewarm): ONNX Runtime embeds this batch meanwhile rather than waiting.
                path = "onnx"
        if path == "torch":
            return getattr(self.reference, method)(texts)
        try:
            return getattr(self.onnx, method)(texts)
        except Exception as exc:  # the reference path is the fallback
            if self.backend() == "onnx":
                raise HermesError(
                    f"the ONNX Runtime embedder failed ({type(exc).__name__}: {exc}); "
                    "`hermes model prepare --force` remakes its model, or set "
                    '[embed] backend = "torch"'
                ) from exc
            self._onnx_error = f"{type(exc).__name__}: {exc}"
            log.warning("hermes: ONNX Runtime path unavailable (%s); using sentence-transformers", self._onnx_error)
            return getattr(self.reference, method)(texts)
