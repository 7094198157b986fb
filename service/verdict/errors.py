"""Every error Verdict raises on purpose for a caller, as one tree mapped to gRPC status codes in exactly one place.

Caller-facing: each VerdictError becomes a gRPC status; ConfigError stops the server at startup (exit status 2).

```
VerdictError                      base; never raised itself
├── InvalidArgument               the request is wrong whatever the server's state  → INVALID_ARGUMENT
│   └── InvalidConfig             an evaluator configuration is wrong (field path)  → INVALID_ARGUMENT
├── Unauthenticated               no valid bearer token or client certificate        → UNAUTHENTICATED
├── PermissionDenied              outside workspace_root, or the policy forbids it   → PERMISSION_DENIED
├── ResourceExhausted             too big, or too busy (a bounded queue overflowed)  → RESOURCE_EXHAUSTED
├── DeadlineTooShort              the caller has no time left for the work asked     → DEADLINE_EXCEEDED
├── FailedPrecondition            the server is not set up for this call             → FAILED_PRECONDITION
├── Unavailable                   shutting down, or out of descriptors, memory or    → UNAVAILABLE
│                                 processes for a moment (with a RetryInfo hint)
└── Internal                      nobody raised it on purpose (a bug); fixed message → INTERNAL

ConfigError(ValueError)           server configuration rejected at startup (not a gRPC error)
```

Domain code raises these; it never imports grpc. The rpc layer (`verdict.rpc`, its one status mapping `to_status`) turns
them into a `google.rpc.Status` carrying exactly one `ErrorInfo` (reason + metadata) and, for argument errors, a
`BadRequest` naming the field (AIP-193). Anything else that escapes a handler is logged and sent as `Internal`, or, when
the server ran out of descriptors, memory or processes, as the `Unavailable` of `resource_exhausted`.

Internal, becoming verdicts. A checker that malfunctions (a judge timing out, a parser giving up, a tool missing) is
*not* an error here: it becomes an `error` (Evaluate) or `unverifiable` (VerifyResponse) verdict, because the caller's
request was fine and the model must not be charged for it. These are the internal exceptions that carry such a
malfunction: none derives from VerdictError, each is caught by the code named after its arrow, and none ever reaches a
caller as a status. Each is defined beside the code that raises it (module in brackets); the arrow is what it becomes
and where:

```
CommandNotFound [runner/command.py]   Runner.run: the program does not exist or is not executable
                                      → bash: the block is `unverifiable` (verify/verifier.py)
                                      → git: GitFailed "git not found in PATH" (evaluators/diffstat.py)
                                      → a judge CLI: `error`, missing_dependency (judges/service.py)
UncheckedConfig [workspace/metadata.py]
                                      find_repository: the repository's config is a link, not a regular file
                                      inside it, unreadable or too big, so git is never run
                                      → diff_stall `error` with the reason (evaluators/outside.py)
GitFailed [evaluators/diffstat.py]    diff_stall's git runs (diffstat.py, fingerprint.py): git missing, timed out,
                                      failed, or past diff_stall_max_bytes / _max_files
                                      → diff_stall `error` with the detail (evaluators/outside.py)
PatternTimeout [patterns.py]
│                                     a request's regular expression outlasts regex_timeout_seconds
│                                     → output_contains `error`, timed_out (evaluators/outside.py)
│                                     → contract: that pair is an error, so the verdict is `error` (contract.py)
└── PatternTooLarge                   before compiling a pattern that repeats past MAX_EXPANSION; handled as above
ReplyError [judges/envelopes.py]      a judge's reply that cannot be used (kind parse_error or empty_result)
├── EnvelopeError                     a host's reader (judges/readers.py, envelopes.py): no answer, no named error
└── PayloadError [judges/payload.py]  the evaluator's or the second opinion's reader: no answer object in it
                                      → both: `error` in Evaluate, outcome parse_error (judges/interpret.py); no
                                        second opinion in VerifyResponse (judges/second_opinion.py)
OversizedNumber(ValueError) [judges/envelopes.py]
                                      `loads`: an integer in a judge's JSON longer than any count or score
                                      → `error`, api_error + oversized_number (judges/interpret.py)
ChatUnreachable [judges/chat.py]      an HTTP judge cannot be reached or drops the connection
                                      → `error`, api_error + unreachable (judges/service.py)
CredentialError [judges/credentials.py]
                                      an HTTP judge's API key cannot be read or is unusable
                                      → during a call: `error`, api_error + credentials (judges/service.py)
                                      → at startup: ConfigError naming the setting (judges/credentials.py)
GraderMalfunction [evaluators/model.py]
                                      a model grader (judges/graders.py) could not answer: no host, a failed call
                                      → openai_grader `error`, model_grader_server_error (evaluators/graders/)
                                      → promptfoo: that assertion is `error` (evaluators/promptfoo/)
Undecided [evaluators/promptfoo/checks.py]
                                      a promptfoo assertion lacks the fact it reads, or its regex ran out of time
                                      → that assertion, and the verdict, `error` (evaluators/promptfoo/assertions.py)
NotJson(ValueError) [evaluators/json_compare.py]
                                      a tool call's arguments are not JSON → trajectory `error`, malformed
```

Built-in exceptions take the same road: a parse past `parse_timeout_seconds` (TimeoutError), a dead or failing parse
pool worker, RecursionError or MemoryError inside a parser make the block `unverifiable` (verify/verifier.py and the
python, json, yaml and markup `*_syntax` checkers); a judge past its time limit is `error`, timeout (judges/service.py,
judges/interpret.py).

Neither malfunctions nor caller-facing errors, and so in neither tree: `InterpolationError`
(evaluators/interpolation.py), a `${...}` reference that does not resolve, whose meaning each evaluator decides (the
raw output for `source`, "" for a stall key, an `error` verdict for an unresolvable convergence target, InvalidConfig
for output_numeric's `target`); `StoreUnavailable` (judges/ruling_stores.py), a ruling cache that cannot be reached,
after which the question is judged fresh; and `Undecodable` (rpc/decoding.py), a value rather than an exception,
which the rpc layer answers as InvalidArgument (UNDECODABLE_REQUEST).
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ERROR_DOMAIN",
    "ConfigError",
    "DeadlineTooShort",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "InvalidConfig",
    "PermissionDenied",
    "ResourceExhausted",
    "Unauthenticated",
    "Unavailable",
    "VerdictError",
    "resource_exhausted",
]

ERROR_DOMAIN = "verdict.v1"


class VerdictError(Exception):
    """Base of every error Verdict reports to a caller.

    `reason` is the stable, machine-readable UPPER_SNAKE code clients switch on; `metadata` carries every dynamic
    value of the message (lowerCamel keys), so the message text can change without breaking anyone.
    """

    code_name: str = "UNKNOWN"
    default_reason: str = "UNKNOWN"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        self.metadata: dict[str, str] = dict(metadata or {})
        self.retry_after = retry_after
        """Seconds after which the same call may succeed; sent as a google.rpc.RetryInfo when set."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by state, not by constructor arguments (the subclasses take keyword-only ones), so an error raised
        in the parse pool's worker process reaches the caller as itself."""
        return (_rebuilt, (type(self), self.message, dict(self.__dict__)))


def _rebuilt(cls: type[VerdictError], message: str, state: dict[str, Any]) -> VerdictError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class InvalidArgument(VerdictError):
    """Raised when a request field is malformed, whatever the server's state; `field` is the field path."""

    code_name = "INVALID_ARGUMENT"
    default_reason = "INVALID_ARGUMENT"

    def __init__(
        self,
        message: str,
        *,
        field: str,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message, reason=reason, metadata={"field": field, **(metadata or {})})
        self.field = field


class InvalidConfig(InvalidArgument):
    """Raised when an evaluator configuration is rejected: unknown type, unknown key, missing or mistyped field.

    little-loops dropped unknown keys silently, and two loop authors once wrote `key:` and saw nothing happen, so here
    they are errors.
    """

    default_reason = "INVALID_EVALUATOR_CONFIG"


class Unauthenticated(VerdictError):
    """Raised when auth is on and the caller proved no identity: no bearer token and no client certificate the
    policy knows, or a token that matches no principal. The caller should fix its credentials, not retry."""

    code_name = "UNAUTHENTICATED"
    default_reason = "UNAUTHENTICATED"


class PermissionDenied(VerdictError):
    """Raised when a workspace or file path resolves outside the configured workspace_root, or when an authenticated
    principal asks for an RPC, or a judge, its policy does not allow (reason RPC_NOT_ALLOWED, JUDGES_NOT_ALLOWED)."""

    code_name = "PERMISSION_DENIED"
    default_reason = "OUTSIDE_WORKSPACE_ROOT"


class ResourceExhausted(VerdictError):
    """Raised when a request is over a size limit, or a bounded queue (judges, parses, admission) is full; with
    `retry_after` (admission control shedding) the server is busy, not the request wrong."""

    code_name = "RESOURCE_EXHAUSTED"
    default_reason = "RESOURCE_EXHAUSTED"


class DeadlineTooShort(VerdictError):
    """Raised before starting work the caller's deadline leaves no time for (a judge call, say)."""

    code_name = "DEADLINE_EXCEEDED"
    default_reason = "DEADLINE_TOO_SHORT"


class FailedPrecondition(VerdictError):
    """Raised when the server lacks the setup a call needs (no workspace_root configured, say)."""

    code_name = "FAILED_PRECONDITION"
    default_reason = "FAILED_PRECONDITION"


class Unavailable(VerdictError):
    """Raised when the server is draining for shutdown, or has for a moment no descriptor, memory or process slot
    left for the work; clients retry (on another replica)."""

    code_name = "UNAVAILABLE"
    default_reason = "SHUTTING_DOWN"


_RESOURCE_ERRNOS = {
    errno.EMFILE: "file_descriptors",
    errno.ENFILE: "file_descriptors",
    errno.ENOMEM: "memory",
    errno.EAGAIN: "processes",
    errno.ENOBUFS: "memory",
}
"""OS errors that say the server, not the request, ran out of something, and the `resource` label each counts as."""
_RETRY_AFTER_SECONDS = 1.0
"""The retry hint for a call refused because the server ran out of a resource: long enough for in-flight calls to
give back what they hold, short enough that a caller retrying once does not notice."""


def resource_exhausted(error: BaseException, *, what: str) -> Unavailable | None:
    """The UNAVAILABLE (with a retry hint) an exhausted-resource error becomes, or None for any other error.

    Running out of descriptors (EMFILE, ENFILE), memory (ENOMEM, MemoryError) or processes (EAGAIN from fork) is the
    server's state, not the caller's mistake and not a bug: the same call succeeds a moment later, so the caller is
    told to retry, and nothing pages as INTERNAL would.
    """
    if isinstance(error, MemoryError):
        resource = "memory"
    elif isinstance(error, OSError) and error.errno in _RESOURCE_ERRNOS:
        resource = _RESOURCE_ERRNOS[error.errno]
    else:
        return None
    return Unavailable(
        f"the server could not {what}: out of {resource.replace('_', ' ')} for now; retry shortly",
        reason="SERVER_RESOURCES_EXHAUSTED",
        metadata={"resource": resource},
        retry_after=_RETRY_AFTER_SECONDS,
    )


class Internal(VerdictError):
    """Stands for an exception nobody raised on purpose: the rpc layer logs the traceback and sends only this, so a
    caller learns that the server failed and nothing of its internals. Domain code never raises it."""

    code_name = "INTERNAL"
    default_reason = "INTERNAL"


class ConfigError(ValueError):
    """Raised at startup when the server configuration is invalid; the message names the offending key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
