"""Trial findings on refusals: each field's problem once in ``errors``, and an unknown id
echoed as asked, not as 0 — a value of the wrong type too, as it was given."""

from __future__ import annotations

from hermes.storage.records import create_user
from hermes.tools import call_tool, collect_tools


def test_a_string_id_is_one_error_not_the_same_one_twice(db):
    create_user(db, "ann", "apples")
    result = call_tool(db, collect_tools()["record_feedback"], {"user": "ann", "item_id": "139"})
    assert result["ok"] is False
    problems = [(e["field"], e["problem"]) for e in result["errors"]]
    assert problems and len(problems) == len(set(problems)), problems


def test_explain_item_of_an_unknown_id_echoes_that_id(db):
    create_user(db, "ann", "apples")
    result = call_tool(db, collect_tools()["explain_item"], {"user": "ann", "item_id": 987654})
    assert result["ok"] is False
    assert result["item_id"] == 987654


def _refused(db, name: str, arguments: dict) -> dict:
    result = call_tool(db, collect_tools()[name], arguments, face="mcp")
    assert result["ok"] is False, result
    return result


def test_a_wrong_type_id_is_echoed_as_given_not_as_a_made_up_0(db):
    # a trial over MCP: {"item_id": "59"} was refused rightly, with "item_id": 0 beside it
    create_user(db, "ann", "apples")
    result = _refused(db, "explain_item", {"user": "ann", "item_id": "59"})
    assert result["item_id"] == "59"
    assert "item_id" in result["message"] and '"59"' in result["message"]
    assert result["user"] == "ann"
    assert _refused(db, "explain_item", {"user": "ann", "item_id": -1})["item_id"] == -1
    assert _refused(db, "explain_item", {"user": "ann", "item_id": True})["item_id"] is True


def test_a_value_too_big_to_repeat_is_null_not_0(db):
    create_user(db, "ann", "apples")
    assert _refused(db, "explain_item", {"user": "ann", "item_id": [59] * 100})["item_id"] is None
    assert _refused(db, "explain_item", {"user": "ann", "item_id": 2**70})["item_id"] is None
    assert _refused(db, "explain_item", {"user": "a" * 5000, "item_id": 1})["user"] is None


def test_a_key_that_only_shares_the_arguments_name_is_not_an_echo(db):
    # list_feed's below_bar is a count of items; its argument is a yes or no
    create_user(db, "ann", "apples")
    result = _refused(db, "list_feed", {"user": "ann", "limit": "x"})
    assert result["user"] == "ann" and result["below_bar"] == 0
    assert "limit" in result["message"]
    result = _refused(db, "list_feed", {"user": "ann", "below_bar": "maybe"})
    assert result["below_bar"] == 0


def test_other_tools_echo_what_they_were_given(db):
    create_user(db, "ann", "apples")
    tools = collect_tools()
    # record_feedback's payload does not repeat item_id: nothing is added for it either
    result = _refused(db, "record_feedback", {"user": "ann", "item_id": "a"})
    assert "item_id" not in result and result["clicks"] == []
    if "favorite" in tools:
        assert _refused(db, "favorite", {"user": "ann", "item_id": "a"})["item_id"] == "a"


def test_every_refusal_keeps_every_payload_key(db):
    create_user(db, "ann", "apples")
    for name in ("explain_item", "list_feed", "profile_status"):
        tool = collect_tools()[name]
        result = call_tool(db, tool, {"user": "ann", "item_id": "x"})
        assert set(tool.empty) <= set(result), name
