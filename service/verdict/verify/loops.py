"""Repetition loops: an answer whose end is the same text over and over. Pure, and bounded whatever the answer's size.

A model caught in a loop repeats a line, a sentence or a few words until something stops it. When the stop is the token
budget, the finish reason already says truncated; this catches the loops a server stopped some other way (a stop
sequence, a repetition guard, a caller's own cap) or whose finish reason the caller did not forward. A loop is a
failure of its own: retrying helps, asking the model to continue does not.

What counts (measured against real intact text, docs/verification.md): the end of the answer, trailing whitespace
aside, is periodic, with a repeated unit of at most `MAX_UNIT` characters repeated at least `MIN_REPEATS` times over at
least `MIN_SPAN` characters, and the unit holds at least two different non-space characters and at least one letter
(so rules `-----`, box drawing, padding `0000` and table borders `|   |   |` never count).

Only the last `WINDOW` characters are read, so a 4 MB answer costs what a 32 KB one does.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_UNIT", "MIN_REPEATS", "MIN_SPAN", "WINDOW", "RepetitionLoop", "find_loop"]

MAX_UNIT = 1024
"""The longest repeated unit looked for, in characters (a paragraph)."""
MIN_REPEATS = 8
"""How many times the unit must repeat at the end."""
MIN_SPAN = 2048
"""How many characters the repetition must cover at least: 1.5 times the longest repetition found at an ending of
real intact text (1,360 characters: twenty identical `go list` lines in a Go test script)."""
WINDOW = 32 * 1024
"""The characters at the end of the answer that are read: enough for `MIN_REPEATS` of the longest unit."""


@dataclass(frozen=True)
class RepetitionLoop:
    """The repeated unit, how many times it repeats (whole units), and the response line where the repetition starts."""

    unit: str
    repeats: int
    line: int

    @property
    def detail(self) -> str:
        shown = self.unit if len(self.unit) <= 60 else self.unit[:57] + "..."
        return f"repetition loop: {shown!r} repeated {self.repeats} times to the end of the answer"


def find_loop(text: str) -> RepetitionLoop | None:
    """The repetition loop the answer ends in, or None. Bounded: reads at most `WINDOW` characters.

    For each candidate period q (shortest first) the longest suffix with that period is found by binary search on
    slice comparisons (a suffix that repeats with period q has every shorter suffix repeating too), after a one-slice
    test at the minimum span that rejects nearly every q at once.
    """
    end = len(text.rstrip())
    start = max(0, end - WINDOW)
    tail = text[start:end]
    size = len(tail)
    for period in range(1, min(MAX_UNIT, size // MIN_REPEATS) + 1):
        needed = max(MIN_SPAN, MIN_REPEATS * period)
        if needed > size or tail[-1] != tail[-1 - period]:
            continue
        if not _periodic(tail, period, needed - period):
            continue
        low, high = needed - period, size - period  # the longest length L with tail[-L:] == tail[-L - q : -q]
        while low < high:
            middle = (low + high + 1) // 2
            if _periodic(tail, period, middle):
                low = middle
            else:
                high = middle - 1
        first = size - low - period
        unit = tail[first : first + period]
        if not _meaningful(unit):
            # The last `low + period` (>= MIN_SPAN > MAX_UNIT) characters repeat a unit without two visible characters
            # and a letter; any longer period's unit would be a window of them, no better. Stop here: trying every
            # period over a megabyte of `-` would otherwise cost seconds.
            return None
        if "\n" in unit and not unit.endswith("\n"):  # start the unit on a line: the trailing newline was stripped
            shift = unit.index("\n") + 1
            first, unit = first + shift, unit[shift:] + unit[:shift]
        repeats, rest = divmod(size - first, period)
        repeats += rest == period - 1 and unit.endswith("\n")
        return RepetitionLoop(unit, repeats, text.count("\n", 0, start + first) + 1)
    return None


def _periodic(tail: str, period: int, length: int) -> bool:
    """Whether the last `length` characters equal the `length` characters `period` before them."""
    size = len(tail)
    return tail[size - length :] == tail[size - length - period : size - period]


def _meaningful(unit: str) -> bool:
    visible = {char for char in unit if not char.isspace()}
    return len(visible) >= 2 and any(char.isalpha() for char in visible)
