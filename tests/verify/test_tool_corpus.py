"""The tool-call figures on the corpus (tests/verify/tool_corpus/): false positives on intact calls, recall of each
breakage, truncation recall, markup recall, and no verdict changed on real prose sent with tools declared.

The figures are pinned here and printed in docs/verification.md ("Tool calls").
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter

import pytest

from tests.verify.tool_corpus import (
    BREAKAGES,
    CUT,
    MARKUP,
    Intact,
    intact_calls,
    kubernetes_tools,
    prose_texts,
    provider_tools,
)
from verdict.verify.model import ToolCall, ToolDefinition, Verdict
from verdict.verify.tool_calls import Toolset, check_call
from verdict.verify.tool_markup import find_markup
from verdict.verify.tool_schemas import ToolSchemas

PER_TOOL = 60
"""Intact calls generated per tool: 20 provider tools and about 150 Kubernetes schemas make about 10,000 calls."""


def _toolset(tools: tuple[ToolDefinition, ...]) -> Toolset:
    schemas = ToolSchemas()
    return Toolset({tool.name: schemas.compile(tool)[0] for tool in tools})


TOOLS = provider_tools() + kubernetes_tools()
TOOLSET = _toolset(TOOLS)
CALLS = list(intact_calls(TOOLS, PER_TOOL))


def _check(name: str, arguments: str, *, cut: bool = False) -> tuple[Verdict, str]:
    check = check_call(0, ToolCall("call_1", name, arguments), TOOLSET, cut=cut, time_limit=5, clock=time.monotonic)
    return check.verdict, check.reason


def test_the_corpus_is_big_and_real() -> None:
    assert len(provider_tools()) == 20
    assert len(kubernetes_tools()) >= 100
    assert len(CALLS) >= 7000


def test_intact_calls_are_ok() -> None:
    wrong = [(call.tool.name, call.arguments, _check(call.tool.name, json.dumps(call.arguments))) for call in CALLS]
    wrong = [case for case in wrong if case[2][0] is not Verdict.OK]
    assert len(wrong) / len(CALLS) <= 0.005, wrong[:5]
    assert wrong == []  # measured: 0 of about 10,000


@pytest.mark.parametrize("kind", sorted(BREAKAGES))
def test_each_breakage_is_malformed_with_its_reason(kind: str) -> None:
    breakage, reasons = BREAKAGES[kind]
    rng = random.Random(kind)
    applied, caught, named = 0, 0, Counter[str]()
    for call in CALLS:
        edited = breakage(call, rng)
        if edited is None or _still_valid(call, edited):
            continue
        applied += 1
        verdict, reason = _check(*edited)
        caught += verdict is Verdict.MALFORMED
        named[reason] += 1
    assert applied >= 50, f"{kind} applied to only {applied} calls"
    assert caught / applied >= 0.99, (kind, caught, applied, named)
    assert sum(named[reason] for reason in reasons) / applied >= 0.99, (kind, named)


def _still_valid(call: Intact, edited: tuple[str, str]) -> bool:
    """An edit that left a valid call (an array for an object in a schema that allows both) is no breakage."""
    return edited == (call.tool.name, json.dumps(call.arguments))


def test_arguments_cut_with_a_length_finish_reason_are_truncated() -> None:
    rng = random.Random(7)
    cases = [edited for call in CALLS if (edited := CUT(call, rng)) is not None]
    truncated = sum(_check(*edited, cut=True)[0] is Verdict.TRUNCATED for edited in cases)
    assert len(cases) >= 5000
    assert truncated / len(cases) >= 0.99
    malformed = sum(_check(*edited)[0] is Verdict.MALFORMED for edited in cases)
    assert malformed / len(cases) >= 0.99  # the same cut without a length finish reason: MALFORMED (incomplete)


@pytest.mark.parametrize("style", sorted(MARKUP))
def test_markup_left_in_the_text_is_found(style: str) -> None:
    names = [tool.name for tool in TOOLS]
    sample = CALLS[::5]
    found = 0
    for call in sample:
        text = MARKUP[style](call.tool.name, call.arguments)
        markups = find_markup(text, names)
        found += bool(markups) and markups[0].style == style
    assert found / len(sample) >= 0.95


def test_no_real_prose_is_charged_with_a_call_in_the_text() -> None:
    names = [tool.name for tool in TOOLS] + [
        "search",
        "run",
        "bash",
        "read_file",
        "python",
        "get",
        "verify",
        "evaluate",
    ]
    charged = [(where, find_markup(text, names)) for where, text in prose_texts()]
    counted = len(charged)
    charged = [case for case in charged if case[1]]
    assert counted >= 500
    assert charged == []
