"""``hermes demo``: the whole loop, offline, on the sample feeds shipped in the package.

It reaches the tool groups only through the collected tools (the core never imports a
plugin), so a disabled group is skipped with a note instead of breaking the demo.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes.facekit.faces import plural, shown_of
from hermes.storage.records import insert_feed

from .storage.transactions import write_transaction
from .tools import call_tool, collect_tools

DEMO_PERSONA = "demo"
DEMO_INTERESTS = (
    "Quantum information and quantum computing: entanglement, quantum error correction, "
    "decoherence in qubits; also statistical mechanics of disordered systems."
)


def run_demo(db, say: Callable[[str], None], *, embedder=None) -> dict:
    """Ingest the samples, create a persona, rank, explain, digest; return the results."""
    # Here, not at the top: httpx and feedparser load only when the demo runs (``hermes
    # --help`` imports this module through the CLI).
    from .ingest.feedlist import sample_feed_paths
    from .ingest.pipeline import run_ingest

    with write_transaction(db):
        for path in sample_feed_paths():
            insert_feed(db, str(path), path.stem.replace("-", " "), subscribed_by="user")
    say("Ingesting the sample feeds shipped with hermes (offline) …")
    summary = run_ingest(db, embedder=embedder)
    for feed in summary:
        detail = feed.get("error") or f"{feed.get('new', 0)} new"
        say(f"  {feed.get('title') or feed.get('url')}: {feed.get('status')} ({detail})")

    tools = collect_tools()
    results: dict = {"ingest": summary}

    def use(tool_name: str, **args) -> dict | None:
        tool = tools.get(tool_name)
        if tool is None:
            say(f"(tool {tool_name} is not available: its plugin is disabled)")
            return None
        result = call_tool(db, tool, args)
        results[tool_name] = result
        return result

    created = use("create_persona", name=DEMO_PERSONA, interests=DEMO_INTERESTS)
    if created and not created["ok"]:
        use("update_persona", name=DEMO_PERSONA, interests=DEMO_INTERESTS)
    say(f"\nPersona {DEMO_PERSONA!r}: {DEMO_INTERESTS}")

    feed = use("list_feed", user=DEMO_PERSONA, limit=5, since_days=None, below_bar=True)
    if feed and feed["ok"]:
        say(f"\nTop of the ranked feed: {feed['message']}")
        for item in feed["items"]:
            say(f"  [{item['id']}] {item['title'][:90]}  ({item['match']} match)")
        if feed["items"]:
            top = feed["items"][0]["id"]
            explained = use("explain_item", user=DEMO_PERSONA, item_id=top, since_days=None)
            if explained and explained["ok"]:
                say(f"\nWhy #{top}: {explained.get('reason') or explained['message']}")
            liked = use("record_feedback", user=DEMO_PERSONA, item_id=top, liked=True)
            if liked and liked["ok"]:
                say(f"Recorded a like on #{top} (source: {liked['click']['source']}).")

    digest = use("digest", user=DEMO_PERSONA, days=36500, per_topic=2, limit=12)
    if digest:
        say("\nDigest:" if digest["ok"] else f"\nDigest: {digest['message']}")
        for topic in digest.get("topics", []):
            say(f"  ## {topic['label']}  ({shown_of(topic['n_total'], len(topic['items']))})")
            for item in topic["items"]:
                say(f"     - {item['title'][:80]}")
        if digest.get("unclustered"):
            say(f"  ## unclustered ({plural(len(digest['unclustered']), 'item')})")
        caveat = (digest.get("ranking_quality") or {}).get("caveat")
        if caveat:
            say(f"  note: {caveat}")
    return results
