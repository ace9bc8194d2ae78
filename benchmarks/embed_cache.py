"""A disk cache in front of the real MiniLM embedder, for the benchmarks.

The 2,000 arXiv abstracts take minutes to embed on two cores; the vectors do not change,
so they are kept in ``benchmarks/.cache/`` (gitignored) keyed by sha256(model, text). The
cache answers with exactly what the model returned, so hermes still ranks with the real
model's vectors; texts not in the cache go to the model.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from hermes.embed import MiniLMEmbedder

CACHE_DIR = Path(__file__).parent / ".cache"


class CachedMiniLM:
    name = MiniLMEmbedder.name
    dimension = MiniLMEmbedder.dimension

    def __init__(self, path: Path = CACHE_DIR / "minilm.npz"):
        self.path = path
        self.model = MiniLMEmbedder()
        self.calls = 0  # texts that reached the model
        self._vecs: dict[str, np.ndarray] = {}
        if path.exists():
            data = np.load(path)
            self._vecs = dict(zip(data["keys"].tolist(), data["vecs"]))
        self._dirty = False

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\0{text}".encode()).hexdigest()

    def embed(self, texts: list[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts) if k not in self._vecs}.items())
        if missing:
            vecs = self.model.embed([t for _, t in missing])
            self.calls += len(missing)
            self._vecs.update({k: v for (k, _), v in zip(missing, vecs)})
            self._dirty = True
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = self._vecs[key]
        return out

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._vecs)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vecs=np.stack([self._vecs[k] for k in keys]))
        tmp.replace(self.path)
        self._dirty = False


def serve_from_cache(embedder: CachedMiniLM, prefix: str):
    """Make ``embedder`` hermes's embedder (a plugin answering ``hermes_embedder``) and
    point ``HERMES_HOME`` at a new temporary folder; returns that folder (keep a reference:
    it is deleted with the object)."""
    import os
    import tempfile

    from hermes.hookspecs import hookimpl
    from hermes.plugins import get_plugin_manager

    class BenchEmbedder:  # the real model behind the disk cache
        @hookimpl
        def hermes_embedder(self):
            return embedder

    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    os.environ["HERMES_HOME"] = tmp.name
    get_plugin_manager().register(BenchEmbedder(), name="bench_embedder")
    return tmp
