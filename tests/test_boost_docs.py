"""What docs/plugin_hooks.md says a boost's ``weight`` does is what the blend does: a 1/0
mark is standardised over the candidates, so a rare one is amplified and every unmarked item
is pushed down, and the page's fixed-nudge example keeps the gap between marked and
unmarked items at what it asks for, however rare the mark."""

from __future__ import annotations

import math
import re
import types
from pathlib import Path

import numpy as np
import pytest

from hermes import Component, hookimpl
from hermes.contract import CandidateQuery
from hermes.ranking.explain import explain
from hermes.ranking.rank import blend, rank
from hermes.storage.records import create_user

DOC = Path(__file__).resolve().parents[1] / "docs" / "plugin_hooks.md"


def score_section() -> str:
    return re.search(r"^## hermes_score\n(.*?)^## ", DOC.read_text(encoding="utf-8"), re.S | re.M).group(1)


def test_a_one_zero_mark_on_4_of_22_items_adds_and_subtracts_what_the_page_says():
    mark = np.array([1.0] * 4 + [0.0] * 18)
    _, contributions, *_ = blend([Component("domain", "boost", mark, weight=1.0)], 0, 22)
    up, down = contributions["domain"][0], contributions["domain"][-1]
    assert (round(up, 3), round(down, 3)) == (2.121, -0.471)
    assert "+2.121" in score_section() and "−0.471" in score_section()
    p = 4 / 22
    assert up == pytest.approx(math.sqrt((1 - p) / p)) and down == pytest.approx(-math.sqrt(p / (1 - p)))


@pytest.mark.parametrize("n_marked", [2, 5, 11])
def test_the_fixed_nudge_example_keeps_the_gap_whatever_the_share_marked(db, pm, add_items, n_marked):
    code = next(block for block in re.findall(r"```python\n(.*?)```", score_section(), re.S) if "d = 0.5" in block)
    module = types.ModuleType("hermes_arxiv_nudge")
    module.__dict__.update(hookimpl=hookimpl, Component=Component)  # the page's imports
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    add_items(
        [
            {"title": f"graph networks {i}", "url": f"https://{'arxiv.org' if i < n_marked else 'example.org'}/{i}"}
            for i in range(22)
        ]
    )
    pm.register(module, name="arxiv_nudge")
    ranking = rank(db, create_user(db, "ann", "graph networks"), CandidateQuery(since_days=None))
    urls = dict(db.execute("SELECT id, url FROM items"))
    marked = np.array(["arxiv.org" in urls[int(i)] for i in ranking.item_ids])
    nudge = ranking.contributions["arxiv"]
    assert nudge[marked].max() - nudge[~marked].min() == pytest.approx(0.5)
    assert nudge[marked].min() == pytest.approx(nudge[marked].max())  # one nudge for all


class Mark:
    """The trial's boost: a 1/0 mark on the items of one domain."""

    @hookimpl
    def hermes_score(self, db, user, item_ids, vectors, context):
        urls = dict(db.execute("SELECT id, url FROM items"))
        return Component("domain", "boost", [float("arxiv.org" in urls[int(i)]) for i in item_ids])


def test_explain_shows_the_boost_on_both_sides_in_its_figures(db, pm, add_items):
    """The reason names a boost where it lifts the item ("domain favours it") and where it
    pushes one down ("domain favours other items": its fall had no reason)."""
    ids = add_items(
        [
            {"title": f"graph networks {i}", "url": f"https://{'arxiv.org' if i < 4 else 'example.org'}/{i}"}
            for i in range(22)
        ]
    )
    pm.register(Mark(), name="domainboost")
    user = create_user(db, "ann", "graph networks")
    lifted, pushed = (
        explain(db, user, ids[0], since_days=None, store=False),
        explain(db, user, ids[-1], since_days=None, store=False),
    )
    assert "domain favours it" in lifted["reason"]
    assert lifted["components"]["domain"]["contribution"] == pytest.approx(2.121, abs=1e-3)
    assert pushed["components"]["domain"]["contribution"] == pytest.approx(-0.471, abs=1e-3)
    assert "domain favours other items" in pushed["phrases"]
    assert "favours other items" not in lifted["reason"]
