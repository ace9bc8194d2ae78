"""The corpus, the personas and the metrics of the ranking-quality protocol (QUALITY.md).

- Corpus: ``../shared/data/arxiv-2000``; item text = title + ". " + abstract.
- Personas: one per topic with ≥ 60 items (9) and one per pair of them (36), each with an
  interests text written the way a researcher describes their work. The texts were written
  once, before any tuning, and are not adjusted to the results.
- Relevance: 1.0 if the primary topic is liked, 0.5 if only a cross-listed category maps
  to a liked topic, else 0. A simulated person likes an item iff its relevance is > 0.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

#: ``../shared/data`` next to the checkout; $HERMES_SHARED_DATA points elsewhere (a git
#: worktree one level deeper, for instance).
SHARED_DATA = Path(os.environ.get("HERMES_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
DATA = SHARED_DATA / "arxiv-2000" / "arxiv_2000_topics.jsonl"
MIN_TOPIC_ITEMS = 60

# What a researcher in each area writes about their work (long form for single-topic
# personas, a shorter clause for the two-topic ones).
INTERESTS = {
    "astro-ph": (
        "I work on galaxy formation and evolution: stellar populations and star formation "
        "in nearby galaxies, active galactic nuclei, supernovae, and cosmological surveys of "
        "large-scale structure and the cosmic microwave background.",
        "galaxy evolution, stellar populations, supernovae and cosmological surveys",
    ),
    "hep": (
        "Particle physics phenomenology at colliders — Higgs searches at the LHC, "
        "supersymmetry, QCD corrections and parton distributions — and the theory side: "
        "string theory, gauge theories, dualities and branes.",
        "collider phenomenology, QCD, supersymmetry and string theory",
    ),
    "cond-mat": (
        "Condensed matter: strongly correlated electrons, high-temperature "
        "superconductivity, quantum magnetism and spin chains, electronic transport in "
        "quantum dots, nanowires and graphene, and the statistical mechanics of disordered "
        "and soft materials.",
        "correlated electrons, superconductivity, magnetism and transport in nanostructures",
    ),
    "math": (
        "Pure mathematics: algebraic geometry and number theory, combinatorics and graph "
        "theory, probability and stochastic processes, representation theory, and the "
        "analysis of partial differential equations.",
        "algebraic geometry, number theory, combinatorics and probability theory",
    ),
    "physics": (
        "Applied and general physics: lasers, nonlinear optics and photonics, fluid "
        "dynamics and turbulence, plasma physics, atomic and molecular physics, and the "
        "physics of complex networks and social systems.",
        "optics and photonics, fluid dynamics, plasmas and atomic physics",
    ),
    "quant-ph": (
        "Quantum information science: entanglement and its measures, quantum computation "
        "and error correction, quantum cryptography and key distribution, decoherence and "
        "open quantum systems, and experiments with trapped ions and photons.",
        "entanglement, quantum computing, quantum cryptography and decoherence",
    ),
    "cs": (
        "Computer science: design and analysis of algorithms, computational complexity, "
        "information and coding theory for communication channels, networking protocols, "
        "and machine learning.",
        "algorithms, complexity, coding and information theory, and networks",
    ),
    "nucl": (
        "Nuclear physics: nuclear structure and the shell model, nuclear reactions and "
        "heavy-ion collisions, the quark-gluon plasma, and the nuclear equation of state in "
        "neutron stars.",
        "nuclear structure, heavy-ion collisions and the nuclear equation of state",
    ),
    "gr-qc": (
        "Gravitation: general relativity and black holes, gravitational waves and their "
        "detection, cosmological models and dark energy, and approaches to quantum gravity "
        "such as loop quantum cosmology.",
        "black holes, gravitational waves, relativistic cosmology and quantum gravity",
    ),
}


@dataclass(frozen=True)
class Paper:
    index: int
    arxiv_id: str
    title: str
    abstract: str
    categories: tuple[str, ...]
    topic: str
    cross_topics: frozenset[str]

    @property
    def text(self) -> str:
        return f"{self.title}. {self.abstract}"


@dataclass(frozen=True)
class Persona:
    name: str
    topics: tuple[str, ...]
    interests: str

    def relevance(self, paper: Paper) -> float:
        if paper.topic in self.topics:
            return 1.0
        if paper.cross_topics & set(self.topics):
            return 0.5
        return 0.0


def load_papers(path: Path = DATA) -> list[Paper]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # The coarse topic of a category is the topic of its archive (hep-th -> hep, math-ph
    # -> math), read off the primary categories; cross-lists map the same way.
    archive_topic = {r["archive"]: r["topic"] for r in rows}
    papers = []
    for k, r in enumerate(rows):
        cross = {archive_topic.get(c.split(".")[0]) for c in r["categories"]} - {None}
        papers.append(
            Paper(k, r["arxiv_id"], r["title"], r["abstract"], tuple(r["categories"]), r["topic"], frozenset(cross))
        )
    return papers


def make_personas(papers: list[Paper]) -> list[Persona]:
    counts: dict[str, int] = {}
    for p in papers:
        counts[p.topic] = counts.get(p.topic, 0) + 1
    topics = sorted(t for t, n in counts.items() if n >= MIN_TOPIC_ITEMS)
    missing = set(topics) - set(INTERESTS)
    if missing:
        raise SystemExit(f"no interests text written for topics {sorted(missing)}")
    personas = [Persona(t, (t,), INTERESTS[t][0]) for t in topics]
    for a, b in itertools.combinations(topics, 2):
        text = f"My work spans two areas: {INTERESTS[a][1]}; and {INTERESTS[b][1]}."
        personas.append(Persona(f"{a}+{b}", (a, b), text))
    return personas


def split(n: int, seed: int) -> tuple[list[int], list[int]]:
    """The protocol's fixed split of ``n`` papers for ``seed``: (history, held out), each
    sorted (half the papers are shown and rated, half only ranked for scoring)."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(n)
    return sorted(order[: n // 2].tolist()), sorted(order[n // 2 :].tolist())


def ndcg_at(ranked_rel: list[float], all_rel: list[float], k: int = 10) -> float:
    def dcg(rels):
        return sum(r / math.log2(i + 2) for i, r in enumerate(rels[:k]))

    ideal = dcg(sorted(all_rel, reverse=True))
    return dcg(ranked_rel) / ideal if ideal > 0 else 0.0


def precision_at(ranked_rel: list[float], k: int = 10) -> float:
    return sum(1 for r in ranked_rel[:k] if r > 0) / k
