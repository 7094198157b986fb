"""The fence scanner against markdown-it-py, the CommonMark oracle: tricky hand-written cases, seeded random documents.

The oracle runs with HTML blocks switched off, because the scanner deliberately does not model them. Containers (list
items, block quotes) are modelled: the scanner must read every document, nested or not, as the oracle does.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import TraceFunction

import pytest
from markdown_it import MarkdownIt

from verdict.verify.fences import (
    CONTAINER_SCAN_MAX_CHARS,
    FencedBlock,
    needs_containers,
    scan_fences,
    scan_fences_bounded,
)

ORACLE = MarkdownIt("commonmark", {"html": False})
WITH_HTML = MarkdownIt("commonmark")

Seen = tuple[str, str, int, bool]


def oracle(text: str, parser: MarkdownIt = ORACLE) -> list[Seen]:
    """(info, content, opening line, closed) for every fence markdown-it-py finds."""
    seen = []
    for token in parser.parse(text):
        if token.type != "fence":
            continue
        assert token.map is not None
        start, end = token.map
        content_lines = token.content.count("\n") + (1 if token.content and not token.content.endswith("\n") else 0)
        seen.append((token.info.strip(), token.content, start + 1, content_lines == end - start - 2))
    return seen


def scanned(text: str) -> list[Seen]:
    return [(block.info, _as_markdown_it_py_reads(block), block.line, block.closed) for block in scan_fences(text)]


def _as_markdown_it_py_reads(block: FencedBlock) -> str:
    """markdown-it-py drops a whitespace-only last line of an unclosed fence at the very end of the document (an
    IndexError in its fence rule ends the scan; commonmark.js keeps the line). Nothing else is adjusted."""
    body = block.body
    if block.closed or body.endswith("\n"):
        return body
    last = body.rfind("\n") + 1
    return body[:last] if not body[last:].strip(" \t") else body


TRICKY = {
    "backticks": "Intro\n\n```python\nprint(1)\n```\n\nAfter",
    "tildes": "~~~yaml\na: 1\n~~~\n",
    "longer closing fence closes": "```\ncode\n`````\n",
    "shorter closing fence does not": "````\ncode\n```\nstill code\n````\n",
    "tilde does not close backticks": "```\ncode\n~~~\nmore\n```\n",
    "four backticks hold a fence": "````markdown\n```python\nx = 1\n```\n````\n",
    "indented one to three spaces": " ```\n a\nb\n   ```\n  ```sh\n    echo\n  echo\n ```\n",
    "indent of content stripped up to the opener's": "   ```\n      deep\n  shallow\nnone\n   ```\n",
    "four spaces is not a fence": "    ```\n    code\n    ```\n",
    "a tab is not a fence indent": "\t```\ncode\n```\n",
    "closing fence with trailing spaces and tabs": "```\nx\n```  \t \n",
    "closing fence with trailing text is content": "```\nx\n``` not a close\n```\n",
    "backtick in a backtick info string is inline code": "``` a`b\n```\ntext\n",
    "tilde info may hold backticks": "~~~ a`b\nx\n~~~\n",
    "inline triple backticks in prose": "Use ```python``` in prose, then:\n\n```\nreal\n```\n",
    "unclosed at end of document": "Text\n```python\ndef f(:\n",
    "opener is the last line, no newline": "Text\n```python",
    "crlf line endings": "```json\r\n{}\r\n```\r\nafter\r\n",
    "lone cr line endings": "```\rx\r```\r",
    "empty fence": "```\n```\n",
    "fence interrupts a paragraph": "para line\n```\ncode\n```\n",
    "fence after a heading": "# Title\n```\ncode\n```\n",
    "closing fence indented three": "```\nx\n   ```\n",
    "closing fence indented four is content": "```\nx\n    ```\n```\n",
    "info string with attributes": '```python title="x.py" {.class}\nx\n```\n',
    "partial tab in content under an indented opener": "  ```\n\tcode\n  ```\n",
    "replacement characters": "```\n\ufffd\ufffd\n```\n",
    "setext underline after a fence": "```\n===\n```\n---\n",
    "thematic break lookalike": "***\n```\n***\n```\n",
    "consecutive fences": "```\na\n```\n```\nb\n```\n~~~\nc\n~~~\n",
    "tilde fence closed by longer tildes": "~~~~\n~~~\n~~~~~~\n",
    "a fence opens inside nothing but whitespace lines": "\n\n   \n```\n\n  \n```\n",
    "link reference definition before a fence": "[a]: /url\n```\nx\n```\n",
    "unicode spaces are not indent": "\u00a0```\nx\n```\n",
    "closing fence at the end without a newline": "```py\nx = 1\n```",
    "closing fence at the end after a lone cr": "~~~\rx\r~~~",
    "closing fence with a tab before crlf": "```\r\nx\r\n```\t\r\n",
    "vertical tab and form feed end no line": "```\nx\x0b```\x0c\n```\n",
    "unicode line separators end no line": "```\nx\u2028```\x85```\n```",
    "info string after a tab": "```\tpython\nx\n```\n",
    "a longer fence nested in a longer one": "`````\n````\n```\n````\n`````\n",
}


@pytest.mark.parametrize("text", TRICKY.values(), ids=TRICKY.keys())
def test_agrees_with_markdown_it_on_tricky_cases(text: str) -> None:
    assert scanned(text) == oracle(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("````markdown\n```python\nx = 1\n```\n````\n", [("markdown", "```python\nx = 1\n```\n", True)]),
        ("~~~\ncode\n", [("", "code\n", False)]),
        ("   ```\n      deep\n  shallow\n   ```\n", [("", "   deep\nshallow\n", True)]),
        ("``` a`b\n```\n", [("", "", False)]),
    ],
)
def test_blocks_say_what_is_in_them(text: str, expected: list[tuple[str, str, bool]]) -> None:
    assert [(b.info, b.body, b.closed) for b in scan_fences(text)] == expected


def test_language_is_the_first_word_of_the_info_string() -> None:
    (block,) = scan_fences('```Python title="x.py"\nx\n```')
    assert block.language == "Python"
    assert block.info == 'Python title="x.py"'


def test_lines_are_one_based_lines_of_the_whole_text() -> None:
    text = "a\r\nb\r\n```\r\nx\r\n```\r\n\rc\n~~~\n"
    assert [(b.line, b.closed) for b in scan_fences(text)] == [(3, True), (8, False)]


def test_body_lines_counts_the_content_lines() -> None:
    assert [b.body_lines for b in scan_fences("```\n```\n```\n\n```\n```\na\nb")] == [0, 1, 2]


LINE_PIECES = [
    "```",
    "````",
    "~~~",
    "~~~~~",
    "``",
    "``` python",
    "```py3",
    "~~~ a`b",
    "``` a`b",
    "```json  ",
    "x = 1",
    "  indented code",
    "\tcode",
    "",
    "   ",
    "# heading",
    "text with ``` inside",
    "===",
    "- item",
    "> quote",
    "[ref]: /url",
    "\ufffd",
    "\u00a0```",
]
INDENTS = ["", "", "", " ", "  ", "   ", "    ", "\t", " \t"]
TRAILERS = ["", "", "", " ", "\t", " x", "`"]
ENDINGS = ["\n", "\n", "\n", "\r\n", "\r"]
CHAR_PIECES = ["```", "````", "~~~", "``", "`", "~", " ", "  ", "\t", "py", " js x", "\n", "\n", "\r\n", "\r", "x = 1"]


def _random_line_document(rng: random.Random) -> str:
    lines = [rng.choice(INDENTS) + rng.choice(LINE_PIECES) + rng.choice(TRAILERS) for _ in range(rng.randint(0, 25))]
    text = "".join(line + rng.choice(ENDINGS) for line in lines)
    return text if rng.random() < 0.7 else text.rstrip("\r\n")


def _random_char_document(rng: random.Random) -> str:
    return "".join(rng.choice(CHAR_PIECES) for _ in range(rng.randint(0, 40)))


@pytest.mark.parametrize("generate", [_random_line_document, _random_char_document])
def test_agrees_with_markdown_it_on_seeded_random_documents(generate: Callable[[random.Random], str]) -> None:
    rng = random.Random(20261130)
    disagreements = []
    for _ in range(3000):
        text = generate(rng)
        if scanned(text) != oracle(text):
            disagreements.append(text)
    assert disagreements == []


def test_the_generators_produce_the_interesting_shapes() -> None:
    rng = random.Random(20261130)
    shapes = [scan_fences(_random_line_document(rng)) for _ in range(3000)]
    assert any(b.indent for blocks in shapes for b in blocks)
    assert any(not b.closed for blocks in shapes for b in blocks)
    assert any(b.closed and b.fence.startswith("~") for blocks in shapes for b in blocks)
    assert sum(len(blocks) > 2 for blocks in shapes) > 50


class TestContainers:
    """Fences inside list items and block quotes, as CommonMark reads them."""

    def test_a_list_item_fence_indented_at_most_three_columns_is_the_same_block(self) -> None:
        text = "1. Install:\n\n   ```bash\n   pip install verdict\n   ```\n"
        assert [(b.info, b.body, b.closed) for b in scan_fences(text)] == [("bash", "pip install verdict\n", True)]

    def test_a_fence_opened_on_the_list_marker_line_is_closed_by_its_indented_closer(self) -> None:
        text = "- ```python\n  x = 1\n  ```\n"
        assert [(b.line, b.body, b.closed) for b in scan_fences(text)] == [(1, "x = 1\n", True)]

    def test_a_blockquote_fence_loses_its_quote_markers(self) -> None:
        text = "> ```python\n> x = 1\n>     y\n> ```\n"
        assert [(b.info, b.body, b.closed) for b in scan_fences(text)] == [("python", "x = 1\n    y\n", True)]

    def test_a_fence_nested_four_columns_deep_in_a_list_is_seen(self) -> None:
        text = "- a\n  - b\n\n    ```sh\n    ls\n    ```\n"
        assert [(b.info, b.body, b.closed) for b in scan_fences(text)] == [("sh", "ls\n", True)]

    def test_a_quote_in_a_list_in_a_quote(self) -> None:
        text = "> 1. step\n>    > ```json\n>    > {}\n>    > ```\n"
        assert [(b.info, b.body, b.closed) for b in scan_fences(text)] == [("json", "{}\n", True)]

    def test_an_unclosed_list_item_fence_that_runs_to_the_end_is_unclosed(self) -> None:
        (block,) = scan_fences("1. Run:\n   ```python\n   x = (\n")
        assert (block.closed, block.container_end) == (False, False)

    def test_a_fence_whose_list_item_ends_first_is_closed_by_the_container(self) -> None:
        first, second = scan_fences("1. Run:\n   ```bash\n   make\n```\n2. Next\n")
        assert (first.body, first.closed, first.container_end) == ("make\n", False, True)
        assert (second.line, second.closed, second.container_end) == (4, False, False)

    def test_an_html_block_does_not_hide_a_fence(self) -> None:
        text = "<div>\n```\nx\n```\n</div>\n"
        assert oracle(text, WITH_HTML) == []
        assert [b.body for b in scan_fences(text)] == ["x\n"]

    def test_top_level_texts_never_need_the_container_parser(self) -> None:
        assert not needs_containers("Intro\n\n```python\nx = 1\n```\n- a list after\n")
        assert not needs_containers("   ```\n   x\n   ```\n")
        assert needs_containers("- a\n  ```\n  x\n  ```\n")
        assert needs_containers("> ```\n> x\n")

    def test_a_text_over_the_size_limit_is_scanned_at_the_top_level_only(self) -> None:
        text = "> ```python\n> x = (\n" + "> \n" * (CONTAINER_SCAN_MAX_CHARS // 3)
        assert scan_fences(text) == []
        assert len(scan_fences(text[:CONTAINER_SCAN_MAX_CHARS])) == 1


class TestBoundedScan:
    def test_builds_only_the_first_blocks_but_counts_them_all(self) -> None:
        scan = scan_fences_bounded("```\na\n```\n" * 10, 3)
        assert [b.body for b in scan.blocks] == ["a\n"] * 3
        assert scan.total == 10
        assert scan.skipped_line == 10
        assert scan.unclosed_tail is None

    def test_keeps_an_unterminated_last_block_past_the_limit(self) -> None:
        scan = scan_fences_bounded("```\na\n```\n" * 10 + "~~~python\nx = (", 3)
        assert scan.total == 11
        assert scan.unclosed_tail is not None
        assert (scan.unclosed_tail.line, scan.unclosed_tail.info, scan.unclosed_tail.closed) == (31, "python", False)

    def test_without_a_limit_is_scan_fences(self) -> None:
        text = "```\na\n```\n~~~\n"
        assert list(scan_fences_bounded(text, None).blocks) == scan_fences(text)

    def test_under_the_limit_nothing_is_skipped(self) -> None:
        scan = scan_fences_bounded("```\na\n```\n```\n", 5)
        assert (len(scan.blocks), scan.total, scan.skipped_line, scan.unclosed_tail) == (2, 2, 0, None)


@pytest.mark.parametrize(
    "text",
    [
        "~~~\n" + "```x\n" * 50_000,
        "```\n" * 100_000,
        " " * 1_000_000 + "```",
        "x" * 1_000_000,
        "```" + " " * 100_000 + "x\n" + "text\n" * 1000,
        "`" * 100_000 + "\n" + "~" * 100_000,
        "\x00```\n\x00\n",
    ],
    ids=[
        "opener-like lines in an unclosed fence",
        "many fences",
        "a long indent",
        "a long line",
        "long info",
        "long runs",
        "nul",
    ],
)
def test_hostile_texts_are_scanned(text: str) -> None:
    blocks = scan_fences(text)
    assert sum(not b.closed for b in blocks) <= 1
    assert all(b.closed for b in blocks[:-1])


CONTAINER_PREFIXES = ["", "", "> ", ">", "- ", "* ", "1. ", "10) ", "  ", "   ", "    ", "\t", "> > ", "- - ", ">  "]
NESTED_PIECES = ["```", "```python", "~~~", "````", "``` x", "x = 1", "", "text", "- item", "> q", "    code", "***"]


def _random_nested_document(rng: random.Random) -> str:
    """Lines under random stacks of quote markers, list markers and indents: nesting, laziness, ends of items."""
    lines = []
    for _ in range(rng.randint(0, 20)):
        prefix = "".join(rng.choice(CONTAINER_PREFIXES) for _ in range(rng.choice([0, 1, 1, 2, 3])))
        lines.append(prefix + rng.choice(NESTED_PIECES) + rng.choice(TRAILERS))
    text = "".join(line + rng.choice(ENDINGS) for line in lines)
    return text if rng.random() < 0.8 else text.rstrip("\r\n")


def _hostile_nested_document(rng: random.Random) -> str:
    """Deep nesting (past markdown-it-py's 20 levels), long marker runs, fences on marker lines."""
    depth = rng.randint(1, 24)
    marker = rng.choice(["> ", "- ", "1. ", ">", "  - "])
    lines = []
    for level in range(rng.randint(1, 12)):
        prefix = marker * rng.randint(0, depth) if marker != "  - " else "  " * rng.randint(0, depth) + "- "
        lines.append(prefix + rng.choice(NESTED_PIECES) + ("" if level % 3 else rng.choice(TRAILERS)))
    return "\n".join(lines) + rng.choice(["", "\n"])


@pytest.mark.parametrize("generate", [_random_nested_document, _hostile_nested_document])
def test_agrees_with_markdown_it_on_nested_documents(generate: Callable[[random.Random], str]) -> None:
    rng = random.Random(20261201)
    disagreements = []
    too_deep = 0
    for _ in range(3000):
        text = generate(rng)
        if _past_the_nesting_limit(text):
            too_deep += 1  # markdown-it-py stops reading there; the scan may still see a top-level fence after it
        elif scanned(text) != oracle(text):
            disagreements.append(text)
    assert disagreements == []
    assert too_deep < 1000  # most documents are compared


def _past_the_nesting_limit(text: str) -> bool:
    limit = ORACLE.options["maxNesting"]
    return any(token.level >= limit - 1 for token in ORACLE.parse(text))


def test_the_nested_generators_produce_both_readings_and_the_interesting_shapes() -> None:
    rng = random.Random(20261201)
    texts = [_random_nested_document(rng) for _ in range(3000)] + [_hostile_nested_document(rng) for _ in range(3000)]
    routed = [needs_containers(text.replace("\r\n", "\n").replace("\r", "\n")) for text in texts]
    assert 500 < sum(routed) < len(texts) - 500
    blocks = [block for text in texts for block in scan_fences(text)]
    assert sum(block.container_end for block in blocks) > 50
    assert sum(not block.closed and not block.container_end for block in blocks) > 50
    assert sum(block.closed for block in blocks) > 500
    assert any(text.count(">") > 20 for text in texts)


def _count_scan_steps(text: str) -> int:
    """How many Python lines run while the text is scanned (markdown-it-py's and the scanner's): the scan's work,
    counted deterministically instead of timed."""
    steps = 0

    def trace(frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        nonlocal steps
        if "markdown_it" not in frame.f_code.co_filename and not frame.f_code.co_filename.endswith("fences.py"):
            return None
        if event == "line":
            steps += 1
        return trace

    assert needs_containers(text)
    sys.settrace(trace)
    try:
        scan_fences(text)
    finally:
        sys.settrace(None)
    return steps


@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "> " * n + "```\n",
        lambda n: "".join(">" * i + " x\n" for i in range(n)) + "> ```\n",
        lambda n: "".join("  " * (i % 30) + "- ```\n" for i in range(n)),
        lambda n: "- a\n" + "  ```\n  x\n  ```\n" * n,
        lambda n: "- ```\n" + "  ```x\n" * n,
        lambda n: "1. " * n + "```\n  x\n",
        lambda n: "- " + "x" * (200 * n) + "\n  ```\n",
    ],
    ids=[
        "one deep quote",
        "quotes deepening",
        "lists deepening",
        "many fences in a list",
        "unclosed",
        "markers",
        "long",
    ],
)
def test_the_container_scan_does_linear_work_on_hostile_shapes(shape: Callable[[int], str]) -> None:
    small, large = _count_scan_steps(shape(400)), _count_scan_steps(shape(800))
    assert small > 100  # the count is real
    assert large <= 2.1 * small
