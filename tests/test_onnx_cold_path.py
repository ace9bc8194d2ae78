"""The first ranking after an interests change, in a fresh process: `hermes feed` loads
none of the heavy libraries it does not use (the model's own are tested with the real model
in test_onnx_real_model.py), and the keyphrase tagger reads its stop words without
importing scikit-learn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from hermes.ingest.pipeline import add_feeds, run_ingest, sample_feed_paths
from hermes.storage.records import create_user

#: libraries `hermes feed` must not import: the model's fallback, scikit-learn and what it
#: pulls in, the topic graph's, the web UI's
HEAVY = ("torch", "sentence_transformers", "transformers", "sklearn", "scipy", "networkx", "starlette", "jinja2")

CLI = textwrap.dedent("""
    import atexit, json, sys
    heavy = json.loads(sys.argv[1])
    atexit.register(lambda: print(json.dumps(sorted(m for m in heavy if m in sys.modules)),
                                  file=sys.stderr))
    from hermes.cli.app import main
    sys.argv = ["hermes", *sys.argv[2:]]
    main()
""")


def imported(args: list[str], env: dict | None = None) -> list[str]:
    """The heavy modules a fresh ``hermes ARGS`` process imported."""
    out = subprocess.run(
        [sys.executable, "-c", CLI, json.dumps(HEAVY), *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stderr.strip().splitlines()[-1])


def test_hermes_feed_after_an_interests_change_imports_nothing_heavy(db, db_path):
    add_feeds(db, [(str(p), None) for p in sample_feed_paths()[:2]])
    run_ingest(db)
    create_user(db, "ann", "bread")
    db.execute("UPDATE users SET interests = 'quantum error correction' WHERE name = 'ann'")
    assert imported(["feed", "ann", "--all", "--json", "--db", str(db_path)]) == []
    vec = db.execute("SELECT interests_vec FROM users WHERE name = 'ann'").fetchone()[0]
    assert vec is not None  # the child embedded the new text: the path under test ran


def test_stop_words_are_scikit_learns_list_read_without_importing_it():
    probe = textwrap.dedent("""
        import json, sys
        from hermes.text.language import english_stop_words
        words = english_stop_words()
        print(json.dumps({"sklearn": "sklearn" in sys.modules, "words": sorted(words)}))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert result["sklearn"] is False
    assert set(result["words"]) == set(ENGLISH_STOP_WORDS)
