"""Verbs, participles and generic adjectives among the keyphrase tagger's one-word topics.

    nice .venv/bin/python benchmarks/keyphrase_junk.py [--tokens PATH] [--write]

The 2,000 labelled arXiv papers (benchmarks/topics_data.py) go through the real
all-MiniLM-L6-v2 once; each paper's proposals are made twice from the same token vectors:
``before`` with :func:`hermes.builtins.word_roles.noun_positions` answering "noun" for every
word (the tagger of VERSION 19), ``now`` with the rule. Kept keyphrases follow the core's
rule over the whole archive (proposed for at least ``MIN_ITEMS`` items, an item's best
``MAX_PER_ITEM``). The papers are split in two by the hash of their arXiv id
(topics_quality.half): variants of the rule are compared on half A, figures are reported on
half B.

The judge is a list read by hand from the ``before`` tagger's kept one-word keyphrases
(:data:`JUNK`, :data:`PARTICIPLE_ADJECTIVES`): it is not the rule, so the rule can be
scored against it. ``--tokens PATH`` keeps the model's pass in a pickle (about 540 MB) so a
second run costs no model pass.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections import Counter
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("HERMES_LOAD_ENTRYPOINTS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import topics_data  # noqa: E402
from topics_quality import half  # noqa: E402

# Verbs, participles of argument, adverbs and generic adjectives and nouns found among the
# before tagger's kept one-word keyphrases of the 2,000 papers (read by hand, both halves).
JUNK = frozenset(
    """
    taking aimed conjectured carried showed utilizing equipped ranging reaching needed
    generalizing characterizing characterising optimizing allowing exhibiting estimating
    employed belonging stating undergoing stated pointing rephrased mimicking neglecting
    letting yielding employing getting demonstrating interested pointed quantified regarded
    implementing yielded caused viewed performing validating introducing examining motivated
    desired acting accompanied indicating realized minimized pertaining devoted studying
    describing abridged coincide converge reproduce vanish offer generalize establish induce
    illustrate reach rely impose quantify optimize infer constrain govern construct enhance
    cause persist support propagate clarify help summarize attain evolve oscillate entail
    radiate designate serve obey depart coexist assess deviate interact relay emit suppress
    fulfill undergoe pour view furnish reflect search annotate solve transmit denote visualize
    belong add change thank rise practical sufficient analogous equal positive considerable
    remarkable satisfactory dramatic amenable applicable contrary subject deal spite manner
    fashion place plethora part situation people hallmark amount emphasis
""".split()
)
# Participles used as technical adjectives ("entangled", "polarized"): no topic alone either
# (the phrase they start, "entangled state", is one), counted apart.
PARTICIPLE_ADJECTIVES = frozenset(
    """
    entangled magnetized perturbed renormalized deformed disordered polarized uncorrelated
    superconducting emitting propagating oscillating gravitating rotating unfolding fluctuating
    interacting gauged normed parametrized quenched unordered simulated decaying triangulated
    colliding noncommuting confining accreted quantized bounded redshifted pulsating commuting
    cp-violating star-forming light-emitting electron-doped q-deformed nucleating enveloping
    entangling measurement-based
""".split()
)


def model_pass(texts: list[str], cache: Path | None):
    """``[(vector, tokens)]`` per text from the real model (or the pickle ``cache``)."""
    if cache is not None and cache.exists():
        stored_texts, out = pickle.loads(cache.read_bytes())
        if stored_texts == texts:
            return out
    from hermes.embed import MiniLMEmbedder

    embedder, out = MiniLMEmbedder(), []
    for start in range(0, len(texts), 64):
        vectors, tokens = embedder.embed_tokens(texts[start : start + 64])
        out += list(zip(vectors, tokens))
    if cache is not None:
        cache.write_bytes(pickle.dumps((texts, out)))
    return out


def proposals(items, passed, *, rule: bool = True, **sets) -> list[dict[str, float]]:
    """Every item's proposals through the core's hook (``rule``: the word-roles rule on;
    ``sets``: word_roles word sets replaced, for the variants)."""
    from hermes.builtins import default_keyphrases as kp
    from hermes.builtins import word_roles
    from hermes.ingest.tagging import propose

    patches = [mock.patch.object(word_roles, name, frozenset(words)) for name, words in sets.items()]
    if not rule:
        patches.append(mock.patch.object(word_roles, "noun_positions", lambda words, breaks: [True] * len(words)))
    for p in patches:
        p.start()
    try:
        kp._word.cache_clear()
        out = []
        for item, (vector, tokens) in zip(items, passed):
            out.append(propose([item], [vector], [tokens])[item["id"]])
        return out
    finally:
        for p in patches:
            p.stop()


def kept(all_proposals: list[dict[str, float]]) -> list[list[str]]:
    """Each item's keyphrases by the core's rule over the whole archive."""
    from hermes.ingest.tagging import MAX_PER_ITEM, MIN_ITEMS

    counts = Counter(t for p in all_proposals for t in p)
    return [
        [t for t, _ in sorted(p.items(), key=lambda ts: -ts[1]) if counts[t] >= MIN_ITEMS][:MAX_PER_ITEM]
        for p in all_proposals
    ]


def figures(tags: list[list[str]], rows: list[int]) -> dict:
    singles = Counter(t for r in rows for t in tags[r] if " " not in t)
    return {
        "kept": sum(len(tags[r]) for r in rows),
        "tagged": sum(bool(tags[r]) for r in rows),
        "single": sum(singles.values()),
        "junk": sum(n for w, n in singles.items() if w in JUNK),
        "participle": sum(n for w, n in singles.items() if w in PARTICIPLE_ADJECTIVES),
        "junk_words": singles,
    }


def compare(before: list[list[str]], now: list[list[str]], rows: list[int]) -> tuple[str, Counter]:
    b, n = figures(before, rows), figures(now, rows)
    lost = Counter(
        t
        for r in rows
        for t in set(before[r]) - set(now[r])
        if t not in JUNK and t not in PARTICIPLE_ADJECTIVES and t not in now[r]
    )
    # a keyphrase the item lost although the rule does not drop it (another took its place)
    line = (
        f"{len(rows)} papers: kept keyphrases {b['kept']} -> {n['kept']}, papers with one "
        f"{b['tagged']} -> {n['tagged']}, one-word {b['single']} -> {n['single']}, judged junk "
        f"{b['junk']} -> {n['junk']}, participle adjectives {b['participle']} -> {n['participle']}, "
        f"other keyphrases lost {sum(lost.values())} (gained {_gained(before, now, rows)})"
    )
    return line, lost


def _gained(before, now, rows) -> int:
    return sum(len(set(now[r]) - set(before[r])) for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=Path, help="pickle of the model pass (made if missing)")
    ap.add_argument("--write", action="store_true", help="write benchmarks/results/keyphrase_junk.md")
    args = ap.parse_args(argv)
    import hermes

    papers = topics_data.load_papers()
    items = [topics_data.item_of(k, p) for k, p in enumerate(papers)]
    from hermes.ingest.text import embedding_text

    passed = model_pass([embedding_text(i["title"], i["summary"]) for i in items], args.tokens)
    before = kept(proposals(items, passed, rule=False))
    halves = {w: [k for k, p in enumerate(papers) if half(p) == w] for w in "AB"}
    lines = [f"hermes: {hermes.__file__}", "", "Choosing half A, variants of the rule:", ""]
    from hermes.builtins import word_roles

    variants = {
        "rule": {},
        "no infinitive 'to' before a verb": {"VERB_BEFORE": word_roles.VERB_BEFORE - {"to"}},
        "participle forms only (no verb markers)": {"VERB_BEFORE": (), "OBJECT_AFTER": ()},
    }
    chosen = None
    for name, sets in variants.items():
        now = kept(proposals(items, passed, **sets))
        chosen = now if name == "rule" else chosen
        lines.append(f"- {name}: " + compare(before, now, halves["A"])[0])
        print(lines[-1], flush=True)
    line, lost = compare(before, chosen, halves["B"])
    gone = figures(before, halves["B"])["junk_words"] - figures(chosen, halves["B"])["junk_words"]
    lines += [
        "",
        "Reported half B, the rule:",
        "",
        f"- {line}",
        "- one-word keyphrases gone: " + ", ".join(f"{w} {c}" for w, c in gone.most_common(40)),
        "- still there, judged junk: "
        + ", ".join(
            f"{w} {c}"
            for w, c in figures(chosen, halves["B"])["junk_words"].most_common()
            if w in JUNK or w in PARTICIPLE_ADJECTIVES
        ),
        "- other keyphrases lost: " + ", ".join(f"{w} {c}" for w, c in lost.most_common(40)),
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        command = "nice .venv/bin/python benchmarks/keyphrase_junk.py"
        (HERE / "results" / "keyphrase_junk.md").write_text(
            f"# Junk one-word keyphrases\n\nCommand: `{command}`\n\n{text}\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
