"""``hermes corpus …`` through typer's CliRunner."""

from __future__ import annotations

import json

from hermes_corpus import signals as cs
from typer.testing import CliRunner


def invoke(*args):
    from hermes.cli.app import build_app

    return CliRunner().invoke(build_app(), list(args))


def test_show_items_changes_recall(db, db_path, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    a, b = add_items([{"title": "Stellar streams", "tags": ["galaxies"]}, {"title": "Later"}])
    cs.record_progress(db, "alice", a, 1.0)
    cs.favorite(db, "alice", b)
    r = invoke("corpus", "show", "alice", "--db", str(db_path), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["experienced_count"] == 1
    r = invoke("corpus", "items", "alice", "--facet", "saved", "--db", str(db_path))
    assert r.exit_code == 0 and "Later" in r.stdout
    r = invoke("corpus", "changes", "alice", "--since", "1", "--db", str(db_path))
    assert r.exit_code == 0 and "r2  added    saved" in r.stdout
    r = invoke("corpus", "recall", "alice", "stellar", "--db", str(db_path))
    assert r.exit_code == 0 and "Stellar streams" in r.stdout
    r = invoke("corpus", "ranked", "alice", "--db", str(db_path))
    assert r.exit_code == 0 and "Stellar streams" in r.stdout


def test_errors_are_one_line(db, db_path):
    r = invoke("corpus", "show", "nobody", "--db", str(db_path))
    assert r.exit_code == 1 and "unknown persona" in r.output and "Traceback" not in r.output
    r = invoke("corpus", "items", "nobody", "--facet", "heard", "--db", str(db_path))
    assert r.exit_code == 1 and 'facet must be one of "experienced", "saved"' in r.output
    r = invoke("corpus", "reconcile", "nobody", "--db", str(db_path))
    assert r.exit_code == 1 and "unknown persona" in r.output


def test_reconcile_after_a_threshold_change(tmp_path, db, db_path, add_items):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    (a,) = add_items([{"title": "x"}])
    cs.record_progress(db, "alice", a, 0.2)
    (home / "config.toml").write_text("[corpus]\nheard_threshold = 0.1\n")
    r = invoke("corpus", "reconcile", "alice", "--db", str(db_path), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["revision"] == 1 and out["changes"][0]["facet"] == "experienced"
