"""Strict JSON arguments and the breakage named: each real failure of tool-calling models has its own reason, and a
cut is told from a mistake by completing the text and parsing the completion."""

from __future__ import annotations

import pytest

from verdict.verify.tool_arguments import is_viable_prefix, parse_arguments


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty_arguments"),
        ("{'location': 'Boston'}", "single_quotes"),
        ('{"a": True}', "python_literal"),
        ('{"a": None}', "python_literal"),
        ('{"a": 1,}', "trailing_comma"),
        ('{"a": [1, 2,]}', "trailing_comma"),
        ("{a: 1}", "unquoted_key"),
        ('{"a": 1}}', "extra_brace"),
        ('{"a": 1}{"b": 2}', "extra_data"),
        ('{\\n"a": 1}', "stray_escape"),
        ('"{\\"a\\": 1}"', "double_encoded"),
        ("[1, 2]", "not_object"),
        ("42", "not_object"),
        ('{"a": NaN}', "non_finite_number"),
        ('{"a": -Infinity}', "non_finite_number"),
        ('{"a": 1, "a": 2}', "duplicate_key"),
        ('```json\n{"a": 1}\n```', "fenced"),
        ('{"a": "x\ny"}', "control_character"),
        ('{"a": 1 "b": 2}', "not_json"),
        ('{"a": "Bos', "incomplete"),
    ],
)
def test_each_breakage_has_its_reason(text: str, reason: str) -> None:
    parsed = parse_arguments(text)
    assert parsed.error is not None
    assert parsed.error.reason == reason
    assert parsed.error.detail


@pytest.mark.parametrize(
    "text",
    ['{"a": tr', '{"a": true', '{"a": "hel', '{"loc', '{"a": [1, 2', '{"a": 1,', '{"a": 1.', '{"a": -', "{",
     '{"a": "x\\', '{"a": "x\\u12', '{"a": {"b": [{"c": nul', '{"a" ', '{"a":'],
)  # fmt: skip
def test_a_viable_prefix_is_a_cut(text: str) -> None:
    assert is_viable_prefix(text)
    assert parse_arguments(text).cut


@pytest.mark.parametrize("text", ["{'a': 1", '{"a": True', '{"a": 1}}', "{a: 1", '{"a": 1}', "", "[1]]"])
def test_a_mistake_or_a_whole_value_is_no_cut(text: str) -> None:
    assert not is_viable_prefix(text)


def test_intact_arguments_parse_to_their_object() -> None:
    parsed = parse_arguments('{"location": "Bogotá, Colombia", "days": 3, "nested": {"x": [1.5, null, false]}}')
    assert parsed.error is None
    assert parsed.value == {"location": "Bogotá, Colombia", "days": 3, "nested": {"x": [1.5, None, False]}}


def test_deep_nesting_is_named_not_raised() -> None:
    parsed = parse_arguments('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert parsed.error is not None
    assert parsed.error.reason == "not_json"
