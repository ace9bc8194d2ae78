"""Tool arguments checked once, strictly, from the tool function's own type hints.

A tool's parameters after ``db`` are ``Annotated[type, Field(...)]`` hints; :func:`model_for`
turns them into a pydantic model in strict mode (a bool is not a number, the string
``"true"`` is not a bool, no parameter the tool does not declare), and the same model gives
the JSON schema an MCP client sees, so the CLI, the web UI and MCP get exactly the same
checks. One leniency: a whole number sent as a float (``3.0``) is accepted where an integer
is expected, because some clients send every number as a float.

A refusal is one sentence per bad parameter, naming it and saying what it accepts (read from
the schema the client was shown), with at most a short excerpt of the bad value: never
pydantic's own text, never a 10 MB string echoed back. The parameter is named as the caller
knows it: its own name over MCP and the web, the command's option or argument (``--facet``,
``TEXT``) on the CLI, which says so with :func:`named`.

A web form sends text: within :func:`typed_as_text` (the web face's calls) the same model
reads ``"7"`` as 7 and ``"yes"`` as true (pydantic's lax mode), so a form passes what was
typed and the tool's model, not the face, says what is wrong with it.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, create_model
from pydantic.json_schema import GenerateJsonSchema

from .errors import InvalidInput

#: how much of a bad value a refusal quotes
EXCERPT_CHARS = 40

#: How the face in progress spells the tool's parameters (``{"facet": "--facet"}`` on the
#: CLI); a parameter not listed is named as the tool declares it.
_NAMES: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "hermes_parameter_names", default=None
)
#: Whether the arguments in progress are text typed into a form (:func:`typed_as_text`).
_AS_TEXT: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_as_text", default=False)


@contextmanager
def named(names: Mapping[str, str]):
    """Within the block, a refusal names parameter ``p`` as ``names[p]`` (the CLI passes its
    command's own options and arguments, so a person reads what they typed)."""
    token = _NAMES.set(names)
    try:
        yield
    finally:
        _NAMES.reset(token)


@contextmanager
def typed_as_text():
    """Within the block, an argument may be the text a person typed for it (a web form's
    field, a query string's value): a whole number ``"7"`` is read as 7, ``"yes"`` / ``"no"``
    as a bool; anything else is refused in the model's words, as any bad value is."""
    token = _AS_TEXT.set(True)
    try:
        yield
    finally:
        _AS_TEXT.reset(token)


def _name(parameter: str) -> str:
    return (_NAMES.get() or {}).get(parameter, parameter)


def spelled(parameter: str) -> str:
    """Tool parameter ``parameter`` as the caller knows it (``--interests`` on the CLI), for
    a refusal a tool writes itself."""
    return _name(parameter)


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
    """Arguments that do not match the tool's declared parameters."""


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
    model = create_model(f"{name}_arguments", __config__=ConfigDict(strict=True, extra="forbid"), **fields)
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
        sentences = [_sentence(tool_name, properties, error) for error in exc.errors()]
        raise InvalidArguments(" ".join(dict.fromkeys(sentences))) from None
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


def _sentence(tool_name: str, properties: dict, error: dict) -> str:
    where = error["loc"][0] if error["loc"] else ""
    if error["type"] == "missing":
        return f"{tool_name} needs {_name(where)}: {expects(properties.get(where, {}))}."
    if error["type"] == "extra_forbidden":
        known = ", ".join(properties) or "none"
        return f"{tool_name} has no parameter {excerpt(str(where))}; its parameters are: {known}."
    return f"{_name(where)} must be {expects(properties.get(where, {}))}, got {excerpt(error['input'])}."


def expects(prop: dict) -> str:
    """What a schema property accepts, in words: ``a whole number from 1 to 100``."""
    options = prop.get("anyOf")
    if options:
        words = [expects(o) for o in options if o.get("type") != "null"]
        # a form's field left empty is no value: "null" is no word a person types
        nullable = len(words) < len(options) and not _AS_TEXT.get()
        return " or ".join(words + (["null"] if nullable else []))
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type")
    if kind == "boolean":
        return "yes or no" if _AS_TEXT.get() else "true or false (a JSON boolean, not a string or number)"
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
        return f"a list of {count} ({expects(prop.get('items', {}))} each)".replace("of  (", "(")
    if kind in ("integer", "number"):
        noun = "a whole number" if kind == "integer" else "a number"
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"{noun} from {low:g} to {high:g}"
        if low is not None:
            return f"{noun} of at least {low:g}"
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
