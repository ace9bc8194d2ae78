"""An item without feed categories counts the category whose items it is closest to
(hermes.ranking.categories): a trial saw every uncategorised item sink below the
categorised ones once the persona had liked a few categorised papers."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.contract import CandidateQuery
from hermes.embed import get_embedder
from hermes.ranking import categories
from hermes.ranking.explain import explain
from hermes.ranking.matrix import get_matrix
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user

QUBITS = "qubit entanglement decoherence superconducting qubits gate fidelity"
GALAXIES = "galaxy cluster redshift dark matter halo stellar mass galaxies"


@pytest.fixture
def mixed(db, add_items):
    """An arXiv-like feed whose items carry categories, and a blog whose items carry none."""
    # each paper also has words of its own, so a category's items are alike, not copies
    own = [" ".join(f"w{k}x{j}" for j in range(4)) for k in range(12)]
    listed = add_items(
        [{"title": f"Qubit paper {k}", "summary": f"{QUBITS} {own[k]}", "tags": ["quant-ph"]} for k in range(6)]
        + [
            {"title": f"Galaxy paper {k}", "summary": f"{GALAXIES} {own[6 + k]}", "tags": ["astro-ph"]}
            for k in range(6)
        ],
        feed_url="https://arxiv.example/rss",
        feed_title="arXiv",
    )
    blog = add_items(
        [
            {"title": "Qubits on my bench", "summary": f"{QUBITS} notes"},
            {"title": "Galaxies seen tonight", "summary": f"{GALAXIES} notes"},
            {"title": "Sourdough", "summary": "flour water salt starter crumb oven loaf bread"},
        ],
        feed_url="https://blog.example/feed",
        feed_title="A blog",
    )
    return listed, blog


def matrix_of(db):
    embedder = get_embedder()
    return get_matrix(db, embedder.name, embedder.dimension)


def test_an_item_without_categories_gets_the_nearest_one_and_an_unlike_item_none(db, mixed):
    listed, (qubits, galaxies, sourdough) = mixed
    matrix = matrix_of(db)
    found = categories.inferred(matrix)
    names = {c: k for k, c in matrix.key_index.items()}

    def category(item_id):
        hit = found.of_row(int(matrix.lookup(np.array([item_id]))[0]))
        return None if hit is None else names[hit[0]]

    assert category(qubits) == "tag:quant-ph" and category(galaxies) == "tag:astro-ph"
    assert category(sourdough) is None  # unlike every category's own items
    assert all(category(i) is None for i in listed)  # an item's own categories stand


def test_an_item_far_from_every_category_gets_none_however_broad_the_category(db, mixed, monkeypatch):
    """A trial's German news item took "hep-th" at a cosine of 0.19: half a broad category's
    median let it through. An inferred category also needs MIN_SIMILARITY."""
    sourdough = mixed[1][2]

    def category_of_sourdough():
        matrix = matrix_of(db)
        row = int(matrix.lookup(np.array([sourdough]))[0])
        eligible, _ = categories._categories(matrix)
        found, _ = categories._infer(matrix, eligible, np.array([row]))
        return found.of_row(row)

    monkeypatch.setattr(categories, "FLOOR_SHARE", 0.0)  # as a broad category's half-median
    assert category_of_sourdough() is None
    monkeypatch.setattr(categories, "MIN_SIMILARITY", -1.0)
    hit = category_of_sourdough()
    assert hit is not None and hit[1] < 0.25  # the floor is what kept it out


def test_a_category_with_too_few_items_is_not_inferred(db, add_items):
    add_items(
        [
            {"title": f"Qubit paper {k}", "summary": QUBITS, "tags": ["quant-ph"]}
            for k in range(categories.MIN_ITEMS - 1)
        ]
    )
    add_items([{"title": "Qubits on my bench", "summary": QUBITS}], feed_url="https://blog.example/feed")
    assert not len(categories.inferred(matrix_of(db)).rows)


def test_liking_categorised_papers_lifts_the_uncategorised_item_on_the_same_subject(db, mixed, monkeypatch):
    listed, (qubits, galaxies, _) = mixed
    user = create_user(db, "ana", "physics")
    for item in listed[:2]:  # two quant-ph papers liked
        record_click(db, user["id"], item, True, "ui")
    record_click(db, user["id"], listed[6], False, "ui")  # an astro-ph one disliked

    def preference(item_id):
        ranking = rank(db, user, CandidateQuery(since_days=None))
        position = list(ranking.item_ids).index(item_id)
        return ranking.raw["preference"][position]

    stats = {"quant-ph": (2 - 0) / (2 + 2.0), "astro-ph": (0 - 1) / (1 + 2.0)}
    on_blog = preference(qubits) - preference(galaxies)
    # the blog's own source key is the same for both: the difference is the categories'
    assert on_blog == pytest.approx(categories.WEIGHT * (stats["quant-ph"] - stats["astro-ph"]))
    monkeypatch.setattr(categories, "WEIGHT", 0.0)
    assert preference(qubits) == pytest.approx(preference(galaxies))  # blind without it


def test_the_explanation_says_the_category_is_inferred(db, mixed, no_bar):
    listed, (qubits, galaxies, sourdough) = mixed
    user = create_user(db, "ana", "physics")
    for item in listed[:2]:
        record_click(db, user["id"], item, True, "ui")
    record_click(db, user["id"], listed[6], False, "ui")
    why = explain(db, user, qubits, since_days=None)
    [tag] = [t for t in why["matched_tags"] if t["kind"] == "tag"]
    assert tag["inferred"] and tag["label"] == "quant-ph" and tag["likes"] == 2
    assert "has no tags, but is like items with tags you liked: quant-ph (2 likes)" in why["phrases"]
    away = explain(db, user, galaxies, since_days=None)["phrases"]
    assert "has no tags, but is like items with tags you disliked: astro-ph (1 dislike)" in away
    plain = explain(db, user, sourdough, since_days=None)
    assert not [t for t in plain["matched_tags"] if t["kind"] == "tag"]
    own = explain(db, user, listed[3], since_days=None)
    assert "has tags you liked: quant-ph (2 likes)" in own["phrases"]  # not called inferred


def test_the_cli_and_the_web_say_the_category_is_inferred(db, db_path, mixed, no_bar):
    from typer.testing import CliRunner
    from web_support import client

    from hermes.cli.app import build_app

    listed, (qubits, _, _) = mixed
    user = create_user(db, "ana", "physics")
    for item in listed[:2]:
        record_click(db, user["id"], item, True, "ui")
    out = CliRunner().invoke(build_app(), ["explain", "ana", str(qubits), "--all", "--db", str(db_path)])
    assert "quant-ph (+0.50, inferred: no tags of its own)" in out.output, out.output
    with client(db_path) as web:
        page = web.get(f"/explain?user=ana&days=all&item_id={qubits}").text
    assert "inferred: the item has no tags; its text is closest to items with this one" in page


def test_the_next_process_reads_the_inferred_categories_from_disk(db, mixed, monkeypatch):
    from hermes.ranking import column_store
    from hermes.ranking import matrix as matrix_module

    monkeypatch.setattr(column_store, "MIN_ROWS", 0)  # the disk, as at a large archive
    first = categories.inferred(matrix_of(db))
    column_store.flush()
    matrix_module.clear_cache()  # as a fresh process: a matrix read anew

    def never(*args):
        raise AssertionError("compared again instead of read")

    monkeypatch.setattr(categories, "_infer", never)
    again = categories.inferred(matrix_of(db))
    assert again.rows.tolist() == first.rows.tolist() and len(first.rows) == 2
    assert again.columns.tolist() == first.columns.tolist()
    assert np.allclose(again.similarity, first.similarity)


def test_a_blog_post_with_keyphrases_still_names_its_inferred_category(db, mixed, no_bar):
    """A trial: every blog post the tagger had given keyphrases read as categorised, so its
    explanation named no category although the inferred one lifted it most."""
    listed, (qubits, _, _) = mixed
    db.execute(
        "UPDATE items SET tags = ?, keyphrases = ? WHERE id = ?",
        ['["superconducting qubits"]', '["superconducting qubits"]', qubits],
    )
    user = create_user(db, "ana", "physics")
    for item in listed[:2]:
        record_click(db, user["id"], item, True, "ui")
    why = explain(db, user, qubits, since_days=None)
    assert "has no tags, but is like items with tags you liked: quant-ph (2 likes)" in why["phrases"]
