"""The verdict rules of VerifyResponse, in the reference verifier's order of precedence. Pure: no I/O, no clock.

1. A tool-call turn is unverifiable, even when its finish reason says it ran out of budget (see `envelope_verdict`).
2. A finish reason that means "ran out of budget", in any provider's spelling, is truncated: decisive, even when the
   text is empty or parses.
3. Empty or whitespace-only text is malformed; so is an answer that ends in a repetition loop (`loops.find_loop`: the
   same line, sentence or words repeated over its last thousands of characters), with its own reason.
4. No fenced block: unverifiable (most prose lands here, and "could not check" is not "wrong").
5. Per block: a fence that is not closed because its closer is malformed, or because the pairs shifted, is malformed
   with a named reason (`closers.broken_fences`); any other unterminated fence is truncated whatever its language; an
   empty block is unverifiable; a language with no checker is unverifiable; a block over `max_block_bytes` is
   unverifiable ("too large to check"); blocks past `max_checked_blocks` are not parsed and share one unverifiable
   entry ("too many blocks"), but the scan still reads every fence, so an unterminated last block is still caught.
6. The response: truncated outranks malformed outranks ok outranks unverifiable.

Running the language checks is the Verifier's job (inline, in a process pool, or `bash -n`); `offline.verify_offline`
runs the in-process ones inline for callers without a server (a library call, a benchmark).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from verdict.config.keys import Config
from verdict.records import record
from verdict.verify.closers import BrokenFence, broken_fences
from verdict.verify.fences import FencedBlock, FenceScan
from verdict.verify.languages import LANGUAGES, NO_LANGUAGE, Language, Languages
from verdict.verify.loops import find_loop
from verdict.verify.model import BlockCheck, CodeCheck, Verdict, Verification, VerifyInput
from verdict.verify.recognise import not_code, recognise, shell_command

__all__ = [
    "NO_BLOCKS",
    "TOOL_CALL_REASONS",
    "TRUNCATION_REASONS",
    "PendingCheck",
    "aggregate",
    "envelope_verdict",
    "finish_reason_key",
    "is_tool_turn",
    "place",
    "triage",
]

TRUNCATION_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_length", "model_context_window_exceeded", "limit"}
)
"""Budget exhaustion as providers spell it, after `finish_reason_key`: OpenAI and Ollama `length`, Anthropic and
Bedrock `max_tokens`, Gemini and Cohere `MAX_TOKENS`, OpenAI Responses `max_output_tokens`, Mistral `model_length`,
Anthropic's `model_context_window_exceeded` (the answer ran into the context window: cut off just the same),
llama.cpp's `stop_type: limit` (reference §2.2)."""

TOOL_CALL_REASONS = frozenset({"tool_calls", "tool_use", "function_call"})
"""Finish reasons that say the turn called a tool, as `has_tool_calls` does."""

NO_BLOCKS = Verification(Verdict.UNVERIFIABLE, "no fenced blocks in response")


@functools.lru_cache(maxsize=256)
def finish_reason_key(reason: str) -> str:
    """A provider's finish reason in one spelling: trimmed, lower case, `-` as `_` (MAX_TOKENS -> max_tokens). Asked
    several times per answer about a handful of spellings, so remembered (bounded: they are the caller's words)."""
    return reason.strip().lower().replace("-", "_")


def is_tool_turn(request: VerifyInput) -> bool:
    """Whether the turn called tools: the flag, or a finish reason that says so (tool_calls, tool_use)."""
    return request.has_tool_calls or finish_reason_key(request.finish_reason) in TOOL_CALL_REASONS


def envelope_verdict(request: VerifyInput) -> Verification | None:
    """The verdict the envelope and the text as a whole decide (rules 1-3), or None when the blocks must be read.

    A repetition loop at the end is decided here, before the fences: a model that looped inside a code block leaves an
    unterminated fence, and "truncated" would invite the caller to ask for a continuation of the loop. Reading the loop
    costs a bounded amount whatever the text's size (`loops.WINDOW`).

    Tool-call turns are exempt even from truncation, as in the reference: such a turn routinely stops mid-sentence at
    the call boundary, and 29 of 63 completions of a real agent session were tool turns that a naive check called
    malformed. The cost, named in reference §2.2 (knostic/OpenAnt#207): a tool call cut off at `max_tokens` passes
    here as unverifiable; the caller's own tool-call argument parsing is what catches it.
    """
    if is_tool_turn(request):
        return Verification(Verdict.UNVERIFIABLE, "tool-call turn; no prose answer to check")
    if finish_reason_key(request.finish_reason) in TRUNCATION_REASONS:
        return Verification(Verdict.TRUNCATED, f"finish_reason={request.finish_reason.strip()}")
    if not request.text.strip():
        return Verification(Verdict.MALFORMED, "empty response")
    loop = find_loop(request.text)
    if loop is not None:
        return Verification(Verdict.MALFORMED, f"line {loop.line}: {loop.detail}")
    return None


@record
class PendingCheck:
    """A block that must be parsed: its index, the block, and the language it is checked as."""

    index: int
    block: FencedBlock
    language: Language
    guessed: str = ""
    """Why an untagged block is checked as `language` (the evidence); "" for a tagged block. A guess is never
    charged: its parser's failure is unverifiable, since the error may be the guess's."""

    @property
    def size(self) -> int:
        """The body's size in UTF-8 bytes (the unit of every block limit)."""
        return _utf8_size(self.block.body)


def triage(scan: FenceScan, config: Config, languages: Languages = LANGUAGES) -> list[BlockCheck | PendingCheck]:
    """Decide every block the rules decide without parsing; the rest are PendingChecks, in document order.

    The blocks past `config.max_checked_blocks` share one entry ("too many blocks"), so the response stays small
    whatever the text holds, and an unterminated last block keeps its own entry, so the truncation is still reported.
    A scan bounded at that limit (`scan_fences_bounded`) has built no block past it; an unbounded one works too.
    """
    limit = config.max_checked_blocks
    if len(scan.blocks) > limit:
        extra = scan.blocks[limit:]
        tail = extra[-1] if not extra[-1].closed else scan.unclosed_tail
        scan = FenceScan(scan.blocks[:limit], scan.total, extra[0].line, tail)
    built = list(scan.blocks) + ([scan.unclosed_tail] if scan.unclosed_tail is not None else [])
    broken = broken_fences(built)
    result: list[BlockCheck | PendingCheck] = []
    for index, block in enumerate(scan.blocks):
        language = languages.resolve(block.language)
        guessed = ""
        if language.record is NO_LANGUAGE and block.closed and broken.get(index) is None:
            recognition = recognise(block.body)
            if recognition is not None:
                language = languages.resolve(recognition.language)
                guessed = recognition.evidence
        decided = _decided(index, block, language, config, broken.get(index))
        result.append(decided if decided is not None else PendingCheck(index, block, language, guessed))
    skipped = scan.total - len(scan.blocks) - (1 if scan.unclosed_tail is not None else 0)
    if skipped:
        result.append(
            BlockCheck(
                len(scan.blocks),
                "?",
                Verdict.UNVERIFIABLE,
                f"too many blocks: {skipped} more not checked (only the first {config.max_checked_blocks} are)",
                scan.skipped_line,
            )
        )
    if scan.unclosed_tail is not None:
        tail = scan.unclosed_tail
        decided = _decided(scan.total - 1, tail, languages.resolve(tail.language), config, broken.get(len(built) - 1))
        assert decided is not None  # an unclosed block is always decided
        result.append(decided)
    return result


def _decided(
    index: int, block: FencedBlock, language: Language, config: Config, broken: BrokenFence | None
) -> BlockCheck | None:
    def check(verdict: Verdict, detail: str) -> BlockCheck:
        return BlockCheck(index, language.name, verdict, detail, block.line)

    if broken is not None:
        return BlockCheck(
            index, language.name, Verdict.MALFORMED, f"line {broken.line}: {broken.detail}", block.line, broken.line
        )
    if not block.closed:
        return check(Verdict.TRUNCATED, f"unterminated code fence ({block.fence})")
    if not block.body.strip():
        return check(Verdict.UNVERIFIABLE, "empty block")
    reason = language.unchecked_reason
    if reason:
        return check(Verdict.UNVERIFIABLE, reason)
    size = _utf8_size(block.body)
    if size > config.max_block_bytes:
        return check(Verdict.UNVERIFIABLE, f"too large to check: {size} bytes, the limit is {config.max_block_bytes}")
    return None


def place(pending: PendingCheck, result: CodeCheck) -> BlockCheck:
    """A checker's result as the response reports it: the body line it blamed becomes a line of the response.

    A parser that runs out of input blames the line after the last one (JSON's and YAML's "end of input" is past the
    final line feed); that is the closing fence's line, so it is reported as the body's last line, as Python's is.
    """
    blamed = min(result.line, pending.block.body_lines) if result.line else 0
    error_line = pending.block.line + blamed if blamed else 0
    detail = f"line {error_line}: {result.detail}" if error_line and result.detail else result.detail
    verdict = result.verdict
    if pending.guessed:
        if verdict is Verdict.MALFORMED:
            verdict = Verdict.UNVERIFIABLE
            detail = f"untagged, read as {pending.language.name} ({pending.guessed}): {detail}; not charged, the "
            detail += "language was guessed"
        elif verdict is Verdict.OK:
            detail = f"untagged, read as {pending.language.name} ({pending.guessed})"
    elif verdict is Verdict.MALFORMED and blamed:
        excuse = _not_this_language(pending, blamed)
        if excuse:
            verdict = Verdict.UNVERIFIABLE
            detail = f"line {error_line} is {excuse}, not {pending.language.name}: a wrong tag or an excerpt"
    return BlockCheck(pending.index, pending.language.name, verdict, detail, pending.block.line, error_line)


def _not_this_language(pending: PendingCheck, blamed: int) -> str:
    """What the body line a parser blamed is when it is no code of the tag's language (ASCII art, a table, program
    output, a shell command under a C# tag), or "". Only that line is looked at, as every excuse does."""
    lines = pending.block.body.split("\n")
    line = lines[blamed - 1] if 0 < blamed <= len(lines) else ""
    what = not_code(line)
    if what:
        return what
    if pending.language.label != "shell" and shell_command(line):
        return "a shell command"
    return ""


def aggregate(checks: Sequence[BlockCheck], blocks: int | None = None) -> Verification:
    """The response's verdict from its blocks' verdicts: truncated > malformed > ok > unverifiable.

    `blocks` is how many blocks the response has (more than `checks` when blocks past the limit share an entry).
    """
    if not checks:
        return NO_BLOCKS
    total = len(checks) if blocks is None else blocks
    for verdict in (Verdict.TRUNCATED, Verdict.MALFORMED):
        bad = [check for check in checks if check.verdict is verdict]
        if bad:
            return Verification(
                verdict, f"{len(bad)}/{total} blocks: {bad[0].language}: {bad[0].detail}", tuple(checks)
            )
    parsed = sum(1 for check in checks if check.verdict is Verdict.OK)
    if parsed:
        return Verification(Verdict.OK, f"{parsed}/{total} blocks parsed", tuple(checks))
    first = checks[0]
    return Verification(
        Verdict.UNVERIFIABLE, f"no block had a structural check ({first.language}: {first.detail})", tuple(checks)
    )


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
