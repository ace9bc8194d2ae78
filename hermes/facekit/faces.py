"""Which face a message is shown in, and how each face names what its reader can do.

The same tool functions answer an agent over MCP, a person at the terminal (the CLI) and a
person in the browser (the web UI). Their messages end in advice ("add a feed", "widen the
window", "confirm to delete"), and that advice must name what the reader can actually do:
a tool and its parameters, a command and its options, a button or page.

The mechanism is one context variable, the *face*, set where a call enters hermes
(:func:`hermes.tools.call_tool` for MCP and the web, the CLI's root command for the CLI),
and :class:`Say`: one piece of advice in each face's words, whose text is picked when the
message is formatted. A tool writes ``f"... {ADD_FEED} ..."`` once, and each face reads its
own words. The face also decides the source recorded on a signal: ``agent`` for MCP, ``ui``
for a person (CLI or web).
"""

from __future__ import annotations

import contextvars
import functools
import re
import shlex
from contextlib import contextmanager
from dataclasses import dataclass

from hermes.clock import as_precise

FACES = ("mcp", "cli", "web")
#: The signal source each face records (``clicks.source``, corpus signals).
SOURCES = {"mcp": "agent", "cli": "ui", "web": "ui"}

_FACE: contextvars.ContextVar[str] = contextvars.ContextVar("hermes_face", default="mcp")
#: The tools the MCP server in progress does not serve (``hermes serve --tools persona`` serves
#: no record_feedback): advice naming one is given in the CLI's words (:meth:`Say.__str__`).
_UNSERVED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("hermes_unserved", default=frozenset())


def face() -> str:
    """The face of the call in progress: ``mcp`` (the default), ``cli`` or ``web``."""
    return _FACE.get()


def source() -> str:
    """The signal source of the call in progress (``agent`` or ``ui``)."""
    return SOURCES[_FACE.get()]


def enter(name: str) -> contextvars.Token:
    """Switch to face ``name``; pass the token to :func:`leave` to switch back."""
    if name not in FACES:
        raise ValueError(f"unknown face {name!r}; expected one of {', '.join(FACES)}")
    return _FACE.set(name)


def leave(token: contextvars.Token) -> None:
    _FACE.reset(token)


@contextmanager
def serving_without(tools: frozenset[str]):
    """Run a block of an MCP server that does not serve ``tools`` (its ``--tools`` left their
    groups out): a :class:`Say` whose MCP words name one of them says its CLI words instead,
    so an agent is never sent to a tool it cannot call, and can tell the person the command."""
    token = _UNSERVED.set(frozenset(tools))
    try:
        yield
    finally:
        _UNSERVED.reset(token)


@functools.lru_cache(maxsize=8)
def _naming(tools: frozenset[str]) -> re.Pattern[str]:
    # a tool's name as a word: not part of a longer name (list_feed in list_feeds), nor of a
    # command in backticks (`hermes digest`) or a --flag
    names = "|".join(re.escape(t) for t in sorted(tools, key=len, reverse=True))
    return re.compile(rf"(?<![\w`-])(?:{names})(?![\w-])")


def names_unserved(text: str) -> bool:
    """Whether ``text`` names a tool the server in progress does not serve."""
    unserved = _UNSERVED.get()
    return bool(unserved) and _naming(unserved).search(text) is not None


@contextmanager
def speaking(name: str | None):
    """Run a block in face ``name`` (``None`` keeps the current one)."""
    if name is None:
        yield
        return
    token = enter(name)
    try:
        yield
    finally:
        leave(token)


@dataclass(frozen=True)
class Say:
    """One piece of advice in the words of each face; ``str()`` / an f-string gives the
    current face's words.

    ``cli`` names commands and options (in backticks, as typed), ``mcp`` tools and
    parameters, ``web`` buttons and pages. Keep each a phrase that fits mid-sentence. Over
    MCP, words that name a tool the server does not serve give way to the CLI's (the command
    the person can run, :func:`serving_without`): the one place that rule lives.
    """

    mcp: str
    cli: str
    web: str

    def __str__(self) -> str:
        face = _FACE.get()
        if face == "mcp" and names_unserved(self.mcp):
            return self.cli
        return getattr(self, face)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def naming(self, user: str) -> str:
        """The current face's words with the placeholder ``USER`` written as the persona's
        name is typed: advice about a known persona names it (`hermes like ann ITEM`)."""
        return str(self).replace("USER", typed(user))

    def sentence(self, user: str | None = None) -> str:
        """The current face's words starting with a capital, to open a sentence — unless
        they open with a name the reader types (``list_feed``, `` `hermes feed` ``), which
        keeps its spelling; ``user`` names the persona (:meth:`naming`)."""
        text = str(self) if user is None else self.naming(user)
        first = text.split(" ", 1)[0]
        if "_" in first or "`" in first or first == "hermes":
            return text
        return text[:1].upper() + text[1:]


def typed(word: str) -> str:
    """``word`` as a person types it into a shell: ``ann`` as is, ``'Ann Lee'`` quoted."""
    return shlex.quote(str(word))


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``"1 item"``, ``"2 items"`` (``many`` for irregular plurals)."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def n_days(count: float) -> str:
    """``"1 day"``, ``"7 days"``, ``"0.5 days"``: a window's length."""
    return f"{count:g} {'day' if count == 1 else 'days'}"


def date_words(item: dict) -> str:
    """An item's date as a line shows it: "2026-11-30", "first seen 2026-12-01" (an estimate:
    the feed gave none), "1998" (a library entry's year alone), or "date unknown"."""
    day = (as_precise(item.get("published"), item.get("date_source")) or "")[:10]
    if not day:
        return "date unknown"
    return f"first seen {day}" if item.get("date_source") == "first seen" else day


def shown_of(total: int, shown: int, noun: str = "item") -> str:
    """``"12 items, 2 shown"`` when a list shows fewer than it holds, else ``"2 items"``."""
    return plural(total, noun) + (f", {shown} shown" if shown < total else "")


# Advice every face needs, owned by the core (plugins define their own next to their tools).
CREATE_PERSONA = Say(
    mcp="create one with create_persona(name, interests)",
    cli="create one with `hermes persona create NAME --interests TEXT`",
    web="create one with Create persona on the Personas page",
)
FIND_ITEMS = Say(
    mcp="list_feed or search_feed give item ids",
    cli="`hermes feed USER` and `hermes persona search USER WORDS` print item ids",
    web="go back to the feed for the current items",
)
# How new items arrive, said by every "nothing yet" message: INGEST where nothing in this
# process fetches the feeds, REFRESHED where it does (the background refresh of `hermes
# serve`, which an agent was told to wait for `hermes ingest` under). The one place that
# picks: hermes.ingest.refresher.new_items (and .embedding for EMBED_*).
INGEST = Say(
    mcp="new items arrive with the next `hermes ingest` (run by the person or a schedule)",
    cli="run `hermes ingest` for new items",
    web="new items arrive with the next refresh",
)
REFRESHED = Say(
    mcp="this server fetches its feeds itself, so new items arrive with its next refresh "
    "(list_feeds shows when each feed was last fetched)",
    cli=INGEST.cli,
    web=INGEST.web,
)
EMBED_PENDING = Say(
    mcp="the next `hermes ingest` (run by the person or a schedule) embeds them",
    cli="run `hermes ingest` to embed them",
    web="the next refresh embeds them (or press Refresh now)",
)
EMBED_REFRESHED = Say(
    mcp="this server's next refresh embeds them (list_feeds shows when it is due)",
    cli=EMBED_PENDING.cli,
    web=EMBED_PENDING.web,
)
# The fold under a persona's bar (hermes.ranking.match), in every face that ranks.
SHOW_BELOW = Say(mcp="below_bar=true lists them", cli="--below-bar lists them", web="show them below the fold")
SHOW_CLOSEST = Say(
    mcp="below_bar=true lists the closest anyway",
    cli="--below-bar lists the closest anyway",
    web="Show opens the closest anyway",
)
# where the click classifier holds the good matches below the bar (an empty bar's advice)
RATE_HELD = Say(
    mcp="rating a few of them (record_feedback) decides them",
    cli="rating a few of them (`hermes like USER ITEM`, `hermes dislike USER ITEM`) decides them",
    web="✓ or ✗ on a few of them decides them",
)
