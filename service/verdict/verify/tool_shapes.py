"""Providers' own JSON, read into a turn: `message_json` (a response or its assistant message) and `tools_json` (the
`tools` array as sent). The shape is detected, not declared, so an orchestrator passes what its SDK handed it.

Each provider shape is one record (`SHAPES`: how to recognise it, how to read it). Read are:

- OpenAI Chat Completions: the response (`choices[0].message`, `finish_reason`, `usage.completion_tokens`) or the
  assistant message (`content` as text or parts, `tool_calls[].function`, the legacy `function_call`);
- OpenAI Responses: the response (`output[]` items, `status` / `incomplete_details.reason`,
  `usage.output_tokens`) or its `output` array: `message` items' `output_text`, `function_call` items (`call_id`);
- Anthropic Messages: the response or the assistant message (`content[]` blocks: `text`, `tool_use` with `input`
  as an object, or as the text streamed `partial_json` built, `stop_reason`, `usage.output_tokens`);
- Gemini generateContent: the response (`candidates[0].content.parts`, `finishReason`,
  `usageMetadata.candidatesTokenCount`), a candidate, or the `content` (`parts[]`: `text`, `functionCall`), in the
  REST API's camelCase or the Python SDK's snake_case.

Reasoning (OpenAI `reasoning` items, Anthropic `thinking` blocks, Gemini `thought` parts), server-side tools (web
search, code execution) and custom free-form tools are not the answer's prose or function calls and are skipped.
Structured arguments (Anthropic `input`, Gemini `args`) are serialised as JSON text, so one checker reads every form.
Anything else is INVALID_ARGUMENT naming the field and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verdict.errors import InvalidArgument
from verdict.verify.model import ToolCall, ToolDefinition

__all__ = ["SHAPES", "ProviderTurn", "Shape", "read_message", "read_tools"]

MESSAGE_FIELD = "message_json"
TOOLS_FIELD = "tools_json"

EXPECTED_MESSAGE = (
    "an OpenAI Chat Completions response or message (choices[].message / role+tool_calls), an OpenAI Responses "
    "response or output array (output[] items), an Anthropic Messages response or message (content[] blocks), or a "
    "Gemini generateContent response, candidate or content (candidates[].content.parts)"
)


@dataclass(frozen=True)
class ProviderTurn:
    """What a provider's message says: the text, finish reason, calls and completion tokens, and its shape's name."""

    shape: str
    text: str
    finish_reason: str
    tool_calls: tuple[ToolCall, ...]
    completion_tokens: int


@dataclass(frozen=True)
class Shape:
    """One provider's message shape: `matches` recognises it, `read` reads it (raising InvalidArgument)."""

    name: str
    matches: Callable[[Any], bool]
    read: Callable[[Any], ProviderTurn]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _load(text: str, field: str) -> Any:
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise InvalidArgument(f"{field} is not JSON: {error.msg} at character {error.pos}", field=field) from None
    except (RecursionError, ValueError) as error:
        raise InvalidArgument(f"{field} is not JSON: {type(error).__name__}: {error}"[:300], field=field) from None


def _bad(detail: str, field: str = MESSAGE_FIELD) -> InvalidArgument:
    return InvalidArgument(f"{field}: {detail}", field=field)


def _get(node: Any, *keys: str) -> Any:
    """The first of `keys` present in a dict (camelCase and snake_case spellings of one field)."""
    if not isinstance(node, dict):
        return None
    for key in keys:
        if key in node:
            return node[key]
    return None


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _bad(f"{where} must be a string")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(f"{where} must be an array")
    return value


def _tokens(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32 else 0


def _arguments(value: Any, where: str) -> str:
    """Arguments as a JSON text: a string as it is (what the model wrote), an object serialised."""
    if isinstance(value, str):
        return value
    if value is None:
        return "{}"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    raise _bad(f"{where} must be an object or a JSON text")


def _call(identifier: Any, name: Any, arguments: Any, where: str) -> ToolCall:
    if not isinstance(name, str):
        raise _bad(f"{where}.name must be a string")
    return ToolCall(
        identifier if isinstance(identifier, str) else "", name, _arguments(arguments, f"{where}.arguments")
    )


# --- OpenAI Chat Completions ---------------------------------------------------------------------------------------


def _is_chat(node: Any) -> bool:
    return isinstance(node, dict) and (
        isinstance(node.get("choices"), list)
        or (
            node.get("role") == "assistant"
            and ("tool_calls" in node or "function_call" in node or not isinstance(node.get("content"), list))
        )
    )


def _read_chat(node: dict[str, Any]) -> ProviderTurn:
    finish, tokens, message = "", 0, node
    if "choices" in node:
        choices = node["choices"]
        if len(choices) != 1:
            raise _bad(f"has {len(choices)} choices; send one per call (BatchVerifyResponses for several)")
        choice = choices[0]
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            raise _bad("choices[0].message must be an object")
        message = choice["message"]
        finish = _text(choice.get("finish_reason"), "choices[0].finish_reason")
        tokens = _tokens(_get(node.get("usage"), "completion_tokens"))
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") in ("text", None)
        )
    else:
        text = _text(content, "message.content")
    calls = []
    for index, call in enumerate(_list(message.get("tool_calls"), "message.tool_calls")):
        where = f"message.tool_calls[{index}]"
        if not isinstance(call, dict):
            raise _bad(f"{where} must be an object")
        if call.get("type", "function") != "function":
            continue  # a custom (free-form) tool's input is not JSON
        function = call.get("function")
        if not isinstance(function, dict):
            raise _bad(f"{where}.function must be an object")
        calls.append(_call(call.get("id"), function.get("name"), function.get("arguments"), f"{where}.function"))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        calls.append(_call("", legacy.get("name"), legacy.get("arguments"), "message.function_call"))
    return ProviderTurn("openai_chat", text, finish, tuple(calls), tokens)


# --- OpenAI Responses ----------------------------------------------------------------------------------------------

_RESPONSES_ITEMS = frozenset(
    {"message", "function_call", "reasoning", "web_search_call", "file_search_call", "computer_call",
     "code_interpreter_call", "image_generation_call", "local_shell_call", "mcp_call", "mcp_list_tools",
     "custom_tool_call", "mcp_approval_request"}
)  # fmt: skip


def _is_responses(node: Any) -> bool:
    if isinstance(node, dict):
        return node.get("object") == "response" or (
            isinstance(node.get("output"), list) and "choices" not in node and "content" not in node
        )
    return (
        isinstance(node, list)
        and bool(node)
        and all(isinstance(item, dict) and item.get("type") in _RESPONSES_ITEMS for item in node)
    )


def _read_responses(node: Any) -> ProviderTurn:
    finish, tokens, items = "", 0, node
    if isinstance(node, dict):
        items = _list(node.get("output"), "output")
        status = node.get("status")
        reason = _get(node.get("incomplete_details"), "reason")
        finish = reason if status == "incomplete" and isinstance(reason, str) else (status or "")
        finish = finish if isinstance(finish, str) else ""
        tokens = _tokens(_get(node.get("usage"), "output_tokens"))
    texts, calls = [], []
    for index, item in enumerate(items):
        where = f"output[{index}]"
        if not isinstance(item, dict):
            raise _bad(f"{where} must be an object")
        kind = item.get("type")
        if kind == "message":
            for part in _list(item.get("content"), f"{where}.content"):
                if isinstance(part, dict) and part.get("type") == "output_text":
                    texts.append(_text(part.get("text"), f"{where}.content[].text"))
        elif kind == "function_call":
            identifier = item.get("call_id") or item.get("id")
            calls.append(_call(identifier, item.get("name"), item.get("arguments"), where))
    return ProviderTurn("openai_responses", "".join(texts), finish, tuple(calls), tokens)


# --- Anthropic Messages --------------------------------------------------------------------------------------------

_ANTHROPIC_BLOCKS = frozenset(
    {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
     "mcp_tool_use", "mcp_tool_result", "code_execution_tool_result", "web_fetch_tool_result", "container_upload"}
)  # fmt: skip


def _is_anthropic(node: Any) -> bool:
    if not isinstance(node, dict) or not isinstance(node.get("content"), list):
        return False
    if node.get("type") == "message" or "stop_reason" in node:
        return True
    return node.get("role") == "assistant" and all(
        isinstance(block, dict) and block.get("type") in _ANTHROPIC_BLOCKS for block in node["content"]
    )


def _read_anthropic(node: dict[str, Any]) -> ProviderTurn:
    texts, calls = [], []
    for index, block in enumerate(node["content"]):
        where = f"content[{index}]"
        if not isinstance(block, dict):
            raise _bad(f"{where} must be an object")
        kind = block.get("type")
        if kind == "text":
            texts.append(_text(block.get("text"), f"{where}.text"))
        elif kind == "tool_use":
            calls.append(_call(block.get("id"), block.get("name"), block.get("input"), where))
    finish = node.get("stop_reason")
    tokens = _tokens(_get(node.get("usage"), "output_tokens"))
    return ProviderTurn(
        "anthropic_messages", "".join(texts), finish if isinstance(finish, str) else "", tuple(calls), tokens
    )


# --- Gemini generateContent ----------------------------------------------------------------------------------------


def _is_gemini(node: Any) -> bool:
    return isinstance(node, dict) and (
        isinstance(node.get("candidates"), list)
        or isinstance(node.get("parts"), list)
        or isinstance(_get(node.get("content"), "parts"), list)
    )


def _read_gemini(node: dict[str, Any]) -> ProviderTurn:
    finish, tokens, candidate = "", 0, node
    if "candidates" in node:
        candidates = node["candidates"]
        if len(candidates) != 1:
            raise _bad(f"has {len(candidates)} candidates; send one per call (BatchVerifyResponses for several)")
        candidate = candidates[0]
        tokens = _tokens(
            _get(_get(node, "usageMetadata", "usage_metadata"), "candidatesTokenCount", "candidates_token_count")
        )
    content = candidate.get("content", candidate) if isinstance(candidate, dict) else None
    if "parts" not in (content or {}) and isinstance(candidate, dict) and "content" in candidate:
        content = candidate["content"]
    reason = _get(candidate, "finishReason", "finish_reason")
    finish = reason if isinstance(reason, str) else ""
    texts, calls = [], []
    for index, part in enumerate(_list(_get(content, "parts"), "content.parts")):
        where = f"content.parts[{index}]"
        if not isinstance(part, dict):
            raise _bad(f"{where} must be an object")
        if "text" in part and not part.get("thought"):
            texts.append(_text(part["text"], f"{where}.text"))
        call = _get(part, "functionCall", "function_call")
        if isinstance(call, dict):
            calls.append(_call(call.get("id"), call.get("name"), call.get("args"), f"{where}.functionCall"))
    return ProviderTurn("gemini", "".join(texts), finish, tuple(calls), tokens)


SHAPES: tuple[Shape, ...] = (
    Shape("openai_chat", _is_chat, _read_chat),
    Shape("openai_responses", _is_responses, _read_responses),
    Shape("anthropic_messages", _is_anthropic, _read_anthropic),
    Shape("gemini", _is_gemini, _read_gemini),
)
"""Every provider shape, tried in order; the first that recognises the JSON reads it."""


def read_message(text: str) -> ProviderTurn:
    """The turn a provider's response or assistant message describes. Raises InvalidArgument naming message_json."""
    node = _load(text, MESSAGE_FIELD)
    for shape in SHAPES:
        if shape.matches(node):
            return shape.read(node)
    raise _bad(f"is not a shape this server reads; expected {EXPECTED_MESSAGE}")


# --- tools ---------------------------------------------------------------------------------------------------------


def read_tools(text: str) -> tuple[ToolDefinition, ...]:
    """The function tools a provider's `tools` array declares (OpenAI Chat and Responses, Anthropic, Gemini, mixed),
    each with the field it came from. Built-in tools without a function schema are skipped, except Anthropic's
    named ones (`bash`, `str_replace_based_edit_tool`), whose calls come back as `tool_use` and are checked as objects.
    Raises InvalidArgument naming tools_json."""
    node = _load(text, TOOLS_FIELD)
    if not isinstance(node, list):
        raise _bad("must be the JSON array of tools sent to the provider", TOOLS_FIELD)
    tools: list[ToolDefinition] = []
    for index, entry in enumerate(node):
        where = f"{TOOLS_FIELD}[{index}]"
        if not isinstance(entry, dict):
            raise _bad(f"[{index}] must be an object", TOOLS_FIELD)
        declarations = _get(entry, "functionDeclarations", "function_declarations")
        if isinstance(entry.get("function"), dict):
            function = entry["function"]
            tools.append(_tool(function, "parameters", f"{where}.function", bool(function.get("strict"))))
        elif declarations is not None:
            key = "functionDeclarations" if "functionDeclarations" in entry else "function_declarations"
            if not isinstance(declarations, list):
                raise _bad(f"[{index}].{key} must be an array", TOOLS_FIELD)
            for number, declaration in enumerate(declarations):
                if not isinstance(declaration, dict):
                    raise _bad(f"[{index}].{key}[{number}] must be an object", TOOLS_FIELD)
                schema_key = "parametersJsonSchema" if "parametersJsonSchema" in declaration else "parameters"
                tools.append(_tool(declaration, schema_key, f"{where}.{key}[{number}]", False))
        elif "input_schema" in entry:
            tools.append(_tool(entry, "input_schema", where, bool(entry.get("strict"))))
        elif entry.get("type") == "function":
            tools.append(_tool(entry, "parameters", where, bool(entry.get("strict"))))
        elif isinstance(entry.get("name"), str) and isinstance(entry.get("type"), str):
            tools.append(ToolDefinition(entry["name"], field=where))  # an Anthropic-defined tool (bash, text editor)
    return tuple(tools)


def _tool(node: dict[str, Any], schema_key: str, where: str, strict: bool) -> ToolDefinition:
    name = node.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"{where}.name must be a non-empty string", field=TOOLS_FIELD)
    schema = node.get(schema_key)
    if schema is not None and not isinstance(schema, (dict, bool)):
        raise InvalidArgument(f"{where}.{schema_key} must be a JSON Schema object", field=TOOLS_FIELD)
    description = node.get("description")
    parameters = "" if schema is None else json.dumps(schema, ensure_ascii=False)
    return ToolDefinition(
        name, description if isinstance(description, str) else "", parameters, strict, f"{where}.{schema_key}"
    )
