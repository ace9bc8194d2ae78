"""``hermes serve`` start-up and per-call overhead, measured with the MCP SDK's own stdio client.

For each run a fresh ``hermes serve --db <tmp>`` child is spawned (default environment: the
real MiniLM embedder is configured but must not load), and the clock runs from just before
the spawn to the ``tools/list`` answer (``initialize`` + ``notifications/initialized`` +
``tools/list``). Right after that answer the child's resident memory (VmRSS, and its peak
VmHWM) is read from ``/proc``, and its memory map is checked for torch's shared libraries
(proof that no model code was loaded).

The floor (issue 36): a bare server on the MCP SDK's public low-level ``Server`` (the one
hermes is built on, :mod:`mcp.server.lowlevel`) over stdio, listing the same tools as hermes
(the very ``tools/list`` entries hermes answered, kept in a JSON file the bare server reads
and turns into the SDK's ``Tool`` models), started and asked for ``tools/list`` by the same
client, alternating with the hermes start-ups (paired, same rounds): the target is hermes
≤ 1.3× its median. A second reference, as in earlier rounds: the SDK's ``MCPServer`` with as
many tools, each a two-parameter function (it imports more of the SDK, and builds each
tool's schema from its signature).

Per-call overhead: in one session, ``list_feeds`` (a trivial read over a 5-feed database) is
called ``--calls`` times over stdio; the same function is called in process the same way the
server calls it (a connection per call, through ``call_tool``). The difference of the
medians is what the protocol, the JSON encoding, the worker thread and the pipes cost.

    .venv/bin/python benchmarks/bench_serve.py               # 7 paired start-ups, 200 calls
    .venv/bin/python benchmarks/bench_serve.py --runs 9 --calls 500
    .venv/bin/python benchmarks/bench_serve.py --before HEAD~1 --after HEAD   # a commit's effect

``--before REV`` also starts hermes as it was at commit REV (a temporary worktree,
:func:`bench_cli.tree_at`, with a cache folder of its own: the two sides' kept listings have
different keys), in the same rounds as the rest, so both sides meet the same load;
``--after REV`` runs this side from a worktree too (uncommitted edits of the checkout left
out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def hermes_command() -> list[str]:
    script = Path(sys.executable).with_name("hermes")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes.cli"]


def children() -> list[int]:
    me = os.getpid()
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry.name))
    return out


def memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and of its children it waited for (cutime + cstime: a first
    start builds the tool listing in a child, ``hermes.mcp_server.cached_listings``): less
    sensitive than wall time to other load on the machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def torch_mapped(pid: int) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return "/torch/" in maps or "sentence_transformers" in maps


def make_db(path: Path, env: dict) -> None:
    code = (
        "import sys; from hermes.storage.db import get_db\n"
        "db = get_db(sys.argv[1])\n"
        "for i in range(5):\n"
        "    db.execute('INSERT INTO feeds (url, title) VALUES (?, ?)', [f'https://bench.example/{i}', f'feed {i}'])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], env=env, check=True)


#: the floor: the SDK's low-level Server answering ``tools/list`` with hermes's tools
LOWLEVEL = """
import json, sys

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

with open(sys.argv[1], encoding="utf-8") as handle:
    tools = [Tool.model_validate(entry) for entry in json.load(handle)]


async def list_tools(ctx, params):
    return ListToolsResult(tools=tools)


async def call_tool(ctx, params):
    return CallToolResult(content=[TextContent(type="text", text=params.name)])


server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""

#: the second reference: the SDK's MCPServer with as many two-parameter tools
BARE = """
import sys
from typing import Annotated

from pydantic import Field
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


def make(i):
    def tool(user: Annotated[str, Field(max_length=100, description="A persona.")],
             limit: Annotated[int, Field(ge=1, le=50, description="How many.")] = 20) -> dict:
        return {"ok": True, "message": f"tool {i}", "user": user, "limit": limit}
    return tool


for i in range(int(sys.argv[1])):
    server.add_tool(make(i), name=f"tool_{i}", description=f"Tool number {i}.")
server.run()
"""


async def bare_start(n_tools: int, env: dict, script: Path, argument: str | None = None) -> dict:
    """A bare MCP SDK server with ``n_tools`` tools, start → ``tools/list``: ``script`` run
    with ``argument`` (the low-level floor: the listing file) or ``n_tools`` (MCPServer)."""
    args = [str(script), argument if argument is not None else str(n_tools)]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with listed(params) as (tools, elapsed, pid):
        cpu = cpu_seconds(pid)
    assert len(tools) == n_tools
    return {"seconds": elapsed, "cpu": cpu, "tools": tools}


@contextlib.asynccontextmanager
async def listed(params: StdioServerParameters):
    """A started server's ``tools/list``, the seconds from start to the answer, and its pid
    (still running inside the block, to be measured)."""
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        elapsed = time.perf_counter() - t0
        [pid] = children()
        yield tools, elapsed, pid


#: with --no-listing: a new cache folder under this for every start (no listing kept)
FRESH_CACHES: Path | None = None


async def one_start(db: Path, env: dict) -> dict:
    if FRESH_CACHES is not None:
        FRESH_CACHES.mkdir(exist_ok=True)
        env = {**env, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=FRESH_CACHES)}
    params = StdioServerParameters(
        command=hermes_command()[0], args=[*hermes_command()[1:], "serve", "--db", str(db)], env=env
    )
    async with listed(params) as (tools, elapsed, pid):
        mem = memory_kb(pid)
        heavy = torch_mapped(pid)
        cpu = cpu_seconds(pid)
    return {
        "seconds": elapsed,
        "tools": len(tools),
        "rss_mb": mem["VmRSS"] / 1024,
        "hwm_mb": mem["VmHWM"] / 1024,
        "torch": heavy,
        "cpu": cpu,
        "listed": [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools],
    }


async def calls_over_stdio(db: Path, env: dict, n: int) -> list[float]:
    params = StdioServerParameters(
        command=hermes_command()[0], args=[*hermes_command()[1:], "serve", "--db", str(db)], env=env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(10):  # warm-up: first connection, migrations check, imports
            await session.call_tool("list_feeds", {})
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            result = await session.call_tool("list_feeds", {})
            times.append(time.perf_counter() - t0)
            assert result.structured_content["ok"], result
    return times


def calls_in_process(db: Path, n: int) -> list[float]:
    from hermes.storage.db import get_db
    from hermes.tools import call_tool, collect_tools

    tool = collect_tools()["list_feeds"]
    times = []
    for _ in range(n + 10):
        t0 = time.perf_counter()
        conn = get_db(db, migrate=False)
        call_tool(conn, tool, {})
        conn.conn.close()
        times.append(time.perf_counter() - t0)
    return times[10:]


PHASES = """
import json, sys, time
t = time.process_time
marks = [("python start-up + site", t())]
import mcp.server.lowlevel, mcp.server.stdio; marks.append(("the MCP SDK (mcp.server.lowlevel and .stdio, with pydantic, anyio)", t()))
import typer, hermes.cli.root; marks.append(("typer + hermes.cli.root", t()))
from hermes.plugins import get_plugin_manager; get_plugin_manager()
marks.append(("plugin manager: the plugin modules and what they import beyond the SDK", t()))
from hermes.mcp_server import build_server; server = build_server(sys.argv[1])
marks.append(("build_server: schemas of every tool", t()))
import sqlite_utils, numpy
print(json.dumps(marks))
"""


def phase_breakdown(db: Path, env: dict, runs: int) -> list[tuple[str, float]]:
    """Median CPU seconds of each start-up phase, measured inside fresh processes.

    The SDK is imported first here (``hermes serve`` imports it after the plugins) so that
    what it shares with the plugins (pydantic, anyio) is charged to it, and the plugin line
    shows only what hermes itself adds."""
    import json

    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", PHASES, str(db)], env=env, check=True, capture_output=True, text=True
        ).stdout
        marks = json.loads(out)
        samples.append([(name, now - (marks[k - 1][1] if k else 0.0)) for k, (name, now) in enumerate(marks)])
    return [(samples[0][k][0], statistics.median(s[k][1] for s in samples)) for k in range(len(samples[0]))]


def process_floor(env: dict, runs: int) -> tuple[float, float]:
    """Median seconds for ``python -c pass`` and for importing the server module."""

    def timed(args):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *args], env=env, check=True)
        return time.perf_counter() - t0

    bare = statistics.median(timed(["-c", "pass"]) for _ in range(runs))
    server = statistics.median(timed(["-c", "import hermes.mcp_server"]) for _ in range(runs))
    return bare, server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="start-ups to time (>= 5)")
    ap.add_argument("--calls", type=int, default=200, help="tool calls for the overhead figure")
    ap.add_argument(
        "--no-listing",
        action="store_true",
        help="every start without the tool listing an earlier start kept "
        "(a fresh cache folder each time): the first start after a change",
    )
    ap.add_argument("--before", metavar="REV", help="also start hermes as it was at commit REV, in the same rounds")
    ap.add_argument("--after", metavar="REV", help="with --before: this side at commit REV (default: this checkout)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        try:
            measure(args, Path(tmp))
        finally:
            for side in ("before", "after"):
                if (Path(tmp) / side / "tree").exists():
                    here = Path(__file__).resolve().parent.parent
                    worktree = ["git", "-C", str(here), "worktree", "remove", "--force", str(Path(tmp) / side / "tree")]
                    subprocess.run(worktree, check=False)


def measure(args, tmp: Path) -> None:
    # The cache folder of the run's own (the listing `hermes serve` keeps between starts,
    # hermes.mcp_server.cached_listings), and PYTHONPATH passed on: a worktree's hermes.
    env = {"HERMES_HOME": str(tmp / "home"), "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp / "cache")}
    for name in ("PATH", "PYTHONPATH"):
        if name in os.environ:
            env[name] = os.environ[name]
    global FRESH_CACHES
    FRESH_CACHES = tmp / "caches" if args.no_listing else None
    before_env = None
    if args.before:
        from bench_cli import tree_at

        before_env = {**env, "PYTHONPATH": str(tree_at(args.before, tmp / "before"))}
        before_env["XDG_CACHE_HOME"] = str(tmp / "cache-before")
        if args.after:
            env["PYTHONPATH"] = str(tree_at(args.after, tmp / "after"))
    full_env = {**os.environ, **env}
    full_env.pop("HERMES_EMBEDDER", None)
    db = tmp / "bench.db"
    make_db(db, full_env)

    load_before = os.getloadavg()[0]
    script = tmp / "bare_server.py"
    script.write_text(BARE)
    low_script = tmp / "lowlevel_server.py"
    low_script.write_text(LOWLEVEL)
    first = anyio.run(one_start, db, env)  # and a warm page cache for every side
    n_tools = first["tools"]
    listing = tmp / "listing.json"
    listing.write_text(json.dumps(first["listed"]), encoding="utf-8")
    floor = anyio.run(bare_start, n_tools, env, low_script, str(listing))
    same = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in floor["tools"]]
    assert same == first["listed"], "the low-level floor must list exactly hermes's tools"
    anyio.run(bare_start, n_tools, env, script)
    befores = []
    if before_env is not None:
        before_first = anyio.run(one_start, db, before_env)  # its listing kept, its pages cached
    starts, lows, bares = [], [], []
    for k in range(max(5, args.runs)):  # paired: the sides take turns, each first in turn
        sides = [
            lambda: starts.append(anyio.run(one_start, db, env)),
            lambda: lows.append(anyio.run(bare_start, n_tools, env, low_script, str(listing))),
            lambda: bares.append(anyio.run(bare_start, n_tools, env, script)),
        ]
        if before_env is not None:
            sides.append(lambda: befores.append(anyio.run(one_start, db, before_env)))
        for run in sides[k % len(sides) :] + sides[: k % len(sides)]:
            run()
    stdio = anyio.run(calls_over_stdio, db, env, args.calls)
    os.environ.update(env)
    inproc = calls_in_process(db, args.calls)
    bare, import_server = process_floor(full_env, 5)
    phases = phase_breakdown(db, full_env, 5)

    secs = [s["seconds"] for s in starts]
    rss = [s["rss_mb"] for s in starts]
    hwm = [s["hwm_mb"] for s in starts]
    ms = lambda xs: statistics.median(xs) * 1000
    print(f"## hermes serve (stdio): {len(starts)} start-ups, {args.calls} calls\n")
    print("| figure | value | target |")
    print("| --- | --- | --- |")
    print(
        f"| start → `tools/list` answer, median (min–max) | {statistics.median(secs):.3f} s "
        f"({min(secs):.3f}–{max(secs):.3f}) | ≤ 1 s |"
    )
    cpu = statistics.median(s["cpu"] for s in starts)
    for label, side, target in (
        (f"floor: the SDK's low-level Server listing the same {n_tools} tools", lows, "≤ 1.3×"),
        (f"reference: the SDK's MCPServer with {n_tools} two-parameter tools", bares, ""),
    ):
        side_secs = [b["seconds"] for b in side]
        ratios = [h / b for h, b in zip(secs, side_secs)]
        side_cpu = statistics.median(b["cpu"] for b in side)
        print(
            f"| {label}, start → `tools/list`, median (min–max) | {statistics.median(side_secs):.3f} s "
            f"({min(side_secs):.3f}–{max(side_secs):.3f}) | |"
        )
        print(
            f"| hermes ÷ it: ratio of medians; median of the paired ratios | "
            f"{statistics.median(secs) / statistics.median(side_secs):.2f}×; {statistics.median(ratios):.2f}× "
            f"| {target} |"
        )
        print(
            f"| server CPU time (user+sys, with its waited children) until `tools/list`, median: hermes / it | "
            f"{cpu:.2f} s / {side_cpu:.2f} s ({cpu / side_cpu:.2f}×) | |"
        )
    if befores:
        low_secs = [b["seconds"] for b in lows]
        low_cpu = statistics.median(b["cpu"] for b in lows)
        for label, side in ((f"@{args.before}", befores), (f"@{args.after or 'this checkout'}", starts)):
            side_secs = [s["seconds"] for s in side]
            side_cpu = [s["cpu"] for s in side]
            paired = statistics.median(h / b for h, b in zip(side_secs, low_secs, strict=True))
            paired_cpu = statistics.median(h["cpu"] / b["cpu"] for h, b in zip(side, lows, strict=True))
            print(
                f"| hermes {label}: start → `tools/list`, median; ÷ the low-level floor (medians; paired) | "
                f"{statistics.median(side_secs):.3f} s; {statistics.median(side_secs) / statistics.median(low_secs):.2f}×; "
                f"{paired:.2f}× | ≤ 1.3× |"
            )
            print(
                f"| hermes {label}: CPU until `tools/list`, median; ÷ the floor's (medians; paired) | "
                f"{statistics.median(side_cpu):.2f} s; {statistics.median(side_cpu) / low_cpu:.2f}×; {paired_cpu:.2f}× | |"
            )
        identical = before_first["listed"] == first["listed"]
        print(f"| `tools/list` @{args.before} the same as this side's | {'yes' if identical else 'no'} | |")
    print(
        f"| resident memory after `tools/list` (VmRSS), median | {statistics.median(rss):.1f} MB "
        f"(peak VmHWM {statistics.median(hwm):.1f} MB) | ≤ 150 MB |"
    )
    print(
        f"| torch / sentence-transformers mapped in the server | "
        f"{'yes' if any(s['torch'] for s in starts) else 'no'} | no |"
    )
    print(f"| tools listed | {starts[0]['tools']} | |")
    print(f"| `list_feeds` over stdio, median per call | {ms(stdio):.2f} ms | |")
    print(f"| `list_feeds` in process (connection per call), median | {ms(inproc):.2f} ms | |")
    print(f"| per-call overhead of stdio MCP (difference of medians) | {ms(stdio) - ms(inproc):.2f} ms | |")
    print(f"| floor: `python -c pass` / `import hermes.mcp_server`, median | {bare:.3f} s / {import_server:.3f} s | |")
    print("\nWhere the start-up CPU time goes (fresh process, median of 5, in order):\n")
    print("| phase | CPU s |")
    print("| --- | --- |")
    for name, secs_ in phases:
        print(f"| {name} | {secs_:.3f} |")
    print(f"\nstart-up runs (s): {', '.join(f'{s:.3f}' for s in secs)}")
    floor_secs = ", ".join(f"{b['seconds']:.3f}" for b in lows)
    print(f"low-level floor runs (s): {floor_secs}")
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, 1-min load average "
        f"{load_before:.1f} before / {os.getloadavg()[0]:.1f} after"
    )


if __name__ == "__main__":
    main()
