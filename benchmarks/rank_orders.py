"""Top-100 orders of ``rank`` on the 100k archive of bench_rank.py, to compare two versions.

Persona ``bench`` (every component active) and ``new`` (no clicks), then eight fixed clicks,
one at a time, each followed by both rankings (18 rankings); the lists go to a JSON file.
Run it on a copy of the database (it writes clicks) once per version, one version right
after the other, and compare the files (the 7-day window moves with the clock: the synthetic
items' dates are fixed, so runs hours apart rank different candidate sets):

    cp benchmarks/.cache/rank-100000-v1.db /tmp/a.db
    .venv/bin/python benchmarks/rank_orders.py /tmp/a.db /tmp/new.json
    # the other version's tree, e.g. git worktree add /tmp/main main, then from /tmp/main:
    PYTHONPATH=/tmp/main .venv/bin/python benchmarks/rank_orders.py /tmp/b.db /tmp/main.json
    python -c "import json; print(json.load(open('/tmp/new.json')) == json.load(open('/tmp/main.json')))"
"""

import json
import os
import sys

os.environ["HERMES_LOAD_ENTRYPOINTS"] = "0"
import numpy as np

from hermes.contract import CandidateQuery
from hermes.ranking.rank import rank
from hermes.storage.clicks import record_click
from hermes.storage.db import get_db
from hermes.storage.records import require_user

db = get_db(sys.argv[1])
u = require_user(db, "bench")
new = require_user(db, "new")
rng = np.random.default_rng(7)
out = []
for step in range(9):
    if step:
        record_click(db, u["id"], int(rng.integers(1, 100_001)), bool(rng.random() < 0.6), "ui")
    for who in (u, new):
        r = rank(db, who, CandidateQuery(since_days=7, exclude_clicked=True), limit=100)
        out.append(r.item_ids.tolist())
json.dump(out, open(sys.argv[2], "w"))
print("done", sys.argv[2])
