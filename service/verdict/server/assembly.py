"""Build the Verdict server: gRPC (aio), health, reflection, the interceptors, the HTTP port and /metrics.

`build_server(config)` returns the assembled `App` and the port it bound (tests bind port 0 and read it back), kept
apart from `serve()` (the process's main loop, lifecycle.py) as grpc's own examples do. `build_components` wires the
domain side alone, for `verdict verify|evaluate` without a server.

The `App`'s lifecycle, and what health reports at each step:

1. built: port bound, nothing served yet; readiness names ("" and verdict.v1.VerdictService) NOT_SERVING,
   "liveness" SERVING (the process is alive and its event loop answers);
2. `start()`: accepting calls; readiness SERVING;
3. `stop(grace)` (SIGTERM/SIGINT): readiness NOT_SERVING at once, so load balancers and kubelet stop sending; every
   new VerdictService call, and every queued one, is answered UNAVAILABLE with a retry hint (admission's drain)
   until calls stop arriving (`QUIET_SECONDS` without one, at most `REFUSING_SECONDS`), so the calls grpc-core had
   already taken in are answered and counted instead of cancelled when the server stops; then no new calls (GOAWAY);
   in-flight calls get the rest of `grace` seconds; then every child process still running is killed and pools closed.
   A second `stop(0)` while draining ends the grace period at once: in-flight calls are cancelled, children killed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc
from prometheus_client import CollectorRegistry

from verdict.config.keys import Config
from verdict.errors import ConfigError
from verdict.evaluators import Evaluations
from verdict.judges import Judges, ModelGraders, build_judges
from verdict.metrics import Metrics, register_runtime_collectors
from verdict.rpc import SERVICE_DESCRIPTOR, SERVICE_NAME, Limits, VerdictServicer, method_handlers
from verdict.rpc.decisions import DecisionLog, build_decision_log
from verdict.runner import Runner
from verdict.security.gate import Gate
from verdict.security.tls import Certificates, server_credentials
from verdict.server.accept import AcceptLoops
from verdict.server.health import Health
from verdict.server.interceptors.access_control import AccessInterceptor
from verdict.server.interceptors.admission import Admission, AdmissionInterceptor, AdmissionLimits
from verdict.server.interceptors.chain import Chain, ChainedRegistration, Except
from verdict.server.interceptors.decoding import LenientDecoding
from verdict.server.interceptors.observe import MetricsInterceptor
from verdict.server.interceptors.pending import PendingMessages
from verdict.server.interceptors.tracing import Tracing, TracingInterceptor
from verdict.server.scrape import MetricsHttpServer
from verdict.server.transport import TransportCounts
from verdict.verify.verifier import Verifier

if TYPE_CHECKING:
    from verdict.server.connect import ConnectServer

__all__ = ["LIVENESS_SERVICE", "READINESS_SERVICES", "App", "Components", "build_components", "build_server"]

log = logging.getLogger("verdict.server")

READINESS_SERVICES = ("", SERVICE_NAME)
"""Health names that mean "send me traffic": NOT_SERVING until started and again from the first moment of shutdown."""
LIVENESS_SERVICE = "liveness"
"""Health name for the liveness probe: SERVING while the event loop answers, draining included (a liveness failure
mid-drain would get the container killed before its in-flight calls finish). Never tied to dependencies, because a
restart does not fix a missing judge CLI."""


@dataclass
class Components:
    """The domain side, wired: what the server serves and what `verdict verify|evaluate` run without a server."""

    runner: Runner
    verifier: Verifier
    evaluations: Evaluations
    judges: Judges | None = None

    async def aclose(self) -> None:
        """Kill any child still running (judge CLIs included), stop the parse pool, close the ruling cache."""
        self.runner.shutdown()
        self.verifier.close()
        if self.judges is not None:
            await self.judges.aclose()

    async def __aenter__(self) -> Components:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@dataclass
class App:
    """A built server and everything it owns."""

    config: Config
    server: AcceptLoops
    """The gRPC port's servers, one accept loop each (accept.py)."""
    port: int
    health: Health
    metrics: Metrics
    components: Components
    gate: Gate
    certificates: Certificates | None = None
    health_server: grpc.aio.Server | None = None
    """The plaintext health-only listener (`health_address`), if configured."""
    health_port: int = 0
    access: AccessInterceptor | None = None
    decisions: DecisionLog | None = None
    """The decision log (records flushed at the end of the drain), if configured."""
    http: ConnectServer | None = None
    """The Connect/gRPC-Web HTTP port (`http_address`), if configured."""
    admission: Admission | None = None
    """Admission control's state (running and queued calls), None when `admission_control` is off."""
    transport: TransportCounts | None = None
    """grpc-core's own call counts (channelz) copied into the metrics while serving."""
    tracing: Tracing | None = None
    """OpenTelemetry span export (`otlp_endpoint`), flushed at the end of the drain; None when off."""
    _stopping: bool = False
    _stopped: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def runner(self) -> Runner:
        return self.components.runner

    async def start(self) -> None:
        """Accept calls, then report ready."""
        if self.health_server is not None:
            await self.health_server.start()
        await self.server.start()
        if self.transport is not None:
            self.transport.start()
        if self.http is not None:
            self.http.start()
        await self.mark_ready()
        if self.components.judges is not None:
            self.components.judges.start_calibration()  # background work, after the server serves

    async def mark_ready(self) -> None:
        for name in READINESS_SERVICES:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("serving on port %d", self.port)

    async def stop(self, grace: float | None = None) -> None:
        """Drain and stop. Idempotent: a second call while draining waits for the first to finish, and with a
        shorter `grace` (0 for "now") it shortens the drain under way, as grpc's own `stop` does."""
        if self._stopping:
            if grace is not None:
                await self.server.stop(grace)
            await self._stopped.wait()
            return
        self._stopping = True
        grace = self.config.grace_period_seconds if grace is None else grace
        try:
            await self.health.drain(READINESS_SERVICES)
            log.info("draining: up to %.1fs for in-flight calls", grace)
            if self.admission is not None:
                grace -= await _refuse_until_quiet(self.admission, grace)
            if self.http is not None:
                await asyncio.gather(self.server.stop(grace), self.http.stop(grace))
            else:
                await self.server.stop(grace)
            if self.health_server is not None:
                await self.health_server.stop(0)
            if self.transport is not None:
                await self.transport.stop()
            await self.components.aclose()
            if self.decisions is not None:
                await asyncio.to_thread(self.decisions.close)
            if self.tracing is not None:
                await asyncio.to_thread(self.tracing.shutdown)
            log.info("stopped")
        finally:
            self._stopped.set()


QUIET_SECONDS = 0.1
"""A drain stops refusing and closes the port once no call has arrived for this long: grpc-core's queue is empty."""
REFUSING_SECONDS = 2.0
"""The longest a drain refuses new calls before it closes the port (at most half the grace period), for callers
that keep sending on their connection until it closes."""


async def _refuse_until_quiet(admission: Admission, grace: float) -> float:
    """Refuse new and queued calls (UNAVAILABLE, retry hint) until none has arrived for QUIET_SECONDS; returns the
    seconds it took."""
    admission.drain()
    started = time.monotonic()
    until = started + min(REFUSING_SECONDS, grace / 2)
    while (now := time.monotonic()) < until:
        if now - admission.last_arrival >= QUIET_SECONDS:
            break
        await asyncio.sleep(min(QUIET_SECONDS, until - now))
    return time.monotonic() - started


def _server_options(config: Config, *, reuse_port: bool = False) -> list[tuple[str, Any]]:
    """Channel arguments of every listener. `reuse_port` lets the workers of `verdict.server.supervisor` share one port
    (the kernel spreads connections over them); a single process keeps it off for the health listener, and its gRPC
    port's accept loops (accept.py) check that the address is free before they share it, so a second server on the
    same port fails to bind instead of silently taking half the traffic."""
    largest = max(config.max_message_bytes, config.max_batch_bytes)  # single calls are held to theirs in rpc.py
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", largest),
        ("grpc.max_send_message_length", largest),
        # Clients may ping every 20 s without calls; the gRPC default minimum (5 min) would GOAWAY them.
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 20_000),
        ("grpc.so_reuseport", int(reuse_port)),
        # Bounds for hostile or forgetful peers: a connection that never finishes its handshake, or that stays idle,
        # is closed, and one connection cannot open unbounded streams.
        ("grpc.server_handshake_timeout_ms", int(config.handshake_timeout_seconds * 1000)),
        ("grpc.http2.max_ping_strikes", 2),
        # grpc-core's overload protection answers a stream past `max_concurrent_streams` that the application has
        # not yet accepted with RST_STREAM REFUSED_STREAM: the caller sees UNAVAILABLE, no Python code sees the call,
        # and no metric counts it (under twice the capacity it was half of all calls). Off, the limit is the plain
        # HTTP/2 one: the client holds a stream past it until one ends, so every call that reaches the server is
        # accepted, and admission control refuses the excess with RESOURCE_EXHAUSTED, a retry hint and a count.
        ("grpc.http.overload_protection", 0),
    ]
    if config.max_connections > 0:
        options.append(("grpc.max_allowed_incoming_connections", config.max_connections))
    if config.max_concurrent_streams > 0:
        options.append(("grpc.max_concurrent_streams", config.max_concurrent_streams))
    if config.max_connection_idle_seconds > 0:
        options.append(("grpc.max_connection_idle_ms", int(config.max_connection_idle_seconds * 1000)))
    if config.max_connection_age_seconds > 0:
        options += [
            ("grpc.max_connection_age_ms", int(config.max_connection_age_seconds * 1000)),
            ("grpc.max_connection_age_grace_ms", int(config.max_connection_age_grace_seconds * 1000)),
        ]
    return options


def build_components(config: Config, metrics: Metrics, env: Mapping[str, str]) -> Components:
    """The domain side of the server: runner, verifier, evaluators and judges, wired together."""
    runner = Runner.for_config(config, metrics)
    judges = build_judges(config, runner, metrics, env)
    verifier = Verifier(config, runner, metrics, second_opinion=judges.second_opinion)
    evaluations = Evaluations(
        config, runner, metrics, judged=judges.evaluators, grader=ModelGraders(judges.service, judges.rulings)
    )
    return Components(runner, verifier, evaluations, judges)


async def build_server(
    config: Config,
    *,
    registry: CollectorRegistry | None = None,
    env: Mapping[str, str] | None = None,
    reuse_port: bool = False,
    handlers: Mapping[str, grpc.RpcMethodHandler] | None = None,
) -> tuple[App, int]:
    """Assemble the server and bind its port; call `await app.start()` to begin serving.

    `handlers` replace VerdictService's own (the benchmark's null echo uses this, so that everything else it measures
    is this server: options, interceptors, health).

    The port is bound first, so an address in use fails fast (ConfigError naming `grpc_address`) before any child
    process or pool exists that would then have to be cleaned up.
    """
    metrics = Metrics(
        registry if registry is not None else CollectorRegistry(),
        model_labels=config.judge_model_labels,
        verdict_labels=config.verdict_labels,
        tool_labels=config.tool_labels,
    )
    register_runtime_collectors(metrics.registry)
    gate = Gate(config, [m.name for m in SERVICE_DESCRIPTOR.methods])
    certificates = Certificates.from_config(config)
    access = AccessInterceptor(
        gate, metrics, per_connection=config.max_calls_per_connection, per_principal=config.max_calls_per_principal
    )
    admission = Admission(AdmissionLimits.from_config(config), metrics)
    server, port, health_server, health_port = _listeners(config, certificates, reuse_port)
    components = build_components(config, metrics, env if env is not None else os.environ)
    decisions = build_decision_log(config, metrics.registry)
    access.decisions = admission.decisions = decisions  # gate refusals and sheds are decision records too
    servicer = VerdictServicer(
        components.verifier,
        components.evaluations,
        limits=Limits.from_config(config),
        off_loop=components.runner.off_loop,
        metrics=metrics,
        decisions=decisions,
    )
    tracing = Tracing.from_config(config)
    chains = _chains(config, metrics, access, admission, tracing)
    health = _services(config, metrics, chains, server, health_server, handlers or method_handlers(servicer))
    http = await _http_port(
        config,
        metrics,
        servicer,
        access,
        admission,
        components,
        decisions,
        certificates,
        health=health,
        reuse_port=reuse_port,
        tracing=tracing,
    )
    metrics.initialize_judge_types(spec.type for spec in components.evaluations.catalogue() if spec.uses_judge)
    app = App(
        config,
        server,
        port,
        health,
        metrics,
        components,
        gate,
        certificates=certificates,
        health_server=health_server,
        health_port=health_port,
        access=access,
        decisions=decisions,
        http=http,
        admission=admission if config.admission_control else None,
        transport=TransportCounts(metrics),
        tracing=tracing,
    )
    return app, port


def _chains(
    config: Config,
    metrics: Metrics,
    access: AccessInterceptor,
    admission: Admission,
    tracing: Tracing | None = None,
) -> tuple[Chain, Chain]:
    """What every call passes through, outermost first, on the gRPC port (the bound on calls waiting for their
    request message, metrics and the access line, access control, admission control, lenient decoding) and on the
    health-only port (metrics, lenient decoding). Each method's wrapper is built once (chain.py), and a layer whose
    feature is off is left out: admission when
    `admission_control` is off, access control with auth off and no in-flight limits (AccessInterceptor.active), and
    lenient decoding for VerdictService, whose own decoder and servicer already answer undecodable requests. The
    tracing layer (server spans) sits just inside metrics, which sets the call context it reads the trace from, and
    only when `otlp_endpoint` is set."""
    observe = MetricsInterceptor(metrics, access_log_level=config.access_log_level)
    decoding = Except(LenientDecoding(), SERVICE_NAME)
    admitting = AdmissionInterceptor(admission) if config.admission_control else None
    pending = PendingMessages(
        config.max_pending_messages,
        config.request_message_timeout_seconds,
        metrics.calls_in_flight_rejected,
        gate=admitting.gate if admitting is not None else None,
    )
    layers: list[Any] = [pending, observe, access]
    if tracing is not None:
        layers.insert(2, TracingInterceptor(tracing))
    if admitting is not None:
        layers.append(admitting)
    layers.append(decoding)
    return Chain(layers), Chain([observe, decoding])


def _listeners(
    config: Config,
    certificates: Certificates | None,
    reuse_port: bool,
) -> tuple[AcceptLoops, int, grpc.aio.Server | None, int]:
    """The gRPC server bound to `grpc_address` (TLS when configured), and the plaintext health-only server bound to
    `health_address` when there is one (port 0 when not): (server, port, health server, health port)."""
    # grpc.aio's maximum_concurrent_rpcs stays off: current grpcio refuses the excess before its request is read,
    # cheaply, but with a bare RESOURCE_EXHAUSTED (no retry hint) that none of our metrics, access lines or decision
    # records sees; admission control (admission.py) refuses with both, and the transport's bound is the HTTP/2
    # stream limit (`_server_options`).
    server = AcceptLoops(
        _server_options(config, reuse_port=reuse_port), shared=reuse_port, busy_services=(SERVICE_NAME,)
    )
    if certificates is None:
        port = _bind(server, "grpc_address", config.grpc_address, None)
    else:  # credentials of their own per server: the certificate fetcher of dynamic credentials serves one server
        port = _bind(server, "grpc_address", config.grpc_address, lambda: server_credentials(certificates))
    if config.auth and not certificates and not _loopback(config.grpc_address):
        log.warning("auth is on without TLS: bearer tokens cross the network in cleartext (set tls_cert_file)")
    health_server: grpc.aio.Server | None = None
    health_port = 0
    if config.health_address:
        health_server = grpc.aio.server(options=_server_options(config, reuse_port=reuse_port))
        health_port = _bind(health_server, "health_address", config.health_address, None)
    return server, port, health_server, health_port


def _services(
    config: Config,
    metrics: Metrics,
    chains: tuple[Chain, Chain],
    grpc_server: AcceptLoops,
    health_server: grpc.aio.Server | None,
    handlers: Mapping[str, grpc.RpcMethodHandler],
) -> Health:
    """Put VerdictService's handlers, health (on both listeners) and reflection (when on) on the servers, each
    handler inside its port's chain; the health servicer, readiness NOT_SERVING and liveness SERVING."""
    server = ChainedRegistration(grpc_server, chains[0])
    server.add_registered_method_handlers(SERVICE_NAME, handlers)
    not_serving, serving = health_pb2.HealthCheckResponse.NOT_SERVING, health_pb2.HealthCheckResponse.SERVING
    health = Health({**dict.fromkeys(READINESS_SERVICES, not_serving), LIVENESS_SERVICE: serving})
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    if health_server is not None:
        health_pb2_grpc.add_HealthServicer_to_server(health, ChainedRegistration(health_server, chains[1]))
    served = [SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name]
    if config.reflection:
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            reflection.aio.ReflectionServicer([*served, reflection.SERVICE_NAME]), server
        )
    metrics.initialize_rpcs(SERVICE_NAME, [(m.name, "unary") for m in SERVICE_DESCRIPTOR.methods])
    return health


async def _http_port(
    config: Config,
    metrics: Metrics,
    servicer: VerdictServicer,
    access: AccessInterceptor,
    admission: Admission,
    components: Components,
    decisions: DecisionLog | None,
    certificates: Certificates | None = None,
    *,
    health: Health | None = None,
    reuse_port: bool = False,
    tracing: Tracing | None = None,
) -> ConnectServer | None:
    """The Connect/gRPC-Web HTTP port on `http_address` (None when empty), sharing the servicer, access control and
    admission of the gRPC port. When it cannot be built, the components and the decision log are closed first."""
    if not config.http_address:
        return None
    from verdict.server.connect import ConnectServer, connect_application
    from verdict.server.http_door import HttpDoor

    identities: dict[str, tuple[str, ...]] = {}  # verified client certificate names by peer, for the gate
    try:
        return ConnectServer(
            HttpDoor(
                connect_application(
                    servicer,
                    metrics,
                    config,
                    access=access,
                    admission=admission if config.admission_control else None,
                    identities=identities,
                    tracing=tracing,
                ),
                health=health,
                allowed_origins=config.http_cors_allowed_origins,
            ),
            config,
            metrics,
            certificates=certificates,
            identities=identities,
            reuse_port=reuse_port,
        )
    except BaseException:
        await components.aclose()
        if decisions is not None:
            decisions.close()
        raise


def _bind(
    server: grpc.aio.Server | AcceptLoops,
    key: str,
    address: str,
    credentials: grpc.ServerCredentials | Callable[[], grpc.ServerCredentials] | None,
) -> int:
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:  # grpc's "Failed to bind to address"
        port = 0
    if port == 0:
        raise ConfigError(key, f"cannot bind {address} (in use, or not an address of this host)")
    return int(port)


def _loopback(address: str) -> bool:
    host = address.rpartition(":")[0].strip("[]")
    return host in ("127.0.0.1", "::1", "localhost")


async def start_metrics_server(app: App, registry: CollectorRegistry) -> MetricsHttpServer | None:
    """Serve /metrics on its own port (never the gRPC port), in this event loop, with the app's TLS and auth.
    Returns the started server (its `port` set), or None when `metrics_address` is empty.

    Raises ConfigError naming `metrics_address` when the address cannot be bound."""
    config = app.config
    if not config.metrics_address:
        return None
    http = MetricsHttpServer(
        registry,
        app.metrics,
        app.gate,
        app.certificates,
        max_connections=config.metrics_max_connections,
        read_timeout_seconds=config.metrics_read_timeout_seconds,
    )
    http.port = await http.start(config.metrics_address)
    if (
        config.auth
        and config.metrics_requires_auth
        and app.certificates is None
        and not _loopback(config.metrics_address)
    ):
        log.warning("/metrics needs auth without TLS: bearer tokens cross the network in cleartext (set tls_cert_file)")
    return http
