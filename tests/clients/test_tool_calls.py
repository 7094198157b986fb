"""Both Python clients on tool-calling turns, against a real `verdict serve` child process: typed calls and tools as
mappings, and a provider's response passed straight through (a dict, JSON text, or an SDK object)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import ServerProcess
from tests.verify.tool_corpus.shapes import anthropic, openai_chat
from verdict.verify.model import ToolCall
from verdict_client import AsyncVerdictClient, ToolCallCheck, VerdictClient, VerdictRpcError, VerifyVerdict

WEATHER = {
    "name": "get_weather",
    "description": "Get current temperature for a given location.",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "units": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location", "units"],
        "additionalProperties": False,
    },
    "strict": True,
}


@pytest.fixture
def client(server: ServerProcess):
    with VerdictClient(server.target) as verdict:
        yield verdict


def test_typed_calls_and_tools_as_mappings(client: VerdictClient) -> None:
    result = client.verify_response(
        finish_reason="tool_calls",
        tool_calls=[
            {"id": "call_1", "name": "get_weather", "arguments": '{"location": "Paris", "units": "celsius"}'},
            {"id": "call_2", "name": "get_weather", "arguments": {"location": "Oslo"}},
        ],
        tools=[WEATHER],
    )
    assert result.verdict is VerifyVerdict.MALFORMED
    assert result.failed
    ok, missing = result.tool_checks
    assert ok == ToolCallCheck(0, "call_1", "get_weather", VerifyVerdict.OK, "", "", "", ok.schema_digest)
    assert (missing.id, missing.reason, missing.verdict) == ("call_2", "missing_argument", VerifyVerdict.MALFORMED)
    assert len(missing.schema_digest) == 64


class _SdkObject:
    """Stands for an SDK response type (openai.types.chat.ChatCompletion, anthropic.types.Message): model_dump_json."""

    def __init__(self, text: str) -> None:
        self._text = text

    def model_dump_json(self) -> str:
        return self._text


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(lambda text: text, id="json text"),
        pytest.param(json.loads, id="dict"),
        pytest.param(_SdkObject, id="sdk object"),
    ],
)
def test_a_provider_response_passed_straight_through(client: VerdictClient, message: Any) -> None:
    call = ToolCall("toolu_01", "get_weather", '{"location": "Paris", "units": "kelvin"}')
    result = client.verify_response(
        message=message(anthropic("Let me check.", [call], "tool_calls")),
        tools_json=[{"name": WEATHER["name"], "input_schema": WEATHER["parameters"]}],
    )
    assert result.verdict is VerifyVerdict.MALFORMED
    assert [(c.id, c.reason, c.pointer) for c in result.tool_checks] == [("toolu_01", "not_in_enum", "/units")]


def test_mixing_typed_and_json_forms_names_the_field(client: VerdictClient) -> None:
    with pytest.raises(VerdictRpcError) as raised:
        client.verify_response("text", message=openai_chat("", [], "stop"))
    assert [violation.field for violation in raised.value.field_violations] == ["text"]


async def test_the_asyncio_client_carries_the_same(server: ServerProcess) -> None:
    call = ToolCall("call_1", "get_weather", '{"location": "Par')
    async with AsyncVerdictClient(server.target) as verdict:
        result = await verdict.verify_response(message=openai_chat("", [call], "length"), tools=[WEATHER])
    assert result.verdict is VerifyVerdict.TRUNCATED
    assert [c.reason for c in result.tool_checks] == ["truncated"]
