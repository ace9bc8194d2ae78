"""`hermes demo` runs the whole loop offline on the bundled samples."""

from typer.testing import CliRunner

from hermes.cli.app import build_app


def test_demo_runs_offline_and_ends_with_a_digest(tmp_path):
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(build_app(), ["demo", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "new" in result.output and "bar" in result.output and " match)" in result.output
    # the lines .ci/wheel_smoke.py looks for in the installed wheel's demo
    for expected in ("Top of the ranked feed", "Why #", "Digest"):
        assert expected in result.output
    # a second run ingests nothing new and still succeeds
    again = CliRunner().invoke(build_app(), ["demo", "--db", str(db)])
    assert again.exit_code == 0, again.output
    assert "unchanged" in again.output


def test_the_demo_hint_names_the_command_as_this_shell_can_run_it(tmp_path, monkeypatch):
    """`make demo` runs .venv/bin/hermes, which is not on PATH: the hint gives its path."""
    from hermes.cli.core import command_name

    script = tmp_path / "venv" / "bin" / "hermes"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr("sys.argv", [str(script), "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert command_name() == str(script)
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    assert command_name() == "hermes"
    monkeypatch.setattr("sys.argv", ["/usr/bin/python", "-m", "hermes"])
    assert command_name() == "hermes"


def test_the_demo_makes_the_onnx_copy_its_torch_ingest_did_not_need(tmp_path, monkeypatch):
    """The demo ingests 300 texts through torch, so a trial's next `hermes ingest` stopped
    for the ONNX export ("once, about half a minute"). The demo makes it while the person
    expects to wait; a copy that exists is not made again."""
    from hermes.onnx_embed import artifact, choice

    made = []
    monkeypatch.setattr(artifact, "cached_model", lambda: None)
    monkeypatch.setattr(artifact, "prepare", lambda announce=True: made.append(announce))
    monkeypatch.setattr(choice, "onnx_installed", lambda: True)
    default = choice.DefaultEmbedder("auto")
    lines = []
    assert default.prepare_small_calls(lines.append) is True
    assert made == [False] and "Making the ONNX copy" in lines[0]
    monkeypatch.setattr(artifact, "cached_model", lambda: tmp_path / "model.onnx")
    assert default.prepare_small_calls(lines.append) is False and made == [False]
    assert choice.DefaultEmbedder("torch").prepare_small_calls(lines.append) is False

    # the command calls it with the active embedder (here the test embedder has none)
    monkeypatch.setattr("hermes.embed.get_embedder", lambda: default)
    monkeypatch.setattr("hermes.cli.core.run_demo", lambda db, say: None)
    monkeypatch.setattr(artifact, "cached_model", lambda: None)
    result = CliRunner().invoke(build_app(), ["demo", "--db", str(tmp_path / "d.db")])
    assert result.exit_code == 0, result.output
    assert "Making the ONNX copy" in result.output and made == [False, False]
