"""profile_status's blend says what the ranking blends: with the interests cleared, the
clicks are all of it (a trial's persona read "26% written interests" with none)."""

from __future__ import annotations

from hermes_persona.status import profile_status

from hermes.storage.clicks import record_click
from hermes.storage.records import create_user


def test_without_interests_the_clicks_are_the_whole_blend(db, add_items):
    a, b = add_items([{"title": "Branes and fluxes"}, {"title": "Collider signatures"}])
    create_user(db, "theo", "")
    assert profile_status(db, "theo")["blend"] == "no written interests and no clicks yet: nothing to rank by"
    record_click(db, db.execute("SELECT id FROM users WHERE name='theo'").fetchone()[0], a, True, "ui")
    status = profile_status(db, "theo")
    assert status["blend_weight"] == 1.0
    assert status["blend"] == "no written interests to rank by: learned from 1 click alone"
    create_user(db, "ann", "string theory")
    assert profile_status(db, "ann")["blend"].startswith("100% written interests, 0% learned")


def test_the_blend_says_which_clicks_bootstrap_made(db, add_items):
    """A trial's library import read "8% written interests, 92% learned from 54 clicks": 44
    were the library's, and its part of the ranking mixes the interests back in."""
    ids = add_items([{"title": f"Random walk paper {k}"} for k in range(12)])
    user = create_user(db, "prob", "random walks")
    record_click(db, user["id"], ids[0], True, "ui")
    assert "bootstrap" not in profile_status(db, "prob")["blend"]
    for item in ids[1:3]:
        record_click(db, user["id"], item, True, "bootstrap")
    blend = profile_status(db, "prob")["blend"]
    assert "from 3 clicks (2 of them by bootstrap: an imported library or seeded likes);" in blend
    for item in ids[3:]:
        record_click(db, user["id"], item, True, "bootstrap")
    assert (
        "(11 of them by bootstrap: an imported library or seeded likes, whose part of the ranking mixes"
        in (profile_status(db, "prob")["blend"])
    )
