"""What every gRPC call passes through on the main port, outermost first, one module per interceptor.

- `observe.py` (`MetricsInterceptor`): the go-grpc-prometheus series, the access line and the call context.
- `tracing.py` (`TracingInterceptor`): an OpenTelemetry server span per call, when `otlp_endpoint` is set.
- `access_control.py` (`AccessInterceptor`): who is calling, may it, is there room for it (per-connection and
  per-principal in-flight limits).
- `admission.py` (`AdmissionInterceptor`): bounded running calls and queue; the excess is shed at once.
- `decoding.py` (`LenientDecoding`): undecodable requests to any hosted service are INVALID_ARGUMENT.
- `base.py`: `HandlerInterceptor`, the one way they wrap a handler.
- `chain.py`: the layers folded into one wrapper per method at registration, instead of grpc.aio's per-call
  interceptor pipeline.
"""

from __future__ import annotations

from verdict.server.interceptors.access_control import AccessInterceptor
from verdict.server.interceptors.admission import Admission, AdmissionInterceptor, AdmissionLimits
from verdict.server.interceptors.base import HandlerInterceptor, Shape, rewrap
from verdict.server.interceptors.decoding import LenientDecoding
from verdict.server.interceptors.observe import MetricsInterceptor
from verdict.server.interceptors.tracing import Tracing, TracingInterceptor

__all__ = [
    "AccessInterceptor",
    "Admission",
    "AdmissionInterceptor",
    "AdmissionLimits",
    "HandlerInterceptor",
    "LenientDecoding",
    "MetricsInterceptor",
    "Shape",
    "Tracing",
    "TracingInterceptor",
    "rewrap",
]
