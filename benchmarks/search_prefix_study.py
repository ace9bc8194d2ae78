"""How much a typed-prefix match adds to a search word, by the word's length: the study that
chose ``hermes.builtins.default_candidates.PREFIX_FROM``.

Over the 2,000 arXiv abstracts of ../shared/data/arxiv-2000 (titles and abstracts indexed
as hermes indexes them), every word of letters found in at least ``--min-items`` items is
searched as the rule without a prefix finds it (itself and its inflections,
:func:`~hermes.builtins.default_candidates.word_forms` less its prefix term), and the
longer words it begins are added: a longer word counts as the word's own family when what
follows the word is a chain of English endings (-al, -ity, -ation, -ly, ... "dynamic" →
"dynamical"), else as another word ("with" → "within", "line" → "linear"). The table gives,
per length, the items the word finds, the items the prefix adds through its family and
through other words only, and the other words that add the most items. The ending list is
generous ("class" → "classical" counts as family), so it understates other words' share.

    .venv/bin/python benchmarks/search_prefix_study.py
"""

from __future__ import annotations

import argparse
import bisect
import collections
import functools
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HERMES_EMBEDDER", "hash")
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv-2000" / "arxiv_2000_topics.jsonl"

ENDINGS = frozenset(
    "s es ed d ing er ers or ors est al ally ality alities ic ics ical ically ity ities ion ions ation "
    "ations ational ive ively ivity ize ized izes izing ization izations ise ised ises ising isation "
    "isations ism isms ist ists istic ness ment ments mental ly y ies able ably ability ibility ible "
    "ous ously ance ances ence ences ent ents ant ants ency ancy n en ful less e".split()
)


@functools.cache
def endings_only(rest: str) -> bool:
    return rest == "" or any(rest.startswith(e) and endings_only(rest[len(e) :]) for e in ENDINGS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-items", type=int, default=10)
    parser.add_argument("--examples", type=int, default=5)
    args = parser.parse_args()
    if not DATA.exists():
        raise SystemExit(f"needs {DATA} (the project's shared test data)")

    from hermes.builtins.default_candidates import word_forms
    from hermes.storage.db import get_db

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HERMES_HOME"] = tmp
        db = get_db(Path(tmp) / "study.db")
        with DATA.open() as f:
            for line in f:
                paper = json.loads(line)
                db.execute(
                    "INSERT INTO items (guid, title, summary) VALUES (?, ?, ?)",
                    [paper["arxiv_id"], paper["title"], paper["abstract"]],
                )
        db.conn.commit()
        items_of = dict(db.execute("SELECT term, doc FROM items_fts_words_vocab"))
        terms = sorted(items_of)

        def found(terms_: list[str]) -> set[int]:
            query = " OR ".join(terms_)
            return {
                r[0] for r in db.execute("SELECT rowid FROM items_fts_words WHERE items_fts_words MATCH ?", [query])
            }

        rows = collections.defaultdict(lambda: [0, 0, 0, 0])
        others = collections.defaultdict(collections.Counter)
        for word in terms:
            if not word.isalpha() or items_of[word] < args.min_items:
                continue
            forms = [f for f in word_forms(db, word) if not f.endswith("*")]
            own = found(forms)
            inflections = {f.strip('"') for f in forms}
            i = bisect.bisect_left(terms, word)
            longer = []
            while i < len(terms) and terms[i].startswith(word):
                if terms[i] not in inflections:
                    longer.append(terms[i])
                i += 1
            family = [t for t in longer if endings_only(t[len(word) :])]
            other = [t for t in longer if t not in family]
            by_family = found([f'"{t}"' for t in family]) - own if family else set()
            by_other = found([f'"{t}"' for t in other]) - own - by_family if other else set()
            row = rows[min(len(word), 12)]
            row[0] += 1
            row[1] += len(own)
            row[2] += len(by_family)
            row[3] += len(by_other)
            for t in other:
                others[min(len(word), 12)][f"{word}→{t}"] = items_of[t]

    print(f"{len(terms):,} words in 2,000 arXiv abstracts; words of {args.min_items}+ items, by length\n")
    print("| letters | words | items they find | + by a prefix, own family | + other words only | top other words |")
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    for length in sorted(rows):
        n, own, fam, oth = rows[length]
        top = ", ".join(f"{k} ({v})" for k, v in others[length].most_common(args.examples))
        label = f"{length}+" if length == 12 else str(length)
        print(f"| {label} | {n} | {own:,} | {fam / own:.1%} | {oth / own:.1%} | {top} |")


if __name__ == "__main__":
    main()
