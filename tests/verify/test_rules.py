"""Every rule of the reference verifier, in its order of precedence, on real-looking answers (pure, no bash)."""

from __future__ import annotations

import pytest

from verdict.config.keys import Config
from verdict.verify.fences import scan_fences_bounded
from verdict.verify.model import BlockCheck, Verdict, Verification, VerifyInput
from verdict.verify.offline import verify_offline
from verdict.verify.rules import (
    NO_BLOCKS,
    TRUNCATION_REASONS,
    PendingCheck,
    aggregate,
    envelope_verdict,
    finish_reason_key,
    triage,
)

OK, TRUNCATED, MALFORMED, UNVERIFIABLE = Verdict.OK, Verdict.TRUNCATED, Verdict.MALFORMED, Verdict.UNVERIFIABLE
CONFIG = Config()

ANSWER = """Here is a script that loads the settings:

```python
import json

def load(path):
    with open(path) as f:
        return json.load(f)
```

And the settings file:

```json
{"debug": false, "workers": 4}
```
"""


def verify(text: str, config: Config = CONFIG, **envelope: object) -> Verification:
    return verify_offline(text, config=config, **envelope)  # type: ignore[arg-type]


def test_a_good_answer_is_ok() -> None:
    result = verify(ANSWER)
    assert (result.verdict, result.detail) == (OK, "2/2 blocks parsed")
    assert [(c.block_index, c.language, c.verdict, c.line) for c in result.checks] == [
        (0, "python", OK, 3),
        (1, "json", OK, 13),
    ]


class TestEnvelope:
    def test_a_tool_call_turn_is_exempt_even_from_truncation(self) -> None:
        result = verify("Let me check the file.", finish_reason="length", has_tool_calls=True)
        assert result == Verification(UNVERIFIABLE, "tool-call turn; no prose answer to check")

    @pytest.mark.parametrize("reason", ["tool_calls", "tool_use", "function_call"])
    def test_a_tool_finish_reason_is_a_tool_turn(self, reason: str) -> None:
        assert verify("", finish_reason=reason).verdict is UNVERIFIABLE

    @pytest.mark.parametrize(
        "reason",
        [
            "length",
            "max_tokens",
            "MAX_TOKENS",
            "max_output_tokens",
            "model_length",
            "model_context_window_exceeded",
            "limit",
            " Length ",
        ],
        ids=[
            "openai/ollama",
            "anthropic/bedrock",
            "gemini/cohere",
            "openai responses",
            "mistral",
            "anthropic context window",
            "llama.cpp",
            "spaced",
        ],
    )
    def test_every_providers_budget_finish_reason_is_truncated_even_when_the_answer_parses(self, reason: str) -> None:
        result = verify(ANSWER, finish_reason=reason)
        assert result == Verification(TRUNCATED, f"finish_reason={reason.strip()}")

    def test_length_is_decisive_even_with_empty_text(self) -> None:
        assert verify("", finish_reason="length").verdict is TRUNCATED

    @pytest.mark.parametrize("reason", ["stop", "end_turn", "STOP", "content_filter", "", "eos"])
    def test_other_finish_reasons_leave_the_checks_to_decide(self, reason: str) -> None:
        assert verify(ANSWER, finish_reason=reason).verdict is OK

    @pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n"])
    def test_empty_text_is_malformed(self, text: str) -> None:
        assert verify(text) == Verification(MALFORMED, "empty response")

    def test_the_spellings_fold_to_one(self) -> None:
        assert finish_reason_key("MAX-TOKENS") == "max_tokens"
        assert {finish_reason_key(r) for r in ("length", "LENGTH", "max_tokens", "Max_Tokens")} <= TRUNCATION_REASONS

    def test_the_envelope_leaves_ordinary_answers_to_the_blocks(self) -> None:
        assert envelope_verdict(VerifyInput(ANSWER, finish_reason="stop")) is None


def test_prose_without_fences_is_unverifiable() -> None:
    assert verify("The capital of France is Paris. Use `print()` inline.") == NO_BLOCKS


class TestBlocks:
    @pytest.mark.parametrize("language", ["python", "json", "fortran", "", "text"])
    def test_an_unterminated_fence_is_truncated_whatever_its_language(self, language: str) -> None:
        result = verify(f'Sure:\n\n```{language}\nfn main() {{\n    println!("hi");\n')
        assert result.verdict is TRUNCATED
        assert result.checks[0].detail == "unterminated code fence (```)"
        assert result.checks[0].line == 3

    def test_an_unterminated_fence_is_truncated_even_when_its_content_parses(self) -> None:
        assert verify("```python\nprint('complete')\n").verdict is TRUNCATED

    def test_an_empty_block_is_unverifiable(self) -> None:
        result = verify("```python\n\n   \n```")
        assert (result.verdict, result.checks[0].detail) == (UNVERIFIABLE, "empty block")

    @pytest.mark.parametrize(
        ("language", "detail"),
        [
            ("fortran", "no structural check for fortran"),
            ("octave", "no structural check for octave: the grammar charges 15 % of Octave's own intact library"),
            ("", "no language on the fence"),
            ("diff", "diff: nothing structural to check"),
            ("console", "console transcript: commands mixed with their output"),
            ("jsonc", "jsonc is not strict JSON"),
        ],
    )
    def test_languages_without_a_checker_are_unverifiable(self, language: str, detail: str) -> None:
        result = verify(f"```{language}\nsome content here\n```")
        assert result.verdict is UNVERIFIABLE
        assert result.checks[0].detail == detail
        assert result.detail == f"no block had a structural check ({result.checks[0].language}: {detail})"

    def test_a_malformed_block_names_the_response_line(self) -> None:
        text = "Intro\n\n```json\n{}\n```\n\nMore\n\n```python\nx = (\n```\n"
        result = verify(text)
        assert result.verdict is MALFORMED
        assert result.detail == "1/2 blocks: python: line 10: '(' was never closed"
        assert result.checks[1] == BlockCheck(1, "python", MALFORMED, "line 10: '(' was never closed", 9, 10)

    def test_a_pycon_block_is_checked_as_a_session(self) -> None:
        result = verify("```pycon\n>>> 1 + 1\n2\n>>> print((1\n```")
        assert result.checks[0].language == "python"
        assert (result.verdict, result.checks[0].error_line) == (MALFORMED, 4)

    @pytest.mark.parametrize(
        ("text", "error_line"),
        [
            ('Config:\n\n```json\n{"port": 8080,\n```\n', 4),
            ("```yaml\nname: app\nports: [80,\n```\n", 3),
            ("```python\nitems = [\n```\n", 2),
        ],
        ids=["json", "yaml", "python"],
    )
    def test_an_error_at_the_end_of_input_names_the_blocks_last_line_not_the_closing_fence(
        self, text: str, error_line: int
    ) -> None:
        result = verify(text)
        assert (result.verdict, result.checks[0].error_line) == (MALFORMED, error_line)
        assert result.checks[0].detail.startswith(f"line {error_line}: ")

    def test_tilde_fences_and_four_backticks_holding_three(self) -> None:
        text = "~~~yaml\nkey: value\n~~~\n\n````markdown\n```python\nbroken(\n```\n````\n"
        result = verify(text)
        assert result.verdict is OK
        assert [c.language for c in result.checks] == ["yaml", "markdown"]

    def test_an_indented_fence_is_read_without_its_indent(self) -> None:
        text = '1. Add the dependency:\n\n   ```json\n   {"name": "x"}\n   ```\n'
        assert verify(text).verdict is OK

    def test_a_block_over_the_size_limit_is_too_large_to_check(self) -> None:
        result = verify("```python\n" + "x = 1\n" * 100 + "```", Config(max_block_bytes=100))
        assert result.verdict is UNVERIFIABLE
        assert result.checks[0].detail == "too large to check: 600 bytes, the limit is 100"

    def test_the_size_limit_counts_utf8_bytes(self) -> None:
        result = verify("```python\ns = 'ééééé'\n```", Config(max_block_bytes=12))
        assert result.checks[0].detail == "too large to check: 17 bytes, the limit is 12"

    def test_blocks_past_the_limit_share_one_entry(self) -> None:
        result = verify("```json\n{}\n```\n" * 10, Config(max_checked_blocks=3))
        assert result.verdict is OK
        assert result.detail == "3/10 blocks parsed"
        assert result.checks[-1] == BlockCheck(
            3, "?", UNVERIFIABLE, "too many blocks: 7 more not checked (only the first 3 are)", 10
        )
        assert len(result.checks) == 4

    def test_an_unterminated_fence_past_the_limit_is_still_caught(self) -> None:
        result = verify("```json\n{}\n```\n" * 10 + "```python\nprint(", Config(max_checked_blocks=3))
        assert result.verdict is TRUNCATED
        assert result.detail == "1/11 blocks: python: unterminated code fence (```)"
        assert result.checks[-1] == BlockCheck(10, "python", TRUNCATED, "unterminated code fence (```)", 31)

    def test_an_unparsed_block_past_the_limit_hides_no_malformed_block_from_the_count(self) -> None:
        result = verify("```json\n{,}\n```\n" + "```json\n{}\n```\n" * 5, Config(max_checked_blocks=2))
        assert result.detail.startswith("1/6 blocks: json: line 2:")

    def test_shell_is_left_to_the_server(self) -> None:
        result = verify("```bash\necho hi\n```")
        assert result.verdict is UNVERIFIABLE
        assert "bash -n" in result.checks[0].detail


class TestAggregate:
    def block(self, index: int, verdict: Verdict) -> BlockCheck:
        return BlockCheck(index, "python", verdict, f"{verdict.value} detail", index + 1)

    def test_truncated_outranks_malformed_outranks_ok_outranks_unverifiable(self) -> None:
        order = [UNVERIFIABLE, OK, MALFORMED, TRUNCATED]
        for rank, verdict in enumerate(order):
            checks = [self.block(i, v) for i, v in enumerate(order[: rank + 1])]
            assert aggregate(checks).verdict is verdict
            assert aggregate(list(reversed(checks))).verdict is verdict

    def test_the_detail_counts_and_names_the_first_failing_block(self) -> None:
        checks = [self.block(0, OK), self.block(1, MALFORMED), self.block(2, MALFORMED)]
        assert aggregate(checks).detail == "2/3 blocks: python: malformed detail"

    def test_no_checks_is_no_blocks(self) -> None:
        assert aggregate([]) == NO_BLOCKS


def test_triage_bounds_an_unbounded_scan_too() -> None:
    text = "```json\n{}\n```\n" * 10 + "```python\nprint("
    config = Config(max_checked_blocks=3)
    assert triage(scan_fences_bounded(text, None), config) == triage(scan_fences_bounded(text, 3), config)


def test_triage_leaves_only_parseable_blocks_pending() -> None:
    scan = scan_fences_bounded("```python\nx\n```\n```fortran\nfn\n```\n```py\n", 10)
    items = triage(scan, CONFIG)
    assert [type(item) for item in items] == [PendingCheck, BlockCheck, BlockCheck]
    pending = items[0]
    assert isinstance(pending, PendingCheck)
    assert (pending.index, pending.language.name, pending.size) == (0, "python", 2)
