"""Provider JSON read into a turn: each documented shape (response and message), what is skipped, and refusals that
name the field and what was expected."""

from __future__ import annotations

import json

import pytest

from verdict.errors import InvalidArgument
from verdict.verify.tool_shapes import read_message, read_tools


def test_openai_chat_message_alone_and_the_legacy_function_call() -> None:
    turn = read_message(
        json.dumps({"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}})
    )
    assert (turn.shape, turn.text, [c.name for c in turn.tool_calls]) == ("openai_chat", "", ["f"])
    parts = read_message(json.dumps({"role": "assistant", "content": [{"type": "text", "text": "hi"}]}))
    assert parts.text == "hi"


def test_openai_responses_output_array_skips_reasoning_and_builtins() -> None:
    output = [
        {"type": "reasoning", "id": "rs", "summary": []},
        {"type": "web_search_call", "id": "ws", "status": "completed"},
        {"type": "function_call", "id": "fc", "call_id": "call_9", "name": "f", "arguments": '{"a": 1}'},
    ]
    turn = read_message(json.dumps(output))
    assert (turn.shape, [(c.id, c.name) for c in turn.tool_calls]) == ("openai_responses", [("call_9", "f")])


def test_anthropic_input_streamed_as_text_is_checked_as_written() -> None:
    message = {"role": "assistant", "content": [{"type": "thinking", "thinking": "…", "signature": "x"},
               {"type": "tool_use", "id": "toolu_1", "name": "f", "input": '{"a": "cut'}]}  # fmt: skip
    turn = read_message(json.dumps(message))
    assert (turn.shape, turn.tool_calls[0].arguments) == ("anthropic_messages", '{"a": "cut')


def test_gemini_snake_case_and_thought_parts() -> None:
    content = {"role": "model", "parts": [{"text": "thinking…", "thought": True}, {"text": "Done."},
               {"function_call": {"name": "f", "args": {"a": 1}}}]}  # fmt: skip
    turn = read_message(json.dumps({"candidates": [{"content": content, "finish_reason": "STOP"}]}))
    assert (turn.shape, turn.text, turn.finish_reason) == ("gemini", "Done.", "STOP")
    assert json.loads(turn.tool_calls[0].arguments) == {"a": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "expected an OpenAI Chat Completions"),
        ('{"hello": 1}', "expected an OpenAI Chat Completions"),
        ("{", "not JSON"),
        ('{"choices": [{"message": {"role": "assistant", "tool_calls": [{"function": {"name": 3}}]}}]}', "name"),
        ('{"choices": []}', "0 choices"),
    ],
)
def test_an_unknown_or_broken_shape_names_message_json(text: str, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message) as raised:
        read_message(text)
    assert raised.value.field == "message_json"


def test_tools_of_every_provider_in_one_array() -> None:
    tools = read_tools(json.dumps([
        {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}, "strict": True}},
        {"type": "function", "name": "b", "parameters": {"type": "object"}},
        {"name": "c", "input_schema": {"type": "object"}},
        {"type": "bash_20250124", "name": "bash"},
        {"functionDeclarations": [{"name": "d", "parametersJsonSchema": {"type": "object"}}]},
        {"function_declarations": [{"name": "e"}]},
        {"googleSearch": {}},
        {"type": "web_search"},
    ]))  # fmt: skip
    assert [(t.name, t.strict) for t in tools] == [("a", True), ("b", False), ("c", False), ("bash", False),
                                                   ("d", False), ("e", False)]  # fmt: skip
    assert tools[0].field == "tools_json[0].function.parameters"
    assert tools[4].field == "tools_json[4].functionDeclarations[0].parametersJsonSchema"


@pytest.mark.parametrize("text", ['{"tools": []}', "[1]", '[{"type": "function", "function": {"name": ""}}]',
                                  '[{"name": "c", "input_schema": "object"}]'])  # fmt: skip
def test_tools_json_that_is_not_a_tools_array_is_refused(text: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        read_tools(text)
    assert raised.value.field == "tools_json"
