"""Strength: bounded in [0, 1], monotonic in each signal, the documented formula."""

from __future__ import annotations

import pytest
from hermes_corpus import signals as cs
from hermes_corpus import tools as ct
from hermes_corpus.settings import CorpusSettings
from hermes_corpus.strength import strength
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

fractions = st.floats(min_value=0, max_value=1, allow_nan=False)
counts = st.integers(min_value=0, max_value=50)
weights = st.floats(min_value=0, max_value=3, allow_nan=False)
configs = st.builds(
    CorpusSettings,
    w_heard=weights,
    w_captures=weights,
    w_favorite=weights,
    w_reopens=weights,
    capture_cap=st.integers(1, 10),
    reopen_cap=st.integers(1, 10),
)
signal_sets = st.tuples(fractions, counts, st.booleans(), counts)


def test_the_documented_formula():
    cfg = CorpusSettings()
    assert strength(0, 0, False, 0, cfg)[0] == 0
    assert strength(1, 5, True, 4, cfg)[0] == pytest.approx(1.0)
    s, parts = strength(0.5, 2, True, 3, cfg)
    assert s == pytest.approx(0.4 * 0.5 + 0.3 * 2 / 5 + 0.1 + 0.2 * 2 / 3)
    assert parts == {"heard": 0.2, "captures": 0.12, "favorite": 0.1, "reopens": 0.1333}
    # Caps: captures beyond 5 and re-reads beyond 3 add nothing.
    assert strength(0, 50, False, 0, cfg)[0] == strength(0, 5, False, 0, cfg)[0]
    assert strength(0, 0, False, 40, cfg)[0] == strength(0, 0, False, 4, cfg)[0]


@hsettings(max_examples=300, deadline=None)
@given(signal_sets, configs)
def test_strength_is_bounded(signals, cfg):
    value, _ = strength(*signals, cfg)
    assert 0.0 <= value <= 1.0


@hsettings(max_examples=300, deadline=None)
@given(signal_sets, configs, fractions, st.integers(0, 10), st.integers(0, 10))
def test_strength_is_monotonic_in_each_signal(signals, cfg, more_frac, more_caps, more_opens):
    frac, caps, fav, opens = signals
    base = strength(frac, caps, fav, opens, cfg)[0]
    assert strength(max(frac, more_frac), caps, fav, opens, cfg)[0] >= base
    assert strength(frac, caps + more_caps, fav, opens, cfg)[0] >= base
    assert strength(frac, caps, True, opens, cfg)[0] >= base
    assert strength(frac, caps, fav, opens + more_opens, cfg)[0] >= base


def test_stored_strength_grows_with_each_signal(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{"title": "x"}])

    def current():
        (row,) = ct.corpus_ranked(db, "alice")["items"]
        return row["strength"]

    cs.add_note(db, "alice", item, "first")
    steps = [current()]
    cs.record_progress(db, "alice", item, 0.6)
    steps.append(current())
    cs.add_highlight(db, "alice", item, "passage")
    steps.append(current())
    cs.favorite(db, "alice", item)
    steps.append(current())
    cs.record_progress(db, "alice", item, 0.6)  # a re-read: one more open, no more read
    steps.append(current())
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    assert steps[-1] == pytest.approx(0.4 * 0.6 + 0.3 * 2 / 5 + 0.1 + 0.2 / 3, abs=1e-4)


def test_weights_come_from_config(tmp_path, db, add_items):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("[corpus]\nw_heard = 1.0\nw_captures = 0\nw_favorite = 0\nw_reopens = 0\n")
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (item,) = add_items([{"title": "x"}])
    cs.record_progress(db, "alice", item, 0.8)
    cs.add_highlight(db, "alice", item, "p")
    assert ct.corpus_ranked(db, "alice")["items"][0]["strength"] == pytest.approx(0.8)
