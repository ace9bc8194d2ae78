"""Reading a person's library: the BibTeX, RIS and CSL-JSON that Zotero, JabRef, Mendeley and
``hermes corpus export`` write, each entry as one :class:`Entry` with the line it starts on.

The parsers are maintained ones (bibtexparser, rispy, the standard json module); what is
here is what they leave to the caller: finding the identifiers (an arXiv id hides in
``eprint``, ``arxivId``, ``journal = {arXiv preprint arXiv:…}``, an arXiv DOI or URL), the
names, the dates, the library's own type of each entry (:data:`CSL_TYPES`), and BibTeX's
LaTeX. An entry that cannot be read is a :class:`Refused`
naming its line; every other entry of the file is still read.

Text is stored as feed text is (:mod:`hermes.text.latex`): math between dollars stays as written,
for the faces to show readably; BibTeX's own markup, which no feed carries, is resolved
here: accents (``{\\"o}`` → ö), text commands (``\\emph{…}``), escapes (``\\&``) and the
braces that only protect case (``{B}ayesian``).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from hermes.errors import InvalidInput
from hermes.ingest.parse import MAX_SUMMARY, MAX_TITLE, arxiv_id, normalise_tags
from hermes.ingest.text import canonical_url, plain_text
from hermes.text.authors import clean_name
from hermes.text.latex import readable

FORMATS = ("bibtex", "ris", "csl-json")

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}]+)", re.I)
_ARXIV_ID = re.compile(r"^(?:arxiv:\s*)?(\d{4}\.\d{4,5}|[a-z][a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?$", re.I)
# Math as hermes.text.latex reads it, kept as written; everything around it is BibTeX prose.
_MATH = re.compile(r"(?<!\\)\$\$.+?(?<!\\)\$\$|(?<!\\)\$[^$]+?(?<!\\)\$", re.S)
_BRACE = re.compile(r"(?<!\\)[{}]")
_AND = re.compile(r"\s+and\s+", re.I)
_MONTHS = {m: k for k, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}
#: BibTeX entry types that are not an entry (bibtexparser reads them as blocks of their own)
_WEB_TYPES = {"online", "www", "webpage", "electronic", "post-weblog", "webpage", "post", "elec", "blog"}
#: keywords hermes's own export adds (the facet): not a topic of the paper
_OWN_KEYWORD = re.compile(r"^hermes-(experienced|saved)$")

#: the library's own type of an entry, in CSL's vocabulary (the one CSL-JSON, Zotero and
#: citeproc share), kept for the exports (``corpus_item_library.csl_type``): a book, a
#: chapter, a conference paper, a thesis, a report are cited as one, not as a journal's
#: paper. An entry of another type (``@misc``, a web page, an edited ``@collection``, whose
#: editors hermes does not keep) has none, and is exported as before.
CSL_TYPES = ("article-journal", "book", "chapter", "paper-conference", "thesis", "report", "manuscript")
#: BibTeX's and biblatex's entry types (a classic ``@inbook`` with no ``booktitle`` is a
#: book cited by its chapter or pages: its title is the book's, :func:`_bib_entry`)
_BIB_CSL = {
    "article": "article-journal",
    "book": "book",
    "mvbook": "book",
    "inbook": "chapter",
    "incollection": "chapter",
    "bookinbook": "chapter",
    "inproceedings": "paper-conference",
    "conference": "paper-conference",
    "phdthesis": "thesis",
    "mastersthesis": "thesis",
    "thesis": "thesis",
    "techreport": "report",
    "report": "report",
    "unpublished": "manuscript",
}
#: RIS's TY codes (Zotero's RIS.js reads the same: CPAPER a conference paper, UNPD and
#: UNPB unpublished)
_RIS_CSL = {
    "JOUR": "article-journal",
    "JFULL": "article-journal",
    "EJOUR": "article-journal",
    "BOOK": "book",
    "EBOOK": "book",
    "CHAP": "chapter",
    "ECHAP": "chapter",
    "CONF": "paper-conference",
    "CPAPER": "paper-conference",
    "THES": "thesis",
    "RPRT": "report",
    "MANSCPT": "manuscript",
    "UNPB": "manuscript",
    "UNPD": "manuscript",
}
#: the types published inside another work (a journal, a book, proceedings): only theirs
#: has a container. A book's ``booktitle`` repeats its title and a report's or book's RIS
#: T2 is its series (Zotero's RIS), neither where it was published.
_CONTAINED = {None, "article-journal", "chapter", "paper-conference", "manuscript"}
#: a thesis's or report's kind as CSL's ``genre`` (:func:`_genre`), from BibTeX's entry type,
#: biblatex's ``type`` keys or the words a file gives; a technical report is the default
#: kind (styles print it unasked)
_GENRES = {
    "phdthesis": "PhD thesis",
    "mastersthesis": "Master's thesis",
    "mathesis": "Master's thesis",
    "techreport": None,
    "resreport": "Research report",
}


def _genre(written, default=None) -> str | None:
    """A thesis's or report's kind in one spelling ("PhD Thesis", ``{PhD} {Thesis}``,
    ``phdthesis`` → "PhD thesis"), any other kind as written; ``default`` where none is."""
    text = plain_text(str(written or ""), limit=CITATION_MAX)
    if not text:
        return default
    return _GENRES.get(re.sub(r"\W", "", text.lower()), text)


@dataclass
class Entry:
    line: int  # 1-based line where the entry starts
    key: str | None  # the citation key or id, if the file gives one
    title: str
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    arxiv: str | None = None  # version-less
    doi: str | None = None
    url: str | None = None
    published: str | None = None
    tags: list[str] = field(default_factory=list)
    content_type: str = "paper"
    #: the library's type of the entry (:data:`CSL_TYPES`), None where it names none of them
    csl_type: str | None = None
    #: where it was published, as the file names it: container (a journal, proceedings or
    #: book), volume, issue, pages, publisher, edition, genre (:func:`citation`); kept for
    #: the exports
    citation: dict[str, str] = field(default_factory=dict)
    #: a BibTeX title's brace protection (:func:`protected_spans`), None where it has none
    title_spans: list[tuple[str, bool]] | None = None

    @property
    def cite_key(self) -> str | None:
        """:attr:`key` where it can be cited as it is (:func:`cite_key`), else None."""
        return cite_key(self.key)


@dataclass
class Refused:
    line: int
    key: str | None
    reason: str


@dataclass
class Read:
    format: str
    entries: list[Entry]
    refused: list[Refused]


def detect(text: str) -> str:
    """Which of :data:`FORMATS` ``text`` is written in, from its first signs."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith(("[", "{")):
        return "csl-json"
    if re.search(r"^TY {2}- ", text, re.M):
        return "ris"
    if re.search(r"^\s*@\s*[a-zA-Z]+\s*[{(]", text, re.M):
        return "bibtex"
    raise InvalidInput(
        "the file is not BibTeX (@article{…}), RIS (TY  - …) or CSL-JSON ([{…}]); "
        "export the library from the reference manager in one of those"
    )


def read(text: str, fmt: str = "auto") -> Read:
    """Every entry of ``text`` (``fmt``: one of :data:`FORMATS`, or ``auto``)."""
    if fmt == "auto":
        fmt = detect(text)
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}; use auto, {', '.join(FORMATS)}")
    entries, refused = {"bibtex": _bibtex, "ris": _ris, "csl-json": _csl_json}[fmt](text)
    return Read(fmt, entries, refused)


# --- shared pieces -------------------------------------------------------------------------


def tex_text(value: str | None, limit: int | None = None) -> str:
    """A BibTeX field as feed text: its math kept, the rest made plain (see the module)."""
    value = value or ""
    out, at = [], 0
    for m in _MATH.finditer(value):
        out += [_tex_prose(value[at : m.start()]), m.group()]
        at = m.end()
    out.append(_tex_prose(value[at:]))
    return plain_text("".join(out), limit=limit)


def _tex_prose(text: str) -> str:
    if not text:
        return text
    # readable() turns accents, text commands and escapes into characters; the braces left
    # over only protected case from BibTeX styles.
    text = readable(text.replace("~", " ").replace("--", "–"))
    return _BRACE.sub("", text)


#: a key the exports can write as it is: BibTeX's (no space, comma, brace, quote, ``#``,
#: ``%``, ``=`` or backslash, which end or break an entry), a CSL id's and LaTeX's citation
_CITE_KEY = re.compile(r"[^\s,{}()\"#%'=\\~]{1,120}")


#: the keys ``hermes corpus export`` generates (``arxiv-2401.12345``, ``doi-10.1000-xyz``,
#: ``hermes-…``, ``-i<item id>`` after one that two items share)
_HERMES_KEY = re.compile(
    r"(?:arxiv-(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[a-z]{2})?-\d{7})|doi-10\.\d{4,9}-[a-z0-9.-]+|hermes-[0-9a-f]{12})"
    r"(?:-i\d+)?",
    re.I,
)


def cite_key(key: str | None) -> str | None:
    """``key`` where the person cites it (``smith2020quantum``, ``Smith:2020``), else None: a
    key that no export could write as it is, a record number (digits alone: Mendeley's and
    EndNote's RIS ``ID``) or a URI (Zotero's CSL-JSON ``id``) names no citation. Nor is
    hermes's own key kept (its export imported back): the export gives the item that key
    again, and one kept could go to another item (two items of one DOI are found as one)."""
    key = (key or "").strip()
    if not _CITE_KEY.fullmatch(key) or key.isdigit() or "://" in key or not re.search(r"[^\W_]", key):
        return None
    return None if _HERMES_KEY.fullmatch(key) else key


#: marks a protected span while the title is read (private use: no file's text keeps them)
_OPEN, _CLOSE = "\ue000", "\ue001"


def protected_spans(title: str | None) -> list[tuple[str, bool]] | None:
    """A BibTeX title as read (:func:`tex_text`) in spans, each with whether the file braced
    it to keep its case (``The {Ising} model`` → ``The ``, ``Ising`` protected, `` model``);
    None when nothing is protected. BibTeX's rule: a group at the top level is protected
    unless it opens with a backslash (``{\\"o}``, ``{\\em …}`` are recased like the text around
    them); a text command's argument (``\\emph{E. coli}``) is such a group too, an accent's
    (``\\"{o}``, ``\\c{c}``) is not. Math is no group: its braces are math's."""
    raw = (title or "").replace(_OPEN, "").replace(_CLOSE, "")
    math = {m.start(): m.end() for m in _MATH.finditer(raw)}
    out, depth, at, span = [], 0, 0, False
    while at < len(raw):
        char = raw[at]
        if depth == 0 and at in math:
            out.append(raw[at : math[at]])
            at = math[at]
            continue
        if char == "\\":  # an escape or a command's first letter: never a group's brace
            out.append(raw[at : at + 2])
            at += 2
            continue
        if char == "{":
            if depth == 0 and not raw.startswith("\\", at + 1) and not _ACCENT_BEFORE.search(raw, max(0, at - 12), at):
                out.append("{" + _OPEN)
                span = True
            else:
                out.append(char)
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            out.append(_CLOSE + "}" if depth == 0 and span else char)
            span = span and depth > 0
        else:
            out.append(char)
        at += 1
    if not any(_OPEN in piece for piece in out):
        return None
    spans, protected = [], False
    for piece in re.split(f"([{_OPEN}{_CLOSE}])", tex_text("".join(out))):
        if piece in (_OPEN, _CLOSE):
            protected = piece == _OPEN
        elif piece:
            spans.append((piece, protected))
    return spans if any(p for _, p in spans) else None


#: an accent command just before a brace (``\\"{o}``, ``\\c{c}``): the brace is its argument
#: (looked for in the few characters before it: a long title is read in one pass)
_ACCENT_BEFORE = re.compile(r"\\(?:[`'^\"~=.]|[cvuHkrdbt])\s*\Z")


def _entry(line: int, key, title: str, **fields) -> Entry | Refused:
    title = plain_text(title, limit=MAX_TITLE)
    if not title:
        return Refused(line, key, "it has no title")
    fields["abstract"] = plain_text(fields.get("abstract") or "", limit=MAX_SUMMARY)
    fields["url"] = canonical_url(fields.get("url"))
    fields["tags"] = [t for t in normalise_tags(fields.get("tags") or []) if not _OWN_KEYWORD.match(t)]
    fields["authors"] = [n for n in (clean_name(a) for a in fields.get("authors") or []) if n]
    return Entry(line, key, title, **fields)


#: the most characters one citation field keeps (a journal's name, a page range)
CITATION_MAX = 300


def citation(
    container=None, volume=None, issue=None, pages=None, publisher=None, edition=None, genre=None
) -> dict[str, str]:
    """The publication fields an entry gives, as plain text, the empty ones left out. An
    arXiv "journal" (``arXiv preprint arXiv:…``) or publisher names no publication: the
    arXiv id says it. As CSL keeps them: a thesis's university and a report's institution
    are its ``publisher``, a report's number its ``issue`` (BibTeX's ``number``), ``genre``
    a thesis's or report's kind ("PhD thesis")."""
    found = {
        "container": container,
        "volume": volume,
        "issue": issue,
        "pages": pages,
        "publisher": publisher,
        "edition": edition,
        "genre": genre,
    }
    out = {}
    for name, value in found.items():
        text = plain_text(str(value or ""), limit=CITATION_MAX)
        if name == "pages":
            text = re.sub(r"\s*-{1,3}\s*|\s*–\s*", "–", text)  # "21--22" as BibTeX writes it
        if text and not (name in ("container", "publisher") and text.lower().startswith("arxiv")):
            out[name] = text
    return out


def find_arxiv(*texts) -> str | None:
    """The version-less arXiv id named in any of ``texts``: a bare id (``eprint``), an
    ``arXiv:`` reference, an arxiv.org URL or an arXiv DOI (10.48550/arXiv.…)."""
    for text in texts:
        text = str(text or "").strip()
        if not text:
            continue
        bare = _ARXIV_ID.match(text)
        found = arxiv_id("arxiv:" + bare.group(1)) if bare else arxiv_id(text)
        if found:
            return found
    return None


def find_doi(*texts) -> str | None:
    """The DOI in any of ``texts`` (bare, ``doi:`` or a doi.org URL); an arXiv DOI is the
    paper's arXiv id instead (:func:`find_arxiv`)."""
    for text in texts:
        m = _DOI.search(str(text or ""))
        if m and not m.group(1).lower().startswith("10.48550/arxiv."):
            return m.group(1).rstrip(".,;")
    return None


def _iso(year, month=None, day=None) -> str | None:
    """The date as precise as the entry gives it: "1998" (a year alone), "1998-03" (a
    month) or an ISO UTC timestamp (a day) — a year is never made a 1 January."""
    try:
        y = int(str(year).strip()[:4])
        named = _MONTHS.get(str(month or "").strip()[:3].lower())
        m = int(month) if str(month or "").strip().isdigit() else named
        if m is None:
            return f"{datetime(y, 1, 1).year:04d}"
        if not str(day or "").strip().isdigit():
            return f"{datetime(y, m, 1):%Y-%m}"
        return datetime(y, m, int(day), tzinfo=UTC).isoformat(timespec="seconds")
    except (TypeError, ValueError):
        return None


def _date_text(text) -> str | None:
    """ "2020", "2020-03", "2020/03/01/", "2020-03-01T…" → as precise as given (:func:`_iso`),
    or None."""
    parts = re.findall(r"\d+", str(text or ""))
    if not parts or len(parts[0]) != 4:
        return None
    return _iso(*parts[:3])


def _person(name: str) -> str:
    """ "Family, Given" (BibTeX's and RIS's form; "von Last, Jr, First" too) → "Given Family"."""
    name = " ".join(name.split())
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and parts[1]:
        return f"{parts[1]} {parts[0]}"
    if len(parts) == 3 and parts[2]:
        return f"{parts[2]} {parts[0]} {parts[1]}"
    return parts[0]


def _top_level_and(names: str) -> list[str]:
    """BibTeX's author list split on "and" outside braces ("{Barnes and Noble}" is one)."""
    out, depth, start = [], 0, 0
    for m in re.finditer(r"[{}]|\s+and\s+", names, re.I):
        token = m.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(names[start : m.start()])
            start = m.end()
    return [n for n in out + [names[start:]] if n.strip()]


# --- BibTeX --------------------------------------------------------------------------------


#: BibTeX's predefined macros (plain.bst): a month written ``month = jan`` or ``jan # "~1"``
_MONTH_MACROS = {
    name[:3]: name
    for name in ("January February March April May June July August September October November December".split())
}


def _concatenated(value: str) -> list[str] | None:
    """The parts of a BibTeX concatenation (``prb # " (Condensed Matter)"``) split on the
    ``#`` outside braces and quotes; None when ``value`` is not one."""
    parts, depth, quoted, start = [], 0, False, 0
    for at, char in enumerate(value):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == '"' and depth == 0 and (at == 0 or value[at - 1] != "\\"):
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            parts.append(value[start:at].strip())
            start = at + 1
    if not parts:
        return None
    return parts + [value[start:].strip()]


def _expand(value: str, macros: dict[str, str]) -> str:
    """One concatenation joined: a quoted or braced part as written inside, a number as it
    is, a macro by its value (an undefined one by its name, as nothing else can stand there)."""
    parts = _concatenated(value)
    if parts is None:
        return value
    out = []
    for part in parts:
        if len(part) >= 2 and (part[0], part[-1]) in (('"', '"'), ("{", "}")):
            out.append(part[1:-1])
        else:
            out.append(macros.get(part.lower(), part))
    return "".join(out)


def _bare(block) -> bool:
    """A value bibtexparser found written without braces or quotes around it (a macro, a
    number or a concatenation): ``{C# in practice}`` is text, its ``#`` no operator."""
    return isinstance(block.value, str) and getattr(block, "enclosing", None) == "no-enclosing"


def _resolve_concatenation():
    """A bibtexparser library middleware joining ``#`` concatenations, run after its own
    stack: bibtexparser 2.1's ResolveStringReferencesMiddleware replaces a field that is
    one ``@string`` name only and leaves ``prb # " (Condensed Matter)"`` as written (a JabRef
    trial's journal). ``@string`` definitions may concatenate earlier ones."""
    from bibtexparser.middlewares.middleware import LibraryMiddleware

    class ResolveConcatenation(LibraryMiddleware):
        @classmethod
        def metadata_key(cls) -> str:
            return "hermes.ResolveConcatenation"

        def transform(self, library):
            macros = dict(_MONTH_MACROS)
            for string in library.strings:  # in file order: a later one may use an earlier one
                if _bare(string):
                    string.value = _expand(string.value, macros)
                macros[string.key.lower()] = str(string.value)
            for entry in library.entries:
                for f in entry.fields:
                    if _bare(f):
                        f.value = _expand(f.value, macros)
            return library

    return ResolveConcatenation()


def _bibtex(text: str) -> tuple[list, list]:
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock
    from bibtexparser.model import Entry as BibEntry

    # bibtexparser logs every failed block as a warning; hermes reports them itself.
    logging.getLogger("bibtexparser").setLevel(logging.ERROR)
    library = bibtexparser.parse_string(text, append_middleware=[_resolve_concatenation()])
    read_ = [_bib_entry(block) for block in library.entries]
    entries = [e for e in read_ if isinstance(e, Entry)]
    refused = [e for e in read_ if isinstance(e, Refused)]
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        if isinstance(block, DuplicateBlockKeyBlock):
            refused.append(
                Refused(
                    line, block.key, f"its key {block.key!r} is used by an earlier entry too; give it a key of its own"
                )
            )
            continue
        inner = getattr(block, "ignore_error_block", None)
        key = inner.key if isinstance(inner, BibEntry) else _bib_key(block.raw)
        refused.append(Refused(line, key, "it is not valid BibTeX: " + _bib_error(block, text, line)))
    # Blocks in file order: the refusals read top to bottom.
    return sorted(entries, key=lambda e: e.line), sorted(refused, key=lambda r: r.line)


def _bib_key(raw: str) -> str | None:
    m = re.match(r"\s*@\s*\w+\s*[{(]\s*([^,\s{}()]+)", raw or "")
    return m.group(1) if m else None


def _bib_error(block, text: str, line: int) -> str:
    error = getattr(block, "error", None)
    reason = getattr(error, "abort_reason", None) or str(error or "")
    if reason.startswith("Unexpected block start"):
        # bibtexparser names the next entry ("Unexpected block start: `@inproceedings`"):
        # the broken one is this entry, at ``line``, left open (trial finding)
        at = getattr(error, "end_index", None)
        after = f" before the next entry at line {text[:at].count(chr(10)) + 1}" if isinstance(at, int) else ""
        return f"the entry at line {line} is not closed{after} (a brace or quote is missing)"
    text = " ".join(reason.split()) or "a brace or quote is not closed"
    # bibtexparser's sentence names its own line numbers (0-based): the caller's line is
    # the entry's, 1-based.
    text = re.sub(r"\s*\(line \d+\)|\s*on line \d+", "", text)
    return text[:200]


def _bib_entry(block) -> Entry | Refused:
    f = {k.lower(): (v.value if isinstance(v.value, str) else str(v.value)) for k, v in block.fields_dict.items()}
    line = (block.start_line or 0) + 1
    prefix = (f.get("archiveprefix") or f.get("eprinttype") or "").lower()
    eprint = f.get("eprint") if (prefix in ("", "arxiv")) else None
    arxiv = find_arxiv(
        eprint,
        f.get("arxivid"),
        f.get("arxiv"),
        f.get("doi"),
        f.get("url"),
        f.get("journal"),
        f.get("note"),
        f.get("howpublished"),
    )
    published = (
        _date_text(f.get("date")) or _iso(f["year"], f.get("month"), f.get("day"))
        if f.get("date") or f.get("year")
        else None
    )
    authors = [_person(tex_text(n)) for n in _top_level_and(f.get("author") or "")]
    entry_type = block.entry_type.lower()
    kind = "article" if entry_type in _WEB_TYPES else "paper"
    csl_type = _BIB_CSL.get(entry_type)
    if entry_type == "inbook" and not f.get("booktitle"):
        csl_type = "book"  # classic BibTeX's @inbook: the book's title, a chapter's number
    keywords = re.split(r"[;,]", tex_text(f.get("keywords") or f.get("mendeley-tags") or ""))
    return _entry(
        line,
        block.key,
        tex_text(f.get("title")),
        title_spans=protected_spans(f.get("title")),
        abstract=tex_text(f.get("abstract")),
        authors=authors,
        arxiv=arxiv,
        doi=find_doi(f.get("doi")),
        url=f.get("url"),
        published=published,
        tags=keywords,
        content_type=kind,
        csl_type=csl_type,
        citation=_bib_citation(f, entry_type, csl_type),
    )


def _bib_citation(f: dict, entry_type: str, csl_type: str | None) -> dict[str, str]:
    """Where a BibTeX entry was published: a thesis's ``school`` (biblatex's
    ``institution``) and a report's ``institution`` as its publisher, the kind of either
    from its entry type or ``type`` (:data:`_BIB_GENRE`)."""
    publisher = f.get("publisher")
    if csl_type == "thesis":
        publisher = f.get("school") or f.get("institution") or publisher
    elif csl_type == "report":
        publisher = f.get("institution") or publisher
    genre = _genre(tex_text(f.get("type")), _GENRES.get(entry_type)) if csl_type in ("thesis", "report") else None
    container = f.get("journal") or f.get("journaltitle") or f.get("booktitle")
    return citation(
        tex_text(container) if csl_type in _CONTAINED else None,
        f.get("volume"),
        f.get("number") or f.get("issue"),
        f.get("pages"),
        tex_text(publisher),
        tex_text(f.get("edition")),
        genre,
    )


# --- RIS -----------------------------------------------------------------------------------

_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


def _ris(text: str) -> tuple[list, list]:
    """Records cut at ``TY`` / ``ER`` here (rispy reads one at a time), so that a broken
    record is named by its line and the others are still read."""
    import rispy

    entries, refused = [], []
    record: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.lstrip("\ufeff").rstrip()
        m = _RIS_TAG.match(line)
        tag = m.group(1) if m else None
        if tag == "TY":
            if record:
                refused.append(
                    Refused(start, None, f"its record has no end (ER  - ) before the next one on line {number}")
                )
            record, start = [line], number
        elif record:
            record.append(line)
            if tag == "ER":
                entries.append(_ris_record(record, start, rispy))
                record = []
        elif line.strip():
            refused.append(
                Refused(number, None, "a line outside any record (records start with TY  - and end with ER  - )")
            )
    if record:
        refused.append(Refused(start, None, "its record has no end (ER  - )"))
    good = [e for e in entries if isinstance(e, Entry)]
    return good, sorted(refused + [e for e in entries if isinstance(e, Refused)], key=lambda r: r.line)


def _ris_record(lines: list[str], start: int, rispy) -> Entry | Refused:
    try:
        parsed = rispy.loads("\n".join(lines) + "\n")
    except Exception as exc:  # noqa: BLE001 - rispy's errors are its own classes
        return Refused(start, None, f"it is not valid RIS: {exc}"[:200])
    if not parsed:
        return Refused(start, None, "it is not valid RIS")
    r = parsed[0]
    title = r.get("title") or r.get("primary_title") or r.get("translated_title") or ""
    urls = r.get("urls") or ([r["url"]] if r.get("url") else [])
    notes = r.get("notes") or []
    arxiv = find_arxiv(r.get("accession_number"), r.get("doi"), *urls, *notes)
    if not arxiv and (r.get("name_of_database") or "").lower() == "arxiv":
        arxiv = find_arxiv(r.get("number"), r.get("accession_number"))
    published = _date_text(r.get("date")) or _date_text(r.get("publication_year") or r.get("year"))
    kind = "article" if (r.get("type_of_reference") or "").lower() in _WEB_TYPES else "paper"
    authors = [_person(a) for a in (r.get("authors") or r.get("first_authors") or [])]
    return _entry(
        start,
        r.get("id"),
        title,
        abstract=r.get("abstract") or r.get("notes_abstract"),
        authors=authors,
        arxiv=arxiv,
        doi=find_doi(r.get("doi")),
        url=next((u for u in urls if not find_arxiv(u)), urls[0] if urls else None),
        published=published,
        tags=r.get("keywords") or [],
        content_type=kind,
        csl_type=_RIS_CSL.get((r.get("type_of_reference") or "").upper()),
        citation=_ris_citation(r),
    )


def _ris_citation(r: dict) -> dict[str, str]:
    """JO / T2 / JF the publication (a web page's T2 is its site: not a publication; a
    conference paper's C3 its proceedings, as Zotero writes them), VL, IS (a report's number
    is SN, Zotero's), SP-EP (SP alone where a tool writes "21-22" in it), PB (a thesis's
    university, a report's institution), ET the edition, M3 a thesis's or report's kind."""
    ty = (r.get("type_of_reference") or "").upper()
    csl_type = _RIS_CSL.get(ty)
    web = ty.lower() in _WEB_TYPES
    proceedings = r.get("custom3") if csl_type == "paper-conference" else None
    container = (
        r.get("journal_name") or r.get("alternate_title3") or proceedings or (None if web else r.get("secondary_title"))
    )
    start, end = r.get("start_page"), r.get("end_page")
    pages = f"{start}–{end}" if start and end else start or end
    number = r.get("number") if not r.get("name_of_database") else None
    return citation(
        container if csl_type in _CONTAINED else None,
        r.get("volume"),
        (r.get("issn") or number) if csl_type == "report" else number,
        pages,
        r.get("publisher"),
        r.get("edition"),
        _genre(r.get("type_of_work")) if csl_type in ("thesis", "report") else None,
    )


# --- CSL-JSON ------------------------------------------------------------------------------


def _csl_json(text: str) -> tuple[list, list]:
    """A list of CSL items (or one), read item by item so that a syntax error keeps the
    items before it and names its line."""
    decoder = json.JSONDecoder()
    text = text.lstrip("\ufeff")
    at = _skip(text, 0)
    entries, refused = [], []
    single = text.startswith("{", at)
    if single:
        items = [(at, None)]
    elif text.startswith("[", at):
        items, at = [], _skip(text, at + 1)
    else:
        return [], [Refused(_line(text, at), None, "CSL-JSON is a list of items: [{…}, …]")]
    while not single and at < len(text) and text[at] != "]":
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            refused.append(
                Refused(
                    _line(text, at),
                    None,
                    f"it is not valid JSON ({exc.msg} on line {exc.lineno}); the rest of the file was not read",
                )
            )
            break
        items.append((at, value))
        at = _skip(text, end)
        if at < len(text) and text[at] == ",":
            at = _skip(text, at + 1)
    for start, value in items:
        if single:
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                return [], [Refused(exc.lineno, None, f"it is not valid JSON ({exc.msg})")]
        done = _csl_item(value, _line(text, start))
        (entries if isinstance(done, Entry) else refused).append(done)
    return entries, sorted(refused, key=lambda r: r.line)


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _csl_item(item, line: int) -> Entry | Refused:
    if not isinstance(item, dict):
        return Refused(line, None, 'a CSL item is an object ({"title": …})')
    # CSL 1.0.2's citation-key (Better BibTeX's and hermes's own export) names the key the
    # person cites; id is often a URI or a number (cite_key refuses those)
    key = next((item[k] for k in ("citation-key", "id") if isinstance(item.get(k), (str, int)) and str(item[k])), None)
    key = str(key) if key is not None else None
    names = []
    for a in item.get("author") or [] if isinstance(item.get("author"), list) else []:
        if isinstance(a, dict):
            names.append(
                str(
                    a.get("literal")
                    or " ".join(str(a[k]) for k in ("given", "non-dropping-particle", "family") if a.get(k))
                )
            )
    parts = (
        ((item.get("issued") or {}).get("date-parts") or [[None]])[0]
        if isinstance(item.get("issued"), dict)
        else [None]
    )
    published = (
        _iso(*parts[:3])
        if parts and parts[0]
        else _date_text((item.get("issued") or {}).get("raw") if isinstance(item.get("issued"), dict) else None)
    )
    arxiv = find_arxiv(
        item.get("number") if "arxiv" in str(item.get("publisher", "")).lower() else None,
        item.get("number"),
        item.get("URL"),
        item.get("DOI"),
        item.get("note"),
        item.get("archive_location"),
    )
    keywords = item.get("keyword") or ""
    kind = "article" if str(item.get("type") or "") in _WEB_TYPES else "paper"
    csl_type = item.get("type") if item.get("type") in CSL_TYPES else None
    title = item.get("title")
    return _entry(
        line,
        key,
        title if isinstance(title, str) else "",
        abstract=str(item.get("abstract") or ""),
        authors=names,
        arxiv=arxiv,
        doi=find_doi(item.get("DOI")),
        url=item.get("URL") if isinstance(item.get("URL"), str) else None,
        published=published,
        tags=re.split(r"[;,]", keywords) if isinstance(keywords, str) else [],
        content_type=kind,
        csl_type=csl_type,
        citation=_csl_citation(item, csl_type),
    )


def _csl_citation(item: dict, csl_type: str | None) -> dict[str, str]:
    """An item's publication fields as CSL names them; a report's ``number`` is its
    report number."""

    def text(name):
        return item.get(name) if isinstance(item.get(name), (str, int)) else None

    return citation(
        text("container-title") if csl_type in _CONTAINED else None,
        text("volume"),
        (text("number") or text("issue")) if csl_type == "report" else text("issue"),
        text("page"),
        text("publisher"),
        text("edition"),
        _genre(text("genre")) if csl_type in ("thesis", "report") else None,
    )
