"""The size of ``tools/list``: what every MCP client puts in its model's context.

Builds the in-process MCP server with the default plugins (no entry points), asks it for
``tools/list`` through the SDK's own client, and counts the characters of the compact JSON
of the tool list: whole, and its input side — everything but the output schemas (names,
titles, descriptions, input schemas, annotations), which is what most hosts show the model
— per tool too, for the whole server and for each ``--tools`` group; and the instructions.
Then the answers that can grow, as a client receives them: the text block and the structured
content of a default 20-item ``list_feed`` at 0 and at 12 clicks, and of ``search_feed``,
``recall``, ``corpus_items`` and ``digest`` at their maximums, over a made-up archive of
arXiv-like items (long titles, 1,000-character abstracts, six tags; the hash embedder, so it
runs in seconds).

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
os.environ.setdefault("HERMES_EMBEDDER", "hash")

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
            print(f"| {label} | {len(listed)} | {size(listed):,} | {inputs:,} | {outputs:,} | {len(said):,} |")
    narrow = sum(len(t["name"]) + len(t.get("description", "")) + size(t["inputSchema"]) for t in everything)
    print(f"\nall tools, names + descriptions + input schemas only (the issue's words): {narrow:,}")
    untrusted = sum("untrusted third-party" in t.get("description", "") for t in everything)
    print(f"\ndescriptions repeating the untrusted-text sentence: {untrusted}")
    print("\n| tool | total | input side | description | inputSchema | outputSchema |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for t in sorted(everything, key=lambda t: size(input_side(t)), reverse=True):
        print(
            f"| {t['name']} | {size(t):,} | {size(input_side(t)):,} | "
            f"{len(t.get('description', '')):,} | {size(t['inputSchema']):,} | "
            f"{size(t.get('outputSchema', {})):,} |"
        )


WORDS = (
    "quantum error correction surface codes qubits logical rates decoders lattice "
    "galaxy clusters dark matter lensing spectra stellar populations neural networks "
    "graph message passing transformers attention sparse autoencoders inference"
).split()


def make_archive(path: str, n: int = 400) -> list[int]:
    """``n`` arXiv-like items published in the last week, a persona 'ann' with interests."""
    import random

    from hermes.embed import get_embedder
    from hermes.ingest.store import embed_pending, insert_items
    from hermes.storage.db import get_db
    from hermes.storage.records import create_user

    rng = random.Random(34)
    db = get_db(path)
    db.execute(
        "INSERT INTO feeds (url, title) VALUES (?, ?)",
        ["https://export.arxiv.org/rss/quant-ph", "arXiv quant-ph new submissions"],
    )
    now = __import__("datetime").datetime.now(__import__("datetime").timezone.utc)
    rows = []
    for k in range(n):
        title = " ".join(rng.choice(WORDS) for _ in range(14)).capitalize()
        summary = " ".join(rng.choice(WORDS) for _ in range(140))
        rows.append(
            {
                "guid": f"arxiv-{k}",
                "title": title,
                "summary": summary,
                "tags": rng.sample(
                    [
                        "quant-ph",
                        "cs.LG",
                        "astro-ph.CO",
                        "hep-th",
                        "cond-mat.str-el",
                        "physics.optics",
                        "stat.ML",
                        "math.PR",
                    ],
                    6,
                ),
                "content_type": "paper",
                "url": f"https://arxiv.org/abs/2611.{k:05d}v1",
                "published": (now - __import__("datetime").timedelta(hours=k % 150)).isoformat(),
                "authors": [f"A. Author{j}" for j in range(5)],
            }
        )
    ids = insert_items(db, 1, rows)
    embed_pending(db, get_embedder(), tag=False)
    create_user(db, "ann", "quantum error correction, surface codes and decoders; graph neural networks")
    db.conn.close()
    return ids


async def answer_sizes(home: str) -> list[tuple[str, int, int, str]]:
    """(call, characters of the text block, of the structured content as compact JSON, rows
    shown / left out by the budget (/ explanations shortened: digest))."""
    path = os.path.join(home, "answers.db")
    ids = make_archive(path)
    out = []
    async with mcp.Client(build_server(path)) as client:

        async def measure(label, name, arguments):
            r = await client.call_tool(name, arguments)
            assert r.structured_content["ok"] or r.structured_content.get("nothing_to_show"), (
                name,
                r.structured_content["message"],
            )
            body = r.structured_content
            rows = body.get("items", body.get("results"))
            shown = (
                len(rows)
                if rows is not None
                else sum(len(t["items"]) for t in body["topics"])
                + len(body["unclustered"])
                + len(body["below_bar"]["items"])
            )
            out.append(
                (
                    label,
                    len(r.content[0].text),
                    size(body),
                    f"{shown} / {body.get('left_out', 0)}" + (f" / {body['shortened']}" if "shortened" in body else ""),
                )
            )

        await measure("list_feed, default (20 items), 0 clicks", "list_feed", {"user": "ann"})
        for k, item in enumerate(ids[300:312]):
            await client.call_tool("record_feedback", {"user": "ann", "item_id": item, "liked": k % 3 != 0})
        for k, item in enumerate(ids[312:330]):
            await client.call_tool("add_highlight", {"user": "ann", "item_id": item, "text": "quantum " * 1000})
            await client.call_tool("add_note", {"user": "ann", "item_id": item, "text": "qubits " * 1400})
        await measure("list_feed, default (20 items), 12 clicks", "list_feed", {"user": "ann"})
        await measure("list_feed, detail=true, 12 clicks", "list_feed", {"user": "ann", "detail": True})
        await measure("list_feed, limit=100, detail=true", "list_feed", {"user": "ann", "limit": 100, "detail": True})
        await measure("search_feed, limit=50", "search_feed", {"user": "ann", "query": "quantum", "limit": 50})
        await measure(
            "recall, limit=50 (18 items, 10 kB notes each)", "recall", {"user": "ann", "query": "quantum", "limit": 50}
        )
        await measure("corpus_items, limit=500", "corpus_items", {"user": "ann", "limit": 500})
        await measure("digest, default", "digest", {"user": "ann"})
        await measure(
            "digest, maximums",
            "digest",
            {"user": "ann", "days": 36500, "per_topic": 50, "limit": 200, "below_bar": True},
        )
    return out


async def answers() -> None:
    with tempfile.TemporaryDirectory() as home:
        rows = await answer_sizes(home)
    print("\n| answer | text block | structuredContent | rows shown / left out (/ shortened) |")
    print("| --- | ---: | ---: | ---: |")
    for label, text, structured, shown in rows:
        print(f"| {label} | {text:,} | {structured:,} | {shown} |")


if __name__ == "__main__":
    anyio.run(main)
    anyio.run(answers)
