"""The persona's written interests as vectors: the whole text and its separate clauses.

A persona usually lists several interests; the profile scorer matches each item against
its best-matching interest: the clauses, with those about the same thing grouped
(:func:`interest_groups`). The vectors are persisted on the user row, keyed by
sha256(model, format, text), so a fresh process ranks without loading the model unless the
text changed.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from typing import TYPE_CHECKING

import numpy as np

from hermes.facekit.status import step

from ..contract import Embedder
from ..embed import from_blob, to_blob

if TYPE_CHECKING:  # annotations only: registering the plugins loads no sqlite-utils (issue 36)
    import sqlite_utils

#: Bumped when what is persisted per interests text changes (v2: the clauses too).
INTERESTS_FORMAT = "v2"
MAX_CLAUSES = 12

_SENTENCE = re.compile(r"(?<=[.!?])\s+|[;:\n\u2014\u2013]")
_CLAUSE = re.compile(r",\s*")
_LEADING = re.compile(r"^(?:and|or|also|as well as|plus|including)\s+", re.IGNORECASE)


# What a person writes to say what they do NOT want: "I do not care about robotics, weather
# or chemistry", "quantum computing but not hardware", "Not crypto.". From the cue to the end
# of its sentence the text names topics to leave out; embedded as interests they pulled
# those very topics up ("nearest interest: weather or chemistry"). Cues are phrases, not a
# bare "no" / "without" / "skip" that topics use ("no-go theorems", "learning without
# labels", "skip connections").
_UNWANTED = re.compile(
    r"\b(?:do|does|did|am|are|is|'m)\s+not\s+(?:care|want|need|like|follow|read)\b"
    r"|\b(?:don'?t|doesn'?t|didn'?t)\s+(?:care|want|need|like|follow|read)\b"
    r"|\bnot\s+(?:interested|into|keen)\b|\buninterested\b|\bno\s+interest\b"
    r"|\bnothing\s+(?:on|about)\b|\b(?:but|and)\s+not\b|(?:^|[,(]|\s-)\s*not\b(?!\s+only\b)"
    r"|\bexcept\b|\bexcluding\b|\bexclude\b|\bavoid\b|\brather\s+not\b|\bno\s+more\b",
    re.IGNORECASE,
)


_LEADING_NOT = re.compile(r"not\b(?!\s+only\b)", re.IGNORECASE)
_FILLER = re.compile(
    r"[\s,]*(?:(?:i|i'm|im|i am|we|we're|we are|me|my|really|just|also|and|but|so|"
    r"anything|everything|all|please|honestly|personally)[\s,]*)*",
    re.IGNORECASE,
)


def split_unwanted(text: str) -> tuple[str, list[str]]:
    """``(the text without what it asks not to see, those parts as written)``: each part runs
    from a cue (:data:`_UNWANTED`) to the end of its sentence."""
    text = text or ""
    kept, unwanted, at = [], [], 0
    for start, end in _sentence_spans(text):
        cue = _cue(text, start, end)
        if cue is None:
            continue
        before = text[start:cue]
        # "I do not care about …", "Anything except …": the words before the cue say who,
        # not what
        kept.append(text[at:start] + ("" if _FILLER.fullmatch(before) else before))
        part = text[cue:end].strip(" ,;.()-")
        if part:
            unwanted.append(part)
        at = end
    kept.append(text[at:])
    return "".join(kept).strip(), unwanted


def _cue(text: str, start: int, end: int) -> int | None:
    """Where a sentence starts saying what is not wanted, or None."""
    lead = len(text[start:end]) - len(text[start:end].lstrip())
    if _LEADING_NOT.match(text, start + lead, end):  # "Not crypto."
        return start + lead
    found = _UNWANTED.search(text, start, end)
    return found.start() if found else None


def _sentence_spans(text: str):
    at = 0
    for m in _SENTENCE.finditer(text):
        yield at, m.start()
        at = m.end()
    yield at, len(text)


def wanted_text(text: str) -> str:
    """The interests text the ranking reads: without what it asks not to see."""
    return split_unwanted(text)[0]


def interest_clauses(text: str) -> list[str]:
    """The separate interests in a text ("galaxy evolution, AGN feedback; dark matter"),
    split at punctuation only: "formation and evolution of galaxies" stays one interest.
    What the text asks not to see is no interest (:func:`split_unwanted`).

    A persona usually lists several interests; one embedding of the whole text lands
    between them and matches none well (on the arXiv benchmark, nDCG@10 with no clicks
    rose from 0.72 to 0.88 by scoring each item against its best-matching clause)."""
    parts: dict[str, None] = {}
    for sentence in _SENTENCE.split(wanted_text(text)):
        for part in _CLAUSE.split(sentence):
            part = _LEADING.sub("", part.strip(" .,'\"()[]")).strip()
            if len(part) > 1 and any(ch.isalpha() for ch in part):  # "QCD" and "AI" count
                parts.setdefault(part, None)
    return list(parts)[:MAX_CLAUSES]


#: clauses whose cosine is at least this are taken to describe the same interest
SAME_INTEREST = 0.2


def interest_groups(clauses: np.ndarray) -> np.ndarray:
    """Each clause vector replaced by the normalised sum of the clauses that describe the
    same interest (cosine >= ``SAME_INTEREST``, itself included).

    A list of sub-topics of one subject ("Hubbard model, Mott transition, Kondo effect")
    becomes one vector near the whole text, so a single clause no longer pulls in the
    neighbouring subject that shares it; clauses about different interests ("galaxy
    evolution; string theory") stay apart, so the best-matching interest still wins. On the
    fine-grained benchmark personas this beat both the whole text and the best clause alone
    (benchmarks/results/ranking.md)."""
    clauses = np.asarray(clauses, dtype=np.float32)
    if len(clauses) < 2:
        return clauses
    groups = interest_members(clauses).astype(np.float32) @ clauses
    return groups / np.maximum(np.linalg.norm(groups, axis=1, keepdims=True), 1e-12)


def interest_members(clauses: np.ndarray) -> np.ndarray:
    """``members[i, j]``: clause ``j`` describes the same interest as clause ``i`` (cosine
    >= ``SAME_INTEREST``; every clause its own)."""
    clauses = np.asarray(clauses, dtype=np.float32)
    same = clauses @ clauses.T >= SAME_INTEREST
    np.fill_diagonal(same, True)
    return same


def interests_key(model: str, text: str) -> str:
    # A text that asks not to see something is embedded without it (a later format); every
    # other text's vectors are as before, so they are not embedded again.
    version = f"{INTERESTS_FORMAT}+unwanted" if split_unwanted(text)[1] else INTERESTS_FORMAT
    return hashlib.sha256(f"{model}\0{version}\0{text}".encode()).hexdigest()


def interests_vectors(db: sqlite_utils.Database, user: dict, embedder: Embedder) -> np.ndarray:
    """The embedded interests text (row 0) and its clauses (rows 1…), persisted on the user
    row keyed by sha256(model, format, text): a fresh process ranks without loading the
    model unless the text changed."""
    text = user["interests"] or ""
    key = interests_key(embedder.name, text)
    row = db.execute("SELECT interests_key, interests_vec FROM users WHERE id = ?", [user["id"]]).fetchone()
    if row and row[0] == key and row[1]:
        return from_blob(row[1]).reshape(-1, embedder.dimension)
    clauses = interest_clauses(text)
    # The first embedding of a process loads the model (seconds): say so to a waiting person.
    with step(
        f"embedding the interests of {user.get('name') or 'the persona'} (new or changed "
        "text; the model loads on first use)"
    ):
        vecs = embedder.embed([wanted_text(text) or text, *(clauses if len(clauses) > 1 else [])])
    try:
        db.execute(
            "UPDATE users SET interests_key = ?, interests_vec = ? WHERE id = ?",
            [key, to_blob(vecs), user["id"]],
        )
    except sqlite3.OperationalError:  # a read-only database still ranks (and re-embeds)
        pass
    return vecs
