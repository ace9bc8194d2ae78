"""The labelled arXiv papers as hermes archives without categories, for the topic benchmarks.

Each paper's text is what an uncategorised listing gives hermes (title and abstract); its
vector comes from the real all-MiniLM-L6-v2 and its keyphrase proposals from the built-in
tagger, both through the disk caches of benchmarks/ (embed_cache, keyphrase_cache), so a
second run costs no model pass. An archive is written straight into a fresh database: one
feed, every paper published within the last day, keyphrases kept by the core's own rule
(``hermes.ingest.tagging.apply_proposals``) over that archive's proposals.

    .venv/bin/python benchmarks/topics_data.py      # fill the caches (minutes, once)
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from quality_data import DATA  # noqa: E402


def load_papers() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def item_of(k: int, paper: dict) -> dict:
    """What a tagger sees of a paper (hermes.ingest.tagging.item_dict's shape), id ``k + 1``."""
    return {
        "id": k + 1,
        "title": " ".join(paper["title"].split()),
        "summary": " ".join(paper["abstract"].split()),
        "url": f"http://arxiv.org/abs/{paper['arxiv_id']}",
        "tags": [],
        "authors": [],
        "content_type": "paper",
        "feed_id": 1,
    }


def vectors_and_proposals(papers: list[dict]):
    """(embedding per paper, keyphrase proposals per paper), from the caches."""
    from embed_cache import CachedMiniLM
    from keyphrase_cache import cached_proposals

    from hermes.embed import MiniLMEmbedder
    from hermes.ingest.text import embedding_text

    items = [item_of(k, p) for k, p in enumerate(papers)]
    cache = CachedMiniLM()
    vectors = cache.embed([embedding_text(i["title"], i["summary"]) for i in items])
    cache.save()
    proposals = cached_proposals(items, MiniLMEmbedder())
    return vectors, [proposals[i["id"]] for i in items]


def build_archive(db, papers: list[dict], vectors, proposals, *, feed: str = "arXiv listing") -> list[int]:
    """Write ``papers`` into ``db`` as one uncategorised feed; returns their item ids in order."""
    from hermes.embed import MiniLMEmbedder, to_blob
    from hermes.ingest.tagging import apply_proposals
    from hermes.storage.transactions import write_transaction

    now = datetime.now(UTC)
    with write_transaction(db):
        db.execute(
            "INSERT OR IGNORE INTO feeds (url, title) VALUES (?, ?)",
            [f"https://export.arxiv.org/{feed.replace(' ', '-')}", feed],
        )
        feed_id = db.execute("SELECT id FROM feeds WHERE title = ?", [feed]).fetchone()[0]
        ids = []
        for k, paper in enumerate(papers):
            item = item_of(k, paper)
            when = (now - timedelta(minutes=k % 600)).isoformat(timespec="seconds")
            cur = db.execute(
                "INSERT INTO items (feed_id, guid, url, title, summary, published, tags, "
                "content_type, embedding, embedding_model, embed_seq) "
                "VALUES (?, ?, ?, ?, ?, ?, '[]', 'paper', ?, ?, ?)",
                [
                    feed_id,
                    paper["arxiv_id"],
                    item["url"],
                    item["title"],
                    item["summary"],
                    when,
                    to_blob(vectors[k]),
                    MiniLMEmbedder.name,
                    k + 1,
                ],
            )
            ids.append(cur.lastrowid)
        apply_proposals(db, {i: proposals[k] for k, i in enumerate(ids)}, fresh=set(ids))
    return ids


if __name__ == "__main__":
    papers = load_papers()
    vectors, proposals = vectors_and_proposals(papers)
    print(f"{len(papers)} papers: vectors {vectors.shape}, {sum(len(p) for p in proposals)} proposals")
