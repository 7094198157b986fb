"""`verdict local-judge`: a deterministic OpenAI-compatible judge that a real server uses as its judge host, so the
judged evaluators can be tried (and tested) without a model or a key."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from google.protobuf import json_format

from tests.support import make_config, serving
from verdict.cli.local_judge import MODEL, LocalJudge, answer_for
from verdict.judges.interpret import schema_instruction
from verdict.judges.llm_structured import DEFAULT_SCHEMA, build_prompt
from verdict.v1 import verdict_pb2


@pytest.fixture
def local_judge() -> Iterator[LocalJudge]:
    judge = LocalJudge("127.0.0.1:0")
    judge.start()
    yield judge
    judge.close()


def _prompt(output: str) -> str:
    return f"{build_prompt(None, output)}\n\n{schema_instruction(DEFAULT_SCHEMA)}"


def test_the_answer_is_a_pure_function_of_the_prompt() -> None:
    passing = _prompt("collecting\n12 passed in 0.4s\n")
    assert answer_for(passing) == answer_for(passing)
    assert answer_for(passing)["verdict"] == "yes"
    assert answer_for(passing)["evidence"] == "12 passed in 0.4s"
    failing = _prompt("12 passed\nFAILED tests/test_x.py::test_y\n")
    assert (answer_for(failing)["verdict"], answer_for(failing)["evidence"]) == ("no", "FAILED tests/test_x.py::test_y")
    assert answer_for(_prompt("hmm\n"))["verdict"] == "cannot_judge"


def test_any_other_schema_gets_its_smallest_answer() -> None:
    schema = {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": ["A", "B", "tie"]},
            "confidence": {"type": "number", "minimum": 0},
            "ok": {"type": "boolean"},
        },
    }
    assert answer_for(f"Compare.\n\n{schema_instruction(schema)}") == {"winner": "A", "confidence": 0, "ok": True}


async def test_a_real_server_judges_through_it(local_judge: LocalJudge) -> None:
    async with serving(make_config(judge_host=local_judge.url)) as running:
        for output, verdict in (("All 42 tests passed\n", "yes"), ("Traceback (most recent call last):\n", "no")):
            request = verdict_pb2.EvaluateRequest(
                config=verdict_pb2.EvaluatorConfig(yaml="type: llm_structured\nprompt: Did the tests pass?"),
                output=output,
            )
            response = await running.stub.Evaluate(request, timeout=30)
            assert response.verdict == verdict
            details = json_format.MessageToDict(response.details)
            assert details["llm_model"] == MODEL
            assert details["evidence_coerced"] is False


def test_the_subcommand_serves_and_says_where() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "verdict", "local-judge", "--address", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        assert ready["model"] == MODEL
        import urllib.request

        body = json.dumps({"messages": [{"role": "user", "content": _prompt("done\n")}]}).encode()
        request = urllib.request.Request(f"{ready['url']}/v1/chat/completions", data=body)  # noqa: S310 - loopback
        reply = urllib.request.urlopen(request, timeout=10)  # noqa: S310 - the URL the subcommand just printed
        envelope = json.loads(reply.read())
        assert json.loads(envelope["choices"][0]["message"]["content"])["verdict"] == "yes"
    finally:
        process.terminate()
        process.wait(timeout=10)
