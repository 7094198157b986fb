"""A cut or sloppy Markdown: each unclosed fence gets the failure that describes it, through the whole verdict rules."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

import pytest

from verdict.config.keys import Config
from verdict.verify.closers import (
    CONTAINER_ENDED,
    INDENTED_CLOSER,
    ORPHAN_CLOSER,
    SHORTER_CLOSER,
    TEXT_AFTER_CLOSER,
    broken_fences,
)
from verdict.verify.fences import FencedBlock, scan_fences
from verdict.verify.model import Verdict, Verification
from verdict.verify.offline import verify_offline

if TYPE_CHECKING:
    from _typeshed import TraceFunction

OK, TRUNCATED, MALFORMED = Verdict.OK, Verdict.TRUNCATED, Verdict.MALFORMED


def verify(text: str, config: Config | None = None) -> Verification:
    return verify_offline(text, finish_reason="stop", config=config)


# (answer, the verdict, the named reason of the first failing block or "", its error line)
SLOPPY = {
    "text on the closing line": (
        "Here it is:\n```python\nprint(1)\n``` This prints 1.\n\nThat is all.\n",
        TEXT_AFTER_CLOSER,
        4,
    ),
    "a new block opened before the last was closed": (
        "```python\nx = 1\n```python\ny = 2\n```\nDone.\n",
        TEXT_AFTER_CLOSER,
        3,
    ),
    "a closer indented four columns": ("```python\nx = 1\n    ```\nThat's it.\n", INDENTED_CLOSER, 3),
    "a closer shorter than the opener": ("````python\nx = 1\n```\nDone, run it.\n", SHORTER_CLOSER, 3),
    "a list-item fence closed at column 0": (
        "1. Run:\n   ```bash\n   make\n```\n2. Then test.\n",
        CONTAINER_ENDED,
        4,
    ),
    "a stray closer at the end": ("```python\nx = 1\n```\nDone.\n```\n", ORPHAN_CLOSER, 5),
    "a closer that shifted the pairs after a misindented one": (
        "```python\nx = 1\n    ```\nRun it, then:\n```\nout\n```\nThe output above.\n",
        ORPHAN_CLOSER,
        7,
    ),
}


@pytest.mark.parametrize(("text", "reason", "line"), SLOPPY.values(), ids=SLOPPY.keys())
def test_a_malformed_closer_is_malformed_with_its_reason(text: str, reason: str, line: int) -> None:
    result = verify(text)
    assert result.verdict is MALFORMED
    named = [check for check in result.checks if check.verdict is MALFORMED and reason in check.detail]
    assert [(check.detail.split(":")[:2], check.error_line) for check in named] == [
        ([f"line {line}", f" {reason}"], line)
    ]


CUTS = {
    "mid-block": "Here:\n```python\ndef f(:",
    "mid-line after code": "```python\nx = 1\nprint(x",
    "inside a list item": "1. Install:\n   ```bash\n   pip install",
    "inside a block quote": "> ```python\n> x = 1\n> y =",
    "a bare block of output": "```python\nx = 1\n```\nNow the output:\n```\n1\n2",
    "a docstring with a paired indented fence": (
        '```python\ndef f():\n    """Use it:\n\n    ```\n    f()\n    ```\n    """\n    return 1\n'
    ),
    "a nested block that opens with its language": "````markdown\n```python\nx = 1\n```\nmore text",
    "right after the opener": "Sure:\n\n```yaml\n",
}


@pytest.mark.parametrize("text", CUTS.values(), ids=CUTS.keys())
def test_a_block_cut_at_the_end_is_truncated(text: str) -> None:
    result = verify(text)
    assert result.verdict is TRUNCATED
    assert result.checks[-1].detail.startswith("unterminated code fence")


INTACT = {
    "a list-item fence opened on the marker line": "- ```python\n  x = 1\n  ```\n",
    "a docstring holding a fenced example": (
        '```python\ndef f():\n    """\n    ```python\n    f()\n    ```\n    """\n```\n'
    ),
    "four backticks holding a block": "````markdown\n```python\nx = 1\n```\n````\n",
    "tildes holding backticks with text": "~~~\n``` not a closer here\n~~~\n",
    "a quoted fence": '> ```json\n> {"a": 1}\n> ```\n',
}


@pytest.mark.parametrize("text", INTACT.values(), ids=INTACT.keys())
def test_intact_fences_are_not_called_broken(text: str) -> None:
    assert broken_fences(scan_fences(text)) == {}
    assert verify(text).verdict in (OK, Verdict.UNVERIFIABLE)


def test_the_pinned_indented_list_item_closer_is_ok_now() -> None:
    result = verify("Steps:\n\n- ```python\n  def f(x):\n      return x\n  ```\n- done\n")
    assert (result.verdict, result.detail) == (OK, "1/1 blocks parsed")


def test_code_inside_containers_is_checked() -> None:
    result = verify("> ```python\n> def f(:\n> ```\n")
    assert result.verdict is MALFORMED
    assert result.checks[0].error_line == 2


def test_a_broken_closer_past_the_block_limit_is_still_named() -> None:
    text = "".join(f'```json\n{{"i": {i}}}\n```\n' for i in range(10)) + "Done.\n```\n"
    result = verify(text, Config(max_checked_blocks=3))
    assert result.verdict is MALFORMED
    assert result.checks[-1].detail.startswith(f"line 32: {ORPHAN_CLOSER}")


def _steps(blocks: list[FencedBlock]) -> int:
    """Python lines executed by `broken_fences`: its work, counted instead of timed (the regular-expression searches
    it makes are linear by construction: possessive runs, no nested quantifiers)."""
    steps = 0

    def trace(frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        nonlocal steps
        if not frame.f_code.co_filename.endswith(("closers.py", "fences.py")) and "markdown_it" not in (
            frame.f_code.co_filename
        ):
            return None
        steps += event == "line"
        return trace

    sys.settrace(trace)
    try:
        broken_fences(blocks)
    finally:
        sys.settrace(None)
    return steps


@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "````python\n" + "```\n" * n,
        lambda n: "```\n" + "``` text\n" * n,
        lambda n: "```\n" + "    ```\n" * (n + 1),
        lambda n: "".join(f"```py\nx = {i}\n``` after\n" for i in range(n)) + "```\n",
    ],
    ids=["shorter fences", "fences with text", "indented fences", "many blocks"],
)
def test_naming_a_broken_closer_is_linear(shape: Callable[[int], str]) -> None:
    small, large = scan_fences(shape(1_000)), scan_fences(shape(2_000))
    assert broken_fences(large)  # the hostile shape is one the rules must name
    work = _steps(small), _steps(large)
    assert work[0] > 10  # the count is real
    assert work[1] <= 2.1 * work[0]  # the searches run in C: the Python work is constant, or linear in the blocks
