"""VerifyResponse on tool-calling turns over a real channel: every breakage in every wire form gives the same verdict,
mixed forms and unusable schemas are INVALID_ARGUMENT naming the field, hostile schemas are answered in bounded time
without stalling other calls, and bytes fuzzed into message_json / tools_json never give INTERNAL."""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tests.support import Running, make_config, serving
from tests.verify.tool_corpus import provider_tools
from tests.verify.tool_corpus.shapes import MESSAGE_FORMS, TOOLS_FORMS, anthropic, typed, typed_tools
from verdict.v1 import verdict_pb2
from verdict.verify.model import ToolCall

V = verdict_pb2
TOOLS = provider_tools()

WEATHER = ToolCall("call_1", "get_current_weather", '{"location": "Boston, MA", "unit": "celsius"}')
FLIGHTS = ToolCall(
    "call_2",
    "search_flights",
    '{"origin": "BOS", "destination": "SFO", "date": "2025-03-01", "passengers": 2, "cabin": "economy", '
    '"flexible": false}',
)

TURNS: dict[str, tuple[str, list[ToolCall], str, int, list[str]]] = {
    # name: (text, calls, finish, turn verdict, each call's reason)
    "parallel calls, no text": ("", [WEATHER, FLIGHTS], "tool_calls", V.VERIFY_VERDICT_OK, ["", ""]),
    "a call with prose": ("Let me check.", [WEATHER], "tool_calls", V.VERIFY_VERDICT_OK, [""]),
    "a call with a broken code block": (
        "Running:\n```python\ndef f(:\n```\n", [WEATHER], "tool_calls", V.VERIFY_VERDICT_MALFORMED, [""],
    ),
    "invented function name": (
        "", [ToolCall("c", "get_weather_now", WEATHER.arguments)], "tool_calls", V.VERIFY_VERDICT_MALFORMED,
        ["unknown_tool"],
    ),
    "required argument left out": (
        "", [ToolCall("c", "get_current_weather", '{"unit": "celsius"}')], "tool_calls", V.VERIFY_VERDICT_MALFORMED,
        ["missing_argument"],
    ),
    "string where integer": (
        "", [ToolCall("c", "search_flights", FLIGHTS.arguments.replace('"passengers": 2', '"passengers": "2"'))],
        "tool_calls", V.VERIFY_VERDICT_MALFORMED, ["wrong_type"],
    ),
    "value outside the enum": (
        "", [ToolCall("c", "get_current_weather", '{"location": "Boston", "unit": "kelvin"}')], "tool_calls",
        V.VERIFY_VERDICT_MALFORMED, ["not_in_enum"],
    ),
    "array where an object belongs": (
        "", [ToolCall("c", "search_knowledge_base", '{"query": "x", "options": [{"num_results": 3}]}')],
        "tool_calls", V.VERIFY_VERDICT_MALFORMED, ["wrong_type"],
    ),
    "unexpected argument (strict)": (
        "", [ToolCall("c", "get_weather", '{"location": "Paris", "units": "c"}')], "tool_calls",
        V.VERIFY_VERDICT_MALFORMED, ["unexpected_argument"],
    ),
    "one good, one bad": (
        "", [WEATHER, ToolCall("c", "get_stock_price", "{}")], "tool_calls", V.VERIFY_VERDICT_MALFORMED,
        ["", "missing_argument"],
    ),
}  # fmt: skip

SYNTAX: dict[str, tuple[str, str, int, str]] = {
    # arguments text (not an object: only OpenAI strings and Anthropic's streamed input carry it)
    "extra closing brace": ('{"location": "Boston"}}', "tool_calls", V.VERIFY_VERDICT_MALFORMED, "extra_brace"),
    "single quotes": ("{'location': 'Boston'}", "tool_calls", V.VERIFY_VERDICT_MALFORMED, "single_quotes"),
    "Python None": ('{"location": "Boston", "unit": None}', "tool_calls", V.VERIFY_VERDICT_MALFORMED, "python_literal"),
    "trailing comma": ('{"location": "Boston",}', "tool_calls", V.VERIFY_VERDICT_MALFORMED, "trailing_comma"),
    "unquoted key": ('{location: "Boston"}', "tool_calls", V.VERIFY_VERDICT_MALFORMED, "unquoted_key"),
    "literal backslash-n": ('{\\n"location": "Boston"}', "tool_calls", V.VERIFY_VERDICT_MALFORMED, "stray_escape"),
    "cut at the budget": ('{"location": "Bos', "length", V.VERIFY_VERDICT_TRUNCATED, "truncated"),
    "cut without a length reason": ('{"location": "Bos', "tool_calls", V.VERIFY_VERDICT_MALFORMED, "incomplete"),
}  # fmt: skip


async def _verify(running: Running, request: V.VerifyResponseRequest) -> V.VerifyResponseResponse:
    response: V.VerifyResponseResponse = await running.stub.VerifyResponse(request, timeout=60)
    return response


def _forms(text: str, calls: list[ToolCall], finish: str) -> dict[str, V.VerifyResponseRequest]:
    forms = {"typed": V.VerifyResponseRequest(**typed(text, calls, finish), tools=typed_tools(TOOLS))}
    for name, build in MESSAGE_FORMS.items():
        message = build(text, calls, finish)
        if message is not None:
            forms[name] = V.VerifyResponseRequest(message_json=message, tools_json=TOOLS_FORMS[name](TOOLS))
    return forms


@pytest.mark.parametrize("turn", sorted(TURNS))
async def test_every_wire_form_gives_the_same_verdict(running: Running, turn: str) -> None:
    text, calls, finish, verdict, reasons = TURNS[turn]
    forms = _forms(text, calls, finish)
    assert set(forms) == {"typed", "openai_chat", "openai_responses", "anthropic", "gemini"}
    for form, request in forms.items():
        response = await _verify(running, request)
        assert (form, response.verdict) == (form, verdict), response.detail
        assert [check.reason for check in response.tool_checks] == reasons, (form, response.tool_checks)
        assert [check.name for check in response.tool_checks] == [call.name for call in calls]
        for check in response.tool_checks:
            assert (check.verdict == V.VERIFY_VERDICT_OK) == (not check.reason)
            assert check.detail or check.verdict == V.VERIFY_VERDICT_OK
            if check.name in {tool.name for tool in TOOLS}:
                assert len(check.schema_digest) == 64


async def test_the_schema_digest_is_the_same_in_every_form(running: Running) -> None:
    digests = {
        form: (await _verify(running, request)).tool_checks[0].schema_digest
        for form, request in _forms("", [WEATHER], "tool_calls").items()
    }
    assert len(set(digests.values())) == 1, digests


@pytest.mark.parametrize("kind", sorted(SYNTAX))
async def test_broken_arguments_in_every_form_that_carries_them(running: Running, kind: str) -> None:
    arguments, finish, verdict, reason = SYNTAX[kind]
    call = ToolCall("toolu_01", "get_current_weather", arguments)
    forms = _forms("", [call], finish)
    assert {"typed", "openai_chat", "openai_responses", "anthropic"} <= set(forms)
    for form, request in forms.items():
        response = await _verify(running, request)
        assert (form, response.verdict, response.failed) == (form, verdict, True)
        assert [(c.call_index, c.id, c.reason) for c in response.tool_checks] == [(0, "toolu_01", reason)], form


async def test_pointers_name_the_offending_value(running: Running) -> None:
    call = ToolCall(
        "c", "record_summary", '{"key_colors": [{"r": 1, "g": "0.5", "b": 0, "name": "x"}], "description": "d"}'
    )
    response = await _verify(
        running,
        V.VerifyResponseRequest(
            tool_calls=[V.ToolCall(id=call.id, name=call.name, arguments=call.arguments)], tools=typed_tools(TOOLS)
        ),
    )
    assert response.tool_checks[0].pointer == "/key_colors/0/g"
    assert "/key_colors/0/g" in response.detail


async def test_markup_left_in_the_text_while_tools_are_declared(running: Running) -> None:
    text = (
        'I will check.\n<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Boston"}}\n</tool_call>'
    )
    response = await _verify(
        running, V.VerifyResponseRequest(text=text, finish_reason="stop", tools=typed_tools(TOOLS))
    )
    assert response.verdict == V.VERIFY_VERDICT_MALFORMED
    assert [(c.reason, c.name) for c in response.tool_checks] == [("call_in_text", "")]
    assert "tool_call_tag" in response.tool_checks[0].detail
    plain = await _verify(running, V.VerifyResponseRequest(text=text, finish_reason="stop"))
    assert plain.verdict == V.VERIFY_VERDICT_UNVERIFIABLE
    assert not plain.tool_checks


async def test_existing_callers_see_no_change(running: Running) -> None:
    exempt = await _verify(running, V.VerifyResponseRequest(text="", has_tool_calls=True, finish_reason="length"))
    assert exempt.verdict == V.VERIFY_VERDICT_UNVERIFIABLE
    assert not exempt.tool_checks
    prose = await _verify(running, V.VerifyResponseRequest(text='```json\n{"a": 1}\n```', tools=typed_tools(TOOLS)))
    assert prose.verdict == V.VERIFY_VERDICT_OK
    assert not prose.tool_checks


async def test_gemini_malformed_function_call_is_malformed(running: Running) -> None:
    message = json.dumps({"candidates": [{"content": {"parts": []}, "finishReason": "MALFORMED_FUNCTION_CALL"}]})
    response = await _verify(running, V.VerifyResponseRequest(message_json=message))
    assert response.verdict == V.VERIFY_VERDICT_MALFORMED
    assert [c.reason for c in response.tool_checks] == ["provider_malformed"]


def _bad_request(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, list[str]]:
    status = rpc_status.from_call(error)
    assert status is not None
    fields = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [violation.field for violation in bad.field_violations]
    return error.code(), fields


REMOTE = '{"$ref": "https://example.com/s.json"}'
HUGE_ENUM = json.dumps([{"name": "f", "input_schema": {"enum": list(range(5000))}}])


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"message_json": "{}", "text": "hi"}, "text"),
        ({"message_json": "{}", "finish_reason": "stop"}, "finish_reason"),
        ({"message_json": "{}", "tool_calls": [V.ToolCall(name="f", arguments="{}")]}, "tool_calls"),
        ({"tools_json": "[]", "tools": [V.ToolDefinition(name="f")]}, "tools"),
        ({"message_json": '{"hello": "world"}'}, "message_json"),
        ({"message_json": "not json"}, "message_json"),
        ({"tools_json": '{"tools": []}', "text": "x"}, "tools_json"),
        ({"tools": [V.ToolDefinition(name="f", parameters="{not json")], "text": "x"}, "tools[0].parameters"),
        ({"tools": [V.ToolDefinition(name="f", parameters='{"type": "obj"}')], "text": "x"}, "tools[0].parameters"),
        ({"tools": [V.ToolDefinition(name="f", parameters=REMOTE)], "text": "x"}, "tools[0].parameters"),
        ({"tools": [V.ToolDefinition(name="f"), V.ToolDefinition(name="f")], "text": "x"}, "tools[1].name"),
        ({"tools": [V.ToolDefinition(name="")], "text": "x"}, "tools[0].name"),
        ({"tools_json": HUGE_ENUM, "text": "x"}, "tools_json"),
    ],
)  # fmt: skip
async def test_invalid_requests_name_the_field(running: Running, fields: dict[str, Any], field: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _verify(running, V.VerifyResponseRequest(**fields))
    assert _bad_request(raised.value) == (grpc.StatusCode.INVALID_ARGUMENT, [field]), raised.value.details()


HOSTILE_SCHEMAS = {
    "deep nesting": '{"type": "object", "properties": {"a": '
    + '{"type": "array", "items": ' * 500
    + "{}"
    + "}" * 500
    + "}}",
    "huge enum": json.dumps({"type": "object", "properties": {"a": {"enum": [f"v{i}" for i in range(100_000)]}}}),
    "huge repeat": json.dumps({"type": "object", "properties": {"a": {"type": "string", "pattern": "a{1000000}"}}}),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_SCHEMAS))
async def test_hostile_schemas_are_refused_naming_the_tool(running: Running, kind: str) -> None:
    tools = [V.ToolDefinition(name="f", parameters=HOSTILE_SCHEMAS[kind])]
    call = V.ToolCall(name="f", arguments='{"a": "x"}')
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _verify(running, V.VerifyResponseRequest(tool_calls=[call], tools=tools))
    assert _bad_request(raised.value) == (grpc.StatusCode.INVALID_ARGUMENT, ["tools[0].parameters"])


async def test_hostile_checks_are_unverifiable_and_stall_nobody() -> None:
    """A catastrophic pattern and a schema that refers to itself for ever: the call is unverifiable (bounded by
    regex_timeout_seconds and the $ref budget), and a plain call sent meanwhile is answered before it."""
    config = make_config(regex_timeout_seconds=3.0)
    async with serving(config) as running:
        catastrophic = V.ToolDefinition(
            name="f",
            parameters=json.dumps({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}}),
        )
        looping = V.ToolDefinition(
            name="g", parameters=json.dumps({"$defs": {"x": {"$ref": "#/$defs/x"}}, "$ref": "#/$defs/x"})
        )
        slow = asyncio.ensure_future(
            _verify(
                running,
                V.VerifyResponseRequest(
                    tool_calls=[
                        V.ToolCall(name="f", arguments=json.dumps({"a": "a" * 5000 + "b"})),
                        V.ToolCall(name="g", arguments="{}"),
                    ],
                    tools=[catastrophic, looping],
                ),
            )
        )
        await asyncio.sleep(0.05)
        plain = await _verify(running, V.VerifyResponseRequest(text='```json\n{"a": 1}\n```'))
        assert plain.verdict == V.VERIFY_VERDICT_OK
        assert not slow.done()  # the hostile call was still being bounded when the plain one was answered
        response = await slow
        assert [(c.verdict, c.reason) for c in response.tool_checks] == [
            (V.VERIFY_VERDICT_UNVERIFIABLE, "schema_unverifiable"),
            (V.VERIFY_VERDICT_UNVERIFIABLE, "schema_unverifiable"),
        ]
        assert response.verdict == V.VERIFY_VERDICT_UNVERIFIABLE


async def test_fuzzed_message_and_tools_json_never_give_internal(running: Running) -> None:
    """Byte-level mutations of real provider responses and tools arrays: answered or INVALID_ARGUMENT, not INTERNAL."""
    rng = random.Random(2020)
    seeds = [
        (build("Checking.", [WEATHER, FLIGHTS], "tool_calls"), TOOLS_FORMS[name](TOOLS))
        for name, build in MESSAGE_FORMS.items()
    ]
    codes: dict[str, int] = {}
    for round_ in range(400):
        message, tools = seeds[round_ % len(seeds)]
        assert message is not None
        fuzzed = [_mutate(message.encode(), rng), _mutate(tools.encode(), rng)]
        which = round_ % 3
        request = V.VerifyResponseRequest(
            message_json=fuzzed[0].decode("utf-8", "replace") if which != 1 else message,
            tools_json=fuzzed[1].decode("utf-8", "replace") if which != 0 else tools,
        )
        try:
            response = await _verify(running, request)
        except grpc.aio.AioRpcError as error:
            codes[error.code().name] = codes.get(error.code().name, 0) + 1
            continue
        codes["OK"] = codes.get("OK", 0) + 1
        assert response.verdict != V.VERIFY_VERDICT_UNSPECIFIED
    assert set(codes) == {"OK", "INVALID_ARGUMENT"}, codes
    assert codes["OK"] > 20
    assert codes["INVALID_ARGUMENT"] > 20


def _mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        operation = rng.randrange(4)
        at = rng.randrange(len(buffer)) if buffer else 0
        if operation == 0 and buffer:
            buffer[at] = rng.randrange(256)
        elif operation == 1 and buffer:
            del buffer[at : at + rng.randint(1, 16)]
        elif operation == 2:
            buffer[at:at] = rng.choice([b"{", b"}", b"[", b"]", b'"', b",", b":", b"null", b"1e999", b"\\u", b"\xff"])
        else:
            cut = rng.randrange(len(buffer) + 1)
            buffer = buffer[:cut]
    return bytes(buffer)


async def test_metrics_count_calls_per_reason_and_tool() -> None:
    async with serving(make_config(tool_labels=("get_current_weather",))) as running:
        tools = typed_tools(TOOLS)
        for _ in range(2):
            await _verify(
                running,
                V.VerifyResponseRequest(
                    **typed("", [WEATHER, ToolCall("c", "get_stock_price", "{}")], "tool_calls"), tools=tools
                ),
            )
        sample = running.registry.get_sample_value
        assert (
            sample("verdict_tool_checks_total", {"tool": "get_current_weather", "verdict": "ok", "reason": "none"}) == 2
        )
        assert (
            sample("verdict_tool_checks_total", {"tool": "other", "verdict": "malformed", "reason": "missing_argument"})
            == 2
        )
        assert sample("verdict_tool_schema_cache_total", {"outcome": "miss"}) == 1
        assert sample("verdict_tool_schema_cache_total", {"outcome": "hit"}) == 1


async def test_the_batch_rpc_carries_tool_calls_and_each_items_own_error(running: Running) -> None:
    good = V.VerifyResponseRequest(**typed("", [WEATHER], "tool_calls"), tools=typed_tools(TOOLS))
    mixed = V.VerifyResponseRequest(message_json="{}", text="x")
    provider = V.VerifyResponseRequest(
        message_json=anthropic("", [ToolCall("t", "get_time", "{}")], "tool_calls"),
        tools_json=TOOLS_FORMS["anthropic"](TOOLS),
    )
    answer = await running.stub.BatchVerifyResponses(V.BatchVerifyResponsesRequest(items=[good, mixed, provider]))
    first, second, third = answer.results
    assert first.response.verdict == V.VERIFY_VERDICT_OK
    assert second.error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert [c.reason for c in third.response.tool_checks] == ["missing_argument"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
async def test_the_readme_curl_example_over_the_http_port() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = re.search(r"### A tool-calling turn.*?VerifyResponse -d '(\{.*?\})'\n", readme, re.DOTALL)
    assert example is not None
    async with serving(make_config(http_address="127.0.0.1:0")) as running:
        assert running.app.http is not None
        url = f"http://127.0.0.1:{running.app.http.port}/verdict.v1.VerdictService/VerifyResponse"
        done = await asyncio.to_thread(
            subprocess.run,
            ["curl", "-sS", "-H", "Content-Type: application/json", url, "-d", example.group(1)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    body = json.loads(done.stdout)
    assert body["verdict"] == "VERIFY_VERDICT_MALFORMED"
    assert [(c["name"], c["reason"]) for c in body["toolChecks"]] == [("get_weather", "python_literal")]


async def test_real_answers_keep_their_verdict_when_tools_are_declared(running: Running) -> None:
    """The repository's own Markdown (prose showing JSON, calls and markup in code) as answers: declaring the 20
    provider tools changes no verdict and charges no call."""
    root = Path(__file__).resolve().parents[2]
    tools_json = TOOLS_FORMS["openai_chat"](TOOLS)
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = path.read_text()
        plain = await _verify(running, V.VerifyResponseRequest(text=text, finish_reason="stop"))
        declared = await _verify(
            running, V.VerifyResponseRequest(text=text, finish_reason="stop", tools_json=tools_json)
        )
        assert (path.name, declared.verdict, declared.detail) == (path.name, plain.verdict, plain.detail)
        assert list(declared.tool_checks) == []


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"tools": [V.ToolDefinition(name=f"t{i}") for i in range(1025)], "text": "x"}, "tools"),
        ({"tool_calls": [V.ToolCall(name="f", arguments="{}")] * 1025}, "tool_calls"),
    ],
)
async def test_too_many_tools_or_calls_are_refused(running: Running, fields: dict[str, Any], field: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _verify(running, V.VerifyResponseRequest(**fields))
    assert _bad_request(raised.value) == (grpc.StatusCode.INVALID_ARGUMENT, [field])


async def test_many_parallel_calls_are_each_checked(running: Running) -> None:
    calls = [V.ToolCall(id=f"c{i}", name="get_stock_price", arguments='{"ticker": "AAPL"}') for i in range(40)]
    response = await _verify(running, V.VerifyResponseRequest(tool_calls=calls, tools=typed_tools(TOOLS)))
    assert response.verdict == V.VERIFY_VERDICT_OK
    assert [c.call_index for c in response.tool_checks] == list(range(40))
