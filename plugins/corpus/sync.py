"""``hermes corpus sync``: one Markdown note per corpus item in a folder (an Obsidian or
Logseq vault), kept in step with the persona's corpus.

A note is YAML front matter (title, authors, url, arxiv, tags, facet, strength, dates), the
summary, the highlights as quotes and the notes, then a marker line. Everything above the
marker is hermes's and is rewritten when the item changes; everything below it belongs to
the person and is never changed, moved away or deleted.

The file name, the heading and the summary show arXiv's LaTeX as people read it
(:func:`hermes.text.latex.readable`: "𝒪(n²) time", not "mathcalO(n 2) time"); the front
matter's ``title`` is the stored text, exact, for tools and queries that match on it.

The folder remembers what it holds in ``.hermes-sync.json``: the persona, the facets, the
corpus revision last applied and, per note, its file and a signature of what it was written
from. A run reads the change log after that revision (items that entered or left the
facets) and compares signatures (what the log does not record: a new highlight or note on
an item already in a facet, more reading, a changed strength), then writes only the notes
that changed. When the log was trimmed past the cursor (``truncated``) it falls back to a
full pass. Files are written only when their bytes change, so a run with nothing new
writes nothing, and an incremental run leaves the folder exactly as a fresh full sync
would — but for the name of a note whose item's key changed since it was written (a
library import gave the item its own key): the file keeps the key it was named by (the
cursor records it), so the person's links to it hold, and its front matter gives the new key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from hermes.errors import HermesError
from hermes.facekit.faces import plural
from hermes.files import write_atomic
from hermes.text.latex import COMMAND, readable

from . import references
from .markdown import byline, markdown_body, md_link
from .membership import _read_snapshot, changes_since, revision_state
from .settings import corpus_settings
from .strength import strength
from .untrusted import without_bidi

CURSOR = ".hermes-sync.json"
CURSOR_VERSION = 1
#: bump when :func:`render` changes: folders synced by an older hermes get a full pass
# 2: readable names for titles with TeX math, the arXiv DOI in front matter; 3: names and
# headings from hermes.text.latex.readable ("𝒪(n²)", "In vivo"), so notes named before move
LAYOUT = 3
MARKER = "<!-- hermes: write your own notes below this line; `hermes corpus sync` never changes what follows -->"
_NAME_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*#^\[\]]+')
MAX_NAME_BYTES = 180


@dataclass
class SyncReport:
    user: str
    folder: str
    revision: int
    since: int
    full: bool
    reason: str
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # item gone from the facets, the person wrote in it
    #: of ``removed`` and ``kept``, the notes whose item is still in the corpus, only no
    #: longer in the folder's facets (the folder was synced with another ``--facet``)
    outside_facet: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # marker line gone: left untouched

    def as_dict(self) -> dict:
        return dict(self.__dict__)


# --- one note ------------------------------------------------------------------------------


def file_name(record: dict) -> str:
    """``<title> (<key>).md``: readable in a vault, unique by the key, stable across runs.
    Characters that file systems or wiki links refuse are dropped (the title is feed text,
    the key may be a library's: ``Smith:2020/a``). The note is found again by the item id in
    the folder's cursor, not by this name, so a title that changes moves the note (with the
    person's text) rather than orphaning it; a key that changes does not (:func:`_place`)."""
    # no bidi controls: an override makes a name read backwards ("…gnp.exe"); a command
    # readable() does not know ("\foo") keeps its name, instead of the backslash becoming a gap
    shown = COMMAND.sub(r"\1", without_bidi(readable(record["title"])))
    title = " ".join(_NAME_UNSAFE.sub(" ", shown).split()).strip(". ") or "untitled"
    key = " ".join(_NAME_UNSAFE.sub("-", without_bidi(record["key"])).split()).strip(". ") or "key"
    suffix = f" ({key}).md"
    budget = MAX_NAME_BYTES - len(suffix.encode())
    raw = title.encode("utf-8")[:budget].decode("utf-8", "ignore").rstrip(". ")
    return raw + suffix


def _yaml(value) -> str:
    # A JSON string is a valid YAML double-quoted scalar: feed text cannot break out of it.
    return json.dumps(value, ensure_ascii=False)


def _tag(text: str) -> str:
    # Obsidian tags allow letters, digits, _, - and /; no spaces or dots.
    tag = re.sub(r"[^\w/-]+", "-", text.strip().lower()).strip("-")
    return tag if tag and not tag.isdigit() else ""


def front_matter(r: dict) -> str:
    lines = ["---", f"title: {_yaml(r['title'])}"]
    if r["authors"]:
        lines += ["authors:"] + [f"  - {_yaml(a)}" for a in r["authors"]]
    lines.append(f"key: {_yaml(r['key'])}")
    for name in ("url", "arxiv", "doi"):
        if r[name]:
            lines.append(f"{name}: {_yaml(r[name])}")
    tags = [f"hermes/{r['facet']}", *(t for t in map(_tag, r["tags"]) if t)]
    lines += ["tags:"] + [f"  - {_yaml(t)}" for t in dict.fromkeys(tags)]
    lines.append(f"facet: {r['facet']}")
    if r["strength"] is not None:
        lines.append(f"strength: {r['strength']:.2f}")
    # Days, unquoted: Obsidian shows them as date properties (times in UTC, cut to the day).
    for name in ("published", "added", "first_seen", "last_seen"):
        if r[name] and re.match(r"\d{4}-\d\d-\d\d", r[name]):
            lines.append(f"{name}: {r[name][:10]}")
    lines += [f"hermes_item: {r['item_id']}", "---"]
    return "\n".join(lines)


def render(r: dict) -> str:
    """The part of a note hermes owns, ending with the marker line."""
    title = "# " + md_link(readable(r["title"]), r["url"])
    body = markdown_body(r, level=2).rstrip()
    text = "\n\n".join(filter(None, [front_matter(r), title, byline(r), body]))
    # A highlight quoting the marker must not be mistaken for it on the next run.
    return text.replace(MARKER, "\u2039" + MARKER[1:]) + "\n\n" + MARKER + "\n"


def personal_part(text: str) -> str | None:
    """What follows the marker line (the person's), or None when the marker is gone."""
    at = text.find(MARKER)
    if at < 0:
        return None
    end = text.find("\n", at)
    return "" if end < 0 else text[end + 1 :]


# --- signatures ----------------------------------------------------------------------------

_SIGNATURE_SQL = """
    SELECT m.item_id, m.facet, m.revision, m.added,
           (SELECT count(*) || '.' || coalesce(max(id), 0) FROM corpus_highlights h
             WHERE h.user_id = m.user_id AND h.item_id = m.item_id),
           (SELECT count(*) || '.' || coalesce(max(id), 0) FROM corpus_notes n
             WHERE n.user_id = m.user_id AND n.item_id = m.item_id),
           (SELECT count(*) FROM corpus_highlights h WHERE h.user_id = m.user_id AND h.item_id = m.item_id)
             + (SELECT count(*) FROM corpus_notes n WHERE n.user_id = m.user_id AND n.item_id = m.item_id),
           EXISTS (SELECT 1 FROM corpus_favorites f WHERE f.user_id = m.user_id AND f.item_id = m.item_id),
           coalesce(p.max_fraction, 0), coalesce(p.opens, 0),
           substr(p.first_seen, 1, 10), substr(p.last_seen, 1, 10),  -- notes show the day
           i.guid, i.url, i.title, i.author, i.published, i.tags, i.arxiv_id, i.content_type,
           length(i.summary), substr(i.summary, 1, 64)
    FROM corpus_membership m
    LEFT JOIN items i ON i.id = m.item_id
    LEFT JOIN corpus_progress p ON p.user_id = m.user_id AND p.item_id = m.item_id
    WHERE m.user_id = ? AND m.facet IN ({facets})
"""


def signatures(
    db: sqlite_utils.Database, user_id: int, facets: tuple[str, ...], keys: dict[int, str] | None = None
) -> dict[int, str]:
    """A short hash per member item of everything its note is written from, in one query:
    the item's fields, its facet, highlight and note counts and newest ids (ids are never
    reused, so an add or a delete always changes them), reading, favorite, strength, and its
    key (``keys``: a library import may give it one, :func:`.references.member_keys`)."""
    cfg = corpus_settings()
    keys = keys or {}
    out = {}
    for row in db.execute(_SIGNATURE_SQL.format(facets=", ".join("?" * len(facets))), [user_id, *facets]):
        captures, fav, frac, opens = row[6], row[7], row[8], row[9]
        score = strength(frac, captures, bool(fav), opens, cfg)[0] if row[1] == "experienced" else None
        blob = "\x1f".join(map(str, [*row, None if score is None else round(score, 2), keys.get(row[0])]))
        out[row[0]] = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return out


# --- the folder ----------------------------------------------------------------------------


def _write(path: Path, text: str) -> bool:
    """Write when the bytes differ; True if the file changed."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    write_atomic(path, data)
    return True


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def _load_cursor(folder: Path) -> dict | None:
    text = _read(folder / CURSOR)
    if text is None:
        return None
    try:
        cursor = json.loads(text)
        if cursor.get("hermes_sync") != CURSOR_VERSION or not isinstance(cursor.get("notes"), dict):
            raise ValueError("unknown layout")
    except (ValueError, AttributeError):
        return None  # unreadable: rebuild (person's text is still kept by the marker rule)
    return cursor


def _same_persona(cursor: dict, user: dict) -> bool:
    """Whether the folder was synced for ``user``: by the persona's id, which a rename keeps
    (``rename_persona``); a folder synced before ids were recorded, by name."""
    if "user_id" in cursor:
        return cursor["user_id"] == user["id"]
    return cursor.get("user") == user["name"]


def _other_persona(folder: Path, cursor: dict, user: dict) -> str:
    message = (
        f"{folder} is synced for persona {cursor.get('user')!r}, not {user['name']!r}; give each persona its own folder"
    )
    if "user_id" not in cursor:  # written before ids were recorded: a rename looks the same
        message += (
            f' (if you renamed {cursor.get("user")!r} to {user["name"]!r}, set "user" '
            f"to {user['name']!r} in {folder / CURSOR} and sync again)"
        )
    return message


def _inside(folder: Path, name: str) -> Path | None:
    # Defence in depth: a hand-edited cursor must not make sync write or delete outside the folder.
    if (
        not isinstance(name, str)
        or not name
        or "/" in name
        or "\\" in name
        or name in (".", "..")
        or name.startswith(".")
    ):
        return None
    return folder / name


def sync(
    db: sqlite_utils.Database, user: dict, folder: str | os.PathLike, facet: str = "all", *, rebuild: bool = False
) -> SyncReport:
    """Bring ``folder`` in step with ``user``'s corpus (``facet``: all, experienced or saved)."""
    facets = references.facets_of(facet)
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise HermesError(f"{folder} is a file; give a folder (a vault) to sync into")
    folder.mkdir(parents=True, exist_ok=True)
    cursor = _load_cursor(folder)
    if cursor and not _same_persona(cursor, user):
        raise HermesError(_other_persona(folder, cursor, user))

    with _read_snapshot(db):  # the log, signatures and records of one revision
        since = cursor["revision"] if cursor else 0
        try:
            log = changes_since(db, user["id"], since) if cursor else None
        except HermesError:  # cursor beyond the revision: another database, or it was reset
            log = None
        if cursor is None:
            full, reason = True, "first sync into this folder"
        elif rebuild:
            full, reason = True, "rebuild asked for"
        elif log is None:
            full, reason = True, f"the folder's revision {since} is not in this corpus's history"
        elif log["truncated"]:
            full, reason = True, f"the change log was trimmed past revision {since}"
        elif cursor.get("facets") != list(facets):
            was = " and ".join(map(str, cursor.get("facets") or [])) or "none"
            full, reason = True, f"the facets changed from {was} to {' and '.join(facets)}"
        elif cursor.get("layout") != LAYOUT:
            full, reason = True, "hermes's note layout changed"
        else:
            n = len(log["changes"])
            full, reason = False, f"{plural(n, 'membership change')} since revision {since}"
        revision = log["revision"] if log else revision_state(db, user["id"])[0]
        sigs = signatures(db, user["id"], facets, references.member_keys(db, user["id"], facets))
        in_corpus = _in_corpus(db, user["id"])
        known: dict = {} if cursor is None else cursor["notes"]
        logged = {c["item_id"] for c in log["changes"]} if log and not full else set()

        present = set(os.listdir(folder))

        def stale(item_id: int, sig: str) -> bool:
            entry = known.get(str(item_id)) or {}
            return (
                full
                or item_id in logged
                or entry.get("sig") != sig
                or _inside(folder, entry.get("file", "")) is None
                or entry["file"] not in present
            )

        todo = {i for i, sig in sigs.items() if stale(i, sig)}
        records = references.load(db, user["id"], facets, item_ids=todo)
        # a note the folder holds that its cursor does not name (the cursor was lost: a copy
        # of the vault without its hidden files) may be named by the key hermes generated
        # before a library import gave the item its own
        unnamed = [r for r in records if not isinstance(known.get(str(r["item_id"])), dict)]
        generated = references.member_keys(db, user["id"], facets, libraries=False) if unnamed else {}

    report = SyncReport(user=user["name"], folder=str(folder), revision=revision, since=since, full=full, reason=reason)
    notes = {k: v for k, v in known.items() if k.isdigit() and int(k) in sigs}
    for item_id in sorted(int(k) for k in known if k.isdigit() and int(k) not in sigs):
        _remove(folder, known[str(item_id)].get("file", ""), report, item_id in in_corpus)
    held = {e.get("file"): k for k, e in notes.items() if isinstance(e, dict)}  # file -> its item
    for r in records:
        was = known.get(str(r["item_id"]), {})
        # the key the note was first named by: its file keeps it when a library import gives
        # the item its own key later (links to the note stay; the front matter says the new key)
        named_by = was.get("key") or _key_of(was.get("file")) or _found(present, r, generated.get(r["item_id"]))
        entry = _place(folder, r, named_by, was.get("file"), held, report)
        if entry is None:
            notes.pop(str(r["item_id"]), None)
        else:
            notes[str(r["item_id"])] = {"file": entry[0], "key": entry[1], "sig": sigs[r["item_id"]]}
            held[entry[0]] = str(r["item_id"])
    state = {
        "hermes_sync": CURSOR_VERSION,
        "layout": LAYOUT,
        "user": user["name"],
        "user_id": user["id"],
        "facets": list(facets),
        "revision": revision,
        "notes": dict(sorted(notes.items(), key=lambda kv: int(kv[0]))),
    }
    _write(folder / CURSOR, json.dumps(state, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    return report


_KEY_IN_NAME = re.compile(r" \(([^()]+)\)\.md\Z")


def _key_of(name) -> str | None:
    """The key in a note's file name (:func:`file_name`): a cursor written before it kept
    the key, a note named by its generated key."""
    found = _KEY_IN_NAME.search(name) if isinstance(name, str) else None
    return found.group(1) if found else None


def _found(present: set, r: dict, generated: str | None) -> str:
    """The key a note of ``r`` the cursor does not name is found by in the folder: its key,
    else the one hermes generated for it (its note was named so before a library keyed it)."""
    if generated and file_name(r) not in present and file_name({**r, "key": generated}) in present:
        return generated
    return r["key"]


def _place(
    folder: Path, r: dict, named_by: str, old_name: str | None, held: dict, report: SyncReport
) -> tuple[str, str] | None:
    """Write one item's note, keeping the person's part; return its file name and the key
    it is named by (None when left alone because the marker is gone). The name takes
    ``named_by``, the key the note was first written with, not a newer one: a note renamed
    under the person would break the vault's links to it. A name another item's note holds
    (``held``: that note kept a key now this item's) gets the item id after the key."""
    name = file_name({**r, "key": named_by})
    if held.get(name, str(r["item_id"])) != str(r["item_id"]):
        named_by = f"{named_by}-i{r['item_id']}"
        name = file_name({**r, "key": named_by})
    target = folder / name
    existing = _read(target)
    old = _inside(folder, old_name) if old_name and old_name != name else None
    if existing is None and old is not None:
        existing = _read(old)  # the title changed: the note moves, the person's part with it
    personal = "" if existing is None else personal_part(existing)
    if personal is None:
        report.conflicts.append(name)
        return None
    if _write(target, render(r) + personal):
        report.written.append(name)
    if old is not None and old.exists():
        old.unlink()
    return name, named_by


def _in_corpus(db: sqlite_utils.Database, user_id: int) -> set[int]:
    """Every item in any facet: a note leaving the folder's facets says whether its item
    left the corpus or only the chosen facet."""
    return {r[0] for r in db.execute("SELECT DISTINCT item_id FROM corpus_membership WHERE user_id = ?", [user_id])}


def _remove(folder: Path, name: str, report: SyncReport, in_corpus: bool) -> None:
    """An item left the synced facets: delete its note unless the person wrote in it (the
    note holds nothing else hermes could not write again)."""
    path = _inside(folder, name)
    text = _read(path) if path else None
    if text is None:
        return
    personal = personal_part(text)
    if personal is None or personal.strip():
        report.kept.append(name)  # the person's text: leave the whole file to them
    else:
        path.unlink()
        report.removed.append(name)
    if in_corpus:
        report.outside_facet.append(name)
