"""The web's own values (a feed view's address, its buttons' fields) are one pydantic model,
refused in the web's words as a tool's arguments are (issue 35): one validation way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from starlette.exceptions import HTTPException

from hermes import arguments
from hermes.web import forms
from hermes.web.views import VIEW_KEYS, parse_view, window_days


def refusal(params) -> str:
    with pytest.raises(HTTPException) as refused:
        parse_view(params)
    assert refused.value.status_code == 400
    return refused.value.detail


def test_a_view_is_read_by_the_webs_one_model():
    view = parse_view({"user": "ada", "days": "ALL", "read": "yes", "page": " 3 ", "limit": "", "feed": "2"})
    assert (view.days, view.show_read, view.page, view.limit, view.feed) == (None, True, 3, forms.PAGE_SIZE, 2)
    assert parse_view({"user": "ada", "tag": "  "}).tag is None  # an empty field is no value
    assert window_days("14") == 14 and window_days("all") is None
    assert set(VIEW_KEYS) <= set(forms.WebValues.model_fields)


def test_a_views_refusal_is_worded_as_a_tools_is_on_the_web(db):
    """The same words for a yes / no whoever refuses it: the view's ``read`` and the digest
    tool's ``below_bar`` (labelled ``below`` by the page)."""
    from hermes.tools import collect_tools

    said = refusal({"user": "ada", "read": "maybe"})
    assert said == 'read must be yes or no, got "maybe".'
    model = collect_tools()["digest"].argument_model
    with arguments.typed_as_text(), arguments.worded(forms.web_words({"below_bar": "below"})):
        with pytest.raises(arguments.InvalidArguments) as tool:
            arguments.validate("digest", model, {"user": "ada", "below_bar": "maybe"})
    assert str(tool.value) == 'below must be yes or no, got "maybe".'
    assert refusal({"user": "ada", "days": "soon"}) == (
        'days must be a whole number from 1 to 36500 or "all" (the whole archive), got "soon".'
    )


def test_a_missing_field_is_named_by_its_label_not_a_tool():
    with pytest.raises(HTTPException) as refused:
        forms.read({}, "liked", labels={"liked": "The rating"}, required=("liked",))
    assert refused.value.detail == 'The rating is missing: give one of "like", "dislike", "none".'


def test_no_web_module_checks_a_value_by_hand():
    """``parse_int`` / ``parse_bool`` / ``parse_days`` / ``parse_text`` were the web's second
    way of checking a value: gone, every value goes through :func:`forms.read`."""
    found = []
    for path in sorted(Path(forms.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = getattr(node, "name", None) or getattr(getattr(node, "func", None), "id", None)
            if name in ("parse_int", "parse_bool", "parse_days", "parse_text"):
                found.append(f"{path.name}:{node.lineno} {name}")
    assert not found, found
