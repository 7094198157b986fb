"""One turn in every wire form: the typed fields, and each provider's response and `tools` array as its documentation
shows them (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini generateContent).

Arguments that are not a JSON object can only travel where the provider carries the model's text: OpenAI's
`arguments` strings, and Anthropic's `input` as the text a streamed `input_json_delta` built. Gemini returns `args`
already parsed (a call it cannot parse ends the turn with `MALFORMED_FUNCTION_CALL` instead), so `gemini()` is None
for them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from verdict.v1 import verdict_pb2
from verdict.verify.model import ToolCall, ToolDefinition

FINISH = {
    # neutral: (chat, responses status / incomplete reason, anthropic, gemini)
    "stop": ("stop", ("completed", None), "end_turn", "STOP"),
    "tool_calls": ("tool_calls", ("completed", None), "tool_use", "STOP"),
    "length": ("length", ("incomplete", "max_output_tokens"), "max_tokens", "MAX_TOKENS"),
}


def _parsed(arguments: str) -> Any:
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def typed(text: str, calls: Sequence[ToolCall], finish: str) -> dict[str, Any]:
    return {
        "text": text,
        "finish_reason": FINISH[finish][0],
        "tool_calls": [verdict_pb2.ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in calls],
    }


def openai_chat(text: str, calls: Sequence[ToolCall], finish: str) -> str:
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None, "annotations": []}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
        ]
    return json.dumps(
        {
            "id": "chatcmpl-abc123",
            "object": "chat.completion",
            "created": 1741569952,
            "model": "gpt-4.1-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": FINISH[finish][0]}],
            "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99},
            "service_tier": "default",
        }
    )


def openai_responses(text: str, calls: Sequence[ToolCall], finish: str) -> str:
    status, reason = FINISH[finish][1]
    output: list[dict[str, Any]] = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
    ]
    if text:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for index, c in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments,
                "status": "completed",
            }
        )
    return json.dumps(
        {
            "id": "resp_67ccd2bed1ec8190b14f964abc054267",
            "object": "response",
            "created_at": 1741476542,
            "status": status,
            "incomplete_details": {"reason": reason} if reason else None,
            "model": "gpt-4.1-2025-04-14",
            "output": output,
            "usage": {"input_tokens": 36, "output_tokens": 87, "total_tokens": 123},
        }
    )


def anthropic(text: str, calls: Sequence[ToolCall], finish: str) -> str:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for c in calls:
        parsed = _parsed(c.arguments)
        content.append(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": parsed if parsed is not None else c.arguments}
        )
    return json.dumps(
        {
            "id": "msg_01Aq9w938a90dw8q",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": FINISH[finish][2],
            "stop_sequence": None,
            "usage": {"input_tokens": 472, "output_tokens": 89},
        }
    )


def gemini(text: str, calls: Sequence[ToolCall], finish: str) -> str | None:
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"text": text})
    for c in calls:
        parsed = _parsed(c.arguments)
        if parsed is None:
            return None
        parts.append({"functionCall": {"name": c.name, "args": parsed}})
    return json.dumps(
        {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": FINISH[finish][3], "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 119, "candidatesTokenCount": 18, "totalTokenCount": 137},
            "modelVersion": "gemini-2.5-flash",
        }
    )


MESSAGE_FORMS = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
}


def _schema(tool: ToolDefinition) -> Any:
    return json.loads(tool.parameters) if tool.parameters else {"type": "object", "properties": {}}


def typed_tools(tools: Sequence[ToolDefinition]) -> list[verdict_pb2.ToolDefinition]:
    return [
        verdict_pb2.ToolDefinition(name=t.name, description=t.description, parameters=t.parameters, strict=t.strict)
        for t in tools
    ]


def openai_chat_tools(tools: Sequence[ToolDefinition]) -> str:
    return json.dumps(
        [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": _schema(t),
                    "strict": t.strict,
                },
            }
            for t in tools
        ]
    )


def openai_responses_tools(tools: Sequence[ToolDefinition]) -> str:
    return json.dumps(
        [{"type": "web_search"}]
        + [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": _schema(t),
                "strict": t.strict,
            }
            for t in tools
        ]
    )


def anthropic_tools(tools: Sequence[ToolDefinition]) -> str:
    return json.dumps([{"name": t.name, "description": t.description, "input_schema": _schema(t)} for t in tools])


def gemini_tools(tools: Sequence[ToolDefinition]) -> str:
    return json.dumps(
        [
            {
                "functionDeclarations": [
                    {"name": t.name, "description": t.description, "parameters": _schema(t)} for t in tools
                ]
            },
            {"googleSearch": {}},
        ]
    )


TOOLS_FORMS = {
    "openai_chat": openai_chat_tools,
    "openai_responses": openai_responses_tools,
    "anthropic": anthropic_tools,
    "gemini": gemini_tools,
}
