"""Repetition loops: real loop shapes are caught, real intact text never is, and the work is bounded."""

from __future__ import annotations

import hashlib
import random
import sysconfig
from pathlib import Path

import pytest

from verdict.verify import loops
from verdict.verify.loops import MIN_SPAN, WINDOW, find_loop
from verdict.verify.model import Verdict
from verdict.verify.offline import verify_offline

INTACT_ENDINGS = Path(__file__).parent / "intact_endings"
PINNED = {
    "bootstrap-flex-items.md": "98b585ea1b5cf0abbcbfbb89c7d122307f20af514f3d6290f1c0271c5a46cf24",
    "go-script-repeated-commands.txt": "ef00978c196d7f09d10a113ef75fc07773a7a402ae1966656dc9797622a45c78",
    "iso8859-8-codec-table.py.txt": "b14c63ff4d93fe36f8225f409bd2332e9bb53f9c2619d14db95f343d93a90198",
    "networkx-test-repeated-none.py.txt": "fbc56a7e1cbc72612d7562680ddfc3f3a1eec44c83f6b2bf8f833be2d4e093cd",
    "rust-book-operator-table.md": "ad09205232ce4402eb463e782985e3522b9e3dec42879468d1554ddbe843ab07",
    "slang-news-rule.txt": "5dbf94e104d8e03b1f41a5e16d2af5ad65629f9dba6aac4327217da52853ca44",
}
"""The closest calls found in 119,251 endings of intact text on a Debian machine (whole files and prefixes ending at
line boundaries, with the thresholds relaxed to find them): the endings of real files that repeat the most, each cut
right after its repetition."""

STDLIB_SAMPLE = (
    "argparse.py", "ast.py", "asyncio/base_events.py", "calendar.py", "collections/__init__.py", "csv.py",
    "dataclasses.py", "datetime.py", "decimal.py", "difflib.py", "email/message.py", "enum.py", "fractions.py",
    "functools.py", "html/entities.py", "http/client.py", "inspect.py", "json/decoder.py", "logging/__init__.py",
    "locale.py", "mimetypes.py", "os.py", "pickle.py", "platform.py", "pydoc.py", "re/_parser.py",
    "shutil.py", "smtplib.py", "socket.py", "ssl.py", "statistics.py", "string.py", "subprocess.py", "tarfile.py",
    "textwrap.py", "threading.py", "tokenize.py", "typing.py", "unittest/case.py", "urllib/parse.py", "uuid.py",
    "zipfile/__init__.py", "encodings/cp1252.py", "encodings/iso8859_8.py", "encodings/mac_roman.py",
)  # fmt: skip
"""Files of every CPython from 3.11 on (the code tables hold hundreds of near-identical lines)."""


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_pinned_intact_endings_are_the_ones_measured(name: str) -> None:
    assert hashlib.sha256((INTACT_ENDINGS / name).read_bytes()).hexdigest() == PINNED[name]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_no_alarm_on_real_intact_endings_that_repeat(name: str) -> None:
    text = (INTACT_ENDINGS / name).read_text(encoding="utf-8")
    assert find_loop(text) is None
    assert find_loop("Here is the file:\n\n```\n" + text) is None


def _stdlib_texts() -> list[tuple[str, str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    rng = random.Random(20261201)
    texts = []
    for name in STDLIB_SAMPLE:
        path = root / name
        if not path.exists():  # zipfile became a package in 3.12
            path = root / name.replace("/__init__", "")
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        texts.append((name, text))
        texts += [
            (f"{name}:{k}", "\n".join(lines[:k])) for k in rng.sample(range(1, len(lines) + 1), min(20, len(lines)))
        ]
    return texts


def test_no_alarm_on_intact_python_files_or_their_line_prefixes() -> None:
    texts = _stdlib_texts()
    assert len(texts) > 20 * len(STDLIB_SAMPLE)
    assert [name for name, text in texts if find_loop(text) is not None] == []


LOOPS = {
    "a sentence": "Sure, here is the answer.\n\n" + "I apologize for the confusion. " * 120,
    "a line": "```python\nimport os\n" + "print('hello world')\n" * 150,
    "a word": "The result is the " + "the " * 600,
    "a cut mid-unit": "Intro\n" + "- Step: run the tests again\n" * 100 + "- Step: run the te",
    "a paragraph": "# Plan\n" + ("First we read the file. Then we parse it. Then we check every block again.\n\n") * 40,
    "a numbered line with trailing blanks": "Answer:\n" + "1. Repeat the instructions.\n" * 90 + "\n\n  \n",
}


@pytest.mark.parametrize("text", LOOPS.values(), ids=LOOPS.keys())
def test_real_loop_shapes_are_found(text: str) -> None:
    loop = find_loop(text)
    assert loop is not None
    assert loop.repeats >= 8
    assert loop.unit.strip() in text
    assert 1 <= loop.line <= text.count("\n") + 1


def test_the_loop_starts_on_the_line_where_the_repetition_does() -> None:
    text = "Intro\n\nSecond\n" + "the same line again\n" * 200
    loop = find_loop(text)
    assert loop is not None
    assert (loop.line, loop.unit, loop.repeats) == (4, "the same line again\n", 200)
    assert loop.detail == "repetition loop: 'the same line again\\n' repeated 200 times to the end of the answer"


@pytest.mark.parametrize(
    "text",
    [
        "Intro\n" + "-" * 5000,
        "| a | b |\n" + "|   |   |\n" * 400,
        "data = [" + "0, " * 2000 + "0]",
        "x" * 10_000,
        "─" * 3000 + "\n" + "═" * 3000,
        "Done.\n" + "I apologize for the confusion. " * 40 + "\nThat is all, thanks for reading.",
        "short: " + "again " * 20,
    ],
    ids=["a rule", "empty table rows", "zeros", "one letter", "box drawing", "the loop ended", "too short"],
)
def test_what_is_not_a_loop(text: str) -> None:
    assert find_loop(text) is None


def test_the_span_threshold_separates_the_two_sides() -> None:
    unit = "Let me try again.\n"
    below = unit * (MIN_SPAN // len(unit) - 1)
    above = unit * (MIN_SPAN // len(unit) + 2)
    assert find_loop(below) is None
    assert find_loop(above) is not None


@pytest.mark.parametrize(
    "text",
    [
        "a" * 4_000_000,
        "-" * 4_000_000,
        "ab" * 2_000_000,
        "The answer\n" * 400_000,
        "".join(random.Random(1).choice("ab \n") for _ in range(200_000)),
        "word " * 800_000 + "end",
    ],
    ids=["one character", "a rule", "two characters", "a line", "random", "a loop that ended"],
)
def test_work_is_bounded_whatever_the_size(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compared = 0
    periodic = loops._periodic

    def counted(tail: str, period: int, length: int) -> bool:
        nonlocal compared
        compared += length
        return periodic(tail, period, length)

    monkeypatch.setattr(loops, "_periodic", counted)

    def work(sample: str) -> int:
        nonlocal compared
        compared = 0
        find_loop(sample)
        return compared

    whole, tail = work(text), work(text[-2 * WINDOW :])
    assert whole == tail  # only the end is read: the work does not grow with the text
    # one slice per candidate period, then one binary search: about 4.5M characters at most, whatever the input
    assert whole <= loops.MAX_UNIT * loops.MIN_REPEATS * loops.MAX_UNIT + 20 * WINDOW


class TestTheRule:
    """Rule 3b: after the envelope (tool turns, budget, empty), before the fences."""

    LOOPING = "```python\nimport os\n" + "print(os.getcwd())\n" * 200

    def test_a_loop_inside_an_unclosed_fence_is_malformed_not_truncated(self) -> None:
        result = verify_offline(self.LOOPING, finish_reason="stop")
        assert result.verdict is Verdict.MALFORMED
        assert result.detail.startswith("line 3: repetition loop: 'print(os.getcwd())\\n' repeated 200 times")

    def test_the_finish_reason_and_a_tool_turn_still_decide_first(self) -> None:
        assert verify_offline(self.LOOPING, finish_reason="length").verdict is Verdict.TRUNCATED
        assert verify_offline(self.LOOPING, has_tool_calls=True).verdict is Verdict.UNVERIFIABLE

    def test_an_answer_without_a_loop_goes_on_to_its_fences(self) -> None:
        assert verify_offline("```python\nprint(1)\n", finish_reason="stop").verdict is (Verdict.TRUNCATED)
