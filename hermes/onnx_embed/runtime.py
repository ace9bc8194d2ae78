"""all-MiniLM-L6-v2 through ONNX Runtime: the ``tokenizers`` package for the ids,
``onnxruntime`` for the network, pooling inside the exported graph. Never imports torch."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from ..embed import MiniLMEmbedder
from ..status import step
from . import artifact
from .tokenizer import batch_arrays, load_tokenizer, offline_env


class OnnxMiniLMEmbedder:
    """The same vectors as :class:`hermes.embed.MiniLMEmbedder` (same name, so stored
    embeddings stay valid), from the exported file (:func:`.artifact.prepare` makes it)."""

    name = MiniLMEmbedder.name
    dimension = MiniLMEmbedder.dimension

    def __init__(self, model_path: Path | None = None, weights: Path | None = None,
                 batch_size: int = 64):
        self.model_path = model_path
        self.weights = weights
        self.batch_size = batch_size
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            offline_env()
            with step("loading the embedding model (ONNX Runtime, once per process)"):
                path = self.model_path or artifact.prepare()
                import onnxruntime as ort  # here, not at module level: it loads only to embed

                options = ort.SessionOptions()
                options.log_severity_level = 3  # errors only: its warnings are not the user's to fix
                self._tokenizer = load_tokenizer(self.weights or artifact.weights_dir())
                self._session = ort.InferenceSession(str(path), options,
                                                     providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        self.load()
        # sentence-transformers strips each text, sorts by length and pads per batch; sorting
        # keeps the padding (wasted work) small.
        encodings = self._tokenizer.encode_batch([str(t).strip() for t in texts])
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            feeds = batch_arrays([encodings[r] for r in rows])
            out[rows] = self._session.run(None, feeds)[0]
        return out
