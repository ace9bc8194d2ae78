"""The default model (all-MiniLM-L6-v2) through ONNX Runtime: a cold path that does not wait
for torch.

- :mod:`.artifact` — the ONNX file: made once from the packaged weights with torch, cached in
  the data directory under a checksum of those weights.
- :mod:`.tokenizer` — the packaged tokenizer set up to give sentence-transformers' ids.
- :mod:`.runtime` — the embedder that runs it: ``tokenizers`` + ``onnxruntime``, no torch.
- :mod:`.choice` — which path a call takes (``[embed] backend`` / ``HERMES_EMBED_BACKEND``).
- :mod:`.cli` — ``hermes model prepare`` / ``hermes model status``.

sentence-transformers stays the reference and the fallback; both paths give the same
vectors (cosine >= 0.9999), so they share one model name and no item is re-embedded.
"""
