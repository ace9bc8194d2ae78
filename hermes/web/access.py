"""How the pages reach hermes: the database per request, personas and items (core), the
collected tools (plugins, possibly disabled), and the ranking with its reasons."""

from __future__ import annotations

from contextlib import contextmanager

from starlette.exceptions import HTTPException
from starlette.requests import Request

from hermes.storage.records import require_item, require_user

from .. import arguments
from ..contract import CandidateQuery
from ..errors import HermesError, NotFound
from ..facekit.web import request_db
from ..ranking.page import ranked_page
from ..tools import call_tool, collect_tools
from .forms import ITEM_LABEL, Refusal, bad, read, web_words
from .render import PERSONA_COOKIE


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


def visitor(request: Request, db) -> dict | None:
    """The persona whose navigation a page that is nobody's carries (the Feeds pages): the
    one its address names (``?user=``), else the one this browser used last (its cookie),
    else None. An unknown name or id (a persona renamed or deleted since) is no error: the
    page shows without it, with the persona list's navigation."""
    name, kept = request.query_params.get("user"), request.cookies.get(PERSONA_COOKIE, "")
    for key in (name or None, int(kept) if kept.isdigit() else None):
        if key is None:
            continue
        try:
            return require_user(db, key)
        except HermesError:
            continue
    return None


def require_item_id(db, value, back: str | None = None) -> int:
    """The item ``value`` names, or a 404 page linking ``back`` (the feed the person came
    from: the message tells them to go back to it for the current items)."""
    item_id = read({"item_id": value}, "item_id", labels=ITEM_LABEL, required=("item_id",)).item_id
    try:
        require_item(db, item_id)
    except NotFound as exc:
        if back:
            raise Refusal(404, str(exc), back) from None
        raise HTTPException(404, str(exc)) from None
    return item_id


class Tools:
    """The collected tools, each called through the one call path
    (:func:`hermes.tools.call_tool`, worded for the web). A form's values go to the tool as
    typed (:func:`hermes.arguments.typed_as_text`): its model reads ``"7"`` as 7 and refuses
    what it cannot read, in its words, naming the field as the page labels it (``labels``:
    ``{"text": "The highlighted passage"}``) — the web has no second check of its own."""

    def __init__(self):
        try:
            self.tools = collect_tools()
        except Exception:  # a broken plugin must not take the UI down with it
            self.tools = {}

    def has(self, name: str) -> bool:
        return name in self.tools

    def text_limit(self, name: str, argument: str, default: int) -> int:
        """The longest text tool ``name`` accepts for ``argument`` (its schema's
        ``maxLength``), so a form's limit is the tool's, not a second number."""
        tool = self.tools.get(name)
        try:
            return int(tool.input_schema()["properties"][argument]["maxLength"])
        except (AttributeError, KeyError, TypeError, ValueError):
            return default

    def missing(self, group: str, name: str) -> str:
        """The notice when tool ``name`` of ``group`` (its :attr:`Tool.group`, named where the
        page uses it: a tool that is not loaded cannot say which group it belongs to) is
        missing."""
        return (
            f"The {group} tools are not available (the {group!r} plugin is disabled or "
            f"not installed), so {name} cannot run here."
        )

    def call(self, db, name: str, /, labels: dict[str, str] | None = None, **values) -> dict | None:
        """The tool's result, or ``None`` when no plugin provides it. An argument the tool does
        not take is refused like any other mistake, naming it (``ok: false``), not dropped."""
        tool = self.tools.get(name)
        if tool is None:
            return None
        with arguments.typed_as_text(), arguments.worded(web_words(labels)):
            return call_tool(db, tool, values, face="web")

    def read(self, name: str, /, labels: dict[str, str] | None = None, **values) -> dict | None:
        """``values`` as tool ``name``'s own model reads them (typed as text: ``"7"`` is 7),
        defaults filled in — for a page that shows what it asked the tool; ``None`` when no
        plugin provides the tool. A refusal is a 400 page in the model's words."""
        tool = self.tools.get(name)
        if tool is None:
            return None
        with arguments.typed_as_text(), arguments.worded(web_words(labels)):
            try:
                return arguments.validate(name, tool.argument_model, values)
            except arguments.InvalidArguments as exc:
                bad(str(exc))

    def require(self, db, group: str, name: str, /, labels: dict[str, str] | None = None, **values) -> dict:
        """For actions: 503 when the tool is missing, 400 with its message when it refuses,
        500 when it failed on the server's side (a full disk, a bug: ``server_error``)."""
        result = self.call(db, name, labels, **values)
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


def ranked_items(
    db, user: dict, query: CandidateQuery, *, limit: int, offset: int = 0, pool: str, below_bar: bool = False
) -> tuple[list[dict], object]:
    """Items ``offset`` … ``offset + limit`` of the persona's ranking for ``query`` — the
    items that clear its bar first, as every feed face orders them — each with its match and
    reason from the one explanation (``pool`` says what was ranked, e.g. "unread items of
    the last 7 days"). Items below the bar are left out unless ``below_bar``.

    One ranking for the page (:func:`hermes.ranking.page.ranked_page`, as every feed face),
    and every shown row explained from it: no re-ranking per item, nothing written by a GET."""
    ranking, shown = ranked_page(db, user, query, limit=limit, offset=offset, below_bar=below_bar, pool=pool)
    items = [
        {
            **s.row,
            "rank": s.position + 1,
            "score": float(ranking.scores[s.position]),
            "match": s.why["match"],
            "reason": s.why["reason"],
            "above_bar": s.why["above_bar"],
        }
        for s in shown
    ]
    return items, ranking


def corpus_status(db, tools: Tools, user: dict) -> dict:
    """Which items the persona has read/captured (experienced) or saved, for the badges."""
    if not tools.has("corpus_items"):
        return {
            "available": False,
            "note": tools.missing("corpus", "corpus_items"),
            "experienced": set(),
            "saved": set(),
            "favorited": set(),
            "highlights": {},
        }
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
    return {
        "available": True,
        "note": None,
        "experienced": set(item_ids_of(experienced)),
        "saved": set(item_ids_of(saved)),
        "favorited": favorited,
        "highlights": highlights,
        "can_read": tools.has("record_progress"),
        "can_favorite": tools.has("favorite"),
        "can_highlight": tools.has("add_highlight"),
    }
