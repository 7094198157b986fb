"""The checks of a tool-calling turn, and how they join the text's verdict. Pure: no I/O (the clock is passed in).

Each call, in order (parallel calls are each checked):
1. The arguments parse as strict JSON and are an object (`tool_arguments`); arguments that end mid-value are
   TRUNCATED when the finish reason is a length one (the token budget ran out inside the call), MALFORMED
   (`incomplete`) otherwise.
2. The name is a declared tool (`unknown_tool`, with the nearest declared name when there is one).
3. The arguments validate against its schema (`tool_schemas`): `missing_argument`, `wrong_type`, `not_in_enum`,
   `unexpected_argument`, or `schema` for any other keyword, with a JSON Pointer to the value. A check that a bound
   stops is `unverifiable` (`schema_unverifiable`): not the model's failure, and not the caller's.
Without declared tools only step 1 runs. Tool-call markup left in the text while tools were declared is MALFORMED
(`call_in_text`, `tool_markup`), and so is a finish reason that says the provider itself could not parse the model's
call (Gemini's `MALFORMED_FUNCTION_CALL`, `provider_malformed`).

The turn's verdict is the existing ranking over the text's blocks and the calls: truncated > malformed > ok >
unverifiable, so a turn whose calls all pass is OK, with prose, or with none.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from verdict.verify.model import ToolCall, ToolCheck, Verdict, Verification
from verdict.verify.tool_arguments import parse_arguments
from verdict.verify.tool_markup import Markup
from verdict.verify.tool_schemas import CompiledTool, SchemaUncheckable, check_arguments

__all__ = [
    "NO_TOOLS",
    "PROVIDER_MALFORMED_REASONS",
    "REASONS",
    "Toolset",
    "check_call",
    "joined",
    "markup_check",
    "provider_check",
]

REASONS = frozenset(
    {
        "empty_arguments",
        "not_json",
        "not_object",
        "double_encoded",
        "duplicate_key",
        "non_finite_number",
        "single_quotes",
        "python_literal",
        "trailing_comma",
        "unquoted_key",
        "extra_brace",
        "extra_data",
        "stray_escape",
        "control_character",
        "fenced",
        "incomplete",
        "truncated",
        "unknown_tool",
        "missing_argument",
        "wrong_type",
        "not_in_enum",
        "unexpected_argument",
        "schema",
        "schema_unverifiable",
        "call_in_text",
        "provider_malformed",
    }
)
"""Every `ToolCallCheck.reason` (bounded: each is a metric label value); docs/verification.md explains each."""

PROVIDER_MALFORMED_REASONS = frozenset({"malformed_function_call", "unexpected_tool_call"})
"""Finish reasons (after `rules.finish_reason_key`) by which the provider says it could not use the model's call."""


@dataclass(frozen=True)
class Toolset:
    """The turn's declared tools, compiled, by name; empty when none were declared."""

    tools: Mapping[str, CompiledTool]

    @property
    def declared(self) -> bool:
        return bool(self.tools)

    def needs_thread(self, calls: Sequence[ToolCall]) -> bool:
        """Whether checking `calls` runs regular expressions (so belongs off the event loop)."""
        return any(call.name in self.tools and self.tools[call.name].patterned for call in calls)


NO_TOOLS = Toolset({})


def check_call(
    index: int,
    call: ToolCall,
    toolset: Toolset,
    *,
    cut: bool,
    time_limit: float,
    clock: Callable[[], float],
) -> ToolCheck:
    """The verdict on one call. `cut` says the finish reason is a length one."""

    def verdict(verdict: Verdict, reason: str = "", detail: str = "", pointer: str = "", digest: str = "") -> ToolCheck:
        return ToolCheck(index, call.id, call.name, verdict, detail, pointer, reason, digest)

    tool = toolset.tools.get(call.name)
    digest = tool.digest if tool is not None else ""
    parsed = parse_arguments(call.arguments)
    if parsed.error is not None:
        if cut and (parsed.cut or parsed.error.reason == "empty_arguments"):
            return verdict(
                Verdict.TRUNCATED, "truncated", "the arguments were cut off when the token budget ran out", "", digest
            )
        detail = parsed.error.detail
        if parsed.cut:
            detail += ", but the finish reason is not a length one"
        return verdict(Verdict.MALFORMED, parsed.error.reason, detail, "", digest)
    if not toolset.declared:
        return verdict(Verdict.OK)
    if tool is None:
        return verdict(Verdict.MALFORMED, "unknown_tool", _unknown(call.name, toolset))
    try:
        finding = check_arguments(tool, parsed.value, time_limit=time_limit, clock=clock)
    except SchemaUncheckable as error:
        return verdict(Verdict.UNVERIFIABLE, "schema_unverifiable", str(error), "", digest)
    if finding is None:
        return verdict(Verdict.OK, digest=digest)
    return verdict(Verdict.MALFORMED, finding.reason, finding.detail, finding.pointer, digest)


def _unknown(name: str, toolset: Toolset) -> str:
    if not name:
        return "the call names no tool"
    shown = repr(name[:60])
    # the hint costs milliseconds over a long list: only for the short lists a model picks from well
    close = (
        difflib.get_close_matches(name, list(toolset.tools), n=1)
        if len(toolset.tools) <= 64 and len(name) <= 64
        else []
    )
    hint = f"; did it mean {close[0]!r}?" if close else ""
    return f"no tool named {shown} was declared ({len(toolset.tools)} were){hint}"


def markup_check(index: int, markup: Markup) -> ToolCheck:
    """A call left in the text as markup: MALFORMED, with its style named."""
    named = f" calling {markup.name!r}" if markup.name else ""
    detail = f"line {markup.line}: a tool call in the text ({markup.family} {markup.style} markup{named}), not a call"
    return ToolCheck(index, "", markup.name, Verdict.MALFORMED, detail, "", "call_in_text")


def provider_check(index: int, finish_reason: str) -> ToolCheck:
    """The provider could not parse the model's call (its finish reason says so): MALFORMED."""
    detail = f"finish_reason={finish_reason.strip()}: the provider could not use the model's tool call"
    return ToolCheck(index, "", "", Verdict.MALFORMED, detail, "", "provider_malformed")


def joined(prose: Verification | None, checks: Sequence[ToolCheck]) -> Verification:
    """The turn's verdict: the text's (None when a calling turn has no text) and its calls', by the one ranking."""
    if not checks:
        return prose if prose is not None else Verification(Verdict.UNVERIFIABLE, "nothing to check")
    calls = tuple(checks)
    total = len(calls)
    blocks = prose.checks if prose is not None else ()
    opinion = prose.second_opinion if prose is not None else None
    for rank in (Verdict.TRUNCATED, Verdict.MALFORMED):
        bad = [check for check in calls if check.verdict is rank]
        if bad:
            first = bad[0]
            detail = f"{len(bad)}/{total} tool calls: #{first.call_index} {first.name or '?'}: {first.detail}"
            return Verification(rank, detail, blocks, opinion, calls)
        if prose is not None and prose.verdict is rank:
            return Verification(rank, prose.detail, blocks, opinion, calls)
    passed = sum(1 for check in calls if check.verdict is Verdict.OK)
    if passed:
        detail = f"{passed}/{total} tool calls passed"
        if prose is not None and prose.verdict is Verdict.OK:
            detail += f"; {prose.detail}"
        return Verification(Verdict.OK, detail, blocks, opinion, calls)
    if prose is not None and prose.verdict is Verdict.OK:
        return Verification(Verdict.OK, prose.detail, blocks, opinion, calls)
    first = calls[0]
    return Verification(Verdict.UNVERIFIABLE, f"no tool call could be checked ({first.detail})", blocks, opinion, calls)
