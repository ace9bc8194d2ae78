"""A reproducible archive of random-word items for ranking tests: every preference family
(tags, content types) populated, seeded so a test always ranks the same items."""

from __future__ import annotations

import numpy as np


def random_archive(add_items, words: tuple[str, ...], *, n: int, seed: int, length: int) -> list[int]:
    """Insert ``n`` items of ``length`` words drawn from ``words`` (1–3 of twelve tags, the
    three content types in turn) through the ``add_items`` fixture; return their ids."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        drawn = rng.choice(words, size=length)
        items.append(
            {
                "title": f"{' '.join(drawn[:3])} {i}",
                "summary": " ".join(drawn),
                "tags": [f"t{t}" for t in rng.choice(12, size=int(rng.integers(1, 4)), replace=False)],
                "content_type": ("paper", "article", "podcast")[i % 3],
            }
        )
    return add_items(items)
