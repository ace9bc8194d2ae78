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


def test_the_demo_ends_with_one_runnable_command_a_line(tmp_path):
    """The hand-off lists each next command on its own line, with the demo's database."""
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(build_app(), ["demo", "--db", str(db)])
    assert result.exit_code == 0, result.output
    tail = result.output.split("Demo database:", 1)[1].splitlines()
    commands = [line.strip() for line in tail if line.startswith("  ") and not line.startswith("      ")]
    assert commands == [
        f"hermes --db {db} feed demo --all",
        f"hermes --db {db} feed demo -i",
        f"hermes web --db {db}",
    ]
