"""The server's lifecycle: readiness during shutdown for both readiness names, refusal of new calls while a
held call drains, `verdict serve --config` precedence through a real process, and invalid UTF-8 amid other traffic.

tests/e2e/test_shutdown.py watches only the "" health name across SIGTERM and load the YAML file through `load_config`
directly; these tests pin the same promises for `verdict.v1.VerdictService` and for the real command line.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from tests.support import make_config, serving, start_server_process, stop_server_process
from verdict.v1 import verdict_pb2, verdict_pb2_grpc

SERVICE = "verdict.v1.VerdictService"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
QUICK = verdict_pb2.EvaluateRequest(config=verdict_pb2.EvaluatorConfig(exit_code=verdict_pb2.ExitCodeConfig()))


async def test_both_readiness_names_go_not_serving_at_once_and_the_held_call_still_completes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shutdown starts while a VerifyResponse is held inside the verifier: both readiness names report NOT_SERVING,
    new calls are refused, and the held call then completes with its real verdict."""
    async with serving(make_config()) as running:
        verifier = running.app.components.verifier
        real_verify = verifier.verify
        entered = asyncio.Event()
        release = asyncio.Event()

        async def held(*args: Any, **kwargs: Any) -> Any:
            entered.set()
            await release.wait()
            return await real_verify(*args, **kwargs)

        monkeypatch.setattr(verifier, "verify", held)
        health = health_pb2_grpc.HealthStub(running.channel)
        watches = {name: health.Watch(health_pb2.HealthCheckRequest(service=name)) for name in ("", SERVICE)}
        for watch in watches.values():
            assert (await watch.read()).status == SERVING
        liveness = health.Watch(health_pb2.HealthCheckRequest(service="liveness"))
        assert (await liveness.read()).status == SERVING

        in_flight = asyncio.ensure_future(
            running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text='```json\n{"a": 1}\n```'), timeout=60)
        )
        await asyncio.wait_for(entered.wait(), timeout=30)
        stopping = asyncio.ensure_future(running.app.stop(grace=60))

        for name, watch in watches.items():
            assert (await asyncio.wait_for(watch.read(), timeout=10)).status == NOT_SERVING, name
            watch.cancel()  # a watch is a call in flight too; the drain would wait for it
        # Liveness never reports NOT_SERVING: its Watch stream simply ends with the drain (so it holds nothing up).
        assert await asyncio.wait_for(liveness.read(), timeout=10) is grpc.aio.EOF
        assert await liveness.code() == grpc.StatusCode.OK
        assert running.app.health.status("liveness") == SERVING
        assert not in_flight.done()

        refused: grpc.StatusCode | None = None
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.app.port}") as fresh:
            stub = verdict_pb2_grpc.VerdictServiceStub(fresh)
            for _ in range(200):  # until the stop task has reached the server's own stop
                try:
                    await stub.Evaluate(QUICK, timeout=5)
                except grpc.aio.AioRpcError as error:
                    refused = error.code()
                    break
                await asyncio.sleep(0.02)
        assert refused == grpc.StatusCode.UNAVAILABLE
        assert not in_flight.done(), "the held call must still be in flight when new calls are refused"

        release.set()
        response = await asyncio.wait_for(in_flight, timeout=30)
        assert response.verdict == verdict_pb2.VERIFY_VERDICT_OK
        await asyncio.wait_for(stopping, timeout=30)
        assert running.app.runner.live_process_groups == frozenset()


def _status_for_size(target: str, size: int) -> grpc.StatusCode:
    with grpc.insecure_channel(target) as channel:
        stub = verdict_pb2_grpc.VerdictServiceStub(channel)
        try:
            stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text="x" * size), timeout=30)
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


def _clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("VERDICT_")}
    env.update(extra)
    return env


def test_serve_reads_the_config_file_and_env_then_flags_override_it(tmp_path: Path) -> None:
    """`verdict serve --config FILE`: the file applies; VERDICT_* beats the file; a flag beats both. Observed through
    the size limit each layer sets (RESOURCE_EXHAUSTED above it, OK below)."""
    config = tmp_path / "verdict.yaml"
    config.write_text("max_message_bytes: 65536\n")
    layers: list[tuple[tuple[str, ...], dict[str, str], int, int]] = [
        (("--config", str(config)), _clean_env(), 20_000, 100_000),
        (("--config", str(config)), _clean_env(VERDICT_MAX_MESSAGE_BYTES="262144"), 100_000, 400_000),
        (
            ("--config", str(config), "--max-message-bytes", "1048576"),
            _clean_env(VERDICT_MAX_MESSAGE_BYTES="262144"),
            400_000,
            1_200_000,
        ),
    ]
    for flags, env, fits, too_big in layers:
        server = start_server_process(*flags, env=env)
        try:
            assert _status_for_size(server.target, fits) == grpc.StatusCode.OK, (
                flags,
                env.get("VERDICT_MAX_MESSAGE_BYTES"),
            )
            assert _status_for_size(server.target, too_big) == grpc.StatusCode.RESOURCE_EXHAUSTED, flags
        finally:
            stop_server_process(server)
        assert server.process.returncode == 0


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("max_mesage_bytes: 65536\n", "max_mesage_bytes", "unknown key"),
        ("max_message_bytes: lots\n", "max_message_bytes", "integer"),
        ("shell_check_timeout_seconds: -1\n", "shell_check_timeout_seconds", "at least"),
    ],
)
def test_a_bad_config_file_stops_serve_with_exit_two_naming_the_key(
    tmp_path: Path, text: str, key: str, fragment: str
) -> None:
    config = tmp_path / "verdict.yaml"
    config.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "verdict", "serve", "--config", str(config), "--grpc-address", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_clean_env(VERDICT_METRICS_ADDRESS=""),
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert key in done.stderr
    assert fragment in done.stderr
    assert "event=serving" not in done.stderr


async def test_invalid_utf8_amid_other_calls_is_a_rich_invalid_argument_and_the_rest_are_answered() -> None:
    async with serving(make_config()) as running:
        raw = running.channel.unary_unary(
            f"/{SERVICE}/VerifyResponse", request_serializer=lambda data: data, response_deserializer=lambda data: data
        )
        good = [
            running.stub.VerifyResponse(verdict_pb2.VerifyResponseRequest(text=f"```json\n[{i}]\n```"), timeout=30)
            for i in range(5)
        ]
        bad = raw(b"\x0a\x06```\n\xc3\x28", timeout=30)  # field 1 (text): a fence, then an invalid 2-byte sequence
        outcomes = await asyncio.gather(bad, *good, return_exceptions=True)
        error = outcomes[0]
        assert isinstance(error, grpc.aio.AioRpcError)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        status = rpc_status.from_call(error)
        assert status is not None
        info = error_details_pb2.ErrorInfo()
        assert status.details[0].Unpack(info)
        assert info.metadata["field"] == "text"
        assert [o.verdict for o in outcomes[1:]] == [verdict_pb2.VERIFY_VERDICT_OK] * 5  # type: ignore[union-attr]
