"""The built-in scorers: preference from click 1, affinity from likes alone, the classifier
only with both classes, the clause-wise profile."""

from __future__ import annotations

import numpy as np
import pytest

from hermes.builtins import scorers
from hermes.contract import CandidateQuery
from hermes.ranking import interests, logistic
from hermes.ranking.interests import interest_clauses, interest_groups
from hermes.ranking.preferences import key_score, key_stats
from hermes.ranking.rank import rank, rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


def ranked_ids(db, user, **kw):
    return [r["id"] for r in rank_items(db, user, limit=50, **kw)]


def test_preference_is_active_from_the_first_click_and_smoothed(db, add_items):
    ids = add_items(
        [
            {"title": "first clicked", "tags": ["Birds"]},
            {"title": "plain words alpha", "tags": ["birds"]},
            {"title": "plain words alpha", "tags": ["fish"]},
        ]
    )
    user = create_user(db, "ann", "")
    record_click(db, user["id"], ids[0], True, "ui")
    stats = key_stats(db, user["id"])
    assert stats["tag:birds"] == {"likes": 1, "dislikes": 0, "score": pytest.approx(1 / 3)}
    assert key_score(1, 0) == pytest.approx(1 / 3) and key_score(10, 0) == pytest.approx(10 / 12)
    ranking = rank(db, user, CandidateQuery())
    assert ranking.components["preference"].active
    assert ranking.item_ids[0] == ids[1]  # the liked tag (case-folded) wins the tie


def test_a_key_on_every_item_does_not_dilute_the_tags(db, add_items):
    # Every item shares the feed and the type: those keys must not outweigh the tags.
    ids = add_items(
        [{"title": f"t{i}", "tags": ["a"]} for i in range(3)]
        + [{"title": "x", "tags": ["a"]}, {"title": "y", "tags": ["b"]}]
    )
    user = create_user(db, "ann", "")
    for i in ids[:3]:
        record_click(db, user["id"], i, True, "ui")
    assert ranked_ids(db, user) == [ids[3], ids[4]]


def test_classifier_is_inactive_until_both_classes_exist_and_never_fits_one(db, add_items, monkeypatch):
    fits = []
    real_fit = logistic.fit

    def spy(X, y, **kw):
        fits.append(np.asarray(y))
        return real_fit(X, y, **kw)

    monkeypatch.setattr(logistic, "fit", spy)
    ids = add_items([{"title": f"item {i} words"} for i in range(8)])
    user = create_user(db, "ann", "words")
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[1], True, "ui")
    clf = rank(db, user, CandidateQuery()).components["classifier"]
    assert not clf.active and "both a like and a dislike" in clf.detail["reason"]
    assert "2 likes only" in clf.detail["reason"] and fits == []

    other = create_user(db, "bob", "words")
    record_click(db, other["id"], ids[0], False, "ui")
    clf = rank(db, other, CandidateQuery()).components["classifier"]
    assert not clf.active and "dislike only" in clf.detail["reason"] and fits == []

    record_click(db, user["id"], ids[2], False, "ui")
    clf = rank(db, user, CandidateQuery()).components["classifier"]
    assert clf.active and clf.detail["active"] and "2 likes and 1 dislike" in clf.detail["reason"]
    assert len(fits) == 1 and set(fits[0].tolist()) == {0, 1}
    # the classifier's share grows with the clicks: n / (n + shrink)
    assert clf.weight == pytest.approx(3 / (3 + scorers.CLASSIFIER_SHRINK))


def test_no_clicks_means_profile_only(db, add_items):
    add_items([{"title": "a b c"}, {"title": "d e f"}])
    user = create_user(db, "ann", "a b")
    ranking = rank(db, user, CandidateQuery())
    assert ranking.blend_weight == 0.0 and ranking.n_clicks == 0
    assert ranking.components["classifier"].detail["reason"] == "no clicks yet"
    assert set(ranking.components) == {"profile", "classifier"}


def test_affinity_learns_from_likes_alone(db, add_items):
    ids = add_items(
        [
            {"title": "sourdough bread baking starter flour"},
            {"title": "bread baking with sourdough starter"},
            {"title": "graph neural network message passing"},
        ]
    )
    user = create_user(db, "ann", "graph neural networks")
    assert ranked_ids(db, user)[0] == ids[2]
    record_click(db, user["id"], ids[0], True, "ui")
    ranking = rank(db, user, CandidateQuery())
    assert ranking.components["affinity"].active and not ranking.components["classifier"].active
    affinity = dict(zip(ranking.item_ids.tolist(), ranking.raw["affinity"]))
    assert affinity[ids[1]] > affinity[ids[2]]


def test_interest_clauses_split_a_list_of_interests():
    text = "Galaxy evolution, AGN feedback and dark matter; also QCD.\nAI"
    assert interest_clauses(text) == ["Galaxy evolution", "AGN feedback and dark matter", "QCD", "AI"]
    assert interest_clauses("") == [] and interest_clauses("x, 42") == []
    assert interest_clauses("formation and evolution of galaxies") == ["formation and evolution of galaxies"]


def test_the_profile_scores_each_item_against_its_best_clause(db, add_items):
    ids = add_items(
        [
            {"title": "sourdough bread baking"},
            {"title": "graph neural networks"},
            {"title": "stellar spectra"},
        ]
    )
    user = create_user(db, "ann", "sourdough bread baking, graph neural networks")
    ranking = rank(db, user, CandidateQuery())
    assert set(ranking.item_ids[:2].tolist()) == {ids[0], ids[1]}
    assert ranking.components["profile"].detail["semantic"].shape == (3,)


def test_clauses_about_one_interest_are_grouped_and_different_interests_stay_apart():
    a, b, c = np.eye(3, dtype=np.float32)
    near = (a + 0.6 * b) / np.linalg.norm(a + 0.6 * b)  # cosine 0.51 with a
    groups = interest_groups(np.stack([a, near, c]))
    together = (a + near) / np.linalg.norm(a + near)
    assert np.allclose(groups[0], together) and np.allclose(groups[1], together)
    assert np.allclose(groups[2], c)  # a separate interest keeps its own vector
    assert interest_groups(np.zeros((0, 3))).shape == (0, 3)


def test_a_list_of_sub_topics_ranks_its_subject_above_a_neighbour_matching_one_clause(db, add_items, monkeypatch):
    # Three sub-topics of one subject; the last one ("convergence rates") is also a
    # neighbouring subject's. The item about the subject as a whole must rank above the
    # item that matches that one clause exactly.
    ids = add_items(
        [
            {"title": "convergence rates"},
            {"title": "sparse signal recovery by matrix completion"},
            {"title": "galaxy clusters in the infrared"},
        ]
    )
    text = "sparse signal recovery, sparse matrix completion, sparse convergence rates"
    user = create_user(db, "ann", text)
    assert ranked_ids(db, user)[:2] == [ids[1], ids[0]]
    # the best single clause alone (every clause its own interest) gets it wrong
    monkeypatch.setattr(interests, "SAME_INTEREST", 1.01)
    assert ranked_ids(db, user)[:2] == [ids[0], ids[1]]


def test_logistic_fit_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    for n in (12, 60, 500):  # the sample-span basis (n < d) and the plain primal (n > d)
        X = rng.standard_normal((n, 384))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        y = (rng.random(n) < 0.3).astype(int)
        y[:2] = [0, 1]
        w = np.where(np.arange(n) < n // 2, 1.0, 0.9)
        for C in (0.1, 1.0):
            coef, b = logistic.fit(X, y, C=C, sample_weight=w)
            ref = LogisticRegression(C=C, class_weight="balanced", max_iter=5000, tol=1e-10)
            ref.fit(X, y, sample_weight=w)
            assert np.allclose(coef, ref.coef_[0], atol=1e-4)
            assert b == pytest.approx(ref.intercept_[0], abs=1e-4)
    with pytest.raises(ValueError, match="both classes"):
        logistic.fit(X, np.ones(len(X)))


def test_the_classifiers_probability_in_one_array_has_the_same_bits():
    """scorers._sigmoid works in place in one float64 array (at a million candidates each
    temporary is 8 MB): the same bits as ``1 / (1 + exp(-x))`` written out, infinities too."""
    from hermes.builtins.scorers import _sigmoid

    decision = (np.random.default_rng(3).normal(size=(5000, 4)) * 6).astype(np.float32)
    decision[:3, 0] = [np.inf, -np.inf, 0.0]
    written_out = 1.0 / (1.0 + np.exp(-decision[:, 0].astype(np.float64)))
    got = _sigmoid(decision[:, 0])
    assert got.dtype == np.float64 and got.view(np.int64).tolist() == written_out.view(np.int64).tolist()
    assert decision[0, 0] == np.inf  # the decision values are not touched


def test_the_bar_judges_the_interest_figure_the_order_ranks_by():
    """A one-field trial: a paper ranked second (grouped interests 0.64) read "weak" because
    the bar judged its best single clause (0.50). The evidence is now the cosine to the best
    clause's group, the clause named is the group's clause nearest the item, and ``related``
    counts the others of that group."""
    from hermes.builtins.scorers import _profile_columns

    a, b, c = np.eye(3, dtype=np.float32)
    near = (a + 0.6 * b) / np.linalg.norm(a + 0.6 * b)  # one interest with a
    clauses = np.stack([a, near, c])
    groups, members = interest_groups(clauses), interests.interest_members(clauses)
    whole = (a + near + c) / np.linalg.norm(a + near + c)
    item = (a + 1.2 * near) / np.linalg.norm(a + 1.2 * near)  # between both, nearer ``near``
    weights = np.vstack([whole, groups, clauses])
    semantic, figure, clause, related = _profile_columns(item[None, :] @ weights.T, members)[0]
    assert figure == pytest.approx(float(item @ groups[0]), abs=1e-6) and figure == pytest.approx(semantic)
    assert figure > max(float(item @ a), float(item @ near))  # more than either clause alone
    assert int(clause) == 1 and int(related) == 1
    # a text of one clause: the whole text is the figure, no related clause
    one = _profile_columns((item[None, :] @ whole[:, None]), np.ones((1, 1), dtype=bool))[0]
    assert one[1] == pytest.approx(float(item @ whole)) and one[3] == 0


def test_the_reason_names_the_clauses_grouped_with_the_one_it_quotes():
    from hermes.ranking.explain_words import phrases_of

    interest = {"clause": "quantum error correction", "similarity": 0.64, "level": "good", "usual_here": False}
    evidence = {"liked": None, "classifier": None, "tags": [], "authors": [], "sources": [], "topics": []}
    alone = phrases_of({"evidence": {**evidence, "interest": interest}, "components": {}})
    assert alone == ["matches your interest “quantum error correction” (similarity 0.64)"]
    grouped = phrases_of({"evidence": {**evidence, "interest": {**interest, "related": 4}}, "components": {}})
    assert grouped == ["matches your interest “quantum error correction” and the 4 related to it (similarity 0.64)"]
    # every clause of the text in that one interest (one field's interests): "your interests"
    whole = {**interest, "related": 4, "whole": True}
    assert phrases_of({"evidence": {**evidence, "interest": whole}, "components": {}}) == [
        "matches your interests (nearest “quantum error correction”, similarity 0.64)"
    ]
    strong = {**whole, "level": "strong"}
    assert phrases_of({"evidence": {**evidence, "interest": strong}, "components": {}}) == [
        "matches your interests closely (nearest “quantum error correction”, similarity 0.64)"
    ]


def test_one_click_on_a_show_counts_once_not_per_family(db, db_path, add_items):
    """An MCP trial liked one podcast episode: its show is one feed, one author and one
    content type, and the like counted three times over (preference +1.33 on every episode,
    each above every paper). The keys the same clicks rated count once, on the narrowest."""
    from hermes.ranking.preferences import shared_evidence

    show = add_items(
        [{"title": f"episode {i}", "content_type": "podcast", "authors": ["Phase Space"]} for i in range(3)],
        feed_url="https://example.org/show.xml",
        feed_title="Phase Space",
    )
    other = add_items(
        [{"title": "another show", "content_type": "podcast", "authors": ["Other Cast"]}],
        feed_url="https://example.org/other.xml",
    )
    papers = add_items(
        [{"title": f"paper {i}", "content_type": "paper", "authors": [f"A. Writer{i}"]} for i in range(4)]
    )
    user = create_user(db, "ann", "")
    record_click(db, user["id"], show[0], True, "agent")
    record_click(db, user["id"], papers[0], False, "agent")
    ranking = rank(db, user, CandidateQuery())
    preference = dict(zip(ranking.item_ids.tolist(), ranking.raw["preference"].tolist(), strict=True))
    # the show's like: +1/3 once (three families rated by the same click), not +1
    assert preference[show[1]] == pytest.approx(1 / 3)
    # kept on the group's narrowest key (the feed): another show's episode is not rated by it
    assert preference[other[0]] == pytest.approx(0.0)
    # the disliked paper's type, feed and author were rated by the same click: its author
    # alone carries it, not every paper of the feed
    assert preference[papers[1]] == pytest.approx(0.0)
    # `hermes explain` lists the keys it rated, and says which count once with another
    from typer.testing import CliRunner

    from hermes.cli.app import build_app

    out = CliRunner().invoke(build_app(), ["explain", "ann", str(show[1]), "--db", str(db_path)])
    assert out.exit_code == 0 and "counted once with another key the same clicks rated" in out.output, out.output
    groups = shared_evidence([(show[0], True)], {show[0]: ["type:podcast", "author:x", "tag:t"]})
    assert groups == [["type:podcast", "author:x"]]
    # a key two different click sets rated is its own evidence
    assert shared_evidence([(1, True), (2, True)], {1: ["type:podcast", "author:x"], 2: ["type:podcast"]}) == []


def test_a_dislike_counts_against_its_narrowest_category_not_its_cross_lists(db, add_items):
    """A one-field trial disliked polymer papers cross-listed to stat-mech and mtrl-sci: a
    quantum-criticality paper listed under stat-mech fell from rank 43 to 142 on those
    dislikes alone. A category only dislikes rated, together with the paper's others,
    counts on the narrowest of them; a liked paper's categories all count."""
    from hermes.ranking.preferences import shared_evidence

    polymer = add_items([{"title": "polymer melt", "tags": ["cond-mat.soft", "cond-mat.stat-mech"]}])
    qcp = add_items([{"title": f"quantum critical point {i}", "tags": ["cond-mat.stat-mech"]} for i in range(3)])
    soft = add_items([{"title": "colloid gel", "tags": ["cond-mat.soft"]}])
    other = add_items([{"title": "kondo lattice", "tags": ["cond-mat.str-el"]}])  # no category rated
    user = create_user(db, "ann", "")
    record_click(db, user["id"], polymer[0], False, "ui")
    ranking = rank(db, user, CandidateQuery())
    preference = dict(zip(ranking.item_ids.tolist(), ranking.raw["preference"].tolist(), strict=True))
    # (the feed and the content type, on every item, add the same to each)
    assert preference[qcp[0]] == pytest.approx(preference[other[0]])  # stat-mech, on more items: not rated
    assert preference[soft[0]] == pytest.approx(preference[other[0]] - 1 / 3)  # the narrowest takes it
    # and the reason does not name the category the dislike no longer counts on
    from hermes.ranking.explain import explain

    why = explain(db, user, qcp[0], since_days=None)
    stat_mech = [t for t in why["evidence"]["tags"] if t["key"] == "tag:cond-mat.stat-mech"]
    assert stat_mech and stat_mech[0]["counted_on"] == "tag:cond-mat.soft"
    assert "stat-mech" not in why["reason"], why["reason"]
    # a like of the same paper rates both of its categories
    keys = {1: ["tag:a", "tag:b"]}
    assert shared_evidence([(1, False)], keys) == [["tag:a", "tag:b"]]
    assert shared_evidence([(1, True)], keys) == []
