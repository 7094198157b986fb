"""Seeded random requests to both RPCs over a real channel: every answer is a verdict or a caller's-fault status,
never INTERNAL or UNKNOWN, and no child process is left behind.

The inputs are built from the pieces that have broken naive checkers (fences, prompts, brackets, heredocs,
interpolation syntax, regex metacharacters, bad state tokens) so a few hundred calls reach many odd corners.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.support import make_config, serving
from verdict.v1 import verdict_pb2

CALLS = 400
ACCEPTED_ERRORS = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
PIECES = [
    "```",
    "~~~",
    "````",
    "```python\n",
    "```json\n",
    "```yaml\n",
    "```bash\n",
    "```pycon\n",
    "```console\n",
    ">>> ",
    "... ",
    "$ ",
    "\n",
    "    ",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    "\\",
    "<<EOF\n",
    "EOF\n",
    "$(",
    "`",
    "!Ref x",
    "- a",
    "a: b",
    "---\n",
    "def f(",
    "if x:",
    "\t",
    "\x00",
    "\ufffd",
    "é",
    "#",
    "//",
    "NaN",
    "...",
    "%magic",
    "!ls",
    "f'{",
    "type X = int",
    "\r\n",
    "&a ",
    "*a",
    "<placeholder>",
    "|",
    "&&",
    "case x in",
]
TYPES = [
    "exit_code",
    "output_numeric",
    "output_json",
    "output_contains",
    "convergence",
    "classify",
    "diff_stall",
    "action_stall",
    "score_stall",
    "open_question_stall",
    "mcp_result",
    "harbor_scorer",
    "llm_structured",
    "comparator",
    "contract",
    "bogus",
]
KEYS = [
    "type",
    "operator",
    "target",
    "pattern",
    "negate",
    "path",
    "prompt",
    "schema",
    "source",
    "previous",
    "direction",
    "scope",
    "max_stall",
    "track",
    "max_repeat",
    "line",
    "error_patterns",
    "key",
    "tolerance",
    "epsilon",
]
VALUES: list[Any] = [
    None,
    0,
    1,
    -1,
    2.5,
    "eq",
    "gt",
    "${context.x}",
    "${prev.output:default=3}",
    "$${x}",
    "${env.HOME}",
    "${",
    "}",
    "first",
    "last",
    "(a|aa)+$",
    "[",
    "a.b.0",
    ".x",
    [],
    ["a"],
    [1],
    {},
    {"a": 1},
    True,
    "minimize",
    "1e309",
    "nan",
]


def _text(rng: random.Random) -> str:
    return "".join(
        rng.choice(PIECES) if rng.random() < 0.7 else rng.choice(string.printable) for _ in range(rng.randint(0, 300))
    )


def _config(rng: random.Random) -> dict[str, Any]:
    config: dict[str, Any] = {"type": rng.choice(TYPES)}
    for _ in range(rng.randint(0, 5)):
        config[rng.choice(KEYS)] = rng.choice(VALUES)
    return config


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_requests_never_get_a_server_fault(seed: int) -> None:
    rng = random.Random(seed)
    faults: list[tuple[str, str, str]] = []
    async with serving(make_config(judge_timeout_seconds=2, regex_timeout_seconds=0.2)) as running:
        for _ in range(CALLS):
            verify = verdict_pb2.VerifyResponseRequest(
                text=_text(rng), finish_reason=rng.choice(["", "stop", "length", "tool_calls", "MAX_TOKENS"])
            )
            try:
                await running.stub.VerifyResponse(verify, timeout=30)
            except grpc.aio.AioRpcError as error:
                if error.code() not in ACCEPTED_ERRORS:
                    faults.append(("VerifyResponse", error.code().name, verify.text[:120]))
            config = _config(rng)
            evaluate = verdict_pb2.EvaluateRequest(
                config=verdict_pb2.EvaluatorConfig(yaml=json.dumps(config)),
                output=_text(rng)[:100],
                exit_code=rng.choice([0, 0, 1, 124, 127]),
                state=rng.choice([b"", b"", b"v1:{}", b"garbage", b"v1:" + b"{" * 100]),
            )
            json_format.ParseDict(
                {"context": {"x": rng.choice(["1", "a", 2])}, "prev": {"output": "2"}}, evaluate.context
            )
            try:
                await running.stub.Evaluate(evaluate, timeout=30)
            except grpc.aio.AioRpcError as error:
                if error.code() not in ACCEPTED_ERRORS:
                    faults.append(("Evaluate", error.code().name, json.dumps(config)))
        assert running.app.runner.live_process_groups == frozenset()
    assert faults == []
