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

import re
from collections.abc import Sequence
from dataclasses import dataclass

from verdict.verify.fences import FencedBlock, scan_fences

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

_FENCE_LINE = re.compile(r"([ \t]*+)(`{3,}+|~{3,}+)(.*)")
_TAB_STOP = 4


@dataclass(frozen=True)
class BrokenFence:
    """A block whose fences are malformed: the named reason, a detail, and the response line to blame."""

    reason: str
    detail: str
    line: int


def broken_fences(blocks: Sequence[FencedBlock]) -> dict[int, BrokenFence]:
    """The blocks (by index in `blocks`) whose fences are malformed rather than cut; every other block is untouched.

    Linear in the blocks' bodies: every body line is looked at a bounded number of times.
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


def _fence_lines(block: FencedBlock) -> list[tuple[int, int, int, str]]:
    """(response line, indent columns, run length, text after the run) for each body line made of the block's fence
    character."""
    char = block.fence[0]
    if char * 3 not in block.body:
        return []
    lines = []
    for number, line in enumerate(block.body.split("\n"), 1):
        match = _FENCE_LINE.fullmatch(line)
        if match is None or match.group(2)[0] != char:
            continue
        lines.append((block.line + number, _columns(match.group(1)), len(match.group(2)), match.group(3)))
    return lines


def _text_after_closer(block: FencedBlock) -> BrokenFence | None:
    for line, indent, run, rest in _fence_lines(block):
        if indent <= 3 and run >= len(block.fence) and rest.strip(" \t"):
            shown = (block.fence[0] * run + rest)[:40]
            return BrokenFence(
                TEXT_AFTER_CLOSER,
                f"{TEXT_AFTER_CLOSER}: {shown!r} on line {line} does not close the block opened on line {block.line}",
                line,
            )
    return None


def _unpaired_indented_closer(block: FencedBlock) -> BrokenFence | None:
    candidates = [
        (line, indent)
        for line, indent, run, rest in _fence_lines(block)
        if indent >= 4 and run >= len(block.fence) and not rest.strip(" \t")
    ]
    if len(candidates) % 2 == 0:
        return None
    line, indent = candidates[-1]
    return BrokenFence(
        INDENTED_CLOSER,
        f"{INDENTED_CLOSER}: the fence on line {line} is indented {indent} columns, so it does not close the block "
        f"opened on line {block.line}",
        line,
    )


def _unpaired_shorter_closer(block: FencedBlock) -> BrokenFence | None:
    if len(block.fence) == 3 or block.fence[0] * 3 not in block.body:
        return None
    inner = scan_fences(block.body)
    if not inner or inner[0].info or inner[0].fence[0] != block.fence[0]:
        return None
    line = block.line + inner[0].line
    return BrokenFence(
        SHORTER_CLOSER,
        f"{SHORTER_CLOSER}: {inner[0].fence} on line {line} cannot close the {block.fence} opened on line {block.line}",
        line,
    )


def _columns(leading: str) -> int:
    column = 0
    for char in leading:
        column = column + _TAB_STOP - column % _TAB_STOP if char == "\t" else column + 1
    return column
