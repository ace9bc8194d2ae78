"""The size of ``tools/list``: what every MCP client puts in its model's context.

Builds the in-process MCP server with the default plugins (no entry points), asks it for
``tools/list`` through the SDK's own client, and counts the characters of the compact JSON
of the tool list, in total and per tool (description, input schema, output schema).

    .venv/bin/python benchmarks/bench_tool_list.py
"""

from __future__ import annotations

import json
import os
import tempfile

import anyio
import mcp

os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hermes.mcp_server import build_server  # noqa: E402  (after the environment is set)


def size(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        async with mcp.Client(build_server(os.path.join(home, "hermes.db"))) as client:
            tools = (await client.list_tools()).tools
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    print(f"{len(listed)} tools, {size(listed):,} characters of tools/list (compact JSON)\n")
    print("| tool | total | description | inputSchema | outputSchema |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for t in sorted(listed, key=size, reverse=True):
        print(f"| {t['name']} | {size(t):,} | {len(t.get('description', '')):,} | "
              f"{size(t['inputSchema']):,} | {size(t.get('outputSchema', {})):,} |")


if __name__ == "__main__":
    anyio.run(main)
