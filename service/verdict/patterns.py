"""Regular expressions from requests, searched under a time bound and off the event loop.

A request's pattern is untrusted: `(a|aa)+$` against a long output backtracks for longer than any caller will wait,
and with the standard `re` module it would hold the interpreter until it finished. Here every search runs in a worker
thread with the `regex` package's `timeout=` (which stops the match itself, so the thread is freed too) and with the
GIL released while matching (`concurrent=True`), so one slow pattern never delays other calls.

Semantics follow little-loops, which used `re`: an invalid pattern is not an error but a literal substring, and
"invalid" means what `re` rejects. So `re` compiles every pattern first (uncached); only what it accepts is searched
with `regex`, whose default VERSION0 mode matches `re`. This keeps `regex`'s extensions out of reach: besides
differing from little-loops (variable-length lookbehind, `\\p{...}`, `(?|...)`), its recursive patterns (`(?R)`,
`(?1)`, `(?&name)`) grow the matcher's stack by hundreds of megabytes a second, which the time bound does not stop
soon enough.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import warnings
from collections.abc import Callable
from typing import Any

import regex

__all__ = [
    "MAX_EXPANSION",
    "PatternTimeout",
    "PatternTooLarge",
    "as_re_means",
    "compile_bounded",
    "findall",
    "search",
    "search_compiled",
]

MAX_EXPANSION = 100_000
"""Most repetition a pattern may ask for: `regex` expands `a{n}` at compile time (about 270 bytes per repeat, and
compiling is not covered by the match timeout), so `a{1000000000}` would exhaust the server's memory."""

_QUANTIFIER = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = "pPNxuUgk"
_OPAQUE_SYNTAX = re.compile(r"\(\?#|\(\?[\w^-]*[xV]")
"""Comments and verbose or version-1 syntax can hide parentheses from a simple scan; such patterns are bounded by
the cruder length-times-counts rule instead."""


_RE_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII
_re_compile: Callable[[str, int], object] = importlib.import_module("re._compiler").compile
"""`re.compile` without its module-level cache, which would keep up to 512 request patterns alive."""
warnings.filterwarnings("ignore", r"Possible (nested set|set \w+( \w+)?) at position \d+$", FutureWarning)
"""`re` warns about `[[` or `--` in a set, once per distinct position: a request's pattern is data, not code, so the
warnings are noise in the server's log (and an ever-growing warnings registry)."""


class PatternTimeout(Exception):
    """Raised when a search runs out of its time bound; the caller turns this into an `error` verdict."""

    def __init__(self, pattern: str, timeout: float, message: str | None = None) -> None:
        super().__init__(message or f"pattern {pattern[:100]!r} did not finish within {timeout:g}s")
        self.pattern = pattern
        self.timeout = timeout


class PatternTooLarge(PatternTimeout):
    """Raised before compiling a pattern whose repetition counts would take more memory than any search may.

    A subclass of PatternTimeout so that callers bounding a search's cost handle both the same way (an `error`).
    """

    def __init__(self, pattern: str, expansion: int) -> None:
        super().__init__(
            pattern,
            0.0,
            f"pattern {pattern[:100]!r} repeats too much (about {expansion} expansions, at most {MAX_EXPANSION})",
        )
        self.expansion = expansion


def _count(digits: str | None) -> int:
    if not digits:
        return 0
    return int(digits) if len(digits) <= 9 else 10**9


def _class_end(pattern: str, start: int) -> int:
    index = start + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "\\" else 1
    return index + 1


def expansion(pattern: str, flags: int = 0) -> int:
    """An upper estimate of how many units `regex` expands the pattern into: nested `{n,m}` counts multiply."""
    if flags & (regex.VERBOSE | regex.V1) or _OPAQUE_SYNTAX.search(pattern):
        product = 1
        for match in _QUANTIFIER.finditer(pattern):
            product = min(product * max(_count(match.group(1)), _count(match.group(2)), 1), 10**12)
        return len(pattern) * product
    totals = [0]
    grand = 0
    last = 1
    index = 0
    while index < len(pattern) and grand <= MAX_EXPANSION:
        char = pattern[index]
        step, added = 1, 1
        if char == "\\":
            step = 2
            if pattern[index + 1 : index + 2] in tuple(_BRACED_ESCAPES) and pattern[index + 2 : index + 3] == "{":
                close = pattern.find("}", index + 2)
                step = (close + 1 - index) if close != -1 else len(pattern) - index
            last = 1
        elif char == "[":
            step = _class_end(pattern, index) - index
            last = 1
        elif char == "(":
            totals.append(0)
            added = 0
        elif char == ")" and len(totals) > 1:
            inner = totals.pop()
            last = max(inner, 1)
            added = last - inner
            totals[-1] += inner
        elif char == "{" and (quantifier := _QUANTIFIER.match(pattern, index)) and any(quantifier.groups()):
            count = max(_count(quantifier.group(1)), _count(quantifier.group(2)))
            added = last * max(count - 1, 0)
            last *= max(count, 1)
            step = quantifier.end() - index
        else:
            last = 1
        totals[-1] += added
        grand += added
        index += step
    return grand


_RE_QUANTIFIER = re.compile(r"\{(?:\d+|\d+,\d*|,\d+)\}")
"""What `re` reads as a repetition after `{`; any other `{` is a literal brace to `re`."""


def as_re_means(pattern: str) -> str:
    """`pattern` spelled so that `regex` (VERSION0) reads it as `re` does, where the two differ on text `re` accepts:

    - a `{` that is not a repetition `re` knows (`{n}`, `{n,}`, `{,m}`, `{n,m}`) is a literal to `re`, but `regex`
      reads `{e<=1}`, `{i}`, `{e}`... as fuzzy matching: `(?:x){e<=1}` matched almost anything. It is escaped;
    - a `[` inside a set is a literal to `re`, but `regex` reads `[:digit:]` there as a POSIX class: `[[:digit:]]`
      is, to `re`, the set of `[ : d i g t` followed by `]`. It is escaped.
    Escapes (`\\x`) are copied as they are."""
    out: list[str] = []
    index, length = 0, len(pattern)
    in_set = False
    while index < length:
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_set:
            if char == "]":
                in_set = False
            elif char == "[":
                char = "\\["
        elif char == "[":
            in_set = True
            out.append(char)
            index += 1
            if index < length and pattern[index] == "^":
                out.append("^")
                index += 1
            if index < length and pattern[index] == "]":  # a `]` first in a set is a member
                out.append("\\]")
                index += 1
            continue
        elif char == "{" and not _RE_QUANTIFIER.match(pattern, index):
            char = "\\{"
        out.append(char)
        index += 1
    return "".join(out)


def _compile(pattern: str, flags: int) -> Any:
    """The compiled pattern, or None when `re` (little-loops' engine) or `regex` rejects it (the caller then treats
    it as a substring).

    Compiled patterns are not cached: a cache would keep every request's pattern alive.
    """
    size = expansion(pattern, flags)
    if size > MAX_EXPANSION:
        raise PatternTooLarge(pattern, size)
    try:
        _re_compile(pattern, flags & _RE_FLAGS)
        return regex.compile(as_re_means(pattern), flags, cache_pattern=False)
    except (re.error, regex.error, OverflowError, RecursionError, ValueError):
        return None


def compile_bounded(pattern: str, flags: int = 0) -> Any:
    """The compiled pattern for a caller with its own semantics for invalid patterns (a JSON Schema `pattern`, where
    one is the schema's error): None when `re` or `regex` rejects it, PatternTooLarge past MAX_EXPANSION. The caller
    keeps it (a cache bounded by the caller) and searches with `search_compiled`, under the same time bound."""
    return _compile(pattern, flags)


def search_compiled(compiled: Any, text: str, *, timeout: float) -> bool:
    """True when a pattern from `compile_bounded` matches anywhere in `text`, in the calling thread, with the GIL
    released while matching. Raises PatternTimeout past `timeout` seconds. For callers already off the event loop."""
    try:
        return compiled.search(text, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        raise PatternTimeout(compiled.pattern, timeout) from None


def _search(pattern: str, text: str, timeout: float, flags: int) -> bool:
    compiled = _compile(pattern, flags)
    if compiled is None:
        return pattern in text
    try:
        return compiled.search(text, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        raise PatternTimeout(pattern, timeout) from None


def _findall(pattern: str, text: str, timeout: float, flags: int) -> list[str]:
    compiled = _compile(pattern, flags)
    if compiled is None:
        return [pattern] * text.count(pattern) if pattern else []
    group = 1 if compiled.groups == 1 else 0
    try:
        return [match.group(group) or "" for match in compiled.finditer(text, timeout=timeout, concurrent=True)]
    except TimeoutError:
        raise PatternTimeout(pattern, timeout) from None


async def search(pattern: str, text: str, *, timeout: float, flags: int = 0) -> bool:  # noqa: ASYNC109
    """True when `pattern` matches anywhere in `text` (an invalid pattern: when it occurs as a substring).

    Raises PatternTimeout when the match takes longer than `timeout` seconds, PatternTooLarge (a PatternTimeout)
    before compiling a pattern that repeats more than MAX_EXPANSION.
    """
    return await asyncio.to_thread(_search, pattern, text, timeout, flags)


async def findall(pattern: str, text: str, *, timeout: float, flags: int = 0) -> list[str]:  # noqa: ASYNC109
    """Every non-overlapping match of `pattern` in `text`: the group's text for a one-group pattern (as `re.findall`
    gives it), otherwise the whole match (where `re.findall` would give tuples little-loops could not join).

    An invalid pattern gives its literal occurrences. Raises PatternTimeout when the search outlasts `timeout`, and
    PatternTooLarge (a PatternTimeout) for a pattern that repeats more than MAX_EXPANSION.
    """
    return await asyncio.to_thread(_findall, pattern, text, timeout, flags)
