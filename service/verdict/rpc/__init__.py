"""The rpc layer: proto messages in, domain calls, proto messages out; domain errors become gRPC status here, once.

- `servicer.py`: `VerdictServicer`, the RPCs wired to the domain (`verify.Verifier`, `evaluators.Evaluations`).
- `messages.py`: proto messages ⇄ frozen domain values, pure.
- `status.py`: the `VerdictError` tree → `google.rpc.Status` (`to_status`), the one mapping.
- `batch.py`: the batch RPCs item by item, and the size limits.
- `decoding.py`: the lenient request decoder: bytes the protobuf runtime refuses name their field.
- `context.py`: the call being answered (method, request id, deadline, trace, principal) in a contextvar.
- `decisions/`: one decision record per answered call (records.py), its sinks (sinks.py), its buffer (log.py).

Below it: the domain, security, the runner and configuration. Above it: the server, which hosts the servicer.
"""

from __future__ import annotations

from verdict.rpc.batch import Limits
from verdict.rpc.context import CallContext, TraceContext, current_call, parse_traceparent
from verdict.rpc.decisions import DecisionLog, build_decision_log
from verdict.rpc.messages import (
    VERDICT_TO_PROTO,
    context_dict,
    evaluation_input,
    evaluation_to_proto,
    evaluator_config,
    verification_to_proto,
    verify_input,
)
from verdict.rpc.servicer import SERVICE_DESCRIPTOR, SERVICE_NAME, VerdictServicer, message_class, method_handlers
from verdict.rpc.status import status_proto, to_status

__all__ = [
    "SERVICE_DESCRIPTOR",
    "SERVICE_NAME",
    "VERDICT_TO_PROTO",
    "CallContext",
    "DecisionLog",
    "Limits",
    "TraceContext",
    "VerdictServicer",
    "build_decision_log",
    "context_dict",
    "current_call",
    "evaluation_input",
    "evaluation_to_proto",
    "evaluator_config",
    "message_class",
    "method_handlers",
    "parse_traceparent",
    "status_proto",
    "to_status",
    "verification_to_proto",
    "verify_input",
]
