"""A sample of feedparser's corpus (every ~9th of 2,123 files, all kinds) over loopback HTTP
with each file's declared headers: no unhandled exception, every entry feedparser reads is
stored (or the file is one feedparser itself calls ill-formed), nothing stored or shown on
the feed page would run script. The whole corpus: benchmarks/hardening/corpus_http.py.
(tests/test_ingest_corpus.py walks every file from disk and serves the Header: files.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "hardening"))

import corpus_http

pytestmark = pytest.mark.skipif(
    not corpus_http.CORPUS.is_dir(),
    reason=f"feedparser's test corpus is not at {corpus_http.CORPUS} (it ships with the shared "
    "test data, not with hermes)",
)


def test_sampled_corpus_over_http_stores_what_feedparser_reads_and_nothing_active():
    lines: list[str] = []
    result = corpus_http.run(sample=240, pages=True, out=lines.append)
    report = "\n".join(lines)
    assert result["problems"] == [], report
    figures = result["figures"]
    assert figures["files served over HTTP"] == 240
    assert (
        figures["items rendered on feed pages and audited"]
        == figures["items stored (after cross-file dedupe by guid / arXiv id)"]
        > 10
    ), report
