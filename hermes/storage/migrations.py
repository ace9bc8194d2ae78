"""A named, ordered, idempotent migration ledger.

The core's migrations are listed here; plugins contribute theirs through
``hermes_migrations``. Each runs once inside its own transaction and is recorded in
``_migrations``. A released migration is never edited: append a new one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

import sqlite_utils

from hermes.storage.records import now_iso
from hermes.text.authors import parse_authors
from hermes.text.subscripts import SCRIPT_MARKS, SCRIPT_MATH, index_script_steps

from ..contract import Migration
from ..plugins import get_plugin_manager
from .transactions import write_transaction

CORE: list[Migration] = []


def run_script(db: sqlite_utils.Database, script: str) -> None:
    """Run DDL statements one by one: ``executescript`` would commit the open transaction."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def migration(fn: Callable[[sqlite_utils.Database], None]) -> Callable:
    CORE.append(Migration(f"core:{fn.__name__}", fn))
    return fn


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    # CREATE ... IF NOT EXISTS throughout: databases made before the ledger existed keep
    # their tables and data, and later migrations repair what they lack. Tables first, then
    # the columns such an old table lacks, then the indexes (which may need those columns).
    statements = [s for s in INITIAL_SCHEMA.split(";") if s.strip()]
    indexes = [s for s in statements if " INDEX " in s.upper()]
    for statement in statements:
        if statement not in indexes:
            db.execute(statement)
    add_missing_columns(db, INITIAL_SCHEMA)
    for statement in indexes:
        db.execute(statement)


def add_missing_columns(db: sqlite_utils.Database, schema: str) -> None:
    """Give every table of ``schema`` that already exists the columns it lacks (type and
    default as declared; UNIQUE cannot be added by ALTER TABLE, so it is not)."""
    ref = sqlite3.connect(":memory:")
    for statement in schema.split(";"):
        if statement.strip():
            ref.execute(statement)
    tables = [r[0] for r in ref.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        have = set(db[table].columns_dict)
        for _, name, decl, notnull, default, pk in ref.execute(f"PRAGMA table_info({table})"):
            if name in have or pk:
                continue
            extra = f"{' NOT NULL' if notnull else ''} DEFAULT {default}" if default is not None else ""
            db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}{extra}")
    ref.close()


INITIAL_SCHEMA = """
        CREATE TABLE IF NOT EXISTS feeds (
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            title TEXT,
            etag TEXT,
            last_modified TEXT,
            last_fetched TEXT,
            last_error TEXT,
            error_count INTEGER NOT NULL DEFAULT 0,
            added TEXT
        );
        -- feed_id is deliberately not a foreign key: removing a feed orphans its items
        -- and keeps every click that trained a persona.
        CREATE TABLE IF NOT EXISTS items (
            id INTEGER PRIMARY KEY,
            feed_id INTEGER,
            guid TEXT NOT NULL UNIQUE,
            url TEXT,
            title TEXT NOT NULL DEFAULT '',
            summary TEXT NOT NULL DEFAULT '',
            author TEXT,
            published TEXT,
            fetched TEXT,
            content_type TEXT NOT NULL DEFAULT 'article',
            tags TEXT NOT NULL DEFAULT '[]',
            enclosure TEXT,
            arxiv_id TEXT,
            embedding BLOB,
            embedding_model TEXT,
            embed_seq INTEGER
        );
        CREATE INDEX IF NOT EXISTS items_feed ON items(feed_id);
        CREATE INDEX IF NOT EXISTS items_published ON items(published);
        CREATE INDEX IF NOT EXISTS items_embed_seq ON items(embed_seq);
        CREATE UNIQUE INDEX IF NOT EXISTS items_arxiv ON items(arxiv_id) WHERE arxiv_id IS NOT NULL;
        CREATE TABLE IF NOT EXISTS users (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            interests TEXT NOT NULL DEFAULT '',
            created TEXT
        );
        CREATE TABLE IF NOT EXISTS clicks (
            id INTEGER PRIMARY KEY,
            user_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            label TEXT NOT NULL,
            created TEXT
        );
        CREATE INDEX IF NOT EXISTS clicks_user ON clicks(user_id, item_id);
        CREATE TABLE IF NOT EXISTS explanations (
            user_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            payload TEXT NOT NULL,
            created TEXT,
            PRIMARY KEY (user_id, item_id)
        );
        """


@migration
def m002_clicks_source(db: sqlite_utils.Database) -> None:
    # Seed 000: click provenance. SQLite cannot add a CHECK constraint with ALTER TABLE, so
    # the ui|agent|bootstrap enum is enforced in hermes.storage.signals.record_click. Pre-existing clicks
    # cannot be told apart; they came mostly from the web UI, so they read 'ui'.
    if "source" not in db["clicks"].columns_dict:
        db.execute("ALTER TABLE clicks ADD COLUMN source TEXT NOT NULL DEFAULT 'ui'")


@migration
def m003_interests_cache(db: sqlite_utils.Database) -> None:
    # The interests vector is persisted so a fresh process ranks without loading the model
    # unless the text (or the model) changed; the key is sha256(model + text).
    cols = db["users"].columns_dict
    if "interests_key" not in cols:
        db.execute("ALTER TABLE users ADD COLUMN interests_key TEXT")
    if "interests_vec" not in cols:
        db.execute("ALTER TABLE users ADD COLUMN interests_vec BLOB")


@migration
def m004_feed_backoff(db: sqlite_utils.Database) -> None:
    if "retry_after" not in db["feeds"].columns_dict:
        db.execute("ALTER TABLE feeds ADD COLUMN retry_after TEXT")


@migration
def m005_ingest_state(db: sqlite_utils.Database) -> None:
    # A feed that parses despite problems (feedparser's "bozo") is not a failure, but the
    # user should still see why; and feeds.toml seeds a database once only, which needs a
    # place to remember that it did (after that the database is the truth).
    if "last_warning" not in db["feeds"].columns_dict:
        db.execute("ALTER TABLE feeds ADD COLUMN last_warning TEXT")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")


@migration
def m006_items_fts(db: sqlite_utils.Database) -> None:
    # A full-text index of item titles and summaries, kept in step with ``items`` by
    # triggers. The ranking's lexical profile (BM25 of the interests text, hermes.ranking.lexical)
    # reads it instead of tokenising every item on each process start. SQLite builds
    # without FTS5 skip it; that component is then inactive.
    try:
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5(title, summary, "
            "content='items', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')"
        )
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc):
            return
        raise
    # Statements one by one: trigger bodies contain ';' (run_script would split them).
    db.execute(
        """CREATE TRIGGER IF NOT EXISTS items_fts_insert AFTER INSERT ON items BEGIN
             INSERT INTO items_fts (rowid, title, summary) VALUES (new.id, new.title, new.summary);
           END"""
    )
    db.execute(
        """CREATE TRIGGER IF NOT EXISTS items_fts_delete AFTER DELETE ON items BEGIN
             INSERT INTO items_fts (items_fts, rowid, title, summary)
             VALUES ('delete', old.id, old.title, old.summary);
           END"""
    )
    db.execute(
        """CREATE TRIGGER IF NOT EXISTS items_fts_update AFTER UPDATE OF title, summary ON items
           BEGIN
             INSERT INTO items_fts (items_fts, rowid, title, summary)
             VALUES ('delete', old.id, old.title, old.summary);
             INSERT INTO items_fts (rowid, title, summary) VALUES (new.id, new.title, new.summary);
           END"""
    )
    db.execute("INSERT INTO items_fts (items_fts) VALUES ('rebuild')")


@migration
def m007_tag_graph_cache(db: sqlite_utils.Database) -> None:
    # The tag graph (hermes.topics.tag_graph) persisted across processes, keyed by a fingerprint of
    # the items table: a fresh CLI or MCP process reuses it until items change. The core reads
    # and writes it, so the core creates it (databases made while the digest plugin created
    # it already have it, hence IF NOT EXISTS).
    db.execute(
        """CREATE TABLE IF NOT EXISTS kg_cache (
               fingerprint TEXT PRIMARY KEY,
               payload TEXT NOT NULL,
               built TEXT
           )"""
    )


@migration
def m008_feed_ttl(db: sqlite_utils.Database) -> None:
    # How often a feed asks to be fetched at most (its <ttl> or sy:updatePeriod, in
    # seconds): the background refresh waits at least that long between fetches.
    if "ttl" not in db["feeds"].columns_dict:
        db.execute("ALTER TABLE feeds ADD COLUMN ttl INTEGER")


@migration
def m009_feed_subscriber(db: sqlite_utils.Database) -> None:
    # Issue 12: who subscribed a feed decides whether `hermes ingest` fetches it through the
    # private-address guard. 'agent' (an MCP tool or the web form) is the column default,
    # so a row written without saying who is guarded; feeds from before this migration were
    # subscribed without the distinction and count as the user's. trusted_at records when a
    # person promoted an agent's feed (`hermes feeds trust`).
    cols = db["feeds"].columns_dict
    if "subscribed_by" not in cols:
        db.execute("ALTER TABLE feeds ADD COLUMN subscribed_by TEXT NOT NULL DEFAULT 'agent'")
        db.execute("UPDATE feeds SET subscribed_by = 'user'")
    if "trusted_at" not in cols:
        db.execute("ALTER TABLE feeds ADD COLUMN trusted_at TEXT")


@migration
def m010_item_authors(db: sqlite_utils.Database) -> None:
    # Authors as a list (issue 16): people are a preference family like tags, and the export
    # needs them one by one. Existing rows are parsed from the one-string ``author`` column.
    if "authors" not in db["items"].columns_dict:
        db.execute("ALTER TABLE items ADD COLUMN authors TEXT NOT NULL DEFAULT '[]'")
    rows = db.execute("SELECT id, author FROM items WHERE author IS NOT NULL AND author != ''").fetchall()
    for item_id, author in rows:
        db.execute(
            "UPDATE items SET authors = ? WHERE id = ?",
            [json.dumps(parse_authors(author), ensure_ascii=False), item_id],
        )


@migration
def m011_item_keyphrases(db: sqlite_utils.Database) -> None:
    # Which of an item's tags came from ``hermes_item_tags`` plugins (keyphrases) rather than
    # the feed's own categories: explanations call those topics. NULL means "not tagged by
    # the plugins yet": the next ``hermes ingest`` (or ``hermes tags rebuild``) tags every such
    # item, so an existing archive is tagged once after this migration.
    # Every proposal is kept (not only the tags kept on the item): whether a tag recurs is
    # decided over all of them, so a later item can make an earlier item's proposal count.
    if "keyphrases" not in db["items"].columns_dict:
        db.execute("ALTER TABLE items ADD COLUMN keyphrases TEXT")
    db.execute("CREATE INDEX IF NOT EXISTS items_untagged ON items(id) WHERE keyphrases IS NULL")
    db.execute(
        """CREATE TABLE IF NOT EXISTS item_tag_proposals (
               item_id INTEGER NOT NULL,
               tag TEXT NOT NULL,
               score REAL NOT NULL,
               PRIMARY KEY (item_id, tag)
           ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX IF NOT EXISTS item_tag_proposals_tag ON item_tag_proposals(tag, item_id)")


@migration
def m012_items_url(db: sqlite_utils.Database) -> None:
    # One entry under two ids (a bare guid is prefixed with its feed's URL, so the same
    # podcast under two spellings of its address, or a planet re-publishing a blog post,
    # gave two ids): ingest looks the entry up by link and title. Saving by URL reads it too.
    db.execute("CREATE INDEX IF NOT EXISTS items_url ON items(url) WHERE url IS NOT NULL")


@migration
def m013_items_dated_by(db: sqlite_utils.Database) -> None:
    # Where an item's date comes from: NULL is the feed's own (or its URL's), 'first seen'
    # is when hermes first saw an undated entry in a later fetch — an estimate every face
    # marks as such (shown as a plain date it read as the feed's claim). Items stored before
    # have fetched = published exactly in that case.
    if "dated_by" not in db["items"].columns_dict:
        db.execute("ALTER TABLE items ADD COLUMN dated_by TEXT")
        db.execute("UPDATE items SET dated_by = 'first seen' WHERE published = fetched")


@migration
def m014_feed_folders(db: sqlite_utils.Database) -> None:
    # OPML keeps a feed's folder (nested folders as one path, "Science / Physics") and its
    # site (htmlUrl), so an export -> import round trip loses neither. removed_feeds remembers
    # the id a removed feed's items still carry: subscribing the same feed again takes that
    # id back (plugins/feeds), so its items, clicks and the ranking's source key are its own
    # again. Feeds removed before this migration left no such record.
    cols = db["feeds"].columns_dict
    if "folder" not in cols:
        db.execute("ALTER TABLE feeds ADD COLUMN folder TEXT")
    if "site_url" not in cols:
        db.execute("ALTER TABLE feeds ADD COLUMN site_url TEXT")
    db.execute(
        """CREATE TABLE IF NOT EXISTS removed_feeds (
               id INTEGER PRIMARY KEY,
               url TEXT NOT NULL,
               removed TEXT
           )"""
    )


@migration
def m015_removed_feed_places(db: sqlite_utils.Database) -> None:
    # A user trial: a feed removed and added again came back under the feed's own title and
    # at the top level, losing the title and folder the person had given it. removed_feeds
    # now remembers them (and the feed's site) until the same feed is subscribed again.
    # Whether a title was the person's or the feed's own is not recorded, so it is kept
    # either way. Rows removed before this migration have none to give back.
    cols = db["removed_feeds"].columns_dict
    for column in ("title", "folder", "site_url"):
        if column not in cols:
            db.execute(f"ALTER TABLE removed_feeds ADD COLUMN {column} TEXT")


@migration
def m016_persona_window(db: sqlite_utils.Database) -> None:
    # A user trial: a person whose archive is last year's papers set the web feed to "all"
    # on every visit and typed --all on every `hermes feed`. The window a person last chose
    # is remembered per persona ("all" or a number of days; NULL: the 7-day default).
    if "feed_window" not in db["users"].columns_dict:
        db.execute("ALTER TABLE users ADD COLUMN feed_window TEXT")


#: m017's reading of LaTeX's accented letters for the full-text index, frozen here (a
#: released migration never changes): the letters LaTeX writes with a command of their own,
#: as the Unicode a person reads and types ("{\\ss}" is ß)
_FTS_LETTERS = {
    "ss": "ß", "o": "ø", "O": "Ø", "l": "ł", "L": "Ł", "aa": "å", "AA": "Å",
    "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "i": "i", "j": "j",
}  # fmt: skip
#: the accents: punctuation ones (``\\"o``) and letter ones, which take a space or braces
#: (``\\c c``, ``\\H{o}``)
_FTS_PUNCTUATION_ACCENTS = "\"'`^~=."
_FTS_LETTER_ACCENTS = "cHvukrd"
#: a private-use character (a token character to unicode61) standing for an accent while
#: the braces around its letter are taken away
_FTS_MARK = "\ue000"
#: SQLite's parser overflows at about 30 nested calls (3.40: 31 replace()), so the chain of
#: replacements is split into views of this many, each reading the one before
_FTS_STEP = 20


def fts_replacements() -> list[tuple[str, str]]:
    """The (LaTeX, text) replacements, in order, that read the accented letters of a
    title or summary for the index: the index folds diacritics, so an accent may go and
    leave its letter joined to the word (``Schr\\"{o}dinger`` is indexed "schrodinger",
    as "Schrödinger" is), which covers every accent on every letter in every brace form."""
    out: list[tuple[str, str]] = []
    for name, letter in _FTS_LETTERS.items():
        out += [("{\\" + name + "}", letter), ("\\" + name + "{}", letter), ("\\" + name + " ", letter)]
    out.append(("\\i}", "i}"))  # \'{\i}: the accent's own brace closes after it
    # each accent in every brace form, outer forms first, to the mark
    for accent in _FTS_PUNCTUATION_ACCENTS:
        command = "\\" + accent
        out += [("{" + command + "{", _FTS_MARK), (command + "{", _FTS_MARK), ("{" + command, _FTS_MARK)]
        out.append((command, _FTS_MARK))
    for accent in _FTS_LETTER_ACCENTS:
        command = "\\" + accent
        out += [("{" + command + "{", _FTS_MARK), (command + "{", _FTS_MARK), ("{" + command + " ", _FTS_MARK)]
        out.append((command + " ", _FTS_MARK))
    # the braces that closed after an accented letter (the index folds case: one case will do)
    out.append(("__lower__", ""))
    for letter in "abcdefghijklmnopqrstuvwxyz":
        out += [(_FTS_MARK + letter + "}}", letter), (_FTS_MARK + letter + "}", letter)]
    out.append((_FTS_MARK, ""))
    return out


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _chained(expr: str, steps) -> str:
    """``expr`` through the (LaTeX, text) replacements ``steps``, in SQL."""
    for latex, text in steps:
        expr = f"lower({expr})" if latex == "__lower__" else f"replace({expr}, {_sql_text(latex)}, {_sql_text(text)})"
    return expr


def fts_views() -> list[tuple[str, str]]:
    """(name, SELECT) of the views that give the index its text: ``items_fts_text`` last."""
    steps = fts_replacements()
    chunks = [steps[k : k + _FTS_STEP] for k in range(0, len(steps), _FTS_STEP)]
    views, source = [], "items"
    for n, chunk in enumerate(chunks, 1):
        name = f"items_fts_step{n}"
        columns = []
        for column in ("title", "summary"):
            # each view names the one before once: a view flattened into the next with its
            # column named twice would double the work at every step. The text is carried
            # as it is beside its reading; the reading is NULL (no work) without a backslash.
            expr = f"CASE WHEN instr({column}, '\\') THEN {column} END" if n == 1 else f"{column}_read"
            columns += [column, f"{_chained(expr, chunk)} AS {column}_read"]
        views.append((name, f"SELECT id, {', '.join(columns)} FROM {source}"))
        source = name
    read = ", ".join(f"coalesce({c}_read, {c}) AS {c}" for c in ("title", "summary"))
    views.append(("items_fts_text", f"SELECT id, {read} FROM {source}"))
    return views


@migration
def m017_items_fts_readable(db: sqlite_utils.Database) -> None:
    # A trial: a search for "Schrödinger" (or "Schrodinger") found no title stored as
    # Schr\"odinger: the index cut it into "schr" and "odinger". The index now reads the
    # text through views that take LaTeX's accents away (the index folds the diacritics of
    # what a person types, so "Schrödinger" and "Schrodinger" both match), in plain SQL,
    # so that a row another SQLite client writes is indexed the same way. The tokenizer
    # is m006's, so the lexical ranking reads the same words otherwise. The triggers read
    # the views (a delete's and an update's old text before the row goes), and 'rebuild'
    # and 'integrity-check' read them as the index's content.
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name LIKE 'items_fts%'")]
    for trigger in ("items_fts_insert", "items_fts_delete", "items_fts_unindex", "items_fts_update"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    if "items_fts" in names:
        db.execute("DROP TABLE items_fts")
    for name, select in fts_views():
        db.execute(f"DROP VIEW IF EXISTS {name}")
        db.execute(f"CREATE VIEW {name} AS {select}")
    try:
        db.execute(
            "CREATE VIRTUAL TABLE items_fts USING fts5(title, summary, content='items_fts_text', "
            "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')"
        )
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc):
            return
        raise
    old = "INSERT INTO items_fts (items_fts, rowid, title, summary) SELECT 'delete', id, title, summary FROM items_fts_text WHERE id = old.id"
    new = (
        "INSERT INTO items_fts (rowid, title, summary) SELECT id, title, summary FROM items_fts_text WHERE id = new.id"
    )
    db.execute(f"CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN {new}; END")
    db.execute(f"CREATE TRIGGER items_fts_delete BEFORE DELETE ON items BEGIN {old}; END")
    db.execute(f"CREATE TRIGGER items_fts_unindex BEFORE UPDATE OF title, summary ON items BEGIN {old}; END")
    db.execute(f"CREATE TRIGGER items_fts_update AFTER UPDATE OF title, summary ON items BEGIN {new}; END")
    db.execute("INSERT INTO items_fts (items_fts) VALUES ('rebuild')")


@migration
def m018_items_fts_words(db: sqlite_utils.Database) -> None:
    # A trial: a search for "witness" found 105 of 165 items, every one with "with",
    # "within" or "without": the search asked the porter index for the word as a prefix, and
    # porter had cut "witness" to "wit". The search now reads an index of the words as
    # written (case and diacritics folded, LaTeX's accents read as m017 reads them, no
    # stemming) and its vocabulary, and picks a query word's inflections from it
    # (hermes.builtins.default_candidates.word_forms); the porter index stays for the
    # lexical ranking. detail=none: a search asks which items hold a word, never where.
    try:
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS items_fts_words USING fts5(title, summary, "
            "content='items_fts_text', content_rowid='id', tokenize='unicode61 remove_diacritics 2', "
            "detail=none, columnsize=0)"
        )
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS items_fts_words_vocab USING fts5vocab(items_fts_words, row)")
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc):
            return
        raise
    old = (
        "INSERT INTO items_fts_words (items_fts_words, rowid, title, summary) "
        "SELECT 'delete', id, title, summary FROM items_fts_text WHERE id = old.id"
    )
    new = "INSERT INTO items_fts_words (rowid, title, summary) SELECT id, title, summary FROM items_fts_text WHERE id = new.id"
    for trigger, when in (
        ("insert", "AFTER INSERT"),
        ("delete", "BEFORE DELETE"),
        ("unindex", "BEFORE UPDATE OF title, summary"),
        ("update", "AFTER UPDATE OF title, summary"),
    ):
        body = new if trigger in ("insert", "update") else old
        db.execute(f"DROP TRIGGER IF EXISTS items_fts_words_{trigger}")
        db.execute(f"CREATE TRIGGER items_fts_words_{trigger} {when} ON items BEGIN {body}; END")
    db.execute("INSERT INTO items_fts_words (items_fts_words) VALUES ('rebuild')")


def fts_script_views() -> list[tuple[str, str]]:
    """(name, SELECT) of the views that read the scripts of a text with math after m017's
    reading (:func:`hermes.text.subscripts.index_script_steps`): ``items_fts_text`` last."""
    steps = index_script_steps()
    size = -(-len(steps) // -(-len(steps) // _FTS_STEP))  # as few views as m017's limit allows, even
    chunks = [steps[k : k + size] for k in range(0, len(steps), size)]

    def scripted(column: str) -> str:  # hermes.text.subscripts.has_scripts, in SQL
        marks = " OR ".join(f"instr({column}, {_sql_text(mark)})" for mark in SCRIPT_MARKS)
        return f"instr({column}, {_sql_text(SCRIPT_MATH)}) AND ({marks})"

    views, source = [], fts_views()[-2][0]  # m017's last step: each text as written and its reading
    for n, chunk in enumerate(chunks, 1):
        name = f"items_fts_scripts{n}"
        columns = []
        for column in ("title", "summary"):
            # the text as written is carried to test for math with scripts at each step (a
            # text without does no work), m017's reading (NULL without a backslash) to fall back on;
            # the final coalesce reads that reading once, in the chain or as the fallback
            accents = f"coalesce({column}_read, {column})"
            before = accents if n == 1 else f"{column}_scripts"
            chain = f"CASE WHEN {scripted(column)} THEN {_chained(before, chunk)} END AS {column}_scripts"
            columns += [column, f"{accents} AS {column}_accents" if n == 1 else f"{column}_accents", chain]
        views.append((name, f"SELECT id, {', '.join(columns)} FROM {source}"))
        source = name
    read = ", ".join(f"coalesce({c}_scripts, {c}_accents) AS {c}" for c in ("title", "summary"))
    views.append(("items_fts_text", f"SELECT id, {read} FROM {source}"))
    return views


@migration
def m019_items_fts_scripts(db: sqlite_utils.Database) -> None:
    # A trial: a researcher's "CeCoIn5" found no paper titled "CeCoIn$_5$", nor "BaCuSi2O6"
    # "BaCuSi$_2$O$_6$": the index cut them into "cecoin" and "5", "bacusi", "2o" and "6". The
    # index's text now joins a script to the word it is written on ("cecoin5", "sr2ruo4",
    # "tc" for "$T_c$"), in plain SQL after m017's reading, and both indexes (the porter one
    # the lexical ranking reads, and m018's words) are rebuilt from it; their triggers read
    # ``items_fts_text`` by name and are kept. A search reads its query the same way
    # (hermes.text.subscripts.index_scripts), and a word also finds itself with a number
    # after it ("CeCoIn" finds "cecoin5": hermes.builtins.default_candidates.word_forms).
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    for name in [*sorted(n for n in names if n.startswith("items_fts_scripts")), "items_fts_text"]:
        db.execute(f"DROP VIEW IF EXISTS {name}")
    for name, select in fts_script_views():
        db.execute(f"CREATE VIEW {name} AS {select}")
    for index in ("items_fts", "items_fts_words"):
        if index in names:  # not without FTS5 (m017 and m018 made no index then)
            db.execute(f"INSERT INTO {index} ({index}) VALUES ('rebuild')")


def all_migrations() -> list[Migration]:
    found = list(CORE)
    for group in get_plugin_manager().hook.hermes_migrations():
        found.extend(group or [])
    names = [m.name for m in found]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise RuntimeError(f"duplicate migration names: {sorted(dupes)}")
    return found


def pending(db: sqlite_utils.Database, migrations: list[Migration]) -> list[Migration]:
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations").fetchall()}
    return [m for m in migrations if m.name not in done]


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply pending migrations; return the names applied (empty when up to date)."""
    applied = []
    todo = pending(db, all_migrations())
    for m in todo:
        with write_transaction(db):
            # Re-check under the write lock: another process may have applied it meanwhile.
            if db.execute("SELECT 1 FROM _migrations WHERE name = ?", [m.name]).fetchone():
                continue
            m.apply(db)
            db.execute(
                "INSERT INTO _migrations (name, applied) VALUES (?, ?)",
                [m.name, now_iso()],
            )
        applied.append(m.name)
    return applied
