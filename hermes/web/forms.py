"""Reading form and query values: anything a person can type is checked here, and a bad
value becomes a 400 page whose message says what to type instead."""

from __future__ import annotations

from starlette.exceptions import HTTPException

from ..arguments import Wording
from ..contract import MAX_DAYS

MAX_TEXT = 5000
DEFAULT_DAYS = 7
MAX_ID = 2**63 - 1  # SQLite's largest integer: no row has a larger id


def web_words(labels: dict[str, str] | None = None):
    """The web's words for a refusal (:class:`hermes.arguments.Wording`): each parameter as
    the page labels its field (``labels``: ``{"text": "The highlighted passage"}``; a
    parameter not labelled keeps its name, as the address's query spells it), values as typed
    into a form (yes or no; an empty field is no value, not "null")."""
    return Wording(dict(labels or {}), typed="form")


def bad(message: str, status: int = 400):
    raise HTTPException(status, message)


class Refusal(HTTPException):
    """A refusal whose page links back to the page the person came from (``back``, a path
    on this server)."""

    def __init__(self, status: int, message: str, back: str):
        super().__init__(status, message)
        self.back = back


def parse_int(value, what: str, lo: int, hi: int, *, more: str = "") -> int:
    """``value`` as a whole number from ``lo`` to ``hi``; ``more`` completes the message
    for a value that is no number (``"of days or 'all' (the whole archive)"``)."""
    if value is None or not str(value).strip():
        bad(f"{what} is missing: none was given (the links and buttons of hermes's pages fill it in)")
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        bad(f"{what} must be a whole number{' ' + more if more else ''}, got {str(value)[:40]!r}")
    if not lo <= number <= hi:
        bad(f"{what} must be between {lo} and {hi}, got {number}")
    return number


def path_id(request, name: str, what: str) -> int:
    """An id from the URL path (``{name:int}``); one no row can have is a 404, not a number
    SQLite cannot bind."""
    value = request.path_params[name]
    if not 1 <= value <= MAX_ID:
        bad(f"unknown {what} {str(value)[:40]}; see the list of {what}s", 404)
    return value


def parse_bool(value, what: str) -> bool:
    text = str(value).strip().lower() if value is not None else ""
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    bad(f"{what} must be yes or no, got {text[:40]!r}")


def parse_days(value) -> float | None:
    """``days`` query value: a number of days, or ``all`` for the whole archive."""
    if value in (None, ""):
        return DEFAULT_DAYS
    if str(value).strip().lower() == "all":
        return None
    return parse_int(value, "days", 1, MAX_DAYS, more="of days or 'all' (the whole archive)")


def parse_text(value, what: str, *, required: bool, maximum: int = MAX_TEXT) -> str:
    text = (value or "").strip() if isinstance(value, str) else ""
    if required and not text:
        bad(f"{what} is empty; write something first")
    if len(text) > maximum:
        bad(f"{what} is too long ({len(text)} characters; at most {maximum})")
    return text


def as_typed(form, key: str) -> str:
    """What was typed into field ``key``, stripped (``""`` when nothing was): the value a form
    hands to a tool as is, for the tool's own model to check."""
    value = form.get(key)
    return value.strip() if isinstance(value, str) else ""


def local_path(value, default: str) -> str:
    """A redirect target on this server only (no open redirect to another site)."""
    if (
        isinstance(value, str)
        and value.startswith("/")
        and not value.startswith("//")
        and "\\" not in value
        and not any(ord(c) < 32 for c in value)
    ):
        return value
    return default
