"""Why a fence was not closed: a cut, or sloppy Markdown. Pure: reads the blocks the fence scan found.

A block that runs to the end of the answer is what a cut leaves, but a third of such blocks in real model answers are
not cuts: the closing fence was written wrong, so CommonMark never saw it, and the block (or the next one, once the
pairs have shifted) swallows the rest of the answer. A caller routing an agent loop needs to tell the two apart: a cut
answer wants a continuation, a sloppy one a retry or nothing at all. So each shape gets its own named reason, and the
rules call it malformed:

- **text after the closing fence** (```` ``` This prints 1 ````, or ```` ```bash ```` opening a new block before the
  last was closed): a fence line of the block's character, long enough, indented at most three columns, with text after
  it; CommonMark reads it as content. Inside a block that is *closed* it means the block was closed by the wrong fence
  (it swallowed prose, and usually the next block's opener), so that block is malformed too;
- **closing fence indented 4+ columns**: the last fence line of an unclosed block is an unpaired bare fence indented
  four or more columns (an even number of such lines is a fenced example inside the code, such as a docstring's);
- **closing fence shorter than the opener**: an unclosed ````` ```` ````` block whose first shorter fence is bare (a
  nested block opens with its language; a bare one first is the closer);
- **not closed inside its list item or block quote**: the fence's container ended first (a closer written at column 0
  under an indented list-item fence): CommonMark closes the fence there and reads the misplaced closer as a new opener;
- **orphan closing fence**: an unclosed bare fence with nothing after it, or one that follows a block with one of the
  faults above (a closed block holding an unpaired 4+-indented fence counts here, though it is not failed itself): it
  is the closer of a pair that shifted, not a block the answer began.

Everything else that runs to the end of the answer is a cut (truncated). What this cannot see: a cut inside a
legitimately nested fence whose first nested block is untagged (````` ```` ````` holding ```` ``` ```` output) reads as
a shorter closer. docs/verification.md has the measurements.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from verdict.verify.fences import FencedBlock

__all__ = [
    "CONTAINER_ENDED",
    "INDENTED_CLOSER",
    "ORPHAN_CLOSER",
    "SHORTER_CLOSER",
    "TEXT_AFTER_CLOSER",
    "BrokenFence",
    "broken_fences",
]

TEXT_AFTER_CLOSER = "malformed closing fence (text after it)"
INDENTED_CLOSER = "malformed closing fence (indented 4+ columns)"
SHORTER_CLOSER = "malformed closing fence (shorter than the opener)"
CONTAINER_ENDED = "fence not closed inside its list item or block quote"
ORPHAN_CLOSER = "orphan closing fence"


@dataclass(frozen=True)
class BrokenFence:
    """A block whose fences are malformed: the named reason, a detail, and the response line to blame."""

    reason: str
    detail: str
    line: int


def broken_fences(blocks: Sequence[FencedBlock]) -> dict[int, BrokenFence]:
    """The blocks (by index in `blocks`) whose fences are malformed rather than cut; every other block is untouched.

    Linear in the blocks' bodies, and at C speed: a few regular-expression searches per body (`_patterns`).
    """
    found: dict[int, BrokenFence] = {}
    shifted_at = 0  # the first line where an earlier block's fences went wrong, if one did
    for index, block in enumerate(blocks):
        if block.container_end:
            line = block.line + block.body_lines + 1
            found[index] = BrokenFence(
                CONTAINER_ENDED,
                f"{CONTAINER_ENDED}: the fence opened on line {block.line} ends with its container on line {line} "
                "(a closing fence indented less than the list item?)",
                line,
            )
            continue
        text_after = _text_after_closer(block)
        if block.closed:
            if text_after is not None:
                found[index] = text_after
            suspect = text_after or _unpaired_indented_closer(block)
            shifted_at = shifted_at or (suspect.line if suspect is not None else 0)
            continue
        if index != len(blocks) - 1:
            continue  # only the last block of a text can run to its end
        broken = text_after or _unpaired_indented_closer(block) or _unpaired_shorter_closer(block)
        if broken is None and not block.info:
            earlier = next((found[i].line for i in range(index) if i in found), shifted_at)
            if not block.body.strip():
                broken = BrokenFence(
                    ORPHAN_CLOSER,
                    f"{ORPHAN_CLOSER}: the bare fence on line {block.line} opens an empty block at the end of the "
                    "answer",
                    block.line,
                )
            elif earlier:
                broken = BrokenFence(
                    ORPHAN_CLOSER,
                    f"{ORPHAN_CLOSER}: the bare fence on line {block.line} was meant to close a block; the pairs "
                    f"shifted at line {earlier}",
                    block.line,
                )
        if broken is not None:
            found[index] = broken
    return found


@functools.lru_cache(maxsize=64)
def _patterns(char: str, length: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """For a fence of `length` times `char`: (text after a closer, an indented bare closer, the first shorter fence
    line). Each runs in C over a body's windows, possessive, never backtracking into a run: a megabyte of fence-like
    lines costs a few C passes, not a Python loop per line."""
    fence = re.escape(char)
    run = fence + "{" + str(length) + ",}+"
    indented = r"^(?= {4}| {0,3}\t)[ \t]*+" + run + r"[ \t]*+$"  # 4+ columns: four spaces, or a tab within them
    return (
        re.compile(r"^ {0,3}" + run + r"[ \t]*+[^ \t\n][^\n]*", re.MULTILINE),
        re.compile(indented, re.MULTILINE),
        re.compile(r"^ {0,3}(" + fence + "{3," + str(length - 1) + "}+)(?!" + fence + r")([^\n]*)", re.MULTILINE)
        if length > 3
        else re.compile(r"(?!)"),
    )


_WINDOW = 64 * 1024
"""Bodies are searched in line-aligned windows of about this size: one C regex call holds the GIL for its whole run,
so a 4 MB body searched at once would stall the server's event loop even from a worker thread."""


def _windows(text: str, needle: str) -> list[tuple[int, int]]:
    """(start, end) of consecutive windows of `text` that begin and end on line boundaries, leaving out those without
    `needle` (three fence characters, which every pattern here needs: a quick C `find` rules most windows out)."""
    windows = []
    start = 0
    while start < len(text):
        end = text.find("\n", min(start + _WINDOW, len(text)))
        end = len(text) if end == -1 else end + 1
        if text.find(needle, start, end) != -1:
            windows.append((start, end))
        start = end
    return windows


def _first(pattern: re.Pattern[str], text: str, needle: str) -> re.Match[str] | None:
    for start, end in _windows(text, needle):
        match = pattern.search(text, start, end)
        if match is not None:
            return match
    return None


def _count(pattern: re.Pattern[str], text: str, needle: str) -> int:
    return sum(len(pattern.findall(text, start, end)) for start, end in _windows(text, needle))


def _last(pattern: re.Pattern[str], text: str, needle: str) -> re.Match[str] | None:
    for start, end in reversed(_windows(text, needle)):
        last = None
        for match in pattern.finditer(text, start, end):
            last = match
        if last is not None:
            return last
    return None


def _line(block: FencedBlock, position: int) -> int:
    return block.line + block.body.count("\n", 0, position) + 1


def _text_after_closer(block: FencedBlock) -> BrokenFence | None:
    if block.fence[0] * 3 not in block.body:
        return None
    match = _first(_patterns(block.fence[0], len(block.fence))[0], block.body, block.fence[0] * 3)
    if match is None:
        return None
    line = _line(block, match.start())
    shown = match.group(0).strip()[:40]
    return BrokenFence(
        TEXT_AFTER_CLOSER,
        f"{TEXT_AFTER_CLOSER}: {shown!r} on line {line} does not close the block opened on line {block.line}",
        line,
    )


def _unpaired_indented_closer(block: FencedBlock) -> BrokenFence | None:
    if block.fence[0] * 3 not in block.body:
        return None
    indented = _patterns(block.fence[0], len(block.fence))[1]
    if _count(indented, block.body, block.fence[0] * 3) % 2 == 0:
        return None
    match = _last(indented, block.body, block.fence[0] * 3)
    assert match is not None  # an odd count is at least one
    line = _line(block, match.start())
    text = match.group(0).expandtabs(4)
    indent = len(text) - len(text.lstrip())
    return BrokenFence(
        INDENTED_CLOSER,
        f"{INDENTED_CLOSER}: the fence on line {line} is indented {indent} columns, so it does not close the block "
        f"opened on line {block.line}",
        line,
    )


def _unpaired_shorter_closer(block: FencedBlock) -> BrokenFence | None:
    if len(block.fence) == 3 or block.fence[0] * 3 not in block.body:
        return None
    first = _first(_patterns(block.fence[0], len(block.fence))[2], block.body, block.fence[0] * 3)
    if first is None or first.group(2).strip(" \t"):
        return None  # no shorter fence, or the first one opens a nested block with its language
    line = _line(block, first.start())
    return BrokenFence(
        SHORTER_CLOSER,
        f"{SHORTER_CLOSER}: {first.group(1)} on line {line} cannot close the {block.fence} opened on line {block.line}",
        line,
    )
