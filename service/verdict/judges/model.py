"""The judge model: what a caller asks a judge (`JudgeRequest`), how a call ended (`JudgeOutcome`), and what it
answered (`JudgeAnswer`: the answer object, or the cause of the failure with the detail flags clients read). Data
only; `verdict.judges.interpret` builds answers from replies, `verdict.judges.service` runs the calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from verdict.judges.envelopes import JudgeReply
from verdict.judges.hosts import Host
from verdict.judges.payload import verdict_payload

__all__ = ["JudgeAnswer", "JudgeOutcome", "JudgeRequest", "PayloadReader", "failure"]

PayloadReader = Callable[[JudgeReply], dict[str, Any]]


class JudgeOutcome(StrEnum):
    """How a judge call ended; the `outcome` label of verdict_judge_calls_total."""

    OK = "ok"
    TIMEOUT = "timeout"
    MISSING = "missing"
    API_ERROR = "api_error"
    EMPTY = "empty"
    PARSE_ERROR = "parse_error"
    REJECTED = "rejected"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class JudgeRequest:
    """One question for a judge.

    `schema` is the JSON schema of the answer: enforced by hosts that can (claude, qwen), spelled out in the prompt
    for the others. `system` goes in a system message on HTTP hosts and before the prompt on CLIs. `timeout`
    defaults to judge_timeout_seconds and is at most JUDGE_TIMEOUT_CEILING_SECONDS; `deadline` (time.monotonic())
    caps it. `host` defaults to the judge host.
    """

    prompt: str
    model: str = ""
    schema: Mapping[str, Any] | None = None
    system: str = ""
    timeout: float | None = None
    deadline: float | None = None
    read_payload: PayloadReader = verdict_payload
    host: Host | None = None
    temperature: float | None = None
    """Sampling temperature where the host takes one (HTTP hosts; CLIs have no flag for it): None is 0, the
    reproducible default; self-consistency samples ask for more."""


@dataclass(frozen=True)
class JudgeAnswer:
    """A judge call's result: the answer object when `outcome` is ok, otherwise the cause.

    `flags` are the reference's detail keys for the failure (`timeout`, `missing_dependency`, `api_error`,
    `empty_output`, `raw_preview`, ...), so clients written against little-loops read the same details.
    """

    host: str
    binary: str
    outcome: JudgeOutcome
    payload: dict[str, Any] | None = None
    error: str = ""
    flags: Mapping[str, Any] = field(default_factory=dict)
    latency_ms: int = 0
    raw_output: str = ""
    reply: JudgeReply | None = None

    @property
    def ok(self) -> bool:
        return self.outcome is JudgeOutcome.OK

    def failure_details(self) -> dict[str, Any]:
        """The details of an `error` verdict caused by this call."""
        return {"error": self.error, **self.flags, "judge_host": self.host}


def failure(host: str, binary: str, outcome: JudgeOutcome, error: str, **flags: Any) -> JudgeAnswer:
    """An answer for a call that failed before the host said anything readable."""
    return JudgeAnswer(host, binary, outcome, error=error, flags=flags)
