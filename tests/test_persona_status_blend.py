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
