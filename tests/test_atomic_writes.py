"""Writing files in folders others can write to (issue 33, case 5): the temporary file has an
unpredictable name and is created with O_EXCL | O_NOFOLLOW, so a symbolic link planted
under the name hermes used (``.<name>.<pid>.tmp``) no longer redirects an export, a vault
note or the sync cursor into another file."""

from __future__ import annotations

import os
import stat

import pytest
from typer.testing import CliRunner

from hermes.files import write_atomic


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "elsewhere" / "precious.txt"
    path.parent.mkdir()
    path.write_text("the other file")
    return path


def plant(folder, name, victim):
    """The links an attacker could plant for every name hermes used to pick."""
    for pid in {os.getpid(), os.getppid()}:
        (folder / f".{name}.{pid}.tmp").symlink_to(victim)


def test_a_planted_link_at_the_old_temporary_name_is_not_written_through(tmp_path, victim):
    shared = tmp_path / "shared"
    shared.mkdir()
    plant(shared, "export.bib", victim)
    write_atomic(shared / "export.bib", b"@article{x}")
    assert victim.read_text() == "the other file"
    assert (shared / "export.bib").read_bytes() == b"@article{x}"
    assert sorted(p.name for p in shared.iterdir() if not p.is_symlink()) == ["export.bib"]


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path, victim):
    target = tmp_path / "note.md"
    target.symlink_to(victim)
    write_atomic(target, b"# note")
    assert not target.is_symlink() and target.read_bytes() == b"# note"
    assert victim.read_text() == "the other file"


def test_the_temporary_names_are_unpredictable_and_exclusive(tmp_path, monkeypatch):
    import tempfile

    seen = []
    real = tempfile.mkstemp

    def spy(*args, **kwargs):
        fd, name = real(*args, **kwargs)
        seen.append(name)
        return fd, name

    monkeypatch.setattr(tempfile, "mkstemp", spy)
    for _ in range(2):
        write_atomic(tmp_path / "cursor.json", b"{}")
    assert len(set(seen)) == 2 and all(str(os.getpid()) not in os.path.basename(n) for n in seen)


def test_modes_follow_the_umask_or_the_file_replaced(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    os.chmod(tmp_path / "new.txt", 0o600)
    write_atomic(tmp_path / "new.txt", b"y")
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o600
    write_atomic(tmp_path / "status.json", b"{}", mode=0o600)
    assert stat.S_IMODE((tmp_path / "status.json").stat().st_mode) == 0o600


def test_corpus_export_out_into_a_shared_folder(db, db_path, tmp_path, victim):
    from hermes.cli.app import build_app

    db.execute("INSERT INTO users (name) VALUES ('alice')")
    shared = tmp_path / "shared"
    shared.mkdir()
    plant(shared, "alice.bib", victim)
    r = CliRunner().invoke(
        build_app(),
        ["corpus", "export", "alice", "-f", "bibtex", "--out", str(shared / "alice.bib"), "--db", str(db_path)],
    )
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "the other file" and (shared / "alice.bib").is_file()
