"""Corpus exports: BibTeX, RIS, CSL-JSON, Markdown and JSON lines from reference records.

Every format takes the records of :mod:`.references` (oldest membership first) and returns
text; nothing here reads the database. No timestamp of the export itself is written, so the
same corpus exports to the same bytes (diffable, and a re-import finds nothing new). Keys
are :func:`.references.citation_key`: stable across runs, so a reference manager that
matches on them updates an entry rather than duplicating it.

:func:`export` is the one entry point the CLI, the MCP tool and the web download share.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import sqlite_utils

from hermes.errors import InvalidInput
from hermes.latex import group_end, harmless, inline_math_end, readable

from . import references
from .membership import _read_snapshot
from .references import inverted, person

# --- shared pieces -------------------------------------------------------------------------

# Titles and abstracts carry arXiv's LaTeX. BibTeX keeps it for LaTeX to typeset (:func:`bib_tex`);
# JSON lines keep the stored text (exact, for tools). RIS (Zotero, EndNote and Mendeley store
# it as typed), CSL-JSON (citeproc prints a title as text; its only markup is HTML-like
# tags) and Markdown (read by people) would print "\emph{In vivo}" and "$\mathcal{O}(n^2)$"
# as macros, so they get what hermes shows people: readable(...), "In vivo", "𝒪(n²)".


def note_text(record: dict) -> str:
    """The persona's highlights and notes as plain text (the formats' note field)."""
    parts = []
    for h in record["highlights"]:
        parts.append(f"Highlight: \"{h['text']}\"" + (f" ({h['comment']})" if h["comment"] else ""))
    for n in record["notes"]:
        parts.append(f"Note: {n['text']}")
    return "\n\n".join(parts)


def _date(record: dict) -> str | None:
    return (record["published"] or "")[:10] or None


def duration_text(seconds: int | None) -> str | None:
    """An episode's length as players show it: "41:05", "1:02:03"."""
    if not seconds:
        return None
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02}:{rest % 60:02}" if hours else f"{rest // 60}:{rest % 60:02}"


def media(record: dict) -> dict | None:
    """An episode's audio or video enclosure (``{url, type, duration}``); None for anything
    else (a PDF attached to a post is not what a citation of the post points at)."""
    found = record.get("media")
    return found if found and found["type"].startswith(("audio/", "video/")) else None


def _media_url(record: dict) -> str | None:
    # An episode without a web page has its media URL as its URL already: not twice.
    found = media(record)
    return found["url"] if found and found["url"] != record["url"] else None



# --- BibTeX --------------------------------------------------------------------------------

_BIB_ESCAPES = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}",
    "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
# BibTeX counts braces whatever precedes them, so "\{" still opens a group: fine while the
# text's own braces balance, fatal to the whole file when one is left open. Those get the
# text commands, which carry no bare brace.
_LONE_BRACES = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}


_ESCAPE = str.maketrans(_BIB_ESCAPES)
_ESCAPE_LONE = str.maketrans({**_BIB_ESCAPES, **_LONE_BRACES})


def _balanced(text: str) -> bool:
    if "{" not in text and "}" not in text:
        return True
    depth = 0
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    return depth == 0


def bib_escape(text: str) -> str:
    return text.translate(_ESCAPE if _balanced(text) else _ESCAPE_LONE)


# Inline (or display) math as pandoc reads it: the opening $ followed by a non-space, the
# closing $ preceded by one and not followed by a digit, so "$5 and $10" is not math; an
# escaped "\$" is a dollar sign, never a delimiter.
MATH = re.compile(r"(?<!\\)(?:\$\$(?:[^$\\]|\\.)+?\$\$|\$(?!\s)(?:[^$\\\n]|\\.)+?(?<!\s)\$(?!\d))", re.S)
# Inside math only these would break the LaTeX run (a comment, an alignment tab, a macro
# parameter); their escaped forms are valid in math mode too.
_MATH_SPECIAL = re.compile(r"(?<!\\)([%&#])")
# Text commands arXiv writes in titles and abstracts, passed through with their argument
# (``\emph{In vivo}``), and the font switches that open a group (``{\em Mixture}``). Only
# these: any other command is escaped, so what reaches LaTeX is something it typesets.
_TEXT_COMMANDS = ("emph", "textit", "textbf", "textsc", "textsl", "texttt", "textsf", "textrm",
                  "textup", "textmd", "textnormal", "underline", "mbox")
_SWITCHES = ("em", "it", "bf", "sc", "sl", "tt", "sf", "rm", "itshape", "bfseries", "scshape",
             "slshape", "upshape", "ttfamily", "sffamily", "rmfamily", "mdseries", "normalfont")
_LATEX = re.compile(rf"(?P<math>{MATH.pattern})|\\(?:{'|'.join(_TEXT_COMMANDS)})\{{"
                    rf"|(?<!\\)\{{\\(?:{'|'.join(_SWITCHES)})(?![a-zA-Z])\s?", re.S)
# Inside a command's argument a brace is LaTeX's too (``\emph{{In} vivo}``): a group, as
# hermes.latex reads it; outside, the feed's braces are text.
_LATEX_INNER = re.compile(rf"{_LATEX.pattern}|(?<!\\)\{{", re.S)
#: an accented or special letter: \'e, \"{o}, \c{c}, \ss, \o{}
_ACCENT = re.compile(r"\\(?:['`^\"~=.](?:[a-zA-Z]|\{[a-zA-Z]\})|[cvuHkrdb]\{[a-zA-Z]\}"
                     r"|(?:ss|aa|AA|ae|AE|oe|OE|o|O|l|L|i|j)(?![a-zA-Z])(?:\{\})?)")
#: a LaTeX escape of a special character: \& \% \$ \# \_ \{ \}
_ESCAPED_CHAR = re.compile(r"\\([&%$#_{}])")
_LETTER = rf"(?:[^\W_]|{_ACCENT.pattern})"
#: a word for case protection: letters (accented ones too) and digits, joined by hyphens or
#: apostrophes
_WORD = re.compile(rf"{_LETTER}+(?:['\u2019-]{_LETTER}+)*")


def _is_math(text: str, m: re.Match) -> bool:
    """Whether a :data:`MATH` match is math: its braces balance on their own (else, passed
    through, it could close the field early and break the whole file), and a single-dollar
    one passes hermes.latex's price rule too ("$5 each, or US$ 20" is prose)."""
    if not _balanced(m.group()) or not harmless(m.group()):
        return False  # escaped as prose: LaTeX prints it, runs nothing
    return m.group().startswith("$$") or inline_math_end(text, m.start()) == m.end()


def _segments(text: str, inner: bool = False) -> list[tuple[str, str]]:
    """``(kind, piece)`` in order: "math" and "prose", and the "open" (``\\emph{``, ``{\\em``,
    a ``{`` in an argument) and "close" of a group around its own pieces. Math or a command
    whose braces do not close is prose: escaped, so the .bib stays valid."""
    out, at, scan = [], 0, 0
    while (m := (_LATEX_INNER if inner else _LATEX).search(text, scan)):
        scan = m.end()
        if m.group("math"):
            if _is_math(text, m):
                out += [("prose", text[at:m.start()]), ("math", m.group())]
                at = m.end()
            continue
        brace = m.start() if m.group().startswith("{") else m.end() - 1
        end = group_end(text, brace, limit=None)
        if end is not None:
            out += [("prose", text[at:m.start()]), ("open", m.group()),
                    *_segments(text[m.end():end - 1], inner=True), ("close", "}")]
            at = scan = end
    return out + [("prose", text[at:])]


def _protected(word: str, proper: bool) -> bool:
    """Whether BibTeX styles must keep ``word``'s case: capitals after its first character
    ("SAE", "LLaMA", "GPT-4"), digits with capitals ("7B"), or, in a sentence-case title,
    a capitalised word (a proper noun: "Transformer", "Bayesian")."""
    upper = [c.isupper() for c in readable(word) if c.isalnum()]  # \"Uber is judged as Über
    if any(upper[1:]) or (any(upper) and any(c.isdigit() for c in word)):
        return True
    return proper and bool(upper) and upper[0] and len(upper) > 1


def _sentence_case(words: list[str]) -> bool:
    # Title Case capitalises the content words; sentence case leaves them lower. Judged on
    # the longer words after the first, where the two conventions differ.
    content = [w for w in words[1:] if len(w) > 3 and w[0].isalpha() and w[1:].islower()]
    return sum(w[0].islower() for w in content) > len(content) / 2


def _bib_text(text: str, table: dict) -> str:
    """Escape text; a LaTeX escape the feed wrote (``\\&``) is the character it stands for."""
    out, at = [], 0
    for m in _ESCAPED_CHAR.finditer(text):
        out += [text[at:m.start()].translate(table), m.group(1).translate(table)]
        at = m.end()
    return "".join(out) + text[at:].translate(table)


def _bib_prose(text: str, balanced: bool, protect: bool = False, proper: bool = False,
               lead: str = "") -> str:
    """Escape a prose piece, its accents kept; with ``protect``, brace its case-sensitive
    words (``lead``: the title before this piece, to tell a sentence's first word)."""
    table = _ESCAPE if balanced else _ESCAPE_LONE
    out, at = [], 0
    for m in _WORD.finditer(text):
        # An accent in braces ({\"o}): the form BibTeX's case changes and sorting read.
        word = _ACCENT.sub(lambda a: "{" + a.group() + "}", m.group())
        # Not the first word of the title or of a sentence in it: capitalised by grammar.
        prior = (lead + text[:m.start()]).rstrip()
        start = not prior or prior[-1] in ".:?!"
        guarded = protect and _protected(m.group(), proper and not start)
        out += [_bib_text(text[at:m.start()], table), "{" + word + "}" if guarded else word]
        at = m.end()
    return "".join(out) + _bib_text(text[at:], table)


def bib_tex(text: str, *, title: bool = False) -> str:
    """A title or abstract for BibTeX: math (``$\\ell_1$``, as arXiv writes it), text commands
    (``\\emph{…}``, ``{\\em …}``) and accents (``\\'e``) pass through for LaTeX to typeset;
    everything else is escaped as :func:`bib_escape` does. A title's words whose case
    matters are braced so styles that recase titles leave them alone."""
    pieces = _segments(text)
    prose = "".join(p for kind, p in pieces if kind == "prose")
    balanced = _balanced(prose)
    proper = title and _sentence_case(_WORD.findall(prose))
    out, lead, groups = [], "", []
    for kind, piece in pieces:
        # Within the author's own braces the case is kept already: no second pair.
        protect = title and "{" not in groups
        if kind == "math":
            piece = _MATH_SPECIAL.sub(r"\\\1", piece)
            # A title's math with capitals ($L_1$) would be lowercased by the style too.
            out.append("{" + piece + "}" if protect and any(c.isupper() for c in piece) else piece)
        elif kind == "prose":
            out.append(_bib_prose(piece, balanced, protect=protect, proper=proper, lead=lead))
        else:
            groups = [*groups, piece] if kind == "open" else groups[:-1]
            out.append(piece)
            continue  # a command's name is not text before the next word
        lead += piece
    return "".join(out)


#: what a URL, DOI or eprint may not carry into a .bib as it is: braces would end the field,
#: and a backslash or TeX's "^^" character code would be live TeX where a style prints the
#: field without \url (plainnat's fallback \texttt{…}); percent-encoded, the address is the same
_VERBATIM_UNSAFE = str.maketrans({"{": "%7B", "}": "%7D", "\\": "%5C", "^": "%5E"})


def _bib_verbatim(text: str) -> str:
    return text.translate(_VERBATIM_UNSAFE)


def _bib_name(name: str, source: str | None = None) -> str:
    """A name as BibTeX reads it: "von Last, Jr, First" (the particle and suffix in their
    own places, so no style takes "Jr" for a surname), an organisation's braced whole."""
    p = person(name, source)
    if "literal" in p:  # braces stop BibTeX splitting it ("{heise online}")
        return "{" + bib_escape(p["literal"]) + "}"
    family = " ".join(filter(None, [p.get("non-dropping-particle"), p["family"]]))
    parts = [family, p["suffix"]] if p.get("suffix") else [family]
    return ", ".join(bib_escape(part) for part in [*parts, p.get("given", "")])


_BIB_MEDIUM = {"podcast": "Podcast episode", "video": "Video"}


def _bib_type(r: dict) -> tuple[str, str | None]:
    """The entry type and the field that names the item's source (its feed's title).

    A journal's paper is an ``@article`` in its ``journal``. Everything else stays ``@misc``
    with ``howpublished``: classic BibTeX styles (plain, alpha) print howpublished for a
    misc, biblatex's misc does too, while biblatex's ``@online`` names a site only in
    ``organization`` and BibTeX styles do not know ``@online`` at all (a warning, and the
    source not printed)."""
    if r["content_type"] == "paper" and r["source"]:
        return "article", "journal"
    return "misc", "howpublished"


def _bib_addendum(r: dict) -> str | None:
    # biblatex's addendum (printed last; classic styles skip it): what the item is, how long,
    # and where its audio is, which no standard @misc field holds.
    found = media(r)
    parts = [_BIB_MEDIUM.get(r["content_type"]), duration_text(found and found["duration"])]
    if _media_url(r):
        parts.append(f"{found['type'].split('/')[0]}: {found['url']}")
    return bib_escape(", ".join(filter(None, parts))) or None


def _bib_entry(r: dict) -> str:
    kind, source_field = _bib_type(r)
    fields: list[tuple[str, str]] = [("title", bib_tex(r["title"], title=True))]
    if r["authors"]:
        fields.append(("author", " and ".join(_bib_name(a, r["source"]) for a in r["authors"])))
    if r["source"]:
        fields.append((source_field, bib_escape(r["source"])))
    if r["year"]:
        fields.append(("year", r["year"]))
    if _date(r):
        fields.append(("date", _date(r)))
    if r["url"]:
        fields.append(("url", _bib_verbatim(r["url"])))
    if r["arxiv"]:
        fields += [("eprint", _bib_verbatim(r["arxiv"])), ("archivePrefix", "arXiv")]
    if r["doi"]:
        fields.append(("doi", _bib_verbatim(r["doi"])))
    if _bib_addendum(r):
        fields.append(("addendum", _bib_addendum(r)))
    if r["abstract"]:
        fields.append(("abstract", bib_tex(r["abstract"])))
    keywords = [*r["tags"], f"hermes-{r['facet']}"]
    fields.append(("keywords", bib_escape(", ".join(keywords))))
    if note_text(r):
        # The person's own text, treated as a title is: their math ($\sqrt{n}$) and text
        # commands pass through for LaTeX when harmless (hermes.latex.harmless), the rest is
        # escaped. A note's "$\input{…}$" is escaped like a feed's: the .bib may be shared.
        fields.append(("note", bib_tex(note_text(r))))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{r['key']},\n{body}\n}}\n"


def bibtex(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_bib_entry(r) for r in records)


# --- RIS -----------------------------------------------------------------------------------

_RIS_TYPES = {"paper": "JOUR", "article": "ELEC", "podcast": "SOUND", "video": "VIDEO"}


def _ris_line(tag: str, value: str) -> str:
    # RIS is line based: a newline inside a value would start a bogus tag.
    return f"{tag}  - {' '.join(str(value).split())}"


def _ris_entry(r: dict) -> str:
    kind = "UNPB" if r["arxiv"] else _RIS_TYPES.get(r["content_type"], "GEN")
    lines = [_ris_line("TY", kind), _ris_line("ID", r["key"]), _ris_line("TI", readable(r["title"]))]
    lines += [_ris_line("AU", inverted(a, r["source"])) for a in r["authors"]]
    if r["source"]:
        # T2, the secondary title: the journal of a JOUR, the blog of an ELEC, the show of
        # a SOUND (what Zotero's RIS writes for a publication, blog or series title).
        lines.append(_ris_line("T2", r["source"]))
    if r["year"]:
        lines.append(_ris_line("PY", r["year"]))
    if _date(r):
        lines.append(_ris_line("DA", _date(r).replace("-", "/")))
    if r["url"]:
        lines.append(_ris_line("UR", r["url"]))
    if _media_url(r):
        lines.append(_ris_line("UR", _media_url(r)))
    if r["doi"]:
        lines.append(_ris_line("DO", r["doi"]))
    if r["arxiv"]:
        lines += [_ris_line("DB", "arXiv"), _ris_line("AN", f"arXiv:{r['arxiv']}")]
    if r["abstract"]:
        lines.append(_ris_line("AB", readable(r["abstract"])))
    lines += [_ris_line("KW", t) for t in [*r["tags"], f"hermes-{r['facet']}"]]
    for h in r["highlights"]:
        lines.append(_ris_line("N1", f"Highlight: \"{h['text']}\""
                                     + (f" ({h['comment']})" if h["comment"] else "")))
    lines += [_ris_line("N1", f"Note: {n['text']}") for n in r["notes"]]
    lines.append("ER  - ")
    return "\n".join(lines) + "\n"


def ris(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_ris_entry(r) for r in records)


# --- CSL-JSON ------------------------------------------------------------------------------

_CSL_TYPES = {"paper": "article-journal", "article": "post-weblog", "podcast": "broadcast",
              "video": "motion_picture"}


def csl_item(r: dict) -> dict:
    """One record as a CSL-JSON item (the citation-style-language input schema)."""
    item: dict = {"id": r["key"], "citation-key": r["key"],
                  "type": "article" if r["arxiv"] else _CSL_TYPES.get(r["content_type"], "document"),
                  "title": readable(r["title"])}
    if r["authors"]:
        item["author"] = [person(a, r["source"]) for a in r["authors"]]
    if r["source"]:
        # CSL's container: the journal of an article, the blog of a post, the programme of
        # a broadcast episode (the CSL spec's own examples). Not publisher: a show is not
        # the network that publishes it.
        item["container-title"] = r["source"]
    found = media(r)
    if found and found["duration"]:
        item["dimensions"] = duration_text(found["duration"])  # CSL: "running time"
    if _date(r):
        item["issued"] = {"date-parts": [[int(p) for p in _date(r).split("-")]]}
    if r["url"]:
        item["URL"] = r["url"]
    if r["doi"]:
        item["DOI"] = r["doi"]
    if r["arxiv"]:
        # How Zotero itself describes a preprint: the server as publisher, the id as number.
        item.update({"publisher": "arXiv", "number": f"arXiv:{r['arxiv']}"})
    if r["abstract"]:
        item["abstract"] = readable(r["abstract"])
    item["keyword"] = ", ".join([*r["tags"], f"hermes-{r['facet']}"])
    if note_text(r):
        item["note"] = note_text(r)
    item["custom"] = {"hermes_item_id": r["item_id"], "hermes_facet": r["facet"],
                      "hermes_strength": r["strength"]}
    return item


def csl_json(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return json.dumps([csl_item(r) for r in records], ensure_ascii=False, indent=2) + "\n"


# --- Markdown ------------------------------------------------------------------------------


def byline(r: dict) -> str:
    """"A. Smith, B. Jones · *Source* · 2024 · arXiv:2401.12345 · experienced, strength 0.55",
    with an episode's duration and audio link after the year."""
    parts = [", ".join(r["authors"])] if r["authors"] else []
    if r["source"]:
        parts.append("*" + re.sub(r"([*_\\\[\]`])", r"\\\1", r["source"]) + "*")
    if r["year"]:
        parts.append(r["year"])
    found = media(r)
    if found and found["duration"]:
        parts.append(duration_text(found["duration"]))
    if _media_url(r):
        parts.append(md_link(found["type"].split("/")[0], found["url"]))
    if r["arxiv"]:
        parts.append(f"arXiv:{r['arxiv']}")
    # arXiv's own DOI says nothing the arXiv id does not; a journal DOI does.
    if r["doi"] and not (r["arxiv"] and r["doi"] == references.ARXIV_DOI.format(r["arxiv"])):
        parts.append(f"doi:{r['doi']}")
    parts.append(r["facet"] + (f", strength {r['strength']:.2f}" if r["strength"] is not None else ""))
    return " · ".join(parts)


def quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines() or [""])


def markdown_body(r: dict, level: int = 2) -> str:
    """The summary, highlights (as quotes) and notes of one record; headings at ``level``."""
    h = "#" * level
    out = []
    if r["abstract"]:
        out += [f"{h} Summary", "", readable(r["abstract"]), ""]
    if r["highlights"]:
        out += [f"{h} Highlights", ""]
        for x in r["highlights"]:
            out += [quote(x["text"])]
            if x["comment"]:
                out += [">", quote("— " + x["comment"])]
            out += [""]
    if r["notes"]:
        out += [f"{h} Notes", ""]
        for n in r["notes"]:
            out += [n["text"], ""]
    return "\n".join(out)


def md_link(text: str, url: str | None) -> str:
    # Brackets in feed text would end the link text early; angle brackets keep odd URLs whole.
    text = text.replace("[", "\\[").replace("]", "\\]")
    return f"[{text}](<{url}>)" if url else text


def _md_entry(r: dict) -> str:
    parts = [f"## {md_link(readable(r['title']), r['url'])}", byline(r)]
    if r["tags"]:
        parts.append("Tags: " + " ".join(f"`{t}`" for t in r["tags"]))
    parts.append(markdown_body(r, level=3))
    return "\n\n".join(p.strip() for p in parts if p.strip()) + "\n"


def markdown(records: list[dict], tombstones: list[dict] | None = None) -> str:
    return "\n".join(_md_entry(r) for r in records)


# --- JSON lines ----------------------------------------------------------------------------

_JSONL_FIELDS = ("key", "item_id", "facet", "revision", "title", "authors", "year", "published",
                 "url", "arxiv", "doi", "abstract", "content_type", "source", "media", "tags",
                 "strength", "favorited", "read_fraction", "added", "first_seen", "last_seen",
                 "highlights", "notes")


def jsonl(records: list[dict], tombstones: list[dict] | None = None) -> str:
    """One JSON object a line, ordered by revision: ``{"op": "upsert", ...record}`` and, for
    an export ``since`` a revision, ``{"op": "delete", key, item_id, facet, revision}`` for
    each item that left the exported facets (the only format that can carry deletions)."""
    events = [(r["revision"], {"op": "upsert", **{k: r[k] for k in _JSONL_FIELDS}}) for r in records]
    events += [(t["revision"], {"op": "delete", **t}) for t in tombstones or []]
    events.sort(key=lambda e: e[0])
    return "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for _, e in events)


# --- the entry point -----------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    name: str
    render: object
    extension: str
    media_type: str


FORMATS = {f.name: f for f in (
    Format("bibtex", bibtex, "bib", "application/x-bibtex"),
    Format("ris", ris, "ris", "application/x-research-info-systems"),
    Format("csl-json", csl_json, "json", "application/vnd.citationstyles.csl+json"),
    Format("markdown", markdown, "md", "text/markdown"),
    Format("jsonl", jsonl, "jsonl", "application/jsonl"),
)}


def check_format(name) -> Format:
    if name not in FORMATS:
        raise InvalidInput(
            f"unknown format {name!r}; use one of {', '.join(FORMATS)}")
    return FORMATS[name]


@dataclass
class Export:
    text: str
    count: int          # items written
    deleted: int        # tombstones written (jsonl only)
    revision: int       # the corpus revision the export reflects
    since: int
    truncated: bool     # removals after ``since`` may be missing: the log was trimmed
    has_more: bool = False
    next_since: int | None = None
    keys: list[str] = field(default_factory=list)


def export(db: sqlite_utils.Database, user_id: int, fmt: str, facet: str = "all", since: int = 0,
           max_chars: int | None = None) -> Export:
    """Export the items that entered ``facet`` after revision ``since`` (0 = all of them).

    ``max_chars`` bounds the text (the MCP tool): whole entries are taken, oldest first,
    until the next would pass the bound (at least one is always taken); ``has_more`` and
    ``next_since`` then say where the next page starts. Paging by revision rather than by
    offset keeps pages consistent while the corpus changes between calls.
    """
    form = check_format(fmt)
    facets = references.facets_of(facet)
    with _read_snapshot(db):  # records, tombstones and revision from one snapshot
        revision, truncated = references.check_since(db, user_id, since)
        records = references.load(db, user_id, facets, since=since)
        gone = references.tombstones(db, user_id, facets, since) if since and fmt == "jsonl" else []
    has_more = False
    if max_chars is not None:
        events = sorted([(r["revision"], "r", r) for r in records]
                        + [(t["revision"], "t", t) for t in gone], key=lambda e: e[0])
        taken, size = 0, 0
        for _, kind, ev in events:
            piece = len(form.render([ev] if kind == "r" else [], [ev] if kind == "t" else []))
            if taken and size + piece > max_chars:
                break
            taken, size = taken + 1, size + piece
        has_more = taken < len(events)
        if has_more:
            last = events[taken - 1][0]
            records = [r for r in records if r["revision"] <= last]
            gone = [t for t in gone if t["revision"] <= last]
            next_since = last
    text = form.render(records, gone)
    return Export(text=text, count=len(records), deleted=len(gone), revision=revision,
                  since=since, truncated=truncated, has_more=has_more,
                  next_since=next_since if has_more else revision,
                  keys=[r["key"] for r in records])
