"""What the client returns: plain values for the common questions, with the raw proto response always at `.raw`.

The raw response is kept because the proto is the contract: a field a newer server adds is readable at `.raw`
before this client learns about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from google.protobuf import json_format

from verdict_client._proto.verdict.v1 import verdict_pb2
from verdict_client.errors import VerdictRpcError

__all__ = [
    "BlockCheck",
    "Evaluation",
    "EvaluatorCatalogue",
    "SecondOpinion",
    "ToolCallCheck",
    "Verification",
    "VerifyVerdict",
]


class VerifyVerdict(StrEnum):
    """A structural verdict. TRUNCATED and MALFORMED are failures; UNVERIFIABLE is not.

    UNKNOWN stands for the proto's zero value and for any value a newer server may add; whether such a verdict
    failed is still known, from the response's `failed` flag.
    """

    OK = "ok"
    TRUNCATED = "truncated"
    MALFORMED = "malformed"
    UNVERIFIABLE = "unverifiable"
    UNKNOWN = "unknown"


VERDICT_FROM_PROTO: dict[int, VerifyVerdict] = {
    verdict_pb2.VERIFY_VERDICT_UNSPECIFIED: VerifyVerdict.UNKNOWN,
    verdict_pb2.VERIFY_VERDICT_OK: VerifyVerdict.OK,
    verdict_pb2.VERIFY_VERDICT_TRUNCATED: VerifyVerdict.TRUNCATED,
    verdict_pb2.VERIFY_VERDICT_MALFORMED: VerifyVerdict.MALFORMED,
    verdict_pb2.VERIFY_VERDICT_UNVERIFIABLE: VerifyVerdict.UNVERIFIABLE,
}
"""Every VerifyVerdict value of the proto, mapped; tests/test_contract.py fails when the proto gains one."""


def verdict_from_proto(value: int) -> VerifyVerdict:
    return VERDICT_FROM_PROTO.get(value, VerifyVerdict.UNKNOWN)


@dataclass(frozen=True)
class BlockCheck:
    """The outcome of checking one fenced block; `line` and `error_line` are one-based lines of the response."""

    block_index: int
    language: str
    verdict: VerifyVerdict
    detail: str
    line: int
    error_line: int


@dataclass(frozen=True)
class ToolCallCheck:
    """The outcome of checking one tool call (or a call left in the text as markup, reason `call_in_text`).

    `reason` is a stable token (`missing_argument`, `unknown_tool`, `truncated`, ...; empty when OK), `pointer` a JSON
    Pointer into the arguments at the offending value, `schema_digest` the SHA-256 of the schema checked against.
    """

    call_index: int
    id: str
    name: str
    verdict: VerifyVerdict
    detail: str
    pointer: str
    reason: str
    schema_digest: str


@dataclass(frozen=True)
class SecondOpinion:
    """A local judge's reading of a long answer nothing structural could check."""

    verdict: VerifyVerdict
    reason: str
    host: str


@dataclass(frozen=True)
class Verification:
    """The verdict on one completion. `failed` means: do not accept this completion."""

    verdict: VerifyVerdict
    failed: bool
    detail: str
    checks: tuple[BlockCheck, ...]
    second_opinion: SecondOpinion | None
    raw: verdict_pb2.VerifyResponseResponse = field(repr=False, compare=False)
    tool_checks: tuple[ToolCallCheck, ...] = ()

    @classmethod
    def from_proto(cls, response: verdict_pb2.VerifyResponseResponse) -> Verification:
        opinion = None
        if response.HasField("second_opinion"):
            so = response.second_opinion
            opinion = SecondOpinion(verdict_from_proto(so.verdict), so.reason, so.host)
        return cls(
            verdict=verdict_from_proto(response.verdict),
            failed=response.failed,
            detail=response.detail,
            checks=tuple(
                BlockCheck(c.block_index, c.language, verdict_from_proto(c.verdict), c.detail, c.line, c.error_line)
                for c in response.checks
            ),
            second_opinion=opinion,
            raw=response,
            tool_checks=tuple(
                ToolCallCheck(
                    c.call_index,
                    c.id,
                    c.name,
                    verdict_from_proto(c.verdict),
                    c.detail,
                    c.pointer,
                    c.reason,
                    c.schema_digest,
                )
                for c in response.tool_checks
            ),
        )


@dataclass(frozen=True)
class Evaluation:
    """The routing verdict for one loop step.

    Send `state` back with the next call of the same evaluator in the same loop (stall evaluators count with it);
    it is empty for stateless types.
    """

    verdict: str
    details: dict[str, Any]
    state: bytes
    raw: verdict_pb2.EvaluateResponse = field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, response: verdict_pb2.EvaluateResponse) -> Evaluation:
        return cls(
            verdict=response.verdict,
            details=_integral(json_format.MessageToDict(response.details)),
            state=response.state,
            raw=response,
        )


def _integral(value: Any) -> Any:
    """Struct numbers are doubles; give whole ones back as ints, so `details["stall_count"]` reads 2, not 2.0."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


@dataclass(frozen=True)
class EvaluatorCatalogue:
    """Every evaluator type the server runs, sorted by type, as the proto's EvaluatorInfo messages, and every
    fenced-block language VerifyResponse knows (VerifierLanguage), sorted by name."""

    evaluators: tuple[verdict_pb2.EvaluatorInfo, ...]
    languages: tuple[verdict_pb2.VerifierLanguage, ...]
    raw: verdict_pb2.ListEvaluatorsResponse = field(repr=False, compare=False)

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(info.type for info in self.evaluators)

    def get(self, type_name: str) -> verdict_pb2.EvaluatorInfo | None:
        """The description of one type, or None when the server does not run it."""
        return next((info for info in self.evaluators if info.type == type_name), None)

    @classmethod
    def from_proto(cls, response: verdict_pb2.ListEvaluatorsResponse) -> EvaluatorCatalogue:
        return cls(evaluators=tuple(response.evaluators), languages=tuple(response.languages), raw=response)

    def language(self, name: str) -> verdict_pb2.VerifierLanguage | None:
        """The description of one language by name or alias, or None when VerifyResponse does not know it."""
        word = name.strip().lower()
        return next((entry for entry in self.languages if word == entry.name or word in entry.aliases), None)


def verification_results(response: verdict_pb2.BatchVerifyResponsesResponse) -> list[Verification | VerdictRpcError]:
    """One entry per batch item, in order: its Verification, or the VerdictRpcError it failed with (returned, not
    raised, so one bad item does not hide the others' answers)."""
    return [
        Verification.from_proto(result.response)
        if result.WhichOneof("outcome") == "response"
        else VerdictRpcError.from_status(result.error)
        for result in response.results
    ]


def evaluation_results(response: verdict_pb2.BatchEvaluateResponse) -> list[Evaluation | VerdictRpcError]:
    """One entry per batch item, in order: its Evaluation, or the VerdictRpcError it failed with."""
    return [
        Evaluation.from_proto(result.response)
        if result.WhichOneof("outcome") == "response"
        else VerdictRpcError.from_status(result.error)
        for result in response.results
    ]
