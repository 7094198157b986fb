"""Tool calls left in the text, by style; and prose that shows the markup or a JSON example is not charged."""

from __future__ import annotations

import pytest

from verdict.verify.tool_markup import MARKUP_STYLES, find_markup

NAMES = ["get_weather", "search"]
CALL = '{"name": "get_weather", "arguments": {"location": "Paris"}}'


@pytest.mark.parametrize(
    ("text", "style"),
    [
        (f"<tool_call>\n{CALL}\n</tool_call>", "tool_call_tag"),
        (f"[TOOL_CALLS][{CALL}]", "mistral_tool_calls"),
        ('<|python_tag|>{"name": "get_weather", "parameters": {}}', "python_tag"),
        ('<function=get_weather>{"location": "Paris"}</function>', "llama_function"),
        ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather", "deepseek_tool_calls"),
        ("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0", "kimi_tool_calls"),
        (f"<|tool_call|>[{CALL}]", "tool_call_token"),
        ('<|channel|>commentary to=functions.get_weather <|message|>{"location": "Paris"}', "harmony_recipient"),
        (f"functools[{CALL}]", "functools"),
        ('<function_calls>\n<invoke name="get_weather">', "function_calls_xml"),
        ("<start_function_call>call:get_weather{location:Paris}", "function_gemma"),
        (f"Sure.\n\n```json\n{CALL}\n```", "fenced_json_call"),
        (CALL, "bare_json_call"),
        ('{"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}', "bare_json_call"),
    ],
)
def test_each_style_is_found(text: str, style: str) -> None:
    found = find_markup(text, NAMES)
    assert [markup.style for markup in found][:1] == [style]


def test_every_marker_style_has_a_case_above() -> None:
    assert len({style.style for style in MARKUP_STYLES}) == len(MARKUP_STYLES)


@pytest.mark.parametrize(
    "text",
    [
        "Hermes models wrap calls in `<tool_call>` tags and Llama uses `<|python_tag|>`.",
        "```\n<tool_call>\n" + CALL + "\n</tool_call>\n```",
        '```json\n{"name": "get_weather", "arguments": {}, "description": "an example"}\n```',
        '```json\n{"name": "not_declared", "arguments": {}}\n```',
        '```python\nprint({"name": "get_weather", "arguments": {}})\n```',
        '{"name": "Paris", "population": 2100000}',
        "The weather in Paris is sunny, 21 °C.",
        "to=functions.unknown_tool is how harmony addresses a recipient",
    ],
)
def test_prose_that_shows_markup_or_json_is_not_charged(text: str) -> None:
    assert find_markup(text, NAMES) == []


def test_no_declared_tools_no_markup() -> None:
    assert find_markup(f"<tool_call>{CALL}</tool_call>", []) == []


def test_lines_are_reported() -> None:
    (markup,) = find_markup(f"one\ntwo\n<tool_call>\n{CALL}\n</tool_call>", NAMES)
    assert markup.line == 3
