"""Tool calls left in the text: the model called a tool in its own markup and the serving stack did not parse it, so
the orchestrator sees prose and no call, and the agent loop silently ends. Pure: no I/O, no clock.

Only read when tools were declared for the turn (a turn without tools cannot have meant to call one). Each style is
one record (`MarkupStyle`): the chat-template markers of the open-weight models' tool formats, as their templates
spell them, and the JSON shapes models emit when the template asks for JSON:

- markers: Hermes / Qwen `<tool_call>`, Mistral `[TOOL_CALLS]`, Llama 3.1+ `<|python_tag|>` and
  `<function=name>`, DeepSeek `<｜tool▁calls▁begin｜>`, Kimi `<|tool_calls_section_begin|>`, Phi-4 / Granite
  `<|tool_call|>`, gpt-oss (harmony) `to=functions.name`, FireFunction `functools[`, Claude's legacy XML
  `<function_calls>` / `<invoke name=`, FunctionGemma `<start_function_call>`;
- JSON: a fenced block, or the whole text, that is a call object (or a list of them) naming a declared tool:
  `{"name": "get_weather", "arguments": {...}}` (also `parameters`, `args`, `input`), or OpenAI's own
  `{"type": "function", "function": {...}}`.

What keeps prose that merely shows such things from being charged (measured on real answers, docs/verification.md):
markers inside inline code (`` `<tool_call>` ``) or inside a fenced block are not calls; a marker must be followed
by what its format puts after it (JSON, a name); a JSON object is a call only when its keys are exactly a call's keys
and its name is a declared tool, so a JSON example with other keys, or naming a tool that was not declared, is prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MARKUP_STYLES", "Markup", "MarkupStyle", "find_markup"]


@dataclass(frozen=True)
class MarkupStyle:
    """One way a model writes a tool call into its text: `style` is the stable name reported, `pattern` finds it (a
    group `name`, when present, captures the called tool), `family` says whose format it is."""

    style: str
    family: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Markup:
    """A tool call found in the text: its style, the tool it names (when the markup says), its one-based line."""

    style: str
    family: str
    name: str
    line: int


MARKUP_STYLES: tuple[MarkupStyle, ...] = (
    MarkupStyle("tool_call_tag", "Hermes / Qwen", re.compile(r"<tool_call>\s*(?:[{\[]|<function=)")),
    MarkupStyle("mistral_tool_calls", "Mistral", re.compile(r"\[TOOL_CALLS\]\s*(?:[{\[]|(?P<name>[\w.-]+))")),
    MarkupStyle("python_tag", "Llama 3.1+", re.compile(r"<\|python_tag\|>")),
    MarkupStyle("llama_function", "Llama 3.1+", re.compile(r"<function=(?P<name>[\w.-]+)>\s*\{")),
    MarkupStyle("deepseek_tool_calls", "DeepSeek", re.compile(r"<｜tool▁calls?▁begin｜>")),
    MarkupStyle("kimi_tool_calls", "Kimi", re.compile(r"<\|tool_calls?_section_begin\|>|<\|tool_call_begin\|>")),
    MarkupStyle("tool_call_token", "Phi-4 / Granite", re.compile(r"<\|tool_call\|>\s*[{\[]")),
    MarkupStyle("harmony_recipient", "gpt-oss", re.compile(r"to=functions\.(?P<name>[\w-]+)\b")),
    MarkupStyle("functools", "FireFunction", re.compile(r"\bfunctools\[\s*\{")),
    MarkupStyle("function_calls_xml", "Claude XML", re.compile(r"<function_calls>|<invoke name=\"(?P<name>[\w.-]+)\"")),
    MarkupStyle("function_gemma", "FunctionGemma", re.compile(r"<start_function_call>")),
)
"""Every marker style; the JSON styles (`fenced_json_call`, `bare_json_call`) are read by `find_markup` itself."""

_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_NAME_KEYS = ("name", "tool", "tool_name", "function", "recipient_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_EXTRA_KEYS = frozenset({"id", "type", "call_id"})
_MAX_JSON_CHARS = 256 * 1024


def find_markup(text: str, declared: Iterable[str]) -> list[Markup]:
    """Every tool call left in `text` as markup, in order; `declared` are the turn's tool names."""
    names = frozenset(declared)
    if not names or not text.strip():
        return []
    lines = text.split("\n")
    prose: list[str] = []
    found: list[Markup] = []
    fence: tuple[str, int, list[str], str] | None = None
    for number, line in enumerate(lines, 1):
        if fence is not None:
            marker, start, body, info = fence
            if line.strip().startswith(marker) and not line.strip().strip(marker[0]):
                found.extend(_fenced(info, body, start, names))
                fence = None
            else:
                body.append(line)
            prose.append("")
            continue
        opening = _FENCE_OPEN.match(line)
        if opening is not None and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = (opening.group(1), number, [], opening.group(2).strip().lower())
            prose.append("")
            continue
        prose.append(line)
    found.extend(_markers("\n".join(prose), names))
    if not found and fence is None:
        whole = _json_call(text.strip(), names)
        if whole is not None:
            found.append(Markup("bare_json_call", "JSON", whole, 1))
    found.sort(key=lambda markup: markup.line)
    return found


def _markers(prose: str, names: frozenset[str]) -> list[Markup]:
    blanked = _CODE_SPAN.sub(lambda match: " " * len(match.group()), prose)
    found = []
    for style in MARKUP_STYLES:
        for match in style.pattern.finditer(blanked):
            name = (match.groupdict().get("name") or "") if match.re.groupindex else ""
            if style.style in ("harmony_recipient", "llama_function") and name not in names:
                continue
            found.append(Markup(style.style, style.family, name, blanked.count("\n", 0, match.start()) + 1))
    return found


def _fenced(info: str, body: Sequence[str], start: int, names: frozenset[str]) -> list[Markup]:
    if info and info.split()[0] not in ("json", "jsonc", "tool_call", "tool_code", "javascript", "js"):
        return []
    name = _json_call("\n".join(body).strip(), names)
    if name is None:
        return []
    return [Markup("fenced_json_call", "JSON", name, start)]


def _json_call(text: str, names: frozenset[str]) -> str | None:
    """The declared tool a JSON call object (or a list of them) names, or None."""
    if not text.startswith(("{", "[")) or len(text) > _MAX_JSON_CHARS:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    items = value if isinstance(value, list) and value else [value]
    called = [_call_name(item, names) for item in items]
    if any(name is None for name in called):
        return None
    return called[0]


def _call_name(item: Any, names: frozenset[str]) -> str | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict) and item.get("type") in ("function", None):
        return _call_name(item["function"], names) if set(item) <= {"function", *_EXTRA_KEYS} else None
    name_keys = [key for key in _NAME_KEYS if key in item]
    argument_keys = [key for key in _ARGUMENT_KEYS if key in item]
    if len(name_keys) != 1 or len(argument_keys) > 1:
        return None
    if set(item) - set(name_keys) - set(argument_keys) - _EXTRA_KEYS:
        return None
    name = item[name_keys[0]]
    if not isinstance(name, str) or name not in names:
        return None
    if argument_keys and not isinstance(item[argument_keys[0]], (dict, str)):
        return None
    return name
