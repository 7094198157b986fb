"""Comparing JSON values as values, never as text: the one owner of "are these arguments the same".

Tool-call arguments arrive as JSON text, and comparing that text is the classic trajectory-matching bug: `{"a": 1}`
and `{"a":1}` are the same call, and so are `{"a": 1, "b": 2}` and `{"b": 2, "a": 1}`. Every comparison here parses
first. Three strengths:

- `strict_equal`: equal JSON values with equal JSON types, where an integer and a float are different types
  (`1` is not `1.0`) and `true` is never `1` (Python's own `==` says `True == 1`).
- `canonical_equal`: equal JSON values with numbers compared by value (`1` is `1.0`) and strings compared in Unicode
  NFC form (a composed and a decomposed "é" are the same text).
- `subset_of`: every key of the expected object is in the actual one with a canonically equal value, recursively
  through objects; lists and scalars compare canonically.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_JSON_TEXT_CHARS", "NotJson", "canonical_equal", "parse_json_text", "strict_equal", "subset_of"]

MAX_JSON_TEXT_CHARS = 1_000_000
"""Longest argument text parsed: json.loads is linear, but a request-sized text per call times many calls is not."""


class NotJson(ValueError):
    """The text is not one JSON value (or is too long to parse)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_text(text: str) -> Any:
    """One JSON value from `text` (surrounding whitespace allowed). NaN and Infinity, which Python's json accepts and
    JSON does not, are refused, as is text over MAX_JSON_TEXT_CHARS."""
    if len(text) > MAX_JSON_TEXT_CHARS:
        raise NotJson(f"the text is {len(text)} characters; at most {MAX_JSON_TEXT_CHARS} are parsed")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise NotJson(str(exc)) from None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def strict_equal(expected: Any, actual: Any) -> bool:
    """Equal JSON values of equal JSON types: `1` is not `1.0`, `true` is not `1`, key order never matters."""
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, Mapping):
        return expected.keys() == actual.keys() and all(strict_equal(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list):
        return len(expected) == len(actual) and all(strict_equal(e, a) for e, a in zip(expected, actual, strict=True))
    return bool(expected == actual)


def canonical_equal(expected: Any, actual: Any) -> bool:
    """Equal JSON values: numbers by value (`1` is `1.0`), strings in NFC form, key order never matters."""
    if _is_number(expected) and _is_number(actual):
        return bool(expected == actual) or (
            math.isfinite(expected) and math.isfinite(actual) and math.isclose(expected, actual, rel_tol=1e-12)
        )
    if isinstance(expected, str) and isinstance(actual, str):
        return unicodedata.normalize("NFC", expected) == unicodedata.normalize("NFC", actual)
    if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(canonical_equal(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            canonical_equal(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return False


def subset_of(expected: Any, actual: Any) -> bool:
    """Every key of `expected` (an object) is in `actual` with a value that is, recursively, a subset of it; values
    that are not objects compare canonically."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return all(key in actual and subset_of(value, actual[key]) for key, value in expected.items())
    return canonical_equal(expected, actual)
