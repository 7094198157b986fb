"""VerifyResponse without a server: every rule, every in-process language, in the caller's thread.

For a script, a notebook or a benchmark: `verify_offline(answer, finish_reason="stop")`. Blocks are parsed inline (no
parse pool, so a huge block holds the caller for as long as its parse takes), and shell blocks, which need `bash -n`
in a child process, are unverifiable; a running server (`verdict serve`) checks those.
"""

from __future__ import annotations

from verdict.config.keys import Config
from verdict.verify.checks import run_checker
from verdict.verify.fences import scan_fences_bounded
from verdict.verify.languages import LANGUAGES, Languages, Runs
from verdict.verify.model import BlockCheck, CodeCheck, Verdict, Verification, VerifyInput
from verdict.verify.rules import NO_BLOCKS, aggregate, envelope_verdict, place, triage

__all__ = ["verify_offline"]

_DEFAULT_CONFIG = Config()


def verify_offline(
    text: str,
    *,
    finish_reason: str = "",
    has_tool_calls: bool = False,
    completion_tokens: int = 0,
    config: Config | None = None,
    languages: Languages = LANGUAGES,
) -> Verification:
    """The verdict on one completion, as VerifyResponse gives it, except that shell blocks are unverifiable.

    `config` supplies the limits (`max_block_bytes`, `max_checked_blocks`); `languages` the records (tests inject a
    set with a toy language).
    """
    config = config or _DEFAULT_CONFIG
    request = VerifyInput(
        text, finish_reason=finish_reason, has_tool_calls=has_tool_calls, completion_tokens=completion_tokens
    )
    decided = envelope_verdict(request)
    if decided is not None:
        return decided
    scan = scan_fences_bounded(text, config.max_checked_blocks)
    if not scan.total:
        return NO_BLOCKS
    checks: list[BlockCheck] = []
    for item in triage(scan, config, languages):
        if isinstance(item, BlockCheck):
            checks.append(item)
        elif item.language.runs is Runs.IN_PROCESS:
            checks.append(place(item, run_checker(item.language.record, item.block.body)))
        else:
            tool = item.language.record.tool
            detail = f"{item.language.name} needs `{tool} -n` in a child process, which only the server runs"
            checks.append(place(item, CodeCheck(Verdict.UNVERIFIABLE, detail)))
    return aggregate(checks, scan.total)
