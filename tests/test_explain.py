"""Explanations: contents, the window they rank in, the one wording, what they store."""

from __future__ import annotations

import json

import pytest

from hermes.errors import InvalidInput
from hermes.ranking.explain import explain, explain_ranked
from hermes.ranking.explain_words import reason_line
from hermes.ranking.rank import blend_weight, rank_items
from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


def stored(db, user_id, item_id):
    row = db.execute(
        "SELECT payload FROM explanations WHERE user_id = ? AND item_id = ?", [user_id, item_id]
    ).fetchone()
    return json.loads(row[0]) if row else None


@pytest.fixture
def persona(db, add_items):
    ids = add_items(
        [
            {"title": "quantum error correction with surface codes", "tags": ["quant-ph"]},
            {"title": "fault tolerant quantum error correction thresholds", "tags": ["quant-ph", "cs.IT"]},
            {"title": "entanglement distillation protocols", "tags": ["quant-ph"]},
            {"title": "galaxy rotation curves and dark matter", "tags": ["astro-ph"]},
            {"title": "sourdough bread baking", "tags": ["food"]},
            {"title": "decoherence of superconducting qubits", "tags": ["quant-ph"], "days_ago": 30},
        ]
    )
    user = create_user(db, "ann", "quantum error correction, entanglement")
    return user, ids


def test_explanation_with_no_clicks(db, persona):
    user, _ = persona
    top = rank_items(db, user, limit=1, since_days=None)[0]
    e = explain(db, user, top["id"], since_days=None)
    assert e["rank"] == 1 and e["out_of"] == 6 and e["pool"] == "unread items in the whole archive"
    assert e["window_days"] is None and e["item_id"] == top["id"]
    assert e["score"] == pytest.approx(top["score"], abs=1e-3)
    assert e["blend_weight"] == 0.0 and e["n_clicks"] == 0
    assert e["classifier_active"] is False and e["classifier_reason"] == "no clicks yet"
    assert e["components"]["profile"]["contribution"] > 0
    assert e["components"]["profile"]["closest_interest"] in ("quantum error correction", "entanglement")
    assert e["nearest_liked"] == [] and e["matched_tags"] == []
    interest = e["evidence"]["interest"]
    assert interest["clause"] == e["components"]["profile"]["closest_interest"]
    assert interest["similarity"] == e["components"]["profile"]["similarity"]
    assert e["evidence"]["liked"] is None and e["evidence"]["classifier"] is None
    assert e["match"] == interest["level"] == "strong"
    assert e["reason"] == f"Strong match: {e['phrases'][0]}."
    assert e["phrases"][0].startswith(f"matches your interest “{interest['clause']}” closely")
    assert e["top"][0]["component"] == "profile" and e["top"][0]["evidence"] == interest


def test_explanation_after_clicks(db, persona):
    user, ids = persona
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[2], True, "agent")
    record_click(db, user["id"], ids[4], False, "ui")
    e = explain(db, user, ids[1])
    assert e["n_clicks"] == 3 and e["blend_weight"] == pytest.approx(blend_weight(3))
    assert e["classifier_active"] is True and "2 likes and 1 dislike" in e["classifier_reason"]
    assert set(e["components"]) >= {"profile", "preference", "affinity", "classifier"}
    for comp in e["components"].values():
        assert {"role", "active", "share", "raw", "contribution"} <= set(comp)
    tags = {t["label"]: t for t in e["matched_tags"]}
    assert tags["quant-ph"]["likes"] == 2 and tags["quant-ph"]["score"] == pytest.approx(0.5)
    assert "cs.it" not in tags  # never clicked: no statistics to show
    nearest = e["nearest_liked"]
    assert [n["id"] for n in nearest][:1] == [ids[0]] and {n["id"] for n in nearest} == {ids[0], ids[2]}
    assert nearest[0]["title"].startswith("quantum error") and 0 < nearest[0]["similarity"] <= 1
    liked = e["evidence"]["liked"]
    assert liked["id"] == nearest[0]["id"] and liked["similarity"] == pytest.approx(nearest[0]["similarity"], abs=1e-4)
    assert e["evidence"]["classifier"]["level"] in ("strong", "good", "weak", "none")
    assert [t["label"] for t in e["evidence"]["tags"]] == ["quant-ph"]
    assert any(p.startswith("has tags you liked: quant-ph (2 likes)") for p in e["phrases"])
    assert e["reason"] == reason_line(e)
    json.dumps(e)  # JSON-safe throughout


def test_a_clicked_or_old_item_is_ranked_within_the_window_it_is_explained_for(db, persona):
    user, ids = persona
    record_click(db, user["id"], ids[3], False, "ui")
    e = explain(db, user, ids[3])
    assert e["out_of"] == 5 and e["pool"] == "unread items of the last 7 days"
    assert e["window_days"] == 7
    old = explain(db, user, ids[5])  # 30 days old: ranked among the four recent unread
    assert old["out_of"] == 5 and 1 <= old["rank"] <= 5
    whole = explain(db, user, ids[5], since_days=None)
    assert whole["out_of"] == 5 and whole["pool"] == "unread items in the whole archive"  # 5 unread in all


def test_a_low_similarity_never_reads_as_close(db, persona):
    """The scenario of issue 14: likes on quantum papers, an item about bread. The reason
    must say nothing liked is similar, not that it is close to a liked item."""
    user, ids = persona
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[2], True, "ui")
    e = explain(db, user, ids[4])  # sourdough bread baking
    assert e["match"] == "none" and e["evidence"]["liked"]["level"] == "none"
    assert "which you liked" not in e["reason"]
    assert e["reason"].startswith("No match: ")
    assert "nothing you liked is similar (nearest similarity " in " ".join(e["phrases"])
    assert "not close to any of your interests" in e["reason"]
    assert "nothing in particular" not in e["reason"] and " it " not in e["reason"]


def test_every_level_reads_differently_and_the_figures_are_stated(db, persona):
    user, _ = persona
    base = explain(db, user, persona[1][0], store=False)
    for level in ("strong", "good", "weak", "none"):
        p = {
            **base,
            "match": level,
            "evidence": {
                **base["evidence"],
                "interest": {**base["evidence"]["interest"], "level": level, "similarity": 0.42},
            },
        }
        from hermes.ranking.explain_words import phrases_of

        p["phrases"] = phrases_of(p)
        line = reason_line(p)
        assert "0.42" in line and line.startswith(
            {"strong": "Strong match", "good": "Good match", "weak": "Weak match", "none": "No match"}[level]
        )
        assert ("close to any" in line) == (level == "none")


def test_a_persona_with_nothing_to_judge_by_is_told_so(db, add_items):
    (item,) = add_items([{"title": "anything at all"}])
    user = create_user(db, "blank", "")
    e = explain(db, user, item)
    assert e["match"] == "none" and e["phrases"] == []
    assert e["reason"].startswith("No match: nothing to judge it by yet")


def test_explain_ranked_matches_explain_for_the_same_window(db, persona):
    from hermes.contract import CandidateQuery
    from hermes.ranking.rank import rank

    user, ids = persona
    record_click(db, user["id"], ids[0], True, "ui")
    ranking = rank(db, user, CandidateQuery(since_days=7), bar_first=True)
    batch = explain_ranked(db, user, ranking, range(len(ranking.item_ids)), 7)
    for one in batch:
        alone = explain(db, user, one["item_id"], store=False)
        for key in ("reason", "match", "rank", "out_of", "evidence", "top", "phrases"):
            assert alone[key] == one[key], key


def test_explain_stores_its_explanation_and_the_read_only_call_does_not(db, persona):
    user, ids = persona
    explain(db, user, ids[0], store=False)
    assert db.execute("SELECT count(*) FROM explanations").fetchone()[0] == 0
    first = explain(db, user, ids[0])
    assert stored(db, user["id"], ids[0]) == first
    record_click(db, user["id"], ids[1], True, "ui")
    second = explain(db, user, ids[0])
    assert db.execute("SELECT count(*) FROM explanations").fetchone()[0] == 1
    assert stored(db, user["id"], ids[0]) == second != first


def test_an_item_without_an_embedding_cannot_be_explained(db, persona):
    user, _ = persona
    db.execute("INSERT INTO items (guid, title) VALUES ('raw', 'not embedded yet')")
    raw = db.execute("SELECT id FROM items WHERE guid = 'raw'").fetchone()[0]
    with pytest.raises(InvalidInput, match="no embedding yet"):
        explain(db, user, raw)
    assert stored(db, user["id"], raw) is None


def test_an_item_the_feed_leaves_out_is_said_to_be_out_not_given_a_rank(db, persona):
    """Explaining an item outside the feed's window, or one already rated or read, says why
    the feed leaves it out, and where it would come, instead of a rank the feed never shows."""
    from hermes.ranking.explain_words import rank_line

    user, ids = persona
    old = explain(db, user, ids[5], since_days=7)  # published 30 days ago
    assert old["in_pool"] is False
    assert old["not_in_pool"].startswith("it was published ") and "before the last 7 days" in old["not_in_pool"]
    assert rank_line(old).startswith("Not among the unread items of the last 7 days (it was published")
    assert "would come" in rank_line(old)
    assert explain(db, user, ids[5], since_days=None)["in_pool"] is True  # the whole archive has it

    db.execute("UPDATE items SET published = NULL WHERE id = ?", [ids[5]])
    assert "its date is unknown" in explain(db, user, ids[5], since_days=7)["not_in_pool"]

    record_click(db, user["id"], ids[0], True, "agent")
    liked = explain(db, user, ids[0], since_days=None)
    assert liked["in_pool"] is False and liked["not_in_pool"] == "you liked it already"

    inside = explain(db, user, ids[1], since_days=None)
    assert inside["in_pool"] is True and "not_in_pool" not in inside
    assert rank_line(inside).startswith(f"Ranks {inside['rank']} of ")


def test_two_liked_authors_are_named_in_one_clause_each():
    from hermes.ranking.explain_words import phrases_of

    people = [
        {"key": "author:author, a", "kind": "author", "label": "Author", "score": 0.33, "likes": 1, "dislikes": 0},
        {"key": "author:writer, b", "kind": "author", "label": "Writer", "score": 0.5, "likes": 2, "dislikes": 0},
    ]
    evidence = {
        "interest": None,
        "liked": None,
        "classifier": None,
        "tags": [],
        "authors": people,
        "sources": [],
        "topics": [],
    }
    phrases = phrases_of({"evidence": evidence, "components": {}, "above_bar": True})
    assert "by Author, whom you liked once, and Writer, whom you liked twice" in phrases


def test_a_strong_match_held_down_by_a_disliked_source_says_so(db, add_items, no_bar):
    """The trial: one dislike from a blog halved a strong match's score, and its reason said
    only why it was strong. Above the bar the dislike that held it down is named."""
    blog = dict(feed_url="https://blog.example.org/feed.xml", feed_title="Gradient Notes")
    [sourdough, sae] = add_items(
        [
            {"title": "Sourdough starters", "summary": "Flour and water."},
            {"title": "Sparse autoencoder tricks", "summary": "Dead latents in sparse autoencoders."},
        ],
        **blog,
    )
    others = add_items(
        [
            {"title": f"Sparse autoencoder paper {k}", "summary": "Sparse autoencoders on language models."}
            for k in range(3)
        ]
    )
    user = create_user(db, "ann", "sparse autoencoders")
    record_click(db, user["id"], others[0], True, "ui")
    record_click(db, user["id"], sourdough, False, "ui")
    why = explain(db, user, sae, since_days=None)
    assert why["match"] in ("strong", "good")
    assert why["components"]["preference"]["contribution"] < 0  # precondition: held down
    assert why["reason"].endswith("; but from a source or type you disliked: Gradient Notes (1 dislike).")
    fine = explain(db, user, others[1], since_days=None)
    assert "you disliked" not in fine["reason"]


def test_a_second_dislike_is_not_joined_to_the_first_by_but():
    """A trial read "has tags you disliked: wissenschaft (1 dislike); but from a source or
    type you disliked: …": "but" joined two of a kind."""
    p = {
        "match": "good",
        "above_bar": True,
        "evidence": {"english": True},
        "components": {"preference": {"active": True, "contribution": -0.4}},
        "phrases": [
            "close to 'Qubits', which you liked (similarity 0.61)",
            "has tags you disliked: wissenschaft (1 dislike)",
            "from a source or type you disliked: type article (1 dislike)",
        ],
    }
    assert reason_line(p).endswith("(1 dislike); and from a source or type you disliked: type article (1 dislike).")
    p["phrases"][1] = "has tags you liked: quantum (2 likes)"
    assert "; but from a source or type you disliked" in reason_line(p)


def test_an_undecided_classifier_is_said_not_to_count(db, persona, monkeypatch, db_path):
    """The CLI printed "probability 0.43 (weak)" beside an item whose match that figure did
    not lift. Here every probability falls in the undecided band (thresholds moved)."""
    from typer.testing import CliRunner

    from hermes.cli.app import build_app
    from hermes.ranking import match

    user, ids = persona
    monkeypatch.setitem(
        match.THRESHOLDS, "hermes/hash-384", {**match.THRESHOLDS["hermes/hash-384"], "classifier": (0.0, 0.999, 0.9999)}
    )
    record_click(db, user["id"], ids[0], True, "ui")
    record_click(db, user["id"], ids[4], False, "ui")
    e = explain(db, user, ids[3], since_days=None)
    assert e["evidence"]["classifier"]["level"] == "weak"
    assert e["evidence"]["classifier"]["counts"] is False
    # worded by the probability's side of 0.5 (test_match_archive), the level said not to count
    assert "(probability 0.4" in " ".join(e["phrases"]) or "either way" in " ".join(e["phrases"])
    out = CliRunner().invoke(build_app(), ["explain", "ann", str(ids[3]), "--all", "--db", str(db_path)])
    assert "(undecided: does not count for the match)" in out.output, out.output


def test_a_bootstrap_like_is_not_called_the_person_s_own(db, persona, no_bar):
    """Bootstrap likes on the persona's behalf: its explanation said "you liked it"."""
    from hermes_persona.bootstrap import bootstrap_persona

    user, ids = persona
    liked = [i["id"] for i in bootstrap_persona(db, "ann", n_like=1, n_dislike=0)["liked"]]
    e = explain(db, user, liked[0], since_days=None)
    assert e["evidence"]["liked"]["itself"] and e["evidence"]["liked"]["source"] == "bootstrap"
    assert "liked for you by bootstrap, from your interests or an imported library" in e["phrases"]
    assert "you liked it" not in e["phrases"]
    assert e["not_in_pool"] == "bootstrap (from your interests or an imported library) liked it already"
    record_click(db, user["id"], liked[0], True, "ui")  # the person likes it too: theirs now
    assert "you liked it" in explain(db, user, liked[0], since_days=None)["phrases"]


def test_a_type_disliked_once_is_named_with_the_one_dislike_behind_it(db, add_items, no_bar):
    """A trial disliked one football article; the Chinchilla post then read "but from a source
    or type you disliked (article)", a verdict on every article the person never gave."""
    [football, *papers] = add_items(
        [
            {"title": "Football results", "summary": "The weekend's matches."},
            {"title": "Chinchilla scaling laws", "summary": "Compute-optimal language models."},
            {"title": "Scaling laws revisited", "summary": "Compute-optimal training."},
        ]
    )
    db.execute("UPDATE items SET content_type = 'paper' WHERE id = ?", [papers[1]])
    user = create_user(db, "ann", "scaling laws for language models")
    record_click(db, user["id"], papers[1], True, "ui")
    record_click(db, user["id"], football, False, "ui")
    phrases = explain(db, user, papers[0], since_days=None)["phrases"]
    assert "from a source or type you disliked: type article (1 dislike)" in phrases
    assert (
        "from a source or type you liked: type paper (1 like)"
        in explain(db, user, papers[1], since_days=None)["phrases"]
    )


def test_an_item_close_to_a_bootstrap_like_does_not_say_you_liked_it(db, persona, no_bar):
    """A trial read "close to 'Ep. 142…', which you liked" about an episode bootstrap liked."""
    from hermes_persona.bootstrap import bootstrap_persona

    user, ids = persona
    liked = bootstrap_persona(db, "ann", n_like=1, n_dislike=0)["liked"][0]["id"]
    other = next(i for i in ids[:3] if i != liked)
    with pytest.MonkeyPatch.context() as mp:  # every cosine reads "good" for this model
        from hermes.ranking import match

        mp.setitem(
            match.THRESHOLDS, "hermes/hash-384", {**match.THRESHOLDS["hermes/hash-384"], "liked": (-2.0, -2.0, 2.0)}
        )
        e = explain(db, user, other, since_days=None)
    assert e["evidence"]["liked"]["id"] == liked and e["evidence"]["liked"]["source"] == "bootstrap"
    text = " ".join(e["phrases"])
    assert "which bootstrap liked for you" in text and "which you liked" not in text


def test_a_category_nearly_every_item_carries_is_not_named_as_a_reason(db, add_items):
    """A trial's one-field feed ended every line "has tags you liked: hep-th (3 likes)": a
    category the whole listing carries tells no paper from another. It stays in the
    evidence, marked ``common``; a rarer category beside it is still named."""
    papers = [{"title": f"holographic entanglement entropy in setting {k}", "tags": ["hep-th"]} for k in range(8)]
    papers[0]["tags"] = ["hep-th", "gr-qc"]
    papers[1]["tags"] = ["hep-th", "gr-qc"]
    ids = add_items([*papers, {"title": "a podcast on sourdough", "tags": []}])
    user = create_user(db, "ann", "holography")
    for i in ids[:3]:
        record_click(db, user["id"], i, True, "ui")
    why = explain(db, user, ids[1], since_days=None)
    tags = {t["label"]: t for t in why["evidence"]["tags"]}
    assert tags["hep-th"].get("common") is True and "common" not in tags["gr-qc"]
    assert not any("hep-th" in p for p in why["phrases"]) and "hep-th" not in why["reason"]
    assert any(p.startswith("has tags you liked: gr-qc") for p in why["phrases"])


def test_interests_whose_clauses_all_read_as_one_are_named_as_the_persona_s_interests(db, add_items):
    """One field's interests text: every clause groups with every other, and the reason said
    "matches your interest “X” and the N related to it" on every line. Where the matched
    group is the whole text the evidence says so (``whole``) and the words name "your
    interests", the clause nearest the item quoted; clauses about different things keep
    the clause and its group."""
    ids = add_items([{"title": "quantum error correction codes"}, {"title": "sourdough bread baking"}])
    one_field = create_user(db, "ann", "quantum error correction; quantum error codes; quantum correction codes")
    apart = create_user(db, "bob", "quantum error correction codes; sourdough bread baking; galaxy rotation curves")
    e = explain(db, one_field, ids[0], since_days=None, store=False)["evidence"]["interest"]
    assert e["whole"] is True and e["related"] == 2, e
    assert explain(db, one_field, ids[0], since_days=None, store=False)["phrases"][0].startswith(
        "matches your interests closely (nearest “quantum"
    )
    other = explain(db, apart, ids[0], since_days=None, store=False)["evidence"]["interest"]
    assert other["whole"] is False and other["related"] < 2, other


def test_an_author_nearly_every_item_carries_is_not_named_as_a_reason(db, add_items):
    """A trial's feed signed every paper "A. Author": every reason ended "by Author (6 likes,
    4 dislikes)", which tells no item from another. Like a common category, such an author
    stays in the evidence, marked ``common``, and the words leave it out; a rarer author
    beside it is still named."""
    papers = [{"title": f"holographic entanglement entropy in setting {k}", "authors": ["A. Author"]} for k in range(8)]
    papers[0]["authors"] = ["A. Author", "C. Writer"]
    papers[1]["authors"] = ["A. Author", "C. Writer"]
    ids = add_items([*papers, {"title": "a podcast on sourdough"}])
    user = create_user(db, "ann", "holography")
    for i in ids[:3]:
        record_click(db, user["id"], i, True, "ui")
    why = explain(db, user, ids[1], since_days=None)
    authors = {t["label"]: t for t in why["evidence"]["authors"]}
    assert authors["Author"].get("common") is True and "common" not in authors["Writer"]
    assert not any("Author" in p for p in why["phrases"]), why["phrases"]
    assert any(p.startswith("by Writer") for p in why["phrases"]), why["phrases"]


def test_the_liked_figure_says_it_compares_with_the_latest_likes_only(db, db_path, add_items):
    """A retrial: a library's 44 likes, then 3 more: "liked: nearest [317] … 0.42" while a
    liked paper 0.62 away had left the 16 latest likes the figure compares with."""
    from hermes_feeds.feed_lines import explanation_lines
    from web_support import client

    from hermes.builtins.scorers import AFFINITY_LIKES

    ids = add_items([{"title": f"Percolation on lattices, part {k}"} for k in range(AFFINITY_LIKES + 4)])
    user = create_user(db, "pia", "percolation")
    for item in ids[: AFFINITY_LIKES + 2]:
        record_click(db, user["id"], item, True, "bootstrap")
    payload = explain(db, user, ids[-1])
    liked = payload["evidence"]["liked"]
    assert liked["among_latest"] == AFFINITY_LIKES
    text = "\n".join(explanation_lines(payload))
    assert f"liked: nearest of your {AFFINITY_LIKES} latest likes [" in text
    assert f"closest of your {AFFINITY_LIKES} latest likes:" in text
    page = client(db_path).get(f"/explain?user=pia&item_id={ids[-1]}").text
    assert f"Closest of your {AFFINITY_LIKES} latest likes" in page
    # a persona with no more likes than the window: "nearest", as before
    few = create_user(db, "ann", "percolation")
    record_click(db, few["id"], ids[0], True, "ui")
    assert "among_latest" not in explain(db, few, ids[-1])["evidence"]["liked"]
