"""Tool schemas compiled once per digest into bounded validators: dialects, Gemini's spellings, strict mode, the
bounds on hostile schemas, and the ReDoS and $ref bounds while checking a call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from verdict.verify.model import ToolDefinition
from verdict.verify.tool_schemas import (
    MAX_ENUM_VALUES,
    SchemaRefused,
    SchemaUncheckable,
    ToolSchemas,
    check_arguments,
    compile_tool,
    schema_digest,
)


def _tool(schema: Any, strict: bool = False) -> ToolDefinition:
    return ToolDefinition("f", parameters=json.dumps(schema), strict=strict)


def _reason(schema: Any, arguments: Any, strict: bool = False) -> str:
    finding = check_arguments(compile_tool(_tool(schema, strict)), arguments, time_limit=5)
    return finding.reason if finding else ""


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"name": "a"}, ""),
        ({}, "missing_argument"),
        ({"name": 1}, "wrong_type"),
        ({"name": "a", "age": "3"}, "wrong_type"),
        ({"name": "a", "tags": {"x": 1}}, "wrong_type"),
    ],
)
def test_the_keywords_models_break_have_their_reasons(arguments: Any, reason: str) -> None:
    assert _reason(PERSON, arguments) == reason


def test_strict_mode_requires_every_property_and_no_others() -> None:
    assert _reason(PERSON, {"name": "a", "age": 1, "tags": []}, strict=True) == ""
    assert _reason(PERSON, {"name": "a", "age": 1}, strict=True) == "missing_argument"
    assert _reason(PERSON, {"name": "a", "age": 1, "tags": [], "x": 1}, strict=True) == "unexpected_argument"
    assert _reason(PERSON, {"name": "a", "x": 1}) == ""  # not strict: additional properties are allowed


def test_an_unexpected_argument_is_pointed_at() -> None:
    schema = {**PERSON, "additionalProperties": False}
    finding = check_arguments(compile_tool(_tool(schema)), {"name": "a", "nmae": "b"}, time_limit=5)
    assert finding is not None
    assert (finding.reason, finding.pointer) == ("unexpected_argument", "/nmae")


def test_gemini_openapi_spellings_mean_json_schema() -> None:
    schema = {"type": "OBJECT", "properties": {"days": {"type": "INTEGER", "nullable": True}}, "required": ["days"]}
    assert _reason(schema, {"days": None}) == ""
    assert _reason(schema, {"days": 2}) == ""
    assert _reason(schema, {"days": "2"}) == "wrong_type"


def test_draft_07_is_detected_declared_or_by_its_forms() -> None:
    tuple_items = {
        "type": "object",
        "properties": {"p": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}},
    }
    assert _reason(tuple_items, {"p": [1, "a"]}) == ""
    assert _reason(tuple_items, {"p": ["a", "a"]}) == "wrong_type"
    declared = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        **PERSON,
        "definitions": {"x": {"type": "string"}},
    }
    assert _reason(declared, {"name": 2}) == "wrong_type"


def test_local_refs_resolve_and_the_digest_ignores_spelling() -> None:
    schema = {"type": "object", "$defs": {"unit": {"enum": ["c", "f"]}}, "properties": {"u": {"$ref": "#/$defs/unit"}}}
    assert _reason(schema, {"u": "c"}) == ""
    assert _reason(schema, {"u": "k"}) == "not_in_enum"
    spaced = ToolDefinition("f", parameters=json.dumps(schema, indent=4))
    assert compile_tool(spaced).digest == compile_tool(_tool(schema)).digest == schema_digest(schema)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("{not json", "not JSON"),
        ('{"type": "obj"}', "not a valid JSON Schema"),
        ('{"$ref": "https://example.com/a.json"}', "remote references are never retrieved"),
        ('{"$ref": "#/$defs/missing"}', "does not resolve"),
        ("[1]", "must be a JSON object"),
        (json.dumps({"enum": list(range(MAX_ENUM_VALUES + 1))}), "enum lists"),
        ('{"items": ' * 100 + "{}" + "}" * 100, "nests deeper"),
        ('{"pattern": "a{1000000}"}', "repeats too much"),
        ('{"pattern": "(unclosed"}', "not a valid regular expression"),
        ('{"a": NaN}', "NaN is not JSON"),
        ('{"description": "' + "x" * 200_000 + '"}', "bytes"),
    ],
)
def test_schemas_the_server_will_not_use_are_refused_with_a_reason(schema: str, message: str) -> None:
    with pytest.raises(SchemaRefused, match=message):
        compile_tool(ToolDefinition("f", parameters=schema))


def test_a_catastrophic_pattern_is_bounded_by_the_time_limit() -> None:
    tool = compile_tool(_tool({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}}))
    assert tool.patterned
    with pytest.raises(SchemaUncheckable, match="did not finish"):
        check_arguments(tool, {"a": "a" * 5000 + "b"}, time_limit=0.2)


def test_a_clock_past_the_limit_stops_the_check() -> None:
    tool = compile_tool(_tool({"type": "object", "properties": {"a": {"type": "string", "pattern": "^a+$"}}}))
    ticks = iter([0.0, 100.0, 200.0])
    with pytest.raises(SchemaUncheckable, match="time limit"):
        check_arguments(tool, {"a": "aaa"}, time_limit=1, clock=lambda: next(ticks))


def test_a_schema_that_refers_to_itself_for_ever_is_uncheckable() -> None:
    tool = compile_tool(_tool({"$defs": {"x": {"$ref": "#/$defs/x"}}, "$ref": "#/$defs/x"}))
    with pytest.raises(SchemaUncheckable):
        check_arguments(tool, {}, time_limit=5)


def test_a_recursive_schema_over_a_finite_value_is_checked() -> None:
    tree = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}, "v": {"type": "integer"}},
    }
    assert _reason(tree, {"v": 1, "children": [{"v": 2, "children": [{"v": 3}]}]}) == ""
    assert _reason(tree, {"v": 1, "children": [{"v": "2"}]}) == "wrong_type"


def test_the_cache_compiles_each_schema_once_and_keeps_refusals() -> None:
    schemas = ToolSchemas(capacity=2)
    tool = _tool(PERSON)
    assert schemas.compile(tool)[1] is False
    assert schemas.compile(tool)[1] is True
    assert schemas.compile(ToolDefinition("g", parameters=tool.parameters))[0].name == "g"
    bad = ToolDefinition("h", parameters="{")
    for _ in range(2):
        with pytest.raises(SchemaRefused):
            schemas.compile(bad)
    assert (schemas.cache.hits, schemas.cache.misses) == (3, 2)
    schemas.compile(_tool({"type": "object"}))
    assert len(schemas.cache) == 2


def test_the_digest_names_the_check_made() -> None:
    gemini = {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}
    lower = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert compile_tool(_tool(gemini)).digest == compile_tool(_tool(lower)).digest
    assert compile_tool(_tool(lower, strict=True)).digest != compile_tool(_tool(lower)).digest
