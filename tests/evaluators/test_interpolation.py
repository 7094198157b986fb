"""`${namespace.path}` interpolation, resolved against the request's context only."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from tests.support import growth
from verdict.errors import InvalidArgument, ResourceExhausted
from verdict.evaluators.interpolation import MAX_INTERPOLATED_CHARS, InterpolationError, Namespaces, interpolate

CONTEXT: dict[str, Any] = {
    "context": {"goal": "ship it", "limits": {"max": 3}, "items": ["a", "b"], "none": None, "flag": True, "ratio": 2.5},
    "captured": {"review": {"output": "LGTM", "exit_code": 0.0, "verdict": "yes"}},
    "prev": {"output": "42", "exit_code": 1.0, "state": "check"},
    "result": {"verdict": "no", "details": {"error": "boom"}},
    "state": {"name": "fix", "iteration": 3.0},
    "loop": {"name": "refine", "started_at": "2026-01-01T00:00:00Z", "elapsed_ms": 135000.0},
    "env": {"TARGET": "prod"},
    "messages": {"log": ["one", "two", "three"], "summary": "3 messages"},
    "param": {"file": "a.py"},
}


def render(template: str, context: dict[str, Any] | None = None) -> str:
    return interpolate(template, Namespaces.from_context(CONTEXT if context is None else context))


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${context.goal}", "ship it"),
        ("${context.limits.max}", "3"),
        ("goal: ${context.goal}!", "goal: ship it!"),
        ("${captured.review.output}", "LGTM"),
        ("${captured.review.exit_code}", "0"),
        ("${prev.output}", "42"),
        ("${prev.exit_code}", "1"),
        ("${result.verdict}", "no"),
        ("${result.details.error}", "boom"),
        ("${state.name}#${state.iteration}", "fix#3"),
        ("${loop.name}", "refine"),
        ("${loop.elapsed_ms}", "135000"),
        ("${loop.elapsed}", "2m 15s"),
        ("${env.TARGET}", "prod"),
        ("${messages}", "one\ntwo\nthree"),
        ("${messages.output}", "one\ntwo\nthree"),
        ("${messages.last(2)}", "two\nthree"),
        ("${messages.last(0)}", ""),
        ("${messages.summary}", "3 messages"),
        ("${param.file}", "a.py"),
        ("${context.none}", ""),
        ("${context.flag}", "True"),
        ("${context.ratio}", "2.5"),
        ("${context.items}", "['a', 'b']"),
        ("$${context.goal}", "${context.goal}"),
        ("$${X:-0} $${A[@]}", "${X:-0} ${A[@]}"),
        ("$$${context.goal}", "$${context.goal}"),
        ("${context.missing:default=fallback}", "fallback"),
        ("${context.missing:default=a?b}", "a?b"),
        ("${context.goal:default=unused}", "ship it"),
        ("${context.missing?}", ""),
        ("${context.goal?}", "ship it"),
        ("${context.goal:shell}", "'ship it'"),
        ("${context.none:shell}", ""),
        ("${nope.x:default=d}", "d"),
        ("no references", "no references"),
    ],
)
def test_resolves(template: str, expected: str) -> None:
    assert render(template) == expected


@pytest.mark.parametrize(
    ("ms", "expected"), [(500, "500ms"), (30_000, "30s"), (120_000, "2m"), (135_000, "2m 15s"), (59_999, "59s")]
)
def test_elapsed_format(ms: int, expected: str) -> None:
    assert render("${loop.elapsed}", {"loop": {"elapsed_ms": float(ms)}}) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("${context.missing}", "Path 'missing' not found in context"),
        ("${context.limits.min}", "Path 'limits.min' not found in context"),
        ("${context.items.0}", "not found in context"),
        ("${context.goal.deeper}", "Path 'goal.deeper' not found in context"),
        ("${nope.x}", "Unknown namespace: nope"),
        ("${goal}", "expected namespace.path"),
        ("${goal?}", "expected namespace.path"),
        ("${goal:default=x}", "expected namespace.path"),
        ("${env.HOME}", "Environment variable 'HOME' not set"),
        ("${state.round}", "Unknown state property: round"),
        ("${loop.owner}", "Unknown loop property: owner"),
        ("${messages.first}", "Unknown messages property"),
        ("${context.goal?:default=x}", "mutually exclusive"),
        ("${context.goal:shell:default=x}", "mutually exclusive"),
        ("${context.goal?:shell}", "mutually exclusive"),
        ("${context.goal:shell?}", "mutually exclusive"),
        ("${context.goal:-default}", "not found in context"),
        ("${context.a${context.b}}", "not found in context"),
    ],
)
def test_raises(template: str, message: str) -> None:
    with pytest.raises(InterpolationError, match=message.replace("(", r"\(").replace("?", r"\?")):
        render(template)


def test_prev_and_result_raise_when_absent() -> None:
    with pytest.raises(InterpolationError, match="No previous state result available"):
        render("${prev.output}", {})
    with pytest.raises(InterpolationError, match="No evaluation result available"):
        render("${result.verdict}", {"prev": None})


def test_state_property_missing_from_the_request() -> None:
    with pytest.raises(InterpolationError, match=r"state\.name is not in the request context"):
        render("${state.name}", {"state": {}})


def test_env_never_reads_the_server_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERDICT_TEST_SECRET", "hunter2")
    with pytest.raises(InterpolationError):
        render("${env.VERDICT_TEST_SECRET}", {})
    assert render("${env.VERDICT_TEST_SECRET?}", {}) == ""


def test_messages_may_be_a_plain_list() -> None:
    assert render("${messages.last(1)}", {"messages": ["a", "b"]}) == "b"
    assert render("${messages.summary}", {"messages": ["a"]}) == ""


@pytest.mark.parametrize(
    ("context", "field"),
    [
        ({"contxt": {}}, "context.contxt"),
        ({"captured": []}, "context.captured"),
        ({"env": "PATH=/bin"}, "context.env"),
        ({"messages": 3}, "context.messages"),
    ],
)
def test_context_shape_is_checked(context: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        Namespaces.from_context(context)
    assert raised.value.field == field


def _reference_interpolate(template: str, namespaces: Namespaces) -> str:
    """little-loops' tokenisation (`$${` escapes, then `${` up to the first `}`) with re.sub, resolving each
    reference on its own; the scanner must split every template exactly like this."""

    def one(match: re.Match[str]) -> str:
        return "${" if match.group(1) is None else interpolate("${" + match.group(1) + "}", namespaces)

    return re.sub(r"\$\$\{|\$\{([^}]+)\}", one, template)


def test_scanner_splits_templates_exactly_like_the_reference_pattern() -> None:
    namespaces = Namespaces.from_context({"context": {"x": "X", "c": "C${", "d": {"e": "}"}}})
    alphabet = ["$", "{", "}", "c", "x", ".", "context.", "?", ":default=", "$${", "${context.x}", "d.e", " "]
    generator = random.Random(1234)
    for _ in range(5000):
        template = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 12)))
        try:
            expected: str | type[Exception] = _reference_interpolate(template, namespaces)
        except InterpolationError:
            expected = InterpolationError
        try:
            actual: str | type[Exception] = interpolate(template, namespaces)
        except InterpolationError:
            actual = InterpolationError
        assert actual == expected, template


@pytest.mark.parametrize(("unit", "tail"), [("${", ""), ("${x", ""), ("$", "x"), ("${}", "")])
def test_unclosed_references_take_linear_time(unit: str, tail: str) -> None:
    """little-loops' pattern, `${`, then `[^}]+`, then `}`, rescans to the end of the text from every `${` that has no
    `}` after it: quadratic, and on the event loop (a 64 KiB `source` took about 10 s, a 1 MiB one hours).

    Eight times the template must cost about eight times as much, not 64: a ratio of two timings of this test, so
    the machine's speed and load cancel out."""

    def expand(count: int) -> None:
        template = unit * count + tail
        assert interpolate(template + " $${x", Namespaces()) == template + " ${x"

    assert growth(expand, 2_000) < 32


def test_expansion_is_bounded() -> None:
    """A few bytes of template times a large context value would otherwise allocate without limit (a 4 MB request
    can ask for hundreds of gigabytes)."""
    namespaces = Namespaces.from_context({"context": {"x": "y" * (1 << 20)}})
    assert len(interpolate("${context.x}" * 8, namespaces)) == 8 << 20
    with pytest.raises(ResourceExhausted) as raised:
        interpolate("${context.x}" * (MAX_INTERPOLATED_CHARS // (1 << 20) + 1), namespaces)
    assert raised.value.reason == "INTERPOLATION_TOO_LARGE"
