"""Reading form and query values: the web's own (:class:`WebValues`, one model) are checked
here, a tool's go to the tool as typed; a bad value becomes a 400 page whose message says
what to type instead, in the web's words (:func:`web_words`) whoever refused it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from .. import arguments
from ..contract import MAX_DAYS

MAX_TEXT = 5000
DEFAULT_DAYS = 7
MAX_ID = 2**63 - 1  # SQLite's largest integer: no row has a larger id
#: a feed page's items, and the most of them a page shows
PAGE_SIZE = 30
MAX_LIMIT = 200
#: the last page a feed view pages to
MAX_PAGE = 200


class WebWording(arguments.Wording):
    """The web's words: a field left empty is missing, whoever asked for it (no tool's name
    on a page)."""

    def sentence(self, problem: arguments.Problem) -> str:
        if problem.kind == "missing":
            return f"{self.name(problem.field)} is missing: give {self.expects(problem.schema)}."
        return super().sentence(problem)


def web_words(labels: dict[str, str] | None = None) -> arguments.Wording:
    """The web's words for a refusal (:class:`hermes.arguments.Wording`), a tool's or the
    web's own (:func:`read`): each parameter as the page labels its field (``labels``:
    ``{"text": "The highlighted passage"}``; a parameter not labelled keeps its name, as the
    address's query spells it), values as typed into a form (yes or no; an empty field is no
    value, not "null")."""
    return WebWording(dict(labels or {}), typed="form")


def bad(message: str, status: int = 400):
    raise HTTPException(status, message)


class Refusal(HTTPException):
    """A refusal whose page links back to the page the person came from (``back``, a path
    on this server)."""

    def __init__(self, status: int, message: str, back: str):
        super().__init__(status, message)
        self.back = back


def _blank_is_none(value):
    """A field left empty, or a query key given no value, is no value (the default)."""
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _window(value):
    return value.lower() if isinstance(value, str) else value


def _numbers(value):
    """``"3, 5,8"`` (the ids a button sends, comma-separated) as a list of the typed parts."""
    if isinstance(value, str):
        return [part for part in value.replace(" ", "").split(",") if part]
    return value


def _rating(value):
    if isinstance(value, str):
        value = value.lower()
        return {"1": "like", "true": "like", "yes": "like", "0": "dislike", "false": "dislike", "no": "dislike"}.get(
            value, value
        )
    return value


#: an id no row can exceed (SQLite binds it): a larger one is no item
Id = Annotated[int, Field(ge=1, le=2**62)]
Text = Annotated[str, Field(max_length=200)]
#: the most items one button marks at once ("Mark these read")
MAX_BATCH = 200


class WebValues(BaseModel):
    """The web's own values — what a feed view's address holds (``days``, ``read``,
    ``page``, ``limit``, ``feed``, ``tag`` …) and its buttons' fields (``item_id``,
    ``liked``, ``on``, ``item_ids``) — as one model, read as text is (``"7"`` is 7, yes / no
    a bool) and refused in the web's words, as a tool's arguments are (:func:`read`). The
    values a tool takes are not here: they go to the tool as typed (:func:`as_typed`)."""

    model_config = ConfigDict(extra="ignore")

    days: Annotated[
        Annotated[int, Field(ge=1, le=MAX_DAYS)]
        | Annotated[Literal["all"], Field(description="the whole archive")]
        | None,
        BeforeValidator(_window),
    ] = DEFAULT_DAYS
    read: bool = False
    page: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 1
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = PAGE_SIZE
    feed: Id | None = None
    tag: Text | None = None
    author: Text | None = None
    topic: Text | None = None
    below: bool = False
    item_id: Id | None = None
    liked: Annotated[Literal["like", "dislike", "none"] | None, BeforeValidator(_rating)] = None
    on: bool = True
    item_ids: Annotated[list[Id], Field(max_length=MAX_BATCH), BeforeValidator(_numbers)] = []


_FIELDS = frozenset(WebValues.model_fields)
#: how a refusal names an item a button acts on
ITEM_LABEL = {"item_id": "The item number", "item_ids": "The item numbers"}


def read(params, *keys: str, labels: dict[str, str] | None = None, required: tuple[str, ...] = ()) -> WebValues:
    """Values ``keys`` of ``params`` (a query string, a form) checked by :class:`WebValues`;
    a key left out or empty has its default, one of ``required`` is refused as missing. A
    refusal is a 400 page in the web's words (:func:`web_words`: the field as ``labels``
    names it, else as the address spells it)."""
    unknown = set(keys) - _FIELDS
    if unknown:
        raise TypeError(f"WebValues has no field {', '.join(sorted(unknown))}")
    given = {k: v for k in keys if (v := _blank_is_none(params.get(k))) is not None}
    properties = WebValues.model_json_schema().get("properties", {})
    problems = [arguments.Problem(k, "missing", schema=properties.get(k, {})) for k in required if k not in given]
    try:
        checked = WebValues.model_validate(given, strict=False)
    except ValidationError as exc:
        problems += [arguments.problem_of("", properties, error) for error in exc.errors()]
    if problems:
        bad(arguments.InvalidArguments(problems).worded(web_words(labels)))
    return checked


def path_id(request, name: str, what: str) -> int:
    """An id from the URL path (``{name:int}``); one no row can have is a 404, not a number
    SQLite cannot bind."""
    value = request.path_params[name]
    if not 1 <= value <= MAX_ID:
        bad(f"unknown {what} {str(value)[:40]}; see the list of {what}s", 404)
    return value


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
