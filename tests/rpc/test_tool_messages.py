"""VerifyResponse's tool-call fields at the rpc layer: proto ⇄ domain (typed fields and provider JSON give the same
facts, mixing them is INVALID_ARGUMENT naming the field) and the decision record's schema digests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.rpc.test_decisions import read_log
from tests.support import make_config, serving
from tests.verify.tool_corpus import provider_tools
from tests.verify.tool_corpus.shapes import MESSAGE_FORMS, openai_chat, typed, typed_tools
from verdict.errors import InvalidArgument
from verdict.rpc.messages import verification_to_proto, verify_input
from verdict.v1 import verdict_pb2
from verdict.verify.model import ToolCall, ToolCheck, Verdict, Verification

V = verdict_pb2
CALL = ToolCall("call_1", "get_current_weather", '{"location": "Boston, MA"}')


@pytest.mark.parametrize("form", sorted(MESSAGE_FORMS))
def test_each_provider_shape_reads_as_the_typed_fields(form: str) -> None:
    message = MESSAGE_FORMS[form]("Checking.", [CALL], "length")
    assert message is not None
    read = verify_input(V.VerifyResponseRequest(message_json=message))
    fields = typed("Checking.", [CALL], "length")
    direct = verify_input(V.VerifyResponseRequest(**fields))
    assert read.text == direct.text
    assert [(c.name, json.loads(c.arguments)) for c in read.tool_calls] == [(CALL.name, json.loads(CALL.arguments))]
    assert read.has_tool_calls
    assert read.completion_tokens > 0
    assert read.finish_reason.lower().replace("-", "_") in {"length", "max_output_tokens", "max_tokens"}
    if form != "gemini":  # Gemini's functionCall has no id in its documented response
        assert read.tool_calls[0].id == "call_1"


def test_a_message_with_several_choices_is_refused() -> None:
    message = json.loads(openai_chat("a", [CALL], "stop"))
    message["choices"] *= 2
    with pytest.raises(InvalidArgument, match="2 choices") as raised:
        verify_input(V.VerifyResponseRequest(message_json=json.dumps(message)))
    assert raised.value.field == "message_json"


def test_typed_tools_carry_the_field_they_came_from() -> None:
    read = verify_input(V.VerifyResponseRequest(text="x", tools=typed_tools(provider_tools()[:2])))
    assert [tool.field for tool in read.tools] == ["tools[0].parameters", "tools[1].parameters"]


def test_tool_checks_reach_the_wire() -> None:
    check = ToolCheck(0, "c1", "f", Verdict.MALFORMED, "missing", "/a", "missing_argument", "ab" * 32)
    proto = verification_to_proto(Verification(Verdict.MALFORMED, "x", tool_checks=(check,)))
    assert proto.tool_checks[0].reason == "missing_argument"
    assert proto.tool_checks[0].pointer == "/a"
    assert proto.tool_checks[0].schema_digest == "ab" * 32
    assert proto.tool_checks[0].verdict == V.VERIFY_VERDICT_MALFORMED


async def test_the_decision_record_names_each_calls_schema_digest(tmp_path: Path) -> None:
    path = tmp_path / "decisions.log"
    async with serving(make_config(decision_log="file", decision_log_path=str(path))) as running:
        tools = typed_tools(provider_tools())
        bad = ToolCall("c2", "get_stock_price", "{}")
        answer = await running.stub.VerifyResponse(
            V.VerifyResponseRequest(**typed("", [CALL, bad], "tool_calls"), tools=tools)
        )
    (record,) = read_log(path)
    digests = [check.schema_digest for check in answer.tool_checks]
    assert record["result"]["tool_calls"] == [
        {"verdict": "ok", "reason": "", "schema_digest": digests[0]},
        {"verdict": "malformed", "reason": "missing_argument", "schema_digest": digests[1]},
    ]
    assert "Boston" not in path.read_text()
