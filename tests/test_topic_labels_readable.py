"""Issue 31: a topic's label is read at a glance — keyphrases its items share, never a
category code alone where a keyphrase exists, no lone qualifying word ("arbitrariness",
"ferromagnetic") beside keyphrases, no two forms of one word (hermes.topics.topic_labels)."""

from __future__ import annotations

import re

import numpy as np

from hermes.topics import tag_graph, topic_labels, window_topics

# A hep archive as a listing gives it: a category on each paper (none on most of the feed),
# keyphrases from the tagger. Three sub-fields of five papers each.
HOLOGRAPHY = [
    ["hep-th", "gauge theory"],
    ["hep-th", "holographic duality"],
    ["hep-th", "string compactification"],
    ["hep-th", "black hole entropy"],
    ["hep-th", "conformal bootstrap"],
]
COSMOLOGY = [
    ["arbitrariness", "big bang singularity", "cosmology"],
    ["arbitrariness", "big bang singularity"],
    ["arbitrariness", "cosmological constant"],
    ["arbitrariness", "cosmological constant", "cosmology"],
    ["arbitrariness", "inflaton"],
]
CRITICAL = [
    ["criticality", "critical behavior", "spin", "spin-dependent"],
    ["criticality", "critical behavior", "spin", "spin-dependent"],
    ["criticality", "critical behavior", "spin-dependent"],
    ["criticality", "critical behavior", "spin"],
    ["criticality", "lattice qcd"],
]
OTHERS = [
    ["hep-ph", "neutrino mass"],
    ["hep-ph", "dark matter"],
    ["hep-lat", "quark"],
    ["hep-ph", "higgs boson"],
    ["hep-lat", "lattice gauge"],
]


def window_of(db, add_items):
    clusters = [HOLOGRAPHY, COSMOLOGY, CRITICAL]
    items = [
        {"title": f"paper {c}-{k}", "tags": tags}
        for c, cluster in enumerate(clusters)
        for k, tags in enumerate(cluster)
    ]
    # the rest of the archive: 25 papers of other sub-fields, so no code is on most of the feed
    items += [{"title": f"other {k}", "tags": OTHERS[k % 5]} for k in range(25)]
    add_items(items)
    graph = tag_graph.get_graph(db)
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")][:15]
    basis = np.eye(8)
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, basis[k // 5]) for k, i in enumerate(ids)]
    result = window_topics.group(graph, window)
    assert sorted(len(t.members) for t in result.topics) == [5, 5, 5]
    return {ids.index(t.members[0]) // 5: t.label for t in result.topics}


def test_a_topic_sharing_only_a_category_code_is_named_by_its_keyphrases(db, add_items):
    label = window_of(db, add_items)[0]
    assert "hep-th" not in label, label
    parts = label.split(" · ")
    assert 1 <= len(parts) <= 2 and all(p in {t for tags in HOLOGRAPHY for t in tags} for p in parts), label


def test_keyphrases_name_a_topic_before_a_lone_qualifying_word(db, add_items):
    label = window_of(db, add_items)[1]
    assert "arbitrariness" not in label, label
    assert label.split(" · ")[0] in {"big bang singularity", "cosmological constant"}, label


def test_no_two_forms_of_one_word_in_a_label(db, add_items):
    label = window_of(db, add_items)[2]
    parts = re.findall(r"[^\W_]+", label)
    stems = [p[:6] for p in parts]
    assert len(stems) == len(set(stems)), label
    assert "critical behavior" in label, label  # the phrase, not "criticality"


def test_what_names_a_topic_and_what_does_not():
    kind = topic_labels.kind
    assert [kind(t) for t in ("gauge theory", "singularity", "spin-dependent")] == [0, 0, 0]
    assert [kind(t) for t in ("arbitrariness", "conjectured", "dwarf located", "ds")] == [1, 1, 1, 1]
    assert [kind(t) for t in ("hep-th", "cond-mat.str-el")] == [2, 2]
    assert [kind(t) for t in ("big live live", "news.ycombinator.com", "star stars")] == [3, 3, 3]


def test_a_phrase_and_its_initials_are_one_name():
    keys = [
        {"lhc": "LHC", "large hadron collider": "large hadron collider", "fermion": "fermion"},
        {"lhc": "LHC", "large hadron collider": "large hadron collider"},
    ]
    for ranked in (["lhc", "large hadron collider", "fermion"], ["large hadron collider", "lhc", "fermion"]):
        chosen = topic_labels.label(ranked, keys, set())
        assert "large hadron collider" in chosen and "lhc" not in chosen, chosen


def test_two_topics_of_one_window_never_share_a_label(db, add_items):
    """Two topics whose only shared tag is "amplitude" (and no keyphrase of several words to
    add): each says one thing more."""
    pairs = [
        [["amplitude", w] for w in ("twistor", "integrand", "unitarity", "cut")],
        [["amplitude", w] for w in ("parton", "veto", "shower", "jet")],
    ]
    items = [{"title": f"paper {c}-{k}", "tags": tags} for c, pair in enumerate(pairs) for k, tags in enumerate(pair)]
    # "amplitude" on fewer than a tenth of the archive: it names no field
    add_items(items + [{"title": f"other {k}", "tags": OTHERS[k % 5]} for k in range(80)])
    graph = tag_graph.get_graph(db)
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")][:8]
    basis = np.eye(8)
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, basis[k // 4]) for k, i in enumerate(ids)]
    result = window_topics.group(graph, window)
    labels = [t.label for t in result.topics]
    assert len(labels) == 2 and len(set(labels)) == 2, labels
    assert all(label.startswith("amplitude · ") for label in labels), labels


def test_a_word_the_field_writes_everywhere_loses_to_a_specific_phrase(db, add_items):
    """A cond-mat listing (a one-field trial's "interaction" over a heavy-fermion topic): the
    word is a tag alone on the topic's six items only, but inside a phrase on a third of
    the archive ("electron-phonon interaction" …), so it tells less than "heavy fermion",
    which two of the six share and nothing else carries (:func:`topic_labels.lift`)."""
    heavy = [["interaction", p] for p in ("heavy fermion", "kondo lattice", "quantum criticality") for _ in (0, 1)]
    cold = [["optical lattice", "bose gas"], ["optical lattice", "feshbach resonance"]] * 9
    phrases = ["electron-phonon interaction", "spin-orbit interaction", "exchange interaction", "coulomb interaction"]
    subjects = ["superconductor", "graphene", "phonon", "magnetization", "quantum dot", "spin glass"]
    rest = [{"title": f"other {k}", "tags": [phrases[k % 4], subjects[k % 6]]} for k in range(30)]
    rest += [{"title": f"more {k}", "tags": [subjects[k % 6], "thin film"]} for k in range(36)]
    items = [{"title": f"paper {k}", "tags": tags} for k, tags in enumerate(heavy + cold)]
    add_items(items + rest)
    graph = tag_graph.get_graph(db)
    # "interaction" alone: on 6 of 90 items (under ARCHIVE_SHARE) and 6 of the window's 24
    # (under FIELD_SHARE), ranked first by telling × rarity; with its phrases, on 36
    assert graph.count("interaction") == 6 and graph.within("interaction") == 36
    ids = [r[0] for r in db.execute("SELECT id FROM items ORDER BY id")][: len(heavy + cold)]
    basis = np.eye(8)
    window = [window_topics.WindowItem(i, items[k]["tags"], 1, basis[int(k >= 6)]) for k, i in enumerate(ids)]
    result = window_topics.group(graph, window)
    label = next(t.label for t in result.topics if ids[0] in t.members)
    assert label.split(" · ")[0] == "heavy fermion" and "interaction" not in label.split(" · "), label
