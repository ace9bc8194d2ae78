"""Every CLI command as a person meets it (issue 36): whole processes, each beside its floor.

Each round runs every command once, in a shuffled order (so a burst of load on the shared
machine falls on no one command), and the figures are medians over the rounds: wall time
and the child's CPU time (user + sys, from ``wait4``; less sensitive to other load than the
wall clock). Every command is compared with the floor the issue names, measured in the same
rounds:

* ``hermes --version``, ``hermes --help`` ≤ 0.2 s; floor ``python -c pass``;
* ``hermes feed NAME`` on a 10,000-item archive ≤ 2× ``python -c 'import numpy, sqlite3'``;
  beside it, the libraries the command is built on imported alone (:data:`STACK_IMPORTS`).

The archive is ``bench_rank.py``'s synthetic one (384-d vectors stored under the model's
name, a persona ``bench`` with 30 clicks and its interests embedded), built once into
benchmarks/.cache/. One ``hermes feed`` runs before the rounds (it writes the matrix
snapshot a first ranking makes); the default embedder is configured (it must not load: the
interests are embedded already), installed plugins are loaded as for a user.

    .venv/bin/python benchmarks/bench_cli.py                  # 9 rounds
    .venv/bin/python benchmarks/bench_cli.py --runs 15 --items 10000
    .venv/bin/python benchmarks/bench_cli.py --before HEAD~1 --after HEAD  # a commit's effect
    .venv/bin/python benchmarks/bench_cli.py --phases 5   # where `hermes feed`'s CPU time goes

``--before REV`` checks REV out into a temporary git worktree and runs every hermes command
a second time with that tree's packages first on ``PYTHONPATH`` (the installed entry points
are the same), in the same shuffled rounds: a change measured against its parent under one
load. ``--after REV`` runs the other side from a worktree too, so uncommitted edits in the
checkout (another session's) are in neither.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def hermes() -> list[str]:
    script = Path(sys.executable).with_name("hermes")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes"]


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (its output discarded)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err}")
    return wall, usage.ru_utime + usage.ru_stime


def child_env() -> dict:
    """This environment for the commands measured, less what would change them: a configured
    embedder or plugin list, and ``PYTHONDONTWRITEBYTECODE`` (set on these machines: every
    module a worktree's side imports was compiled from source in every run, 0.15–0.2 CPU s
    of `hermes feed`, and so was every module edited since the checkout's last cached
    bytecode; an installed hermes has its bytecode)."""
    dropped = ("HERMES_EMBEDDER", "HERMES_PLUGINS", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in dropped}


def archive(n: int) -> Path:
    import bench_rank

    path = bench_rank.CACHE / f"cli-{n}-v{bench_rank.FORMAT}.db"
    if not path.exists():
        bench_rank.CACHE.mkdir(exist_ok=True)
        print(f"building a {n:,}-item archive in {path} …", file=sys.stderr)
        bench_rank.build(path, n)
    return path


def tree_at(rev: str, tmp: Path) -> Path:
    """A directory that, put first on ``PYTHONPATH``, imports hermes and the bundled plugins
    as they were at commit ``rev`` (a detached worktree of this repository, in ``tmp``)."""
    tmp.mkdir()
    tree = tmp / "tree"
    subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
    path = tmp / "path"
    path.mkdir()
    (path / "hermes").symlink_to(tree / "hermes")
    for plugin in (tree / "plugins").iterdir():
        if (plugin / "__init__.py").exists():
            (path / f"hermes_{plugin.name}").symlink_to(plugin)
    return path


#: ``hermes feed bench``'s steps, timed in a fresh process (CPU seconds, one line each)
PHASES = r"""
import json, sys, time
T = time.process_time
marks = [("python start-up + site", T())]
import typer, typer.main; marks.append(("typer", T()))
import hermes.cli.root; marks.append(("hermes.cli.root (the typer app, core commands)", T()))
from hermes import plugins
plugins.registered_plugins(); marks.append(("registering the plugins (their packages, the built-ins)", T()))
plugins.get_plugin_manager(); marks.append(("the tool check", T()))
from hermes.tools import call_tool, find_tool
tool = find_tool("list_feed"); marks.append(("find_tool('list_feed'): hermes_feeds.tools", T()))
import hermes_feeds.cli; marks.append(("hermes_feeds.cli", T()))
from hermes.storage.db import get_db
db = get_db(sys.argv[1]); marks.append(("opening the database", T()))
from hermes.embed import get_embedder
from hermes.ranking.matrix import get_matrix
get_matrix(db, get_embedder().name, get_embedder().dimension)
marks.append(("the matrix (its snapshot, or rows read from SQLite below matrix_store.MIN_ROWS)", T()))
from hermes.facekit import faces
with faces.speaking("cli"):
    call_tool(db, tool, {"user": "bench"}, face="cli")
marks.append(("list_feed (ranking, the matrix in memory)", T()))
print(json.dumps(marks))
"""


def phases(db: Path, runs: int) -> int:
    """Print the median CPU seconds of each of ``hermes feed``'s steps (:data:`PHASES`)."""
    import json

    env = child_env()
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        env.update(HERMES_HOME=str(Path(tmp) / "home"), HF_HUB_OFFLINE="1")
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, "-c", PHASES, str(db)], env=env, check=True, capture_output=True, text=True
            ).stdout
            marks = json.loads(out)
            samples.append([(name, now - (marks[k - 1][1] if k else 0.0)) for k, (name, now) in enumerate(marks)])
    print(f"## `hermes feed bench`'s steps, CPU s, median of {runs} fresh processes\n")
    print("| step | CPU s |\n| --- | --- |")
    for k, (name, _) in enumerate(samples[0]):
        print(f"| {name} | {statistics.median(s[k][1] for s in samples):.3f} |")
    print(f"| total | {statistics.median(sum(x for _, x in s) for s in samples):.3f} |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="rounds (>= 7)")
    ap.add_argument("--items", type=int, default=10_000, help="archive size for `hermes feed`")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--before", metavar="REV", help="also run each hermes command at commit REV")
    ap.add_argument(
        "--after", metavar="REV", help="with --before: the other side at commit REV (default: this checkout)"
    )
    ap.add_argument(
        "--phases", type=int, metavar="RUNS", help="instead: where `hermes feed`'s CPU time goes, step by step"
    )
    args = ap.parse_args(argv)
    db = archive(args.items)
    if args.phases:
        return phases(db, args.phases)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            return measure(args, db, Path(tmp))
        finally:
            for side in ("before", "after"):
                if (Path(tmp) / side / "tree").exists():
                    subprocess.run(
                        [
                            "git",
                            "-C",
                            str(HERE.parent),
                            "worktree",
                            "remove",
                            "--force",
                            str(Path(tmp) / side / "tree"),
                        ],
                        check=False,
                    )


#: the libraries ``hermes feed`` is built on, imported and nothing else run: typer with the
#: pydantic adapters it builds an option's coercion with, pydantic (the tools' contract),
#: sqlite-utils (the database), pluggy (the plugins) — the part of the command no change to
#: hermes's own code can remove
STACK_IMPORTS = "import numpy, sqlite3, pydantic, typer, typer._adapters, sqlite_utils, pluggy"
STACK = f"python -c '{STACK_IMPORTS}'"


def measure(args, db: Path, tmp: Path) -> int:
    env = child_env()
    env.update(HERMES_HOME=str(tmp / "home"), HF_HUB_OFFLINE="1", COLUMNS="100")
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "hermes --version": [*hermes(), "--version"],
        "hermes --help": [*hermes(), "--help"],
        "python -c 'import numpy, sqlite3'": [py, "-c", "import numpy, sqlite3"],
        STACK: [py, "-c", STACK_IMPORTS],
        f"hermes feed bench ({args.items:,} items)": [*hermes(), "--db", str(db), "feed", "bench"],
    }
    envs = {name: env for name in commands}
    if args.before:
        before_env = {**env, "PYTHONPATH": str(tree_at(args.before, tmp / "before"))}
        if args.after:
            env = {**env, "PYTHONPATH": str(tree_at(args.after, tmp / "after"))}
            envs = {name: env for name in commands}
        for name in [n for n in commands if n.startswith("hermes")]:
            commands[f"{name} @{args.before}"] = commands[name]
            envs[f"{name} @{args.before}"] = before_env
    for name, argv_ in commands.items():  # warm the page cache, write the matrix snapshot
        timed(argv_, envs[name])
    rng = random.Random(args.seed)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    load_before = os.getloadavg()[0]
    for _ in range(max(7, args.runs)):
        order = list(commands)
        rng.shuffle(order)
        for name in order:
            samples[name].append(timed(commands[name], envs[name]))
    load_after = os.getloadavg()[0]

    wall = {name: statistics.median(w for w, _ in s) for name, s in samples.items()}
    cpu = {name: statistics.median(c for _, c in s) for name, s in samples.items()}
    feed = next(name for name in commands if name.startswith("hermes feed"))
    rows = [  # figure, its floor, target
        ("hermes --version", "python -c pass", "≤ 0.2 s"),
        ("hermes --help", "python -c pass", "≤ 0.2 s"),
        (feed, "python -c 'import numpy, sqlite3'", "≤ 2× the floor"),
        (STACK, "python -c 'import numpy, sqlite3'", "(what no change to hermes's own code goes under)"),
    ]
    if args.before:
        rows = [
            row
            for name, floor, target in rows
            for row in (
                [(name, floor, target)]
                if name == STACK  # not hermes: the same on either side
                else [(f"{name} @{args.before}", floor, target), (name, floor, target)]
            )
        ]
    print(f"## CLI start-up: {max(7, args.runs)} rounds, medians\n")
    print("| command | wall s | CPU s | floor | floor wall s | floor CPU s | × floor (wall / CPU) | target |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, floor, target in rows:
        print(
            f"| `{name}` | {wall[name]:.3f} | {cpu[name]:.3f} | `{floor}` | {wall[floor]:.3f} | "
            f"{cpu[floor]:.3f} | {wall[name] / wall[floor]:.1f}× / {cpu[name] / cpu[floor]:.1f}× | {target} |"
        )
    print(
        f"\nPython {sys.version.split()[0]}, {os.cpu_count()} CPUs, 1-min load average "
        f"{load_before:.1f} before / {load_after:.1f} after"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
