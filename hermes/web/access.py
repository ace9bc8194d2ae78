"""How the pages reach hermes: the database per request, personas and items (core), the
collected tools (plugins, possibly disabled), and the ranking with its reasons."""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager

from starlette.exceptions import HTTPException
from starlette.requests import Request

from ..contract import CandidateQuery
from ..errors import HermesError, NotFound
from ..ranking.explain import explain_ranked
from ..ranking.rank import rank
from ..records import item_rows, require_item, require_user
from ..storage.db import get_db
from ..tools import call_tool, collect_tools
from .forms import bad, parse_int

log = logging.getLogger(__name__)


def request_db(request):
    """Open the app's database for one request (close it when done)."""
    return get_db(request.app.state.db_path)


@contextmanager
def opened(request: Request):
    db = request_db(request)
    try:
        yield db
    finally:
        db.conn.close()


def require_persona(db, name) -> dict:
    if not name:
        bad("choose a persona first (the user parameter is missing)")
    try:
        return require_user(db, str(name))
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except HermesError as exc:
        bad(str(exc))


def require_item_id(db, value) -> int:
    item_id = parse_int(value, "item_id", 1, 2**62)
    try:
        require_item(db, item_id)
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    return item_id


class Tools:
    """The collected tools, called with only the arguments each one accepts."""
    def __init__(self):
        try:
            self.tools = collect_tools()
        except Exception:  # a broken plugin must not take the UI down with it
            self.tools = {}

    def has(self, name: str) -> bool:
        return name in self.tools

    def missing(self, group: str, name: str) -> str:
        """The notice when tool ``name`` of ``group`` (its :attr:`Tool.group`, named where the
        page uses it: a tool that is not loaded cannot say which group it belongs to) is
        missing."""
        return (f"The {group} tools are not available (the {group!r} plugin is disabled or "
                f"not installed), so {name} cannot run here.")

    def call(self, db, name: str, /, **arguments) -> dict | None:
        """The tool's result, or ``None`` when no plugin provides it."""
        tool = self.tools.get(name)
        if tool is None:
            return None
        accepted = {p.name for p in tool.arguments()}
        return call_tool(db, tool, {k: v for k, v in arguments.items() if k in accepted}, face="web")

    def require(self, db, group: str, name: str, /, **arguments) -> dict:
        """For actions: 503 when the tool is missing, 400 with its message when it refuses,
        500 when it failed on the server's side (a full disk, a bug: ``server_error``)."""
        result = self.call(db, name, **arguments)
        if result is None:
            bad(self.missing(group, name), 503)
        if not result.get("ok"):
            bad(result.get("message") or f"{name} failed", 500 if result.get("server_error") else 400)
        return result


def item_ids_of(result: dict | None, key: str = "items") -> list[int]:
    out = []
    for entry in (result or {}).get(key) or []:
        value = entry.get("item_id", entry.get("id")) if isinstance(entry, dict) else entry
        if isinstance(value, int):
            out.append(value)
    return out


#: How a ranking component reads in the fallback reason (when explaining the item failed).
COMPONENT_PHRASES = {
    "profile": "close to the interests text",
    "preference": "tags, authors or sources liked before",
    "classifier": "resembles liked items",
}
_LONG_REASON = re.compile(r"^Ranks \d+ of \d+: it (?P<why>.+?)\.(?: \((?P<learned>[^()]*)\))?$", re.S)


def short_reason(reason: str) -> str:
    """The explanation's sentence without what the page already shows (the rank, and how much
    clicks weigh): ``Ranks 3 of 120: it matches …; has tags you like (…). (…)`` ->
    ``Matches …; has tags you like (…)``. Any other wording is kept whole."""
    found = _LONG_REASON.match(reason.strip())
    if not found:
        return reason.strip()
    why = found.group("why").strip()
    return why[:1].upper() + why[1:]


def fallback_reason(ranking, position: int) -> str:
    """The components that pushed the item up, when no explanation is available."""
    helping = sorted(
        ((float(values[position]), name) for name, values in ranking.contributions.items()
         if float(values[position]) > 0.005
         and (name not in ranking.components or ranking.components[name].active)),
        key=lambda vn: (-vn[0], vn[1]))
    if not helping:
        return "No signal favours it strongly; one of the best-ranked unread items"
    text = "; ".join(f"{COMPONENT_PHRASES.get(n, n)} ({v:+.2f})" for v, n in helping[:2])
    return text[:1].upper() + text[1:]


def feed_reason(db, user: dict, ranking, position: int, pool: str) -> str:
    """The one-line reason of a feed line: the only place the web turns a ranking into words
    (the feed, the search and the Atom feed all call it), so a structured explanation can
    replace it here."""
    try:
        reason = explain_ranked(db, user, ranking, position, pool).get("reason")
    except Exception:  # an explanation bug must not take the feed down
        log.exception("explaining item %s for %s failed", ranking.item_ids[position], user["name"])
        reason = None
    return short_reason(reason) if reason else fallback_reason(ranking, position)


def ranked_items(db, user: dict, query: CandidateQuery, *, limit: int, offset: int = 0,
                 pool: str) -> tuple[list[dict], object]:
    """Items ``offset`` … ``offset + limit`` of the persona's ranking for ``query``, each
    with its reason (``pool`` says what was ranked, e.g. "unread items of the last 7 days").

    One ranking for the page (the one ranking path), and every shown row explained from it:
    no re-ranking per item, nothing written by a GET."""
    ranking = rank(db, user, query, limit=offset + limit)
    rows = item_rows(db, ranking.item_ids[offset:offset + limit])
    items = []
    for position in range(offset, min(offset + limit, len(ranking.item_ids))):
        item_id = int(ranking.item_ids[position])
        if item_id not in rows:  # deleted since the matrix was loaded
            continue
        item = dict(rows[item_id])
        item["rank"] = position + 1
        item["score"] = float(ranking.scores[position])
        item["reason"] = feed_reason(db, user, ranking, position, pool)
        items.append(item)
    return items, ranking


def corpus_status(db, tools: Tools, user: dict) -> dict:
    """Which items the persona has read/captured (experienced) or saved, for the badges."""
    if not tools.has("corpus_items"):
        return {"available": False, "note": tools.missing("corpus", "corpus_items"),
                "experienced": set(), "saved": set(), "favorited": set(), "highlights": {}}
    experienced = tools.call(db, "corpus_items", user=user["name"], facet="experienced", limit=500)
    saved = tools.call(db, "corpus_items", user=user["name"], facet="saved", limit=500)
    ranked = tools.call(db, "corpus_ranked", user=user["name"], limit=200)
    favorited = set(item_ids_of(saved))
    highlights = {}
    for entry in (ranked or {}).get("items") or []:
        if not isinstance(entry, dict):
            continue
        item_id = entry.get("item_id", entry.get("id"))
        if entry.get("favorited"):
            favorited.add(item_id)
        if entry.get("highlights"):
            highlights[item_id] = entry["highlights"]
    return {"available": True, "note": None, "experienced": set(item_ids_of(experienced)),
            "saved": set(item_ids_of(saved)), "favorited": favorited, "highlights": highlights,
            "can_read": tools.has("record_progress"), "can_favorite": tools.has("favorite"),
            "can_highlight": tools.has("add_highlight")}
