"""The Verifier with a real Runner, real bash, a real process pool and a fresh metrics registry."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from tests.verify.pool_tasks import misbehaving_check
from verdict.config.keys import Config
from verdict.errors import Unavailable
from verdict.metrics import Metrics
from verdict.runner import CHECK_NICENESS, Command, CommandNotFound, Completed, Runner
from verdict.verify.model import CodeCheck, SecondOpinionResult, Verdict, Verification, VerifyInput
from verdict.verify.verifier import InlineBudget, Verifier

OK, TRUNCATED, MALFORMED, UNVERIFIABLE = Verdict.OK, Verdict.TRUNCATED, Verdict.MALFORMED, Verdict.UNVERIFIABLE


class Harness:
    def __init__(self, config: Config, verifier_class: type[Verifier] = Verifier, runner: Runner | None = None) -> None:
        self.registry = CollectorRegistry()
        self.metrics = Metrics(self.registry)
        self.runner = runner or Runner(self.metrics)
        self.verifier = verifier_class(config, self.runner, self.metrics)

    async def verify(self, text: str, **envelope: object) -> Verification:
        return await self.verifier.verify(VerifyInput(text, **envelope))  # type: ignore[arg-type]

    def sample(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0


@pytest.fixture
def harness() -> Iterator[Harness]:
    made = Harness(Config())
    yield made
    made.verifier.close()


class TestShell:
    """Real `bash -n` through the runner."""

    async def test_a_real_script_with_extglob_is_ok(self, harness: Harness) -> None:
        script = (
            "```bash\n#!/usr/bin/env bash\nset -euo pipefail\n"
            'version="3.13.0"\ncase "$version" in\n  +([0-9]).+([0-9]).+([0-9]) ) echo "release" ;;\n'
            '  * ) echo "other" ;;\nesac\nfor f in *.py; do\n  [[ -f "$f" ]] && echo "$f"\ndone\n```'
        )
        result = await harness.verify(script)
        assert (result.verdict, result.detail) == (OK, "1/1 blocks parsed")

    async def test_a_missing_fi_is_malformed_with_bashs_message(self, harness: Harness) -> None:
        result = await harness.verify("```bash\nif true; then\n  echo hi\n```")
        assert result.verdict is MALFORMED
        assert result.checks[0].detail == "line 3: syntax error: unexpected end of file"
        assert result.checks[0].error_line == 3

    async def test_an_unterminated_quote_is_malformed(self, harness: Harness) -> None:
        result = await harness.verify('Run:\n\n```sh\necho "hello\nls\n```')
        assert result.verdict is MALFORMED
        assert result.checks[0].error_line == 4
        assert "unexpected EOF while looking for matching" in result.checks[0].detail

    async def test_an_unterminated_heredoc_is_truncated(self, harness: Harness) -> None:
        result = await harness.verify("```bash\ncat > config.yaml <<EOF\nport: 8080\nhost: 0.0.0.0\n```")
        assert result.verdict is TRUNCATED
        assert result.checks[0] == result.checks[0].__class__(
            0, "shell", TRUNCATED, "line 2: here-document delimited by end-of-file (wanted `EOF')", 1, 2
        )

    async def test_a_trailing_line_continuation_is_truncated(self, harness: Harness) -> None:
        result = await harness.verify("```bash\ndocker run --rm \\\n  -p 8080:80 \\\n```")
        assert result.verdict is TRUNCATED
        assert result.checks[0].error_line == 3

    async def test_an_npm_placeholder_is_unverifiable(self, harness: Harness) -> None:
        result = await harness.verify("```bash\nnpm <command>\n```")
        assert result.verdict is UNVERIFIABLE
        assert "'<command>'" in result.checks[0].detail

    async def test_bash_segfaulting_on_deep_nesting_is_unverifiable(self, harness: Harness) -> None:
        result = await harness.verify("```bash\necho " + "$(" * 2_000 + "x" + ")" * 2_000 + "\n```")
        assert result.verdict is UNVERIFIABLE
        assert result.checks[0].detail == "bash crashed (SIGSEGV) while parsing; the block was not checked"
        assert harness.sample("verdict_subprocess_runs_total", tool="bash", outcome="signalled") == 1

    async def test_a_prompted_transcript_is_checked_without_its_output(self, harness: Harness) -> None:
        text = (
            "```bash\n$ pip install verdict\nSuccessfully installed verdict-0.1.0 (it's done)\n$ verdict serve &\n```"
        )
        assert (await harness.verify(text)).verdict is OK

    async def test_a_transcript_heredoc_without_secondary_prompts_is_ok(self, harness: Harness) -> None:
        text = "```bash\n$ cat > .env <<EOF\nPORT=8080\nEOF\n$ docker compose up -d\nStarted\n```"
        result = await harness.verify(text)
        assert (result.verdict, result.detail) == (OK, "1/1 blocks parsed")

    async def test_a_comment_ending_in_a_backslash_is_not_truncation(self, harness: Harness) -> None:
        result = await harness.verify("```bash\ncd /mnt/c/Users  # C:\\Users\\\n```")
        assert (result.verdict, result.detail) == (OK, "1/1 blocks parsed")

    async def test_a_path_placeholder_is_unverifiable(self, harness: Harness) -> None:
        result = await harness.verify("```bash\npython <path/to/script.py>\n```")
        assert result.verdict is UNVERIFIABLE
        assert "'<path/to/script.py>'" in result.checks[0].detail

    async def test_a_console_block_is_not_run(self, harness: Harness) -> None:
        result = await harness.verify("```console\n$ ls\nfile (1).txt\n```")
        assert result.verdict is UNVERIFIABLE
        assert harness.sample("verdict_subprocess_runs_total", tool="bash", outcome="ok") == 0

    async def test_nothing_is_executed(self, harness: Harness, tmp_path: Path) -> None:
        marker = tmp_path / "executed"
        result = await harness.verify(f"```bash\ntouch {marker}\n```")
        assert result.verdict is OK
        assert not marker.exists()

    async def test_bash_missing_is_unverifiable(self) -> None:
        class NoBash(Runner):
            async def run(self, command: Command) -> Completed:
                raise CommandNotFound(command.argv[0])

        made = Harness(Config(), runner=NoBash(Metrics(CollectorRegistry())))
        result = await made.verify("```bash\necho hi\n```")
        assert result.verdict is UNVERIFIABLE
        assert "bash is not installed" in result.checks[0].detail

    async def test_many_shell_blocks_are_checked_concurrently_within_the_runners_queue(self) -> None:
        from verdict.runner import SlotLimit

        made = Harness(Config(max_concurrent_shell_checks=2))
        made.runner.limits["bash"] = SlotLimit("bash", 2, queue=0)
        result = await made.verify("```bash\necho hi\n```\n" * 12)
        assert result.verdict is OK
        assert made.sample("verdict_subprocess_runs_total", tool="bash", outcome="ok") == 12
        assert made.runner.live_process_groups == frozenset()


class TestMetrics:
    async def test_each_verdict_and_each_block_is_counted_with_bounded_labels(self, harness: Harness) -> None:
        await harness.verify("```python\nx = 1\n```\n```bash\nif\n```\n```fortran\nfn\n```\n```\nplain\n```")
        await harness.verify("prose")
        await harness.verify("```python\nx = 1\n```", finish_reason="length")
        assert harness.sample("verdict_verifications_total", verdict="malformed") == 1
        assert harness.sample("verdict_verifications_total", verdict="unverifiable") == 1
        assert harness.sample("verdict_verifications_total", verdict="truncated") == 1
        assert harness.sample("verdict_block_checks_total", lang="python", verdict="ok") == 1
        assert harness.sample("verdict_block_checks_total", lang="shell", verdict="malformed") == 1
        assert harness.sample("verdict_block_checks_total", lang="other", verdict="unverifiable") == 1
        assert harness.sample("verdict_block_checks_total", lang="none", verdict="unverifiable") == 1


class TestPool:
    async def test_a_block_over_the_inline_size_parses_in_the_pool(self) -> None:
        made = Harness(Config(inline_parse_bytes=10, parse_workers=1))
        try:
            result = await made.verify(
                '```python\nvalues = [1, 2, 3]\n```\n```json\n{"a": [1, 2, 3]}\n```\n```yaml\nkey: [1, 2,\n```'
            )
            assert [c.verdict for c in result.checks] == [OK, OK, MALFORMED]
            assert result.checks[2].error_line == 8  # the block's last line; 9 is its closing fence
            assert made.sample("verdict_parse_pool_tasks_total", outcome="ok") == 3
        finally:
            made.verifier.close()

    async def test_once_a_calls_inline_time_is_spent_its_other_blocks_parse_in_the_pool(self) -> None:
        """Bytes misjudge a parser's cost (PyYAML builds every value in Python), so a call's inline parsing is
        bounded in CPU time too; a budget whose time is already spent lets the first block parse inline and sends the
        rest to the pool, whatever their size, both on the path for small answers and on the general one."""
        made = Harness(Config(parse_workers=1))
        blocks = "".join(f"```yaml\nkey_{i}: {{name: item{i}, values: [1, 2, 3]}}\n```\n" for i in range(5))
        try:
            spent = InlineBudget(64 * 1024, seconds=-1.0)
            result = await made.verifier.verify(VerifyInput(blocks), inline_budget=spent)
            assert [c.verdict for c in result.checks] == [OK] * 5
            assert made.sample("verdict_parse_pool_tasks_total", outcome="ok") == 4
            assert spent.left == 0
            # a shell block takes the general path (concurrent checks): the same bound holds there
            mixed = blocks + "```bash\necho hi\n```\n"
            result = await made.verifier.verify(VerifyInput(mixed), inline_budget=InlineBudget(64 * 1024, seconds=-1.0))
            assert [c.verdict for c in result.checks] == [OK] * 6
            assert made.sample("verdict_parse_pool_tasks_total", outcome="ok") == 8
            # with time left, the same blocks parse on the loop, as before
            roomy = InlineBudget(64 * 1024, seconds=10.0)
            result = await made.verifier.verify(VerifyInput(blocks), inline_budget=roomy)
            assert made.sample("verdict_parse_pool_tasks_total", outcome="ok") == 8
        finally:
            made.verifier.close()

    async def test_small_calls_are_answered_while_a_large_parse_runs(self) -> None:
        # the pool's worker runs 10 nice steps below the test (runner.CHECK_NICENESS): beside two CPU hogs its 1 MB
        # parse outlasted the default 10 s limit, so the limit here is one the parse meets on any machine
        made = Harness(
            Config(inline_parse_bytes=4096, parse_workers=1, max_block_bytes=8 * 1024 * 1024, parse_timeout_seconds=600)
        )
        try:
            big = asyncio.ensure_future(made.verify("```python\n" + "value = [1, 2, 3]\n" * 60_000 + "```"))
            small = await made.verify('```json\n{"small": true}\n```')
            assert small.verdict is OK
            assert not big.done()
            assert (await big).verdict is OK
            assert made.sample("verdict_parse_pool_tasks_total", outcome="ok") == 1
        finally:
            made.verifier.close()

    async def test_pool_workers_run_at_a_lower_cpu_priority(self, tmp_path: Path) -> None:
        """So the server's own threads preempt a long parse under load (runner.CHECK_NICENESS)."""
        made = Harness(Config(inline_parse_bytes=0, parse_workers=1), _Misbehaving)
        try:
            await made.verify(f"```python\nNICE {tmp_path / 'nice'}\n```")
            expected = min(19, os.getpriority(os.PRIO_PROCESS, 0) + CHECK_NICENESS)
            assert int((tmp_path / "nice").read_text()) == expected
        finally:
            made.verifier.close()

    async def test_a_crashed_worker_makes_the_block_unverifiable_and_is_replaced(self) -> None:
        made = Harness(Config(inline_parse_bytes=0, parse_workers=1), _Misbehaving)
        try:
            crashed = await made.verify("```python\nCRASH\n```")
            assert crashed.verdict is UNVERIFIABLE
            assert crashed.checks[0].detail == "the parse worker died (SIGKILL)"
            assert made.sample("verdict_parse_pool_tasks_total", outcome="crashed") == 1
            assert (await made.verify("```python\nx = 1\n```")).verdict is OK
        finally:
            made.verifier.close()

    async def test_a_parse_over_its_time_limit_is_unverifiable_and_its_worker_replaced(self, tmp_path: Path) -> None:
        made = Harness(Config(inline_parse_bytes=0, parse_workers=1, parse_timeout_seconds=0.5), _Misbehaving)
        try:
            slow = await made.verify(f"```python\nSLEEP {tmp_path / 'started'}\n```")
            assert slow.verdict is UNVERIFIABLE
            assert slow.checks[0].detail == "the parse took longer than 0.5s; its worker was stopped"
            assert made.sample("verdict_parse_pool_tasks_total", outcome="timeout") == 1
            assert (await made.verify("```python\nx = 1\n```")).verdict is OK
        finally:
            made.verifier.close()

    async def test_a_cancelled_call_stops_its_worker(self, tmp_path: Path) -> None:
        made = Harness(Config(inline_parse_bytes=0, parse_workers=1, parse_timeout_seconds=120), _Misbehaving)
        started = tmp_path / "started"
        try:
            call = asyncio.ensure_future(made.verify(f"```python\nSLEEP {started}\n```"))
            while not started.exists():  # noqa: ASYNC110 - the pool worker, another process, creates the file
                await asyncio.sleep(0.01)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert made.sample("verdict_parse_pool_tasks_total", outcome="cancelled") == 1
            # With one worker, this parse can only run if the sleeping worker was stopped.
            result = await asyncio.wait_for(made.verify("```python\nx = 1\n```"), timeout=30)
            assert result.verdict is OK
        finally:
            made.verifier.close()

    async def test_closing_during_a_parse_fails_the_call_instead_of_leaving_it_waiting(self, tmp_path: Path) -> None:
        """A stopped pebble pool never answers its tasks: the call used to wait forever (or read BrokenProcessPool)."""
        others = set(multiprocessing.active_children())
        made = Harness(Config(inline_parse_bytes=0, parse_workers=1, parse_timeout_seconds=120), _Misbehaving)
        started = tmp_path / "started"
        call = asyncio.ensure_future(made.verify(f"```python\nSLEEP {started}\n```"))
        while not started.exists():  # noqa: ASYNC110 - the pool worker, another process, creates the file
            await asyncio.sleep(0.01)
        made.verifier.close()
        with pytest.raises(Unavailable):
            await asyncio.wait_for(call, timeout=30)
        assert made.sample("verdict_parse_pool_tasks_total", outcome="cancelled") == 1
        assert set(multiprocessing.active_children()) <= others

    async def test_a_call_in_flight_across_close_starts_no_new_pool(self) -> None:
        """A large text is scanned in a thread; close() lands meanwhile, and the parse must not revive the pool."""
        others = set(multiprocessing.active_children())
        made = Harness(Config(inline_parse_bytes=0, parse_workers=1))
        call = asyncio.ensure_future(made.verify("```python\n" + "x = 1\n" * 20_000 + "```"))
        await asyncio.sleep(0)
        made.verifier.close()
        with pytest.raises(Unavailable):
            await asyncio.wait_for(call, timeout=30)
        await asyncio.sleep(0.5)
        assert set(multiprocessing.active_children()) <= others


class _Misbehaving(Verifier):
    def _pool_function(self) -> Callable[[str, str], CodeCheck]:
        return misbehaving_check


class TestSecondOpinion:
    class Judge:
        def __init__(self, answer: SecondOpinionResult | None = None, error: Exception | None = None) -> None:
            self.answer = answer
            self.error = error
            self.asked: list[tuple[VerifyInput, Verification]] = []

        async def consider(
            self, request: VerifyInput, verification: Verification, deadline: float | None = None
        ) -> SecondOpinionResult | None:
            self.asked.append((request, verification))
            if self.error is not None:
                raise self.error
            return self.answer

    def verifier(self, judge: Judge) -> Verifier:
        metrics = Metrics(CollectorRegistry())
        return Verifier(Config(), Runner(metrics), metrics, second_opinion=judge)

    async def test_an_unverifiable_answer_gets_the_judges_reading(self) -> None:
        opinion = SecondOpinionResult(MALFORMED, "ends mid-sentence", "local")
        judge = self.Judge(opinion)
        result = await self.verifier(judge).verify(VerifyInput("A long essay that stops", completion_tokens=4000))
        assert result.verdict is UNVERIFIABLE
        assert result.second_opinion == opinion
        assert judge.asked[0][1].detail == "no fenced blocks in response"

    @pytest.mark.parametrize(
        "request_",
        [
            VerifyInput("```python\nx = 1\n```"),
            VerifyInput("```python\nx = (\n```"),
            VerifyInput("text", finish_reason="length"),
            VerifyInput("calling a tool", has_tool_calls=True),
        ],
        ids=["ok", "malformed", "truncated", "tool turn"],
    )
    async def test_exact_verdicts_and_tool_turns_are_not_second_guessed(self, request_: VerifyInput) -> None:
        judge = self.Judge(SecondOpinionResult(OK, "fine", "local"))
        result = await self.verifier(judge).verify(request_)
        assert judge.asked == []
        assert result.second_opinion is None

    async def test_a_failing_judge_leaves_the_structural_verdict(self) -> None:
        judge = self.Judge(error=RuntimeError("judge down"))
        result = await self.verifier(judge).verify(VerifyInput("prose"))
        assert (result.verdict, result.second_opinion) == (UNVERIFIABLE, None)


async def test_a_closed_verifier_refuses_calls(harness: Harness) -> None:
    harness.verifier.close()
    harness.verifier.close()
    with pytest.raises(Unavailable):
        await harness.verify("```python\nx = 1\n```")


HOSTILE = {
    "100k nested brackets, python": ("```python\n" + "(" * 100_000 + "\n```", UNVERIFIABLE),
    "100k nested brackets, json": ("```json\n" + "[" * 100_000 + "]" * 100_000 + "\n```", UNVERIFIABLE),
    "100k nested brackets, yaml": ("```yaml\n" + "[" * 100_000 + "]" * 100_000 + "\n```", UNVERIFIABLE),
    "a 1 MB line, python": ("```python\nx = '" + "a" * 1_000_000 + "'\n```", OK),
    "a 1 MB line, json": ('```json\n{"blob": "' + "b" * 1_000_000 + '"}\n```', OK),
    "a 1 MB line of prose": (" ".join(f"word{i}" for i in range(120_000)), UNVERIFIABLE),
    "5,000 fences": ("".join(f'```json\n{{"i": {i}}}\n```\n' for i in range(5_000)), OK),
    "half a million empty fences": ("```\n" * 1_000_000, UNVERIFIABLE),
    "200 KB unclosed fence": ("```\n" + "".join(f"text line {i}\n" for i in range(16_000)), TRUNCATED),
    "200 KB unclosed fence of opener-like lines": ("~~~\n" + "".join(f"```x{i}\n" for i in range(30_000)), TRUNCATED),
    "a 4 MB repetition loop": ("Answer:\n" + "and then again " * 270_000, MALFORMED),
    "3.6 MB of misindented closers": ("```\n" + "    ```\n" * 450_001, MALFORMED),
    "2,000 nested $( in bash": ("```bash\necho " + "$(" * 2_000 + "x" + ")" * 2_000 + "\n```", UNVERIFIABLE),
    "replacement characters": ("```python\nprint('\ufffd\ufffd')\n```\n```yaml\na: \ufffd\n```", OK),
    "a NUL byte": ("```python\nx = 1\x00\n```", MALFORMED),
    "a lone surrogate (library call)": ("```python\nx = '\ud800'\n```\n```bash\necho '\ud800'\n```", OK),
}


async def test_hostile_inputs_each_get_a_verdict_and_nothing_escapes(harness: Harness) -> None:
    names = list(HOSTILE)
    results = await asyncio.gather(*(harness.verify(HOSTILE[name][0]) for name in names), return_exceptions=True)
    verdicts = {name: getattr(result, "verdict", result) for name, result in zip(names, results, strict=True)}
    assert verdicts == {name: expected for name, (_, expected) in HOSTILE.items()}
    assert harness.runner.live_process_groups == frozenset()
    assert (await harness.verify("```json\n[]\n```")).verdict is OK


async def test_a_checker_that_gives_up_says_why(harness: Harness) -> None:
    result = await harness.verify("```python\n" + "(" * 100_000 + "\n```")
    assert result.checks[0].detail == "line 2: the parser gave up, not a syntax error: too many nested parentheses"
