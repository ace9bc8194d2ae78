"""While the model loads the CLI is not silent: a spinner on a terminal, a line on stderr
otherwise (with how long the step took); a fast step shows nothing."""

from __future__ import annotations

import io
import time
from contextlib import nullcontext

import numpy as np
import pytest
from typer.testing import CliRunner

from hermes.cli.app import build_app
from hermes.embed import HashEmbedder
from hermes.facekit import status
from hermes.facekit.terminal import StatusLine
from hermes.hookspecs import hookimpl
from hermes.storage.records import create_user


class SlowEmbedder(HashEmbedder):
    """The hash embedder, with a model that takes a while to load (like the real one)."""

    def __init__(self, seconds: float):
        self.seconds, self.loaded = seconds, False

    def embed(self, texts):
        if not self.loaded:
            time.sleep(self.seconds)
            self.loaded = True
        return super().embed(texts)


class TTY(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def slow_model(pm):
    embedder = SlowEmbedder(0.8)

    class Plugin:
        @hookimpl(tryfirst=True)
        def hermes_embedder(self):
            return embedder

    pm.register(Plugin(), name="slow_model")
    return embedder


def test_a_slow_first_ranking_says_what_it_is_doing_on_stderr(db, db_path, add_items, slow_model):
    slow_model.loaded = True  # the items were embedded already; only the interests are new
    add_items([{"title": "quantum codes"}])
    slow_model.loaded = False
    create_user(db, "ann", "quantum error correction")
    result = CliRunner().invoke(build_app(), ["feed", "ann", "--all", "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    lines = [l for l in result.stderr.splitlines() if l.startswith("hermes:")]
    assert lines[0].startswith("hermes: embedding the interests of ann") and lines[0].endswith("…")
    assert lines[-1].startswith("hermes: … embedding the interests of ann: ") and lines[-1].endswith(" s")
    assert "hermes:" not in result.stdout  # stdout stays the answer (and --json stays JSON)


def test_a_fast_step_shows_nothing(db, db_path, add_items):
    add_items([{"title": "x"}])
    create_user(db, "ann", "x")
    result = CliRunner().invoke(build_app(), ["feed", "ann", "--all", "--db", str(db_path)])
    assert result.exit_code == 0 and "hermes:" not in result.stderr


def test_on_a_terminal_a_spinner_shows_the_innermost_step():
    stream = TTY()
    line = StatusLine(stream)
    with status.listen(line):
        with status.step("embedding the interests of ann"):
            with status.step("loading the embedding model"):
                time.sleep(0.8)
                assert line.spinner is not None and line.spinner.status == "loading the embedding model"
            assert line.spinner.status == "embedding the interests of ann"
    assert "embedding the interests of ann" in stream.getvalue()  # drawn on the terminal
    assert line.spinner is None and line.stack == []  # stopped and cleared


def test_without_a_listener_a_step_says_nothing(capsys):
    """No listener (an MCP server, a script): a step neither prints nor fails."""
    with status.step("anything"):
        pass
    assert capsys.readouterr() == ("", "")


def test_the_real_embedder_announces_its_model_load(monkeypatch):
    from hermes.embed import MiniLMEmbedder

    seen = []

    class Recorder:
        def __call__(self, message):
            seen.append(message)
            return nullcontext()

    class FakeModel:
        def encode(self, texts, **kwargs):
            return np.zeros((len(texts), 384), dtype=np.float32)

    import sys
    import types

    # No torch here: the module the embedder imports is replaced by one building a fake model.
    fake = types.SimpleNamespace(SentenceTransformer=lambda *a, **k: FakeModel())
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    with status.listen(Recorder()):
        MiniLMEmbedder().load()
    assert seen and seen[0].startswith("loading the embedding model")
