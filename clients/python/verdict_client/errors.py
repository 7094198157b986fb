"""One exception type for every failed call, carrying the server's structured error (AIP-193).

Verdict answers a rejected call with a `google.rpc.Status` holding exactly one `ErrorInfo` (a stable `reason` to
switch on, the domain "verdict.v1", and `metadata` with every dynamic value of the message) and, for
INVALID_ARGUMENT, a `BadRequest` naming the offending field. Callers should branch on `code` and `reason`, never on
the message text, which may change. Errors the client library raises itself (DEADLINE_EXCEEDED, UNAVAILABLE on a
refused connection) carry the code and message only: `reason` and `domain` are empty then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

__all__ = ["FieldViolation", "VerdictRpcError"]

_DETAILS_TRAILER = "grpc-status-details-bin"


@dataclass(frozen=True)
class FieldViolation:
    """One bad field of a request: its path (`config.output_numeric.operator`) and what is wrong with it."""

    field: str
    description: str


class VerdictRpcError(Exception):
    """Raised by every client method when the call fails, whatever the status code.

    `code` is the `grpc.StatusCode`; `message` the developer-facing text; `reason`, `domain` and `metadata` come
    from the ErrorInfo detail; `field_violations` from the BadRequest detail; `status` is the decoded
    `google.rpc.Status` (None when the server sent none). The original `grpc.RpcError` is the `__cause__`.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        domain: str = "",
        metadata: Mapping[str, str] | None = None,
        field_violations: tuple[FieldViolation, ...] = (),
        status: Any = None,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain
        self.metadata: Mapping[str, str] = MappingProxyType(dict(metadata or {}))
        self.field_violations = field_violations
        self.status = status

    @property
    def field(self) -> str | None:
        """The first violated field's path, if the server named one."""
        return self.field_violations[0].field if self.field_violations else None

    def __str__(self) -> str:
        reason = f" [{self.reason}]" if self.reason else ""
        return f"{self.code.name}{reason}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"VerdictRpcError(code={self.code.name}, message={self.message!r}, reason={self.reason!r}, "
            f"metadata={dict(self.metadata)!r}, field_violations={list(self.field_violations)!r})"
        )

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> VerdictRpcError:
        """Decode a failed call (sync `grpc.RpcError` or `grpc.aio.AioRpcError`) into one VerdictRpcError."""
        code: grpc.StatusCode = error.code()
        message: str = error.details() or ""
        status = _rich_status(error)
        reason = domain = ""
        metadata: dict[str, str] = {}
        violations: list[FieldViolation] = []
        for detail in status.details if status is not None else ():
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR) and not reason:
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad_request = error_details_pb2.BadRequest()
                detail.Unpack(bad_request)
                violations.extend(FieldViolation(v.field, v.description) for v in bad_request.field_violations)
        return cls(
            code,
            message,
            reason=reason,
            domain=domain,
            metadata=metadata,
            field_violations=tuple(violations),
            status=status,
        )


def _rich_status(error: grpc.RpcError) -> Any:
    """The google.rpc.Status of a failed call, read from the `grpc-status-details-bin` trailer, or None.

    The trailer is decoded directly (not through grpcio-status, which the client does not depend on); a Status whose
    code or message disagrees with the call's (a proxy rewrote one) still carries the server's details, so it is kept.
    """
    trailers = error.trailing_metadata() if callable(getattr(error, "trailing_metadata", None)) else None
    for key, value in trailers or ():
        if key == _DETAILS_TRAILER and isinstance(value, bytes):
            try:
                return status_pb2.Status.FromString(value)
            except DecodeError:
                return None
    return None
