"""The tool-call corpus: real function definitions, intact calls generated from their schemas, one-edit breakages.

Definitions: `tools.json`, the functions of the providers' own tool-use documentation (OpenAI function calling and
strict mode, Anthropic tool use, Gemini function calling), in each provider's `tools` shape; plus the self-contained
Kubernetes object schemas that kubernetes-validate ships (real, nested, nullable JSON Schemas, installed with the
dev dependencies). Intact calls are instances generated from each schema (seeded, so the corpus is the same on every
run); each breakage is one edit of a real failure of tool-calling models, applied to an intact call's JSON text.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate

from verdict.verify.model import ToolDefinition
from verdict.verify.tool_shapes import read_tools

HERE = Path(__file__).resolve().parent
KUBERNETES = Path(kubernetes_validate.__file__).resolve().parent / "kubernetes-json-schema" / "v1.31.0-local"


def provider_tools() -> tuple[ToolDefinition, ...]:
    """The providers' documented tools (20, mixed shapes), as one `tools_json` array reads them."""
    return read_tools((HERE / "tools.json").read_text())


def provider_tools_json() -> str:
    return (HERE / "tools.json").read_text()


def kubernetes_tools(limit: int = 150) -> tuple[ToolDefinition, ...]:
    """Kubernetes object schemas without `$ref` (self-contained), each as a tool named after its file."""
    tools = []
    for path in sorted(KUBERNETES.glob("*.json")):
        text = path.read_text()
        if "$ref" in text or '"pattern"' in text:
            continue
        schema = json.loads(text)
        if schema.get("type") not in ("object", ["object", "null"]) or not schema.get("properties"):
            continue
        schema["type"] = "object"
        name = path.stem.replace("-", "_").replace(".", "_")[:64]
        tools.append(ToolDefinition(name, parameters=json.dumps(schema)))
        if len(tools) >= limit:
            break
    return tuple(tools)


def instance(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value valid against `schema` (the subset real tool schemas use), optional members included at random."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice([value for value in schema["enum"] if value is not None] or [None])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return instance(schema[key][0], rng, depth)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = kind.lower()
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        value = {}
        for name, sub in properties.items():
            if name in required or (depth < 3 and rng.random() < 0.5):
                value[name] = instance(sub, rng, depth + 1)
        if not properties and schema.get("additionalProperties") not in (False, None) and rng.random() < 0.5:
            value["key"] = instance(schema["additionalProperties"], rng, depth + 1)
        return value
    if kind == "array":
        count = max(schema.get("minItems", 0), rng.randint(1, 3) if depth < 3 else 0)
        return [instance(schema.get("items", {"type": "string"}), rng, depth + 1) for _ in range(count)]
    if kind == "string":
        return rng.choice(["Paris, France", "AAPL", "ord_4711", "2024-07-29", "olive_green", "x", 'héllo "quoted"'])
    if kind == "integer":
        low, high = schema.get("minimum", 0), schema.get("maximum", 1000)
        return rng.randint(int(low), int(high))
    if kind == "number":
        return round(rng.uniform(schema.get("minimum", 0), schema.get("maximum", 1)), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    return None


@dataclass(frozen=True)
class Intact:
    """One intact call: its tool, its arguments, and the schema they were generated from."""

    tool: ToolDefinition
    arguments: dict[str, Any]
    schema: dict[str, Any]


def intact_calls(tools: tuple[ToolDefinition, ...], per_tool: int, seed: int = 20) -> Iterator[Intact]:
    rng = random.Random(seed)
    for tool in tools:
        schema = _schema(tool)
        for _ in range(per_tool):
            yield Intact(tool, instance(schema, rng), schema)


def _schema(tool: ToolDefinition) -> dict[str, Any]:
    schema = json.loads(tool.parameters) if tool.parameters else {"type": "object"}
    return _lower(schema)


def _lower(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_lower(item) for item in node]
    return node


Breakage = Callable[[Intact, random.Random], "tuple[str, str] | None"]
"""An edit of an intact call: (the call's name, its arguments text), or None when it does not apply to this call."""


def _text(call: Intact) -> str:
    return json.dumps(call.arguments, ensure_ascii=False)


def _first_key(call: Intact) -> str | None:
    return next(iter(call.arguments), None)


def _extra_brace(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    return call.tool.name, _text(call) + "}"


def _single_quotes(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    text = _text(call)
    return (call.tool.name, text.replace('"', "'")) if '"' in text else None


def _python_literal(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    text = _text(call)
    for json_spelling, python in ((": true", ": True"), (": false", ": False"), (": null", ": None")):
        if json_spelling in text:
            return call.tool.name, text.replace(json_spelling, python, 1)
    return None


def _trailing_comma(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    text = _text(call)
    return (call.tool.name, text[:-1] + ",}") if call.arguments else None


def _unquoted_key(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    key = _first_key(call)
    if key is None or not key.isidentifier():
        return None
    return call.tool.name, _text(call).replace(f'"{key}"', key, 1)


def _stray_escape(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    return (call.tool.name, "{\\n" + _text(call)[1:]) if call.arguments else None


def _duplicate_key(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    key = _first_key(call)
    if key is None:
        return None
    value = json.dumps(call.arguments[key], ensure_ascii=False)
    return call.tool.name, "{" + json.dumps(key) + ": " + value + ", " + _text(call)[1:]


def _non_finite(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    for key, value in call.arguments.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return call.tool.name, _with(call, key, "NaN")
    return None


def _with(call: Intact, key: str, raw: str) -> str:
    """The call's JSON with the value of `key` spelled `raw` (something json.dumps would never write)."""
    marker = "\u0000raw\u0000"
    return json.dumps({**call.arguments, key: marker}, ensure_ascii=False).replace(json.dumps(marker), raw)


def _unknown_tool(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    return call.tool.name + "_v2", _text(call)


def _missing_argument(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    required = [name for name in call.schema.get("required", []) if name in call.arguments]
    if not required:
        return None
    name = rng.choice(required)
    return call.tool.name, json.dumps({k: v for k, v in call.arguments.items() if k != name})


def _property(call: Intact, kind: str) -> str | None:
    for name, sub in call.schema.get("properties", {}).items():
        types = sub.get("type") if isinstance(sub, dict) else None
        if name in call.arguments and (types == kind or types == [kind, "null"]) and "enum" not in sub:
            return name
    return None


def _string_for_integer(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    name = _property(call, "integer") or _property(call, "number")
    if name is None:
        return None
    return call.tool.name, json.dumps({**call.arguments, name: str(call.arguments[name])})


def _integer_for_string(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    name = _property(call, "string")
    if name is None:
        return None
    return call.tool.name, json.dumps({**call.arguments, name: 42})


def _array_for_object(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    name = _property(call, "object")
    if name is None:
        return None
    return call.tool.name, json.dumps({**call.arguments, name: [call.arguments[name]]})


def _outside_enum(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    for name, sub in call.schema.get("properties", {}).items():
        if isinstance(sub, dict) and "enum" in sub and name in call.arguments:
            return call.tool.name, json.dumps({**call.arguments, name: "not-one-of-them"})
    return None


def _arguments_as_array(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    return call.tool.name, json.dumps([call.arguments])


def _cut(call: Intact, rng: random.Random) -> tuple[str, str] | None:
    text = _text(call)
    if len(text) < 3:
        return None
    return call.tool.name, text[: rng.randint(1, len(text) - 1)]


BREAKAGES: dict[str, tuple[Breakage, frozenset[str]]] = {
    "extra closing brace": (_extra_brace, frozenset({"extra_brace"})),
    "Python single quotes": (_single_quotes, frozenset({"single_quotes"})),
    "Python True/False/None": (_python_literal, frozenset({"python_literal"})),
    "trailing comma": (_trailing_comma, frozenset({"trailing_comma"})),
    "unquoted key": (_unquoted_key, frozenset({"unquoted_key"})),
    "literal backslash-n between tokens": (_stray_escape, frozenset({"stray_escape"})),
    "duplicate key": (_duplicate_key, frozenset({"duplicate_key"})),
    "NaN": (_non_finite, frozenset({"non_finite_number"})),
    "invented function name": (_unknown_tool, frozenset({"unknown_tool"})),
    "required argument left out": (_missing_argument, frozenset({"missing_argument"})),
    "string where the schema says integer": (_string_for_integer, frozenset({"wrong_type"})),
    "integer where the schema says string": (_integer_for_string, frozenset({"wrong_type"})),
    "array where an object belongs": (_array_for_object, frozenset({"wrong_type"})),
    "value outside the enum": (_outside_enum, frozenset({"not_in_enum"})),
    "arguments an array": (_arguments_as_array, frozenset({"not_object"})),
}
"""Each breakage and the reasons that name it; `CUT` (arguments cut off mid-JSON) is measured apart."""

CUT = _cut

MARKUP: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "tool_call_tag": lambda name, args: (
        "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"
    ),
    "mistral_tool_calls": lambda name, args: "[TOOL_CALLS][" + json.dumps({"name": name, "arguments": args}) + "]",
    "python_tag": lambda name, args: "<|python_tag|>" + json.dumps({"name": name, "parameters": args}),
    "llama_function": lambda name, args: f"<function={name}>" + json.dumps(args) + "</function>",
    "fenced_json_call": lambda name, args: (
        "I'll look that up.\n\n```json\n" + json.dumps({"name": name, "arguments": args}, indent=2) + "\n```"
    ),
    "bare_json_call": lambda name, args: json.dumps({"name": name, "parameters": args}),
    "tool_call_token": lambda name, args: "<|tool_call|>[" + json.dumps({"name": name, "arguments": args}) + "]",
    "harmony_recipient": lambda name, args: (
        f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>" + json.dumps(args)
    ),
    "deepseek_tool_calls": lambda name, args: (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        + name
        + "\n```json\n"
        + json.dumps(args)
        + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
}
"""How each model family leaves a call in its text when the serving stack does not parse it (their chat templates)."""


def prose_texts() -> Iterator[tuple[str, str]]:
    """Real prose that shows JSON and code: the repository's documentation, and the answers of the pinned corpus."""
    root = HERE.parents[2]
    for path in sorted([root / "README.md", *sorted((root / "docs").glob("*.md"))]):
        yield str(path.relative_to(root)), path.read_text()
    yield from corpus_answers()


def corpus_answers(
    languages: frozenset[str] = frozenset({"json", "python", "yaml", "javascript", "typescript"}),
) -> Iterator[tuple[str, str]]:
    """The pinned corpus's real files of some languages as answers: fenced in prose, and (JSON) as the whole text."""
    import lzma

    root = HERE.parents[1] / "corpus" / "verify.jsonl.xz"
    with lzma.open(root, "rt") as rows:
        for line in rows:
            row = json.loads(line)
            if row.get("shape") != "file" or row.get("lang") not in languages:
                continue
            yield (
                row["id"],
                f"Here is the file you asked for:\n\n```{row['lang']}\n{row['text']}\n```\n\nIt runs as is.",
            )
            if row["lang"] == "json":
                yield row["id"] + "-whole", row["text"]
