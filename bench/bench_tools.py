"""VerifyResponse on tool-calling turns: a turn of three calls against the providers' 20 documented tools (nested
objects, enums, nullable fields), typed and as a provider's JSON, against an untouched VerifyResponse of the same text.

Figures: the cost per turn as a ratio to the untouched call (both measured here, alternating, best round kept), the
server CPU per call (process time of the rpc conversion and the verifier, no transport), the cost of compiling the
tools list once (a cold cache) as a ratio to a warm turn, and the compiled-schema cache's hit ratio over the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry

from tests.verify.tool_corpus import provider_tools, provider_tools_json
from tests.verify.tool_corpus.shapes import openai_chat, typed, typed_tools
from verdict.config.keys import Config
from verdict.metrics import Metrics
from verdict.rpc.messages import verification_to_proto, verify_input
from verdict.runner import Runner
from verdict.v1 import verdict_pb2
from verdict.verify.model import ToolCall
from verdict.verify.verifier import Verifier

TEXT = "I'll look up the weather and your flights, then book the meeting."
CALLS = [
    ToolCall("call_1", "get_current_weather", '{"location": "Boston, MA", "unit": "celsius"}'),
    ToolCall(
        "call_2",
        "search_flights",
        '{"origin": "BOS", "destination": "SFO", "date": "2025-03-01", "passengers": 2, "cabin": "economy", '
        '"flexible": false}',
    ),
    ToolCall(
        "call_3",
        "search_knowledge_base",
        '{"query": "refund policy", "options": {"num_results": 3, "domain_filter": null, "sort_by": "relevance"}}',
    ),
]
ROUNDS, PER_ROUND = 7, 300


async def _per_call(verifier: Verifier, request: verdict_pb2.VerifyResponseRequest) -> tuple[float, float]:
    """(best wall seconds per call, process CPU seconds per call) over ROUNDS rounds of PER_ROUND calls."""
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(PER_ROUND):
            verification_to_proto(await verifier.verify(verify_input(request)))
        best_wall = min(best_wall, (time.perf_counter() - wall) / PER_ROUND)
        best_cpu = min(best_cpu, (time.process_time() - cpu) / PER_ROUND)
    return best_wall, best_cpu


async def _once(work: Callable[[], Awaitable[object]]) -> float:
    started = time.process_time()
    await work()
    return time.process_time() - started


async def _measure() -> list[str]:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    verifier = Verifier(Config(), Runner(metrics), metrics)
    tools = provider_tools()
    untouched = verdict_pb2.VerifyResponseRequest(text=TEXT, finish_reason="stop")
    typed_turn = verdict_pb2.VerifyResponseRequest(**typed(TEXT, CALLS, "tool_calls"), tools=typed_tools(tools))
    provider_turn = verdict_pb2.VerifyResponseRequest(
        message_json=openai_chat(TEXT, CALLS, "tool_calls"), tools_json=provider_tools_json()
    )
    try:
        cold = await _once(lambda: verifier.verify(verify_input(provider_turn)))
        answer = await verifier.verify(verify_input(typed_turn))
        assert answer.verdict.value == "ok", answer.detail
        assert len(answer.tool_checks) == 3
        base_wall, base_cpu = await _per_call(verifier, untouched)
        typed_wall, typed_cpu = await _per_call(verifier, typed_turn)
        json_wall, json_cpu = await _per_call(verifier, provider_turn)
        warm = await _once(lambda: verifier.verify(verify_input(provider_turn)))
    finally:
        verifier.close()
    hits = registry.get_sample_value("verdict_tool_schema_cache_total", {"outcome": "hit"}) or 0
    misses = registry.get_sample_value("verdict_tool_schema_cache_total", {"outcome": "miss"}) or 0
    return [
        f"turn of 3 calls against 20 tools, typed: {typed_wall / base_wall:.1f}x an untouched VerifyResponse of the "
        f"same text; server CPU {typed_cpu * 1e6:.0f} us per call (untouched: {base_cpu * 1e6:.0f} us); target: "
        "well under 1 ms",
        f"the same turn as OpenAI JSON (message_json + tools_json): {json_wall / base_wall:.1f}x; server CPU "
        f"{json_cpu * 1e6:.0f} us per call",
        f"first turn of a tools list (cold cache: read and compile 20 schemas): {cold / max(warm, 1e-9):.0f}x a warm "
        f"turn ({cold * 1e3:.1f} ms CPU once per tools list)",
        f"compiled-schema cache: {hits:.0f} hits, {misses:.0f} misses, hit ratio {hits / max(hits + misses, 1):.4f}",
    ]


def run() -> list[str]:
    """Every measurement of this module, one line each."""
    return asyncio.run(_measure())
