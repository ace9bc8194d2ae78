"""Trial findings on refusals: each field's problem once in ``errors``, and an unknown id
echoed as asked, not as 0."""

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
