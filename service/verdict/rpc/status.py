"""Domain errors as gRPC status: the one mapping from the `VerdictError` tree to a `google.rpc.Status`.

Errors travel as `google.rpc.Status` with exactly one `ErrorInfo` (reason, domain, metadata) and, for
INVALID_ARGUMENT, a `BadRequest` naming the field (AIP-193), so a Go, Java or Node client can switch on `reason` and
show `field` without parsing English. Kept apart from the servicer because the interceptors, the Connect gateway
and the batch runner all answer with the same statuses.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from verdict.errors import ERROR_DOMAIN, InvalidArgument, VerdictError

__all__ = ["status_proto", "to_status"]

_MAX_MESSAGE_BYTES = 512
_MAX_METADATA_VALUE_BYTES = 256
"""A status travels in trailers, and gRPC clients refuse trailers over 8 KiB by default (the call then fails with
RESOURCE_EXHAUSTED and the ErrorInfo is lost). Messages can echo the caller's input (an unknown evaluator type of
20,000 characters), and the message is sent three times (grpc-message, Status.message, BadRequest), so every
caller-influenced string is clipped here, once."""


def _clip(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", errors="ignore") + "…"


def to_status(error: VerdictError) -> grpc.Status:
    """The one mapping from the domain's error tree to a rich gRPC status."""
    return rpc_status.to_status(status_proto(error))


def status_proto(error: VerdictError) -> status_pb2.Status:
    """The `google.rpc.Status` of a domain error: what `to_status` sends in trailers, and what a batch result carries
    for a failed item."""
    code = getattr(code_pb2, error.code_name)
    text = _clip(error.message, _MAX_MESSAGE_BYTES)
    metadata = {key: _clip(str(value), _MAX_METADATA_VALUE_BYTES) for key, value in error.metadata.items()}
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=metadata)
    details = [any_pb2.Any()]
    details[0].Pack(info)
    if isinstance(error, InvalidArgument):
        violation = error_details_pb2.BadRequest.FieldViolation(
            field=_clip(error.field, _MAX_METADATA_VALUE_BYTES), description=text
        )
        packed = any_pb2.Any()
        packed.Pack(error_details_pb2.BadRequest(field_violations=[violation]))
        details.append(packed)
    if error.retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(int(error.retry_after * 1e9))
        packed = any_pb2.Any()
        packed.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        details.append(packed)
    return status_pb2.Status(code=code, message=text, details=details)
