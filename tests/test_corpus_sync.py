"""``hermes corpus sync``: a Markdown vault kept in step with the change log — incremental
runs end identical to a fresh full sync, a run with no changes writes nothing, what a person
wrote below the marker survives, and a trimmed log falls back to a full pass."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from hermes_corpus import signals as cs
from hermes_corpus import sync as vault
from typer.testing import CliRunner

from hermes.errors import HermesError
from hermes.storage.clicks import record_click
from hermes.storage.records import require_user


@pytest.fixture
def alice(db, add_items):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    ids = add_items(
        [
            {
                "title": f"Paper {k}: on [streams] / halos?",
                "summary": f"Summary {k}.",
                "arxiv_id": f"2401.0000{k}",
                "url": f"https://arxiv.org/abs/2401.0000{k}",
                "tags": ["astro-ph.ga", "dark matter"],
                "content_type": "paper",
            }
            for k in range(1, 7)
        ]
    )
    cs.record_progress(db, "alice", ids[0], 1.0)
    cs.add_highlight(db, "alice", ids[1], "A passage.", note="why it matters")
    cs.favorite(db, "alice", ids[2])
    cs.favorite(db, "alice", ids[3])
    return db, require_user(db, "alice"), ids


def snapshot(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def mtimes(folder) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


def notes(folder) -> list[str]:
    return sorted(p.name for p in folder.glob("*.md"))


def test_full_then_incremental_ends_identical_to_a_fresh_full_sync(alice, tmp_path):
    db, user, ids = alice
    a = tmp_path / "vault-a"
    first = vault.sync(db, user, a)
    assert first.full and len(first.written) == 4 and len(notes(a)) == 4

    record_click(db, user["id"], ids[4], True, "ui")  # a like: not corpus membership
    cs.add_highlight(db, "alice", ids[0], "New highlight.")  # same facet, new content
    cs.add_note(db, "alice", ids[1], "A note.")
    cs.favorite(db, "alice", ids[3], on=False)  # tombstone: note removed
    cs.record_progress(db, "alice", ids[2], 0.8)  # saved -> experienced (moves)
    cs.favorite(db, "alice", ids[5])  # new saved item
    h = cs.add_highlight(db, "alice", ids[4], "Passing.")  # added then removed again
    cs.delete_highlight(db, "alice", h["highlight_id"])

    second = vault.sync(db, user, a)
    assert not second.full and "membership changes" in second.reason
    assert len(second.removed) == 1 and "2401.00004" in second.removed[0]
    assert len(second.written) == 4  # ids 0 and 1 (content), 2 (moved), 5 (new)
    b = tmp_path / "vault-b"
    vault.sync(db, user, b)
    assert snapshot(a) == snapshot(b)

    moved = next(p for p in a.glob("*2401.00003*"))
    assert "facet: experienced" in moved.read_text() and "hermes/experienced" in moved.read_text()
    assert "> New highlight." in next(a.glob("*2401.00001*")).read_text()


def test_a_second_run_writes_nothing(alice, tmp_path):
    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    before = mtimes(folder)
    again = vault.sync(db, user, folder)
    assert again.written == [] and again.removed == [] and mtimes(folder) == before
    rebuilt = vault.sync(db, user, folder, rebuild=True)
    assert rebuilt.full and rebuilt.written == [] and mtimes(folder) == before


def test_a_renamed_persona_keeps_syncing_into_its_folder(alice, tmp_path):
    """The folder records the persona's id: ``rename_persona`` keeps the person's notes
    where they are (it was refused by name before)."""
    from hermes.facekit.terminal import run_tool

    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    before = snapshot(folder)
    assert run_tool(db, "rename_persona", name="alice", new_name="research")["ok"]
    again = vault.sync(db, require_user(db, "research"), folder)
    assert again.written == [] and again.removed == [] and again.user == "research"
    assert json.loads((folder / vault.CURSOR).read_text())["user"] == "research"
    assert {k: v for k, v in snapshot(folder).items() if k != vault.CURSOR} == {
        k: v for k, v in before.items() if k != vault.CURSOR
    }


def test_a_hand_edited_note_survives(alice, tmp_path):
    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    note = next(folder.glob("*2401.00002*"))
    mine = "My own thoughts.\n\n- [[Another note]]\n"
    note.write_text(note.read_text() + mine)
    cs.add_note(db, "alice", ids[1], "From hermes.")
    report = vault.sync(db, user, folder)
    text = note.read_text()
    assert note.name in report.written and "From hermes." in text and text.endswith(vault.MARKER + "\n" + mine)
    # The item leaves the corpus: the note stays, untouched, because the person wrote in it.
    cs.delete_highlight(db, "alice", 1)
    cs.delete_note(db, "alice", 1)
    before = note.read_bytes()
    report = vault.sync(db, user, folder)
    assert report.kept == [note.name] and note.read_bytes() == before
    assert str(ids[1]) not in json.loads((folder / vault.CURSOR).read_text())["notes"]
    # ...and when it comes back, hermes's part is rewritten above the person's.
    cs.add_highlight(db, "alice", ids[1], "Back again.")
    vault.sync(db, user, folder)
    assert "Back again." in note.read_text() and note.read_text().endswith(mine)


def test_a_note_without_its_marker_is_left_alone(alice, tmp_path):
    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    note = next(folder.glob("*2401.00001*"))
    note.write_text("I rewrote this note entirely.\n")
    cs.add_note(db, "alice", ids[0], "New.")
    report = vault.sync(db, user, folder)
    assert report.conflicts == [note.name] and note.read_text() == "I rewrote this note entirely.\n"


def test_a_trimmed_log_falls_back_to_a_full_pass(alice, tmp_path):
    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text("[corpus]\nlog_retention = 2\n")
    cs.favorite(db, "alice", ids[2], on=False)
    for k in (4, 5):
        cs.favorite(db, "alice", ids[k])
    report = vault.sync(db, user, folder)
    assert report.full and "trimmed" in report.reason
    fresh = tmp_path / "fresh"
    vault.sync(db, user, fresh)
    assert snapshot(folder) == snapshot(fresh)


def test_front_matter_is_yaml_and_names_are_safe(alice, tmp_path):
    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    for path in folder.glob("*.md"):
        assert "/" not in path.name and "?" not in path.name and "[" not in path.name
        head = path.read_text().split("---\n")[1]
        meta = yaml.safe_load(head)
        assert meta["title"].startswith("Paper ") and meta["arxiv"].startswith("2401.")
        assert meta["tags"][0].startswith("hermes/") and "dark-matter" in meta["tags"]
        assert meta["key"] == f"arxiv-{meta['arxiv']}" and meta["facet"] in ("experienced", "saved")
        assert str(meta["published"])[:4].isdigit()


def test_refusals(alice, tmp_path):
    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    db.execute("INSERT INTO users (name) VALUES ('bob')")
    with pytest.raises(HermesError, match="synced for persona 'alice'"):
        vault.sync(db, require_user(db, "bob"), folder)
    # a folder written before the persona's id was recorded says how to adopt a rename
    cursor = folder / vault.CURSOR
    state = json.loads(cursor.read_text())
    cursor.write_text(json.dumps({k: v for k, v in state.items() if k != "user_id"}))
    with pytest.raises(HermesError, match=r'renamed .alice. to .bob., set "user"'):
        vault.sync(db, require_user(db, "bob"), folder)
    cursor.write_text(json.dumps(state))
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(HermesError, match="is a file"):
        vault.sync(db, user, tmp_path / "file.md")
    # A tampered cursor cannot make sync delete outside the folder.
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    cursor = json.loads((folder / vault.CURSOR).read_text())
    cursor["notes"]["999"] = {"file": "../precious.txt", "sig": "x"}
    (folder / vault.CURSOR).write_text(json.dumps(cursor))
    vault.sync(db, user, folder)
    assert outside.read_text() == "keep me"


def test_cli_sync(alice, db_path, tmp_path):
    from hermes.cli.app import build_app

    folder = tmp_path / "Vault" / "hermes"
    r = CliRunner().invoke(build_app(), ["corpus", "sync", "alice", str(folder), "--db", str(db_path)])
    assert r.exit_code == 0, r.output
    assert "4 notes written" in r.stdout and len(notes(folder)) == 4
    r = CliRunner().invoke(
        build_app(), ["corpus", "sync", "alice", str(folder), "--facet", "saved", "--db", str(db_path), "--json"]
    )
    out = json.loads(r.stdout)
    assert r.exit_code == 0 and out["full"] and len(out["removed"]) == 2 and len(notes(folder)) == 2
    r = CliRunner().invoke(build_app(), ["corpus", "sync", "nobody", str(folder), "--db", str(db_path)])
    assert r.exit_code == 1 and "unknown persona" in r.output
    assert not any(name.endswith(".tmp") for name in os.listdir(folder))


def test_a_title_with_tex_math_gets_a_readable_name_and_old_notes_move(db, add_items, tmp_path, monkeypatch):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    user = require_user(db, "alice")
    (item,) = add_items([{"title": r"On the $\ell_1$ Penalty  for $5", "arxiv_id": "2309.08600"}])
    cs.favorite(db, "alice", item)
    folder = tmp_path / "v"
    # A folder synced by the previous hermes: the backslash became a gap in the name.
    old_name = r"On the $ ell_1$ Penalty for $5 (arxiv-2309.08600).md"
    with monkeypatch.context() as m:
        m.setattr(vault, "file_name", lambda r: old_name)
        m.setattr(vault, "LAYOUT", 1)
        vault.sync(db, user, folder)
    mine = "My thoughts on sparsity.\n"
    (folder / old_name).write_text((folder / old_name).read_text() + mine)

    report = vault.sync(db, user, folder)
    new_name = "On the ℓ₁ Penalty for $5 (arxiv-2309.08600).md"  # a price keeps its $
    assert report.full and "layout" in report.reason and report.written == [new_name]
    assert notes(folder) == [new_name] and (folder / new_name).read_text().endswith(vault.MARKER + "\n" + mine)
    assert json.loads((folder / vault.CURSOR).read_text())["notes"][str(item)]["file"] == new_name
    assert vault.sync(db, user, folder).written == []  # stable from then on


def test_a_facet_change_says_which_notes_left_the_facet_and_keeps_the_persons_text(alice, db_path, tmp_path):
    from hermes.cli.app import build_app

    db, user, ids = alice
    folder = tmp_path / "v"
    vault.sync(db, user, folder)
    read = next(folder.glob("*2401.00001*"))
    mine = "My own text.\n"
    read.write_text(read.read_text() + mine)
    cs.favorite(db, "alice", ids[3], on=False)  # this one does leave the corpus
    r = CliRunner().invoke(
        build_app(), ["corpus", "sync", "alice", str(folder), "--facet", "saved", "--db", str(db_path), "--json"]
    )
    out = json.loads(r.stdout)
    assert r.exit_code == 0 and out["kept"] == [read.name] and read.read_text().endswith(mine)
    assert len(out["removed"]) == 2 and sorted(out["outside_facet"]) == sorted([read.name, out["removed"][0]])
    assert "the facets changed from experienced and saved to saved" in out["message"]
    assert (
        "2 removed (1 whose item is still in your corpus but not in the saved facet; 1 whose item left the corpus)"
    ) in out["message"]
    assert (
        "Kept 1 note (1 whose item is still in your corpus but not in the saved facet) because you "
        "wrote below the marker line"
    ) in out["message"]


TRIAL = {  # title -> the name hermes gave its note before names came from hermes.text.latex
    r"\emph{In vivo} calcium imaging decoded with transformers": "emph{In vivo} calcium imaging decoded with transformers",
    r"Sparse autoencoders find interpretable features in $\mathcal{O}(n^2)$ time": "Sparse autoencoders find interpretable features in mathcalO(n 2) time",
    r"Scaling laws: loss $\propto N^{-\alpha}$": "Scaling laws loss propto N -alpha",
}


def test_latex_titles_name_notes_as_people_read_them_and_old_notes_move(db, add_items, tmp_path, monkeypatch):
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    user = require_user(db, "alice")
    ids = add_items(
        [
            {"title": t, "arxiv_id": f"2507.1000{k}", "url": f"https://arxiv.org/abs/2507.1000{k}"}
            for k, t in enumerate(TRIAL)
        ]
    )
    for item in ids:
        cs.favorite(db, "alice", item)
    folder = tmp_path / "v"
    old = {f"arxiv-2507.1000{k}": f"{name} (arxiv-2507.1000{k}).md" for k, name in enumerate(TRIAL.values())}
    with monkeypatch.context() as m:  # the folder as the previous hermes left it
        m.setattr(vault, "file_name", lambda r: old[r["key"]])
        m.setattr(vault, "readable", lambda text: text)
        m.setattr(vault, "LAYOUT", 2)
        vault.sync(db, user, folder)
    mine = "My reading notes.\n"
    for name in old.values():
        (folder / name).write_text((folder / name).read_text() + mine)

    report = vault.sync(db, user, folder)
    new = [
        "In vivo calcium imaging decoded with transformers (arxiv-2507.10000).md",
        "Scaling laws loss ∝ N (-α) (arxiv-2507.10002).md",
        "Sparse autoencoders find interpretable features in 𝒪(n²) time (arxiv-2507.10001).md",
    ]
    assert report.full and sorted(report.written) == new and notes(folder) == new
    note = (folder / new[0]).read_text()
    assert note.endswith(vault.MARKER + "\n" + mine)  # the person's text moved with the note
    assert "\n# [In vivo calcium imaging decoded with transformers](<https://arxiv.org/abs/2507.10000>)\n" in note
    # The front matter keeps the title as stored, exact, for tools that match on it.
    assert yaml.safe_load(note.split("---\n")[1])["title"] == next(iter(TRIAL))
    before = mtimes(folder)
    assert vault.sync(db, user, folder).written == [] and mtimes(folder) == before
