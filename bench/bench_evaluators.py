"""Per-call cost of the families from other tools beside exit_code: an OpenAI string_check grader, a 5-assertion
promptfoo list, and a trajectory, each through the whole Evaluate path a server runs (rpc conversion from the wire
message, validation, dispatch, the run, details back to a protobuf Struct), in process.

Each shape is timed in short rounds alternating with exit_code (the cheapest evaluator: the floor of the path) and
keeps its best round, so the figure is a ratio to a baseline measured in the same run, not a machine's speed. The
absolute per-call times are printed beside the ratios for orientation only.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.evaluators import Evaluations
from verdict.metrics import Metrics
from verdict.rpc import evaluation_input, evaluation_to_proto
from verdict.runner import Runner
from verdict.v1 import verdict_pb2

ROUNDS = 7
CALLS_PER_ROUND = 300

STRING_CHECK = json.dumps(
    {
        "type": "string_check",
        "name": "answer",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "operation": "ilike",
    }
)
FIVE_ASSERTIONS = """
- type: icontains
  value: paris
- type: not-contains
  value: London
- type: regex
  value: "^The capital"
- type: is-json
  weight: 0
- type: levenshtein
  value: The capital of France is Paris.
"""
WITHOUT_REGEX = FIVE_ASSERTIONS.replace('- type: regex\n  value: "^The capital"', "- type: starts-with\n  value: The")
OUTPUT = "The capital of France is Paris."


def _requests() -> dict[str, verdict_pb2.EvaluateRequest]:
    string_check = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(openai_grader=STRING_CHECK), output=OUTPUT
    )
    string_check.context.update({"item": {"answer": "Paris"}})
    trajectory = verdict_pb2.EvaluateRequest(
        config=verdict_pb2.EvaluatorConfig(
            trajectory=verdict_pb2.TrajectoryConfig(
                expected=[
                    verdict_pb2.ExpectedToolCall(name="search", arguments='{"q": "capital of France"}'),
                    verdict_pb2.ExpectedToolCall(name="answer", arguments='{"text": "Paris"}'),
                ],
                match="in_order",
            )
        ),
        tool_calls=[
            verdict_pb2.ToolCall(name="search", arguments='{"q":"capital of France"}'),
            verdict_pb2.ToolCall(name="answer", arguments='{"text":"Paris"}'),
        ],
    )
    return {
        "exit_code": verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig())
        ),
        "openai_grader string_check": string_check,
        "promptfoo, 5 assertions (one regex: off the event loop)": verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(promptfoo=FIVE_ASSERTIONS), output=OUTPUT
        ),
        "promptfoo, 5 assertions without a regex (inline)": verdict_pb2.EvaluateRequest(
            config=verdict_pb2.EvaluatorConfig(promptfoo=WITHOUT_REGEX), output=OUTPUT
        ),
        "trajectory, 2 calls in_order": trajectory,
    }


async def _round(evaluations: Evaluations, request: verdict_pb2.EvaluateRequest) -> float:
    started = time.perf_counter()
    for _ in range(CALLS_PER_ROUND):
        evaluation_to_proto(await evaluations.evaluate(evaluation_input(request)))
    return (time.perf_counter() - started) / CALLS_PER_ROUND


async def _measure() -> dict[str, float]:
    metrics = Metrics(CollectorRegistry())
    evaluations = Evaluations(Config(), Runner(metrics), metrics)
    requests = _requests()
    for request in requests.values():  # warm up: imports, compiled patterns, first-call costs
        await _round(evaluations, request)
    best = dict.fromkeys(requests, float("inf"))
    for _ in range(ROUNDS):
        for name, request in requests.items():
            best[name] = min(best[name], await _round(evaluations, request))
    return best


def run() -> Iterator[str]:
    best = asyncio.run(_measure())
    floor = best["exit_code"]
    line: Callable[[str], str] = lambda name: (  # noqa: E731
        f"{name}: {best[name] / floor:.1f}x exit_code per call ({best[name] * 1e6:.0f} us against {floor * 1e6:.0f} us)"
    )
    yield f"exit_code: 1.0x (the floor of the Evaluate path, {floor * 1e6:.0f} us per call)"
    for name in best:
        if name != "exit_code":
            yield line(name)
