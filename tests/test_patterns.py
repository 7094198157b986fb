"""Time-bounded regular expressions from requests: substring fallback, findall shapes, timeouts off the loop."""

from __future__ import annotations

import contextlib
import time

import pytest
import regex

from verdict.patterns import (
    MAX_EXPANSION,
    PatternTimeout,
    PatternTooLarge,
    as_re_means,
    expansion,
    findall,
    search,
)

CATASTROPHIC = "(a|aa)+$"
SLOW_TEXT = "a" * 60 + "b"


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"\d+ passed", "12 passed", True),
        (r"\d+ passed", "no tests", False),
        ("", "anything", True),
        ("a(b", "xa(b", True),
        ("a(b", "ab", False),
        ("[", "a[b", True),
        ("^b", "a\nb", False),
        ("Error", "error", False),
        (r"(?<=ab)c", "abc", True),
        (r"(?<=ab+)c", "abbbc", False),
        (r"(?<=ab+)c", "x(?<=ab+)c", True),
        (r"\p{L}+", "abc", False),
        ("(?|(a)|(b))", "b", False),
    ],
)
async def test_search(pattern: str, text: str, expected: bool) -> None:
    assert await search(pattern, text, timeout=1) is expected


async def test_search_flags() -> None:
    assert await search("^b", "a\nb", timeout=1, flags=regex.MULTILINE)
    assert await search("error", "ERROR", timeout=1, flags=regex.IGNORECASE)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"\d+", "1 22 333", ["1", "22", "333"]),
        (r"id=(\w+)", "id=a id=b", ["a", "b"]),
        (r"(\w+): (\w+)", "name: str, age: int", ["name: str", "age: int"]),
        (r"x(y)?", "x xy", ["", "y"]),
        ("a(", "a( b a(", ["a(", "a("]),
        ("", "abc", ["", "", "", ""]),
        (r"def \w+\(.*?\)", "def a(\n  x)\ndef b()", ["def a(\n  x)", "def b()"]),
    ],
)
async def test_findall(pattern: str, text: str, expected: list[str]) -> None:
    assert await findall(pattern, text, timeout=1, flags=regex.DOTALL) == expected


@pytest.mark.parametrize("call", [search, findall])
async def test_catastrophic_pattern_times_out(call: object) -> None:
    started = time.monotonic()
    with pytest.raises(PatternTimeout) as raised:
        await call(CATASTROPHIC, SLOW_TEXT, timeout=0.2)  # type: ignore[operator]
    assert raised.value.timeout == 0.2
    # A hang detector, not a speed test: unbounded, this match takes hours (its backtracking doubles with every `a`
    # of SLOW_TEXT), while with the bound it ends 0.2 s in; 60 s is 300 times that, room for any loaded machine.
    assert time.monotonic() - started < 60, "the bound stops the match itself"


@pytest.mark.parametrize(
    ("pattern", "low", "high"),
    [
        (r"\d{4}-\d{2}-\d{2}", 1, 20),
        ("a{1000}", 1000, 1000),
        ("(?:a{1000}){1000}", 1_000_000, 1_010_000),
        ("((ab){10}){10}", 200, 300),
        (r"\p{L}{5}", 5, 5),
        ("[{]{99}", 99, 99),
        ("a{9999999999999999999999}", 10**9, 10**9),
        ("(?x) (?: a{1000} # ) hides a parenthesis\n ){1000}", 1_000_000, 10**12),
        ("(?#)){100}(a{100}){100}", 10_000, 10**12),
    ],
)
def test_expansion_estimate(pattern: str, low: int, high: int) -> None:
    assert low <= expansion(pattern) <= high


@pytest.mark.parametrize("call", [search, findall])
@pytest.mark.parametrize("pattern", ["a{1000000000}", "(?:(?:a{1000}){1000}){1000}", "(?x)a{200000}"])
async def test_pattern_that_would_exhaust_memory_is_refused_before_compiling(call: object, pattern: str) -> None:
    with pytest.raises(PatternTooLarge) as raised:
        await call(pattern, "aaa", timeout=1)  # type: ignore[operator]
    assert raised.value.expansion > MAX_EXPANSION
    assert isinstance(raised.value, PatternTimeout), "callers that bound time bound this too"


async def test_large_but_reasonable_repetition_is_allowed() -> None:
    assert await search("a{5000}", "a" * 5000, timeout=5)


@pytest.mark.parametrize("pattern", ["(?R)?a", "((?1)|a)", "(?&x)(?P<x>a)?", "(?P<x>(?P>x)|a)", "(?0)?a"])
async def test_recursive_patterns_are_substrings_like_every_pattern_re_rejects(pattern: str) -> None:
    """The reference used `re`, where recursion is not syntax, so these are literal text. `regex` runs them, and a
    left recursion grows its stack by hundreds of megabytes a second until the time bound: memory the match timeout
    does not bound (a few concurrent calls would exhaust the server's).

    No clock needed: run by `regex`, each of these calls either fails (MemoryError, or PatternTimeout at its bound)
    or answers differently (`(?&x)(?P<x>a)?` matches anything), so the answers alone fail on that."""
    assert await search(pattern, "a" * 50 + "c", timeout=2) is False
    assert await search(pattern, f"text {pattern} text", timeout=2) is True
    assert await findall(pattern, f"{pattern}{pattern}", timeout=2) == [pattern, pattern]


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("(?:x){e<=1}", "y", False),  # `regex` reads fuzzy matching: any one-character text matched
        ("(?:x){e<=1}", "x{e<=1}", True),  # `re`: x, then the literal braces
        ("[[:digit:]]", "5", False),  # `regex` reads a POSIX class
        ("[[:digit:]]", ":]", True),  # `re`: one of `[:digt`, then `]`
        ("a{2}", "aa", True),
        ("a{,3}b", "aab", True),
        ("[]a]", "]", True),
        ("x{", "x{", True),
    ],
)
async def test_patterns_mean_what_re_means(pattern: str, text: str, expected: bool) -> None:
    with pytest.warns(FutureWarning) if "[[" in pattern else contextlib.nullcontext():
        assert await search(pattern, text, timeout=5) is expected


def test_the_respelling_escapes_only_what_re_reads_as_literal() -> None:
    assert as_re_means("(?:x){e<=1}") == "(?:x)\\{e<=1}"
    assert as_re_means("[[:digit:]]") == "[\\[:digit:]]"
    assert as_re_means(r"\d{3}[\[a]{1,2}") == r"\d{3}[\[a]{1,2}"
