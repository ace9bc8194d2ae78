"""`hermes serve` answers `tools/list` from the listing an earlier start kept (issue 36,
"Every command": start → `tools/list`), when nothing it depends on changed — every source
file of hermes and of the registered plugins (path, size, modification time), the plugin
set, the versions of hermes, pydantic, the MCP SDK and Python — and collects each tool when
it is first called. The listing is the live one, character for character; a plugin hermes
does not ship that registers tools is checked at start-up, so its server keeps no listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import anyio
import pytest
from mcp import Client
from process_support import child_env

from hermes import hookimpl, plugins
from hermes.mcp_server import build_server, cached_listings, keep_listings, listing, listing_key
from hermes.storage.db import get_db
from hermes.tools import collect_tools


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plugins.pm_cache_clear()
    yield tmp_path / "cache"
    plugins.pm_cache_clear()


async def listed_and_called(server) -> tuple[list[dict], dict]:
    async with Client(server) as client:
        tools = [t.model_dump(mode="json") for t in (await client.list_tools()).tools]
        called = await client.call_tool("list_users", {})
    return tools, called.structured_content


def test_a_kept_listing_serves_what_the_live_collection_does(cache_home, tmp_path):
    db_path = tmp_path / "h.db"
    get_db(db_path).conn.close()
    assert cached_listings(build_missing=False) is None
    live = collect_tools()
    keep_listings(live)
    listed = cached_listings()
    assert listed == json.loads(json.dumps([listing(t) for t in live.values()]))
    from_live = anyio.run(listed_and_called, build_server(str(db_path)))
    from_listing = anyio.run(listed_and_called, build_server(str(db_path), listed=listed))
    assert from_listing == from_live and from_live[1]["ok"]
    persona_only = anyio.run(listed_and_called, build_server(str(db_path), {"persona"}, listed=listed))
    assert {t["name"] for t in persona_only[0]} == {n for n, t in live.items() if t.group == "persona"}


def test_the_key_follows_the_plugins_and_their_files(cache_home, tmp_path, monkeypatch):
    source = tmp_path / "hermes_quiet.py"
    source.write_text("def helper():\n    return 1\n")
    module = types.ModuleType("hermes_quiet")
    module.__file__ = str(source)
    module.hermes_register_signals = hookimpl(lambda: [])
    key = listing_key()
    plugins.registered_plugins().register(module, name="quiet")
    with_quiet = listing_key()
    assert with_quiet and with_quiet != key
    os.utime(source, ns=(1, 1))
    assert listing_key() != with_quiet

    def tools():
        return []

    module.hermes_register_tools = hookimpl(tools)
    plugins.pm_cache_clear()
    plugins.registered_plugins().register(module, name="quiet")
    assert listing_key() is None  # a plugin hermes does not ship: its tools are checked at start
    keep_listings(collect_tools())
    assert cached_listings() is None


PROBE = """
import json, sys, anyio, mcp
from hermes.mcp_server import build_server, cached_listings, keep_listings
from hermes.tools import collect_tools
if sys.argv[1] == "keep":
    keep_listings(collect_tools())
else:
    listed = cached_listings()
    server = build_server(sys.argv[2], listed=listed)
    async def names():
        async with mcp.Client(server) as client:
            return [t.name for t in (await client.list_tools()).tools]
    served = anyio.run(names)
    print(json.dumps({"listed": listed is not None, "served": len(served),
                      "tools": sorted(m for m in sys.modules if m.startswith("hermes_") and m.endswith(".tools"))}))
"""


def test_a_start_from_the_listing_imports_no_tools_module(tmp_path):
    env = child_env(tmp_path / "home", XDG_CACHE_HOME=str(tmp_path / "cache"))
    db_path = tmp_path / "h.db"
    get_db(db_path).conn.close()
    keep = subprocess.run([sys.executable, "-c", PROBE, "keep"], env=env, capture_output=True, text=True, timeout=120)
    assert keep.returncode == 0, keep.stderr
    start = subprocess.run(
        [sys.executable, "-c", PROBE, "start", str(db_path)], env=env, capture_output=True, text=True, timeout=120
    )
    assert start.returncode == 0, start.stderr
    found = json.loads(start.stdout)
    assert found["listed"] and found["served"] == len(collect_tools()) and found["tools"] == []


FIRST = """
import json, sys
import hermes.mcp_server as server
sdk_at_import = "mcp" in sys.modules
storage_at_import = sorted(m for m in ("sqlite_utils", "numpy") if m in sys.modules)
if sys.argv[1] == "fail":
    def broken(groups=None):
        raise RuntimeError("a tools module that cannot be imported")
    server.collect_tools = broken
listed = server.cached_listings()
print(json.dumps({"sdk_at_import": sdk_at_import, "storage_at_import": storage_at_import, "sdk": "mcp.server.lowlevel" in sys.modules, "listed": listed,
                  "tools": sorted(m for m in sys.modules if m.startswith("hermes_") and m.endswith(".tools"))}))
"""


def first_start(tmp_path, mode: str) -> dict:
    env = child_env(tmp_path / "home", XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", FIRST, mode], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the listing is built aside in a forked child")
def test_a_first_start_builds_the_listing_aside_while_it_loads_the_sdk(tmp_path, cache_home):
    found = first_start(tmp_path, "build")
    assert not found["sdk_at_import"]  # the SDK loads after the fork, beside the child's work
    assert found["storage_at_import"] == []  # sqlite-utils and numpy: at the first call
    assert found["sdk"] and found["tools"] == []  # this process loaded the SDK, the child the tools
    assert found["listed"] == json.loads(json.dumps([listing(t) for t in collect_tools().values()]))
    kept = list((tmp_path / "cache" / "hermes" / "tools-list").glob("*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text()) == found["listed"]  # for the next start


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the listing is built aside in a forked child")
def test_a_listing_the_child_cannot_build_is_left_to_the_start_itself(tmp_path):
    found = first_start(tmp_path, "fail")
    assert found["listed"] is None and found["sdk"]  # the caller collects the tools, and says why
    assert not (tmp_path / "cache" / "hermes" / "tools-list").exists() or not any(
        (tmp_path / "cache" / "hermes" / "tools-list").glob("*.json")
    )
