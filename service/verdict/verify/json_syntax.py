"""JSON blocks, checked by `json.loads` (RFC 8259), with the leniencies real Markdown needs (reference §3.1, §6.6).

- `//` and `/* */` comments (JSONC) or `...` / `…` placeholders outside strings, *where the parser failed*:
  unverifiable, not malformed. People annotate and elide examples; a strict parser cannot say whether the rest is
  right. A parser that fails before the first comment or placeholder found a real error: malformed.
- A bare `"key": value` fragment (members cut out of a bigger object, a trailing comma allowed) is retried wrapped in
  `{}`.
- Several values one after another (JSON Lines, or two documents in one block) are accepted when each one parses.
- `NaN`, `Infinity` and `-Infinity` are malformed: Python accepts them, but RFC 8259 does not, and neither do
  JavaScript's `JSON.parse`, Go's encoding/json or serde_json, which is where the answer is likely headed.
- Duplicate keys are accepted: RFC 8259 says names SHOULD be unique, not MUST, and parsers disagree on what they mean;
  that is a semantic question, not a structural one.
- A parser that gives up (RecursionError on deep nesting, the 4,300-digit integer limit) makes the block unverifiable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from verdict.verify.excuses import near
from verdict.verify.model import CodeCheck, Verdict

__all__ = ["check_json"]

_STRING_OR_MARK = re.compile(r'"(?:[^"\\\n]|\\.)*"?|(//|/\*)|(\.\.\.|…)')
_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\\n]|\\.)*"?|(-?Infinity|NaN)')
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class _Constant(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _reject_constant(name: str) -> object:
    raise _Constant(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def check_json(code: str) -> CodeCheck:
    """The verdict on one JSON block's code. Pure; never raises."""
    try:
        _DECODER.decode(code)
    except json.JSONDecodeError as error:
        return _lenient(code, error)
    except (_Constant, RecursionError, MemoryError, ValueError) as error:
        return _failed(code, error)
    return CodeCheck(Verdict.OK)


def _lenient(code: str, error: json.JSONDecodeError) -> CodeCheck:
    excused = _excused(code, error.pos)
    if excused is not None:
        return excused
    if error.msg != "Extra data":
        return _failed(code, error)
    wrapped = None
    if code.lstrip().startswith('"'):
        members = code.rstrip().removesuffix(",")

        def decode_members() -> None:
            try:
                _DECODER.decode("{" + members + "}")
            except json.JSONDecodeError as error:  # report the position in the block, not in the wrapped text
                raise json.JSONDecodeError(error.msg, members, max(error.pos - 1, 0)) from None

        wrapped = _attempt(code, decode_members)
        if wrapped.verdict is Verdict.OK:
            return CodeCheck(Verdict.OK, 'a "key": value fragment, checked wrapped in {}')
        if wrapped.excuse_at is not None:  # an excerpt's `...` where the member list failed: the same excuse
            excused = _excused(code, wrapped.excuse_at)
            if excused is not None:
                return excused
    values = 0

    def decode_each() -> None:
        nonlocal values
        position = _skip_whitespace(code, 0)
        while position < len(code):
            _, position = _DECODER.raw_decode(code, position)
            values += 1
            position = _skip_whitespace(code, position)

    sequence = _attempt(code, decode_each)
    if sequence.verdict is Verdict.OK:
        return CodeCheck(Verdict.OK, f"{values} JSON values in sequence (JSON Lines)")
    return (wrapped or sequence).check  # a block that opens with a string reads as a fragment first: its error


def _excused(code: str, position: int) -> CodeCheck | None:
    """Unverifiable when a comment or a placeholder stands where the parser failed (at `position`), else None."""
    at = _skip_whitespace(code, position)
    for match in _STRING_OR_MARK.finditer(code, 0, at + 4):
        if not (match.group(1) or match.group(2)):
            continue
        if not near(match.start(), match.end(), at):
            break  # the parser failed before the first comment or placeholder: that is a real error
        if match.group(1):
            return CodeCheck(
                Verdict.UNVERIFIABLE, "JSON with comments (JSONC) is not strict JSON", _line_of(code, match)
            )
        if match.group(2):
            return CodeCheck(
                Verdict.UNVERIFIABLE, f"placeholder {match.group(2)!r} where JSON should be", _line_of(code, match)
            )
    return None


@dataclass(frozen=True)
class _Attempt:
    check: CodeCheck
    excuse_at: int | None = None
    """Where a JSONDecodeError stopped the attempt (an offset in the block), for the excuses."""

    @property
    def verdict(self) -> Verdict:
        return self.check.verdict


def _attempt(code: str, decode: Callable[[], object]) -> _Attempt:
    try:
        decode()
    except json.JSONDecodeError as error:
        return _Attempt(_failed(code, error), error.pos)
    except (_Constant, RecursionError, MemoryError, ValueError) as error:
        return _Attempt(_failed(code, error))
    return _Attempt(CodeCheck(Verdict.OK))


def _failed(code: str, error: BaseException) -> CodeCheck:
    if isinstance(error, json.JSONDecodeError):
        return CodeCheck(Verdict.MALFORMED, f"{error.msg} (column {error.colno})", error.lineno)
    if isinstance(error, _Constant):
        line = next((_line_of(code, m) for m in _STRING_OR_CONSTANT.finditer(code) if m.group(1)), 0)
        return CodeCheck(Verdict.MALFORMED, f"{error.name} is not valid JSON (RFC 8259 has no NaN or Infinity)", line)
    reason = type(error).__name__ if isinstance(error, RecursionError | MemoryError) else str(error)
    return CodeCheck(Verdict.UNVERIFIABLE, f"the parser gave up, not a syntax error: {reason}")


def _skip_whitespace(code: str, position: int) -> int:
    match = _WHITESPACE.match(code, position)
    return match.end() if match else position


def _line_of(code: str, match: re.Match[str]) -> int:
    return code.count("\n", 0, match.start()) + 1
