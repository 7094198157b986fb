"""VerifyResponse end to end over a real channel: the rules, and hostile input that must not hurt the server."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from tests.support import Running, make_config, serving
from verdict.v1 import verdict_pb2

V = verdict_pb2


async def _verify(running: Running, text: str, **fields: object) -> verdict_pb2.VerifyResponseResponse:
    return await running.stub.VerifyResponse(V.VerifyResponseRequest(text=text, **fields), timeout=60)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "fields", "verdict", "failed"),
    [
        ("anything", {"has_tool_calls": True, "finish_reason": "length"}, V.VERIFY_VERDICT_UNVERIFIABLE, False),
        ("```python\nprint(1)\n```", {"finish_reason": "length"}, V.VERIFY_VERDICT_TRUNCATED, True),
        ("", {"finish_reason": "max_tokens"}, V.VERIFY_VERDICT_TRUNCATED, True),
        ("   \n", {}, V.VERIFY_VERDICT_MALFORMED, True),
        ("Just prose, no code.", {}, V.VERIFY_VERDICT_UNVERIFIABLE, False),
        ("```python\nprint(1)\n", {}, V.VERIFY_VERDICT_TRUNCATED, True),
        ("```python\ndef f(:\n    pass\n```", {}, V.VERIFY_VERDICT_MALFORMED, True),
        ('```json\n{"a": 1}\n```', {}, V.VERIFY_VERDICT_OK, False),
        ("```yaml\nResources: !Ref Bucket\n```", {}, V.VERIFY_VERDICT_OK, False),
        ("```bash\nif true; then\n  echo hi\n```", {}, V.VERIFY_VERDICT_MALFORMED, True),
        ("```bash\ncat <<EOF\nhello\n```", {}, V.VERIFY_VERDICT_TRUNCATED, True),
        ("```rust\nfn main() {}\n```", {}, V.VERIFY_VERDICT_OK, False),
        ("```ts\nexport class A {\n  run(): void {}\n```", {}, V.VERIFY_VERDICT_MALFORMED, True),
        ("```fortran\nprogram hi\nend program hi\n```", {}, V.VERIFY_VERDICT_UNVERIFIABLE, False),
    ],
)
async def test_rules_through_the_rpc(
    running: Running, text: str, fields: dict[str, object], verdict: int, failed: bool
) -> None:
    response = await _verify(running, text, **fields)
    assert response.verdict == verdict
    assert response.failed is failed
    assert response.detail


async def test_checks_say_where_each_block_is(running: Running) -> None:
    text = "Intro\n\n```json\n{}\n```\n\nMore\n\n```python\nx = (\n```\n"
    response = await _verify(running, text)
    assert response.verdict == V.VERIFY_VERDICT_MALFORMED
    assert [(c.block_index, c.language, c.line) for c in response.checks] == [(0, "json", 3), (1, "python", 9)]
    assert response.checks[0].verdict == V.VERIFY_VERDICT_OK
    assert response.checks[1].verdict == V.VERIFY_VERDICT_MALFORMED
    assert response.checks[1].error_line >= 10


HOSTILE = {
    "deep python brackets": "```python\n" + "(" * 100_000 + "\n```",
    "deep json brackets": "```json\n" + "[" * 100_000 + "]" * 100_000 + "\n```",
    "deep yaml flow": "```yaml\n" + "[" * 50_000 + "]" * 50_000 + "\n```",
    "megabyte line": "```python\nx = '" + "a" * 1_000_000 + "'\n```",
    "thousands of fences": "".join(f'```json\n{{"i": {i}}}\n```\n' for i in range(5_000)),
    "unclosed fence 200 KB": "```\n" + "".join(f"text line {i}\n" for i in range(16_000)),
    "a repetition loop, 4 MB": "Answer:\n" + "and then again " * 270_000,
    "bash nesting that segfaults bash": "```bash\necho " + "$(" * 2_000 + "x" + ")" * 2_000 + "\n```",
    "replacement characters": "```python\nprint('\ufffd\ufffd')\n```",
}


async def test_hostile_inputs_each_get_a_verdict_while_small_calls_keep_answering() -> None:
    # Room for the nine hostile calls and the small ones at once: admission's default (4 running per event loop)
    # would shed some, and this test is about each input's verdict and the loop staying free, not admission.
    # The parse limit is one no machine needs: the 1.5 MB parse runs in a pool worker at a lower CPU priority, which
    # on a machine loaded by other processes gets a small share of a core; this test is not about the limit.
    config = make_config(max_block_bytes=4 * 1024 * 1024, max_concurrent_rpcs=16, parse_timeout_seconds=300)
    async with serving(config) as running:
        await _hostile_scenario(running)


async def _hostile_scenario(running: Running) -> None:
    big = "```python\n" + "value = [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" * 40_000 + "```"  # 1.5 MB: seconds of ast.parse
    order: list[str] = []

    async def tracked(name: str, text: str) -> verdict_pb2.VerifyResponseResponse:
        response = await _verify(running, text)
        order.append(name)
        return response

    big_call = asyncio.ensure_future(tracked("big", big))
    hostile = {name: asyncio.ensure_future(tracked(name, text)) for name, text in HOSTILE.items()}
    await asyncio.sleep(0.1)
    small = [await tracked(f"small{i}", f'```json\n{{"i": {i}}}\n```') for i in range(5)]
    assert all(r.verdict == V.VERIFY_VERDICT_OK for r in small)
    results = {name: await call for name, call in hostile.items()}
    assert (await big_call).verdict == V.VERIFY_VERDICT_OK
    # The 3 MB parse ran in the pool: small calls finished before it did.
    assert order.index("small0") < order.index("big")
    for name, response in results.items():
        assert response.verdict != V.VERIFY_VERDICT_UNSPECIFIED, name
    assert results["unclosed fence 200 KB"].verdict == V.VERIFY_VERDICT_TRUNCATED
    assert results["thousands of fences"].verdict == V.VERIFY_VERDICT_OK
    assert results["a repetition loop, 4 MB"].verdict == V.VERIFY_VERDICT_MALFORMED
    # A checker that crashes or hits a limit is unverifiable, never malformed.
    for name in ("deep python brackets", "deep json brackets", "bash nesting that segfaults bash"):
        assert results[name].verdict == V.VERIFY_VERDICT_UNVERIFIABLE, (name, results[name].detail)
    # And the server still answers.
    assert (await _verify(running, "```json\n[]\n```")).verdict == V.VERIFY_VERDICT_OK


async def test_a_bash_block_leaves_no_child_behind(running: Running) -> None:
    await _verify(running, "```bash\nsleep 1000 &\necho $(\n```")
    assert running.app.runner.live_process_groups == frozenset()


async def test_deadline_exceeded_is_reported_to_the_caller() -> None:
    big = "```python\n" + "value = [1, 2, 3]\n" * 150_000 + "```"
    async with serving(make_config(max_block_bytes=4 * 1024 * 1024)) as running:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.VerifyResponse(V.VerifyResponseRequest(text=big), timeout=0.05)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert (await _verify(running, "```json\n[]\n```")).verdict == V.VERIFY_VERDICT_OK
