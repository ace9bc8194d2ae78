"""Tool arguments checked once, strictly, from the tool function's own type hints.

A tool's parameters after ``db`` are ``Annotated[type, Field(...)]`` hints; :func:`model_for`
turns them into a pydantic model in strict mode (a bool is not a number, the string
``"true"`` is not a bool, no parameter the tool does not declare), and the same model gives
the JSON schema an MCP client sees, so the CLI, the web UI and MCP get exactly the same
checks. One leniency: a whole number sent as a float (``3.0``) is accepted where an integer
is expected, because some clients send every number as a float.

A refusal is one sentence per bad parameter, naming it and saying what it accepts (read from
the schema the client was shown), with at most a short excerpt of the bad value: never
pydantic's own text, never a 10 MB string echoed back. Each problem is kept as a
:class:`Problem` (the parameter it is about, what is wrong), and the face in progress writes
it (:class:`Wording`, set with :func:`worded`): the parameter as the caller knows it (its own
name over MCP, the command's ``--facet`` or ``TEXT`` on the CLI, the form's label on the web)
and the value as the caller types it (JSON's ``null`` is no word at a shell or in a form).
The refusal's envelope lists the problems (``errors: [{"field", "problem"}]``,
:func:`hermes.contract.failure`), each ``field`` the tool's own parameter name.

A web form sends text: within :func:`typed_as_text` (the web face's calls) the same model
reads ``"7"`` as 7 and ``"yes"`` as true (pydantic's lax mode), so a form passes what was
typed and the tool's model, not the face, says what is wrong with it.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, create_model
from pydantic.json_schema import GenerateJsonSchema

from .errors import InvalidInput

#: how much of a bad value a refusal quotes
EXCERPT_CHARS = 40

#: Whether the arguments in progress are text typed into a form (:func:`typed_as_text`).
_AS_TEXT: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_as_text", default=False)


@contextmanager
def typed_as_text():
    """Within the block, an argument may be the text a person typed for it (a web form's
    field, a query string's value): a whole number ``"7"`` is read as 7, ``"yes"`` / ``"no"``
    as a bool; anything else is refused in the model's words, as any bad value is, a value
    said as one is typed into a form (yes or no, no ``null``: a JSON route's query string
    too) unless a face's :func:`worded` inside says more."""
    token = _AS_TEXT.set(True)
    typed = _WORDING.set(Wording(_WORDING.get().names, typed="form"))
    try:
        yield
    finally:
        _WORDING.reset(typed)
        _AS_TEXT.reset(token)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a call, about one parameter: ``missing``, ``unknown`` (a parameter
    the tool does not take), ``invalid`` (a value its schema does not accept) or ``refused``
    (the tool's own refusal of a value it took: ``says`` is what it says after the
    parameter and its value)."""

    field: str
    kind: str
    tool: str = ""
    #: the schema property the client was shown (missing, invalid)
    schema: dict = field(default_factory=dict, compare=False)
    #: the value given (quoted as an :func:`excerpt`); None: not quoted
    got: Any = None
    given: bool = False
    says: str = ""
    #: unknown: the parameters the tool takes
    known: tuple[str, ...] = ()


@dataclass(frozen=True)
class Wording:
    """How a face writes a :class:`Problem`: its name for each parameter (``names``, the tool's
    own name where it has none) and how its callers type a value (``typed``: ``json`` over
    MCP, ``shell`` at the CLI, ``form`` on the web)."""

    names: Mapping[str, str] = field(default_factory=dict)
    typed: str = "json"

    def name(self, parameter: str) -> str:
        return self.names.get(parameter, parameter)

    def value(self, parameter: str, value) -> str:
        """Parameter ``parameter`` given ``value``, as its caller would write it."""
        if self.typed == "json":
            return f"{parameter}={excerpt(value)}"
        return f"{self.name(parameter)} {excerpt(value)}"

    def expects(self, prop: dict) -> str:
        return expects(prop, typed=self.typed)

    def sentence(self, problem: Problem) -> str:
        """The problem in this face's words: one sentence."""
        where, tool = problem.field, problem.tool
        if problem.kind == "missing":
            return f"{tool} needs {self.name(where)}: {self.expects(problem.schema)}."
        if problem.kind == "unknown":
            known = ", ".join(self.name(k) for k in problem.known) or "none"
            return f"{tool} has no parameter {excerpt(str(where))}; its parameters are: {known}."
        if problem.kind == "refused":
            named = self.value(where, problem.got) if problem.given else self.name(where)
            return f"{named} {problem.says}"
        got = problem.got
        # a list too long to quote is said by its length (its excerpt would end mid-list)
        shown = (
            f"a list of {len(got):,}" if isinstance(got, list) and len(excerpt(got)) > EXCERPT_CHARS else excerpt(got)
        )
        return f"{self.name(where)} must be {self.expects(problem.schema)}, got {shown}."


#: MCP's words: the tool's own parameter names, values in JSON
MCP_WORDING = Wording()
#: The face in progress's words for a refusal (:func:`worded`).
_WORDING: contextvars.ContextVar[Wording] = contextvars.ContextVar("hermes_wording", default=MCP_WORDING)


@contextmanager
def worded(wording: Wording):
    """Within the block, a refusal is written in ``wording`` (the CLI passes its command's
    options and arguments, the web its form's labels, so a person reads what they typed)."""
    token = _WORDING.set(wording)
    try:
        yield
    finally:
        _WORDING.reset(token)


def wording() -> Wording:
    return _WORDING.get()


def spelled(parameter: str) -> str:
    """Tool parameter ``parameter`` as the caller knows it (``--interests`` on the CLI), for
    a refusal a tool writes itself (:func:`refuse` says which parameter the refusal is about)."""
    return _WORDING.get().name(parameter)


class _Persona:
    """The mark of a parameter that names a persona (``Annotated[str, Field(...), PERSONA]``,
    :data:`hermes.tools.User`): whatever the tool calls it (``name`` in the persona tools,
    after the seed), a caller may also call it ``user``, as every other tool does."""

    def __repr__(self) -> str:
        return "PERSONA"


PERSONA = _Persona()
#: the other name a persona parameter answers to
PERSONA_ALIAS = "user"


class InvalidArguments(InvalidInput):
    """Arguments that do not match the tool's declared parameters, or a value the tool
    refused (:func:`refuse`): its :attr:`problems`, written in the face's words in effect
    where it was raised; :meth:`worded` writes them in another face's."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__(self.worded(_WORDING.get()))

    def worded(self, wording: Wording) -> str:
        return " ".join(dict.fromkeys(wording.sentence(p) for p in self.problems))

    def errors(self, wording: Wording | None = None) -> list[dict]:
        """The problems for the envelope: ``[{"field": parameter, "problem": sentence}]``."""
        wording = wording or _WORDING.get()
        # a value can break several checks that word the same sentence (a string id: its
        # type, then its range): each field's problem once, as :meth:`worded` says it once
        found = {(p.field, wording.sentence(p)): None for p in self.problems}
        return [{"field": field, "problem": sentence} for field, sentence in found]


def refuse(parameter: str, says: str, *, got: Any = None, given: bool = False) -> InvalidArguments:
    """A tool's own refusal of parameter ``parameter``: ``raise refuse("content_type", "…")``.
    ``says`` follows the parameter as the face names it (with its value ``got``, written as
    the caller types it, when ``given``): ``refuse("since", "is beyond …", got=99,
    given=True)`` reads ``since=99 is beyond …`` over MCP and ``--since 99 is beyond …`` at the
    CLI."""
    return InvalidArguments([Problem(parameter, "refused", got=got, given=given, says=says)])


#: How a file's path starts: the root, the home folder (``~``), a drive (``C:\\``) or a
#: ``file://`` URL (:func:`local_path`)
_PATH_START = r"(?:/|~|[A-Za-z]:[\\/]|file://)"
#: A file's path and nothing else, ending in a file extension (``.txt``, ``.bib``).
_FILE_PATH = re.compile(_PATH_START + r"\S.*\.[A-Za-z][A-Za-z0-9]{0,4}")
#: a path may hold a space or two ("My Library.bib"); more words are prose
_PATH_WORDS = 3


def local_path(text: str) -> bool:
    """Whether ``text`` starts as a path on this machine does (or as a relative one, ``./``)."""
    text = text.strip()
    return text.startswith(".") or re.match(_PATH_START, text) is not None


def refuse_file_path(parameter: str, value: str) -> None:
    """Refuse text parameter ``parameter`` given only a file's path (one line, a path's start,
    a file extension at the end): hermes never reads a file an agent names, so the path
    would be taken as the text itself (a persona whose interests are a path matches
    nothing; a library of one path is no library). A person at the CLI hands hermes the
    text in the command's own way (``hermes persona import NAME FILE`` reads the file)."""
    text = value.strip()
    if "\n" in text or len(text) > 1000 or len(text.split()) > _PATH_WORDS or not _FILE_PATH.fullmatch(text):
        return
    says = (
        "is a file's path, not its text: hermes never reads files for an agent; pass the file's contents instead"
        if _WORDING.get().typed == "json"
        else "is a file's path, not its text; pass the text itself"
    )
    raise refuse(parameter, says, got=text, given=True)


class CompactSchema(GenerateJsonSchema):
    """JSON schema without the ``title`` pydantic derives from every name: the name is
    already the property's key, and ``tools/list`` is read by a model with a context budget."""

    def field_title_should_be_set(self, schema) -> bool:
        return False

    def generate(self, schema, mode="validation"):
        out = super().generate(schema, mode=mode)
        out.pop("title", None)
        for definition in out.get("$defs", {}).values():
            definition.pop("title", None)
        return out


def compact_output(schema):
    """An output schema in fewer characters with the same meaning: no defaults (every key is
    always present in a result) and ``{"type": "object"}`` for a free-form object. An
    optional value stays ``anyOf [T, null]``: the shorter ``{"type": [T, "null"]}`` is valid
    JSON Schema, but the MCP Inspector's ``--strict`` warns on each one, and some hosts'
    schema readers do not take a list of types."""
    if isinstance(schema, list):
        return [compact_output(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_output(v) for k, v in schema.items() if k != "default"}
    if out.get("additionalProperties") is True:
        del out["additionalProperties"]
    return out


def _whole_float_to_int(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _is_int(annotation) -> bool:
    """``int`` or ``int | None`` (not ``bool``, which is a subclass of int)."""
    if annotation is int:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(a is int for a in typing.get_args(annotation))
    return False


def model_for(fn: Callable, name: str) -> type[BaseModel]:
    """The strict argument model of tool function ``fn`` (every parameter after ``db``)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    personas = []
    for param in list(inspect.signature(fn).parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *args / **kwargs cannot be described to a client")
        hint = hints.get(param.name, Any)
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint
        if typing.get_origin(hint) is Annotated and PERSONA in typing.get_args(hint)[1:]:
            personas.append(param.name)
        if _is_int(base):
            hint = Annotated[hint, BeforeValidator(_whole_float_to_int)]
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hint, default)
    model = create_model(
        f"{name}_arguments", __config__=ConfigDict(strict=True, extra="forbid", defer_build=True), **fields
    )
    # One persona parameter not called ``user`` answers to it too (see _Persona); with two,
    # which one ``user`` meant could not be told.
    model.__hermes_alias__ = (
        {PERSONA_ALIAS: personas[0]}
        if len(personas) == 1 and personas[0] != PERSONA_ALIAS and PERSONA_ALIAS not in fields
        else {}
    )
    return model


def json_schema(model: type[BaseModel]) -> dict:
    return model.model_json_schema(schema_generator=CompactSchema)


def validate(tool_name: str, model: type[BaseModel], arguments: dict) -> dict:
    """``arguments`` checked against ``model`` (defaults filled in), or :class:`InvalidArguments`
    with one fix-it sentence per bad parameter."""
    arguments = _aliased(model, arguments)
    try:
        checked = model.model_validate(arguments, strict=False if _AS_TEXT.get() else None)
    except ValidationError as exc:
        properties = json_schema(model).get("properties", {})
        raise InvalidArguments([problem_of(tool_name, properties, error) for error in exc.errors()]) from None
    return {name: getattr(checked, name) for name in type(checked).model_fields}


def _aliased(model: type[BaseModel], arguments: dict) -> dict:
    """``arguments`` with an alias renamed to the parameter it stands for, unless the
    parameter is given too (then the alias is refused as an unknown parameter)."""
    aliases = getattr(model, "__hermes_alias__", {})
    if not isinstance(arguments, dict) or not any(a in arguments for a in aliases):
        return arguments
    out = dict(arguments)
    for alias, param in aliases.items():
        if alias in out and param not in out:
            out[param] = out.pop(alias)
    return out


def excerpt(value) -> str:
    """A bad value as the caller sent it, cut to :data:`EXCERPT_CHARS` characters."""
    if isinstance(value, str):
        if len(value) <= EXCERPT_CHARS:
            return json.dumps(value)
        return f'{json.dumps(value[:EXCERPT_CHARS])[:-1]}…" ({len(value):,} characters)'
    try:
        text = json.dumps(value, default=repr)
    except ValueError:  # a circular structure from a Python caller
        text = type(value).__name__
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def problem_of(tool_name: str, properties: dict, error: dict) -> Problem:
    """The :class:`Problem` of one of pydantic's errors, read against the schema's ``properties``."""
    where = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "missing":
        return Problem(where, "missing", tool_name, properties.get(where, {}))
    if error["type"] == "extra_forbidden":
        return Problem(where, "unknown", tool_name, known=tuple(properties))
    return Problem(where, "invalid", tool_name, properties.get(where, {}), got=error["input"], given=True)


#: a maximum this large guards storage (an id SQLite can bind), not a value anyone types: a
#: refusal does not quote it ("a whole number from 1 to 4611686018427387904", a trial read)
UNTYPED_BOUND = 2**53


def expects(prop: dict, typed: str = "json") -> str:
    """What a schema property accepts, in words: ``a whole number from 1 to 100``, for a
    value ``typed`` in JSON (MCP), at a ``shell`` or into a ``form``."""
    options = prop.get("anyOf")
    if options:
        words = [expects(o, typed) for o in options if o.get("type") != "null"]
        # null is no word a person types: an option left out, a form's field left empty
        nullable = len(words) < len(options) and typed == "json"
        return " or ".join(words + (["null"] if nullable else []))
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        meaning = prop.get("description")
        return json.dumps(prop["const"]) + (f" ({meaning})" if meaning else "")
    kind = prop.get("type")
    if kind == "boolean":
        return "yes or no" if typed == "form" else "true or false (a JSON boolean, not a string or number)"
    if kind == "array":
        low, high = prop.get("minItems", 0), prop.get("maxItems")
        count = (
            f"{low} to {high}"
            if high is not None and low
            else f"at most {high}"
            if high is not None
            else f"at least {low}"
            if low
            else ""
        )
        return f"a list of {count} ({expects(prop.get('items', {}), typed)} each)".replace("of  (", "(")
    if kind in ("integer", "number"):
        noun = "a whole number" if kind == "integer" else "a number"
        low, high = prop.get("minimum"), prop.get("maximum")
        if high is not None and high >= UNTYPED_BOUND:
            high = None  # an id's ceiling (what SQLite can bind), not a bound to tell a person
        if low is not None and high is not None:
            return f"{noun} from {_figure(low)} to {_figure(high)}"
        if low is not None:
            return f"{noun} of at least {_figure(low)}"
        return noun
    if kind == "string":
        low, high = prop.get("minLength"), prop.get("maxLength")
        if high is not None:
            if not low:
                return f"a string of at most {high:,} characters"
            return (
                f"a non-empty string of at most {high:,} characters"
                if low == 1
                else f"a string of {low:,} to {high:,} characters"
            )
        return "a non-empty string" if low else "a string"
    return "a value of the documented type"


def _figure(bound) -> str:
    """A schema's bound as written: ``1``, ``0.5``, ``4611686018427387904`` (not ``4.6e+18``)."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"
