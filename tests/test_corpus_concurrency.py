"""Several processes write corpus signals to one database file at once.

Afterwards, for every persona: the revisions are exactly 1..N (no gap, no duplicate), every
change a writer was told about has its own revision, replaying the change log never adds
a present item or removes an absent one (no re-add, no phantom tombstone) and ends at the
stored membership, which in turn equals the membership recomputed from the raw signals;
and no write was lost (what was sent equals what is stored).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
from collections import Counter

PROCESSES = 4
WRITES = 200
USERS = ("alice", "bob")
N_ITEMS = 10


def _run(db_path, home, seed, item_ids, barrier, results):
    try:
        results.put((seed, _worker(db_path, home, seed, item_ids, barrier)))
    except BaseException as exc:  # report, do not hang the parent
        results.put((seed, f"{type(exc).__name__}: {exc}"))
        raise


def _worker(db_path: str, home: str, seed: int, item_ids: list[int], barrier=None) -> dict:
    os.environ["HERMES_HOME"] = home
    os.environ["HERMES_EMBEDDER"] = "hash"
    os.environ["HERMES_LOAD_ENTRYPOINTS"] = "0"
    os.environ.pop("HERMES_PLUGINS", None)
    from hermes_corpus import signals as cs

    from hermes.errors import NotFound
    from hermes.storage.db import get_db

    rng = random.Random(seed)
    db = get_db(db_path)
    if barrier is not None:
        barrier.wait(timeout=120)  # every process starts writing at the same moment
    sent = {
        "opens": Counter(),
        "max_fraction": {},
        "highlights_added": [],
        "highlights_deleted": [],
        "notes_added": [],
        "notes_deleted": [],
        "changes": [],
        "refused_deletes": 0,
        "ops": 0,
    }
    try:
        for _ in range(WRITES):
            user = rng.choice(USERS)
            item = rng.choice(item_ids)
            op = rng.choices(
                ["progress", "reopen", "highlight", "unhighlight", "note", "unnote", "favorite", "unfavorite"],
                weights=[3, 1, 2, 2, 1, 1, 2, 2],
            )[0]
            key = f"{user}:{item}"
            try:
                if op == "progress":
                    # Mostly below the threshold: a heard item stays experienced for good,
                    # and the test wants membership to keep changing.
                    fraction = rng.choice([0.0, 0.1, 0.2, 0.29] * 6 + [0.3, 1.0])
                    r = cs.record_progress(db, user, item, fraction)
                    sent["opens"][key] += 1
                    sent["max_fraction"][key] = max(sent["max_fraction"].get(key, 0.0), fraction)
                elif op == "reopen":  # a re-read that goes no further
                    r = cs.record_progress(db, user, item, 0.0)
                    sent["opens"][key] += 1
                    sent["max_fraction"].setdefault(key, 0.0)
                elif op == "highlight":
                    r = cs.add_highlight(db, user, item, f"passage {rng.random()}")
                    sent["highlights_added"].append(r["highlight_id"])
                elif op == "note":
                    r = cs.add_note(db, user, item, f"note {rng.random()}")
                    sent["notes_added"].append(r["note_id"])
                elif op in ("unhighlight", "unnote"):
                    table, fn, bucket = (
                        ("corpus_highlights", cs.delete_highlight, "highlights_deleted")
                        if op == "unhighlight"
                        else ("corpus_notes", cs.delete_note, "notes_deleted")
                    )
                    row = db.execute(
                        f"SELECT id FROM {table} WHERE user_id = (SELECT id FROM users WHERE name = ?) "
                        "ORDER BY random() LIMIT 1",
                        [user],
                    ).fetchone()
                    if row is None:
                        continue
                    r = fn(db, user, row[0])  # may lose the race to another process
                    sent[bucket].append(row[0])
                else:
                    r = cs.favorite(db, user, item, on=(op == "favorite"))
            except NotFound:
                sent["refused_deletes"] += 1
                continue
            sent["ops"] += 1
            sent["changes"] += [(user, c["revision"], c["kind"], c["facet"], c["item_id"]) for c in r["changes"]]
    finally:
        db.conn.close()
    return sent


def test_concurrent_writers_keep_the_log_exact(tmp_path, db, db_path, add_items):
    from hermes_corpus import membership

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("[corpus]\nlog_retention = 100000\n")
    db.execute("INSERT INTO users (name) VALUES ('alice'), ('bob')")
    item_ids = add_items([{"title": f"item {k}"} for k in range(N_ITEMS)])

    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [
        ctx.Process(target=_run, args=(str(db_path), str(home), seed, item_ids, barrier, queue))
        for seed in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    try:
        got = dict(queue.get(timeout=300) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    failures = {seed: r for seed, r in got.items() if isinstance(r, str)}
    assert not failures, failures
    results = [got[seed] for seed in sorted(got)]
    # The writers really interleaved: some persona's revisions alternate between processes.
    owner = {(c[0], c[1]): seed for seed, r in got.items() for c in r["changes"]}
    switches = sum(owner[(u, k)] != owner[(u, k + 1)] for (u, k) in owner if (u, k + 1) in owner)
    assert switches > 0

    assert sum(r["ops"] for r in results) + sum(r["refused_deletes"] for r in results) > 0
    users = {name: uid for uid, name in db.execute("SELECT id, name FROM users")}
    reported = [c for r in results for c in r["changes"]]
    for name, uid in users.items():
        revision, trimmed = membership.revision_state(db, uid)
        assert trimmed == 0
        log = db.execute(
            "SELECT revision, kind, facet, item_id FROM corpus_log WHERE user_id = ? ORDER BY revision", [uid]
        ).fetchall()
        # Revisions exactly 1..N, and each reported change is the logged one.
        assert [row[0] for row in log] == list(range(1, revision + 1))
        mine = sorted(c[1:] for c in reported if c[0] == name)
        assert mine == [tuple(row) for row in log]
        # Replay: no re-add, no phantom tombstone, ends at the stored membership.
        state: set[tuple[str, int]] = set()
        for _rev, kind, facet, item in log:
            if kind == "added":
                assert (facet, item) not in state, f"re-add of {facet} {item} for {name}"
                state.add((facet, item))
            else:
                assert (facet, item) in state, f"phantom tombstone of {facet} {item} for {name}"
                state.remove((facet, item))
        stored = set(db.execute("SELECT facet, item_id FROM corpus_membership WHERE user_id = ?", [uid]).fetchall())
        assert state == stored
        # ... which is what the raw signals say now.
        recomputed = {
            (f, item)
            for item in membership.touched_items(db, uid)
            for f in membership.facets_for(membership.item_state(db, uid, item), 0.3)
        }
        assert stored == recomputed

    # No write lost: what was sent is what is stored.
    opens, fractions = Counter(), {}
    for r in results:
        opens.update(r["opens"])
        for key, f in r["max_fraction"].items():
            fractions[key] = max(fractions.get(key, 0.0), f)
    stored_progress = {
        f"{name}:{item}": (o, f)
        for name, item, o, f in db.execute(
            "SELECT u.name, p.item_id, p.opens, p.max_fraction FROM corpus_progress p JOIN users u ON u.id = p.user_id"
        )
    }
    assert {k: v[0] for k, v in stored_progress.items()} == dict(opens)
    assert {k: v[1] for k, v in stored_progress.items() if k in fractions} == fractions
    for kind in ("highlights", "notes"):
        added = [i for r in results for i in r[f"{kind}_added"]]
        deleted = [i for r in results for i in r[f"{kind}_deleted"]]
        assert len(added) == len(set(added))
        assert len(deleted) == len(set(deleted)), "a row was deleted twice"
        table = f"corpus_{kind}"
        assert {row[0] for row in db.execute(f"SELECT id FROM {table}")} == set(added) - set(deleted)
