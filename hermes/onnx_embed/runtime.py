"""all-MiniLM-L6-v2 through ONNX Runtime: the ``tokenizers`` package for the ids,
``onnxruntime`` for the network, pooling inside the exported graph. Never imports torch."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from hermes.facekit.status import step

from ..contract import TokenVectors
from ..embed import MiniLMEmbedder
from . import artifact
from .tokenizer import batch_arrays, load_tokenizer, offline_env

#: padded tokens per model call (texts x the longest one's tokens): 16 abstracts cut at 256
#: tokens, up to 64 short texts. Batches of 64 long abstracts cost ~15% more CPU time than
#: batches of 16 (more padding, ~1 GB of attention scores per call, page faults for it);
#: benchmarks/results/onnx.md.
TOKENS_PER_CALL = 4096


def batches(lengths: list[int], max_texts: int, max_tokens: int = TOKENS_PER_CALL):
    """Row indices in calls: longest first, each call as many texts as fit ``max_tokens``
    padded to its longest (at least one, at most ``max_texts``)."""
    order = np.argsort([-n for n in lengths], kind="stable")
    start = 0
    while start < len(order):
        size = max(1, min(max_texts, max_tokens // max(1, lengths[order[start]])))
        yield order[start : start + size]
        start += size


class OnnxMiniLMEmbedder:
    """The same vectors as :class:`hermes.embed.MiniLMEmbedder` (same name, so stored
    embeddings stay valid), from the exported file (:func:`.artifact.prepare` makes it)."""

    name = MiniLMEmbedder.name
    dimension = MiniLMEmbedder.dimension
    english_only = MiniLMEmbedder.english_only

    def __init__(self, model_path: Path | None = None, weights: Path | None = None, batch_size: int = 64):
        self.model_path = model_path
        self.weights = weights
        self.batch_size = batch_size
        self._session = None
        self._tokenizer = None
        # The encodings :meth:`token_counts` made, by text: ingest counts a window of texts'
        # tokens to group them into batches, then embeds them, and tokenizing twice cost
        # ~0.15 CPU s per 256 abstracts. Replaced (not grown) by each count.
        self._counted: dict[str, object] = {}
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            offline_env()
            with step("loading the embedding model through ONNX Runtime (once per process)"):
                path = self.model_path or artifact.prepare()
                import onnxruntime as ort  # here, not at module level: it loads only to embed

                options = ort.SessionOptions()
                options.log_severity_level = 3  # errors only: its warnings are not the user's to fix
                # Idle worker threads sleep instead of spinning: between batches an ingest
                # runs Python (tagging, writes) and a spinning thread only takes the core
                # from it (fresh ingest of 256 abstracts: 21.3/23.8 CPU s against 21.5/26.2).
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self.tokenizer()
                self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def tokenizer(self):
        """The tokenizer alone (no session: cheap, and what :meth:`token_counts` needs)."""
        if self._tokenizer is None:
            offline_env()
            self._tokenizer = load_tokenizer(self.weights or artifact.weights_dir())
        return self._tokenizer

    def token_counts(self, texts: list[str]) -> list[int]:
        """How many tokens each text becomes (with [CLS] and [SEP], cut at the maximum
        length): the width a batch holding it is padded to."""
        stripped = [str(t).strip() for t in texts]
        encodings = self.tokenizer().encode_batch(stripped)
        self._counted = dict(zip(stripped, encodings, strict=True))
        return [len(e.ids) for e in encodings]

    def _encode(self, stripped: list[str]) -> list:
        """The encodings of ``stripped``, reusing those the last :meth:`token_counts` made."""
        counted = self._counted
        missing = list(dict.fromkeys(t for t in stripped if t not in counted))
        fresh = dict(zip(missing, self.tokenizer().encode_batch(missing), strict=True)) if missing else {}
        return [counted[t] if t in counted else fresh[t] for t in stripped]

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._run(texts, tokens=False)[0]

    def embed_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """:meth:`embed` plus each text's token vectors (the graph's second output) and
        their character spans in the text, from the same run."""
        return self._run(texts, tokens=True)

    def _run(self, texts: list[str], *, tokens: bool):
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        per_text: list[TokenVectors | None] = [None] * len(texts)
        if not texts:
            return out, []
        self.load()
        # sentence-transformers strips each text, sorts by length and pads per batch; sorting
        # keeps the padding (wasted work) small, and so does a cap on tokens per call.
        encodings = self._encode([str(t).strip() for t in texts])
        outputs = list(artifact.OUTPUTS if tokens else artifact.OUTPUTS[:1])
        for rows in batches([len(e.ids) for e in encodings], self.batch_size):
            feeds = batch_arrays([encodings[r] for r in rows])
            results = self._session.run(outputs, feeds)
            out[rows] = results[0]
            if tokens:
                for k, row in enumerate(rows.tolist()):
                    per_text[row] = _token_vectors(
                        results[1][k], encodings[row], len(str(texts[row])) - len(str(texts[row]).lstrip())
                    )
        return out, per_text


def _token_vectors(hidden: np.ndarray, encoding, shift: int) -> TokenVectors:
    """One text's token vectors without padding and special tokens ([CLS], [SEP]: empty
    spans), spans moved back to the caller's unstripped text."""
    spans = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
    real = spans[:, 1] > spans[:, 0]
    vectors = np.asarray(hidden[: len(spans)], dtype=np.float32)[real]
    return TokenVectors(vectors, spans[real] + shift)
