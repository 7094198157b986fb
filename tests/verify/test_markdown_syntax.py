"""Markdown in Markdown: nested fences closed is ok, one left open is malformed, prose alone is unverifiable."""

from __future__ import annotations

from verdict.verify.markdown_syntax import check_markdown
from verdict.verify.model import Verdict
from verdict.verify.offline import verify_offline

README = "# Tool\n\nInstall:\n\n```bash\npip install tool\n```\n\n- item\n\n  ```python\n  import tool\n  ```\n"


def test_closed_nested_fences_are_ok() -> None:
    result = check_markdown(README)
    assert (result.verdict, result.detail) == (Verdict.OK, "2 nested fences, all closed")


def test_a_nested_fence_left_open_is_malformed_at_its_opening_line() -> None:
    result = check_markdown("# Tool\n\n```bash\npip install tool\n\nMore prose.\n")
    assert (result.verdict, result.line) == (Verdict.MALFORMED, 3)
    assert "never closed" in result.detail


def test_prose_alone_has_nothing_to_check() -> None:
    assert check_markdown("# Title\n\nJust *text* and a | table |\n").verdict is Verdict.UNVERIFIABLE


def test_in_an_answer_the_outer_fence_is_longer() -> None:
    answer = f"Here is the README:\n\n````markdown\n{README}````\n"
    result = verify_offline(answer)
    assert (result.verdict, result.checks[0].language) == (Verdict.OK, "markdown")
    broken = "Here:\n\n````md\n# x\n\n```python\nprint(1)\n````\n"
    assert verify_offline(broken).verdict is Verdict.MALFORMED


def test_hostile_input_is_linear_and_bounded() -> None:
    assert check_markdown("```\nx\n```\n" * 50_000).verdict is Verdict.OK
    assert check_markdown("```\nx\n```\n" * 50_000 + "```\nopen\n").verdict is Verdict.MALFORMED
