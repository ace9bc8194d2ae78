"""Persona records: validation, creation, the interests text, and everything a persona owns.

The tools in :mod:`hermes_persona.tools` and the CLI both go through these functions, so a
rule (a name's charset, the interests cap, what ``delete`` removes) lives in one place.
Helpers raise :class:`hermes.errors.HermesError` subclasses; the tool layer turns them
into ``ok: false`` results.
"""

from __future__ import annotations

import re
import sqlite3

import sqlite_utils

from hermes.arguments import spelled
from hermes.contract import NAME_MAX
from hermes.errors import InvalidInput
from hermes.facekit.faces import Say, plural, typed
from hermes.storage.clicks import click_counts, clicked_items, clicks_by_source, feedless_unclicked, remove_all_clicks
from hermes.storage.migrations import all_migrations
from hermes.storage.records import create_user, delete_items, require_user, unreferenced_items
from hermes.storage.transactions import write_transaction


def change_interests(name: str) -> Say:
    return Say(
        mcp="change its interests with update_persona",
        cli=f"change its interests with `hermes persona update {typed(name)} --interests TEXT`",
        web="pick it on the Personas page",
    )


COMMON_TAGS = Say(
    mcp="propose_interests lists the most common tags in the archive",
    cli="`hermes persona tags` lists the most common tags in the archive",
    web="the tags on the feed's items show what the archive holds",
)

INTERESTS_MAX = 4000
#: Letters and digits first (a name beginning with ``-`` would read as a CLI option), then
#: letters, digits, space, ``_ . @ + -``. No control characters, quotes or slashes: a name
#: is printed in terminals, used in URLs by the web UI and read back by small models.
NAME_RE = re.compile(r"[^\W_][\w .@+-]*")


def validate_name(name) -> str:
    """The persona name, stripped, or :class:`InvalidInput` saying what a valid one is."""
    name = name.strip()
    if not name:
        raise InvalidInput("name is empty; give the persona a short name such as 'alice'")
    if len(name) > NAME_MAX:
        raise InvalidInput(f"name is {len(name)} characters long; the limit is {NAME_MAX}")
    if not NAME_RE.fullmatch(name):
        raise InvalidInput(
            f"name {name!r} is not allowed: start with a letter or digit, then use letters, "
            "digits, spaces and _ . @ + - only"
        )
    return name


def validate_interests(interests) -> str:
    """The interests text, stripped, or :class:`InvalidInput` (empty, too long, binary)."""
    interests = interests.strip()
    if not interests:
        raise InvalidInput(
            f"{spelled('interests')} is empty; describe what this persona wants to read in a "
            f"sentence or a list of topics ({COMMON_TAGS})"
        )
    if len(interests) > INTERESTS_MAX:
        raise InvalidInput(
            f"{spelled('interests')} is {len(interests):,} characters long; the limit is {INTERESTS_MAX:,}: "
            "summarise the topics instead of pasting documents"
        )
    if "\x00" in interests:
        raise InvalidInput("interests contains a NUL character; send plain text")
    return interests


def same_name(db: sqlite_utils.Database, name: str, *, other_than: int | None = None) -> str | None:
    """An existing persona whose name equals ``name`` ignoring case, if any (``other_than``:
    not this persona's id, so a rename may change only the case of its own name)."""
    row = db.execute(
        "SELECT name FROM users WHERE lower(name) = lower(?) AND id IS NOT ?", [name, other_than]
    ).fetchone()
    return row[0] if row else None


def create_persona(db: sqlite_utils.Database, name, interests) -> dict:
    name = validate_name(name)
    interests = validate_interests(interests)
    # Names differing only in case would be two personas nobody can tell apart in a list.
    try:
        with write_transaction(db):
            existing = same_name(db, name)
            if existing is None:
                user = create_user(db, name, interests)
    except sqlite3.IntegrityError:  # created by another process between check and insert
        existing = same_name(db, name) or name
    if existing is not None:
        raise InvalidInput(
            f"a persona named {existing!r} already exists; pick another name, or {change_interests(existing)}"
        )
    return user


def update_interests(db: sqlite_utils.Database, name, interests) -> tuple[dict, str]:
    """Replace the interests text; return (persona, previous text). ``interests=None`` clears
    it ("forget my interests": the ranking then learns from clicks alone). No cache is
    invalidated by hand: the persisted interests vector is keyed by a hash of the text, so
    new text re-embeds on the next ranking and unchanged text costs nothing."""
    interests = "" if interests is None else validate_interests(interests)
    user = require_user(db, name)
    if user["interests"] != interests:
        with write_transaction(db):
            db.execute("UPDATE users SET interests = ? WHERE id = ?", [interests, user["id"]])
    return {**user, "interests": interests}, user["interests"]


def rename_persona(db: sqlite_utils.Database, name, new_name) -> tuple[dict, str]:
    """Give a persona a new name; return (persona, previous name). Its clicks, corpus rows
    and caches are keyed by its id, so they stay; only the cached explanations, which quote
    the name, are rewritten. Renaming to the current name changes nothing."""
    new_name = validate_name(new_name)
    with write_transaction(db):  # the check and the update under one write lock
        user = require_user(db, name)
        # Unique regardless of case, as at creation; the persona's own name is not a clash.
        taken = same_name(db, new_name, other_than=user["id"])
        if taken is None and new_name != user["name"]:
            db.execute("UPDATE users SET name = ? WHERE id = ?", [new_name, user["id"]])
            db.execute(
                "UPDATE explanations SET payload = json_set(payload, '$.user', ?) "
                "WHERE user_id = ? AND json_valid(payload)",
                [new_name, user["id"]],
            )
    if taken is not None:
        raise InvalidInput(f"a persona named {taken!r} already exists; pick another new name for {user['name']!r}")
    return {**user, "name": new_name}, user["name"]


# --- what a persona owns -------------------------------------------------------------------


def per_persona_tables(db: sqlite_utils.Database) -> dict[str, str]:
    """``{table: column}`` for every table holding rows of one persona.

    Found generically, not listed by hand, so tables a plugin adds later (the corpus) are
    covered without importing that plugin: a ``user_id`` column, or a foreign key to
    ``users``. ``users`` itself and virtual tables are not included.
    """
    found: dict[str, str] = {}
    tables = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    for table, sql in tables:
        # Virtual tables (full-text indexes) are maintained from their content tables by
        # their owner's triggers; deleting from one directly can corrupt the index.
        if table == "users" or (sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
            continue
        quoted = '"' + table.replace('"', '""') + '"'
        try:
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({quoted})")]
            fks = db.execute(f"PRAGMA foreign_key_list({quoted})").fetchall()
        except sqlite3.DatabaseError:  # a virtual table whose module is not loaded
            continue
        for fk in fks:  # (id, seq, table, from, to, ...)
            if fk[2] == "users" and (fk[4] in (None, "id")):
                found[table] = fk[3]
                break
        else:
            if "user_id" in cols:
                found[table] = "user_id"
    return found


def owned_counts(db: sqlite_utils.Database, user_id: int, tables: dict[str, str]) -> dict[str, int]:
    counts = {}
    for table, column in tables.items():
        quoted = '"' + table.replace('"', '""') + '"'
        col = '"' + column.replace('"', '""') + '"'
        counts[table] = db.execute(f"SELECT count(*) FROM {quoted} WHERE {col} = ?", [user_id]).fetchone()[0]
    return counts


def describe_loss(
    user: dict, counts: dict[str, int], clicks: dict[str, int], *, persona: bool, of_source: str | None = None
) -> str:
    """One sentence naming exactly what a delete (``persona=True``) or a reset removes (with
    ``of_source``: a reset of that source's clicks only)."""
    parts = [f"persona {user['name']!r}"] if persona else []
    click = f"{of_source} click" if of_source else "click"
    parts.append(
        f"{plural(clicks['clicks'], click)} ({plural(clicks['likes'], 'like')}, "
        f"{plural(clicks['dislikes'], 'dislike')})"
        if clicks["clicks"]
        else f"0 {click}s"
    )
    if counts.get("explanations"):
        parts.append(plural(counts["explanations"], "cached explanation"))
    words = row_words()
    for table, n in sorted(counts.items()):
        if table in ("clicks", "explanations", "items") or not n:
            continue
        one, many = words.get(table, ("row in " + table, "rows in " + table))
        if one:
            parts.append(plural(n, one, many))
    if counts.get("items"):
        parts.append(
            plural(counts["items"], "library entry stored as an item", "library entries stored as items")
            + " that nothing else refers to (no feed, no other click, no corpus)"
        )
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def describe_kept(db: sqlite_utils.Database, user: dict, *, of_source: str | None = None) -> str:
    """What a reset leaves, in a clause: the persona and its interests, (with ``of_source``)
    its clicks of the other sources, and every other row it owns — its corpus (the items it
    saved or read, its highlights and notes) and any plugin's. A reset removes only clicks
    and the explanations cached from them (:func:`plan`)."""
    with_it = []
    if of_source is not None:
        others = {s: n for s, n in clicks_by_source(db, user["id"]).items() if s != of_source and n}
        if len(others) == 1:
            (source, n), *_ = others.items()
            with_it.append(f"its {plural(n, f'{source} click')}")
        elif others:
            by = ", ".join(f"{n} {s}" for s, n in others.items())
            with_it.append(f"its {plural(sum(others.values()), 'other click')} ({by})")
    tables = {t: c for t, c in per_persona_tables(db).items() if t not in ("clicks", "explanations")}
    words = row_words()
    # in the order the migrations name them (the corpus: its items first), then the rest
    order = {table: i for i, table in enumerate(words)}
    counts = owned_counts(db, user["id"], tables)
    for table, n in sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])):
        one, many = words.get(table, ("row in " + table, "rows in " + table))
        if n and one:
            with_it.append(plural(n, one, many))
    kept = "the persona and its interests are kept"
    if not with_it:
        return kept
    return f"{kept}, with " + (", ".join(with_it[:-1]) + " and " + with_it[-1] if len(with_it) > 1 else with_it[0])


def row_words() -> dict[str, tuple[str, str]]:
    """What a row of each table is in a person's words, as the migrations that made the
    tables say (:attr:`hermes.contract.Migration.rows`)."""
    return {table: words for migration in all_migrations() for table, words in migration.rows.items()}


def plan(
    db: sqlite_utils.Database, name, *, persona: bool, of_source: str | None = None
) -> tuple[dict, dict, dict, dict]:
    """(user, tables, row counts, click counts) for a delete or a reset of ``name``; with
    ``of_source`` (a reset only) the clicks counted are that source's."""
    user = require_user(db, name)
    clicks = click_counts(db, user["id"], of_source=of_source)  # refuses an unknown source first
    tables = per_persona_tables(db)
    if not persona:  # a reset clears feedback and what was derived from it, nothing else
        tables = {t: c for t, c in tables.items() if t in ("clicks", "explanations")}
    counts = owned_counts(db, user["id"], tables)
    if of_source is not None:
        counts["clicks"] = clicks["clicks"]
    counts["items"] = len(imported_items(db, user, tables, of_source=of_source))
    return user, tables, counts, clicks


def imported_items(
    db: sqlite_utils.Database, user: dict, tables: dict[str, str], *, of_source: str | None
) -> list[int]:
    """The items a library import stored for the persona that its delete or reset leaves
    with no reason to stay: no feed brought them, their only click is this persona's
    ``bootstrap`` like, and nothing else refers to them — no click of another persona, no
    corpus row of any persona (this persona's rows in ``tables`` are going with it). With
    them go the items no feed brought that nothing holds any more, whoever's import stored
    them: no click left (a like taken back: ``hermes unrate``, the web's undo) and no corpus
    row of any persona.

    The schema does not record which items an import created; this is its durable trace:
    an item without a feed whose only click is a bootstrap one was stored by an import (a
    saved paper is in a corpus, and a feed's item has its feed). An item with no feed, no
    click and no corpus row is an import's whose like was taken back; kept, it would be a
    paper no reset ever removes (a trial's item 310). A reset of the ``ui`` or ``agent``
    clicks takes none of them."""
    if of_source not in (None, "bootstrap"):
        return []
    ours = clicked_items(db, user["id"], of_source="bootstrap")
    gone = unreferenced_items(db, ours, leaving_user=user["id"], leaving=("clicks", *tables))
    unheld = unreferenced_items(db, feedless_unclicked(db))
    return sorted({*gone, *unheld})


def delete_owned(
    db: sqlite_utils.Database,
    user: dict,
    tables: dict[str, str],
    *,
    persona: bool,
    source: str,
    of_source: str | None = None,
) -> dict[str, int]:
    """Delete the persona's clicks (with ``of_source``: only that source's), then the rows of
    ``tables`` (its cached explanations, for a reset: they may cite any click), then
    (``persona=True``) the persona itself, then the items its library imports stored that
    nothing refers to any more (:func:`imported_items`), in one transaction; return the rows
    removed per table (``items``: those items)."""
    removed: dict[str, int] = {}
    with write_transaction(db):
        # Plugin tables may reference each other; check foreign keys at commit, not per row.
        db.execute("PRAGMA defer_foreign_keys = ON")
        imported = imported_items(db, user, tables, of_source=of_source)
        removed["clicks"] = remove_all_clicks(db, user["id"], source, of_source=of_source)
        for table, column in tables.items():
            if table == "clicks":
                continue
            quoted = '"' + table.replace('"', '""') + '"'
            col = '"' + column.replace('"', '""') + '"'
            cur = db.execute(f"DELETE FROM {quoted} WHERE {col} = ?", [user["id"]])
            removed[table] = cur.rowcount
        if persona:
            db.execute("DELETE FROM users WHERE id = ?", [user["id"]])
        removed["items"] = delete_items(db, imported)
    return removed
