"""How a persona's library weighs in its ranking (plugins/persona/library_scorer.py): a
library of thousands of papers does not drown the person's next clicks, and a library of
two topics ranks the items of both."""

from __future__ import annotations

import numpy as np
import pytest
from hermes_persona import library_scorer
from test_persona_support import make_persona, tool

from hermes.contract import CandidateQuery
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user


def _bibtex(titles: list[str]) -> str:
    return "\n".join(f"@misc{{e{k}, title = {{{t}}}}}" for k, t in enumerate(titles))


def _positions(db, user, ids: list[int]) -> list[int]:
    order = [int(i) for i in rank(db, user, CandidateQuery(since_days=None)).item_ids]
    return [order.index(i) for i in ids]


def test_ten_dislikes_after_a_library_of_two_thousand_papers_move_the_ranking(db, add_items):
    """2,000 library papers on gravitational lensing, half about strong-lensing arcs and
    half about weak-lensing shear surveys, and 15 unread papers of each. The person
    dislikes 10 papers of the kind the library ranks first; the other 5 of that kind must
    fall below every paper of the other: the library is 200 times as many likes as the
    person's dislikes, and the dislikes still decide."""
    kinds = {"arcs": "strong lensing arcs cluster note", "shear": "weak lensing shear survey note"}
    ids = {
        kind: add_items([{"title": f"{words} {k}", "days_ago": 1} for k in range(15)]) for kind, words in kinds.items()
    }
    make_persona(db, "ann", "gravitational lensing")
    library = [f"{kinds['shear' if k % 2 else 'arcs']} paper {k}" for k in range(2000)]
    done = tool(db, "import_library", name="ann", text=_bibtex(library))
    assert done["ok"] and done["liked"] == 2000, done["message"]
    ann = require_user(db, "ann")
    first = int(rank(db, ann, CandidateQuery(since_days=None), limit=1).item_ids[0])
    top, other = ("arcs", "shear") if first in ids["arcs"] else ("shear", "arcs")
    disliked, kept = ids[top][:10], ids[top][10:]
    before = _positions(db, ann, kept + ids[other])
    assert np.mean(before[:5]) < np.mean(before[5:]), before  # the library's first kind first
    for item in disliked:
        record_click(db, ann["id"], item, False, "ui")
    after = _positions(db, ann, kept + ids[other])
    assert max(after[5:]) < min(after[:5]), (before, after)  # below every paper of the other


WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "omega",
    "sigma",
    "kappa",
    "theta",
    "lambda",
    "zeta",
    "iota",
    "rho",
    "tau",
    "phi",
    "chi",
    "psi",
    "eta",
    "mu",
    "nu",
    "xi",
)


def test_a_library_of_two_topics_ranks_the_items_of_both(db, add_items):
    """A library of 40 papers on galaxy surveys and 8 on protein folding: the unread
    protein-folding papers rank above galaxy papers that share only part of the library's
    words. One direction fit to the library leans to its larger topic; the papers' own
    neighbours do not."""
    ids = add_items(
        [
            {"title": t, "days_ago": 1}
            for t in [f"protein folding kinetics simulation {w}" for w in WORDS[:4]]
            + [f"galaxy survey {w} telescope" for w in WORDS[4:8]]
        ]
    )
    add_items([{"title": f"sourdough bread {a} {b}", "days_ago": 1} for a in WORDS for b in WORDS[:6]])
    make_persona(db, "ann", "research")
    library = [f"dark matter halo galaxy survey model {a} {b}" for a in WORDS[:8] for b in WORDS[8:13]] + [
        f"protein folding kinetics simulation paper {w}" for w in WORDS[12:20]
    ]
    assert tool(db, "import_library", name="ann", text=_bibtex(library))["ok"]
    positions = _positions(db, require_user(db, "ann"), ids)
    assert max(positions[:4]) < min(positions[4:]), positions


def test_the_knn_half_hands_over_as_the_persons_own_clicks_come(db, add_items):
    """The kNN half reads the library's likes and no dislike at all, so it is the part of
    the library that cannot hear the person: its share of the component falls as the own
    clicks come (issue 38, fifth round), while the library's model, which reads them, keeps
    the rest."""
    ids = add_items([{"title": f"weak lensing shear survey note {k}", "days_ago": 1} for k in range(12)])
    make_persona(db, "ann", "gravitational lensing")
    library = [f"weak lensing shear survey paper {k}" for k in range(40)]
    assert tool(db, "import_library", name="ann", text=_bibtex(library))["ok"]
    ann = require_user(db, "ann")

    def share() -> float:
        return rank(db, ann, CandidateQuery(since_days=None)).components["library"].detail["knn_share"]

    assert share() == library_scorer.KNN_SHARE
    for item in ids[:10]:
        record_click(db, ann["id"], item, False, "ui")
    h = library_scorer.KNN_HANDOVER
    assert share() == pytest.approx(library_scorer.KNN_SHARE * h / (h + 10))
    assert share() < 0.8 * library_scorer.KNN_SHARE
