"""Import hermes's corpus exports through Zotero's own import translators and report what
Zotero makes of each format: item types, authors, tags, the arXiv id, and any LaTeX left in
a title. Run by hand (benchmarks/zotero_import.md lays out the folder it reads Zotero's code
from; none of it is in this repository):

    .venv/bin/python benchmarks/zotero_import.py ~/zotero-check     # prints a Markdown table
    .venv/bin/python benchmarks/zotero_import.py ~/zotero-check --json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HERMES_EMBEDDER", "hash")

HERE = Path(__file__).parent
TRANSLATORS = {"ris": "RIS", "bibtex": "BibTeX", "csl-json": "CSL JSON"}
FEEDS = {
    "arxiv": ("https://rss.arxiv.org/rss/astro-ph", "astro-ph updates on arXiv.org"),
    "blog": ("https://blog.example.org/feed.xml", "Starlight Notes"),
    "podcast": ("https://pod.example.org/rss", "Giant Bombcast"),
}
#: real-shaped items: what each kind of feed brings, with the names and text issue 32 found
ITEMS = [
    (
        "arxiv",
        {
            "guid": "arxiv:2611.40001",
            "arxiv_id": "2611.40001",
            "content_type": "paper",
            "url": "https://arxiv.org/abs/2611.40001",
            "title": "Quiescent galaxies at z~2 with $\\boldsymbol{x}$ and \u03b2 \u2243 0.3",
            "summary": "About 30% of galaxies above 10^10 M\u2299 are quiescent.",
            "authors": [
                "\u0141ukasz Kowalski",
                "Martin Luther King Jr.",
                "Johannes van der Waals",
                "Theodore Roosevelt IV",
            ],
            "tags": ["astro-ph.ga"],
        },
    ),
    (
        "arxiv",
        {
            "guid": "arxiv:2611.40002",
            "arxiv_id": "2611.40002",
            "content_type": "paper",
            "url": "https://arxiv.org/abs/2611.40002",
            "title": "The Gaia mission and the halo",
            "summary": "We map the halo.",
            "authors": ["Anthony G. A. Brown"],
            "tags": ["astro-ph.ga"],
        },
    ),
    (
        "blog",
        {
            "guid": "https://blog.example.org/p/1",
            "url": "https://blog.example.org/p/1",
            "title": "Die Alterung der Gesellschaft",
            "content_type": "article",
            "summary": "Wir untersuchen die Folgen der Alterung für die Rente und den Vertrag.",
            "authors": ["heise online"],
            "tags": ["demografie"],
        },
    ),
    (
        "podcast",
        {
            "guid": "https://pod.example.org/ep/41",
            "url": "https://pod.example.org/ep/41",
            "title": "Episode 41: Entanglement",
            "content_type": "podcast",
            "summary": "An episode.",
            "authors": ["Giant Bomb"],
            "tags": [],
            "enclosure": {
                "url": "https://cdn.example.org/ep41.mp3",
                "type": "audio/mpeg",
                "length": 1000,
                "duration": 2465,
            },
        },
    ),
]
_LATEX_LEFT = re.compile(r"\\[a-zA-Z]+|[{}$]")


def exports(tmp: Path) -> dict[str, str]:
    """The three formats of a corpus holding :data:`ITEMS` (read, or saved for later)."""
    (tmp / "home").mkdir()
    os.environ["HERMES_HOME"] = str(tmp / "home")
    sys.path.insert(0, str(HERE.parent / "plugins"))
    from hermes_corpus import export as ex
    from hermes_corpus import signals as cs

    from hermes.ingest.store import insert_items
    from hermes.storage.db import get_db
    from hermes.storage.records import require_user

    db = get_db(str(tmp / "check.db"))
    db.execute("INSERT INTO users (name) VALUES ('alice')")
    for kind, (url, title) in FEEDS.items():
        db.execute("INSERT INTO feeds (url, title) VALUES (?, ?)", [url, title])
    for k, (kind, item) in enumerate(ITEMS):
        feed_id = db.execute("SELECT id FROM feeds WHERE url = ?", [FEEDS[kind][0]]).fetchone()[0]
        (item_id,) = insert_items(db, feed_id, [{**item, "published": "2026-11-30T10:00:00+00:00"}])
        if k % 2:
            cs.favorite(db, "alice", item_id)
        else:
            cs.record_progress(db, "alice", item_id, 1.0)
    user = require_user(db, "alice")["id"]
    return {fmt: ex.export(db, user, fmt).text for fmt in TRANSLATORS}


def imported(zotero: Path, fmt: str, text: str, tmp: Path) -> list[dict]:
    path = tmp / f"export.{fmt}"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run(
        ["node", str(HERE / "zotero_import.js"), str(zotero), TRANSLATORS[fmt], str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def arxiv_id(item: dict) -> str:
    """Where Zotero keeps the arXiv id, or "—"."""
    for field in ("archiveID", "archiveLocation", "number"):
        if "2611.4000" in str(item.get(field) or ""):
            return f"{field}: {item[field]}"
    extra = [line for line in str(item.get("extra") or "").splitlines() if "2611.4000" in line]
    return f"extra: {extra[0]}" if extra else "—"


def person(creator: dict) -> str:
    if creator.get("fieldMode") == 1 or "firstName" not in creator:
        return f"[{creator.get('lastName', '')}]"
    return f"{creator['lastName']}, {creator['firstName']}"


def report(found: dict[str, list[dict]]) -> list[dict]:
    rows = []
    for fmt, items in found.items():
        for (kind, source), item in zip(ITEMS, items):
            tags = [t["tag"] if isinstance(t, dict) else t for t in item.get("tags") or []]
            rows.append(
                {
                    "format": fmt,
                    "item": source["title"][:32],
                    "type": item["itemType"],
                    "authors": "; ".join(person(c) for c in item.get("creators") or []),
                    "tags": ", ".join(tags) or "—",
                    "arXiv id": arxiv_id(item) if source.get("arxiv_id") else "",
                    "title": item.get("title", ""),
                    "LaTeX left in title": "yes" if _LATEX_LEFT.search(item.get("title", "")) else "no",
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("zotero", type=Path, help="the folder holding Zotero's translators, utilities and schema")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hermes-zotero-") as name:
        tmp = Path(name)
        found = {fmt: imported(args.zotero, fmt, text, tmp) for fmt, text in exports(tmp).items()}
    rows = report(found)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("| " + " | ".join("---" for _ in columns) + " |")
    for row in rows:
        print("| " + " | ".join(str(row[c]).replace("|", "\\|") for c in columns) + " |")


if __name__ == "__main__":
    main()
