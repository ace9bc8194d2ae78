"""Authors: parsed into a list of names, normalised, and keyed for matching.

Feeds spell authors many ways: one ``dc:creator`` with arXiv's comma-separated list, one
``<author>`` per person, ``email (Name)``, "Last, First", a leading "Authors: …" paragraph
in arXiv-API-to-RSS bridges. :func:`parse_authors` turns any of them into display names
("Lukas J. Furtak"); :func:`author_key` folds a name to what two spellings of one person
share — surname and first initial, accents and case removed ("furtak, l") — which is what
the preference scorer counts and what a search by author matches.

Items store the list as JSON in ``items.authors``; :func:`item_authors` reads it back (the
BibTeX export and the corpus entity view use it).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: registering the plugins loads no sqlite-utils (issue 36)
    import sqlite_utils

#: names kept per item (a collaboration paper can list thousands)
MAX_AUTHORS = 200
#: of those, how many become preference keys: the first authors carry the paper
MAX_KEYED = 12

_PARTICLES = {
    "van",
    "von",
    "der",
    "den",
    "de",
    "del",
    "della",
    "di",
    "da",
    "du",
    "dos",
    "das",
    "la",
    "le",
    "ter",
    "ten",
    "st",
    "st.",
    "al",
    "el",
    "bin",
    "ibn",
    "zu",
    "y",
}
#: generational suffixes: part of a name, never its surname ("Theodore Roosevelt IV") nor
#: another person ("Martin Luther King, Jr." in an arXiv API list)
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
#: words that make a name an organisation or a show, not a person ("The Gradient Hour",
#: "LIGO Scientific Collaboration"): never split into given names and a surname
ORGANISATION_WORDS = frozenset(
    """
    the lab labs laboratory team podcast hour show news institute university college society
    group inc ltd llc gmbh radio network collaboration consortium foundation journal online
    magazine blog project observatory agency council committee association editors staff
""".split()
)
#: titles before a name ("Dr. Ana Lopez"): a byline's courtesy, not part of the name (it
#: keyed her as "lopez, d" and an author search for "Ana Lopez" missed her)
HONORIFICS = frozenset("dr prof mr ms mrs mx".split())
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|<[^>]*>")
_EMAIL = re.compile(r"\S+@\S+")
_PREFIX = re.compile(r"^\s*(?:authors?|by|autores?|auteurs?|autori|von)\s*[:\-]\s*", re.I)
# Portuguese / Italian "e" only in lower case and not as an initial: "E. Schrödinger Jr." was
# split at its initial into "Schrödinger Jr."
_AND = re.compile(r"\s*(?:;|\band\b|&|\bund\b|(?-i:\be\b)(?!\.)|\bet\b(?!\s+al))\s*", re.I)
_ET_AL = re.compile(r",?\s*\bet\s+al\.?", re.I)
_ABBREVIATED_SUFFIX = re.compile(r"\b[JS]r\.$", re.I)
_INITIALS = re.compile(r"^(?:[A-Z]\.?\s*-?)+$|^[A-Z][a-z]+(?:\s+[A-Z]\.?)*$")


def clean_name(name: str) -> str:
    """One name tidied: whitespace collapsed, "Last, First" turned around, stray
    punctuation removed. ``""`` when nothing name-like is left."""
    name = name or ""
    if _EMAIL.search(name) and "(" in name:  # RSS's "jdoe@example.org (John Doe)"
        name = name[name.index("(") + 1 :].split(")", 1)[0]
    elif "(" in name and ")" not in name.split("(", 1)[1]:
        # An open bracket never closed: feedparser's e-mail split cut "a@b.example (Name)"
        # into email "a@b.exam" and name "ple (Name" — the name is what follows it.
        name = name.split("(", 1)[1]
    name = _EMAIL.sub("", _BRACKETS.sub(" ", name))
    name = " ".join(name.replace("\u00a0", " ").split())
    abbreviated = _ABBREVIATED_SUFFIX.search(name)  # "King, Jr.": its full stop is the name's
    name = name.strip(" ,;:.-*\u2020\u2021") + ("." if abbreviated else "")
    if name.count(",") == 1:
        last, first = (p.strip() for p in name.split(","))
        if is_suffix(first):  # "Martin Luther King, Jr.": the suffix stays, after the name
            name = f"{last} {first}"
        elif first and last:
            name = f"{first} {last}"
    if len(name) < 2 or not any(c.isalpha() for c in name) or len(name) > 100:
        return ""
    # Initials glued together ("L.J. Furtak") get a space, as arXiv writes them.
    return re.sub(r"\b([A-Z])\.(?=[A-Z])", r"\1. ", without_honorifics(name))


def without_honorifics(name: str) -> str:
    """``name`` without leading titles ("Dr. Ana Lopez" → "Ana Lopez"); a name that is only
    a title stays as written."""
    words = name.split(" ")
    while len(words) > 1 and words[0].casefold().rstrip(".") in HONORIFICS:
        words.pop(0)
    return " ".join(words)


def is_suffix(word: str) -> bool:
    """Whether ``word`` is a generational suffix ("Jr.", "III")."""
    return word.casefold().strip(" .,") in SUFFIXES


def is_organisation(name: str) -> bool:
    """Whether ``name`` names an organisation or a show rather than a person: a word such
    as "Lab", "Podcast" or "online" ("heise online" was cited as "online, heise" and
    explained as "by online"), or no capital at all, which no person's name lacks."""
    words = name.split()
    return any(w.casefold().strip(".,") in ORGANISATION_WORDS for w in words) or (
        len(words) > 1 and not any(c.isupper() for c in name)
    )


def _with_suffixes(parts: list[str]) -> list[str]:
    """Comma-separated parts with each suffix joined to the name before it: "Martin Luther
    King, Jr., Coretta Scott King" is two people, not three."""
    out: list[str] = []
    for part in parts:
        if out and is_suffix(part):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _split(text: str) -> list[str]:
    text = _ET_AL.sub("", _PREFIX.sub("", text))
    # "Furtak, Lukas J." alone is one person written surname first, not two people.
    parts = _with_suffixes([p.strip() for p in text.split(",")])
    if len(parts) == 2 and len(parts[0].split()) == 1 and _INITIALS.match(parts[1] or "-"):
        return [f"{parts[1]} {parts[0]}"]
    out = []
    for part in parts:
        out.extend(p for p in _AND.split(part) if p and p.strip())
    return out


def parse_authors(*sources) -> list[str]:
    """Display names from any mix of strings (lists separated by commas, "and", ";") and
    feedparser author dicts (``{"name": …}``), de-duplicated by :func:`author_key`, in
    order, at most :data:`MAX_AUTHORS`."""
    names: list[str] = []
    seen: set[str] = set()
    for source in sources:
        values = source if isinstance(source, (list, tuple)) else [source]
        for value in values:
            if isinstance(value, dict):
                value = value.get("name") or ""
            if not isinstance(value, str) or not value.strip():
                continue
            for raw in _split(value):
                name = clean_name(raw)
                key = author_key(name)
                if name and key and key not in seen:
                    seen.add(key)
                    names.append(name)
                    if len(names) >= MAX_AUTHORS:
                        return names
    return names


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).casefold()


def split_name(name: str) -> tuple[str, str]:
    """(given names, surname) of a display name; a particle stays with the surname
    ("Johannes van der Waals" → ("Johannes", "van der Waals"))."""
    words = [w for w in name.split() if not is_suffix(w)] or name.split()
    if len(words) <= 1:
        return "", " ".join(words)
    start = len(words) - 1
    while start > 0 and words[start - 1].lower() in _PARTICLES:
        start -= 1
    if start == 0:  # "da Silva": particles and a surname, no given name
        return "", " ".join(words)
    return " ".join(words[:start]), " ".join(words[start:])


def author_key(name: str) -> str:
    """Surname and first initial, folded: "Lukas J. Furtak", "L. Furtak" and "FURTAK, L."
    all give ``"furtak, l"``; a surname alone gives ``"furtak"``; ``""`` for no name."""
    # a title before the name ("Dr. Karl Schmidt") is no initial: a search typed as the feed
    # spells the person found nothing (stored names lose it already: clean_name)
    given, surname = split_name(clean_name(name) if "," in (name or "") else without_honorifics((name or "").strip()))
    surname = " ".join(re.sub(r"[^\w\s'-]", "", _fold(surname)).split())
    if not surname:
        return ""
    initial = next((c for c in _fold(given) if c.isalpha()), "")
    return f"{surname}, {initial}" if initial else surname


#: the Latin letters Unicode gives no decomposition, so the fold keeps them: a person types
#: the base letter (a trial's ``--author Luczak`` found nothing for Łuczak, where "Muller"
#: found Müller). Folded in the comparison, not in the keys the snapshots and click
#: statistics already hold.
_UNDECOMPOSED = str.maketrans(
    {"ł": "l", "ø": "o", "đ": "d", "ð": "d", "ħ": "h", "ı": "i", "æ": "ae", "œ": "oe", "þ": "th"}
)


def key_matches(key: str, wanted: str) -> bool:
    """Whether the author key ``key`` is the person ``wanted`` (another key) names: equal,
    or ``wanted`` is a surname alone and ``key`` has that surname (letters such as ł and ø
    matching their base letters)."""
    key, wanted = key.translate(_UNDECOMPOSED), wanted.translate(_UNDECOMPOSED)
    return key == wanted or ("," not in wanted and key.split(",", 1)[0] == wanted)


def surname(name: str) -> str:
    """How an explanation names a person: "Furtak"; an organisation by its whole name."""
    return name if is_organisation(name) else split_name(name)[1] or name


def fuller(listed: list[str], written: list[str]) -> list[str]:
    """The fuller of two author lists of one entry: the names the feed lists as authors
    (``<author>``, ``dc:creator``), or those its text writes out (an arXiv bridge's author
    paragraph), when that holds every listed name and more. The JWST listing's ``<author>``
    is its first author, its description the whole list."""
    keys = {author_key(n) for n in written}
    if len(written) > len(listed) and all(author_key(n) in keys for n in listed):
        return written
    return listed or written


def parse_stored(raw) -> list[str]:
    """The stored JSON author list, ``[]`` when missing or malformed."""
    try:
        value = json.loads(raw or "[]")
    except (TypeError, ValueError):
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def item_authors(db: sqlite_utils.Database, item_id: int) -> list[str]:
    """The item's authors as display names, first author first (``[]`` when unknown or
    when there is no such item)."""
    row = db.execute("SELECT authors FROM items WHERE id = ?", [int(item_id)]).fetchone()
    return parse_stored(row[0]) if row else []


def matches(names: list[str], query: str) -> bool:
    """Whether one of ``names`` is the person ``query`` names: a full name matches by
    :func:`author_key` and, where both spell a first name out, by that name too; a single
    word matches any author with that surname."""
    query = (query or "").strip()
    wanted = author_key(query)
    return bool(wanted) and any(key_matches(author_key(n), wanted) and same_given(n, query) for n in names)


def given_name(name: str) -> str:
    """The first given name, folded, where it is spelled out ("Søren Björk" → "soren"); ""
    for an initial ("S. Björk") or none."""
    given, _ = split_name(clean_name(name) if "," in name else without_honorifics(name.strip()))
    first = re.sub(r"[^\w-]", "", _fold(given.split()[0])).translate(_UNDECOMPOSED) if given.split() else ""
    return first if len(first) > 1 else ""


def same_given(name: str, query: str) -> bool:
    """Whether ``name`` and ``query`` may be one person by their first names: either gives
    only an initial, or one spelled-out name begins the other ("Tom" and "Tomasz"). A
    retrial's "Soren Bjork" found Sławomir Björk's papers (both "bjork, s")."""
    a, b = given_name(name), given_name(query)
    return not a or not b or a.startswith(b) or b.startswith(a)


__all__ = [
    "MAX_AUTHORS",
    "MAX_KEYED",
    "ORGANISATION_WORDS",
    "SUFFIXES",
    "author_key",
    "fuller",
    "is_organisation",
    "is_suffix",
    "item_authors",
    "key_matches",
    "matches",
    "parse_authors",
    "parse_stored",
    "same_given",
    "split_name",
    "surname",
]
