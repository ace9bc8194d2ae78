"""The packaged tokenizer set up to give sentence-transformers' ids, and the arrays the
exported graph takes. Needs only the ``tokenizers`` package."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


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
    from tokenizers import Tokenizer  # here, not at module level: loads only to embed

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
