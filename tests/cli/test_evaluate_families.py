"""`verdict evaluate` takes the new members (--promptfoo, --openai-grader, a trajectory block) and the provider
facts (--tool-calls, --finish-reason, --latency-ms, --cost, --logprobs, --tools)."""

from __future__ import annotations

import json

from tests.cli.test_main import _verdict


def test_promptfoo_with_the_facts() -> None:
    assertions = "[{type: finish-reason, value: stop}, {type: latency, threshold: 100}, {type: icontains, value: ok}]"
    done = _verdict(
        "evaluate", "--promptfoo", assertions, "--finish-reason", "stop", "--latency-ms", "40", stdin=b"all OK"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "yes"
    assert len(result["details"]["results"]) == 3


def test_an_openai_grader_reads_the_item_context() -> None:
    grader = json.dumps(
        {
            "type": "string_check",
            "name": "g",
            "input": "{{sample.output_text}}",
            "reference": "{{item.a}}",
            "operation": "eq",
        }
    )
    done = _verdict("evaluate", "--openai-grader", grader, "--context", '{"item": {"a": "42"}}', stdin=b"42")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["details"]["reward"] == 1.0


def test_a_trajectory_block_with_tool_calls() -> None:
    calls = json.dumps([{"id": "c1", "name": "search", "arguments": '{"q": "cats"}'}])
    block = "{type: trajectory, expected: [{name: search, arguments: {q: cats}}]}"
    done = _verdict("evaluate", "--evaluator", block, "--tool-calls", calls, stdin=b"")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "yes"


def test_two_members_at_once_is_a_usage_error() -> None:
    done = _verdict("evaluate", "--evaluator", "{type: exit_code}", "--promptfoo", "[]", stdin=b"")
    assert done.returncode == 2
    assert b"one of --evaluator, --promptfoo or --openai-grader" in done.stderr


def test_a_refused_assertion_exits_two_naming_it() -> None:
    done = _verdict("evaluate", "--promptfoo", "[{type: python, value: 'True'}]", stdin=b"x")
    assert done.returncode == 2
    assert b"python" in done.stderr
