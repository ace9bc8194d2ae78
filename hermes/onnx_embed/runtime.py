"""all-MiniLM-L6-v2 through ONNX Runtime: the ``tokenizers`` package for the ids,
``onnxruntime`` for the network, pooling inside the exported graph. Never imports torch."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from ..embed import MiniLMEmbedder


def offline_env() -> None:
    """Never reach for a model hub; keep libraries quiet (stdout may be the MCP stream)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def max_seq_length(weights: Path) -> int:
    """sentence-transformers' cut-off for this model (256), from its own config."""
    config = json.loads((weights / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config["max_seq_length"])


def load_tokenizer(weights: Path):
    """The packaged fast tokenizer, set up to give sentence-transformers' ids.

    The packaged ``tokenizer.json`` pads every text to 128 tokens and cuts there;
    sentence-transformers pads to the longest text of a batch and cuts at its
    ``max_seq_length`` (256). Padding is done per batch in :func:`batch_arrays`.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(weights / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_seq_length(weights))
    return tokenizer


def batch_arrays(encodings) -> dict[str, np.ndarray]:
    """Right-padded int64 ``input_ids`` / ``attention_mask`` / ``token_type_ids``."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, enc in enumerate(encodings):
        ids[row, : len(enc.ids)] = enc.ids
        mask[row, : len(enc.ids)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


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
            from . import artifact

            path = self.model_path or artifact.prepare()
            import onnxruntime as ort

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
