"""Generic words in the names of a window's topics (a one-field trial's "interaction",
"transition", "lattice" over cond-mat topics).

    .venv/bin/python benchmarks/topic_label_lift.py [--windows 40] [--tune] [--write]

The archives and windows of benchmarks/topics_quality.py (30 papers drawn from one half of
an archive; the digest's grouping), each topic named by ``hermes.topics.window_topics``.
The judge is the papers' own text, which the naming never reads: a label word is *generic*
when it is one word and it (its singular, as the tagger folds plurals) is written in 10% or
more of the archive's titles and abstracts. A tag's count in the archive says less: the
tagger proposes "transition" alone on two cond-mat papers and "phase transition", "quantum
phase transition" on a dozen more, while the word is in a quarter of the texts. Figures
per archive, means over its windows' topics:

- parts: label tags per topic; phrases: the share of them of several words;
- generic: the share of label tags that are generic words; led: the share of topics whose
  label starts with one;
- covered: the share of a topic's items that carry one of its label's tags;
- precise: for each label tag, the share of the archive's items carrying it that are of the
  topic's most common category (fine categories; the mix: archives; astro-ph: none).

Constants are chosen on half A (``--tune`` prints the grid) and reported on half B.
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import topics_data  # noqa: E402
import topics_quality as tq  # noqa: E402

#: a word in this share of an archive's texts or more is generic there
GENERIC_TEXT_SHARE = 0.10
#: constants of hermes.topics.topic_labels tried by ``--tune`` on half A
GRID = {"MIN_LIFT": (0.0, 4.0, 6.0, 8.0, 10.0, 12.0)}


def text_share(archive) -> dict[str, float]:
    """Each word's share of the archive's texts (title and abstract), singular."""
    from hermes.builtins.default_keyphrases import singular

    counts: Counter = Counter()
    for p in archive.papers:
        counts.update({singular(w) for w in re.findall(r"[a-z][a-z-]*", f"{p['title']} {p['abstract']}".lower())})
    return {w: n / len(archive.papers) for w, n in counts.items()}


def measure(archive, which: str, n: int, shares: dict[str, float]) -> dict:
    from hermes.text.tags import normalize_tag
    from hermes.topics.window_topics import group

    classes = tq.coarse if archive.name == "mix" else tq.fine
    scored = archive.name != "astro-ph"
    carriers: dict[str, list[str]] = {}
    for tags, paper in zip(archive.tags, archive.papers):
        for t in {normalize_tag(t) for t in tags}:
            carriers.setdefault(t, []).append(classes(paper))
    rows_of = {i: r for r, i in enumerate(archive.ids)}
    per_topic = []
    for rows in tq.windows(archive, which, n):
        items = archive.window_items(rows)
        for topic in group(archive.graph, items).topics:
            parts = [normalize_tag(p) for p in topic.label.split(" · ")]
            members = [rows_of[i] for i in topic.members]
            own = [{normalize_tag(t) for t in archive.tags[r]} for r in members]
            generic = [" " not in p and shares.get(p, 0.0) >= GENERIC_TEXT_SHARE for p in parts]
            major = Counter(classes(archive.papers[r]) for r in members).most_common(1)[0][0]
            precise = [carriers[p].count(major) / len(carriers[p]) for p in parts if carriers.get(p)]
            per_topic.append(
                {
                    "parts": len(parts),
                    "phrases": sum(" " in p for p in parts) / len(parts),
                    "generic": sum(generic) / len(parts),
                    "led": float(generic[0]),
                    "covered": sum(bool(s & set(parts)) for s in own) / len(own),
                    "precise": statistics.mean(precise) if precise and scored else float("nan"),
                    "words": [p for p, g in zip(parts, generic) if g],
                }
            )
    out = {k: statistics.mean(t[k] for t in per_topic) for k in ("parts", "phrases", "generic", "led", "covered")}
    out["precise"] = statistics.mean(t["precise"] for t in per_topic) if scored else float("nan")
    out["topics"] = len(per_topic)
    out["words"] = Counter(w for t in per_topic for w in t["words"])
    return out


def row(name: str, m: dict) -> str:
    precise = "–" if m["precise"] != m["precise"] else f"{m['precise']:.2f}"
    return (
        f"| {name} | {m['topics']} | {m['parts']:.2f} | {m['phrases']:.0%} | {m['generic']:.1%} | {m['led']:.1%} | "
        f"{m['covered']:.0%} | {precise} |"
    )


HEADER = [
    "| archive | topics | parts | phrases | generic | led by generic | covered | precise |",
    "|---|---|---|---|---|---|---|---|",
]


def setting(values: dict) -> None:
    from hermes.topics import topic_labels

    for name, value in values.items():
        setattr(topic_labels, name, value)


def tune(archives, shares, n: int) -> None:
    print(f"| {' | '.join(GRID)} | " + " | ".join(f"{a}: generic / led / covered / precise" for a in archives) + " |")
    print("|" + "---|" * (len(GRID) + len(archives)))
    for combo in itertools.product(*GRID.values()):
        setting(dict(zip(GRID, combo)))
        cells = []
        for name, archive in archives.items():
            m = measure(archive, "A", n, shares[name])
            cells.append(f"{m['generic']:.1%} / {m['led']:.1%} / {m['covered']:.0%} / {m['precise']:.2f}")
        print(f"| {' | '.join(map(str, combo))} | " + " | ".join(cells) + " |", flush=True)


def report(archives, shares, n: int, which: str) -> str:
    lines = [f"Half {which}, {n} windows of {tq.WINDOW} papers per archive:", "", *HEADER]
    words: dict[str, Counter] = {}
    for name, archive in archives.items():
        m = measure(archive, which, n, shares[name])
        lines.append(row(name, m))
        words[name] = m["words"]
    lines += ["", "Generic words in the labels (uses):", ""]
    for name, c in words.items():
        lines.append(f"- {name}: " + (", ".join(f"{w} {k}" for w, k in c.most_common(15)) or "none"))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=int, default=40)
    ap.add_argument("--tune", action="store_true", help="print the grid of GRID on half A")
    ap.add_argument("--write", type=Path, help="write the report to this file")
    args = ap.parse_args(argv)
    papers = topics_data.load_papers()
    vectors, proposals = topics_data.vectors_and_proposals(papers)
    archives = tq.load_archives(papers, vectors, proposals)
    shares = {name: text_share(a) for name, a in archives.items()}
    if args.tune:
        tune(archives, shares, args.windows)
        return 0
    text = report(archives, shares, args.windows, "B") + "\n\n" + report(archives, shares, args.windows, "A")
    print(text)
    if args.write:
        args.write.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
