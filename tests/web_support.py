"""Helpers for the web UI tests: a seeded database, a test client, and form tokens."""

from __future__ import annotations

import re

ITEMS = [
    {
        "title": "Sparse autoencoders find interpretable features in language models",
        "summary": "We train sparse dictionaries on transformer activations and find monosemantic "
        "features that explain model behaviour on held-out prompts.",
        "tags": ["interpretability", "language models", "sparse coding"],
        "days_ago": 0.2,
        "url": "https://arxiv.org/abs/2601.00001",
        "content_type": "paper",
    },
    {
        "title": "Scaling laws for mixture-of-experts language models",
        "summary": "Loss follows a power law in active parameters and the number of experts.",
        "tags": ["language models", "scaling laws"],
        "days_ago": 0.5,
        "url": "https://arxiv.org/abs/2601.00002",
        "content_type": "paper",
    },
    {
        "title": "Graph neural networks for molecular property prediction",
        "summary": "Message passing over molecular graphs with equivariant layers.",
        "tags": ["graph neural networks", "chemistry"],
        "days_ago": 1.0,
        "url": "https://arxiv.org/abs/2601.00003",
        "content_type": "paper",
    },
    {
        "title": "Equivariant message passing for crystal structures",
        "summary": "An E(3)-equivariant graph network predicts formation energies of crystals.",
        "tags": ["graph neural networks", "materials"],
        "days_ago": 1.5,
        "url": "https://arxiv.org/abs/2601.00004",
        "content_type": "paper",
    },
    {
        "title": "Surface codes below threshold on superconducting qubits",
        "summary": "Logical error rates fall as the code distance grows from 3 to 7.",
        "tags": ["quantum error correction", "qubits"],
        "days_ago": 2.0,
        "url": "https://arxiv.org/abs/2601.00005",
        "content_type": "paper",
    },
    {
        "title": "Decoding quantum LDPC codes in real time",
        "summary": "A belief-propagation decoder on FPGAs keeps up with the syndrome rate.",
        "tags": ["quantum error correction", "decoding"],
        "days_ago": 2.5,
        "url": "https://arxiv.org/abs/2601.00006",
        "content_type": "paper",
    },
    {
        "title": "Interpretability of attention heads in small transformers",
        "summary": "Induction heads form early in training and explain in-context copying.",
        "tags": ["interpretability", "language models"],
        "days_ago": 3.0,
        "url": "https://example.org/blog/attention-heads",
        "content_type": "article",
    },
]

INTERESTS = (
    "Mechanistic interpretability of language models, sparse autoencoders, "
    "scaling laws and how transformers learn in context."
)

TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def seed(db, add_items, *, persona: str = "ada", interests: str = INTERESTS) -> list[int]:
    from hermes.storage.records import create_user

    create_user(db, persona, interests)
    ids = add_items(ITEMS[:6], feed_url="https://export.arxiv.org/rss/cs.LG", feed_title="arXiv cs.LG")
    return ids + add_items(ITEMS[6:], feed_url="https://example.org/blog/feed.xml", feed_title="Circuits blog")


def client(db_path, **kwargs):
    from starlette.testclient import TestClient

    from hermes.web.app import create_app

    return TestClient(
        create_app(str(db_path), secret=b"test-secret-" + b"x" * 40, **kwargs), raise_server_exceptions=True
    )


def token(client, path: str = "/") -> str:
    """A valid CSRF token for ``client``'s session (read from a page's form)."""
    page = client.get(path)
    found = TOKEN_RE.search(page.text)
    assert found, f"no csrf token on {path}"
    return found.group(1)


def clicks(db) -> list[tuple]:
    return db.execute("SELECT user_id, item_id, label, source FROM clicks ORDER BY id").fetchall()
