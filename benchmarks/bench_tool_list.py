"""The size of ``tools/list``: what every MCP client puts in its model's context.

Builds the in-process MCP server with the default plugins (no entry points), asks it for
``tools/list`` through the SDK's own client, and counts the characters of the compact JSON
of the tool list: whole, and its input side — everything but the output schemas (names,
titles, descriptions, input schemas, annotations), which is what most hosts show the model
— per tool too, for the whole server and for each ``--tools`` group; and the instructions.

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

GROUPS = (None, {"feeds"}, {"persona"}, {"digest"}, {"corpus"})


def size(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def input_side(tool: dict) -> dict:
    return {k: v for k, v in tool.items() if k != "outputSchema"}


async def listing(home: str, groups) -> tuple[list[dict], str]:
    async with mcp.Client(build_server(os.path.join(home, "hermes.db"), groups)) as client:
        tools = (await client.list_tools()).tools
        said = client.instructions or ""
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools], said


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        print("| served | tools | tools/list | input side | output schemas | instructions |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        everything = None
        for groups in GROUPS:
            listed, said = await listing(home, groups)
            everything = everything or listed
            inputs = sum(size(input_side(t)) for t in listed)
            outputs = sum(size(t.get("outputSchema", {})) for t in listed)
            label = "all" if groups is None else f"--tools {','.join(sorted(groups))}"
            print(f"| {label} | {len(listed)} | {size(listed):,} | {inputs:,} | {outputs:,} | "
                  f"{len(said):,} |")
    untrusted = sum("untrusted third-party" in t.get("description", "") for t in everything)
    print(f"\ndescriptions repeating the untrusted-text sentence: {untrusted}")
    print("\n| tool | total | input side | description | inputSchema | outputSchema |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for t in sorted(everything, key=lambda t: size(input_side(t)), reverse=True):
        print(f"| {t['name']} | {size(t):,} | {size(input_side(t)):,} | "
              f"{len(t.get('description', '')):,} | {size(t['inputSchema']):,} | "
              f"{size(t.get('outputSchema', {})):,} |")


if __name__ == "__main__":
    anyio.run(main)
