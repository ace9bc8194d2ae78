"""The ingest's one progress display: on a terminal one bar whose label names the stage and
the slow step inside it (no second spinner drawing over it); off a terminal a line per
stage and a count every few seconds."""

from __future__ import annotations

import io
import subprocess

import pytest
from ingest_server import rss
from process_support import child_env, hermes_command

from hermes.cli.progress import StageProgress
from hermes.facekit import status
from hermes.facekit.terminal import StatusLine


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_a_line_per_stage_and_a_periodic_count():
    out, clock = io.StringIO(), Clock()
    with StageProgress(out, live=False, clock=clock) as progress:
        progress("fetch", 1, 3)
        clock.now = 4
        progress("fetch", 2, 3)  # under EVERY seconds since the last line: nothing
        clock.now = 12
        progress("fetch", 3, 3)
        progress("embed", 0, 500)
        for done, at in [(100, 15), (200, 23), (300, 26), (500, 40)]:
            clock.now = at
            progress("embed", done, 500)
    assert out.getvalue().splitlines() == [
        "hermes: fetching feeds: 3 feeds …",
        "hermes: fetched 3 of 3 feeds (12 s)",
        "hermes: embedding new items: 500 items …",
        "hermes: embedded 200 of 500 items",  # 11 s after the stage's first line
        "hermes: embedded 500 of 500 items (28 s)",
    ]


def test_on_a_terminal_the_slow_step_is_in_the_bar_not_a_second_display():
    out = Terminal()
    with StageProgress(out, live=True) as progress:
        with status.listen(StatusLine(out)), status.listen(progress.step):
            progress("embed", 0, 5)
            with status.step("loading the embedding model through sentence-transformers"):
                assert progress.description == (
                    "Embedding new items · loading the embedding model through sentence-transformers"
                )
                progress.bar.refresh()
                drawn = out.getvalue()
            assert progress.description == "Embedding new items"
            progress("embed", 5, 5)
            progress("tag", 1, 5)
            assert len(progress.bar.tasks) == 1  # one bar: a new stage replaces the last
    assert "Embedding new items · loading the embedding model" in drawn
    assert not any(ch in drawn for ch in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")  # no spinner of the status line
    assert "hermes:" not in out.getvalue()


@pytest.fixture
def feed_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "good.xml").write_bytes(
        rss([{"title": f"Post {k}", "link": f"https://e.org/{k}"} for k in range(4)], title="Good feed")
    )
    (home / "feeds.toml").write_text('[[feeds]]\nurl = "good.xml"\n', encoding="utf-8")
    return home


def test_an_ingest_off_a_terminal_says_each_stage(feed_home, tmp_path):
    done = subprocess.run(
        [*hermes_command(), "ingest", "--db", str(tmp_path / "h.db")],
        env=child_env(feed_home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "hermes: fetching feeds: 1 feed …" in done.stderr
    assert "hermes: fetched 1 of 1 feed" in done.stderr
    assert "hermes: embedding new items: 4 items …" in done.stderr
    assert "hermes: embedded 4 of 4 items" in done.stderr
    assert "━" not in done.stderr + done.stdout


def test_an_ingest_on_a_terminal_draws_no_lines(feed_home, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    cmd = hermes_command()
    child = pexpect.spawn(
        cmd[0],
        [*cmd[1:], "ingest", "--db", str(tmp_path / "h.db")],
        env=child_env(feed_home),
        encoding="utf-8",
        timeout=120,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "4 new items" in child.before
    assert "hermes: fetching" not in child.before and "hermes: embedded" not in child.before
