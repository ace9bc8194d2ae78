"""A disk cache of the built-in tagger's proposals, for the benchmarks.

Proposals need the model's token vectors, one forward pass per text: minutes for the 2,000
arXiv abstracts on two cores. They are kept in ``benchmarks/.cache/keyphrases.json`` keyed
by sha256(model, tagger settings, text); what the cache returns is exactly what the tagger
returned, and the core's recurrence rule is applied afresh on every run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hermes.builtins import default_keyphrases as kp

CACHE = Path(__file__).parent / ".cache" / "keyphrases.json"


def _settings() -> str:
    return f"{kp.VERSION}:{kp.PROPOSALS}:{kp.DIVERSITY_LAMBDA}:{kp.MAX_BEHIND}"


def cached_proposals(items: list[dict], model, batch: int = 32) -> dict[int, dict[str, float]]:
    """``{item id: {tag: score}}`` for ``items`` (dicts of hermes.ingest.tagging.item_dict)."""
    from hermes.ingest.tagging import propose_for

    store = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    key = lambda item: hashlib.sha256(
        f"{model.name}\0{_settings()}\0{item['title']}\0{item['summary']}".encode()
    ).hexdigest()
    missing = [i for i in items if key(i) not in store]
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        for item, (_, tags) in zip(chunk, propose_for(model, chunk).items()):
            store[key(item)] = tags
        if start // batch % 10 == 9:
            _save(store)
    if missing:
        _save(store)
    return {int(i["id"]): store[key(i)] for i in items}


def _save(store: dict) -> None:
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    tmp = CACHE.with_suffix(".tmp")
    tmp.write_text(json.dumps(store))
    tmp.replace(CACHE)
