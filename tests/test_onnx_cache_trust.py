"""The ONNX model cache is not trusted by its name (issue 33, case 4): the file's own hash is
recorded when hermes makes it, its owner and mode are checked, and a copy that fails either
is made again with one line saying why; making it writes one line, not the exporter's
hundreds (``INFO Removed 22 unused nodes`` …) into ``hermes serve``'s stderr."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys

import pytest

from hermes.onnx_embed import artifact


@pytest.fixture
def cache(tmp_path, monkeypatch):
    weights = tmp_path / "weights"
    weights.mkdir()
    for name in artifact.SOURCE_FILES:
        (weights / name).write_bytes(name.encode() * 100)
    monkeypatch.setattr(artifact, "weights_dir", lambda: weights)
    monkeypatch.setenv("HERMES_MODEL_CACHE", str(tmp_path / "cache"))
    made = []

    def export(weights, out):  # talks like the real exporter does
        made.append(out)
        print("[torch.onnx] Obtain model graph for `SentenceEmbedding([...]` with `torch.export.export`...")
        for n in range(300):
            logging.getLogger("onnx_ir.passes.common.unused_removal").info("Removed %s unused nodes", n)
        logging.getLogger("torch.onnx._internal.exporter").info("Translate the graph into ONNX...")
        out.write_bytes(b"the real graph")
        return {"verify_min_cosine": 1.0}

    monkeypatch.setattr(artifact, "export_onnx", export)
    return made


def test_the_files_own_hash_is_recorded_and_the_copy_is_private(cache):
    path = artifact.prepare(announce=False)
    meta = json.loads((path.parent / artifact.META_FILE).read_text())
    assert meta["onnx_sha256"] == hashlib.sha256(b"the real graph").hexdigest()
    assert path.stat().st_mode & 0o022 == 0 and path.parent.stat().st_mode & 0o077 == 0
    assert artifact.cached_model() == path and len(cache) == 1


def test_a_planted_model_is_not_used_but_made_again(cache, caplog):
    path = artifact.prepare(announce=False)
    path.write_bytes(b"a graph mapping every text to one vector")  # meta.json left as it was
    assert artifact.cached_model() is None
    with caplog.at_level(logging.WARNING, logger="hermes.onnx_embed.artifact"):
        assert artifact.prepare(announce=False) == path
    assert path.read_bytes() == b"the real graph" and len(cache) == 2
    assert [r.getMessage() for r in caplog.records if "not using" in r.getMessage()] == [
        f"hermes: not using the cached ONNX model ({path} is not the file hermes made (its "
        f"sha256 differs from meta.json's)); making it again"
    ]


def test_a_copy_from_before_the_hash_was_recorded_is_made_again(cache):
    path = artifact.prepare(announce=False)
    meta_file = path.parent / artifact.META_FILE
    meta = json.loads(meta_file.read_text())
    del meta["onnx_sha256"]
    meta_file.write_text(json.dumps(meta))
    assert artifact.cached_model() is None
    assert artifact.prepare(announce=False) == path and len(cache) == 2


@pytest.mark.parametrize("which", ["model", "meta", "directory"])
def test_a_copy_others_can_change_is_made_again(cache, which):
    path = artifact.prepare(announce=False)
    target = {"model": path, "meta": path.parent / artifact.META_FILE, "directory": path.parent}[which]
    os.chmod(target, 0o777 if which == "directory" else 0o666)
    assert artifact.cached_model() is None
    assert artifact.prepare(announce=False) == path and len(cache) == 2
    assert artifact.cached_model() == path


def test_a_copy_another_user_owns_is_made_again(cache, monkeypatch):
    path = artifact.prepare(announce=False)
    monkeypatch.setattr(artifact.os, "geteuid", lambda: os.getuid() + 1)  # we are someone else now
    assert artifact.check_cached(path.parent, artifact.source_checksum())[1].endswith("belongs to another user")


def test_making_the_model_writes_one_line_to_stderr(cache, capsys):
    # a host whose logging is at INFO (the MCP SDK sets that up in `hermes serve`)
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        artifact.prepare()
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    out, err = capsys.readouterr()
    assert out == ""  # stdout is the MCP stream
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "making the ONNX copy" in lines[0], lines[:5]
    # afterwards the exporter's loggers are back, at WARNING at least (torch logs statistics at exit)
    assert logging.getLogger("onnx_ir.passes.common.unused_removal").level == logging.WARNING
