"""What the model embeds of an item: the title and the summary, without an aggregator's
"label: link" boilerplate (the stored summary keeps it)."""

from __future__ import annotations

import pytest

from hermes.ingest.text import embedding_text, plain_text

HN = (
    '<p>Article URL: <a href="https://example.com/rust">https://example.com/rust</a></p>\n'
    '<p>Comments URL: <a href="https://news.ycombinator.com/item?id=41">'
    "https://news.ycombinator.com/item?id=41</a></p>\n<p>Points: 12</p>\n<p># Comments: 3</p>"
)


def test_a_hacker_news_item_is_embedded_by_its_title_alone():
    summary = plain_text(HN)  # as ingest stores it: one line
    assert "Comments URL" in summary
    assert embedding_text("A Rust compiler written in Rust", summary) == "A Rust compiler written in Rust"


def test_prose_is_embedded_as_written():
    text = "We study X. Results: 5 of 7 cases hold. See https://a.example/c for more."
    assert embedding_text("Paper", text) == f"Paper. {text}".rstrip(".")
    assert embedding_text("Title", "") == "Title"
    # a labelled link inside a sentence stays; a sentence that is only one goes
    assert embedding_text("T", "An abstract. Code: https://github.com/a/b.") == "T. An abstract"


@pytest.mark.slow
def test_the_boilerplate_no_longer_makes_unrelated_items_alike(real_embedder):
    """Measured with the real model: two unrelated Hacker News items were 0.32 alike with
    their boilerplate, 0.05 by their titles."""
    import numpy as np

    titles = ["A Rust compiler written in Rust", "The decline of the American mall"]
    texts = [embedding_text(t, plain_text(HN.replace("41", str(41 + k)))) for k, t in enumerate(titles)]
    a, b = real_embedder.embed(texts)
    assert float(np.dot(a, b)) < 0.2
