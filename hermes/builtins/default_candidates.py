"""Built-in candidate filters: recency window, already-clicked, a removed feed's items, in
an unread list the entries a library import stored that only its likes hold (of any
persona: :func:`hermes.storage.records.import_only_items`), keyword / tag / type / author, ids.

Recency, ids, tag, type and author are answered from the in-memory matrix; only the keyword
match reads SQLite: every word must occur in the title or summary. A word that is one whole token
(letters and digits) is looked up in the index of the words as written (``items_fts_words``,
migration ``core:m018_items_fts_words``) as itself or one of its inflections, which
:func:`word_forms` picks from that index's vocabulary: "witness" finds "witnesses" and
"witnessed" but not "with" or "within", "graphs" finds "graph" but not "graphene" (a trial:
a prefix of the porter stem, "wit*", found 105 of 165 items for "witness"). A word of
:data:`PREFIX_FROM` letters or more also finds the longer words it begins, as typed, never by
its stem ("superconduct" finds "superconductor" and "superconductivity", "topolog" finds
"topology"), and ``word*`` does so at any length ("graph*" finds "graphene"; "graph" does
not); any other word ("100%", "x-ray", "c++") is matched literally as a substring with LIKE,
over the rows the indexed words left. Without the index every word is a LIKE (less a ``*``).
The index reads LaTeX's accented letters as the letters ("Schr\\"odinger" is found by
"Schrödinger" and "Schrodinger": migration ``core:m017_items_fts_readable``); a LIKE word
looks at that reading too (``items_fts_text``), its own accents folded ("Schrödinger's").
A query with a symbol the faces show for a feed's LaTeX ("ΛCDM", "ℓ₁") also finds the text
as stored ("$\\Lambda$CDM"): :func:`hermes.text.latex.spelled_out`. The index joins a
script to its word ("CeCoIn$_5$" is "cecoin5", "$T_c$" "tc": migration
``core:m019_items_fts_scripts``), and a query is also read that way (:func:`as_indexed`:
"CeCoIn₅" as the faces show it, "CeCoIn$_5$" as LaTeX writes it).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import unicodedata
from typing import TYPE_CHECKING

from hermes.text.authors import author_key, given_name, key_matches, matches, parse_stored
from hermes.text.latex import spelled_out
from hermes.text.subscripts import has_scripts, index_scripts, plain_scripts

from ..hookspecs import hookimpl
from ..ranking.preferences import source_key, tag_key, topic_key, type_key
from ..storage.clicks import clicked_items
from ..storage.records import import_only_items

if TYPE_CHECKING:  # annotations only
    import numpy as np


def author_keys_matching(matrix, name: str) -> list[str]:
    """The matrix's ``author:`` keys that ``name`` names: a full name by surname and initial
    ("L. Furtak" → ``author:furtak, l``), a surname alone every person of that surname."""
    wanted = author_key(name)
    if not wanted:
        return []
    return [k for k in matrix.key_index if k.startswith("author:") and key_matches(k[7:], wanted)]


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` literally (``%``, ``_`` and ``\\`` escaped)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@hookimpl
def hermes_candidates(db, user, query, matrix):
    # Here, not at the top: registering the plugins (`hermes serve` before `tools/list`)
    # loads no numpy (issue 36); a ranking has it already.
    import numpy as np

    keep = np.ones(len(matrix), dtype=bool)
    if query.since_days is not None:
        keep &= matrix.published >= time.time() - float(query.since_days) * 86400
    if query.exclude_clicked:
        clicked = clicked_items(db, user["id"])
        if clicked:
            keep[matrix.rows_of(clicked)] = False
    if not query.removed_feeds and query.item_ids is None:
        keep &= ~removed_feed_rows(db, matrix)
        if query.exclude_clicked:  # an unread list: a library's own papers are not news
            held = import_only_items(db)
            if held:
                keep[matrix.rows_of(held)] = False
    if query.item_ids is not None:
        keep &= np.isin(matrix.ids, np.array(query.item_ids, dtype=np.int64))
    if query.tag:
        keep &= matrix.has_key(tag_key(query.tag)) | matrix.has_key(topic_key(query.tag))
    if query.content_type:
        keep &= matrix.has_key(type_key(query.content_type))
    if query.author:
        keep &= matrix.has_any_key(author_keys_matching(matrix, query.author))
        if given_name(query.author):  # keys hold an initial: a first name spelled out is read
            keep &= _named_in_full(db, matrix, keep, query.author)
    if query.text and query.text.split():
        found = np.zeros(len(matrix), dtype=bool)
        found[matrix.rows_of(text_matches(db, query.text.split()))] = True
        # what the faces show as "ΛCDM" is stored as "$\Lambda$CDM": look for that spelling
        # too; and for a formula as the index reads it ("CeCoIn₅", "CeCoIn$_5$": "cecoin5")
        for spelling in (spelled_out(query.text), as_indexed(query.text), umlauts_spelled(query.text)):
            if spelling:
                found[matrix.rows_of(text_matches(db, spelling.split()))] = True
        keep &= found
    return keep


def _named_in_full(db, matrix, keep, author: str) -> np.ndarray:
    """Mask of the rows in ``keep`` whose authors include the person ``author`` names by
    their first name too (:func:`hermes.text.authors.matches`): "Soren Bjork" is not
    Sławomir Björk, though both are the key "bjork, s"."""
    import numpy as np

    ids = matrix.ids[keep].tolist()
    rows = db.execute("SELECT id, authors FROM items WHERE id IN (SELECT value FROM json_each(?))", [json.dumps(ids)])
    named = [item for item, raw in rows if matches(parse_stored(raw), author)]
    out = np.zeros(len(matrix), dtype=bool)
    out[matrix.rows_of(named)] = True
    return out


#: German's spelling of an umlaut without it ("Groebner", "Kaehler", "Schroedinger"), inside
#: a word of five letters or more ("does", "blue", "queue" keep theirs)
_UMLAUT_SPELLED = re.compile(r"(?<=[^\W\d_q])([aou])e(?=[^\W\d_]*)", re.I)


def umlauts_spelled(text: str) -> str | None:
    """``text`` with "ae", "oe", "ue" inside its longer words as the letter the index folds
    an umlaut to ("Groebner" → "Grobner", which finds "Gröbner"; a retrial's "Groebner" and
    "Kaehler" found nothing), or ``None`` when no word has one."""
    out = " ".join(_UMLAUT_SPELLED.sub(r"\1", w) if len(w) >= 5 else w for w in text.split())
    return out if out != " ".join(text.split()) else None


def removed_feed_rows(db, matrix) -> np.ndarray:
    """Mask of the matrix rows whose feed was removed (and not subscribed again)."""
    import numpy as np

    gone = [source_key(r[0]) for r in db.execute("SELECT id FROM removed_feeds WHERE id NOT IN (SELECT id FROM feeds)")]
    return matrix.has_any_key(gone) if gone else np.zeros(len(matrix), dtype=bool)


def as_indexed(text: str) -> str | None:
    """``text`` with its scripts as the index reads a feed's (migration
    ``core:m019_items_fts_scripts``), or ``None`` when that is ``text`` itself: the Unicode
    ones the faces show plain, LaTeX's joined to their word, the math's dollars gone
    ("CeCoIn₅" → "CeCoIn5", "CeCoIn$_5$" → "cecoin5", "$T_c$" → "tc")."""
    plain = plain_scripts(text)
    if has_scripts(plain):  # LaTeX's, typed
        plain = " ".join(w.strip("$") for w in index_scripts(plain).split())
    return plain if plain != text else None


#: one token for FTS5's unicode61 tokenizer: letters and digits only, with an optional
#: final ``*`` (the longer words it begins too, at any length: "graph*")
_WHOLE_WORD = re.compile(r"[^\W_]+\*?")


def text_matches(db, words: list[str]) -> list[int]:
    """Ids of the items whose title or summary has every one of ``words``."""
    whole = [w for w in words if _WHOLE_WORD.fullmatch(w)]
    # with the index when some word is whole, else (or without the index) all by LIKE; a
    # LIKE without the index's reading when the database has none
    tries = [(whole, True), (whole, False)] if whole else []
    for indexed, read in [*tries, ([], True)]:
        try:
            return _matches(db, indexed, [w for w in words if w not in indexed], read)
        except sqlite3.OperationalError:  # no FTS5 in this SQLite build, or no index
            continue
    return _matches(db, [], words, False)


def folded(word: str) -> str:
    """``word`` without its accents ("Schrödinger's" → "Schrodinger's"), as the index's
    reading of a LaTeX accent writes it."""
    return unicodedata.normalize(
        "NFC", "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))
    )


def _consonant(word: str, i: int) -> bool:
    if word[i] in "aeiou":
        return False
    return word[i] != "y" or i == 0 or not _consonant(word, i - 1)


def _measure(stem: str) -> int:
    """Porter's *m*: how many vowel-consonant runs ``stem`` has ("tr" 0, "trouble" 1, "troubles" 2)."""
    runs, vowel = 0, False
    for i in range(len(stem)):
        now = not _consonant(stem, i)
        runs += vowel and not now
        vowel = now
    return runs


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _cvc(stem: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y ("hop", not "hoop" or "box")."""
    n = len(stem)
    return (
        n >= 3
        and _consonant(stem, n - 1)
        and not _consonant(stem, n - 2)
        and _consonant(stem, n - 3)
        and stem[-1] not in "wxy"
    )


def inflection_root(word: str) -> str:
    """What the inflections of a (lower-case) word share: Porter's steps for plurals, -ed,
    -ing and -y (1a-1c) and for a final e or ll (5), not his steps for derived words (2-4),
    which give "general" and "generation", "universe" and "university" one stem.
    "witnesses", "witnessed", "witnessing" → "witness"; "hoping" → "hope"; "with" → "with"."""
    w = word
    if w.endswith("sses") or w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("eed"):
        if _measure(w[:-3]):
            w = w[:-1]
    else:
        for ending in ("ed", "ing"):
            if w.endswith(ending) and _has_vowel(w[: -len(ending)]):
                w = w[: -len(ending)]
                if w.endswith(("at", "bl", "iz")):
                    w += "e"
                elif len(w) > 1 and w[-1] == w[-2] and _consonant(w, len(w) - 1) and w[-1] not in "lsz":
                    w = w[:-1]
                elif _measure(w) == 1 and _cvc(w):
                    w += "e"
                break
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    if w.endswith("e"):
        m = _measure(w[:-1])
        if m > 1 or (m == 1 and not _cvc(w[:-1])):
            w = w[:-1]
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w


#: an inflection is at most this much longer than its root ("hop" → "hopping")
_LONGEST_ENDING = 4

#: a word typed with at least this many letters also finds the longer words it begins.
#: Chosen on the 2,000 arXiv abstracts of ../shared/data/arxiv-2000 (benchmarks/
#: search_prefix_study.py): over the words of 10 or more items, the prefix adds items
#: through words of another family ("within" for "with", "linear" for "line", "boundary"
#: for "bound", "properties" for "proper", "singlet" for "single") worth 12.8% of the word's
#: own items at 4 letters, 8.0% at 5, 2.7% at 6 and 1.4% at 7, against 6.6%, 4.9%, 4.4% and
#: 4.4% through its own family ("dynamical", "generalized", "measurements"): from 7 letters a
#: prefix adds mostly the word's family, and the word beginnings researchers type
#: ("topolog", "superconduct", "renormaliz") have 7 or more. A shorter one asks with ``*``.
PREFIX_FROM = 7


def word_forms(db, word: str) -> list[str]:
    """``word`` and the words of the index's vocabulary (``items_fts_words_vocab``) that are
    inflections of it, each a quoted term for the index's MATCH: the words whose
    :func:`inflection_root` is ``word``'s. Every form of a root begins with the root (less
    its last letter when that is an "e" or an "i": "hope"/"hoping", "studi"/"study"), so the
    vocabulary is read over that range only, and not at all for a range of one letter ("is",
    "as"), which holds no other form: the word is then itself alone. A word ending in a
    letter also finds itself with a number after it, as a formula's element its count
    ("CeCoIn" finds "cecoin5", the index's reading of "CeCoIn$_5$"; "Sr" finds "sr2ruo4",
    "GPT" "gpt4"). A word of :data:`PREFIX_FROM` letters or more, or one ending in ``*``,
    adds a prefix term, the word as typed (``"superconduct"*``), never its root:
    "witness*" finds no "with"."""
    starred = word.endswith("*")
    word = word.rstrip("*")
    plain = folded(word).lower()
    forms = {plain}
    root = inflection_root(plain)
    start = root[:-1] if root[-1:] in ("e", "i") else root
    if len(start) > 1:
        rows = db.execute(
            "SELECT term FROM items_fts_words_vocab WHERE term >= ? AND term < ? AND length(term) <= ?",
            [start, start[:-1] + chr(ord(start[-1]) + 1), len(root) + _LONGEST_ENDING],
        )
        forms |= {term for (term,) in rows if inflection_root(term) == root}
    if plain[-1:].isalpha():  # with a number after it: a formula's count, a version
        rows = db.execute(
            "SELECT term FROM items_fts_words_vocab WHERE term >= ? AND term < ?", [plain + "0", plain + ":"]
        )
        forms |= {term for (term,) in rows}
    # quoted: never FTS syntax; the word as given too, for the tokenizer's own folding
    terms = [f'"{f}"' for f in sorted(forms | {word}) if '"' not in f]
    if starred or len(plain) >= PREFIX_FROM:
        terms += [f'"{f}"*' for f in sorted({plain, word}) if '"' not in f]
    return terms


#: what may stand between the parts of a word typed with punctuation and the same parts in
#: the text: punctuation still (a space alone is another text: "x-ray" is not "x ray"), or
#: nothing where a letter meets a digit (the index reads "SL$_2$" as "sl2"). "Temperley-Lieb"
#: for a feed's "Temperley--Lieb" (shown "Temperley–Lieb"), "SL(2,Z)" for
#: "SL(2,\\mathbb{Z})" (read "SL(2,ℤ)")
_BETWEEN = r"(?:(?:\s?(?:[^\w\s]|_)){1,3}\s?|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_]))"


def _parts(word: str) -> list[str]:
    """The letters-and-digits runs of ``word`` as :func:`_loose_text` folds it."""
    return re.findall(r"[^\W_]+", _loose_text(word))


def loosely(parts: list[str]) -> str:
    """The pattern a word typed with punctuation (its :func:`_parts`, two or more) matches in
    a text folded by :func:`_loose_text`: the same letters and digits, in order, with a
    little other punctuation between (a retrial's "Temperley-Lieb" and "SL(2,Z)" found
    nothing, where the exact substring was absent)."""
    return r"(?<![^\W_])" + _BETWEEN.join(map(re.escape, parts)) + r"(?![^\W_])"


_TEX_COMMAND = re.compile(r"\\[A-Za-z]+")


def _loose_text(text: str | None) -> str:
    """``text`` as :func:`loosely` compares it: compatibility forms folded (ℤ is Z, ² is 2),
    accents off, case folded, TeX's commands gone (the index keeps a title's
    ``{\\rm sl}(2,\\mathbb{z})``)."""
    return _TEX_COMMAND.sub(" ", folded(unicodedata.normalize("NFKC", text or ""))).casefold()


def _register_loose(db) -> None:
    conn = getattr(db, "conn", db)
    conn.create_function(
        "hermes_loosely",
        2,
        lambda pattern, text: bool(text) and re.search(pattern, _loose_text(text)) is not None,
        deterministic=True,
    )


def _matches(db, indexed: list[str], literal: list[str], read: bool) -> list[int]:
    where, params = [], []
    if indexed:
        where.append("items.id IN (SELECT rowid FROM items_fts_words WHERE items_fts_words MATCH ?)")
        params.append(" AND ".join(f"({' OR '.join(word_forms(db, w))})" for w in indexed))
    for word in literal:
        if _WHOLE_WORD.fullmatch(word):  # without the index: "graph*" is the substring "graph"
            word = word.rstrip("*")
        test = "items.title LIKE ? ESCAPE '\\' OR items.summary LIKE ? ESCAPE '\\'"
        params += [like_pattern(word)] * 2
        if read:  # the LaTeX-accented text as the index reads it
            test += " OR r.title LIKE ? ESCAPE '\\' OR r.summary LIKE ? ESCAPE '\\'"
            params += [like_pattern(folded(word))] * 2
            parts = _parts(word)
            if len(parts) > 1:  # its parts, with other punctuation between
                _register_loose(db)
                longest = max(parts, key=len)
                test += (
                    " OR ((r.title LIKE ? ESCAPE '\\' OR r.summary LIKE ? ESCAPE '\\')"
                    " AND hermes_loosely(?, r.title || ' ' || r.summary))"
                )
                params += [like_pattern(longest)] * 2 + [loosely(parts)]
        where.append(f"({test})")
    joined = " JOIN items_fts_text AS r ON r.id = items.id" if read and literal else ""
    return [r[0] for r in db.execute(f"SELECT items.id FROM items{joined} WHERE {' AND '.join(where)}", params)]
