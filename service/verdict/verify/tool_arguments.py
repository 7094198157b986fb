"""A tool call's arguments as strict JSON, and, when they are not, the breakage named. Pure: no I/O, no clock.

Strict means what the tool's own parser will demand: RFC 8259 (no NaN or Infinity, which Python's `json` accepts
and JavaScript's `JSON.parse`, Go and serde_json refuse), no duplicate keys (JSON parsers disagree on which value wins,
so the tool may not see the value the model meant), no raw control characters inside strings, and an object at the
top. A text that fails is named by the first thing its parser tripped over, because "not JSON" tells an orchestrator
nothing it can fix and the real failures of tool-calling models are few and recognisable: Python literals (`True`,
`None`, single quotes), trailing commas, unquoted keys, an extra closing brace, a literal backslash-n between tokens
(the arguments escaped twice), the arguments encoded twice as a JSON string, a Markdown fence around them.

A text that is a viable prefix of a JSON value (every token so far legal, only the end missing) was cut off: with a
length finish reason that is a truncation (`Parsed.cut`); the caller decides, since only it knows the finish reason.
Whether the text is such a prefix is decided by completing it (closing the open string, literal, number and
brackets) and parsing the completion strictly, so the judgement is the parser's, not a hand-written grammar's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ArgumentsError", "Parsed", "parse_arguments"]


@dataclass(frozen=True)
class ArgumentsError:
    """Why a call's arguments are not a strict JSON object: a stable `reason` and a detail a person can act on."""

    reason: str
    detail: str


@dataclass(frozen=True)
class Parsed:
    """The arguments as a Python value (`value`, a dict when `error` is None), or the error; `cut` when the text is a
    viable prefix of JSON that ends before its value does."""

    value: Any = None
    error: ArgumentsError | None = None
    cut: bool = False


class _Constant(ValueError):
    pass


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


_STRICT = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique)
_LENIENT = json.JSONDecoder(parse_constant=_reject_constant)
_FENCE = re.compile(r"\A\s*(```|~~~)[^\n]*\n(?P<body>.*?)\n?\s*\1\s*\Z", re.DOTALL)
_PYTHON_CONSTANT = re.compile(r"(True|False|None)\b")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_PARTIAL_LITERAL = re.compile(r"(?<![\w.])(t|tr|tru|f|fa|fal|fals|n|nu|nul)\Z")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_SHOW = 40


def parse_arguments(text: str) -> Parsed:
    """The arguments parsed strictly, or the named breakage. Never raises."""
    if not text.strip():
        return Parsed(error=ArgumentsError("empty_arguments", "the arguments are empty; a JSON object was expected"))
    try:
        value = _STRICT.decode(text)
    except _Duplicate as duplicate:
        return Parsed(
            error=ArgumentsError(
                "duplicate_key", f"the key {duplicate.key[:_SHOW]!r} appears twice; parsers disagree on which wins"
            )
        )
    except _Constant as constant:
        return Parsed(
            error=ArgumentsError(
                "non_finite_number", f"{constant} is not JSON (RFC 8259 has no NaN or Infinity); use null or a number"
            )
        )
    except json.JSONDecodeError as error:
        return _broken(text, error)
    except (RecursionError, MemoryError, ValueError) as error:
        return Parsed(error=ArgumentsError("not_json", f"the arguments cannot be parsed: {type(error).__name__}"))
    if isinstance(value, dict):
        return Parsed(value)
    if isinstance(value, str) and isinstance(_quiet(value), dict):
        return Parsed(
            error=ArgumentsError(
                "double_encoded",
                "the arguments are a JSON string holding a JSON object (encoded twice); send the object",
            )
        )
    kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
    return Parsed(error=ArgumentsError("not_object", f"the arguments are {kind}; a JSON object was expected"))


def _quiet(text: str) -> Any:
    try:
        return _LENIENT.decode(text)
    except (ValueError, RecursionError):
        return None


def _broken(text: str, error: json.JSONDecodeError) -> Parsed:
    if is_viable_prefix(text):
        return Parsed(
            error=ArgumentsError("incomplete", f"the arguments end mid-value at character {len(text)}"), cut=True
        )
    fenced = _FENCE.match(text)
    if fenced is not None and isinstance(_quiet(fenced.group("body")), dict):
        return Parsed(error=ArgumentsError("fenced", "the arguments are wrapped in a Markdown code fence"))
    at = error.pos
    rest = text[at:]
    before = text[:at].rstrip()
    where = f"at character {at}"
    if error.msg == "Extra data":
        if not rest.strip().strip("}]").strip():
            extra = rest.strip()
            return Parsed(error=ArgumentsError("extra_brace", f"{len(extra)} extra closing {extra[:1]!r} {where}"))
        return Parsed(error=ArgumentsError("extra_data", f"more text after the JSON object {where}: {_shown(rest)}"))
    if error.msg.startswith("Invalid control character"):
        return Parsed(
            error=ArgumentsError(
                "control_character", f"a raw control character inside a string {where}; JSON needs it escaped"
            )
        )
    if rest.startswith("'"):
        return Parsed(error=ArgumentsError("single_quotes", f"single quotes {where}; JSON strings use double quotes"))
    constant = _PYTHON_CONSTANT.match(rest)
    if constant is not None:
        spelling = {"True": "true", "False": "false", "None": "null"}[constant.group(1)]
        return Parsed(
            error=ArgumentsError("python_literal", f"Python's {constant.group(1)} {where}; JSON spells it {spelling}")
        )
    if error.msg.startswith("Illegal trailing comma") or (rest[:1] in "}]" and before.endswith(",")):
        closer = rest.lstrip(", \t\r\n")[:1]
        return Parsed(error=ArgumentsError("trailing_comma", f"a trailing comma before {closer!r} {where}"))
    if rest.startswith("\\"):
        return Parsed(
            error=ArgumentsError(
                "stray_escape",
                f"a literal backslash escape ({rest[:2]!r}) between tokens {where}: the arguments were escaped twice",
            )
        )
    key = _IDENTIFIER.match(rest)
    if error.msg.startswith("Expecting property name") and key is not None:
        return Parsed(error=ArgumentsError("unquoted_key", f"the key {key.group()[:_SHOW]!r} is not quoted {where}"))
    return Parsed(error=ArgumentsError("not_json", f"not JSON {where}: {error.msg}, near {_shown(rest)}"))


def _shown(rest: str) -> str:
    return repr(rest[:_SHOW]) + ("…" if len(rest) > _SHOW else "")


def is_viable_prefix(text: str) -> bool:
    """Whether `text` could be the start of a strict JSON value that was cut off (not complete, not wrong).

    The text is completed (the open string closed, a partial literal or number finished, a dangling `,` dropped or
    `:` given a value, a key given a value, the open brackets closed) and the completion parsed strictly.
    """
    stack: list[str] = []
    in_string = False
    escape_at = -1
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if in_string:
            if char == "\\":
                escape_at = index
                index += 2
                continue
            if char == '"':
                in_string = False
            index += 1
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and (not stack or stack.pop() != char):
            return False
        index += 1
    if not stack and not in_string:
        return False  # a complete value (or a bare scalar): nothing was cut
    closers = "".join(reversed(stack))
    heads: list[str]
    if in_string:
        head = text
        if escape_at >= 0 and (
            escape_at == length - 1 or re.fullmatch(r"\\u[0-9a-fA-F]{0,3}", text[escape_at:]) is not None
        ):
            head = text[:escape_at]
        heads = [head + '"']
    else:
        head = text.rstrip()
        heads = [head]
        if head.endswith(","):
            heads = [head[:-1]]
        elif head.endswith(":"):
            heads = [head + "null"]
        elif (literal := _PARTIAL_LITERAL.search(head)) is not None:
            heads.append(head[: literal.start()] + _LITERALS[literal.group(1)[0]])
        elif head.endswith(("-", ".", "e", "E", "+")):
            heads.append(head + "0")
    for candidate in heads:
        for middle in ("", ":null"):
            try:
                _STRICT.decode(candidate + middle + closers)
            except (ValueError, RecursionError):
                continue
            return True
    return False
