"""CI: the installed wheel runs on its own. Run with the python of a fresh virtual environment
that holds only the wheel and its dependencies, isolated (``python -I``) and from a directory
outside the checkout, so nothing can be imported from the source tree:

    cd /tmp/somewhere && /tmp/venv/bin/python -I /path/to/.ci/wheel_smoke.py

It runs what a person runs after ``pip install hermes-feed-engine``: the version in its three
forms, ``hermes demo`` (the real model, the sample feeds shipped in the wheel), ``hermes serve``
answering ``tools/list`` and a tool call to the MCP SDK's stdio client, and ``hermes web``
serving its pages, stylesheet and icon.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent
PACKAGES = ("hermes", "hermes_feeds", "hermes_persona", "hermes_digest", "hermes_corpus")
GROUPS = {"feeds": "list_feed", "persona": "create_persona", "digest": "digest", "corpus": "corpus"}


def say(message: str) -> None:
    print(f"wheel smoke: {message}", flush=True)


def fail(message: str) -> None:
    sys.exit(f"wheel smoke FAILED: {message}")


def run(args: list, env: dict, timeout: float = 300) -> str:
    done = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        fail(f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def check_imports_come_from_the_venv() -> str:
    import importlib

    for name in PACKAGES:
        where = Path(importlib.import_module(name).__file__).resolve()
        if not where.is_relative_to(Path(sys.prefix).resolve()):
            fail(f"{name} was imported from {where}, not from this environment ({sys.prefix})")
    import hermes

    return hermes.__version__


def check_version(env: dict, version: str) -> None:
    for command in ([BIN / "hermes"], [BIN / "hermes-feed-engine"], [sys.executable, "-m", "hermes"]):
        out = run([*command, "--version"], env).strip()
        if out != f"hermes {version}":
            fail(f"{command} --version printed {out!r}")
    say(f"hermes --version, hermes-feed-engine --version, python -m hermes --version: {version}")


def check_demo(env: dict) -> None:
    started = time.monotonic()
    out = run([BIN / "hermes", "demo"], env)
    for expected in ("Top of the ranked feed", "Why #", "Digest"):
        if expected not in out:
            fail(f"hermes demo did not print {expected!r}:\n{out}")
    say(f"hermes demo ran on the packaged sample feeds with the real model ({time.monotonic() - started:.0f} s)")


async def mcp_session(env: dict) -> tuple[set[str], dict, dict]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(BIN / "hermes"), args=["serve"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        suggested = await session.call_tool("suggest_feeds", {"user": "demo"})
        ranked = await session.call_tool("list_feed", {"user": "demo", "since_days": None})
    return names, suggested.structured_content, ranked.structured_content


def check_serve(env: dict) -> None:
    names, suggested, ranked = asyncio.run(asyncio.wait_for(mcp_session(env), 300))
    missing = {group: tool for group, tool in GROUPS.items() if tool not in names}
    if missing:
        fail(f"tools/list lacks {missing} (got {sorted(names)})")
    # suggest_feeds reads the packaged candidates.toml; list_feed the demo's database.
    if not (suggested["ok"] and suggested["suggestions"]):
        fail(f"suggest_feeds: {json.dumps(suggested)[:500]}")
    if not (ranked["ok"] and ranked["items"]):
        fail(f"list_feed: {json.dumps(ranked)[:500]}")
    say(f"hermes serve: tools/list gave {len(names)} tools over stdio; suggest_feeds and list_feed answered")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.headers.get("content-type", ""), response.read().decode()


def check_web(env: dict) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [str(BIN / "hermes"), "web", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    fail(f"hermes web did not start: {proc.stderr.read() if proc.poll() is not None else 'timeout'}")
                time.sleep(0.2)
        base = f"http://127.0.0.1:{port}"
        pages = {
            "/": "demo",
            "/feed?user=demo": "demo",
            "/digest?user=demo": "demo",
            "/feeds": "arxiv",
            "/static/hermes.css": "{",
            "/static/favicon.svg": "<svg",
        }
        for path, expected in pages.items():
            status, kind, body = get(base + path)
            if status != 200 or expected not in body.lower():
                fail(f"GET {path}: {status} {kind}, {len(body)} bytes without {expected!r}")
        say(f"hermes web served {', '.join(pages)}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    version = check_imports_come_from_the_venv()
    with tempfile.TemporaryDirectory(prefix="hermes-wheel-home-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
        env.update(HERMES_HOME=str(home), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
        check_version(env, version)
        check_demo(env)
        env["HERMES_DB"] = str(home / "demo.db")  # where `hermes demo` keeps its data
        check_serve(env)
        check_web(env)
    say("the wheel works alone")


if __name__ == "__main__":
    main()
